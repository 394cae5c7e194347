"""Is the store sound, and can what is broken be rebuilt? The full-text index is derived data: when its
pages are damaged it is rebuilt from ``records``, never a reason to lose a write or the store.

* ``index_suspect(exc)``: an error that may come from a damaged FTS index (``vtable constructor failed:
  records_fts``, a malformed page) rather than from the tables.
* ``damaged_tables(conn)``: ``PRAGMA quick_check`` of each real table and its indexes, FTS excluded.
* ``rebuild_fts(path)``: ``'rebuild'`` when the index can still be opened; when it cannot, its schema
  entries are dropped (its damaged pages are then unreferenced), the table is created again from its
  own SQL, filled from ``records``, and a ``VACUUM`` gives the orphaned pages back.
* ``repair_index(path)``: the above for a store on disk, only when the damage is confined to the index.
* ``verify_fts(conn, where)``: FTS5's own ``integrity-check`` (it reads every index row, so rows
  overwritten with random bytes of the same length, which ``PRAGMA integrity_check`` accepts, are
  found); when it fails the index is rebuilt from the records, the log says so and the next
  SessionStart tells the user. Run by the consolidation pass, after an error in any search, and by
  ``agentctx doctor``.
* ``check(conn)``: the full report ``agentctx doctor`` prints.

Only the error path and ``doctor`` pay for these checks; the hooks' hot path never runs them.
"""

from __future__ import annotations

import sqlite3

from agentctx.store.db import transaction

FTS = "records_fts"
FTS_SHADOWS = ("records_fts_data", "records_fts_idx", "records_fts_docsize", "records_fts_config",
               "records_fts_content")
_INDEX_MARKERS = ("records_fts", "vtable constructor failed", "fts5", "malformed", "database disk image")


def index_suspect(exc: BaseException) -> bool:
    """True for errors a damaged full-text index can cause (confirm with ``damaged_tables``)."""
    return isinstance(exc, sqlite3.DatabaseError) and any(m in str(exc).lower() for m in _INDEX_MARKERS)


def _tables(conn: sqlite3.Connection) -> list[str]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return [n for n in names if n != FTS and n not in FTS_SHADOWS and not n.startswith("sqlite_")]


def damaged_tables(conn: sqlite3.Connection) -> list[str]:
    """The real tables (with their indexes) that fail ``quick_check``; ``["sqlite_master"]`` when the
    schema itself cannot be read."""
    try:
        names = _tables(conn)
    except sqlite3.DatabaseError:
        return ["sqlite_master"]
    bad = []
    for name in names:
        try:
            rows = conn.execute(f'PRAGMA quick_check("{name}")').fetchall()
        except sqlite3.DatabaseError:
            bad.append(name)
            continue
        if [tuple(r) for r in rows] != [("ok",)]:
            bad.append(name)
    return bad


def fts_problem(conn: sqlite3.Connection) -> str | None:
    """None when the index opens, is structurally sound and holds exactly the records; else what is wrong."""
    try:
        conn.execute(f"INSERT INTO {FTS}({FTS}, rank) VALUES ('integrity-check', 1)")
        indexed = conn.execute(f"SELECT COUNT(*) FROM {FTS}_docsize").fetchone()[0]
        rows = conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    except MemoryError:  # SQLITE_NOMEM: a damaged length in the index asked for an absurd allocation
        return "the index asked for an impossible amount of memory (a damaged length)"
    return None if indexed == rows else f"the index holds {indexed} rows, records {rows}"


def _open(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _drop_entries(conn: sqlite3.Connection) -> str:
    """Remove the index's schema entries (not its pages: they may be unreadable); its CREATE statement."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (FTS,)).fetchone()
    if row is None or not row[0]:
        raise sqlite3.DatabaseError("the full-text index definition is missing")
    names = (FTS, *FTS_SHADOWS)
    conn.execute("PRAGMA writable_schema = ON")
    try:
        with transaction(conn):
            version = conn.execute("PRAGMA schema_version").fetchone()[0]
            conn.execute(f"DELETE FROM sqlite_master WHERE name IN ({','.join('?' * len(names))})", names)
            conn.execute(f"PRAGMA schema_version = {int(version) + 1}")  # every connection reloads the schema
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    return row[0]


def rebuild_fts(path: str) -> str:
    """Rebuild the full-text index of the store at ``path`` from ``records``; says how ("rebuilt", or
    "recreated" when the damaged index could not even be opened)."""
    conn = _open(path)
    try:
        try:
            with transaction(conn):
                conn.execute(f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')")
            if fts_problem(conn) is None:
                return "rebuilt"
        except (sqlite3.DatabaseError, MemoryError):
            pass
        create = _drop_entries(conn)
    finally:
        conn.close()
    conn = _open(path)  # a fresh connection: the schema without the index
    try:
        with transaction(conn):
            conn.execute(create)
            conn.execute(f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')")
        try:
            conn.execute("VACUUM")  # the old index's pages are unreferenced now: give them back
        except sqlite3.OperationalError:  # another process is writing: `agentctx doctor --repair` does it later
            pass
    finally:
        conn.close()
    return "recreated"


def repair_index(path: str) -> str | None:
    """Rebuild the index of the store at ``path`` when the damage is confined to it; what was done, or
    None when a real table is damaged too (or the index is fine: nothing to rebuild)."""
    try:
        conn = _open(path)
        try:
            if damaged_tables(conn) or fts_problem(conn) is None:
                return None
        finally:
            conn.close()
        return f"the full-text index was damaged and was {rebuild_fts(path)} from the records"
    except sqlite3.DatabaseError:
        return None


def _path_of(conn: sqlite3.Connection) -> str | None:
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return row[2] or None
    return None


def verify_fts(conn: sqlite3.Connection, where: str) -> str | None:
    """Check the full-text index with FTS5's integrity check; rebuild it from the records when it fails
    (logged, and a notice for the next SessionStart). None when it was sound, else what was done."""
    problem = fts_problem(conn)
    if problem is None:
        return None
    from agentctx.logs import log
    from agentctx.store import db

    path = _path_of(conn)
    if path is None:  # an in-memory store: rebuild in place
        with transaction(conn):
            conn.execute(f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')")
        how = "rebuilt"
    else:
        try:
            how = rebuild_fts(path)
        except sqlite3.DatabaseError as exc:
            log(where, f"the full-text index failed its check ({problem}) and could not be rebuilt: {exc}")
            return None
    done = f"the full-text index failed its integrity check ({problem}) and was {how} from the records"
    log(where, done)
    db.add_notice(f"agentctx: {done} (found by {where}); nothing was lost.")
    return done


def integrity_errors(conn: sqlite3.Connection, limit: int = 20) -> list[str]:
    """``PRAGMA integrity_check`` (every page, every index): [] when the file is sound."""
    try:
        rows = [r[0] for r in conn.execute(f"PRAGMA integrity_check({int(limit)})")]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def reindex(conn: sqlite3.Connection) -> None:
    """Rebuild every ordinary index from its table (what ``wrong # of entries in index`` needs)."""
    conn.execute("REINDEX")


def check(conn: sqlite3.Connection) -> dict:
    """Everything ``agentctx doctor`` reports about the file: integrity, tables, the index."""
    errors = integrity_errors(conn)
    return {"integrity": errors or "ok", "damaged_tables": damaged_tables(conn) if errors else [],
            "fts": fts_problem(conn) or "ok"}
