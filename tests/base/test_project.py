"""Project identity: remote normalization, and detect() on real git checkouts, worktrees and clones."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db, projects
from tests.conftest import make_repo

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="the git binary is not installed")


def _id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
    }
    out = subprocess.run([GIT, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return out.stdout


def init_repo(folder: Path, remote: str | None = None) -> Path:
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", "main")
    (folder / "README.md").write_text("hello\n")
    git(folder, "add", "README.md")
    git(folder, "commit", "-q", "-m", "first")
    if remote:
        git(folder, "remote", "add", "origin", remote)
    return folder


# ---------------------------------------------------------------- normalize_remote


@pytest.mark.parametrize("url", [
    "git@github.com:acme/widgets.git",
    "git@GitHub.com:Acme/Widgets.git",
    "github.com:acme/widgets",
    "https://github.com/acme/widgets",
    "https://github.com/acme/widgets.git",
    "https://github.com/acme/widgets/",
    "https://github.com/acme/widgets.git/",
    "HTTPS://GITHUB.COM/ACME/WIDGETS",
    "https://user:s3cret@github.com/acme/widgets.git",
    "https://x-access-token:ghp_abcdef@github.com/acme/widgets",
    "http://github.com/acme/widgets",
    "ssh://git@github.com/acme/widgets.git",
    "ssh://git@github.com:22/acme/widgets.git",
    "ssh://github.com:2222/acme/widgets/",
    "git://github.com/acme/widgets.git",
    "git+ssh://git@github.com/acme/widgets.git",
    "  git@github.com:acme/widgets.git\n",
])
def test_normalize_remote_variants_agree(url: str) -> None:
    assert project.normalize_remote(url) == "github.com/acme/widgets"


def test_normalize_remote_keeps_nested_paths_and_hosts_apart() -> None:
    assert project.normalize_remote("git@gitlab.com:group/sub/repo.git") == "gitlab.com/group/sub/repo"
    assert project.normalize_remote("https://gitlab.example.com:8443/group/sub/repo.git") == \
        "gitlab.example.com/group/sub/repo"
    assert project.normalize_remote("git@github.com:acme/widgets.git") != \
        project.normalize_remote("git@gitlab.com:acme/widgets.git")
    assert project.normalize_remote("git@github.com:acme/widgets.git") != \
        project.normalize_remote("git@github.com:acme/widgets-fork.git")


def test_normalize_remote_never_keeps_credentials() -> None:
    out = project.normalize_remote("https://alice:hunter2@git.example.com/team/app.git")
    assert out == "git.example.com/team/app"
    assert "alice" not in out and "hunter2" not in out


def test_normalize_local_path_remote(tmp_path: Path) -> None:
    bare = tmp_path / "srv" / "repo.git"
    bare.mkdir(parents=True)
    expected = "path:" + os.path.normcase(os.path.realpath(bare))
    assert project.normalize_remote(str(bare)) == expected
    assert project.normalize_remote(str(bare) + "/") == expected


# ---------------------------------------------------------------- detect() on fake checkouts


def test_detect_repo_with_origin(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "widgets", "git@github.com:Acme/Widgets.git")
    p = project.detect(str(repo))
    assert p.id == _id("github.com/acme/widgets")
    assert p.remote == "github.com/acme/widgets"
    assert p.name == "widgets"
    assert p.root == str(repo)


def test_detect_prefers_origin_over_other_remotes(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        '[core]\n\tbare = false\n'
        '[remote "upstream"]\n\turl = git@github.com:upstream/thing.git\n'
        '[remote "origin"]\n\turl = git@github.com:me/thing.git\n'
    )
    assert project.detect(str(repo)).remote == "github.com/me/thing"
    (repo / ".git" / "config").write_text('[remote "upstream"]\n\turl = git@github.com:upstream/thing.git\n')
    assert project.detect(str(repo)).remote == "github.com/upstream/thing"


def test_detect_repo_without_remote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "local-only", remote=None)
    p = project.detect(str(repo))
    assert p.remote is None
    assert p.id == _id("path:" + os.path.normcase(str(repo)))
    assert p.name == "local-only"


def test_detect_plain_directory(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    p = project.detect(str(plain))
    assert p.remote is None and p.root == str(plain) and p.name == "notes"
    assert p.id == _id("path:" + os.path.normcase(str(plain)))
    other = tmp_path / "notes2"
    other.mkdir()
    assert project.detect(str(other)).id != p.id


def test_detect_subdirectory_shares_the_root_id(tmp_path: Path) -> None:
    for remote in ("git@github.com:acme/widgets.git", None):
        repo = make_repo(tmp_path / f"repo-{bool(remote)}", remote)
        deep = repo / "src" / "pkg" / "mod"
        deep.mkdir(parents=True)
        root = project.detect(str(repo))
        sub = project.detect(str(deep))
        assert sub.id == root.id and sub.root == str(repo) and sub.name == root.name


def test_detect_defaults_to_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "widgets")
    monkeypatch.chdir(repo)
    assert project.detect().id == project.detect(str(repo)).id


def test_detect_resolves_symlinks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "real", remote=None)
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert project.detect(str(link)).id == project.detect(str(repo)).id


def test_register_inserts_then_refreshes(conn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "widgets")
    p = project.detect(str(repo))
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-01T00:00:00Z")
    projects.register(conn, p)
    monkeypatch.setenv("AGENTCTX_NOW", "2026-02-01T00:00:00Z")
    projects.register(conn, p)
    row = conn.execute("SELECT * FROM projects").fetchone()
    assert conn.execute("SELECT COUNT(*) FROM projects").fetchone()[0] == 1
    assert (row["id"], row["name"], row["remote"]) == (p.id, "widgets", "github.com/acme/widgets")
    assert row["first_seen"].startswith("2026-01-01") and row["last_seen"].startswith("2026-02-01")
    assert isinstance(db.generation(conn), int)


# ---------------------------------------------------------------- real git


@needs_git
def test_real_repo_and_subdirectory(tmp_path: Path) -> None:
    main = init_repo(tmp_path / "main", "git@github.com:acme/real.git")
    (main / "pkg").mkdir()
    assert project.detect(str(main)).id == _id("github.com/acme/real")
    assert project.detect(str(main / "pkg")).id == _id("github.com/acme/real")


@needs_git
@pytest.mark.parametrize("remote", ["git@github.com:acme/worktrees.git", None])
def test_real_worktrees_share_the_main_checkout_id(tmp_path: Path, remote: str | None) -> None:
    main = init_repo(tmp_path / "main", remote)
    git(main, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt-feature"))
    git(main, "worktree", "add", "-q", "--detach", str(tmp_path / "elsewhere" / "wt-detached"))
    assert (tmp_path / "wt-feature" / ".git").is_file(), "a linked worktree has a .git file"

    main_p = project.detect(str(main))
    expected = _id("github.com/acme/worktrees") if remote else _id("path:" + os.path.normcase(str(main)))
    assert main_p.id == expected
    for wt in (tmp_path / "wt-feature", tmp_path / "elsewhere" / "wt-detached"):
        p = project.detect(str(wt))
        assert p.id == main_p.id, wt
        assert p.root == str(wt), "root is the worktree itself"
        assert p.remote == main_p.remote
        assert p.name == main_p.name
    (tmp_path / "wt-feature" / "deep").mkdir()
    assert project.detect(str(tmp_path / "wt-feature" / "deep")).id == main_p.id


@needs_git
def test_real_remote_added_later_changes_id_for_all_worktrees(tmp_path: Path) -> None:
    main = init_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", "-b", "f", str(tmp_path / "wt"))
    before = project.detect(str(tmp_path / "wt")).id
    git(main, "remote", "add", "origin", "https://github.com/acme/later.git")
    assert project.detect(str(tmp_path / "wt")).id == project.detect(str(main)).id == _id("github.com/acme/later")
    assert before != _id("github.com/acme/later")


@needs_git
def test_real_bare_repository_worktrees_share_an_id(tmp_path: Path) -> None:
    """Worktrees of a bare repository (a common worktree layout) with no remote share one id."""
    bare = tmp_path / "project.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = init_repo(tmp_path / "seed")
    git(seed, "push", "-q", str(bare), "main")
    git(bare, "worktree", "add", "-q", str(tmp_path / "wt-main"), "main")
    git(bare, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt-feature"), "main")
    a, b = project.detect(str(tmp_path / "wt-main")), project.detect(str(tmp_path / "wt-feature"))
    assert a.remote is None and a.id == b.id
    assert a.name == b.name == "project"
    assert a.root == str(tmp_path / "wt-main") and b.root == str(tmp_path / "wt-feature")
    assert a.id != project.detect(str(seed)).id


@needs_git
def test_real_separate_git_dir_worktrees_share_an_id(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    (tmp_path / "store").mkdir()
    git(main, "init", "-q", "-b", "main", "--separate-git-dir", str(tmp_path / "store" / "main.git"))
    (main / "f").write_text("x")
    git(main, "add", "f")
    git(main, "commit", "-q", "-m", "c")
    git(main, "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"))
    assert (main / ".git").is_file()
    assert project.detect(str(main)).id == project.detect(str(tmp_path / "wt")).id
    assert project.detect(str(main)).name == "main"


@needs_git
def test_real_clones_with_the_same_remote_share_an_id(tmp_path: Path) -> None:
    origin = init_repo(tmp_path / "origin-src")
    bare = tmp_path / "hosted" / "shared.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    one = tmp_path / "laptop" / "shared"
    two = tmp_path / "desktop" / "code" / "shared-copy"
    git(tmp_path, "clone", "-q", str(bare), str(one))
    git(tmp_path, "clone", "-q", str(bare), str(two))
    p1, p2 = project.detect(str(one)), project.detect(str(two))
    assert p1.id == p2.id and p1.root != p2.root
    assert p1.remote == p2.remote == "path:" + os.path.normcase(os.path.realpath(bare))
    # the same hosted remote spelled differently in two clones
    a = init_repo(tmp_path / "a", "git@github.com:acme/shared.git")
    b = init_repo(tmp_path / "b", "https://ci-bot:token123@github.com/ACME/shared")
    assert project.detect(str(a)).id == project.detect(str(b)).id == _id("github.com/acme/shared")
    assert project.detect(str(a)).id != p1.id
