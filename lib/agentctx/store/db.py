"""Opening the store: pragmas, schema check, and what happens when the file is bad.

Stdlib ``sqlite3`` only, so hooks can open the store without heavy imports. Migrations
(sqlite-utils) are imported only when the schema is behind.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from agentctx import clock, paths
from agentctx.store import migrations


class StoreError(Exception):
    """A problem with the store that the user can act on; its message says what."""


class NewerSchemaError(StoreError):
    """The store was written by a newer agentctx; this version must not write to it."""


_CORRUPTION_MARKERS = ("file is not a database", "malformed", "database disk image", "not a database")


def is_corruption(exc: BaseException) -> bool:
    """True for errors that mean the file itself is damaged (not locked, not read-only)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    text = str(exc).lower()
    return any(marker in text for marker in _CORRUPTION_MARKERS)


def connect(path: str | None = None, *, busy_ms: int = 5000, migrate: bool = True) -> sqlite3.Connection:
    """Open (creating if needed) the store with WAL, a busy timeout and a current schema.

    Raises NewerSchemaError for a store from a newer version, and lets sqlite3 errors
    through (callers decide whether to quarantine via ``is_corruption``).
    """
    path = path or paths.db_path()
    paths.ensure(os.path.dirname(path) or ".")
    _create_private(path)
    conn = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc) and "unable to open" not in str(exc):
                raise
            conn.close()  # an unwritable store: read it as it is, write nothing
            conn = _read_only(path, busy_ms)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > migrations.LATEST:
                raise NewerSchemaError(f"the store at {path} has schema {version}, newer than this agentctx "
                                       f"understands ({migrations.LATEST}); update the plugin") from exc
            if version != migrations.LATEST:
                raise StoreError(f"the store at {path} is read-only and at schema {version}, older than this "
                                 f"agentctx needs ({migrations.LATEST}); make it writable so it can be migrated") from exc
            return conn
        if version > migrations.LATEST:
            raise NewerSchemaError(
                f"the store at {path} has schema {version}, newer than this agentctx "
                f"understands ({migrations.LATEST}); update the plugin"
            )
        if version < migrations.LATEST:
            if not migrate:
                raise StoreError(f"the store at {path} needs migrating; run any agentctx command")
            _ensure_wal(conn, busy_ms)
            migrations.apply(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn
    except BaseException:
        conn.close()
        raise


def _create_private(path: str) -> None:
    """Create a new store file owner-only (0600; SQLite gives its -wal and -shm the same mode; its folder
    is created 0700 by ``paths.ensure``). An existing store is left as it is (``agentctx doctor --repair``
    tightens it)."""
    if os.path.exists(path):
        return
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError:  # created meanwhile by another process, or an unwritable folder: sqlite3 says which
        return


def _ensure_wal(conn: sqlite3.Connection, busy_ms: int) -> None:
    """Switch a new store to WAL. Concurrent first connects can get SQLITE_BUSY here without
    the busy handler being called (SQLite's deadlock avoidance), so retry until the timeout."""
    import time

    deadline = time.monotonic() + busy_ms / 1000
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def _read_only(path: str, busy_ms: int) -> sqlite3.Connection:
    """A read-only connection to a store we may not write.

    ``mode=ro`` works when the WAL side files exist; when they do not and cannot be created,
    ``immutable=1`` reads the main file without locking (what was checkpointed: safe to show).
    """
    base = "file:" + path.replace("?", "%3f").replace("#", "%23")
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        conn = sqlite3.connect(base + query, uri=True, timeout=busy_ms / 1000, isolation_level=None,
                               check_same_thread=False, factory=ReadOnlyConnection)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA user_version").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            if query.endswith("immutable=1"):
                raise
    raise AssertionError("unreachable")


def quarantine(path: str | None = None, reason: str = "") -> str:
    """Move a damaged store (and its WAL files) aside, never overwriting it.

    Leaves a notice that the next SessionStart shows; returns the new path.
    """
    path = path or paths.db_path()
    stamp = clock.now().replace(":", "").replace("-", "").replace(".", "")
    target = f"{path}.corrupt-{stamp}"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.replace(path + suffix, target + suffix)
    add_notice(
        f"agentctx: the context store was damaged ({reason or 'unreadable'}); it was moved to "
        f"{target} and a fresh store was started; `agentctx doctor --repair` salvages what it still holds."
    )
    return target


def add_notice(text: str) -> None:
    """Queue a one-line notice for the user, shown once at the next SessionStart."""
    folder = paths.ensure(paths.sub("notices"))
    name = f"{clock.now().replace(':', '')}-{os.getpid()}.txt"
    with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
        fh.write(text.strip().splitlines()[0] if text.strip() else "")


def take_notices() -> list[str]:
    """Read and delete queued notices (oldest first)."""
    folder = paths.sub("notices")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        full = os.path.join(folder, name)
        try:
            with open(full, encoding="utf-8") as fh:
                text = fh.read().strip()
            os.remove(full)
        except OSError:
            continue
        if text:
            out.append(text)
    return out


@contextmanager
def transaction(conn: sqlite3.Connection, *, immediate: bool = True) -> Iterator[sqlite3.Connection]:
    """BEGIN (IMMEDIATE) ... COMMIT, or ROLLBACK on any error.

    The error that stopped the transaction is the one raised: SQLite rolls back by itself after some
    errors (a full disk, a damaged page), and a second ROLLBACK's "no transaction is active" must not
    replace the cause. A COMMIT that fails is rolled back too, never left open."""
    _begin(conn, "BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        raise


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _begin(conn: sqlite3.Connection, sql: str) -> None:
    """BEGIN, waiting for the write lock fairly. SQLite's busy handler sleeps up to 100 ms between tries, so
    a steady stream of short write transactions (parallel hooks, extraction, consolidation) can starve it
    until its timeout: a hook's write would then be lost as "database is locked". When it gives up, keep
    trying every 2 ms for as long again."""
    try:
        conn.execute(sql)
        return
    except sqlite3.OperationalError as exc:
        if not _locked(exc):
            raise
    import time

    (timeout_ms,) = conn.execute("PRAGMA busy_timeout").fetchone()
    deadline = time.monotonic() + max(int(timeout_ms), 100) / 1000
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        while True:
            time.sleep(0.002)
            try:
                conn.execute(sql)
                return
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() >= deadline:
                    raise
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")


def describe(exc: BaseException, path: str | None = None) -> str:
    """An error message that names the cause the user can act on: a full disk (SQLite's "disk I/O
    error" and "database or disk is full" both mean that when the disk has no room left), a read-only
    or locked store; otherwise the error itself."""
    path = path or paths.db_path()
    text = str(exc)
    low = text.lower()
    code = getattr(exc, "sqlite_errorcode", None)
    full = code == 13 or "disk is full" in low or getattr(exc, "errno", None) == 28  # SQLITE_FULL, ENOSPC
    if full or "disk i/o error" in low:
        free = free_bytes(os.path.dirname(path) or ".")
        if full or (free is not None and free < FULL_BELOW_BYTES):
            room = "" if free is None else f" ({free // 1024} KiB free)"
            return (f"the disk holding {os.path.dirname(path) or '.'} is full{room}: nothing was written; "
                    f"free some space and run the command again ({text})")
    if "readonly" in low or "read-only" in low:
        return f"the store at {path} is read-only: nothing was written ({text})"
    if "locked" in low or "busy" in low:
        return f"the store at {path} is busy (another agentctx process holds a lock): try again ({text})"
    return text


FULL_BELOW_BYTES = 1024 * 1024  # with less room than this, an I/O error writing the store is a full disk


def free_bytes(folder: str) -> int | None:
    """Bytes free for this user on the file system holding ``folder`` (None when unknown)."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs on Windows
        import shutil

        try:
            return shutil.disk_usage(folder).free
        except OSError:
            return None
    return st.f_bavail * st.f_frsize


class ReadOnlyConnection(sqlite3.Connection):
    """A connection to a store this process may not write (see ``is_read_only``)."""

    read_only = True


def is_read_only(conn: sqlite3.Connection) -> bool:
    """True when ``connect`` could only open the store read-only (an unwritable file or folder)."""
    return getattr(conn, "read_only", False)


def schema_version(conn: sqlite3.Connection) -> int:
    """The number of migrations applied to this store."""
    return conn.execute("PRAGMA user_version").fetchone()[0]


def meta_value(conn: sqlite3.Connection, key: str) -> int:
    """An integer kept in ``meta`` (0 when unset)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return int(row[0]) if row else 0


def set_meta_value(conn: sqlite3.Connection, key: str, value: int) -> None:
    """Set an integer in ``meta``."""
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 (key, value))


def generation(conn: sqlite3.Connection) -> int:
    """The store's change counter (see migration m001)."""
    return meta_value(conn, "generation")


def bump_generation(conn: sqlite3.Connection) -> None:
    """Mark a change that alters what a digest shows but is not a record write (the triggers count those)."""
    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
