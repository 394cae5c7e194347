"""SubagentStart briefs a subagent by its type; SubagentStop keeps what it concluded as an inferred record.
Hook scripts run as processes with JSON on stdin, as Claude Code runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx import budgets, project, project_settings, render
from agentctx.capture import explicit, transcript
from agentctx.events import subagent_stop
from agentctx.injection import briefs
from agentctx.store import db, records, sessions
from tests.support.hooks import context_of, run_hook


@pytest.fixture
def seeded(home: Path, repo: Path):
    conn = db.connect()
    proj = project.detect(str(repo))
    add = lambda **kw: records.add(conn, proj.id, **kw)  # noqa: E731
    recs = {
        "grpc": add(type="decision", title="Internal services use gRPC", body="Protobuf contracts live in /proto."),
        "cents": add(type="decision", title="Money is integer cents", body="Never floats for amounts."),
        "problem": add(type="convention", title="Errors are problem+json", body="RFC 9457 bodies for every 4xx."),
        "black": add(type="convention", title="Format Python with black", body="Line length 100."),
        "handover": add(type="handover", key="handover.current", title="Refund endpoint half done",
                        body="Next steps:\n1. wire the ledger client"),
    }
    for i in range(40):  # more than the brief can hold: the cap must cut it
        add(type="decision", title=f"Service {i} owns its own database schema number {i}",
            body="Each service migrates its schema independently; shared tables are forbidden. " * 3)
    conn.close()
    return proj, recs


def start(repo: Path, agent_type: str, session: str = "sess-sub", agent_id: str = "agent-1") -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "SubagentStart", "agent_id": agent_id,
            "agent_type": agent_type, "transcript_path": "/nonexistent.jsonl"}


def stop(repo: Path, message: str, agent_type: str = "Explore", agent_id: str = "agent-1", **extra) -> dict:
    return {"session_id": "sess-sub", "cwd": str(repo), "hook_event_name": "SubagentStop", "agent_id": agent_id,
            "agent_type": agent_type, "stop_hook_active": False, "last_assistant_message": message,
            "agent_transcript_path": "/nonexistent/agent.jsonl", **extra}


def test_explore_gets_only_the_conventions(seeded, home, repo):
    _, recs = seeded
    proc = run_hook("subagent_start", start(repo, "Explore"), home)
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc)
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    assert text.startswith(f'<{render.TAG} kind="subagent"') and text.endswith(f"</{render.TAG}>")
    assert recs["problem"]["id"] in text and recs["black"]["id"] in text
    assert recs["grpc"]["id"] not in text and recs["handover"]["id"] not in text  # no decisions, no handover
    assert budgets.estimate_tokens(text) <= budgets.SUBAGENT_TOKENS


@pytest.mark.parametrize("agent_type", ["Plan", "general-purpose", "my-plugin:reviewer"])
def test_planners_and_general_agents_get_decisions_conventions_and_the_handover(seeded, home, repo, agent_type):
    _, recs = seeded
    text = context_of(run_hook("subagent_start", start(repo, agent_type), home))
    assert "## Decisions and conventions in force" in text and "## Last session handover" in text
    assert recs["handover"]["id"] in text and text.count("- [decision] Service ") >= 3
    assert budgets.estimate_tokens(text) <= budgets.SUBAGENT_TOKENS  # most of the 44 decisions were cut at the cap
    assert len(text) < budgets.MAX_INJECTED_CHARS


def test_claude_code_helpers_get_nothing(seeded, home, repo):
    proc = run_hook("subagent_start", start(repo, "statusline-setup"), home)
    assert proc.returncode == 0 and proc.stdout == b""


def test_an_empty_store_briefs_nothing(home, repo):
    proc = run_hook("subagent_start", start(repo, "Plan"), home)
    assert proc.returncode == 0 and proc.stdout == b""


def test_the_brief_is_accounted_but_never_counts_as_seen_by_the_main_conversation(seeded, home, repo):
    proj, recs = seeded
    text = context_of(run_hook("subagent_start", start(repo, "Plan"), home))
    conn = db.connect()
    try:
        row = sessions.get(conn, "sess-sub")
        assert row["tokens_injected"] == budgets.estimate_tokens(text) and row["injections"] == 1
        events = {r[0] for r in conn.execute("SELECT event FROM injections WHERE session_id = 'sess-sub'")}
        assert events == {"SubagentStart"}
        assert sessions.injected_ids(conn, "sess-sub") == set()  # the main conversation has not seen them
        # a prompt of the main conversation may still bring the handover, and then it counts as seen there
        with db.transaction(conn):
            sessions.account(conn, "sess-sub", proj.id, "UserPromptSubmit", [recs["handover"]["id"]], 50)
        assert sessions.injected_ids(conn, "sess-sub") == {recs["handover"]["id"]}
        with db.transaction(conn):  # a later subagent brief does not take the row back
            sessions.account(conn, "sess-sub", proj.id, "SubagentStart", [recs["handover"]["id"]], 50)
        assert sessions.injected_ids(conn, "sess-sub") == {recs["handover"]["id"]}
    finally:
        conn.close()


def test_digest_switches_of_the_project_apply_to_briefs(seeded, home, repo):
    _, recs = seeded
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "config.toml").write_text("[digest]\nhandover = false\n")
    text = context_of(run_hook("subagent_start", start(repo, "Plan"), home))
    assert recs["handover"]["id"] not in text and "## Decisions and conventions in force" in text
    (repo / ".agentctx" / "config.toml").write_text("[digest]\ndecisions = false\n")
    assert run_hook("subagent_start", start(repo, "Explore"), home).stdout == b""  # conventions follow decisions


def test_sections_by_type():
    assert briefs.sections_for("Explore") == ("conventions",)
    assert briefs.sections_for("Plan") == ("decisions", "handover")
    assert briefs.sections_for("someone:custom") == ("decisions", "handover")
    assert briefs.sections_for("claude-code-guide") == ()


CONCLUSION = ("The parser lives in src/parse.py and is a hand-written state machine; the tokenizer is in "
              "src/lex.py. We decided nothing; it looks like the retry logic should move to the client.")


def test_a_subagents_conclusion_is_an_inferred_discovery(home, repo):
    proc = run_hook("subagent_stop", stop(repo, CONCLUSION), home)
    assert proc.returncode == 0 and proc.stdout == b""  # never additionalContext: it would keep the subagent going
    conn = db.connect()
    try:
        proj = project.detect(str(repo))
        rec = records.by_key(conn, proj.id, "subagent.agent-1")
        assert rec["type"] == "discovery" and rec["confidence"] == "inferred" and rec["source"] == "hook_observation"
        assert rec["title"].startswith("Explore subagent concluded: The parser lives in src/parse.py")
        assert "src/lex.py" in rec["body"] and rec["session_id"] == "sess-sub"
        # the same agent concluding again (resumed) supersedes its earlier conclusion
        run_hook("subagent_stop", stop(repo, CONCLUSION.replace("state machine", "recursive descent parser")), home)
        newer = records.by_key(conn, proj.id, "subagent.agent-1")
        assert newer["id"] != rec["id"] and "recursive descent" in newer["body"]
        assert newer["confidence"] == "inferred"
    finally:
        conn.close()


@pytest.mark.parametrize("message", ["Done.", "", "   "])
def test_no_conclusion_no_record(home, repo, message):
    assert run_hook("subagent_stop", stop(repo, message), home).returncode == 0
    conn = db.connect()
    try:
        assert records.count_all(conn) == 0
    finally:
        conn.close()


def test_capture_off_and_excluded_paths_apply_to_conclusions(home, repo):
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "config.toml").write_text('[capture]\nexclude = ["secrets/**"]\n')
    message = CONCLUSION + "\nThe API key is read from secrets/prod.env at start-up."
    run_hook("subagent_stop", stop(repo, message), home)
    conn = db.connect()
    try:
        rec = records.by_key(conn, project.detect(str(repo)).id, "subagent.agent-1")
        assert "src/parse.py" in rec["body"] and "secrets/prod.env" not in rec["body"]
    finally:
        conn.close()
    (repo / ".agentctx" / "config.toml").write_text("[capture]\nenabled = false\n")
    run_hook("subagent_stop", stop(repo, CONCLUSION, agent_id="agent-2"), home)
    conn = db.connect()
    try:
        assert records.by_key(conn, project.detect(str(repo)).id, "subagent.agent-2") is None
    finally:
        conn.close()


def test_a_background_subagents_report_is_not_the_developer_speaking(tmp_path):
    """Claude Code 2.1.332 delivers a background subagent's result as a user line (<task-notification>):
    it is tool output, so explicit capture never turns "we decided ..." in it into a stated decision."""
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "find the parser"}},
        {"type": "user", "uuid": "u2", "parentUuid": "u1", "message": {"role": "user", "content": (
            "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n<result>We decided to use "
            "the recursive descent parser from now on.</result>\n</task-notification>")}},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    entries = transcript.read(str(path)).entries
    assert [e.role for e in entries] == ["user", "tool"]
    assert entries[1].text.startswith("[subagent result: We decided to use the recursive descent parser")
    assert explicit.from_entries(entries) == []


# -- issue 19: no record from a compaction run or an acknowledgement; titles say what was found ------


@pytest.mark.parametrize("agent_type, text", [
    ("compact", "The conversation covered the refund flow, the ledger client and the retry logic in depth."),
    ("general-purpose", "<analysis>\nThe user asked for refunds. Then ...</analysis>\n<summary>1. Primary</summary>"),
    ("general-purpose", "Excellent! Pushed successfully. All done."),
])
def test_no_record_from_compaction_or_acknowledgement(agent_type, text):
    assert subagent_stop.conclusion(agent_type, text, project_settings.Settings("/tmp")) is None


def test_the_title_is_what_was_found():
    text = "Perfect! Now I have a complete picture.\n\n## Summary\nThe parser lives in src/parse.py and is called twice."
    title, _ = subagent_stop.conclusion("Explore", text, project_settings.Settings("/tmp"))
    assert title == "Explore subagent concluded: The parser lives in src/parse.py and is called twice."
    title, _ = subagent_stop.conclusion("", "Found it: the retry loop never backs off in client.py.",
                                        project_settings.Settings("/tmp"))
    assert title.startswith("Subagent concluded: Found it")
