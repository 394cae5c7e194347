"""Shared fixtures: an isolated data directory, a store, a fake git project, and the uv script
environments every hook, MCP and dashboard process needs (prepared once per session)."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db
from tests.support import scriptenvs

# The dashboard tests' `store` and `server` fixtures (modules that define their own keep theirs).
pytest_plugins = ["tests.support.ui_server"]

# Which plugin folders have their script environments prepared is machine state (agentctx.prepare): the
# suite keeps its own, never the developer's, and every process it starts inherits this.
os.environ["AGENTCTX_CACHE_DIR"] = str(scriptenvs.STATE_DIR)
# That folder outlives the session (the prepared environments are worth keeping), but which refused files were
# already reported is the session's own: pytest reuses /tmp paths and tmpfs reuses inodes, so an earlier
# session's entry could pass for this one's file and hide the one log line a test expects.
shutil.rmtree(scriptenvs.STATE_DIR / "refused-files", ignore_errors=True)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def script_envs() -> dict:
    """``uv sync --script`` for every entry script of the checkout (fast when uv's cache is warm; downloads
    what is missing, online where the machine is), as the first SessionStart after an install does."""
    outcome = scriptenvs.prepare(ROOT)
    if outcome["failed"]:
        warnings.warn(f"script environments not prepared: {outcome['failed']}", stacklevel=1)
    return outcome


@pytest.fixture(autouse=True)
def no_login_path_of_this_machine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Extraction through a Claude Code login is on by default: a test in this process never finds the
    developer's own signed-in ``claude`` (the ``claude``-marked tests point at the pinned CLI themselves)."""
    if request.node.get_closest_marker("claude") is None:
        from agentctx import vialogin

        monkeypatch.setattr(vialogin, "find_claude", lambda: None)


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

    root = stable_bundle()
    outcome = scriptenvs.prepare(root)  # uv keys script environments by path: the copy needs its own
    if outcome["failed"]:
        warnings.warn(f"script environments of {root} not prepared: {outcome['failed']}", stacklevel=1)
    return root


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, home: Path):
    """A fake Messages API on 127.0.0.1 that the real anthropic SDK is pointed at (base URL and key)."""
    from tests.support import fake_api

    with fake_api.FakeMessagesAPI() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        yield server
