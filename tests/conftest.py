"""Shared fixtures: an isolated data directory, a store, and a fake git project."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db

# The dashboard tests' `store` and `server` fixtures (modules that define their own keep theirs).
pytest_plugins = ["tests.support.ui_server"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AGENTCTX_HOME pointed at a fresh folder for this test."""
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    monkeypatch.delenv("AGENTCTX_NOW", raising=False)
    monkeypatch.delenv("AGENTCTX_DISABLE", raising=False)
    return data


@pytest.fixture
def conn(home: Path):
    connection = db.connect()
    yield connection
    connection.close()


def make_repo(folder: Path, remote: str | None = "git@github.com:acme/widgets.git") -> Path:
    """A directory that looks like a git checkout (``.git/config``), optionally with an origin."""
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    config = '[core]\n\tbare = false\n'
    if remote:
        config += f'[remote "origin"]\n\turl = {remote}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    (folder / ".git" / "config").write_text(config)
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "widgets")


@pytest.fixture
def proj(repo: Path) -> project.Project:
    return project.detect(str(repo))


@pytest.fixture(scope="session")
def claude() -> Path:
    """The pinned Claude Code CLI (installed on first use); a failure in CI, a skip elsewhere."""
    import os

    from tests.support.claude_cli import ClaudeCLIUnavailable, install_claude

    try:
        return install_claude()
    except ClaudeCLIUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"Claude Code CLI unavailable: {exc}")


@pytest.fixture(scope="session")
def bundle() -> Path:
    """The plugin as a fresh clone has it, at a stable path (see tests/support/bundle.py)."""
    from tests.support.bundle import stable_bundle

    return stable_bundle()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, home: Path):
    """A fake Messages API on 127.0.0.1 that the real anthropic SDK is pointed at (base URL and key)."""
    from tests.support import fake_api

    with fake_api.FakeMessagesAPI() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        yield server
