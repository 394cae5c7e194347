"""What each dashboard view shows, as plain dicts: read from the store, written through ``records``.

Every function takes an open connection; writes go through ``agentctx.store.records`` so validation,
redaction and the supersession rules are the same as on the command line.
"""

from __future__ import annotations

import importlib
import sqlite3

from agentctx.kinds import SCOPES, TYPES
from agentctx.store import records, search
from agentctx.store.records import COLUMNS

STATUSES = ("current", "superseded", "archived", "all")
MAX_LIMIT = 500
GRAPH_EDGES = 600


def projects(conn: sqlite3.Connection) -> list[dict]:
    """Every project with its current record count and last session."""
    rows = conn.execute(
        """
        SELECT p.id, p.name, p.root, p.remote, p.first_seen, p.last_seen,
          (SELECT COUNT(*) FROM records r WHERE r.project_id = p.id AND r.superseded_at IS NULL
             AND r.archived_at IS NULL) AS current_records,
          (SELECT COUNT(*) FROM records r WHERE r.project_id = p.id) AS all_records,
          (SELECT COUNT(*) FROM sessions s WHERE s.project_id = p.id) AS sessions,
          (SELECT COUNT(*) FROM drift d WHERE d.project_id = p.id) AS drift
        FROM projects p ORDER BY p.last_seen DESC, p.name
        """
    ).fetchall()
    return [dict(r) for r in rows]


def _status_clause(status: str) -> str:
    return {
        "current": "superseded_at IS NULL AND archived_at IS NULL",
        "superseded": "superseded_at IS NOT NULL",
        "archived": "archived_at IS NOT NULL",
        "all": "1",
    }[status]


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
        # search.search ranks current records (or all, with include_superseded); filter the rest here.
        hits = search.search(conn, project_id, query, limit=MAX_LIMIT, types=types,
                             include_superseded=status != "current")
        ids = [h.record["id"] for h in hits]
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        where = f"id IN ({marks}) AND {_status_clause(status)}" + (" AND scope = ?" if scope else "")
        rows = {r["id"]: dict(r) for r in conn.execute(
            f"SELECT {COLUMNS}, archived_at FROM records WHERE {where}", (*ids, *([scope] if scope else [])))}
        out = []
        for h in hits:
            if h.record["id"] in rows:
                out.append({**rows[h.record["id"]], "relevance": round(h.relevance, 4)})
        return out[:limit]
    where = ["(project_id = ? OR scope = 'global')", _status_clause(status)]
    params: list = [project_id]
    if types:
        where.append(f"type IN ({','.join('?' * len(types))})")
        params += types
    if scope:
        where.append("scope = ?")
        params.append(scope)
    rows = conn.execute(
        f"SELECT {COLUMNS}, archived_at FROM records WHERE {' AND '.join(where)} "
        "ORDER BY pinned DESC, recorded_at DESC LIMIT ?", (*params, limit)
    ).fetchall()
    return [dict(r) for r in rows]


def record_detail(conn: sqlite3.Connection, ref: str) -> dict:
    """One record with its supersession chain and linked files."""
    rec = records.resolve(conn, ref)
    before, after = records.lineage(conn, rec["id"])
    files = [r[0] for r in conn.execute(
        "SELECT n.name FROM record_entities re JOIN nodes n ON n.id = re.entity_id WHERE re.record_id = ? "
        "ORDER BY n.name", (rec["id"],))]
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
    records.resolve(conn, ref, project_id)  # the record must be this project's (or global)
    return records.supersede(conn, project_id, ref, body=body, title=title, rationale=why, source="cli")


def graph(conn: sqlite3.Connection, project_id: str) -> dict:
    """Supersession chains and file links of a project, for a force-directed layout."""
    edges = conn.execute(
        """
        SELECT e.from_id, e.to_id, e.rel_type FROM edges e JOIN records r ON r.id = e.from_id
        WHERE r.project_id = ? AND e.rel_type IN ('supersedes', 'applies_to')
        ORDER BY e.created_at DESC LIMIT ?
        """,
        (project_id, GRAPH_EDGES),
    ).fetchall()
    ids = {e["from_id"] for e in edges} | {e["to_id"] for e in edges}
    nodes: dict[str, dict] = {}
    marks = ",".join("?" * len(ids))
    if ids:
        for r in conn.execute(
            f"SELECT id, type, title, superseded_at, pinned FROM records WHERE id IN ({marks})", tuple(ids)
        ):
            nodes[r["id"]] = {"id": r["id"], "kind": "record", "type": r["type"], "label": r["title"],
                              "current": r["superseded_at"] is None, "pinned": bool(r["pinned"])}
        for n in conn.execute(f"SELECT id, kind, name FROM nodes WHERE id IN ({marks})", tuple(ids)):
            nodes[n["id"]] = {"id": n["id"], "kind": n["kind"], "label": n["name"], "current": True}
    links = [{"source": e["from_id"], "target": e["to_id"], "rel": e["rel_type"]}
             for e in edges if e["from_id"] in nodes and e["to_id"] in nodes]
    return {"nodes": list(nodes.values()), "links": links}


def profile(conn: sqlite3.Connection, project_id: str) -> dict:
    """Global preferences (the developer profile) and the project's profile.* facts."""
    facts = conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND type = 'profile' AND superseded_at IS NULL "
        "AND archived_at IS NULL ORDER BY key, recorded_at DESC LIMIT 200", (project_id,)
    ).fetchall()
    return {"preferences": records.global_preferences(conn, limit=200), "project": [dict(r) for r in facts]}


def sessions(conn: sqlite3.Connection, project_id: str, limit: int = 500) -> list[dict]:
    """Sessions of a project, oldest first: tokens injected and extraction cost."""
    rows = conn.execute(
        """
        SELECT * FROM (
          SELECT session_id, started_at, ended_at, end_reason, tokens_injected, injections,
                 extraction_cost_usd, extraction_runs, extraction_input_tokens, extraction_output_tokens
          FROM sessions WHERE project_id = ? ORDER BY started_at DESC LIMIT ?
        ) ORDER BY started_at
        """,
        (project_id, max(1, min(int(limit), 5000))),
    ).fetchall()
    return [dict(r) for r in rows]


def drift_candidates(conn: sqlite3.Connection, project_id: str) -> list[dict]:
    """The stored CLAUDE.md drift candidates (the ``drift`` table, as the last scan left it), best first."""
    rows = conn.execute(
        """
        SELECT d.record_id, d.score, d.kind, d.detail, d.updated_at, r.type, r.title
        FROM drift d LEFT JOIN records r ON r.id = d.record_id
        WHERE d.project_id = ? ORDER BY d.score DESC, d.record_id LIMIT 200
        """,
        (project_id,),
    ).fetchall()
    return [dict(r) for r in rows]


def sync_proposal(conn: sqlite3.Connection, project_id: str) -> dict:
    """A fresh drift scan and the proposed CLAUDE.md diff (``agentctx.sharing.drift.proposal``; writes nothing to
    CLAUDE.md, refreshes the ``drift`` table). ``error`` says why there is none."""
    try:
        drift = importlib.import_module("agentctx.sharing.drift")
    except ImportError:
        return {"error": "the CLAUDE.md diff is not available in this version"}
    try:
        return drift.proposal(conn, project_id)
    except (OSError, ValueError) as exc:  # DriftError (huge/binary CLAUDE.md, unknown folder) is a ValueError
        return {"error": str(exc)}
