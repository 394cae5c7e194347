"""A full-text index whose rows were overwritten with random bytes (SQLite's own integrity check passes):
FTS5's integrity check finds it, the index is rebuilt from the records wherever it is met (a search in
the CLI, the prompt hook or MCP, the consolidation pass), the next SessionStart says so, and no
consolidation step failing makes the later steps skip."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agentctx import clock, project
from agentctx.consolidation import consolidate
from agentctx.store import db, integrity, projects, records
from agentctx.surfaces.mcp_tools import Service
from tests.support.cli import agentctx
from tests.support.damage import fts_rows
from tests.support.hooks import context_of, run_hook

KINDS = ("averages", "leaves")


def seed(repo: Path, n: int = 120) -> project.Project:
    conn = db.connect()
    proj = project.detect(str(repo))
    projects.register(conn, proj)
    with db.transaction(conn):
        for i in range(n):
            records.insert(conn, proj.id, type="decision", title=f"Decision {i} about the kafka topic t{i}",
                           body="Partitioned by account. " * 10, stamp=clock.now())
    conn.close()
    return proj


def fts_ok(home: Path) -> bool:
    conn = sqlite3.connect(home / "agentctx.db")
    try:
        return integrity.integrity_errors(conn) == [] and integrity.fts_problem(conn) is None
    finally:
        conn.close()


def damaged(home: Path, kind: str, seed_: int = 0) -> None:
    assert fts_rows(home / "agentctx.db", kind, seed_) > 0
    conn = sqlite3.connect(home / "agentctx.db")
    try:  # the damage SQLite itself does not see, FTS5's check does
        assert integrity.integrity_errors(conn) == [] and integrity.fts_problem(conn) is not None
    finally:
        conn.close()


def start_message(home: Path, repo: Path) -> str:
    out = run_hook("session_start", {"session_id": "s-fts", "cwd": str(repo), "hook_event_name": "SessionStart",
                                     "source": "startup", "transcript_path": "/nonexistent.jsonl"}, home)
    assert out.returncode == 0
    return json.loads(out.stdout).get("systemMessage", "")


@pytest.mark.parametrize("kind", KINDS)
def test_cli_search_on_damaged_index_rows_answers_rebuilds_and_the_next_session_is_told(home, repo, kind):
    seed(repo)
    damaged(home, kind)
    r = agentctx(home, "--project", str(repo), "search", "kafka topic t7", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)[0]["title"] == "Decision 7 about the kafka topic t7"
    assert fts_ok(home)
    message = start_message(home, repo)
    assert "full-text index failed its integrity check" in message and "rebuilt" in message
    assert "failed its integrity check" in (home / "logs" / "agentctx.log").read_text()
    assert "integrity check" not in start_message(home, repo), "said once"


@pytest.mark.parametrize("kind", KINDS)
def test_the_prompt_hook_on_damaged_index_rows_still_injects(home, repo, kind):
    seed(repo)
    damaged(home, kind, seed_=3)
    payload = {"session_id": "s-fts", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
               "prompt": "how is the kafka topic t7 partitioned?", "transcript_path": "/nonexistent.jsonl"}
    proc = run_hook("user_prompt_submit", payload, home)
    assert proc.returncode == 0, proc.stderr
    assert "Decision 7 about the kafka topic t7" in (context_of(proc) or "")
    assert fts_ok(home)


@pytest.mark.parametrize("kind", KINDS)
def test_mcp_search_on_damaged_index_rows(home, repo, kind):
    seed(repo)
    damaged(home, kind, seed_=5)
    service = Service(str(repo))
    try:
        assert "Decision 7 about the kafka topic t7" in service.search("kafka topic t7")
    finally:
        service.close()
    assert fts_ok(home)


def test_a_damaged_length_that_makes_sqlite_run_out_of_memory_is_damage_too(home, repo):
    """These bytes in the segment list make FTS5 ask for an impossible allocation (SQLITE_NOMEM, which
    Python raises as MemoryError, not as a database error): still found, rebuilt, answered."""
    seed(repo, 150)
    damaged(home, "structure", seed_=33)
    conn = sqlite3.connect(home / "agentctx.db")
    try:
        assert "memory" in integrity.fts_problem(conn)
    finally:
        conn.close()
    r = agentctx(home, "--project", str(repo), "search", "kafka topic t7", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)[0]["title"] == "Decision 7 about the kafka topic t7"
    assert fts_ok(home)


def test_the_consolidation_pass_checks_the_index_first_and_every_later_step_runs(home, repo):
    proj = seed(repo)
    damaged(home, "leaves", seed_=7)
    report = consolidate.run(proj, use_embeddings=False)
    assert report["steps"]["index"]["ok"] is False and "rebuilt" in report["steps"]["index"]["repaired"]
    for step in ("expand", "scores", "teamsync", "daylog", "digest"):
        assert "error" not in report["steps"].get(step, {}), (step, report["steps"].get(step))
    assert report["status"] == "ok" and fts_ok(home)
    assert consolidate.run(proj, use_embeddings=False)["steps"]["index"] == {"ok": True}


def test_a_failing_consolidation_step_is_logged_and_the_later_steps_still_run(home, repo, monkeypatch):
    proj = seed(repo, 10)

    def broken(self):
        raise sqlite3.DatabaseError("database disk image is malformed (planted)")

    monkeypatch.setattr(consolidate.Pass, "expand", broken)
    report = consolidate.run(proj, use_embeddings=False)
    assert report["steps"]["expand"]["error"].startswith("DatabaseError")
    assert {"scores", "archive", "teamsync", "daylog", "digest"} <= set(report["steps"])
    assert "step expand failed" in (home / "logs" / "agentctx.log").read_text()
