"""Through the real Claude Code CLI (2.1.332) against a fake Messages API: a scripted Agent (Task) call gets its
brief from SubagentStart and its conclusion is kept by SubagentStop; after ``cd`` into another project the MCP
tools answer for that project."""

from __future__ import annotations

import json
import re

import pytest

from agentctx import budgets, project
from agentctx.store import db, records, sessions
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.bundle import plugin_env
from tests.support.claude_cli import run_claude, run_claude_session

pytestmark = pytest.mark.claude
SEARCH = "mcp__plugin_agentctx_agentctx__ctx_search"
TASK_MARK = "SUBAGENT-TASK-7Q"
CONCLUSION = ("Conclusion: invoices are rendered by shop/invoices/pdf.py with WeasyPrint; the retry queue in "
              "shop/tasks.py re-sends failed e-mails three times.")
FENCE = re.compile(r'<agentctx-context kind="subagent".*?</agentctx-context>', re.DOTALL)


@pytest.fixture
def shop(tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    work = make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    conn = db.connect()
    proj = project.detect(str(work))
    recs = {
        "decision": records.add(conn, proj.id, type="decision", title="Invoices are PDFs rendered with WeasyPrint",
                                body="No headless browser on the servers."),
        "convention": records.add(conn, proj.id, type="convention", title="Background jobs retry three times",
                                  body="Every actor sets max_retries=3."),
        "handover": records.add(conn, proj.id, type="handover", key="handover.current",
                                title="Invoice e-mails half done", body="Next steps:\n1. wire the retry queue"),
    }
    conn.close()
    return work, data, proj, recs


def first_user_text(body: dict) -> str:
    return json.dumps((body.get("messages") or [{}])[0], ensure_ascii=False)


@pytest.mark.parametrize("agent_type", ["Plan", "Explore"])
def test_a_task_subagent_is_briefed_by_type_and_its_conclusion_kept(claude, bundle, shop, tmp_path, agent_type):
    work, data, proj, recs = shop
    main: list[dict] = []
    sub: list[dict] = []

    def model(body: dict):
        if TASK_MARK in first_user_text(body):  # the subagent's own conversation
            sub.append(body)
            return fake_api.text(CONCLUSION)
        main.append(body)
        if not any(m.get("role") == "assistant" for m in body["messages"]):
            return fake_api.tool_use("Agent", {"description": "look into invoices", "subagent_type": agent_type,
                                               "prompt": f"{TASK_MARK} Find how invoices are rendered and sent."})
        return fake_api.text("done")

    with fake_api.FakeMessagesAPI(responder=model) as api:
        run_claude(work, tmp_path / "home", "How are invoices produced?", base_url=api.base_url, plugin_dir=bundle,
                   extra_env=plugin_env(data), extra_args=["--allowedTools", "Agent"], timeout=180).check()
    assert sub, "the subagent never called the model"
    sub_text = "\n".join(fake_api.all_text(sub[0]))
    assert "SubagentStart hook additional context" in sub_text
    briefs = FENCE.findall(sub_text)
    assert len(briefs) == 1
    brief = briefs[0]
    assert budgets.estimate_tokens(brief) <= budgets.SUBAGENT_TOKENS
    assert recs["convention"]["id"] in brief
    if agent_type == "Plan":
        assert recs["decision"]["id"] in brief and recs["handover"]["id"] in brief
    else:  # a read-only explorer: the conventions only
        assert recs["decision"]["id"] not in brief and recs["handover"]["id"] not in brief
    assert not any('kind="subagent"' in "\n".join(fake_api.all_text(b)) for b in main)  # never into the main thread

    conn = db.connect()
    try:
        found = [r for r in records.current(conn, proj.id, types=["discovery"]) if (r["key"] or "").startswith("subagent.")]
        assert len(found) == 1
        rec = found[0]
        assert rec["confidence"] == "inferred" and rec["source"] == "hook_observation"
        assert rec["title"].startswith(f"{agent_type} subagent concluded: Conclusion: invoices are rendered")
        sid = rec["session_id"]
        row = sessions.get(conn, sid)
        # the brief is accounted to the session (SessionEnd dropped the per-record dedup rows since)
        digest_tokens = budgets.estimate_tokens("\n".join(re.findall(r'<agentctx-context kind="session-start".*?'
                                                                      r'</agentctx-context>', "\n".join(
                                                                          fake_api.all_text(main[0])), re.DOTALL)))
        assert row["tokens_injected"] >= digest_tokens + budgets.estimate_tokens(brief) and row["injections"] >= 2
    finally:
        conn.close()


def test_after_cd_into_another_project_ctx_search_answers_for_it(claude, bundle, tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    a = make_repo(tmp_path / "alpha", remote="https://github.com/acme/alpha.git")
    b = make_repo(tmp_path / "beta", remote="https://github.com/acme/beta.git")
    conn = db.connect()
    ra = records.add(conn, project.detect(str(a)).id, type="decision", title="Alpha stores invoices in PostgreSQL",
                     body="One schema per tenant.")
    rb = records.add(conn, project.detect(str(b)).id, type="decision", title="Beta stores invoices in DynamoDB",
                     body="One table, tenant id as the partition key.")
    conn.close()
    bodies: dict[str, dict] = {}

    def model(body: dict):
        done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        step = ["cd", "search", "answer"][min(done, 2)]
        bodies[step] = body
        if step == "cd":
            return fake_api.tool_use("Bash", {"command": f"cd {b}", "description": "go to beta"})
        if step == "search":
            return fake_api.tool_use(SEARCH, {"query": "invoices stored"})
        return fake_api.text("ok")

    with fake_api.FakeMessagesAPI(responder=model) as api:
        # sent once the MCP server is connected, as a user's session would (see run_claude_session)
        run_claude_session(a, tmp_path / "home", "Where does beta keep invoices?", base_url=api.base_url,
                           plugin_dir=bundle, extra_env=plugin_env(data, ENABLE_TOOL_SEARCH="false"),
                           extra_args=["--allowedTools", f"Bash,{SEARCH}", "--add-dir", str(b)], timeout=180).check()
    result = json.dumps(fake_api.tool_results(bodies["answer"]), ensure_ascii=False)
    assert rb["id"] in result and "project beta" in result
    assert ra["id"] not in result
