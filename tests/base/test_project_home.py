"""Project identity and the user's home: a dotfiles HOME (a git repository) or a repository above HOME is
never the project of a folder inside HOME, so one client's decisions never reach another client's folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db, records
from tests.support.hooks import context_of, hook_env, run_hook


def git_init(folder: Path, remote: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


@pytest.fixture
def dotfiles_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is a git repository (dotfiles, with a remote), with ordinary folders under it."""
    home = git_init(tmp_path / "home", "git@github.com:jane/dotfiles.git")
    for name in ("work/client1/src", "work/client2"):
        (home / name).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_folders_under_a_dotfiles_home_are_their_own_projects(dotfiles_home: Path):
    home_proj = project.detect(str(dotfiles_home))
    c1 = project.detect(str(dotfiles_home / "work" / "client1"))
    c2 = project.detect(str(dotfiles_home / "work" / "client2"))
    assert home_proj.remote == "github.com/jane/dotfiles"  # HOME itself is the dotfiles project
    assert len({home_proj.id, c1.id, c2.id}) == 3
    assert c1.remote is None and c1.root == os.path.realpath(dotfiles_home / "work" / "client1")
    assert project.detect(str(dotfiles_home / "work" / "client1" / "src")).id not in (home_proj.id, c1.id, c2.id)


def test_a_repository_inside_home_is_still_found(dotfiles_home: Path):
    repo = git_init(dotfiles_home / "work" / "client3", "https://github.com/acme/client3.git")
    (repo / "pkg").mkdir()
    assert project.detect(str(repo / "pkg")).remote == "github.com/acme/client3"
    assert project.detect(str(repo / "pkg")).root == os.path.realpath(repo)


def test_a_repository_above_home_is_nobodys_project_below_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    outer = git_init(tmp_path / "srv", "https://example.com/ops/server-config.git")
    home = outer / "home" / "jane"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert project.detect(str(home / "notes")).remote is None
    assert project.detect(str(home)).remote is None
    (outer / "etc").mkdir()
    assert project.detect(str(outer / "etc")).remote == "example.com/ops/server-config"  # outside HOME: found


def test_a_symlinked_home_is_recognised(dotfiles_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    link = tmp_path / "home-link"
    link.symlink_to(dotfiles_home)
    monkeypatch.setenv("HOME", str(link))
    assert project.detect(str(dotfiles_home / "work" / "client2")).remote is None


def test_hooks_never_inject_one_clients_decision_in_another_clients_folder(dotfiles_home: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch):
    """The issue's scenario, through the real hooks: a decision of ~/work/client1, a session in ~/work/client2."""
    data = tmp_path / "data"
    env = hook_env(data, HOME=str(dotfiles_home),
                   UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv"))
    c1, c2 = dotfiles_home / "work" / "client1", dotfiles_home / "work" / "client2"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    conn = db.connect()
    records.add(conn, project.detect(str(c1)).id, type="decision", title="Client1 invoices are net 60",
                body="Agreed with their finance team.")
    conn.close()

    def start(folder: Path, sid: str) -> str:
        proc = run_hook("session_start", {"session_id": sid, "cwd": str(folder), "hook_event_name": "SessionStart",
                                          "source": "startup"}, data, env=env)
        assert proc.returncode == 0, proc.stderr
        return context_of(proc) or ""

    assert "Client1 invoices are net 60" in start(c1, "s1")
    assert "Client1 invoices are net 60" not in start(c2, "s2")
    prompt = run_hook("user_prompt_submit", {"session_id": "s3", "cwd": str(c2), "hook_event_name": "UserPromptSubmit",
                                             "prompt": "what are the invoice payment terms, net 60?"}, data, env=env)
    assert prompt.returncode == 0 and "Client1" not in (context_of(prompt) or "")
