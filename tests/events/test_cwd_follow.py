"""The session's current project follows ``cd``: the CwdChanged / PostToolUse(Bash cd) hook stores the folder on
the session row (hooks as processes), and the MCP tools answer for that folder's project on every call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db, records, sessions
from agentctx.surfaces.mcp_tools import Service
from tests.conftest import make_repo
from tests.support.hooks import run_hook


@pytest.fixture
def two(home: Path, tmp_path: Path):
    a = make_repo(tmp_path / "alpha", remote="https://github.com/acme/alpha.git")
    b = make_repo(tmp_path / "beta", remote="https://github.com/acme/beta.git")
    conn = db.connect()
    pa, pb = project.detect(str(a)), project.detect(str(b))
    ra = records.add(conn, pa.id, type="decision", title="Alpha stores invoices in PostgreSQL", body="")
    rb = records.add(conn, pb.id, type="decision", title="Beta stores invoices in DynamoDB", body="")
    conn.close()
    return (a, pa, ra), (b, pb, rb)


def current(sid: str) -> tuple[str | None, str | None]:
    conn = db.connect()
    try:
        row = sessions.get(conn, sid)
        return (row["current_cwd"], row["current_project_id"]) if row else (None, None)
    finally:
        conn.close()


def test_session_start_sets_the_folder_and_cwd_changed_moves_it(two, home):
    (a, pa, _), (b, pb, _) = two
    run_hook("session_start", {"session_id": "s1", "cwd": str(a), "hook_event_name": "SessionStart",
                               "source": "startup"}, home)
    assert current("s1") == (str(a), pa.id)
    proc = run_hook("cwd_changed", {"session_id": "s1", "cwd": str(b), "hook_event_name": "CwdChanged",
                                    "old_cwd": str(a), "new_cwd": str(b)}, home)
    assert proc.returncode == 0
    assert current("s1") == (str(b), pb.id)
    message = json.loads(proc.stdout)["systemMessage"]
    assert "project beta" in message and "1 current records" in message
    # a cd inside the same project changes the folder, says nothing
    (b / "src").mkdir()
    proc = run_hook("cwd_changed", {"session_id": "s1", "cwd": str(b / "src"), "hook_event_name": "CwdChanged",
                                    "old_cwd": str(b), "new_cwd": str(b / "src")}, home)
    assert proc.stdout == b"" and current("s1") == (str(b / "src"), pb.id)


def test_a_bash_cd_reported_by_post_tool_use_moves_it_too(two, home):
    (a, pa, _), (b, pb, _) = two
    payload = {"session_id": "s2", "cwd": str(b), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": f"cd {b} && git status"},
               "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}
    proc = run_hook("cwd_changed", payload, home)
    assert proc.returncode == 0 and current("s2") == (str(b), pb.id)


def test_the_mcp_tools_answer_for_the_sessions_current_project(two, home, monkeypatch):
    (a, pa, ra), (b, pb, rb) = two
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s3")
    service = Service(str(a))
    try:
        found = service.search("invoices stored")
        assert ra["id"] in found and rb["id"] not in found and "project alpha" in found
        conn = db.connect()
        with db.transaction(conn):
            sessions.follow(conn, "s3", pb.id, str(b))
        conn.close()
        found = service.search("invoices stored")
        assert rb["id"] in found and ra["id"] not in found and "project beta" in found
        written = service.record("decision", "Beta retries DynamoDB writes three times", "Throttling.")
        conn = db.connect()
        try:
            rid = written.split()[1]
            assert records.get(conn, rid, pb.id)["project_id"] == pb.id  # ctx_record writes to the current project
            with db.transaction(conn):
                sessions.follow(conn, "s3", pa.id, str(a))
        finally:
            conn.close()
        assert ra["id"] in service.search("invoices stored")
    finally:
        service.close()


def test_without_a_session_the_server_keeps_its_own_project(two, home, monkeypatch):
    (a, pa, ra), (b, pb, rb) = two
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    service = Service(str(a))
    try:
        assert ra["id"] in service.search("invoices stored")
    finally:
        service.close()
