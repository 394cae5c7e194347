"""safefile's rules one by one: what is read, what is refused and why, the bounds, the nesting check, where
writes may go, and that a refused file is logged once per version and named in SessionStart's notice."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from agentctx import safefile, tomlfile
from agentctx.logs import log_path

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX file kinds")


def _refused(path: Path, root: Path | None = None) -> str:
    with pytest.raises(safefile.Refused) as info:
        safefile.resolve(str(path), str(root) if root else None)
    return info.value.reason


def test_regular_files_and_symlinks_inside_the_repository_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello")
    (tmp_path / "link.md").symlink_to("a.md")
    assert safefile.read_text(str(tmp_path / "link.md"), 100, str(tmp_path)) == "hello"
    assert safefile.read_text(str(tmp_path / "absent.md"), 100, str(tmp_path)) is None
    (tmp_path / "bom.md").write_bytes(b"\xef\xbb\xbfhi \xff")
    assert safefile.read_text(str(tmp_path / "bom.md"), 100) == "hi \ufffd"


def test_every_other_kind_is_refused_with_its_reason(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (repo / "zero").symlink_to("/dev/zero")
    os.mkfifo(repo / "fifo")
    here = os.getcwd()
    os.chdir(repo)
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind("sock")
        sock.close()
    finally:
        os.chdir(here)
    (repo / "out").symlink_to(outside / "secret.txt")
    (repo / "dangling").symlink_to(outside / "nothing")
    (repo / "dir").mkdir()
    (repo / "via").symlink_to(outside, target_is_directory=True)
    assert _refused(repo / "zero", repo) == "a symlink to /dev/zero, a character device"
    assert _refused(repo / "fifo", repo) == "a FIFO, not a regular file"
    assert _refused(repo / "sock", repo) == "a socket, not a regular file"
    assert "outside the repository" in _refused(repo / "out", repo)
    assert _refused(repo / "dangling", repo).startswith("a dangling symlink")
    assert _refused(repo / "dir", repo) == "a folder, not a regular file"
    assert "outside the repository" in _refused(repo / "via" / "secret.txt", repo)  # through a linked folder
    assert safefile.resolve(str(repo / "out")) == str(outside / "secret.txt")  # no root: a user-named file


def test_a_file_over_its_bound_is_refused_and_a_stream_is_read_up_to_it(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)  # sparse
    with pytest.raises(safefile.Refused, match="larger than 1 MiB"):
        safefile.read_bytes(str(big), 1 << 20)
    with safefile.open_regular(str(big)) as fh:
        assert fh.read(10) == b"\0" * 10
    (tmp_path / "bin").write_bytes(b"a\0b")
    with pytest.raises(safefile.Refused, match="binary"):
        safefile.read_text(str(tmp_path / "bin"), 100)


def test_nesting_is_bounded_before_the_parser_runs() -> None:
    assert safefile.nesting('{"a": [1, {"b": "[[[["}]}') == 3  # brackets inside strings do not count
    assert safefile.nesting('a = "[[[" # [[[[\nb = [[1]]', safefile.TOML_TOKENS) == 2
    for text in ("[" * 2000 + "]" * 2000, '{"a": ' + "[" * 200 + "]" * 200 + "}"):
        with pytest.raises(ValueError, match="nested deeper than 100"):
            safefile.load_json(text)
    with pytest.raises(ValueError, match="nested deeper than 100"):
        tomlfile.load_toml("a = " + "[" * 2000 + "]" * 2000)
    with pytest.raises(ValueError, match="nested deeper than 100"):
        tomlfile.load_toml("a = " + "{b = " * 150 + "1" + "}" * 150)
    assert tomlfile.load_toml('s = """[[[\n"""\n[t]\nx = [[1, 2], [3]]\n') == {"s": "[[[\n", "t": {"x": [[1, 2], [3]]}}
    assert safefile.load_json(b'\xef\xbb\xbf{"a": [[1]]}') == {"a": [[1]]}


def test_writes_never_go_through_a_symlink_or_out_of_the_repository(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".agentctx").mkdir(parents=True)
    outside.mkdir()
    assert safefile.writable(str(repo / ".agentctx" / "context.md"), str(repo))
    (repo / ".agentctx" / ".gitattributes").symlink_to(outside / "made")
    with pytest.raises(safefile.Refused, match="never writes through one"):
        safefile.writable(str(repo / ".agentctx" / ".gitattributes"), str(repo))
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(safefile.Refused, match="outside the repository"):
        safefile.writable(str(repo / "linked" / "context.md"), str(repo))


def test_a_refused_file_is_logged_once_per_version_and_named_in_the_notice(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".agentctx").mkdir(parents=True)
    (repo / ".git").mkdir()  # a repository: the files its readers refused are found by it
    config = repo / ".agentctx" / "config.toml"
    config.symlink_to("/dev/zero")
    for _ in range(3):
        try:
            safefile.read_text(str(config), 1000, str(repo))
        except safefile.Refused as exc:
            safefile.refuse(exc, "settings")
    lines = [ln for ln in Path(log_path()).read_text().splitlines() if "ignored" in ln]
    assert len(lines) == 1 and "config.toml ignored: a symlink to /dev/zero" in lines[0]
    note = safefile.notice(str(repo), probe=("CLAUDE.md",))
    assert note and "\n" not in note and ".agentctx/config.toml (a symlink to /dev/zero" in note
    (repo / "CLAUDE.md").symlink_to("/dev/zero")
    note = safefile.notice(str(repo), probe=("CLAUDE.md",))
    assert note.startswith("agentctx ignored 2 file(s)") and "CLAUDE.md (a symlink" in note
    config.unlink()
    config.write_text("[capture]\nenabled = true\n")  # fixed: no longer named
    assert "config.toml" not in safefile.notice(str(repo), probe=("CLAUDE.md",))
    assert safefile.notice(str(tmp_path / "elsewhere")) is None
    plain = tmp_path / "plain"  # no .git: only the probed paths are looked up
    (plain / ".agentctx").mkdir(parents=True)
    (plain / ".agentctx" / "config.toml").symlink_to("/dev/zero")
    assert "config.toml" in safefile.notice(str(plain), probe=(".agentctx/config.toml",))
    lines = [ln for ln in Path(log_path()).read_text().splitlines() if "ignored" in ln]
    assert len(lines) == 3, lines
