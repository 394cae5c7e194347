"""Stop hook and extraction worker as real processes; then the whole loop through the real Claude Code CLI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db
from tests.capture.test_extract import Transcript, decision, reply
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.claude_cli import run_claude
from tests.support.hooks import ROOT, hook_env, run_hook
from tests.support.waiting import wait_for

WORKER = ROOT / "lib" / "agentctx_worker.py"


@pytest.fixture(scope="module", autouse=True)
def warm_worker_env():
    """Resolve the worker's PEP 723 environment once (later runs may be offline)."""
    subprocess.run(["uv", "run", "--quiet", "--script", str(WORKER), "--help"], check=True, capture_output=True,
                   timeout=600)


def extraction_requests(api: fake_api.FakeMessagesAPI) -> list:
    return [r for r in api.message_requests if str(r.body.get("model")).startswith("claude-haiku-4-5")
            and "You extract durable project context" in json.dumps(r.body.get("system"))]


def rows(data: Path, sql: str, params=()) -> list[dict]:
    if not (data / "agentctx.db").exists():
        return []
    conn = db.connect(str(data / "agentctx.db"))
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def worker_idle(data: Path, sid: str) -> bool:
    """No worker holds or is asked to take the session's lock (see ``flight.for_session``)."""
    name = "extract-" + hashlib.sha256(sid.encode()).hexdigest()[:16]
    return not any((data / "locks" / f"{name}{suffix}").exists() for suffix in (".lock", ".pending"))


@pytest.fixture
def setup(tmp_path):
    data = tmp_path / "data"
    work = make_repo(tmp_path / "shop")
    tx = Transcript(tmp_path / "session.jsonl")
    tx.turn("We decided to move the queue to RabbitMQ.", "OK, RabbitMQ it is.")
    return data, work, tx


def stop_payload(sid: str, tx: Transcript, work: Path) -> dict:
    return {"session_id": sid, "transcript_path": str(tx.path), "cwd": str(work), "hook_event_name": "Stop",
            "stop_hook_active": False, "last_assistant_message": "OK"}


def env_for(data: Path, api: fake_api.FakeMessagesAPI | None, **extra) -> dict[str, str]:
    # These tests are about extraction: opt back in (hook_env turns model calls off); whether a
    # key is present is each test's business.
    env = hook_env(data, AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0", AGENTCTX_LLM="1", **extra)
    if api is not None:
        env.update(ANTHROPIC_API_KEY="sk-test-fake", ANTHROPIC_BASE_URL=api.base_url)
    return env


def test_stop_returns_before_the_detached_worker_finishes(setup):
    data, work, tx = setup
    release = threading.Event()

    def respond(body):
        release.wait(120)  # the worker is stuck here until the hook has returned
        return fake_api.text(reply(decisions=[decision("The queue is RabbitMQ")]))

    with fake_api.FakeMessagesAPI(responder=respond) as api:
        proc = run_hook("stop", stop_payload("s-detach", tx, work), data, env=env_for(data, api))
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
        assert rows(data, "SELECT id FROM records") == []  # the hook did not wait for the worker
        release.set()
        recs = wait_for(lambda: rows(data, "SELECT * FROM records WHERE type = 'decision'"), "the worker's records")
        wait_for(lambda: worker_idle(data, "s-detach"), "the worker to exit")
    assert [r["title"] for r in recs] == ["The queue is RabbitMQ"]
    [sess] = rows(data, "SELECT * FROM sessions WHERE session_id = 's-detach'")
    assert sess["extraction_runs"] == 1 and sess["extraction_cost_usd"] > 0 and sess["extraction_watermark"]
    assert len(extraction_requests(api)) == 1


def test_two_stops_at_once_make_one_extraction(setup):
    data, work, tx = setup
    release = threading.Event()

    def respond(body):
        release.wait(120)
        return fake_api.text(reply(decisions=[decision("The queue is RabbitMQ")]))

    with fake_api.FakeMessagesAPI(responder=respond) as api:
        env = env_for(data, api)
        payload = json.dumps(stop_payload("s-twice", tx, work)).encode()
        procs = [subprocess.Popen(["sh", str(ROOT / "hooks" / "launch.sh"), "stop"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(ROOT))
                 for _ in range(2)]
        outs = [p.communicate(payload, timeout=60) for p in procs]
        assert all(p.returncode == 0 for p in procs) and all(o == (b"", b"") for o in outs)
        wait_for(lambda: extraction_requests(api), "the extraction request")
        release.set()
        wait_for(lambda: rows(data, "SELECT * FROM sessions WHERE session_id = 's-twice' AND extraction_runs > 0"),
                 "the extraction run")
        wait_for(lambda: worker_idle(data, "s-twice"), "the worker to exit")
    assert len(extraction_requests(api)) == 1
    assert len(rows(data, "SELECT id FROM records WHERE type = 'decision'")) == 1


def test_stop_without_an_api_key_captures_explicit_statements(setup):
    data, work, tx = setup
    proc = run_hook("stop", stop_payload("s-nokey", tx, work), data, env=env_for(data, None))
    assert proc.returncode == 0 and proc.stdout == b""
    wait_for(lambda: rows(data, "SELECT * FROM records WHERE type = 'decision'"), "explicit records")
    wait_for(lambda: worker_idle(data, "s-nokey"), "the worker to exit")
    recs = rows(data, "SELECT * FROM records ORDER BY type")
    # the statement, quoted; and the session's handover derived from its daily log (no model)
    assert [(r["type"], r["source"]) for r in recs] == [("decision", "user_statement"), ("handover", "hook_observation")]
    log = (data / "logs" / "agentctx.log").read_text()
    assert log.count("no ANTHROPIC_API_KEY") == 1


def test_stop_with_bad_input_or_disabled_does_nothing(setup):
    data, work, tx = setup
    for payload, env in [
        (b"not json", env_for(data, None)),
        ({"session_id": "s-x", "transcript_path": "/nonexistent.jsonl", "cwd": str(work)}, env_for(data, None)),
        (stop_payload("s-off", tx, work), env_for(data, None, AGENTCTX_DISABLE="1")),
    ]:
        proc = run_hook("stop", payload, data, env=env)
        assert proc.returncode == 0 and proc.stdout == b""
    assert rows(data, "SELECT id FROM records") == []


def test_stop_hook_imports_only_the_standard_library():
    code = (
        "import sys; sys.path.insert(0, 'lib')\n"
        "import agentctx.events.stop, agentctx.events.frame, agentctx.spawn\n"
        "heavy = {'sqlite_utils', 'click', 'anthropic', 'sqlite3', 'dataclasses', 'typing', 'pathlib', 'shutil'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_config_extract_and_status(setup):
    data, work, tx = setup
    env = {**os.environ, "AGENTCTX_HOME": str(data)}
    env.pop("ANTHROPIC_API_KEY", None)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["uv", "run", "--quiet", "agentctx", "--project", str(work), *args],
                              capture_output=True, text=True, cwd=ROOT, env=env)

    shown = json.loads(cli("config", "--no-llm", "--json").stdout)
    assert shown["settings"]["llm"] == {"value": False, "source": "user", "where": str(data / "config.json")}
    assert shown["extraction_mode"] == "explicit" and "no-llm" in shown["why"]
    assert json.loads((data / "config.json").read_text())["llm"] is False
    done = cli("extract", "--session-id", "s-cli", "--transcript", str(tx.path), "--json")
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in json.loads(done.stdout)][0] == "written"
    status = json.loads(cli("status", "--json").stdout)
    assert status["extraction"]["mode"] == "explicit" and status["records"]["decision"]["active"] == 1
    assert "extraction (explicit" in cli("status").stdout
    assert json.loads(cli("config", "--llm", "--json").stdout)["settings"]["llm"]["value"] is True
    bad = cli("extract", "--session-id", "s", "--transcript", str(tx.path.parent / "missing.jsonl"))
    assert bad.returncode != 0 and bad.stderr.startswith("Error:")


def test_plugin_cli_without_the_sdk_runs_extraction_in_the_worker(setup):
    """bin/agentctx's environment has no anthropic SDK: `extract` hands over to the worker script."""
    data, work, tx = setup
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text(reply(decisions=[decision("The queue is RabbitMQ")])))
        env = {**os.environ, "AGENTCTX_HOME": str(data), "ANTHROPIC_API_KEY": "sk-test",
               "ANTHROPIC_BASE_URL": api.base_url}
        done = subprocess.run(["uv", "run", "--quiet", "--script", str(ROOT / "lib" / "agentctx_cli.py"), "--project",
                               str(work), "extract", "--session-id", "s-bin", "--transcript", str(tx.path), "--json"],
                              capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    [first, *_] = json.loads(done.stdout)
    assert first["status"] == "written" and first["mode"] == "llm"
    assert len(extraction_requests(api)) == 1


# -- the real Claude Code CLI --------------------------------------------------------------------------


@pytest.mark.claude
def test_real_cli_session_is_extracted_incrementally(claude, bundle, tmp_path):
    data = tmp_path / "data"
    work = make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    env = {"AGENTCTX_HOME": str(data), "UV_OFFLINE": "1", "AGENTCTX_EXTRACT_IDLE": "0",
           "AGENTCTX_EXTRACT_MIN_TOKENS": "0",
           "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv")}
    replies = iter([
        reply(decisions=[decision("Background jobs run on Dramatiq")],
              preferences=[{"category": "process", "rule": "Tests before code", "confidence": "explicit",
                            "scope": "global"}]),
        reply(conventions=[{"scope": "project", "convention": "Workers live in shop/tasks",
                            "confidence": "explicit"}],
              active_work={"current_task": "Move jobs to Dramatiq", "blockers": [], "next_steps": ["port the mailer"],
                           "open_questions": []}),
    ])

    def respond(body):
        if "You extract durable project context" in json.dumps(body.get("system")):
            return fake_api.text(next(replies))
        return fake_api.text("Understood.")

    home = tmp_path / "home"
    with fake_api.FakeMessagesAPI(responder=respond) as api:
        first = run_claude(work, home, "We decided to run background jobs on Dramatiq. I always write tests first.",
                           base_url=api.base_url, plugin_dir=bundle, extra_env=env).check()
        sid = first.json["session_id"]
        wait_for(lambda: rows(data, "SELECT * FROM records WHERE type = 'decision'"), "the first extraction")
        wait_for(lambda: worker_idle(data, sid), "the first worker to exit")
        run_claude(work, home, "From now on workers live in shop/tasks.", base_url=api.base_url,
                   plugin_dir=bundle, extra_env=env, extra_args=["--resume", sid]).check()
        wait_for(lambda: rows(data, "SELECT * FROM records WHERE type = 'convention'"), "the second extraction")
        wait_for(lambda: worker_idle(data, sid), "the second worker to exit")
        calls = extraction_requests(api)
    assert len(calls) == 2
    first_log, second_log = (c.body["messages"][0]["content"] for c in calls)
    assert "Dramatiq" in first_log and "shop/tasks" not in first_log
    assert "shop/tasks" in second_log and "run background jobs on Dramatiq" not in second_log  # incremental
    assert "<raw_user_log role=\"user\"" in first_log and "agentctx-context" not in first_log  # no hook output
    proj_id = project.detect(str(work)).id
    recs = rows(data, "SELECT type, title, scope, source FROM records WHERE superseded_at IS NULL ORDER BY type")
    assert {(r["type"], r["title"]) for r in recs} >= {
        ("decision", "Background jobs run on Dramatiq"), ("preference", "Tests before code"),
        ("convention", "Workers live in shop/tasks"), ("handover", "Move jobs to Dramatiq")}
    [sess] = rows(data, "SELECT * FROM sessions WHERE session_id = ?", (sid,))
    assert sess["project_id"] == proj_id and sess["extraction_runs"] == 2 and sess["extraction_cost_usd"] > 0
    status = subprocess.run(["uv", "run", "--quiet", "agentctx", "--project", str(work), "status", "--json"],
                            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "AGENTCTX_HOME": str(data)})
    extraction = json.loads(status.stdout)["extraction"]
    assert extraction["runs"] == 2 and extraction["cost_usd"] == pytest.approx(sess["extraction_cost_usd"], abs=1e-6)


@pytest.mark.claude
def test_extraction_through_the_claude_code_login_does_not_fire_our_hooks(claude, tmp_path, monkeypatch):
    """No API key and a logged-in ``claude``: ``claude -p`` extracts by default; its own session fires
    no hook of anyone's and loads no MCP server; the person is told once."""
    from agentctx import settings
    from agentctx.capture import extract

    data = tmp_path / "data"
    home = tmp_path / "home"
    cfg = home / ".claude"
    cfg.mkdir(parents=True)
    # A user-level hook that would record the child session in our store if our guard failed.
    launch = f'sh "{ROOT / "hooks" / "launch.sh"}"'
    fired = tmp_path / "someone-elses-hook-fired"
    cfg.joinpath("settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": f"{launch} session_start"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": f"{launch} stop"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {fired}"}]}],
    }}))
    home.joinpath(".claude.json").write_text(json.dumps({"mcpServers": {"other": {
        "command": "sh", "args": ["-c", f"touch {fired}.mcp; sleep 3"]}}}))
    work = make_repo(tmp_path / "shop")
    tx = Transcript(tmp_path / "session.jsonl")
    tx.turn("We decided to move the queue to RabbitMQ.", "OK.")

    def respond(body):
        if "You extract durable project context" in json.dumps(body.get("system")):
            return fake_api.text(reply(decisions=[decision("The queue is RabbitMQ")]))
        return fake_api.text("unexpected")

    hooks = hook_env(data)  # uv reachable with its real cache even under the fake HOME
    uv_cache = os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv")
    with fake_api.FakeMessagesAPI(responder=respond) as api:
        for name, value in {"AGENTCTX_HOME": str(data), "HOME": str(home), "CLAUDE_CONFIG_DIR": str(cfg),
                            "PATH": hooks["PATH"], "UV_CACHE_DIR": uv_cache,
                            "ANTHROPIC_AUTH_TOKEN": "login-token", "ANTHROPIC_BASE_URL": api.base_url,
                            "AGENTCTX_CLAUDE_BIN": str(claude), "DISABLE_AUTOUPDATER": "1",
                            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "UV_OFFLINE": "1"}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.delenv("AGENTCTX_DISABLE", raising=False)
        settings.save_user(claude_login=False)
        assert extract.mode()[0] == "explicit"
        settings.save_user(claude_login=True)  # the default
        how, why = extract.mode()
        assert how == "claude_login" and "Claude Code login" in why
        result = extract.run_once("s-login", str(tx.path), str(work))
        calls = extraction_requests(api)
    assert result.status == "written" and result.mode == "claude_login", result.as_dict()
    assert len(calls) == 1 and "RabbitMQ" in json.dumps(calls[0].body["messages"])
    assert [r["title"] for r in rows(data, "SELECT title FROM records")] == ["The queue is RabbitMQ"]
    # The child session fired no agentctx hook (no session row of its own) and left no transcript.
    assert [r["session_id"] for r in rows(data, "SELECT session_id FROM sessions")] == ["s-login"]
    assert not list(cfg.glob("projects/**/*.jsonl"))
    assert not fired.exists() and not Path(f"{fired}.mcp").exists()  # nobody's hooks, no MCP server
    told = [p.read_text() for p in (data / "notices").iterdir()]
    assert len(told) == 1 and "Claude Code login" in told[0] and "--no-llm" in told[0]
    extract.run_once("s-login-2", str(tx.path), str(work))
    assert len(list((data / "notices").iterdir())) == 1  # said once
