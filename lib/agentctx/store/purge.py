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
