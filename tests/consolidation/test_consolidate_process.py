"""The consolidation pass as a process: killed mid-pass and rerun, started by the SessionEnd hook, and
the hybrid ctx_search of the long-lived MCP service."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx import flight
from agentctx.consolidation import consolidate
from agentctx.store import db, records, vectors
from agentctx.surfaces import mcp_tools
from tests.support.hooks import hook_env, run_hook
from tests.support.models import TEST_MODEL, TEST_MODEL_TAG
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
MODEL = TEST_MODEL




def _fill(conn, proj, n: int) -> None:
    rows = [(f"01J{i:023d}", proj.id, "discovery", f"Finding {i} about module m{i % 97} and cache c{i % 13}",
             f"Body {i}", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "cli") for i in range(n)]
    with db.transaction(conn):
        conn.executemany("INSERT INTO records (id, project_id, type, title, body, valid_from, recorded_at, source) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def _vector_count() -> int:
    try:
        c = sqlite3.connect(f"file:{vectors.path()}?mode=ro", uri=True, timeout=5)
        try:
            return c.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        finally:
            c.close()
    except sqlite3.Error:
        return 0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_pass_killed_mid_embedding_leaves_a_consistent_store_and_the_next_one_finishes(home, conn, proj, repo,
                                                                                          monkeypatch):
    _fill(conn, proj, 3000)
    assert 2 * consolidate.BATCH < 3000  # the kill falls inside the embedding
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(MODEL))
    monkeypatch.setenv("AGENTCTX_LLM", "0")
    env = {**os.environ, "AGENTCTX_TEST_BATCH_PAUSE": "0.3"}
    proc = subprocess.Popen([sys.executable, str(ROOT / "lib" / "agentctx_consolidate.py"), "--cwd", str(repo)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _vector_count() >= 2 * consolidate.BATCH, "two embedded batches")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done = conn.execute("SELECT COUNT(*) FROM records WHERE pending_embedding = 0").fetchone()[0]
    assert 0 < done < 3000 and conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert flight.Lock("consolidate").stale()  # its owner is dead: the next pass takes it over
    report = consolidate.run(proj)
    assert report["status"] == "ok", report
    assert report["steps"]["embeddings"]["embedded"] >= 3000 - done
    assert conn.execute("SELECT COUNT(*) FROM records WHERE pending_embedding = 1").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 3000
    store = vectors.Store()
    assert store.count() == 3000 and list(store.execute("PRAGMA integrity_check"))[0][0] == "ok"
    store.close()


def test_session_end_starts_the_pass_through_uv(home, conn, proj, repo):
    records.add(conn, proj.id, type="decision", title="Use PostgreSQL 16 for the main database")
    env = hook_env(home, AGENTCTX_EMBED_MODEL=str(MODEL))
    proc = run_hook("session_end", {"session_id": "s1", "cwd": str(repo), "reason": "other"}, home, env=env)
    assert proc.returncode == 0 and proc.stdout == b""
    log = home / "logs" / "agentctx.log"
    line = wait_for(lambda: next((x for x in (log.read_text().splitlines() if log.exists() else [])
                                  if " consolidate " in x and " in " in x and "s:" in x), None), "the pass's log line")
    assert " consolidate ok in " in line and "embedded:1" in line
    assert conn.execute("SELECT embedded_model FROM records").fetchone()[0] == TEST_MODEL_TAG


def test_ctx_search_fuses_vectors_once_they_exist(home, conn, proj, repo, monkeypatch):
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(MODEL))
    monkeypatch.setenv("AGENTCTX_LLM", "0")
    records.add(conn, proj.id, type="decision", title="Postgres is the primary datastore",
                body="All services keep their state in one PostgreSQL cluster.")
    records.add(conn, proj.id, type="convention", title="Format Python with ruff format")
    service = mcp_tools.Service(str(repo))
    before = service.search("which relational DB do we store data in")
    assert "No current records match" in before  # FTS5 alone: no shared word
    consolidate.run(proj)
    monkeypatch.setattr(mcp_tools, "VECTOR_RECHECK_S", 0)
    after = service.search("which relational DB do we store data in")
    assert "Postgres is the primary datastore" in after.splitlines()[1]
    loaded = service.vectors()
    assert loaded is not None and service.vectors() is loaded  # the model is loaded once
    service.close()


def test_the_plugin_cli_runs_the_pass_through_its_uv_script(home, conn, proj, repo):
    """bin/agentctx's environment has no model2vec: ``consolidate`` hands over to lib/agentctx_consolidate.py."""
    records.add(conn, proj.id, type="decision", title="Use PostgreSQL 16 for the main database")
    env = hook_env(home, AGENTCTX_EMBED_MODEL=str(MODEL))
    proc = subprocess.run(["uv", "run", "--quiet", "--script", str(ROOT / "lib" / "agentctx_cli.py"), "--project",
                           str(repo), "consolidate", "--json"], env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = __import__("json").loads(proc.stdout)
    assert report["status"] == "ok" and report["steps"]["embeddings"]["embedded"] == 1
