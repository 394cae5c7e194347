"""The adjacency graph (ADR-014): entity nodes (files, modules, branches), edges, record links.

Edges: ``supersedes`` (record → record), ``applies_to`` (record → entity), ``observed_in``
(entity → session), ``derives_from``, ``scoped_to``, ``spawned_from``. Traversal is a
recursive CTE with UNION (cycle-safe) and a depth guard. Every statement on ``nodes``,
``edges`` and ``record_entities`` is here.
"""

from __future__ import annotations

import os
import sqlite3

from agentctx import clock, ids, jsonfast
from agentctx.kinds import FOLDED_TYPES
from agentctx.store.query import COLUMNS, current_sql

REL_TYPES = ("supersedes", "applies_to", "observed_in", "derives_from", "scoped_to", "spawned_from")
KINDS = ("file", "symbol", "package", "module", "branch", "command")
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


def is_file_name(name: str) -> bool:
    """Whether ``name`` can be a file: not empty, no control characters, and not one of the pseudo-files a
    traceback names (Python's ``<string>``, ``<stdin>``, ``<frozen importlib._bootstrap>``,
    ``<ipython-input-3-…>``; Node's ``<anonymous>``): nothing in angle brackets."""
    name = name.strip()
    return bool(name) and not any(ch in name for ch in "<>\0\n\r\t") and name not in (".", "..", "-")


NOT_A_FILE_SQL = "(kind = 'file' AND (name GLOB '*[<>]*' OR trim(name) IN ('', '.', '..', '-')))"  # is_file_name's SQL


def entity(conn: sqlite3.Connection, project_id: str, kind: str, name: str) -> str:
    """The node id for (kind, name) in this project, created if new. ValueError for an unknown kind or a
    ``file`` whose name cannot be one (``is_file_name``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown entity kind {kind!r}")
    if kind == "file" and not is_file_name(name):
        raise ValueError(f"not a file name: {name!r}")
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


def link(conn: sqlite3.Connection, record_id: str, entity_id: str, *, once: bool = False) -> None:
    """Attach a record to an entity (record_entities row plus an ``applies_to`` edge). A repeat adds
    to the edge's weight (an observation seen again), or, with ``once``, changes nothing (a mention)."""
    conn.execute("INSERT OR IGNORE INTO record_entities (record_id, entity_id) VALUES (?, ?)", (record_id, entity_id))
    if once:
        link_once(conn, record_id, entity_id, "applies_to", clock.now())
    else:
        edge(conn, record_id, entity_id, "applies_to")


def entities_of(conn: sqlite3.Connection, record_id: str, limit: int = 50) -> list[dict]:
    """The entities a record is linked to: {kind, name}, files first."""
    return [dict(r) for r in conn.execute(
        "SELECT n.kind, n.name FROM record_entities re JOIN nodes n ON n.id = re.entity_id WHERE re.record_id = ? "
        "ORDER BY n.kind != 'file', n.kind, n.name LIMIT ?", (record_id, limit))]


def records_after(conn: sqlite3.Connection, project_id: str, after_seq: int, types: tuple[str, ...],
                  limit: int = 500) -> list[dict]:
    """Current records of a project (these types) inserted after ``after_seq``, oldest first, with ``seq``:
    what entity linking has not looked at yet."""
    marks = ",".join("?" * len(types))
    return [dict(r) for r in conn.execute(
        f"SELECT seq, {COLUMNS} FROM records WHERE project_id = ? AND seq > ? AND type IN ({marks}) "
        f"AND {current_sql()} ORDER BY seq LIMIT ?", (project_id, after_seq, *types, limit))]


def linked_share(conn: sqlite3.Connection, project_id: str, types: tuple[str, ...]) -> tuple[int, int]:
    """(current records of these types linked to at least one entity, all of them) in a project."""
    marks = ",".join("?" * len(types))
    row = conn.execute(
        f"SELECT COUNT(DISTINCT re.record_id), (SELECT COUNT(*) FROM records WHERE project_id = ? AND type IN "
        f"({marks}) AND {current_sql()}) FROM records r JOIN record_entities re ON re.record_id = r.id "
        f"WHERE r.project_id = ? AND r.type IN ({marks}) AND {current_sql('r')}",
        (project_id, *types, project_id, *types)).fetchone()
    return row[0], row[1]


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


def snapshot(conn: sqlite3.Connection, project_id: str, max_edges: int, max_records: int = 300) -> dict:
    """A project's records and what links them, for a force-directed layout (the dashboard's graph).

    Nodes: the current records (pinned, then newest, at most ``max_records``), the older versions they
    superseded (whole chains), and the files and other entities those records apply to. A type whose
    versions are a log (``kinds.FOLDED_TYPES``: the handover) is one node, its current version, with
    ``folded`` = how many older versions it stands for. Names that cannot be files (``is_file_name``: a
    traceback's ``<string>``) are never file nodes, also when an older version stored one. Links (the newest
    ``max_edges``): ``supersedes`` (new → old), ``applies_to`` (record → entity), ``derives_from`` and
    ``spawned_from`` between records. Returns {"nodes", "links", "current_records", "shown_records"}.
    """
    heads = [(r[0], r[1]) for r in conn.execute(
        f"SELECT id, type FROM records WHERE project_id = ? AND {current_sql()} ORDER BY pinned DESC, recorded_at DESC "
        "LIMIT ?", (project_id, max_records))]
    not_a_file = f"SELECT id FROM nodes WHERE project_id = ? AND {NOT_A_FILE_SQL}"
    edges = conn.execute(
        f"""
        WITH RECURSIVE chain(id) AS (
            SELECT value FROM json_each(?)
            UNION
            SELECT e.to_id FROM edges e JOIN chain ON e.from_id = chain.id WHERE e.rel_type = 'supersedes'
        )
        SELECT e.from_id, e.to_id, e.rel_type, e.created_at FROM edges e JOIN chain ON e.from_id = chain.id
        WHERE e.rel_type IN ('supersedes', 'applies_to', 'derives_from', 'spawned_from')
          AND e.to_id NOT IN ({not_a_file})
        UNION ALL
        SELECT e.from_id, e.to_id, e.rel_type, e.created_at FROM edges e
        WHERE e.from_id IN (SELECT value FROM json_each(?)) AND e.rel_type = 'applies_to'
          AND e.to_id NOT IN ({not_a_file})
        ORDER BY created_at DESC LIMIT ?
        """,  # a folded type's head keeps its file links, not its chain
        (jsonfast.dumps([i for i, t in heads if t not in FOLDED_TYPES]), project_id,
         jsonfast.dumps([i for i, t in heads if t in FOLDED_TYPES]), project_id, max_edges),
    ).fetchall()
    wanted = {i for i, _ in heads} | {e["from_id"] for e in edges} | {e["to_id"] for e in edges}
    nodes: dict[str, dict] = {}
    if wanted:
        marks = ",".join("?" * len(wanted))
        for r in conn.execute(f"SELECT id, type, title, superseded_at, pinned FROM records "
                              f"WHERE project_id = ? AND id IN ({marks})", (project_id, *wanted)):
            nodes[r["id"]] = {"id": r["id"], "kind": "record", "type": r["type"], "label": r["title"],
                              "current": r["superseded_at"] is None, "pinned": bool(r["pinned"])}
            if r["type"] in FOLDED_TYPES:
                nodes[r["id"]]["folded"] = conn.execute(
                    "WITH RECURSIVE chain(id) AS (SELECT ? UNION SELECT e.to_id FROM edges e JOIN chain "
                    "ON e.from_id = chain.id WHERE e.rel_type = 'supersedes') SELECT COUNT(*) - 1 FROM chain",
                    (r["id"],)).fetchone()[0]
        for n in conn.execute(f"SELECT id, kind, name FROM nodes WHERE project_id = ? AND id IN ({marks}) "
                              f"AND NOT {NOT_A_FILE_SQL}", (project_id, *wanted)):
            nodes[n["id"]] = {"id": n["id"], "kind": n["kind"], "label": n["name"], "current": True}
    links = [{"source": e["from_id"], "target": e["to_id"], "rel": e["rel_type"]}
             for e in edges if e["from_id"] in nodes and e["to_id"] in nodes]
    total = conn.execute(f"SELECT COUNT(*) FROM records WHERE project_id = ? AND {current_sql()}",
                         (project_id,)).fetchone()[0]
    return {"nodes": list(nodes.values()), "links": links, "current_records": total, "shown_records": len(heads)}


def related(
    conn: sqlite3.Connection, project_id: str, path: str, *, root: str | None = None, depth: int = 2,
    include_superseded: bool = False, limit: int = 50,
) -> list[dict]:
    """Records linked to a file (or to a symbol, package or command of that exact name): directly, then
    through edges up to ``depth`` hops (≤ MAX_DEPTH).

    Each record carries ``hops``: 1 for a direct link, more for records reached through
    supersession or shared entities.
    """
    name = normalize_path(path, root)
    depth = max(1, min(int(depth), MAX_DEPTH))
    start = conn.execute(
        "SELECT id FROM nodes WHERE project_id = ? AND ((kind = 'file' AND (name = ? OR name LIKE ? ESCAPE '\\')) "
        "OR (kind IN ('symbol', 'package', 'command', 'module') AND name = ?))",
        (project_id, name, "%/" + name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_"), path.strip()),
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
        (jsonfast.dumps(seeds), depth, project_id, limit),
    ).fetchall()
    return [dict(r) for r in rows]
