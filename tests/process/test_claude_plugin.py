"""The whole plugin through the real Claude Code CLI (pinned) against a fake Messages API on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx import budgets, project
from agentctx.store import db, records
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.bundle import plugin_env
from tests.support.claude_cli import claude_plugin, run_claude
from tests.support.waiting import wait_for

pytestmark = pytest.mark.claude
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A project checkout and a store with facts about it."""
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    work = make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    conn = db.connect()
    proj = project.detect(str(work))
    recs = {
        "queue": records.add(conn, proj.id, type="decision", title="Background jobs run on Celery with Redis",
                             body="Workers live in shop/tasks; Redis is the broker."),
        "test": records.add(conn, proj.id, type="profile", key="profile.test_command", title="Test command",
                            body="make test"),
        "bug": records.add(conn, proj.id, type="bugfix", title="Invoice PDF rendering crashed on emoji names",
                           body="WeasyPrint needed the Noto Color Emoji font; installed in the Dockerfile."),
    }
    conn.close()
    return work, data, proj, recs


def system_texts(api: fake_api.FakeMessagesAPI) -> str:
    """Everything the model was shown, across all requests of the run."""
    return "\n".join(t for r in api.message_requests for t in api.all_text(r))


def test_plugin_and_marketplace_validate(claude, bundle, tmp_path):
    for target in (bundle / ".claude-plugin" / "plugin.json", bundle):
        run = claude_plugin(tmp_path / "home", "validate", "--strict", "--json", str(target))
        assert run.returncode == 0, run.stdout + run.stderr
        report = json.loads(run.stdout)
        assert report["success"] is True
    plugin_report = json.loads(claude_plugin(tmp_path / "home", "validate", "--json", str(bundle)).stdout)
    events = {h["event"] for h in plugin_report["provides"]["hooks"]}
    assert {"SessionStart", "UserPromptSubmit", "SessionEnd", "PostToolUse", "PreCompact", "Stop"} <= events


def test_digest_and_turn_records_reach_the_model_and_superseded_facts_do_not(claude, bundle, world, tmp_path):
    work, data, proj, recs = world
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Noted."))
        run = run_claude(work, tmp_path / "home", "Why did the invoice PDF rendering crash for some customers?",
                         base_url=api.base_url, plugin_dir=bundle, extra_env=plugin_env(data)).check()
        seen = system_texts(api)
    assert "SessionStart hook additional context" in seen
    assert "Background jobs run on Celery with Redis" in seen  # the digest
    assert "make test" in seen  # project profile
    assert "UserPromptSubmit hook additional context" in seen
    assert "Invoice PDF rendering crashed on emoji names" in seen  # the per-turn record
    session_id = run.json["session_id"]
    conn = db.connect()

    def ended():  # SessionEnd hands its work to a detached process: the row closes moments later
        found = conn.execute("SELECT tokens_injected, injections, ended_at FROM sessions WHERE session_id = ?",
                             (session_id,)).fetchone()
        return found if found is not None and found["ended_at"] else None

    row = wait_for(ended, "SessionEnd to close the session")
    assert row["injections"] == 2 and row["ended_at"]  # SessionEnd ran too
    assert 0 < row["tokens_injected"] <= budgets.SESSION_START_TOKENS + budgets.TURN_TOKENS

    new = records.supersede(conn, proj.id, recs["queue"]["id"], title="Background jobs run on Dramatiq with RabbitMQ",
                            body="Celery was dropped: its Redis broker lost tasks on failover.")
    conn.close()
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Noted."))
        run_claude(work, tmp_path / "home", "How are background jobs and workers set up here?",
                   base_url=api.base_url, plugin_dir=bundle, extra_env=plugin_env(data)).check()
        seen = system_texts(api)
    assert new["title"] in seen
    assert "Celery with Redis" not in seen  # the superseded decision never reaches the model


def test_installed_from_the_marketplace_runs(claude, bundle, world, tmp_path):
    work, data, proj, recs = world
    home = tmp_path / "home"
    added = claude_plugin(home, "marketplace", "add", str(bundle))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = claude_plugin(home, "install", "agentctx@agentctx")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = claude_plugin(home, "list", "--json")
    assert listed.returncode == 0
    entries = json.loads(listed.stdout)
    ours = [e for e in entries if str(e.get("id", e.get("name", ""))).startswith("agentctx")]
    assert ours and all(e.get("enabled", True) for e in ours), listed.stdout
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Noted."))
        run_claude(work, home, "What runs the background jobs?", base_url=api.base_url,
                   extra_env=plugin_env(data)).check()  # no --plugin-dir: the installed plugin
        seen = system_texts(api)
    assert "Background jobs run on Celery with Redis" in seen


def test_plugin_bin_puts_the_cli_on_the_bash_path(claude, bundle, world, tmp_path):
    """Claude's Bash tool can call `agentctx` (the plugin's bin/ is on its PATH)."""
    work, data, proj, recs = world
    with fake_api.FakeMessagesAPI() as api:
        api.responder = lambda body: (
            fake_api.text("done") if fake_api.tool_results(body)
            else fake_api.tool_use("Bash", {"command": "agentctx search invoice --json", "description": "search"})
        )
        run_claude(work, tmp_path / "home", "Search the context store for invoice.", base_url=api.base_url,
                   plugin_dir=bundle, extra_env=plugin_env(data), extra_args=["--allowedTools", "Bash"]).check()
        results = [r for req in api.message_requests for r in fake_api.tool_results(req.body)]
    output = json.dumps(results)
    assert "Invoice PDF rendering crashed on emoji names" in output, output[:2000]


def test_the_start_after_a_finished_session_is_served_from_its_seal_inside_claude_code(claude, bundle, world,
                                                                                        tmp_path):
    """Two sessions through the real CLI, one after the other as a person works: when the first one's
    background work is done it seals the next start (``injection.sealing``); the second session's
    SessionStart is served from that seal (the seal file not rewritten), its digest reaches the model, and
    its start, noted in a file, is folded into the store with the prompt's injection."""
    from agentctx import paths
    from agentctx.injection import ready
    from agentctx.store import sessions

    work, data, proj, recs = world
    seal = Path(ready.seal_path(str(work.resolve())))
    locks = data / "locks"
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Noted."))
        run_claude(work, tmp_path / "home", "Why did the invoice PDF rendering crash?", base_url=api.base_url,
                   plugin_dir=bundle, extra_env=plugin_env(data)).check()
    log = Path(paths.sub("logs", "agentctx.log"))
    wait_for(lambda: seal.exists() and " consolidate " in log.read_text() and not list(locks.glob("*.lock")),
             "the first session's background work to seal the next start", timeout=180)
    sealed_at = seal.stat().st_mtime_ns
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Noted."))
        run = run_claude(work, tmp_path / "home", "How are background jobs set up?", base_url=api.base_url,
                         plugin_dir=bundle, extra_env=plugin_env(data)).check()
        seen = system_texts(api)
    assert "SessionStart hook additional context" in seen and recs["queue"]["title"] in seen
    assert seal.stat().st_mtime_ns == sealed_at  # served from it: a whole start would have sealed again or unsealed
    conn = db.connect()
    try:
        row = wait_for(lambda: (r := sessions.get(conn, run.json["session_id"])) and r["ended_at"] and r,
                       "the second session's row, its start folded in")
        assert row["injections"] >= 1 and row["source"] == "startup" and row["cwd"] == str(work.resolve())
    finally:
        conn.close()
