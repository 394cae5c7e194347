"""The slash commands (commands/*.md): their frontmatter, their `!` commands run as bash runs them, and
the commands through the real Claude Code CLI in -p mode."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db, records
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.bundle import plugin_env
from tests.support.claude_cli import run_claude, run_claude_session

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("ctx-status", "ctx-search", "ctx-record", "ctx-export", "ctx-history", "ctx-sync", "ctx-ui")
CLI = "${CLAUDE_PLUGIN_ROOT}/bin/agentctx"
# Claude Code's permission check refuses a backslash before whitespace even inside a quoted heredoc (the
# command is then not run at all), so that one is left out here.
HOSTILE = """redis "broker" it's `id` $(touch /tmp/agentctx-pwned) ; rm -rf ~ | $HOME 'x\\y"""


def parse(name: str) -> tuple[dict[str, object], str]:
    text = (ROOT / "commands" / f"{name}.md").read_text()
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert match, f"{name}.md has no frontmatter"
    meta: dict[str, object] = {}
    key = None
    for line in match.group(1).splitlines():
        if line.startswith("  - ") and key:
            meta.setdefault(key, [])
            meta[key].append(line[4:].strip())  # type: ignore[union-attr]
        else:
            key, _, value = line.partition(":")
            if value.strip():
                meta[key] = value.strip().strip('"')
    return meta, match.group(2)


def injected(body: str) -> list[str]:
    """The shell commands of the `!` injections: inline !`cmd` and ```! fenced blocks."""
    fenced = re.findall(r"^```!\n(.*?)\n```$", body, re.S | re.M)
    inline = re.findall(r"(?:^|\s)!`([^`]+)`", re.sub(r"^```!\n.*?\n```$", "", body, flags=re.S | re.M))
    return fenced + inline


def test_the_commands_and_their_frontmatter():
    assert sorted(p.stem for p in (ROOT / "commands").glob("*.md")) == sorted(COMMANDS)
    for name in COMMANDS:
        meta, body = parse(name)
        assert meta.get("description") and len(str(meta["description"])) < 200, name
        assert meta.get("argument-hint"), name
        assert f"Bash({CLI}:*)" in meta["allowed-tools"], name
        commands = injected(body)
        assert commands, f"{name} runs no command"
        for command in commands:
            assert command.startswith(CLI + " "), command  # covered by the allowed-tools rule
            lines = command.splitlines()
            # A non-zero exit would abort the whole command: every injection ends in something that exits 0.
            assert lines[-1].endswith("|| true") or lines[-1] == "true", command
            assert "2>&1" in lines[0], command  # errors reach the model, not only the debug log


def run_injection(name: str, arguments: str, work: Path, data: Path) -> list[subprocess.CompletedProcess]:
    """Each `!` command of a slash command, substituted as Claude Code does and run by bash in the project."""
    out = []
    for command in injected(parse(name)[1]):
        script = command.replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT)).replace("$ARGUMENTS", arguments)
        env = {**os.environ, **plugin_env(data)}
        out.append(subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=120))
    return out


@pytest.fixture
def world(tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    work = make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    conn = db.connect()
    proj = project.detect(str(work))
    rest = records.add(conn, proj.id, type="decision", title="Services talk over REST", body="JSON bodies.")
    grpc = records.supersede(conn, proj.id, rest["id"], title="Services talk over gRPC", body="protobuf contracts",
                             rationale="latency")
    broker = records.add(conn, proj.id, type="decision", title="Redis is the broker for background jobs",
                         body="Celery workers read from Redis.")
    conn.close()
    return work, data, {"rest": rest, "grpc": grpc, "broker": broker}


def test_injected_commands_pass_arguments_as_data_and_never_fail(world, tmp_path):
    work, data, recs = world
    marker = Path("/tmp/agentctx-pwned")
    marker.unlink(missing_ok=True)
    (search,) = run_injection("ctx-search", HOSTILE, work, data)
    assert search.returncode == 0 and recs["broker"]["id"] in search.stdout
    assert not marker.exists()  # the words went through a quoted heredoc, never through the shell
    (record,) = run_injection("ctx-record", "decision: the broker is now RabbitMQ", work, data)
    assert record.returncode == 0 and recs["broker"]["id"] in record.stdout
    (history,) = run_injection("ctx-history", "NOPE", work, data)
    assert history.returncode == 0 and history.stdout.startswith("Error: NOPE is not a record id")
    (chain,) = run_injection("ctx-history", recs["grpc"]["id"], work, data)
    assert chain.stdout.index(recs["rest"]["id"]) < chain.stdout.index(recs["grpc"]["id"])
    (status,) = run_injection("ctx-status", "--json", work, data)
    assert json.loads(status.stdout)["project"]["name"] == "shop"
    target = tmp_path / "out.md"
    (export,) = run_injection("ctx-export", f"-o {target}", work, data)
    assert export.returncode == 0 and "Services talk over gRPC" in target.read_text()
    (bad,) = run_injection("ctx-export", "--no-such-option", work, data)
    assert bad.returncode == 0 and "Error: No such option '--no-such-option'" in bad.stdout


def first_prompt(api: fake_api.FakeMessagesAPI) -> str:
    """The user turn of the first model request: what the slash command expanded to."""
    message = api.message_requests[0].body["messages"][0]
    return "\n".join(b.get("text", "") for b in message["content"] if isinstance(b, dict))


@pytest.mark.claude
def test_status_command_output_reaches_the_model(claude, bundle, world, tmp_path):  # noqa: F811
    work, data, recs = world
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Two decisions."))
        run = run_claude(work, tmp_path / "home", "/agentctx:ctx-status", base_url=api.base_url, plugin_dir=bundle,
                         extra_env=plugin_env(data)).check()
        prompt = first_prompt(api)
    assert run.json["result"] == "Two decisions." and run.json["permission_denials"] == []
    assert "<command-name>/agentctx:ctx-status</command-name>" in prompt
    assert "project shop" in prompt and re.search(r"decision\s+2 current\s+1 superseded", prompt), prompt[-1500:]
    assert "Give the user this status" in prompt


@pytest.mark.claude
def test_search_command_with_awkward_arguments(claude, bundle, world, tmp_path):  # noqa: F811
    work, data, recs = world
    Path("/tmp/agentctx-pwned").unlink(missing_ok=True)
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Found it."))
        run_claude(work, tmp_path / "home", f"/agentctx:ctx-search {HOSTILE}", base_url=api.base_url,
                   plugin_dir=bundle, extra_env=plugin_env(data)).check()
        prompt = first_prompt(api)
    assert recs["broker"]["id"] in prompt and "Redis is the broker for background jobs" in prompt
    assert recs["rest"]["id"] not in prompt  # superseded
    assert not Path("/tmp/agentctx-pwned").exists()


@pytest.mark.claude
def test_history_command_error_reaches_the_model_instead_of_aborting(claude, bundle, world, tmp_path):  # noqa: F811
    work, data, recs = world
    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("That is not an id."))
        run = run_claude(work, tmp_path / "home", "/agentctx:ctx-history 01ZZZZZZZZZZ", base_url=api.base_url,
                         plugin_dir=bundle, extra_env=plugin_env(data)).check()
        prompt = first_prompt(api)
    assert run.json["result"] == "That is not an id."
    assert "Error: no record 01ZZZZZZZZZZ" in prompt


@pytest.mark.claude
def test_record_command_stores_through_the_mcp_tool(claude, bundle, world, tmp_path):  # noqa: F811
    """The command's allowed-tools pre-approve ctx_supersede for its turn: no --allowedTools needed."""
    work, data, recs = world
    tool = "mcp__plugin_agentctx_agentctx__ctx_supersede"
    bodies: list[dict] = []

    def model(body):
        bodies.append(body)
        if fake_api.tool_results(body):
            return fake_api.text("Recorded.")
        assert recs["broker"]["id"] in "\n".join(fake_api.all_text(body))  # the command showed the old record
        return fake_api.tool_use(tool, {"old_id": recs["broker"]["id"], "new_body": "RabbitMQ is the broker.",
                                        "rationale": "Redis lost tasks on failover.",
                                        "new_title": "RabbitMQ is the broker for background jobs"})

    with fake_api.FakeMessagesAPI(responder=model) as api:
        # sent once the MCP server is connected, as a user's session would (see run_claude_session)
        run = run_claude_session(work, tmp_path / "home", "/agentctx:ctx-record decision: the broker is RabbitMQ "
                                 "now, Redis lost tasks", base_url=api.base_url, plugin_dir=bundle,
                                 extra_env=plugin_env(data), timeout=180).check()
    assert run.result["permission_denials"] == [] and run.result["result"] == "Recorded."
    result = fake_api.tool_results(bodies[-1])[0]
    assert not result.get("is_error") and "it supersedes " + recs["broker"]["id"] in json.dumps(result)
    conn = db.connect()
    try:
        current = conn.execute(
            "SELECT title, source FROM records WHERE superseded_at IS NULL AND type = 'decision' ORDER BY title"
        ).fetchall()
    finally:
        conn.close()
    assert [tuple(r) for r in current] == [("RabbitMQ is the broker for background jobs", "mcp_tool"),
                                           ("Services talk over gRPC", "cli")]
