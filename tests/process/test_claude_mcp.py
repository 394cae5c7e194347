"""The MCP tools through the real Claude Code CLI: a scripted model calls ctx_search, then ctx_get.

Claude Code starts the plugin's MCP server itself (``mcpServers`` in plugin.json), in the background. The
prompt is sent once ``/mcp`` (the ``mcp_status`` control request) shows the server connected, as a user or an
SDK client waits for it (``run_claude_session``): ``-p`` alone waits only ~2 s, so a server that starts slower
on a busy machine would be missing from the first request. With tool search on (the default) the tools are
deferred: the model may load them with ``ToolSearch`` first or call them directly; with
``ENABLE_TOOL_SEARCH=false`` their schemas are in ``tools`` from the first request.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db, records
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.bundle import plugin_env
from tests.support.claude_cli import run_claude_session

pytestmark = pytest.mark.claude
ROOT = Path(__file__).resolve().parents[2]
PREFIX = "mcp__plugin_agentctx_agentctx__"
SEARCH, GET = PREFIX + "ctx_search", PREFIX + "ctx_get"
ID = re.compile(r"\b0[0-9A-HJKMNP-TV-Z]{25}\b")


@pytest.fixture
def world(tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    work = make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    conn = db.connect()
    proj = project.detect(str(work))
    celery = records.add(conn, proj.id, type="decision", title="Background jobs run on Celery with Redis",
                         body="Workers live in shop/tasks.")
    recs = {
        "dramatiq": records.supersede(conn, proj.id, celery["id"], title="Background jobs run on Dramatiq",
                                      body="RabbitMQ is the broker; workers live in shop/tasks.",
                                      rationale="Celery's Redis broker lost tasks on failover."),
        "celery": celery,
        "retry": records.add(conn, proj.id, type="convention", title="Background jobs retry three times",
                             body="Every actor sets max_retries=3 and an exponential backoff."),
    }
    conn.close()
    return work, data, recs


def tool_results_text(body: dict) -> str:
    return json.dumps(fake_api.tool_results(body), ensure_ascii=False)


class Model:
    """A scripted model: (ToolSearch,) ctx_search, then ctx_get with the ids the search returned, then an answer."""

    def __init__(self, tool_search: bool):
        self.steps = ["toolsearch", "search", "get", "answer"] if tool_search else ["search", "get", "answer"]
        self.bodies: dict[str, dict] = {}

    def __call__(self, body: dict):
        done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        step = self.steps[min(done, len(self.steps) - 1)]
        self.bodies[step] = body
        if step == "toolsearch":
            return fake_api.tool_use("ToolSearch", {"query": f"select:{SEARCH},{GET}"})
        if step == "search":
            return fake_api.tool_use(SEARCH, {"query": "background jobs workers broker"})
        if step == "get":
            ids = ID.findall(tool_results_text(body))[:2]
            return fake_api.tool_use(GET, {"ids": ids})
        return fake_api.text("Background jobs run on Dramatiq.")


@pytest.mark.parametrize("mode", ["toolsearch-select", "toolsearch-direct", "toolsearch-off"])
def test_search_then_get_through_claude_code(claude, bundle, world, tmp_path, mode):
    work, data, recs = world
    model = Model(tool_search=mode == "toolsearch-select")
    extra = {"ENABLE_TOOL_SEARCH": "false"} if mode == "toolsearch-off" else {}
    with fake_api.FakeMessagesAPI(responder=model) as api:
        run = run_claude_session(work, tmp_path / "home", "How do background jobs work here?",
                                 base_url=api.base_url, plugin_dir=bundle, extra_env=plugin_env(data, **extra),
                                 extra_args=["--allowedTools", f"{SEARCH},{GET}"], timeout=180).check()
    server = next(s for s in run.mcp_servers if s["name"] == "plugin:agentctx:agentctx")
    assert server["status"] == "connected" and {"ctx_search", "ctx_get"} <= {t["name"] for t in server["tools"]}
    assert run.result["permission_denials"] == []
    assert run.result["result"] == "Background jobs run on Dramatiq."

    first = model.bodies[model.steps[0]]
    tool_names = {t.get("name") for t in first.get("tools") or []}
    system = "\n".join(fake_api.all_text(first))
    assert "agentctx is this project's long-term memory" in system  # the server instructions
    if mode == "toolsearch-off":
        assert {SEARCH, GET} <= tool_names
        schema = next(t for t in first["tools"] if t["name"] == SEARCH)
        assert "compact index" in schema["description"] and schema["input_schema"]["required"] == ["query"]
    else:
        assert "ToolSearch" in tool_names and SEARCH not in tool_names  # deferred until loaded
        assert SEARCH in system
    if mode == "toolsearch-select":
        assert SEARCH in {t.get("name") for t in model.bodies["search"].get("tools") or []}

    found = tool_results_text(model.bodies["get"])  # the ctx_search result, as the model received it
    assert recs["dramatiq"]["id"] in found and "Background jobs run on Dramatiq" in found
    assert recs["retry"]["id"] in found
    assert recs["celery"]["id"] not in found  # superseded: not in the current index
    assert '{\\"result\\"' not in found  # plain text, not structured output
    result = fake_api.tool_results(model.bodies["answer"])[0]
    full = json.dumps(result, ensure_ascii=False)
    assert not result.get("is_error")
    assert "RabbitMQ is the broker" in full and "Why it changed: Celery's Redis broker lost tasks" in full
    assert recs["celery"]["id"] in full  # ctx_get shows what the decision superseded


def test_bad_call_is_a_tool_error_and_the_server_keeps_serving(claude, bundle, world, tmp_path):
    work, data, recs = world
    bodies: list[dict] = []

    def model(body):
        bodies.append(body)
        done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        if done == 0:
            return fake_api.tool_use(GET, {"ids": ["01ZZZZZZZZZZZZZZZZZZZZZZZZ"]})
        if done == 1:
            return fake_api.tool_use(SEARCH, {"query": "retry backoff"})
        return fake_api.text("ok")

    with fake_api.FakeMessagesAPI(responder=model) as api:
        run_claude_session(work, tmp_path / "home", "look it up", base_url=api.base_url, plugin_dir=bundle,
                           extra_env=plugin_env(data, ENABLE_TOOL_SEARCH="false"),
                           extra_args=["--allowedTools", f"{SEARCH},{GET}"], timeout=180).check()
    error = fake_api.tool_results(bodies[1])[0]
    assert error.get("is_error") is True
    assert "no record 01ZZZZZZZZZZZZZZZZZZZZZZZZ in this project" in json.dumps(error)
    assert recs["retry"]["id"] in tool_results_text(bodies[2])
