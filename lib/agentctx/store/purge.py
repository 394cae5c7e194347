"""Removing one record from the store for good (``agentctx purge``): every row that holds or points at it.

Its row in ``records`` (the FTS5 index follows through the delete trigger) or in the cold partition
``records_archive``, its entity links and edges, the injection rows that name it, its drift row;
records it superseded keep their retirement but no longer name it as their successor. Scoped:
only a record of this project (a global record counts as its recording project's). Text that
quotes it elsewhere is scrubbed separately (``store.scrub`` with the record's text as the needle).
"""

from __future__ import annotations

import sqlite3

from agentctx.store import drift, records
from agentctx.store.db import transaction
from agentctx.store.records import RecordError

TABLES = ("records", "records_archive")


def find(conn: sqlite3.Connection, ref: str, project_id: str) -> dict:
    """This project's record by id or unique id prefix, current, retired or archived (``table`` says
    where it is); RecordError when there is none or the prefix is ambiguous."""
    try:
        return records.match_prefix(conn, ref, "project_id = ?", (project_id,), tables=TABLES)
    except RecordError as exc:
        if str(exc).startswith("no record "):
            raise RecordError(f"{exc} in this project") from None
        raise


def delete(conn: sqlite3.Connection, record_id: str, project_id: str) -> dict[str, int]:
    """Delete the record and what points at it, in one transaction; rows removed per place."""
    done: dict[str, int] = {}
    with transaction(conn):
        for table in TABLES:
            done[table] = conn.execute(f"DELETE FROM {table} WHERE id = ? AND project_id = ?",
                                       (record_id, project_id)).rowcount
        if not any(done.values()):
            raise RecordError(f"no record {record_id} in this project")
        done["entity_links"] = conn.execute("DELETE FROM record_entities WHERE record_id = ?", (record_id,)).rowcount
        done["edges"] = conn.execute("DELETE FROM edges WHERE from_id = ? OR to_id = ?",
                                     (record_id, record_id)).rowcount
        done["injections"] = conn.execute("DELETE FROM injections WHERE record_id = ?", (record_id,)).rowcount
        done["drift"] = drift.forget(conn, record_id)
        done["successor_refs"] = sum(conn.execute(f"UPDATE {t} SET superseded_by = NULL WHERE superseded_by = ?",
                                                  (record_id,)).rowcount for t in TABLES)
        conn.execute("DELETE FROM nodes WHERE project_id = ? AND NOT EXISTS (SELECT 1 FROM edges e WHERE "
                     "e.from_id = nodes.id OR e.to_id = nodes.id) AND NOT EXISTS (SELECT 1 FROM record_entities re "
                     "WHERE re.entity_id = nodes.id)", (project_id,))
    return done


def _like(mark: str) -> str:
    return "%" + mark.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def used_elsewhere(conn: sqlite3.Connection, record_id: str, word: str, skip_types: tuple[str, ...]) -> bool:
    """Whether any other record (any project, the cold partition included) but those of ``skip_types``
    holds ``word`` in its title or body."""
    marks = ",".join("?" * len(skip_types)) or "''"
    for table in TABLES:
        row = conn.execute(f"SELECT 1 FROM {table} WHERE id != ? AND type NOT IN ({marks}) AND "
                           "(title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\') LIMIT 1",
                           (record_id, *skip_types, _like(word), _like(word))).fetchone()
        if row is not None:
            return True
    return False


def quoting(conn: sqlite3.Connection, project_id: str, marks: list[str]) -> list[dict]:
    """This project's records (any status, the cold partition included) whose title or body holds one of
    ``marks``: {id, type, title, body, table}."""
    out: list[dict] = []
    if not marks:
        return out
    where = " OR ".join(["title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\'"] * len(marks))
    args = [x for m in marks for x in (_like(m), _like(m))]
    for table in TABLES:
        out += [{**dict(r), "table": table} for r in conn.execute(
            f"SELECT id, type, title, body FROM {table} WHERE project_id = ? AND ({where})", (project_id, *args))]
    return out


def rewrite(conn: sqlite3.Connection, table: str, record_id: str, title: str, body: str) -> None:
    """Replace a derived record's text (a handover regenerated without a purged record's words)."""
    if table not in TABLES:
        raise ValueError(table)
    conn.execute(f"UPDATE {table} SET title = ?, body = ? WHERE id = ?", (title, body, record_id))


def forget_expansion(conn: sqlite3.Connection, stems: list[str]) -> int:
    """Records whose retrieval expansion (``terms``, ``context``: word stems of their session neighbours
    and related words) holds one of these stems: both cleared and queued to be worked out again by the
    next consolidation pass. How many."""
    total = 0
    for stem in stems:
        pattern = _like(f" {stem} ")
        for table in TABLES:
            cols = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            if not {"terms", "context"} <= cols:
                continue
            pending = ", expand_pending = 1" if "expand_pending" in cols else ""
            total += conn.execute(
                f"UPDATE {table} SET context = NULL, terms = NULL{pending} WHERE "
                f"(' ' || COALESCE(context, '') || ' ') LIKE ? ESCAPE '\\' OR "
                f"(' ' || COALESCE(terms, '') || ' ') LIKE ? ESCAPE '\\'", (pattern, pattern)).rowcount
    return total

