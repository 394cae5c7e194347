"""The first session after an install, through the real Claude Code CLI, on a machine where uv has nothing yet.

The plugin is a new copy, uv's cache is empty and uv is offline (``UV_OFFLINE``), so no script environment can
be made: the hooks cannot run, but the MCP server starts on the standard library. In plain ``claude -p`` (which
waits only ~2 s for MCP servers) the agentctx tools are in the very first model request, ctx_search answers
from the store, and SessionStart's one line says why uv could not install and how to fix it.
"""

from __future__ import annotations

import json

import pytest

from agentctx import project
from agentctx.store import db, records
from tests.conftest import make_repo
from tests.support import bundle, fake_api
from tests.support.claude_cli import run_claude

pytestmark = pytest.mark.claude
SEARCH = "mcp__plugin_agentctx_agentctx__ctx_search"


def test_the_first_session_has_the_tools_and_says_why_uv_could_not_install(claude, tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    work = make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    conn = db.connect()  # a store from an earlier install (or another machine's sync): no packages needed to read it
    rec = records.add(conn, project.detect(str(work)).id, type="decision", title="Payments go through Adyen",
                      body="Stripe was dropped for EU payouts.")
    conn.close()
    plugin = bundle.copy_bundle(bundle.test_cache() / "bundle" / "first-session")
    bodies: list[dict] = []

    def model(body):
        bodies.append(body)
        if not any(m.get("role") == "assistant" for m in body["messages"]):
            return fake_api.tool_use(SEARCH, {"query": "payments provider"})
        return fake_api.text("Adyen.")

    env = {**bundle.plugin_env(data), "UV_CACHE_DIR": str(tmp_path / "empty-uv-cache"), "UV_OFFLINE": "1",
           "AGENTCTX_CACHE_DIR": str(tmp_path / "cache"), "ENABLE_TOOL_SEARCH": "false"}
    with fake_api.FakeMessagesAPI(responder=model) as api:
        run = run_claude(work, tmp_path / "home", "Which payment provider do we use?", base_url=api.base_url,
                         plugin_dir=plugin, extra_env=env, output_format="stream-json",
                         extra_args=["--verbose", "--allowedTools", SEARCH], timeout=180).check()
    assert SEARCH in {t.get("name") for t in bodies[0].get("tools") or []}  # in the very first request
    found = json.dumps(fake_api.tool_results(bodies[1]), ensure_ascii=False)
    assert rec["id"] in found and "Payments go through Adyen" in found
    assert run.result["result"] == "Adyen."

    said = [line for line in run.stdout.splitlines() if "cannot install its Python packages" in line]
    assert said, run.stdout[-3000:]  # SessionStart's systemMessage reached the session's output
    assert "uv is offline" in said[0] and "UV_OFFLINE" in said[0]
    assert "adds no context (its MCP tools work" in said[0]
    assert 'MCP server "plugin:agentctx:agentctx": Successfully connected' in run.debug_log
