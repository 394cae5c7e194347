"""Stored scores, the cold partition and prune candidates (the consolidation pass's bookkeeping).

* ``rescore``: ``records.score`` = ``scoring.stored_score`` for every current record; a record
  whose score is below ``PRUNE_SCORE`` gets ``low_score_since`` (cleared when it recovers).
* ``archive``: records superseded more than ``ARCHIVE_AFTER_DAYS`` ago move (same row, one
  transaction per batch) to ``records_archive``; ``records.history`` still reads them.
* ``prune_candidates`` / ``prune``: current, unpinned records whose score stayed low for
  ``PRUNE_AFTER_DAYS``; deleted only on request (``agentctx prune``).
* ``soft_archive``: records summarized by a rollup leave the current view (``archived_at``) but
  stay in ``records``, so history and the rollup's edges still reach them.
"""

from __future__ import annotations

import sqlite3

from agentctx import clock
from agentctx.scoring import ARCHIVE_AFTER_DAYS, PRUNE_AFTER_DAYS, PRUNE_SCORE, stored_score
from agentctx.store.db import transaction
from agentctx.store.query import current_sql, scope_sql

BATCH = 2000
ARCHIVE_BATCH = 250  # records moved per transaction (each delete updates the index and its session's rows)
CHANGE = 0.001  # smaller score changes are not written (each write bumps the digest generation)


def rescore(conn: sqlite3.Connection, *, now: str | None = None, dry_run: bool = False) -> dict:
    """Rewrite stored scores; {"rescored": n, "low": n}."""
    now = now or clock.now()
    ref = clock.to_datetime(now)
    rows = conn.execute(
        "SELECT id, type, confidence, valid_from, recorded_at, access_count, reinforce_count, last_accessed, "
        f"score, low_score_since FROM records WHERE {current_sql()}").fetchall()
    changes = []
    low = 0
    for r in rows:
        age = clock.age_days(r["valid_from"] or r["recorded_at"], ref)
        since_use = clock.age_days(r["last_accessed"] or r["recorded_at"], ref)
        uses = int(r["access_count"] or 0) + int(r["reinforce_count"] or 0)
        score = round(stored_score(r["type"], age, r["confidence"], uses, since_use), 4)
        low_since = r["low_score_since"]
        if score < PRUNE_SCORE:
            low += 1
            low_since = low_since or now
        else:
            low_since = None
        if abs(score - (r["score"] if r["score"] is not None else 1.0)) > CHANGE or low_since != r["low_score_since"]:
            changes.append((score, low_since, r["id"]))
    if not dry_run:
        for start in range(0, len(changes), BATCH):
            with transaction(conn):
                conn.executemany("UPDATE records SET score = ?, low_score_since = ? WHERE id = ?",
                                 changes[start:start + BATCH])
    return {"rescored": len(changes), "low": low}


def _columns(conn: sqlite3.Connection) -> str:
    return ", ".join(r[1] for r in conn.execute("PRAGMA table_info(records_archive)"))


def archive(conn: sqlite3.Connection, *, now: str | None = None, dry_run: bool = False) -> int:
    """Move records superseded more than ARCHIVE_AFTER_DAYS ago to ``records_archive``; how many."""
    cutoff = clock.days_before(now or clock.now(), ARCHIVE_AFTER_DAYS)
    if dry_run:
        return conn.execute("SELECT COUNT(*) FROM records WHERE superseded_at IS NOT NULL AND superseded_at < ?",
                            (cutoff,)).fetchone()[0]
    cols = _columns(conn)
    moved = 0
    while True:
        with transaction(conn):  # copy and delete together: a crash leaves the row in exactly one table
            seqs = [r[0] for r in conn.execute(
                "SELECT seq FROM records WHERE superseded_at IS NOT NULL AND superseded_at < ? LIMIT ?",
                (cutoff, ARCHIVE_BATCH))]
            if not seqs:
                break
            marks = ",".join("?" * len(seqs))
            conn.execute(f"INSERT OR IGNORE INTO records_archive ({cols}) SELECT {cols} FROM records WHERE seq IN ({marks})", seqs)
            conn.execute(f"DELETE FROM records WHERE seq IN ({marks})", seqs)
        moved += len(seqs)
    return moved


def prune_candidates(conn: sqlite3.Connection, project_id: str | None = None, *, now: str | None = None,
                     limit: int = 1000) -> list[dict]:
    """Current unpinned records whose score has stayed below PRUNE_SCORE for PRUNE_AFTER_DAYS."""
    cutoff = clock.days_before(now or clock.now(), PRUNE_AFTER_DAYS)
    where, params = "", [cutoff]
    if project_id:
        where, params = " AND project_id = ?", [cutoff, project_id]
    rows = conn.execute(
        "SELECT id, project_id, type, title, score, low_score_since FROM records WHERE superseded_at IS NULL "
        f"AND pinned = 0 AND low_score_since IS NOT NULL AND low_score_since < ?{where} ORDER BY score LIMIT ?",
        (*params, limit)).fetchall()
    return [dict(r) for r in rows]


def prune(conn: sqlite3.Connection, project_id: str, record_ids: list[str]) -> int:
    """Delete these records of the project with their links and edges (one transaction); how many went."""
    where, params = scope_sql(project_id, include_global=False)
    gone = 0
    with transaction(conn):
        for rid in record_ids:
            if not conn.execute(f"DELETE FROM records WHERE id = ? AND {where}", (rid, *params)).rowcount:
                continue
            gone += 1
            conn.execute("DELETE FROM record_entities WHERE record_id = ?", (rid,))
            conn.execute("DELETE FROM edges WHERE from_id = ? OR to_id = ?", (rid, rid))
    return gone


def soft_archive(conn: sqlite3.Connection, project_id: str, record_ids: list[str], stamp: str) -> None:
    """Take these records of the project out of the current view (``archived_at``), inside the
    caller's transaction."""
    where, params = scope_sql(project_id)
    conn.executemany(f"UPDATE records SET archived_at = ? WHERE id = ? AND {where}",
                     [(stamp, rid, *params) for rid in record_ids])
