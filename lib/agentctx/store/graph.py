"""The adjacency graph (ADR-014): entity nodes (files, modules, branches), edges, record links.

Edges: ``supersedes`` (record → record), ``applies_to`` (record → entity), ``observed_in``
(entity → session), ``derives_from``, ``scoped_to``, ``spawned_from``. Traversal is a
recursive CTE with UNION (cycle-safe) and a depth guard. Every statement on ``nodes``,
``edges`` and ``record_entities`` is here.
"""

from __future__ import annotations

import json
import os
import sqlite3

from agentctx import clock, ids
from agentctx.store.records import COLUMNS, current_sql

REL_TYPES = ("supersedes", "applies_to", "observed_in", "derives_from", "scoped_to", "spawned_from")
KINDS = ("file", "symbol", "package", "module", "branch")
MAX_DEPTH = 5


def normalize_path(path: str, root: str | None) -> str:
    """A file path as stored: relative to the project root with forward slashes when inside it."""
    path = os.path.normpath(path)
    if root and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, root)
        except ValueError:  # another drive on Windows
            rel = path
        if not rel.startswith(".."):
            path = rel
    return path.replace(os.sep, "/")


def entity(conn: sqlite3.Connection, project_id: str, kind: str, name: str) -> str:
    """The node id for (kind, name) in this project, created if new."""
    if kind not in KINDS:
        raise ValueError(f"unknown entity kind {kind!r}")
    row = conn.execute(
        "SELECT id FROM nodes WHERE project_id = ? AND kind = ? AND name = ?", (project_id, kind, name)
    ).fetchone()
    if row:
        return row[0]
    node_id = ids.new_id()
    conn.execute(
        "INSERT OR IGNORE INTO nodes (id, project_id, kind, name, created_at) VALUES (?, ?, ?, ?, ?)",
        (node_id, project_id, kind, name, clock.now()),
    )
    return conn.execute(
        "SELECT id FROM nodes WHERE project_id = ? AND kind = ? AND name = ?", (project_id, kind, name)
    ).fetchone()[0]


def edge(conn: sqlite3.Connection, from_id: str, to_id: str, rel_type: str, weight: float = 1.0) -> None:
    """Add an edge once; a repeat adds its weight to the existing one."""
    if rel_type not in REL_TYPES:
        raise ValueError(f"unknown relation {rel_type!r}")
    conn.execute(
        "INSERT INTO edges (id, from_id, to_id, rel_type, weight, created_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(from_id, to_id, rel_type) DO UPDATE SET weight = weight + excluded.weight",
        (ids.new_id(), from_id, to_id, rel_type, weight, clock.now()),
    )


def link_once(conn: sqlite3.Connection, from_id: str, to_id: str, rel_type: str, stamp: str) -> None:
    """Add an edge of weight 1 unless that edge exists (a supersession, a merge: facts, not counts)."""
    if rel_type not in REL_TYPES:
        raise ValueError(f"unknown relation {rel_type!r}")
    conn.execute(
        "INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, weight, created_at) VALUES (?, ?, ?, ?, 1.0, ?)",
        (ids.new_id(), from_id, to_id, rel_type, stamp),
    )


def link(conn: sqlite3.Connection, record_id: str, entity_id: str) -> None:
    """Attach a record to an entity (record_entities row plus an ``applies_to`` edge)."""
    conn.execute("INSERT OR IGNORE INTO record_entities (record_id, entity_id) VALUES (?, ?)", (record_id, entity_id))
    edge(conn, record_id, entity_id, "applies_to")


def copy_links(conn: sqlite3.Connection, from_record: str, to_record: str) -> None:
    """Give ``to_record`` every entity link of ``from_record`` (a merged duplicate's files)."""
    conn.execute("INSERT OR IGNORE INTO record_entities (record_id, entity_id) "
                 "SELECT ?, entity_id FROM record_entities WHERE record_id = ?", (to_record, from_record))


def linked_names(conn: sqlite3.Connection, record_id: str, *, kind: str | None = None,
                 limit: int | None = None) -> list[str]:
    """Names of the entities a record is linked to (only files with ``kind="file"``), sorted."""
    sql = ("SELECT n.name FROM record_entities re JOIN nodes n ON n.id = re.entity_id WHERE re.record_id = ?"
           + (" AND n.kind = ?" if kind else "") + " ORDER BY n.name" + (" LIMIT ?" if limit is not None else ""))
    params = (record_id, *((kind,) if kind else ()), *((limit,) if limit is not None else ()))
    return [r[0] for r in conn.execute(sql, params)]


def session_files(conn: sqlite3.Connection, project_id: str, session_id: str, limit: int = 200) -> list[dict]:
    """Files a session wrote or edited (``observed_in`` edges), first touched first: {name, weight}."""
    return [dict(r) for r in conn.execute(
        "SELECT n.name, e.weight FROM edges e JOIN nodes n ON n.id = e.from_id WHERE e.to_id = ? "
        "AND e.rel_type = 'observed_in' AND n.kind = 'file' AND n.project_id = ? ORDER BY e.created_at LIMIT ?",
        (session_id, project_id, limit),
    )]


def sessions_of(conn: sqlite3.Connection, record_id: str) -> list[str]:
    """The distinct sessions that stated a record: its own session and its ``derives_from`` edges to
    session ids (edges to records, from merged duplicates, are not sessions)."""
    rows = conn.execute(
        "SELECT session_id FROM records WHERE id = ? AND session_id IS NOT NULL "
        "UNION SELECT e.to_id FROM edges e WHERE e.from_id = ? AND e.rel_type = 'derives_from' "
        "AND NOT EXISTS (SELECT 1 FROM records r WHERE r.id = e.to_id)",
        (record_id, record_id),
    ).fetchall()
    return sorted(r[0] for r in rows)


def snapshot(conn: sqlite3.Connection, project_id: str, max_edges: int) -> dict:
    """Supersession chains and file links of a project (the newest ``max_edges`` edges), as
    {"nodes": [...], "links": [...]} for a force-directed layout."""
    edges = conn.execute(
        """
        SELECT e.from_id, e.to_id, e.rel_type FROM edges e JOIN records r ON r.id = e.from_id
        WHERE r.project_id = ? AND e.rel_type IN ('supersedes', 'applies_to')
        ORDER BY e.created_at DESC LIMIT ?
        """,
        (project_id, max_edges),
    ).fetchall()
    ids_ = {e["from_id"] for e in edges} | {e["to_id"] for e in edges}
    nodes: dict[str, dict] = {}
    marks = ",".join("?" * len(ids_))
    if ids_:
        for r in conn.execute(
            f"SELECT id, type, title, superseded_at, pinned FROM records WHERE id IN ({marks})", tuple(ids_)
        ):
            nodes[r["id"]] = {"id": r["id"], "kind": "record", "type": r["type"], "label": r["title"],
                              "current": r["superseded_at"] is None, "pinned": bool(r["pinned"])}
        for n in conn.execute(f"SELECT id, kind, name FROM nodes WHERE id IN ({marks})", tuple(ids_)):
            nodes[n["id"]] = {"id": n["id"], "kind": n["kind"], "label": n["name"], "current": True}
    links = [{"source": e["from_id"], "target": e["to_id"], "rel": e["rel_type"]}
             for e in edges if e["from_id"] in nodes and e["to_id"] in nodes]
    return {"nodes": list(nodes.values()), "links": links}


def related(
    conn: sqlite3.Connection, project_id: str, path: str, *, root: str | None = None, depth: int = 2,
    include_superseded: bool = False, limit: int = 50,
) -> list[dict]:
    """Records linked to a file: directly, then through edges up to ``depth`` hops (≤ MAX_DEPTH).

    Each record carries ``hops``: 1 for a direct link, more for records reached through
    supersession or shared entities.
    """
    name = normalize_path(path, root)
    depth = max(1, min(int(depth), MAX_DEPTH))
    start = conn.execute(
        "SELECT id FROM nodes WHERE project_id = ? AND kind = 'file' AND (name = ? OR name LIKE ? ESCAPE '\\')",
        (project_id, name, "%/" + name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")),
    ).fetchall()
    if not start:
        return []
    seeds = [r[0] for r in start]
    cols = ", ".join("r." + c.strip() for c in COLUMNS.split(","))
    rows = conn.execute(
        f"""
        WITH RECURSIVE walk(node, hops) AS (
            SELECT value, 0 FROM json_each(?)
            UNION
            SELECT CASE WHEN e.from_id = walk.node THEN e.to_id ELSE e.from_id END, walk.hops + 1
            FROM edges e JOIN walk ON (e.from_id = walk.node OR e.to_id = walk.node)
            WHERE walk.hops < ? AND e.rel_type IN ('applies_to', 'supersedes', 'derives_from', 'spawned_from')
        )
        SELECT {cols}, MIN(walk.hops) AS hops FROM walk JOIN records r ON r.id = walk.node
        WHERE r.project_id = ? {'' if include_superseded else 'AND ' + current_sql('r')}
        GROUP BY r.id ORDER BY hops, r.pinned DESC, r.recorded_at DESC LIMIT ?
        """,
        (json.dumps(seeds), depth, project_id, limit),
    ).fetchall()
    return [dict(r) for r in rows]
