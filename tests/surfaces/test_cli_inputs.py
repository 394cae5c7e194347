"""What the CLI cannot handle, it refuses (issue 22, part 5): numbers that are not finite or out of range,
input files that are not regular files (a FIFO never hangs, /dev/zero is never read), stdin beyond its
bound, import lines of the wrong shape; each with one clear ``Error:`` line (or per-line errors and the
counts) and a non-zero exit, never a traceback. Through the real ``bin/agentctx`` process."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.support.cli import agentctx

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX file kinds")

GOOD = {"type": "decision", "title": "Payments retry three times"}


def _one_error(proc, *fragments: str) -> str:
    assert proc.returncode != 0, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def _records(home: Path, repo: Path) -> list[dict]:
    proc = agentctx(home, "--project", str(repo), "list", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "NaN", "-1", "1e309"])
def test_config_refuses_a_cap_that_is_not_a_finite_amount(home: Path, value: str) -> None:
    before = agentctx(home, "config", "--json")
    for option in ("--session-cap", "--daily-cap"):
        proc = agentctx(home, "config", f"{option}={value}")
        assert proc.returncode == 2
        _one_error(proc, option)
    after = agentctx(home, "config", "--json")
    cap = lambda proc: json.loads(proc.stdout)["settings"]["session_cap_usd"]  # noqa: E731
    assert cap(after) == cap(before)
    assert agentctx(home, "config", "--session-cap", "0.75").returncode == 0


def test_consolidate_refuses_a_time_budget_that_is_not_finite(home: Path, repo: Path) -> None:
    _one_error(agentctx(home, "--project", str(repo), "consolidate", "--time-budget", "nan"), "--time-budget")


def test_import_exits_1_on_any_bad_line_and_says_how_many_of_each(home: Path, repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "mixed.jsonl"
    lines = [
        "\ufeff" + json.dumps({**GOOD, "title": "First line after a BOM"}),  # as some editors write it
        json.dumps({**GOOD, "body": []}),
        json.dumps({**GOOD, "title": "Pinned by a word", "pinned": "yes"}),
        json.dumps({**GOOD, "title": "A numeric key", "key": 5}),
        json.dumps({**GOOD, "title": "An object id", "id": {"x": 1}}),
        json.dumps({**GOOD, "title": "A text count", "access_count": "7"}),
        json.dumps({**GOOD, "title": "An infinite score", "score": 1e999}).replace("Infinity", "1e999"),
        '{"type": "decision", "title": "deep", "body": ' + "[" * 5000 + "]" * 5000 + "}",
        json.dumps({**GOOD, "title": "Last good line"}),
    ]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = agentctx(home, "--project", str(repo), "import", str(src))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "imported 2 records, 0 already present, 7 bad lines" in proc.stdout
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("line ")]
    assert [e.split(":")[0] for e in errors] == [f"line {n}" for n in range(2, 9)], errors
    assert "body must be text, not a list" in errors[0]
    assert "pinned must be true or false" in errors[1] and "key must be text" in errors[2]
    assert "nested deeper than" in errors[6]
    titles = {r["title"] for r in _records(home, repo)}
    assert titles == {"First line after a BOM", "Last good line"}
    report = json.loads(agentctx(home, "--project", str(repo), "import", str(src), "--json").stdout)
    assert len(report["errors"]) == 7 and report["added"] == 2


def test_import_of_good_lines_only_exits_0(home: Path, repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "good.jsonl"
    src.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n")
    proc = agentctx(home, "--project", str(repo), "import", str(src))
    assert proc.returncode == 0, proc.stderr
    assert "imported 1 records, 0 already present, 0 bad lines" in proc.stdout


def test_import_refuses_what_is_not_a_regular_file_at_once(home: Path, repo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # nobody ever writes: opening it for reading would block for good
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    for path, what in ((fifo, "a FIFO"), (zero, "character device"), (tmp_path, "a folder")):
        started = time.monotonic()
        proc = agentctx(home, "--project", str(repo), "import", str(path), timeout=60)
        _one_error(proc, str(path), what)
        assert time.monotonic() - started < 60
    assert _records(home, repo) == []


def test_import_from_an_endless_stdin_stops_at_the_line_bound(home: Path, repo: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        import subprocess

        from tests.support.cli import BIN, UV

        env = {**os.environ, "AGENTCTX_HOME": str(home), "PATH": os.path.dirname(UV) + os.pathsep + os.environ["PATH"]}
        proc = subprocess.run([str(BIN), "--project", str(repo), "import", "-"], stdin=zero, capture_output=True,
                              text=True, env=env, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "line 1: invalid: longer than" in proc.stderr and "nothing after it was read" in proc.stderr
    assert "imported 0 records, 0 already present, 1 bad lines" in proc.stdout


def test_body_file_and_transcript_refuse_fifos_and_devices(home: Path, repo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "body.txt"
    os.mkfifo(fifo)
    for path, what in ((fifo, "a FIFO"), (Path("/dev/zero"), "character device")):
        proc = agentctx(home, "--project", str(repo), "record", "--type", "decision", "--title", "T",
                        "--body-file", str(path), timeout=60)
        _one_error(proc, "--body-file", what)
        proc = agentctx(home, "--project", str(repo), "extract", "--session-id", "s1", "--transcript", str(path),
                        timeout=60)
        _one_error(proc, "--transcript", what)
    big = tmp_path / "big.txt"
    big.write_text("x" * 200_000)
    _one_error(agentctx(home, "--project", str(repo), "record", "--type", "decision", "--title", "T",
                        "--body-file", str(big)), "larger than")


def test_stdin_beyond_its_bound_is_refused_not_cut(home: Path, repo: Path) -> None:
    _one_error(agentctx(home, "--project", str(repo), "search", "-", input="payments " * 200_000), "the query",
               "larger than")
    _one_error(agentctx(home, "redact", input="a" * (16 * 1024 * 1024 + 1)), "larger than")
    proc = agentctx(home, "redact", input="token ghp_" + "a" * 36 + "\n")
    assert proc.returncode == 0 and "ghp_" not in proc.stdout


def test_remote_sync_exits_non_zero_when_another_sync_runs(home: Path, repo: Path) -> None:
    added = agentctx(home, "--project", str(repo), "remote", "add", "team", "postgresql://me@127.0.0.1:1/agentctx")
    assert added.returncode == 0, added.stderr
    lock = home / "locks" / "remote-sync.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps({"pid": os.getpid(), "at": time.time()}))  # a live owner: this test process
    proc = agentctx(home, "--project", str(repo), "remote", "sync")
    assert proc.returncode == 75, (proc.returncode, proc.stdout, proc.stderr)
    assert "another sync is running" in proc.stdout and "Traceback" not in proc.stderr


def test_a_transcript_of_an_unknown_shape_is_logged_once(home: Path, repo: Path, tmp_path: Path) -> None:
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps([{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}],
                                 indent=2) + "\n")
    for _ in range(2):
        proc = agentctx(home, "--project", str(repo), "extract", "--session-id", "s-pretty", "--transcript",
                        str(pretty), AGENTCTX_LLM="0")
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    log = (home / "logs" / "agentctx.log").read_text()
    lines = [ln for ln in log.splitlines() if str(pretty) in ln]
    assert len(lines) == 1 and "an unknown shape" in lines[0], lines
