"""Re-redacting what the store already holds (``agentctx redact --rescan``).

Every column that can hold transcript, command or user text is rewritten through a cleaning function:
record titles and bodies (current, superseded and archived), session metadata and anchors (JSON: only
their strings are cleaned, so they stay valid JSON), drift details and entity names. Afterwards the
FTS index is rebuilt from the cleaned rows, and the file is vacuumed with ``secure_delete`` on and the
WAL truncated, so the old text is not left in free pages, old index segments or the log.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from agentctx import clock
from agentctx.store.db import transaction

Clean = Callable[[str], tuple[str, int]]  # text -> (cleaned text, secrets found)

TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "records": ("title", "body"),
    "records_archive": ("title", "body"),
    "sessions": ("meta",),
    "anchors": ("intent", "changes", "decisions", "next_steps"),
    "drift": ("detail",),
    "nodes": ("name",),
}
JSON_COLUMNS = {("sessions", "meta"), ("anchors", "intent"), ("anchors", "changes"), ("anchors", "decisions"),
                ("anchors", "next_steps")}


def _clean_json(text: str, clean: Clean) -> tuple[str, int]:
    """Clean the strings inside a JSON document (keys and values); plain text if it is not JSON."""
    try:
        value = json.loads(text)
    except ValueError:
        return clean(text)
    found = 0

    def walk(v):
        nonlocal found
        if isinstance(v, str):
            out, n = clean(v)
            found += n
            return out
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        return v

    cleaned = walk(value)
    return (json.dumps(cleaned, ensure_ascii=False), found) if found else (text, 0)


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def scrub(conn: sqlite3.Connection, clean: Clean, *, dry_run: bool = False,
          tables: tuple[str, ...] | None = None) -> dict[str, dict[str, int]]:
    """Clean every stored text column (of ``tables`` only, when given); {table: {"rows": changed rows,
    "secrets": secrets found}}.

    One transaction; with ``dry_run`` nothing is written. Entity names that would collide once cleaned
    keep a suffix (their node id), since ``nodes`` names are unique per project and kind.
    """
    present = _tables(conn) & set(TEXT_COLUMNS if tables is None else tables)
    report: dict[str, dict[str, int]] = {}
    stamp = clock.now()
    if not dry_run:
        conn.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left with the old text
    with transaction(conn):
        for table, columns in TEXT_COLUMNS.items():
            if table not in present:
                continue
            rows = secrets = 0
            for row in conn.execute(f"SELECT rowid AS _rid, {', '.join(columns)} FROM {table}").fetchall():
                changes: dict[str, str] = {}
                for column in columns:
                    value = row[column]
                    if not isinstance(value, str) or not value:
                        continue
                    out, n = _clean_json(value, clean) if (table, column) in JSON_COLUMNS else clean(value)
                    if out != value:
                        changes[column] = out
                        secrets += n
                if not changes:
                    continue
                rows += 1
                if not dry_run:
                    _write(conn, table, row["_rid"], changes, stamp)
            report[table] = {"rows": rows, "secrets": secrets}
    return report


def _write(conn: sqlite3.Connection, table: str, rowid: int, changes: dict[str, str], stamp: str) -> None:
    sets = ", ".join(f"{c} = ?" for c in changes)
    if table == "records":
        sets += ", updated_at = ?, pending_embedding = 1"  # embedded again from the cleaned text
        conn.execute(f"UPDATE records SET {sets} WHERE rowid = ?", (*changes.values(), stamp, rowid))
        return
    try:
        conn.execute(f"UPDATE {table} SET {sets} WHERE rowid = ?", (*changes.values(), rowid))
    except sqlite3.IntegrityError:  # a node whose cleaned name another node already has
        node_id = conn.execute("SELECT id FROM nodes WHERE rowid = ?", (rowid,)).fetchone()[0]
        conn.execute("UPDATE nodes SET name = ? WHERE rowid = ?", (f"{changes['name']} #{node_id}", rowid))


def compact(conn: sqlite3.Connection) -> dict[str, bool]:
    """Rebuild the FTS index from the records, VACUUM and truncate the WAL: the old text is gone from
    the file. {"fts_rebuilt", "vacuumed", "wal_truncated"} (a step another process blocks is False)."""
    done = {"fts_rebuilt": False, "vacuumed": False, "wal_truncated": False}
    conn.execute("PRAGMA secure_delete = ON")
    with transaction(conn):
        conn.execute("INSERT INTO records_fts(records_fts) VALUES ('rebuild')")
    done["fts_rebuilt"] = True
    try:
        conn.execute("VACUUM")
        done["vacuumed"] = True
    except sqlite3.OperationalError:  # another connection is writing: the pages stay until the next run
        pass
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        done["wal_truncated"] = busy == 0
    except sqlite3.OperationalError:
        pass
    return done
