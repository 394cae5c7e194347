"""Records: every statement on the ``records`` table, the named queries and the write policies.

* Scoping, once (:func:`scope_sql`): every read or write by id takes ``project_id`` (that
  project's records and every project's global ones) or ``all_projects=True``; an id or id
  prefix of another project is "no record".
* "Current", once (:func:`current_sql`): not superseded and not archived (rolled up).
* The policies, once: :func:`upsert_by_key` (same value reinforces, a changed value supersedes, a
  stated value outlives an inferred one), :func:`retire`, :func:`reinforce`, :func:`touch`.

Writes validate and redact here (:func:`validate`). Functions take an open connection (see
``db.connect``) and return plain dicts.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence

from agentctx import clock, ids
from agentctx.kinds import CONFIDENCES, SCOPES, SOURCES, TYPES
from agentctx.store import graph
from agentctx.store.db import transaction
from agentctx.store.query import COLUMNS, current_sql, scope_sql

MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 32_000
MAX_KEY_CHARS = 200

STATUSES = ("current", "superseded", "archived", "all")
_ORDERS = {  # named orders for the queries below
    "rank": "pinned DESC, score DESC, recorded_at DESC",
    "newest": "recorded_at DESC, id DESC",
    "oldest": "recorded_at, id",
    "key": "key, recorded_at DESC",
}
_CHUNK = 500  # ids per IN (...) list


class RecordError(ValueError):
    """Bad input for a record operation; the message names the problem."""


class ForeignRecord(RecordError):
    """An incoming record whose id this store holds in another project: refused, never written over."""

    def __init__(self, record_id: str, here: str, incoming: str):
        super().__init__(f"record {record_id} exists here in project {here}; refused for project {incoming}")
        self.record_id, self.here, self.incoming = record_id, here, incoming


def owner(conn: sqlite3.Connection, record_id: str) -> str | None:
    """The project holding this id here (current, retired or in the cold partition), or None."""
    for table in ("records", "records_archive"):
        row = conn.execute(f"SELECT project_id FROM {table} WHERE id = ?", (record_id,)).fetchone()
        if row is not None:
            return row[0]
    return None


def _row(row: sqlite3.Row | None) -> dict | None:
    return dict(row) if row is not None else None


def validate(
    *, type: str, title: str, body: str, scope: str = "project", confidence: str = "explicit",
    key: str | None = None, source: str = "cli",
) -> tuple[str, str]:
    """Check fields; return the (title, body) that will be stored (trimmed, redacted)."""
    if type not in TYPES:
        raise RecordError(f"unknown type {type!r}; expected one of: {', '.join(TYPES)}")
    if scope not in SCOPES:
        raise RecordError(f"unknown scope {scope!r}; expected project or global")
    if confidence not in CONFIDENCES:
        raise RecordError(f"unknown confidence {confidence!r}; expected one of: {', '.join(CONFIDENCES)}")
    if source not in SOURCES:
        raise RecordError(f"unknown source {source!r}")
    if not isinstance(title, str) or not isinstance(body, str):
        raise RecordError("title and body must be text")
    if "\x00" in title or "\x00" in body:
        raise RecordError("title and body must not contain NUL bytes")
    title = " ".join(title.split())
    if not title:
        raise RecordError("a record needs a non-empty title")
    if len(title) > MAX_TITLE_CHARS:
        raise RecordError(f"title is {len(title)} characters; the limit is {MAX_TITLE_CHARS}")
    body = body.strip()
    if len(body) > MAX_BODY_CHARS:
        raise RecordError(
            f"body is {len(body):,} characters; the limit is {MAX_BODY_CHARS:,} "
            "(records are atomic facts: split it)"
        )
    if key is not None and (not key.strip() or len(key) > MAX_KEY_CHARS):
        raise RecordError("key must be non-empty and at most 200 characters")
    from agentctx.redact import redact_all  # compiled patterns: only needed on writes

    title, body = redact_all([title, body])
    if not title.strip():
        raise RecordError("the title is empty once private spans are removed")
    return title, body


# ---------------------------------------------------------------------------------------------
# Reads by id (scoped)


def match_prefix(conn: sqlite3.Connection, ref: str, where: str, params: tuple, *,
                 tables: Sequence[str] = ("records",)) -> dict:
    """The one id lookup: a record by full id or unique id prefix (case-insensitive) among ``tables``
    under the scope ``where``/``params`` (``scope_sql``); ``table`` in the result says where it was.
    RecordError when the id is malformed, not found or ambiguous."""
    ref = (ref or "").strip().upper()
    if not ids.looks_like_id(ref):
        raise RecordError(f"{ref or '(empty)'!s} is not a record id")
    # The scope is part of the query: applied after LIMIT 2, other projects' records sharing the
    # prefix would hide this project's one.
    found: dict[str, dict] = {}
    for table in tables:
        if ids.is_full_id(ref):
            rows = conn.execute(f"SELECT {COLUMNS} FROM {table} WHERE id = ? AND {where}", (ref, *params))
        else:
            rows = conn.execute(f"SELECT {COLUMNS} FROM {table} WHERE id >= ? AND id < ? AND {where} LIMIT 2",
                                (ref, ref + "~", *params))
        for row in rows:
            found.setdefault(row["id"], {**dict(row), "table": table})
    if not found:
        raise RecordError(f"no record {ref}")
    if len(found) > 1:
        raise RecordError(f"{ref} matches several records; give more of the id")
    return next(iter(found.values()))


def resolve(conn: sqlite3.Connection, ref: str, project_id: str | None = None, *,
            all_projects: bool = False) -> dict:
    """A current or retired record by full id or unique id prefix (case-insensitive), else RecordError."""
    rec = match_prefix(conn, ref, *scope_sql(project_id, all_projects))
    del rec["table"]
    return rec


def get(conn: sqlite3.Connection, record_id: str, project_id: str | None = None, *,
        all_projects: bool = False) -> dict | None:
    """The record with exactly this id (within the project, or any with ``all_projects``), or None."""
    where, params = scope_sql(project_id, all_projects)
    return _row(conn.execute(f"SELECT {COLUMNS} FROM records WHERE id = ? AND {where}",
                             (record_id, *params)).fetchone())


def many(conn: sqlite3.Connection, record_ids: Iterable[str], project_id: str | None = None, *,
         all_projects: bool = False) -> dict[str, dict]:
    """{id: record (with ``archived_at``)} for these ids; unknown ids and other projects' are left out."""
    where, params = scope_sql(project_id, all_projects)
    out: dict[str, dict] = {}
    ordered = sorted(set(record_ids))
    for start in range(0, len(ordered), _CHUNK):
        part = ordered[start:start + _CHUNK]
        for row in conn.execute(f"SELECT {COLUMNS}, archived_at FROM records WHERE id IN "
                                f"({','.join('?' * len(part))}) AND {where}", (*part, *params)):
            out[row["id"]] = dict(row)
    return out


def current_among(conn: sqlite3.Connection, project_id: str, record_ids: Sequence[str]) -> set[str]:
    """Which of these ids are current records of the project (or global)."""
    where, params = scope_sql(project_id)
    out: set[str] = set()
    for start in range(0, len(record_ids), _CHUNK):
        part = list(record_ids[start:start + _CHUNK])
        out |= {r[0] for r in conn.execute(
            f"SELECT id FROM records WHERE id IN ({','.join('?' * len(part))}) AND {current_sql()} AND {where}",
            (*part, *params))}
    return out


def retired_among(conn: sqlite3.Connection, project_id: str, record_ids: Sequence[str]) -> set[str]:
    """Which of these ids are superseded records of the project (or global)."""
    where, params = scope_sql(project_id)
    out: set[str] = set()
    for start in range(0, len(record_ids), _CHUNK):
        part = list(record_ids[start:start + _CHUNK])
        out |= {r[0] for r in conn.execute(
            f"SELECT id FROM records WHERE id IN ({','.join('?' * len(part))}) AND superseded_at IS NOT NULL "
            f"AND {where}", (*part, *params))}
    return out


def lineage(conn: sqlite3.Connection, record_id: str, limit: int = 50, *, project_id: str | None = None,
            all_projects: bool = False) -> tuple[list[dict], list[dict]]:
    """(every record this one replaced, directly or through its predecessors, newest first; what
    superseded it, in order), within the scope. A record that superseded several (a merge, a keyed
    value and an explicit ``supersedes``) lists them all."""
    where, params = scope_sql(project_id, all_projects)
    before, after = [], []
    seen = {record_id}
    frontier = [record_id]
    while frontier and len(before) < limit:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM records WHERE superseded_by IN ({','.join('?' * len(frontier))}) AND {where} "
            "ORDER BY recorded_at DESC", (*frontier, *params)).fetchall()
        frontier = []
        for row in rows:
            if row["id"] not in seen and len(before) < limit:
                before.append(dict(row))
                seen.add(row["id"])
                frontier.append(row["id"])
    nxt = get(conn, record_id, project_id, all_projects=all_projects)
    while nxt and nxt["superseded_by"] and nxt["superseded_by"] not in seen and len(after) < limit:
        row = get(conn, nxt["superseded_by"], project_id, all_projects=all_projects)
        if not row:
            break
        after.append(row)
        seen.add(row["id"])
        nxt = row
    return before, after


def predecessor(conn: sqlite3.Connection, record_id: str, project_id: str) -> dict | None:
    """The record this one superseded most recently (None for a first version)."""
    where, params = scope_sql(project_id)
    return _row(conn.execute(f"SELECT {COLUMNS} FROM records WHERE superseded_by = ? AND {where} "
                             "ORDER BY superseded_at DESC LIMIT 1", (record_id, *params)).fetchone())


# ---------------------------------------------------------------------------------------------
# Named queries


def by_key(conn: sqlite3.Connection, project_id: str, key: str) -> dict | None:
    """The record holding ``key`` in this project: the one not superseded (an archived one still
    holds its key, as the unique index ``records_active_key`` says)."""
    return _row(conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND key = ? AND superseded_at IS NULL",
        (project_id, key),
    ).fetchone())


def global_by_key(conn: sqlite3.Connection, key: str, type: str) -> dict | None:
    """The oldest current global record of this type with this key, in any project."""
    return _row(conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE key = ? AND type = ? AND scope = 'global' AND {current_sql()} "
        "ORDER BY recorded_at LIMIT 1", (key, type)).fetchone())


def current(
    conn: sqlite3.Connection, project_id: str, *, include_global: bool = False, types: Iterable[str] = (),
    exclude_types: Iterable[str] = (), scope: str | None = None, confidences: Iterable[str] = (),
    exclude_source: str | None = None, session_id: str | None = None, key_prefix: str | None = None,
    exclude_key_prefix: str | None = None, unpinned: bool = False, ids: Iterable[str] | None = None,
    order: str = "rank", limit: int | None = None,
) -> list[dict]:
    """Current records of a project (with ``include_global``, every project's global ones too),
    filtered, in a named order (``rank``, ``newest``, ``oldest``, ``key``)."""
    where, params = scope_sql(project_id, include_global=include_global)
    clauses: list[str] = [where, current_sql()]
    args: list = list(params)

    def among(column: str, values: Iterable[str], negate: bool = False) -> None:
        values = list(values)
        if values:
            clauses.append(f"{column} {'NOT ' if negate else ''}IN ({','.join('?' * len(values))})")
            args.extend(values)

    among("type", types)
    among("type", exclude_types, negate=True)
    among("confidence", confidences)
    for clause, value in (("scope = ?", scope), ("source != ?", exclude_source), ("session_id = ?", session_id),
                          ("key LIKE ? ESCAPE '\\'", _prefix(key_prefix))):
        if value is not None:
            clauses.append(clause)
            args.append(value)
    if exclude_key_prefix is not None:
        clauses.append("(key IS NULL OR key NOT LIKE ? ESCAPE '\\')")
        args.append(_prefix(exclude_key_prefix))
    if unpinned:
        clauses.append("pinned = 0")
    if ids is not None:
        id_list = list(ids)
        if not id_list:
            return []
        among("id", id_list)
    sql = f"SELECT {COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY {_ORDERS[order]}"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [dict(r) for r in conn.execute(sql, args)]


def _prefix(text: str | None) -> str | None:
    if text is None:
        return None
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def active(
    conn: sqlite3.Connection,
    project_id: str,
    types: Iterable[str] | None = None,
    *,
    limit: int = 50,
    include_global: bool = False,
    project_scoped: Iterable[str] = (),
) -> list[dict]:
    """Current records in ranking order (pinned first, then by stored score and recency).

    With types given, each type is read in ranking order from the ``records_active_rank``
    index (no sort of every current record) and the lists are merged: the digest's read. Records of
    the ``project_scoped`` types among them are read only where their scope is ``project``.
    """
    types = list(types or [])
    if not types:
        return current(conn, project_id, include_global=include_global, limit=limit)
    order = f"ORDER BY {_ORDERS['rank']} LIMIT ?"
    found: dict[str, dict] = {}
    scoped = set(project_scoped)
    for rtype in types:
        scope = " AND scope = 'project'" if rtype in scoped else ""
        for row in conn.execute(
            f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND type = ?{scope} AND {current_sql()} {order}",
            (project_id, rtype, limit),
        ):
            found[row["id"]] = dict(row)
        if include_global:
            for row in conn.execute(
                f"SELECT {COLUMNS} FROM records WHERE scope = 'global' AND type = ? AND {current_sql()} {order}",
                (rtype, limit),
            ):
                found[row["id"]] = dict(row)
    merged = sorted(found.values(), key=lambda r: (r["pinned"], r["score"], r["recorded_at"]), reverse=True)
    return merged[:limit]


def recent(conn: sqlite3.Connection, project_id: str, types: Iterable[str], *, limit: int) -> list[dict]:
    """The project's newest records of these types by insertion, superseded ones included (not
    archived ones): what the project has been busy with."""
    types = list(types)
    return [dict(r) for r in conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND type IN ({','.join('?' * len(types))}) "
        "AND archived_at IS NULL ORDER BY seq DESC LIMIT ?", (project_id, *types, limit))]


def listing(
    conn: sqlite3.Connection, project_id: str, *, ids: Sequence[str] | None = None, types: Iterable[str] = (),
    scope: str | None = None, status: str = "current", limit: int = 100,
) -> list[dict]:
    """Records of a project (and global ones) in one state of ``STATUSES``, with ``archived_at``:
    those ``ids`` (any order), else the newest (pinned first)."""
    state = {
        "current": current_sql(),
        "superseded": "superseded_at IS NOT NULL",
        "archived": "archived_at IS NOT NULL",
        "all": "1",
    }[status]
    where, params = scope_sql(project_id)
    clauses, args = [where, state], list(params)
    if ids is not None:
        if not ids:
            return []
        clauses.append(f"id IN ({','.join('?' * len(ids))})")
        args += list(ids)
    types = list(types)
    if types:
        clauses.append(f"type IN ({','.join('?' * len(types))})")
        args += types
    if scope:
        clauses.append("scope = ?")
        args.append(scope)
    sql = f"SELECT {COLUMNS}, archived_at FROM records WHERE {' AND '.join(clauses)}"
    if ids is None:
        sql += " ORDER BY pinned DESC, recorded_at DESC LIMIT ?"
        args.append(limit)
    return [dict(r) for r in conn.execute(sql, args)]


def global_preferences(conn: sqlite3.Connection, *, limit: int | None = 20, inferred: bool = False) -> list[dict]:
    """The developer profile (ADR-010): current cross-project preferences, stated or reinforced
    (``inferred=True``: also those seen too few times yet, after the others)."""
    confidences = "" if inferred else "AND confidence IN ('explicit', 'reinforced') "
    sql = (f"SELECT {COLUMNS} FROM records WHERE scope = 'global' AND type = 'preference' "
           f"AND {current_sql()} {confidences}"
           "ORDER BY confidence = 'inferred', pinned DESC, reinforce_count DESC, recorded_at DESC")
    args: tuple = ()
    if limit is not None:
        sql, args = sql + " LIMIT ?", (limit,)
    return [dict(r) for r in conn.execute(sql, args)]


def history(
    conn: sqlite3.Connection,
    project_id: str,
    *,
    at: str | None = None,
    known_at: str | None = None,
    types: Iterable[str] | None = None,
    limit: int = 200,
) -> list[dict]:
    """What was true at ``at`` (valid time), as the store knew it at ``known_at`` (transaction time).

    Both default to now. ``history(at="2026-04-01")`` answers "what was our approach in
    April?"; adding ``known_at`` answers "what did we believe then?" even for facts that were
    back-dated or corrected later.
    """
    at = at or clock.now()
    known_at = known_at or clock.now()
    # A record's valid_to is only known from its superseded_at on: before that, the store
    # believed the fact open-ended. So as known at T, it was valid at D when
    #   recorded_at <= T, valid_from <= D, and (not yet superseded at T, or valid_to > D).
    scope, scope_params = scope_sql(project_id)
    params: list = [*scope_params, known_at, at, known_at, at]
    where = (
        f"{scope} AND recorded_at <= ? AND valid_from <= ? "
        "AND (superseded_at IS NULL OR superseded_at > ? OR valid_to > ?)"
    )
    types = list(types or [])
    if types:
        where += f" AND type IN ({','.join('?' * len(types))})"
        params += types
    rows = conn.execute(  # the cold partition (records_archive) answers history too
        f"SELECT {COLUMNS} FROM records WHERE {where} UNION ALL SELECT {COLUMNS} FROM records_archive WHERE {where} "
        "ORDER BY type, valid_from DESC LIMIT ?",
        (*params, *params, limit),
    ).fetchall()
    return [dict(r) for r in rows]


def count_active(conn: sqlite3.Connection, project_id: str | None, *, all_projects: bool = False) -> int:
    """Current records of one project (an index-only count), or of every project."""
    where, params = scope_sql(project_id, all_projects, include_global=False)
    return conn.execute(f"SELECT COUNT(*) FROM records WHERE {where} AND {current_sql()}", params).fetchone()[0]


def count_all(conn: sqlite3.Connection) -> int:
    """Every record of every project, in any state (the cold partition apart)."""
    return conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]


def counts(conn: sqlite3.Connection, project_id: str | None = None) -> dict[str, dict[str, int]]:
    """{type: {"active": n, "superseded": m, "archived": k}} for one project (or all with None).

    Archived records (rolled up) are neither active nor superseded: they are counted apart.
    """
    where, params = ("WHERE project_id = ?", (project_id,)) if project_id else ("", ())
    out: dict[str, dict[str, int]] = {}
    for row in conn.execute(
        "SELECT type, CASE WHEN superseded_at IS NOT NULL THEN 'superseded' "
        "WHEN archived_at IS NOT NULL THEN 'archived' ELSE 'active' END AS state, COUNT(*) AS n "
        f"FROM records {where} GROUP BY 1, 2",
        params,
    ):
        slot = out.setdefault(row["type"], {"active": 0, "superseded": 0, "archived": 0})
        slot[row["state"]] += row["n"]
    return out


def project_ids(conn: sqlite3.Connection) -> list[str]:
    """Every project that has records, sorted."""
    return [r[0] for r in conn.execute("SELECT DISTINCT project_id FROM records ORDER BY project_id")]


def dump(conn: sqlite3.Connection, project_id: str | None, *, include_superseded: bool = True) -> Iterator[dict]:
    """Every record of one project (None: of every project), oldest first: the export's read."""
    where, params = [], []
    if project_id:
        where.append("project_id = ?")
        params.append(project_id)
    if not include_superseded:
        where.append("superseded_at IS NULL")
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    for row in conn.execute(f"SELECT {COLUMNS} FROM records {clause} ORDER BY project_id, seq", params):
        yield dict(row)


# ---------------------------------------------------------------------------------------------
# Writes: the primitives (inside the caller's transaction)


def _insert_row(conn: sqlite3.Connection, row: dict) -> None:
    """Insert a row whose title and body ``validate`` returned (redacted): stamped as such."""
    from agentctx.redact import stamp

    stamped = dict(row, redaction_stamp=stamp(row["title"], row["body"] or ""))
    try:
        conn.execute(f"INSERT INTO records ({', '.join(stamped)}) VALUES ({', '.join('?' * len(stamped))})",
                     tuple(stamped.values()))
    except sqlite3.OperationalError as exc:  # a store before migration m010 (only tests write to one)
        if "redaction_stamp" not in str(exc):
            raise
        conn.execute(f"INSERT INTO records ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))


def insert(
    conn: sqlite3.Connection, project_id: str, *, type: str, title: str, body: str, stamp: str,
    key: str | None = None, scope: str = "project", pinned: bool = False, confidence: str = "explicit",
    valid_from: str | None = None, source: str = "cli", session_id: str | None = None,
    record_id: str | None = None,
) -> str:
    """Insert a validated new record inside the caller's transaction (no rules applied); its id."""
    new_id = record_id or ids.new_id()
    _insert_row(conn, {
        "id": new_id, "project_id": project_id, "type": type, "key": key, "title": title, "body": body,
        "scope": scope, "pinned": int(bool(pinned)), "confidence": confidence, "valid_from": valid_from or stamp,
        "recorded_at": stamp, "source": source, "session_id": session_id,
    })
    return new_id


def retire(
    conn: sqlite3.Connection, record_id: str, *, stamp: str, project_id: str | None = None,
    all_projects: bool = False, by: str | None = None, valid_to: str | None = None, rel: str = "supersedes",
    mark_updated: bool = False,
) -> bool:
    """Take a current record out of the current view, inside the caller's transaction: every
    retirement (supersession, a duplicate merged, a deleted team block, a cleared preference).

    ``stamp`` is the transaction time; ``by`` the successor (recorded, with a ``rel`` edge from it:
    ``supersedes``, or ``derives_from`` for a merged duplicate); ``valid_to`` when the fact stopped
    being true (never before its ``valid_from``; None leaves it as it is); ``mark_updated`` sets
    ``updated_at`` too. History keeps the record. A record already retired is left alone (False).
    """
    where, params = scope_sql(project_id, all_projects)
    cur = conn.execute(
        "UPDATE records SET superseded_at = ?, superseded_by = ?, valid_to = CASE WHEN ? IS NULL THEN valid_to "
        "WHEN ? > valid_from THEN ? ELSE valid_from END" + (", updated_at = ?" if mark_updated else "")
        + f" WHERE id = ? AND superseded_at IS NULL AND {where}",
        (stamp, by, valid_to, valid_to, valid_to, *((stamp,) if mark_updated else ()), record_id, *params),
    )
    if by:
        graph.link_once(conn, by, record_id, rel, stamp)
    return cur.rowcount > 0


def reinforce(
    conn: sqlite3.Connection, record_id: str, *, project_id: str | None = None, all_projects: bool = False,
    times: int = 1, stamp: str | None = None, confidence: str | None = None, pin: bool = False,
    accesses: int = 0,
) -> None:
    """The fact was stated again: ``reinforce_count`` + ``times``; optionally a new confidence, the
    pin and ``accesses`` more uses (a merged duplicate's). Only what changes is written, so a plain
    reinforcement leaves the digest generation alone."""
    where, params = scope_sql(project_id, all_projects)
    sets, args = ["reinforce_count = reinforce_count + ?"], [times]
    if confidence is not None:
        sets.append("confidence = ?")
        args.append(confidence)
    if pin:
        sets.append("pinned = 1")
    if accesses:
        sets.append("access_count = access_count + ?")
        args.append(accesses)
    sets.append("updated_at = ?")
    args.append(stamp or clock.now())
    conn.execute(f"UPDATE records SET {', '.join(sets)} WHERE id = ? AND {where}", (*args, record_id, *params))


def set_confidence(conn: sqlite3.Connection, record_ids: Iterable[str], confidence: str, *,
                   project_id: str | None = None, all_projects: bool = False, stamp: str | None = None) -> None:
    """Set the confidence of these records (e.g. ``reinforced`` once seen in enough sessions)."""
    where, params = scope_sql(project_id, all_projects)
    stamp = stamp or clock.now()
    conn.executemany(f"UPDATE records SET confidence = ?, updated_at = ? WHERE id = ? AND {where}",
                     [(confidence, stamp, rid, *params) for rid in record_ids])


_REVISABLE = ("title", "body", "type", "scope", "confidence")


def revise(conn: sqlite3.Connection, record_id: str, *, stamp: str, project_id: str | None = None,
           all_projects: bool = False, **fields: str) -> None:
    """Correct a record in place (validated ``title``, ``body``, ``type``, ``scope``, ``confidence``);
    it is embedded again. Inside the caller's transaction."""
    unknown = set(fields) - set(_REVISABLE)
    if unknown:
        raise TypeError(f"cannot revise {', '.join(sorted(unknown))}")
    where, params = scope_sql(project_id, all_projects)
    names = [n for n in _REVISABLE if n in fields]
    conn.execute(
        f"UPDATE records SET {''.join(f'{n} = ?, ' for n in names)}updated_at = ?, pending_embedding = 1 "
        f"WHERE id = ? AND {where}",
        (*(fields[n] for n in names), stamp, record_id, *params),
    )


def touch(conn: sqlite3.Connection, record_ids: Iterable[str], stamp: str | None = None, *,
          project_id: str | None = None, all_projects: bool = False) -> None:
    """Count an access (injection or retrieval) for each record."""
    where, params = scope_sql(project_id, all_projects)
    stamp = stamp or clock.now()
    conn.executemany(
        f"UPDATE records SET access_count = access_count + 1, last_accessed = ? WHERE id = ? AND {where}",
        [(stamp, rid, *params) for rid in record_ids],
    )


# ---------------------------------------------------------------------------------------------
# Writes: the operations (each its own transaction)


def _supersedable(conn: sqlite3.Connection, ref: str, project_id: str) -> dict:
    old = resolve(conn, ref, project_id)
    if old["superseded_at"]:
        raise RecordError(
            f"record {old['id']} is already superseded (by {old['superseded_by']}); supersede that one"
        )
    return old


def upsert_by_key(
    conn: sqlite3.Connection,
    project_id: str,
    key: str,
    *,
    type: str,
    title: str,
    body: str = "",
    scope: str = "project",
    confidence: str = "explicit",
    pinned: bool = False,
    valid_from: str | None = None,
    source: str = "cli",
    session_id: str | None = None,
    supersedes: str | None = None,
    record_id: str | None = None,
    recorded_at: str | None = None,
    same: Callable[[dict, str, str], bool] | None = None,
    reinforce_same: bool = True,
    keep_stated: bool = False,
) -> tuple[str, dict]:
    """Store the value of ``key`` in this project: the one policy for keyed facts (profile facts,
    test results, error signatures, extracted facts, ``--key`` on the command line). (outcome, record):

    * same value: the record holding the key is reinforced and returned ("reinforced"); with
      ``reinforce_same=False`` nothing is written ("unchanged"). Same means the same stored text;
      ``same(holder, title, body)`` widens it (the holder's wording is then kept): observations of
      one error reinforce whatever their wording, extraction compares normalized text;
    * changed value: a new record supersedes the holder ("superseded"; "added" when nothing held
      the key). History keeps the old value;
    * a stated value wins: with ``keep_stated``, an inferred value never replaces a stated one
      (explicit or reinforced): nothing is written ("kept").

    An explicit ``supersedes`` (a record of this project, or a global one) is retired too and
    rules out reinforcement.
    """
    checked = None
    if same is not None or not reinforce_same or keep_stated:
        checked = by_key(conn, project_id, key)
        if checked is not None and same is not None and same(checked, title, body):
            title, body = checked["title"], checked["body"]
    title, body = validate(
        type=type, title=title, body=body, scope=scope, confidence=confidence, key=key, source=source
    )
    if checked is not None and not supersedes:  # outcomes that write nothing take no write lock
        if (checked["title"], checked["body"]) == (title, body) and not reinforce_same:
            return "unchanged", checked
        if _stated_wins(checked, title, body, confidence, keep_stated):
            return "kept", checked
    stamp = recorded_at or clock.now()
    valid_from = valid_from or stamp
    with transaction(conn):
        olds = [_supersedable(conn, supersedes, project_id)] if supersedes else []
        holder = by_key(conn, project_id, key)
        if holder and all(holder["id"] != o["id"] for o in olds):
            if not olds and (holder["title"], holder["body"]) == (title, body):
                if not reinforce_same:
                    return "unchanged", holder
                reinforce(conn, holder["id"], project_id=project_id, stamp=stamp)
                return "reinforced", get(conn, holder["id"], project_id)
            if not olds and _stated_wins(holder, title, body, confidence, keep_stated):
                return "kept", holder
            olds.append(holder)
        new_id = _replace(conn, project_id, olds, stamp=stamp, valid_from=valid_from, record_id=record_id, fields=dict(
            type=type, key=key, title=title, body=body, scope=scope, pinned=pinned, confidence=confidence,
            source=source, session_id=session_id))
    # Here a holder is always among the retired (appended above, or the explicit ``supersedes``).
    return ("superseded" if holder else "added"), get(conn, new_id, project_id)


def _stated_wins(holder: dict, title: str, body: str, confidence: str, keep_stated: bool) -> bool:
    return (keep_stated and confidence == "inferred" and holder["confidence"] != "inferred"
            and (holder["title"], holder["body"]) != (title, body))


def _replace(conn: sqlite3.Connection, project_id: str, olds: list[dict], *, stamp: str, valid_from: str,
             record_id: str | None, fields: dict) -> str:
    """Retire ``olds`` (superseded by the new record) and insert it; its id."""
    new_id = record_id or ids.new_id()
    for old in olds:
        retire(conn, old["id"], stamp=stamp, project_id=project_id, by=new_id, valid_to=valid_from)
    return insert(conn, project_id, stamp=stamp, valid_from=valid_from, record_id=new_id, **fields)


def add(
    conn: sqlite3.Connection,
    project_id: str,
    *,
    type: str,
    title: str,
    body: str = "",
    scope: str = "project",
    key: str | None = None,
    confidence: str = "explicit",
    pinned: bool = False,
    valid_from: str | None = None,
    source: str = "cli",
    session_id: str | None = None,
    supersedes: str | None = None,
    record_id: str | None = None,
    recorded_at: str | None = None,
) -> dict:
    """Store a new record and return it.

    ``supersedes`` retires that record (this project's, or a global one) explicitly. With a
    ``key`` the rules of :func:`upsert_by_key` apply: a new ``profile.test_command`` replaces the
    old; the same statement again reinforces the record holding the key, which is returned.
    Without either, an exact restatement (:func:`restatement`) reinforces the current record that
    already says it, returned with ``"reinforced": True``, instead of storing a second one.
    """
    fields = dict(type=type, title=title, body=body, scope=scope, confidence=confidence, pinned=pinned,
                  valid_from=valid_from, source=source, session_id=session_id, supersedes=supersedes,
                  record_id=record_id, recorded_at=recorded_at)
    if key is not None:
        return upsert_by_key(conn, project_id, key, **fields)[1]
    title, body = validate(type=type, title=title, body=body, scope=scope, confidence=confidence, source=source)
    stamp = recorded_at or clock.now()
    with transaction(conn):
        olds = [_supersedable(conn, supersedes, project_id)] if supersedes else []
        same = None if olds or record_id else restatement(conn, project_id, type=type, scope=scope, title=title,
                                                           body=body)
        if same is not None:
            reinforce(conn, same["id"], project_id=project_id, stamp=stamp, pin=pinned)
            return {**get(conn, same["id"], project_id), "reinforced": True}
        new_id = _replace(conn, project_id, olds, stamp=stamp, valid_from=valid_from or stamp, record_id=record_id,
                          fields=dict(type=type, key=None, title=title, body=body, scope=scope, pinned=pinned,
                                      confidence=confidence, source=source, session_id=session_id))
    return get(conn, new_id, project_id)


def _normalized(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(" .!?;:,")


def restatement(conn: sqlite3.Connection, project_id: str, *, type: str, scope: str, title: str,
                body: str) -> dict | None:
    """The current record of this project that already says exactly this: same type and scope, the
    same title and body once case, spacing and trailing punctuation are set aside. None otherwise."""
    want = (_normalized(title), _normalized(body))
    head = title.rstrip(" .!?;:,")
    pattern = head.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    for row in conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND type = ? AND scope = ? AND {current_sql()} "
        "AND title LIKE ? ESCAPE '\\' ORDER BY recorded_at LIMIT 50", (project_id, type, scope, pattern),
    ):
        if (_normalized(row["title"]), _normalized(row["body"] or "")) == want:
            return dict(row)
    return None


def title_from_body(body: str, limit: int = 160) -> str:
    """A title for a fact given only as a body: its first sentence (of its first line), clipped at a word.
    A superseding record gets this when no title is given, so its title states the new fact."""
    line = next((ln.strip() for ln in (body or "").splitlines() if ln.strip()), "")
    sentence = re.match(r"^(.+?[.!?])(?=\s|$)", line)
    if sentence and len(sentence.group(1)) >= 8:
        line = sentence.group(1)
    line = " ".join(line.split()).rstrip(" .")
    if len(line) > limit:
        line = line[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
    return line


def supersede(
    conn: sqlite3.Connection,
    project_id: str,
    old_ref: str,
    *,
    body: str,
    title: str | None = None,
    rationale: str | None = None,
    valid_from: str | None = None,
    source: str = "cli",
    session_id: str | None = None,
) -> dict:
    """Retire ``old_ref`` (this project's, or a global one) and store its replacement (same type,
    scope and key, in the old record's project). Without ``title`` the new record is titled by the
    first sentence of ``body`` (:func:`title_from_body`): never the old title, which states the old fact."""
    old = _supersedable(conn, old_ref, project_id)
    text = body.strip()
    if rationale and rationale.strip():
        text = f"{text}\n\nWhy it changed: {rationale.strip()}" if text else f"Why it changed: {rationale.strip()}"
    if not (title or "").strip() and not body.strip():
        raise RecordError("say what is true now: a body (its first sentence becomes the title) or a title")
    return add(
        conn, old["project_id"], type=old["type"], title=(title or "").strip() or title_from_body(body), body=text,
        scope=old["scope"], key=old["key"], confidence="explicit", pinned=bool(old["pinned"]),
        valid_from=valid_from, source=source, session_id=session_id, supersedes=old["id"],
    )


def edit(
    conn: sqlite3.Connection,
    ref: str,
    *,
    title: str | None = None,
    body: str | None = None,
    type: str | None = None,
    scope: str | None = None,
    confidence: str | None = None,
    project_id: str | None = None,
    all_projects: bool = False,
) -> dict:
    """Correct an active record in place (a typo, not a change in the world: use supersede)."""
    rec = resolve(conn, ref, project_id, all_projects=all_projects)
    if rec["superseded_at"]:
        raise RecordError(f"record {rec['id']} is superseded by {rec['superseded_by']}; edit that one")
    new_title, new_body = validate(
        type=type or rec["type"], title=rec["title"] if title is None else title,
        body=rec["body"] if body is None else body, scope=scope or rec["scope"],
        confidence=confidence or rec["confidence"], source="cli",
    )
    with transaction(conn):
        revise(conn, rec["id"], stamp=clock.now(), project_id=project_id, all_projects=all_projects,
               title=new_title, body=new_body, type=type or rec["type"], scope=scope or rec["scope"],
               confidence=confidence or rec["confidence"])
    return get(conn, rec["id"], rec["project_id"])  # its own project: a global record may have become local


def pin(conn: sqlite3.Connection, ref: str, on: bool = True, project_id: str | None = None, *,
        all_projects: bool = False) -> dict:
    """Pin (or unpin) a record: pinned records come first in every injection."""
    rec = resolve(conn, ref, project_id, all_projects=all_projects)
    if on and rec["superseded_at"]:
        raise RecordError(f"record {rec['id']} is superseded; pin its successor {rec['superseded_by']}")
    where, params = scope_sql(project_id, all_projects)
    conn.execute(f"UPDATE records SET pinned = ?, updated_at = ? WHERE id = ? AND {where}",
                 (int(on), clock.now(), rec["id"], *params))
    return get(conn, rec["id"], project_id, all_projects=all_projects)


RESTORE_FIELDS = (
    "id", "type", "key", "title", "body", "scope", "pinned", "confidence", "reinforce_count",
    "valid_from", "valid_to", "recorded_at", "superseded_at", "superseded_by", "updated_at",
    "access_count", "last_accessed", "score", "source", "session_id",
)
# Accepted on import and ignored: the store's own columns, and fields older versions exported.
IGNORED_FIELDS = ("project_id", "seq", "project", "claudemd_drift_score")


_COUNT_FIELDS = ("reinforce_count", "access_count")


def check_restore_types(data: object) -> dict:
    """``data`` when every field of an exported record has its type (text or null; counts: whole numbers
    ≥ 0; ``pinned``: true/false or 0/1; ``score``: a finite number); RecordError naming the first that has not."""
    if not isinstance(data, dict):
        raise RecordError("each line must be a JSON object")
    for name, value in data.items():
        if name in IGNORED_FIELDS or value is None:
            continue
        if name in _COUNT_FIELDS:
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62
            want = "a whole number ≥ 0"
        elif name == "pinned":
            ok, want = isinstance(value, bool) or value in (0, 1) and isinstance(value, int), "true or false"
        elif name == "score":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            want = "a finite number"
        else:
            ok, want = isinstance(value, str), "text"
        if not ok:
            raise RecordError(f"{name} must be {want}, not {_json_kind(value)}")
    return data


def _json_kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def _restored_row(conn: sqlite3.Connection, project_id: str, data: dict, *, check_exists: bool = True) -> dict | None:
    """The row :func:`restore` inserts, validated and redacted (a current holder of its key already
    retired in its favour), or None when ``check_exists`` and this project holds its id; ForeignRecord
    when another project holds it (never written over)."""
    check_restore_types(data)
    unknown = set(data) - set(RESTORE_FIELDS) - set(IGNORED_FIELDS)
    if unknown:
        raise RecordError(f"unknown field(s): {', '.join(sorted(unknown))}")
    title, body = validate(
        type=data.get("type", ""), title=data.get("title", ""), body=data.get("body") or "",
        scope=data.get("scope") or "project", confidence=data.get("confidence") or "explicit",
        key=data.get("key"), source=data.get("source") or "import",
    )
    rid = (data.get("id") or ids.new_id()).strip().upper()
    if not ids.is_full_id(rid):
        raise RecordError(f"id {rid!r} is not a 26-character ULID")
    if check_exists:
        held_by = owner(conn, rid)  # ids are unique across projects, the cold partition included
        if held_by is not None and held_by != project_id:
            raise ForeignRecord(rid, held_by, project_id)
        if held_by is not None:
            return None
    stamp = clock.now()
    times = {}
    for name in ("valid_from", "valid_to", "recorded_at", "superseded_at", "updated_at", "last_accessed"):
        value = data.get(name)
        if value in (None, ""):
            times[name] = None
            continue
        try:
            times[name] = clock.parse(str(value))
        except ValueError as exc:
            raise RecordError(f"{name}: {exc}") from None
    recorded_at = times["recorded_at"] or stamp
    row = {
        "id": rid, "project_id": project_id, "type": data["type"], "key": data.get("key"),
        "title": title, "body": body, "scope": data.get("scope") or "project",
        "pinned": int(bool(data.get("pinned"))), "confidence": data.get("confidence") or "explicit",
        "reinforce_count": int(data.get("reinforce_count") or 0),
        "valid_from": times["valid_from"] or recorded_at, "valid_to": times["valid_to"],
        "recorded_at": recorded_at, "superseded_at": times["superseded_at"],
        "superseded_by": (data.get("superseded_by") or None),
        "updated_at": times["updated_at"], "access_count": int(data.get("access_count") or 0),
        "last_accessed": times["last_accessed"], "score": 1.0 if data.get("score") is None else float(data["score"]),
        "source": data.get("source") or "import", "session_id": data.get("session_id"),
    }
    if row["key"] and not row["superseded_at"]:
        same = by_key(conn, project_id, row["key"])
        if same:
            retire(conn, same["id"], stamp=stamp, project_id=project_id, by=rid, valid_to=row["valid_from"])
    return row


def restore(conn: sqlite3.Connection, project_id: str, data: dict) -> str:
    """Insert one exported record as it was (history included); no transaction of its own.

    Returns "added", or "exists" when this project already holds a record with that id; ForeignRecord
    when another project holds it (never written over). Used by import, so an export → import round
    trip keeps ids, both time axes and supersession.
    """
    row = _restored_row(conn, project_id, data)
    if row is None:
        return "exists"
    _insert_row(conn, row)
    return "added"


def restore_new(conn: sqlite3.Connection, items: list[tuple[str, dict]]) -> int:
    """:func:`restore` for many records the caller knows are not in the store (no id check), in one
    statement; (project id, data) pairs. RecordError for the first bad one (nothing inserted then, but
    a key holder retired before it stays retired: run it inside a savepoint). How many were added."""
    from agentctx.redact import stamp

    rows = [_restored_row(conn, pid, data, check_exists=False) for pid, data in items]
    if not rows:
        return 0
    columns = list(rows[0]) + ["redaction_stamp"]
    conn.executemany(f"INSERT INTO records ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                     [(*row.values(), stamp(row["title"], row["body"] or "")) for row in rows])
    return len(rows)
