"""The developer profile (ADR-010): global preferences, their promotion, inspection and retirement.

A global preference is a ``preference`` record with ``scope = 'global'`` in the one store (the
store is already per developer and holds every project; the digest reads global records from
any project). Extraction keys each preference by its normalized rule (``extract._key``), so the
same rule seen again, in any project, reinforces the one record instead of adding another (see
:func:`sighting`). Each session that stated it leaves a ``derives_from`` edge from the record to
the session id. :func:`promote` turns ``inferred`` into ``reinforced`` once :data:`SESSIONS`
distinct sessions stated it; one explicit statement promotes at once. Reinforced and explicit
global preferences are in every SessionStart digest ("Developer profile", ~200 tokens).
"""

from __future__ import annotations

import sqlite3

from agentctx import clock
from agentctx.store import graph, records
from agentctx.store.db import transaction

SESSIONS = 3  # ADR-010: inferred -> reinforced after this many distinct sessions


def find(conn: sqlite3.Connection, key: str) -> dict | None:
    """The current global preference with this key, in any project."""
    return records.global_by_key(conn, key, "preference")


def sessions_of(conn: sqlite3.Connection, record_id: str) -> list[str]:
    """The distinct sessions that stated a preference (its own session and its derives_from edges)."""
    return graph.sessions_of(conn, record_id)


def sighting(conn: sqlite3.Connection, rec: dict, session_id: str | None, explicit: bool) -> bool:
    """The preference ``rec`` was stated again: count the session, reinforce, promote if due
    (an explicit statement, or the SESSIONS-th session; :func:`promote` sweeps the rest).

    Returns False when this session had already been counted (a retried extraction run).
    """
    with transaction(conn):
        seen = session_id in sessions_of(conn, rec["id"]) if session_id else False
        if session_id and not seen:
            graph.edge(conn, rec["id"], session_id, "derives_from")
        if not seen:
            records.reinforce(conn, rec["id"], all_projects=True)  # a global preference: every project's
        if rec["confidence"] == "inferred" and (explicit or len(sessions_of(conn, rec["id"])) >= SESSIONS):
            _set_reinforced(conn, [rec["id"]])
    return not seen


def _set_reinforced(conn: sqlite3.Connection, ids: list[str]) -> None:
    records.set_confidence(conn, ids, "reinforced", all_projects=True)


def promote(conn: sqlite3.Connection) -> int:
    """Promote inferred global preferences stated in >= SESSIONS distinct sessions; return how many.

    The consolidation pass runs it; it catches what :func:`sighting` did not see (imported
    records, edges written by other tools, a changed SESSIONS).
    """
    due = [r["id"] for r in records.global_preferences(conn, limit=None, inferred=True)
           if r["confidence"] == "inferred" and len(sessions_of(conn, r["id"])) >= SESSIONS]
    if due:
        with transaction(conn):
            _set_reinforced(conn, due)
    return len(due)


def profile(conn: sqlite3.Connection) -> list[dict]:
    """Every current global preference, with its session count and whether the digest shows it."""
    shown = {r["id"] for r in records.global_preferences(conn)}
    out = []
    for rec in records.global_preferences(conn, limit=None, inferred=True):
        rec["sessions"] = len(sessions_of(conn, rec["id"]))
        rec["in_digest"] = rec["id"] in shown
        out.append(rec)
    return out


def resolve(conn: sqlite3.Connection, ref: str, project_id: str) -> dict:
    """A current global preference by id or unique prefix (as seen from this project), else RecordError."""
    rec = records.resolve(conn, ref, project_id)
    if rec["type"] != "preference" or rec["scope"] != "global":
        raise records.RecordError(f"record {rec['id']} is not a global preference (agentctx profile show lists them)")
    if rec["superseded_at"]:
        raise records.RecordError(f"record {rec['id']} was already cleared or superseded")
    return rec


def edit(conn: sqlite3.Connection, ref: str, project_id: str, *, rule: str | None = None,
         project_only: bool = False) -> dict:
    """Correct a global preference's rule, or move a misattributed one to its project's scope."""
    rec = resolve(conn, ref, project_id)
    if rule is None and not project_only:
        raise records.RecordError("nothing to change: give --rule and/or --project-only")
    return records.edit(conn, rec["id"], title=rule, scope="project" if project_only else None, project_id=project_id)


def clear(conn: sqlite3.Connection, ref: str, project_id: str) -> dict:
    """Retire a global preference: no longer true from now on (never deleted; history keeps it)."""
    rec = resolve(conn, ref, project_id)
    stamp = clock.now()
    with transaction(conn):
        records.retire(conn, rec["id"], stamp=stamp, project_id=project_id, valid_to=stamp, mark_updated=True)
    return records.get(conn, rec["id"], project_id)
