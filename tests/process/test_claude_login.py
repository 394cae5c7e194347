"""Extraction through the person's Claude Code login (``vialogin``), with the real pinned CLI as the
child against the fake Messages API, the hooks and the CLI as separate processes.

The person's Claude Code is set up the way a subscriber's is: an OAuth credentials file, a hook and an
MCP server in their user settings, and another plugin (with hooks and an MCP server) installed from a
marketplace. The child ``claude -p`` must fire none of them and leave no session file; a plain
``claude -p`` in the same home fires them all (so the test can fail).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.capture.test_extract import Transcript, decision, reply
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.hooks import ROOT, hook_env, run_hook

pytestmark = pytest.mark.claude
SYSTEM_MARK = "You extract durable project context"
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")


def _cli_env(home: Path, api: fake_api.FakeMessagesAPI) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb", "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"), "TMPDIR": str(home / "tmp"),
            "CLAUDE_CODE_TMPDIR": str(home / "tmp"), "ANTHROPIC_BASE_URL": api.base_url, "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


def person(tmp_path: Path, claude: Path, api: fake_api.FakeMessagesAPI, *, signed_in: bool = True) -> dict:
    """A home with Claude Code set up as a subscriber has it; ``fired`` collects what would run."""
    home, fired = tmp_path / "home", tmp_path / "fired"
    cfg = home / ".claude"
    for folder in (cfg, home / "tmp", fired):
        folder.mkdir(parents=True)
    if signed_in:
        cfg.joinpath(".credentials.json").write_text(json.dumps({"claudeAiOauth": {
            "accessToken": "sk-ant-oat01-person", "refreshToken": "sk-ant-ort01-person",
            "expiresAt": int(time.time() * 1000) + 30 * 86400_000, "scopes": ["user:inference", "user:profile"],
            "subscriptionType": "pro"}}))
    market = tmp_path / "market"
    plugin = market / "other"
    for folder in (market / ".claude-plugin", plugin / ".claude-plugin", plugin / "hooks"):
        folder.mkdir(parents=True)
    market.joinpath(".claude-plugin", "marketplace.json").write_text(json.dumps({
        "name": "elsewhere", "owner": {"name": "someone"},
        "plugins": [{"name": "other", "source": "./other", "description": "someone else's plugin"}]}))
    plugin.joinpath(".claude-plugin", "plugin.json").write_text(json.dumps(
        {"name": "other", "version": "1.0.0", "description": "someone else's plugin"}))
    plugin.joinpath("hooks", "hooks.json").write_text(json.dumps({"hooks": {
        ev: [{"hooks": [{"type": "command", "command": f"touch {fired}/plugin-{ev}"}]}] for ev in EVENTS}}))
    plugin.joinpath(".mcp.json").write_text(json.dumps({"mcpServers": {
        "plug": {"command": "sh", "args": ["-c", f"touch {fired}/plugin-mcp; sleep 5"]}}}))
    env = _cli_env(home, api)
    for args in (["plugin", "marketplace", "add", str(market)], ["plugin", "install", "other@elsewhere"]):
        done = subprocess.run([str(claude), *args], env=env, capture_output=True, text=True, cwd=tmp_path,
                              stdin=subprocess.DEVNULL, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    settings = cfg / "settings.json"
    current = json.loads(settings.read_text()) if settings.exists() else {}
    assert current.get("enabledPlugins"), current  # the plugin is installed and on
    current["hooks"] = {ev: [{"hooks": [{"type": "command", "command": f"touch {fired}/user-{ev}"}]}] for ev in EVENTS}
    settings.write_text(json.dumps(current))
    user_mcp = {"mcpServers": {"mine": {"command": "sh", "args": ["-c", f"touch {fired}/user-mcp; sleep 5"]}}}
    for file in (home / ".claude.json", cfg / ".claude.json"):  # wherever this CLI reads the user's servers
        known = json.loads(file.read_text()) if file.exists() else {}
        file.write_text(json.dumps({**known, **user_mcp}))
    return {"home": home, "cfg": cfg, "fired": fired, "env": env}


def agentctx_env(data: Path, who: dict, api: fake_api.FakeMessagesAPI, claude: Path | str) -> dict[str, str]:
    env = hook_env(data, HOME=str(who["home"]), CLAUDE_CONFIG_DIR=str(who["cfg"]), ANTHROPIC_BASE_URL=api.base_url,
                   AGENTCTX_CLAUDE_BIN=str(claude), AGENTCTX_LLM="1", AGENTCTX_EXTRACT_MIN_TOKENS="0",
                   DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                   UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv"))
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("AGENTCTX_DISABLE", None)
    return env


def agentctx(env: dict, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["uv", "run", "--quiet", "agentctx", "--project", str(work), *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)


def session_start(data: Path, env: dict, work: Path, sid: str) -> dict:
    done = run_hook("session_start", {"session_id": sid, "transcript_path": "", "cwd": str(work),
                                      "hook_event_name": "SessionStart", "source": "startup"}, data, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def respond(body: dict):
    if SYSTEM_MARK in json.dumps(body.get("system")):
        return fake_api.text(reply(decisions=[decision("The queue is RabbitMQ")]))
    return fake_api.text("plain answer")


def test_the_login_child_fires_nothing_of_anyones_and_keeps_no_session(claude, tmp_path):
    data = tmp_path / "data"
    work = make_repo(tmp_path / "shop")
    tx = Transcript(tmp_path / "session.jsonl")
    tx.turn("We decided to move the queue to RabbitMQ.", "OK, RabbitMQ it is.")
    with fake_api.FakeMessagesAPI(responder=respond) as api:
        who = person(tmp_path, claude, api)
        env = agentctx_env(data, who, api, claude)

        # The first SessionStart tells the person, in the line they see; the next one does not.
        first = session_start(data, env, work, "s-1")
        told = first.get("systemMessage", "")
        assert "Claude Code login" in told and "agentctx config --no-llm" in told and "$2.00 a day" in told, first
        assert "Claude Code login" not in first["hookSpecificOutput"]["additionalContext"]
        assert "Claude Code login" not in session_start(data, env, work, "s-2").get("systemMessage", "")

        done = agentctx(env, work, "extract", "--session-id", "s-1", "--transcript", str(tx.path), "--json")
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)[0]  # the run; a final flush may follow
        calls = [r for r in api.message_requests if SYSTEM_MARK in json.dumps(r.body.get("system"))]
        status = json.loads(agentctx(env, work, "status", "--json").stdout)

        assert result["status"] == "written" and result["mode"] == "claude_login", result
        assert len(calls) == 1 and calls[0].body["model"].startswith("claude-haiku-4-5")
        assert calls[0].headers.get("authorization") == "Bearer sk-ant-oat01-person"  # the person's own login
        assert calls[0].body.get("tools", []) == []
        # Nobody's hooks fired, no MCP server started, no session file was written.
        assert sorted(p.name for p in who["fired"].iterdir()) == []
        assert not [p for p in who["cfg"].glob("projects/**/*") if p.is_file()]
        # The path, why, and the spend against the cap (priced as Haiku 4.5).
        assert status["extraction"]["mode"] == "claude_login" and "Claude Code login" in status["extraction"]["why"]
        assert status["extraction"]["cost_usd"] > 0 and status["spending"]["today_usd"] > 0
        assert "Claude Code login" not in session_start(data, env, work, "s-3").get("systemMessage", "")  # once

        # The spending cap covers it: with the session's cap reached, the next turn is the no-model path.
        assert agentctx(env, work, "config", "--session-cap", "0.000001").returncode == 0
        tx.turn("Let's go with Postgres for the ledger.", "OK.")
        capped = json.loads(agentctx(env, work, "extract", "--session-id", "s-1", "--transcript", str(tx.path),
                                     "--json").stdout)[0]
        assert capped["mode"] == "explicit" and any("spending cap reached" in n for n in capped["notes"]), capped
        assert len([r for r in api.message_requests if SYSTEM_MARK in json.dumps(r.body.get("system"))]) == 1

        # The same home with a plain `claude -p` fires them all: what the isolation flags keep out.
        plain = subprocess.run([str(claude), "-p", "hi", "--output-format", "json"], env=who["env"], text=True,
                               capture_output=True, cwd=work, stdin=subprocess.DEVNULL, timeout=120)
        assert plain.returncode == 0, plain.stdout + plain.stderr
    fired = {p.name for p in who["fired"].iterdir()}
    assert {"user-SessionStart", "user-Stop", "plugin-SessionStart", "plugin-Stop", "user-mcp", "plugin-mcp"} <= fired
    assert [p for p in who["cfg"].glob("projects/**/*.jsonl")]


def log_lines(data: Path, needle: str) -> list[str]:
    log = data / "logs" / "agentctx.log"
    return [line for line in (log.read_text().splitlines() if log.exists() else []) if needle in line]


@pytest.mark.parametrize("case", ["not-logged-in", "no-claude"])
def test_without_a_login_it_is_the_no_model_path_said_once(claude, tmp_path, case):
    data = tmp_path / "data"
    work = make_repo(tmp_path / "shop")
    with fake_api.FakeMessagesAPI(responder=respond) as api:
        who = person(tmp_path, claude, api, signed_in=False)
        env = agentctx_env(data, who, api, claude if case == "not-logged-in" else tmp_path / "no" / "claude")
        runs = [json.loads(agentctx(env, work, "status", "--json").stdout)["extraction"] for _ in range(2)]
        shown = session_start(data, env, work, "s-1")
    needle = "is not logged in" if case == "not-logged-in" else "no claude found"
    assert all(r["mode"] == "explicit" and needle in r["why"] and "no-model path" in r["why"] for r in runs), runs
    assert len(log_lines(data, needle)) == 1  # said once, however often asked
    assert "Claude Code login" not in shown.get("systemMessage", "")
    assert not [r for r in api.message_requests if SYSTEM_MARK in json.dumps(r.body.get("system"))]


def test_a_refused_login_falls_back_to_the_no_model_path(claude, tmp_path):
    """A credentials file whose login the API refuses (401): that run fails, the next is the no-model path."""
    data = tmp_path / "data"
    work = make_repo(tmp_path / "shop")
    tx = Transcript(tmp_path / "session.jsonl")
    tx.turn("We decided to move the queue to RabbitMQ.", "OK.")
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.error(401)) as api:
        who = person(tmp_path, claude, api)
        env = agentctx_env(data, who, api, claude)
        assert json.loads(agentctx(env, work, "status", "--json").stdout)["extraction"]["mode"] == "claude_login"
        runs = [json.loads(agentctx(env, work, "extract", "--session-id", "s-1", "--transcript", str(tx.path),
                                    "--json").stdout)[0] for _ in range(2)]
        after = json.loads(agentctx(env, work, "status", "--json").stdout)["extraction"]
    assert runs[0]["status"] == "failed" and runs[0]["mode"] == "claude_login" and "refused" in runs[0]["error"], runs[0]
    assert runs[1]["mode"] == "explicit" and runs[1]["status"] == "written", runs[1]
    assert after["mode"] == "explicit" and "refused" in after["why"] and "401" in after["why"]


def test_a_rate_limited_login_gives_up_at_once_and_rests(claude, tmp_path):
    """A 429 from the subscription (which the person's own session shares): the child stops after one retry
    (Claude Code's default is 10, minutes of backoff, each spending the limit), the next runs take the no-model
    path while the login path rests, and it comes back after the rest."""
    data = tmp_path / "data"
    work = make_repo(tmp_path / "shop")
    tx = Transcript(tmp_path / "session.jsonl")
    tx.turn("We decided to move the queue to RabbitMQ.", "OK.")
    limited = fake_api.error(429, headers={"retry-after": "1"})
    with fake_api.FakeMessagesAPI(responder=lambda body: limited) as api:
        who = person(tmp_path, claude, api)
        env = agentctx_env(data, who, api, claude)
        runs = [json.loads(agentctx(env, work, "extract", "--session-id", "s-1", "--transcript", str(tx.path),
                                    "--json").stdout)[0] for _ in range(2)]
        asked = len([r for r in api.message_requests if SYSTEM_MARK in json.dumps(r.body.get("system"))])
        resting = json.loads(agentctx(env, work, "status", "--json").stdout)["extraction"]
        state = data / "login.json"
        saved = json.loads(state.read_text())
        saved["limited"]["at"] -= 3600  # the rest is over
        state.write_text(json.dumps(saved))
        back = json.loads(agentctx(env, work, "status", "--json").stdout)["extraction"]
    assert runs[0]["status"] == "failed" and runs[0]["mode"] == "claude_login" and "rate-limited" in runs[0]["error"]
    assert asked == 2  # the request and one retry, then nothing more
    assert runs[1]["mode"] == "explicit" and runs[1]["status"] == "written", runs[1]
    assert resting["mode"] == "explicit" and "rate-limited" in resting["why"] and "429" in resting["why"]
    assert back["mode"] == "claude_login", back
