"""What each dashboard view shows, as plain dicts: read from the store, written through ``records``.

Every function takes an open connection; writes go through ``agentctx.store.records`` so validation,
redaction and the supersession rules are the same as on the command line.
"""

from __future__ import annotations

import os
import sqlite3

from agentctx.consolidation import hybrid
from agentctx.kinds import SCOPES, TYPES
from agentctx.store import graph as graph_store
from agentctx.store import overview, records
from agentctx.store import sessions as session_store
from agentctx.store.records import STATUSES

MAX_LIMIT = 500
GRAPH_EDGES = 600
VECTORS = hybrid.Loader()  # the dashboard server is long-lived: the model is loaded once, when vectors exist


def projects(conn: sqlite3.Connection) -> list[dict]:
    """Every project with its record and session counts and its CLAUDE.md drift count: assessed now, by the
    same rule the Sync view applies (``drift.assess``, read-only), for projects whose folder is here; the
    last stored scan otherwise (``drift_checked`` says which)."""
    from agentctx.sharing import drift

    out = overview.projects(conn)
    for p in out:
        p["drift_checked"] = False
        if p.get("root") and os.path.isdir(p["root"]):
            try:
                p["drift"], p["drift_checked"] = len(drift.assess(conn, p["id"], p["root"])), True
            except (OSError, ValueError):  # DriftError: a CLAUDE.md that cannot be compared; keep the stored count
                pass
    return out


def check_filters(types: list[str], scope: str | None, status: str) -> None:
    """RecordError naming the first unknown filter value."""
    for t in types:
        if t not in TYPES:
            raise records.RecordError(f"unknown type {t!r}")
    if scope and scope not in SCOPES:
        raise records.RecordError(f"unknown scope {scope!r}")
    if status not in STATUSES:
        raise records.RecordError(f"unknown status {status!r}; expected one of: {', '.join(STATUSES)}")


def record_list(
    conn: sqlite3.Connection, project_id: str, *, query: str = "", types: list[str] | None = None,
    scope: str | None = None, status: str = "current", limit: int = 100,
) -> list[dict]:
    """Records of a project (and global ones): FTS search when ``query`` is given, else newest first."""
    types = list(types or [])
    check_filters(types, scope, status)
    limit = max(1, min(int(limit), MAX_LIMIT))
    if query.strip():
        # The ranking ctx_search uses (hybrid.search_hits: the hot path's, fused with vectors once they
        # exist); it ranks current records (or all, with include_superseded); filter the rest here.
        vec = VECTORS.get()
        hits = hybrid.search_hits(conn, project_id, query, store=vec[0] if vec else None,
                                  embedder=vec[1] if vec else None, limit=MAX_LIMIT, types=types,
                                  include_superseded=status != "current")
        ids = [h.record["id"] for h in hits]
        rows = {r["id"]: r for r in records.listing(conn, project_id, ids=ids, scope=scope, status=status)}
        out = []
        for h in hits:
            if h.record["id"] in rows:
                out.append({**rows[h.record["id"]], "relevance": round(h.relevance, 4)})
        return out[:limit]
    return records.listing(conn, project_id, types=types, scope=scope, status=status, limit=limit)


def record_detail(conn: sqlite3.Connection, ref: str, project_id: str | None) -> dict:
    """One record with its supersession chain and linked files: the project's (or a global one), or,
    with no project (``project_id=None``, the dashboard's store-wide view), any project's."""
    scope = {"project_id": project_id, "all_projects": project_id is None}
    rec = records.resolve(conn, ref, **scope)
    before, after = records.lineage(conn, rec["id"], **scope)
    files = graph_store.linked_names(conn, rec["id"])
    brief = ("id", "title", "valid_from", "valid_to", "superseded_at")
    return {**rec, "files": files, "supersedes": [{k: r[k] for k in brief} for r in before],
            "superseded_chain": [{k: r[k] for k in brief} for r in after]}


def edit(conn: sqlite3.Connection, project_id: str, ref: str, fields: dict) -> dict:
    """Correct a record in place (title, body, type, scope, confidence)."""
    allowed = {k: fields[k] for k in ("title", "body", "type", "scope", "confidence") if fields.get(k) is not None}
    for key, value in allowed.items():
        if not isinstance(value, str):
            raise records.RecordError(f"{key} must be text")
    if not allowed:
        raise records.RecordError("nothing to change: give title, body, type, scope or confidence")
    return records.edit(conn, ref, project_id=project_id, **allowed)


def pin(conn: sqlite3.Connection, project_id: str, ref: str, on: bool) -> dict:
    """Pin or unpin a record."""
    return records.pin(conn, ref, on=bool(on), project_id=project_id)


def supersede(conn: sqlite3.Connection, project_id: str, ref: str, fields: dict) -> dict:
    """Retire a record and store what is true now."""
    body, title, why = fields.get("body") or "", fields.get("title") or None, fields.get("rationale") or None
    for key, value in (("body", body), ("title", title), ("rationale", why)):
        if value is not None and not isinstance(value, str):
            raise records.RecordError(f"{key} must be text")
    if not body.strip() and not title:
        raise records.RecordError("give the new body (or title)")
    return records.supersede(conn, project_id, ref, body=body, title=title, rationale=why, source="cli")


def _confirmed(fields: dict, what: str) -> None:
    if fields.get("confirm") is not True:
        raise records.RecordError(f"{what} needs {{\"confirm\": true}} (the dashboard asks first)")


def forget(conn: sqlite3.Connection, project_id: str, ref: str, fields: dict) -> dict:
    """Retire a record with no replacement (kept in history); needs ``confirm``."""
    from agentctx.maintenance import forgetting

    _confirmed(fields, "forgetting a record")
    return forgetting.forget(conn, project_id, ref)


def purge(conn: sqlite3.Connection, project_id: str, ref: str, fields: dict) -> dict:
    """Remove a record from every place on disk; needs ``confirm``. The report says what went where."""
    from agentctx.maintenance import forgetting

    _confirmed(fields, "purging a record")
    return forgetting.purge(conn, project_id, ref)


def graph(conn: sqlite3.Connection, project_id: str) -> dict:
    """Supersession chains and file links of a project, for a force-directed layout."""
    return graph_store.snapshot(conn, project_id, GRAPH_EDGES)


def profile(conn: sqlite3.Connection, project_id: str) -> dict:
    """Global preferences (the developer profile) and the project's profile.* facts."""
    facts = records.current(conn, project_id, types=["profile"], order="key", limit=200)
    return {"preferences": records.global_preferences(conn, limit=200), "project": facts}


def sessions(conn: sqlite3.Connection, project_id: str, limit: int = 500) -> list[dict]:
    """Sessions of a project, oldest first: tokens injected and extraction cost."""
    return session_store.timeline(conn, project_id, max(1, min(int(limit), 5000)))


def drift_candidates(conn: sqlite3.Connection, project_id: str) -> list[dict]:
    """The stored CLAUDE.md drift candidates (the ``drift`` table, as the last scan left it), best first."""
    from agentctx.sharing import drift

    found = drift.stored(conn, project_id)[:200]
    recs = records.many(conn, [c["record_id"] for c in found], project_id)
    keys = ("record_id", "score", "kind", "detail", "updated_at")
    return [{**{k: c[k] for k in keys}, "type": recs.get(c["record_id"], {}).get("type"),
             "title": recs.get(c["record_id"], {}).get("title")} for c in found]


def sync_proposal(conn: sqlite3.Connection, project_id: str) -> dict:
    """A fresh drift scan and the proposed CLAUDE.md diff (``agentctx.sharing.drift.proposal``; writes nothing to
    CLAUDE.md, refreshes the ``drift`` table). ``error`` says why there is none."""
    from agentctx.sharing import drift

    try:
        return drift.proposal(conn, project_id)
    except (OSError, ValueError) as exc:  # DriftError (huge/binary CLAUDE.md, unknown folder) is a ValueError
        return {"error": str(exc)}
