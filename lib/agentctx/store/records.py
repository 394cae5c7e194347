"""Record operations: record, get, edit, pin, supersede (explicit and by key), history.

Every write goes through here, so validation, redaction and supersession rules live in
one place. Functions take an open connection (see ``db.connect``) and return plain dicts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from agentctx import clock, ids
from agentctx.scoring import CONFIDENCES, SCOPES, TYPES
from agentctx.store.db import transaction

MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 32_000
MAX_KEY_CHARS = 200
SOURCES = ("llm_extraction", "hook_observation", "mcp_tool", "cli", "import", "demo", "user_statement")

COLUMNS = (
    "id, project_id, type, key, title, body, scope, pinned, confidence, reinforce_count, "
    "valid_from, valid_to, recorded_at, superseded_at, superseded_by, updated_at, access_count, "
    "last_accessed, score, source, session_id"
)


class RecordError(ValueError):
    """Bad input for a record operation; the message names the problem."""


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
    from agentctx.redact import redact  # compiled patterns: only needed on writes

    title, body = redact(title), redact(body)
    if not title.strip():
        raise RecordError("the title is empty once private spans are removed")
    return title, body


def resolve(conn: sqlite3.Connection, ref: str, project_id: str | None = None) -> dict:
    """A record by full id or unique id prefix (case-insensitive), else RecordError."""
    ref = (ref or "").strip().upper()
    if not ids.looks_like_id(ref):
        raise RecordError(f"{ref or '(empty)'!s} is not a record id")
    # The project filter is part of the query: applied after LIMIT 2, other projects'
    # records sharing the prefix would hide this project's one.
    where, params = ("", ()) if project_id is None else (" AND (project_id = ? OR scope = 'global')", (project_id,))
    if len(ref) == 26:
        rows = conn.execute(f"SELECT {COLUMNS} FROM records WHERE id = ?{where}", (ref, *params)).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM records WHERE id >= ? AND id < ?{where} LIMIT 2", (ref, ref + "~", *params)
        ).fetchall()
    if not rows:
        raise RecordError(f"no record {ref}")
    if len(rows) > 1:
        raise RecordError(f"{ref} matches several records; give more of the id")
    return dict(rows[0])


def get_many(conn: sqlite3.Connection, refs: Sequence[str], project_id: str | None = None) -> list[dict]:
    """Records for several refs, in the order given; RecordError names the first bad one."""
    return [resolve(conn, ref, project_id) for ref in refs]


def _active_by_key(conn: sqlite3.Connection, project_id: str, key: str) -> dict | None:
    return _row(conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND key = ? AND superseded_at IS NULL",
        (project_id, key),
    ).fetchone())


def retire(
    conn: sqlite3.Connection, record_id: str, *, stamp: str, by: str | None = None, valid_to: str | None = None
) -> None:
    """Take a current record out of the current view, inside the caller's transaction.

    ``stamp`` is the transaction time; ``by`` the successor (recorded, with a ``supersedes``
    edge); ``valid_to`` when the fact stopped being true (never before its ``valid_from``; None
    leaves it as it is). History keeps the record. A record already retired is left alone.
    """
    conn.execute(
        "UPDATE records SET superseded_at = ?, superseded_by = ?, valid_to = CASE WHEN ? IS NULL THEN valid_to "
        "WHEN ? > valid_from THEN ? ELSE valid_from END WHERE id = ? AND superseded_at IS NULL",
        (stamp, by, valid_to, valid_to, valid_to, record_id),
    )
    if by:
        conn.execute(
            "INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, weight, created_at) "
            "VALUES (?, ?, ?, 'supersedes', 1.0, ?)",
            (ids.new_id(), by, record_id, stamp),
        )


def _check_supersedable(old: dict, project_id: str) -> None:
    if old["superseded_at"]:
        raise RecordError(
            f"record {old['id']} is already superseded (by {old['superseded_by']}); supersede that one"
        )
    if old["project_id"] != project_id and old["scope"] != "global":
        raise RecordError(f"record {old['id']} belongs to another project")


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

    ``supersedes`` retires that record explicitly. A ``key`` retires the active record
    with the same key in this project (a new ``profile.test_command`` replaces the old);
    if that record already says the same thing, it is reinforced instead and returned.
    """
    title, body = validate(
        type=type, title=title, body=body, scope=scope, confidence=confidence, key=key, source=source
    )
    stamp = recorded_at or clock.now()
    valid_from = valid_from or stamp
    new_id = record_id or ids.new_id()
    with transaction(conn):
        olds: list[dict] = []
        if supersedes:
            old = resolve(conn, supersedes)
            _check_supersedable(old, project_id)
            olds.append(old)
        if key:
            same = _active_by_key(conn, project_id, key)
            if same and all(same["id"] != o["id"] for o in olds):
                if same["title"] == title and same["body"] == body and not olds:
                    conn.execute(
                        "UPDATE records SET reinforce_count = reinforce_count + 1, updated_at = ? WHERE id = ?",
                        (stamp, same["id"]),
                    )
                    return resolve(conn, same["id"])
                olds.append(same)
        for old in olds:
            retire(conn, old["id"], stamp=stamp, by=new_id, valid_to=valid_from)
        conn.execute(
            "INSERT INTO records (id, project_id, type, key, title, body, scope, pinned, confidence, "
            "valid_from, recorded_at, source, session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (new_id, project_id, type, key, title, body, scope, int(bool(pinned)), confidence,
             valid_from, stamp, source, session_id),
        )
    return resolve(conn, new_id)


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
    """Retire ``old_ref`` and store its replacement (same type, scope and key)."""
    old = resolve(conn, old_ref)
    _check_supersedable(old, project_id)
    text = body.strip()
    if rationale and rationale.strip():
        text = f"{text}\n\nWhy it changed: {rationale.strip()}" if text else f"Why it changed: {rationale.strip()}"
    return add(
        conn, old["project_id"], type=old["type"], title=title or old["title"], body=text,
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
) -> dict:
    """Correct an active record in place (a typo, not a change in the world: use supersede)."""
    rec = resolve(conn, ref, project_id)
    if rec["superseded_at"]:
        raise RecordError(f"record {rec['id']} is superseded by {rec['superseded_by']}; edit that one")
    new_title, new_body = validate(
        type=type or rec["type"], title=rec["title"] if title is None else title,
        body=rec["body"] if body is None else body, scope=scope or rec["scope"],
        confidence=confidence or rec["confidence"], source="cli",
    )
    with transaction(conn):
        conn.execute(
            "UPDATE records SET title = ?, body = ?, type = ?, scope = ?, confidence = ?, updated_at = ?, "
            "pending_embedding = 1 WHERE id = ?",
            (new_title, new_body, type or rec["type"], scope or rec["scope"],
             confidence or rec["confidence"], clock.now(), rec["id"]),
        )
    return resolve(conn, rec["id"])


def pin(conn: sqlite3.Connection, ref: str, on: bool = True, project_id: str | None = None) -> dict:
    """Pin (or unpin) a record: pinned records come first in every injection."""
    rec = resolve(conn, ref, project_id)
    if on and rec["superseded_at"]:
        raise RecordError(f"record {rec['id']} is superseded; pin its successor {rec['superseded_by']}")
    conn.execute("UPDATE records SET pinned = ?, updated_at = ? WHERE id = ?", (int(on), clock.now(), rec["id"]))
    return resolve(conn, rec["id"])


def lineage(conn: sqlite3.Connection, record_id: str, limit: int = 50) -> tuple[list[dict], list[dict]]:
    """(what this record superseded, oldest last; what superseded it, in order)."""
    before, after = [], []
    seen = {record_id}
    current = record_id
    for _ in range(limit):
        row = _row(conn.execute(
            f"SELECT {COLUMNS} FROM records WHERE superseded_by = ? ORDER BY recorded_at DESC LIMIT 1",
            (current,),
        ).fetchone())
        if not row or row["id"] in seen:
            break
        before.append(row)
        seen.add(row["id"])
        current = row["id"]
    nxt = _row(conn.execute("SELECT superseded_by FROM records WHERE id = ?", (record_id,)).fetchone())
    while nxt and nxt["superseded_by"] and nxt["superseded_by"] not in seen and len(after) < limit:
        row = _row(conn.execute(f"SELECT {COLUMNS} FROM records WHERE id = ?", (nxt["superseded_by"],)).fetchone())
        if not row:
            break
        after.append(row)
        seen.add(row["id"])
        nxt = row
    return before, after


def active(
    conn: sqlite3.Connection,
    project_id: str,
    types: Iterable[str] | None = None,
    *,
    limit: int = 50,
    include_global: bool = False,
) -> list[dict]:
    """Current records (not superseded, not archived), pinned first, then by stored score and recency.

    With types given, each type is read in ranking order from the ``records_active_rank``
    index (no sort of every current record) and the lists are merged.
    """
    order = "ORDER BY pinned DESC, score DESC, recorded_at DESC LIMIT ?"
    types = list(types or [])
    if not types:
        where = "(project_id = ?" + (" OR scope = 'global')" if include_global else ")")
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM records WHERE {where} AND superseded_at IS NULL AND archived_at IS NULL {order}", (project_id, limit)
        ).fetchall()
        return [dict(r) for r in rows]
    found: dict[str, dict] = {}
    for rtype in types:
        for row in conn.execute(
            f"SELECT {COLUMNS} FROM records WHERE project_id = ? AND type = ? AND superseded_at IS NULL AND archived_at IS NULL {order}",
            (project_id, rtype, limit),
        ):
            found[row["id"]] = dict(row)
        if include_global:
            for row in conn.execute(
                f"SELECT {COLUMNS} FROM records WHERE scope = 'global' AND type = ? AND superseded_at IS NULL AND archived_at IS NULL {order}",
                (rtype, limit),
            ):
                found[row["id"]] = dict(row)
    merged = sorted(found.values(), key=lambda r: (r["pinned"], r["score"], r["recorded_at"]), reverse=True)
    return merged[:limit]


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
    params: list = [project_id, known_at, at, known_at, at]
    where = (
        "(project_id = ? OR scope = 'global') AND recorded_at <= ? AND valid_from <= ? "
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


def count_active(conn: sqlite3.Connection, project_id: str) -> int:
    """Current records of one project (an index-only count)."""
    return conn.execute(
        "SELECT COUNT(*) FROM records WHERE project_id = ? AND superseded_at IS NULL AND archived_at IS NULL",
        (project_id,),
    ).fetchone()[0]


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


def touch(conn: sqlite3.Connection, record_ids: Iterable[str], stamp: str | None = None) -> None:
    """Count an access (injection or retrieval) for each record."""
    stamp = stamp or clock.now()
    conn.executemany(
        "UPDATE records SET access_count = access_count + 1, last_accessed = ? WHERE id = ?",
        [(stamp, rid) for rid in record_ids],
    )


def global_preferences(conn: sqlite3.Connection, *, limit: int = 20) -> list[dict]:
    """The developer profile: cross-project preferences stated or reinforced (ADR-010)."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE scope = 'global' AND type = 'preference' "
        "AND superseded_at IS NULL AND archived_at IS NULL AND confidence IN ('explicit', 'reinforced') "
        "ORDER BY pinned DESC, reinforce_count DESC, recorded_at DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [dict(r) for r in rows]


RESTORE_FIELDS = (
    "id", "type", "key", "title", "body", "scope", "pinned", "confidence", "reinforce_count",
    "valid_from", "valid_to", "recorded_at", "superseded_at", "superseded_by", "updated_at",
    "access_count", "last_accessed", "score", "source", "session_id",
)


def restore(conn: sqlite3.Connection, project_id: str, data: dict) -> str:
    """Insert one exported record as it was (history included); no transaction of its own.

    Returns "added", or "exists" when a record with that id is already stored. Used by
    import, so an export → import round trip keeps ids, both time axes and supersession.
    """
    if not isinstance(data, dict):
        raise RecordError("each line must be a JSON object")
    unknown = set(data) - set(RESTORE_FIELDS) - {"project_id", "seq", "project", "claudemd_drift_score"}
    if unknown:
        raise RecordError(f"unknown field(s): {', '.join(sorted(unknown))}")
    title, body = validate(
        type=data.get("type", ""), title=data.get("title", ""), body=data.get("body") or "",
        scope=data.get("scope") or "project", confidence=data.get("confidence") or "explicit",
        key=data.get("key"), source=data.get("source") or "import",
    )
    rid = (data.get("id") or ids.new_id()).strip().upper()
    if not ids.looks_like_id(rid) or len(rid) != 26:
        raise RecordError(f"id {rid!r} is not a 26-character ULID")
    if conn.execute("SELECT 1 FROM records WHERE id = ?", (rid,)).fetchone():
        return "exists"
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
        same = _active_by_key(conn, project_id, row["key"])
        if same:
            retire(conn, same["id"], stamp=stamp, by=rid, valid_to=row["valid_from"])
    names = ", ".join(row)
    conn.execute(f"INSERT INTO records ({names}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    return "added"
