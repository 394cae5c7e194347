"""``agentctx doctor [--repair]``: check the store and say what is wrong; with ``--repair``, fix it.

Checks: the file opens and its schema is this version's; ``PRAGMA integrity_check`` (every page and
index); the full-text index is sound and complete; the vector file; copies moved aside as damaged; the
data folder, store and logs are owner-only. Repairs, least drastic first: rebuild the full-text index
(when only it is damaged), ``REINDEX`` (when only ordinary indexes are), else salvage every readable row
into a fresh store that takes the damaged one's place (the damaged file is kept beside it); then merge
what earlier quarantined copies still hold, drop a damaged vector file (consolidation rebuilds it) and
make the files owner-only. The report lists every action.
"""

from __future__ import annotations

import glob
import os
import sqlite3

from agentctx import clock, paths
from agentctx.store import db, integrity, migrations, salvage

PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600


def _open(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _own_folder(folder: str) -> bool:
    """A folder agentctx may make owner-only: this user's, and not a shared one like /tmp (sticky bit)."""
    import stat

    try:
        st = os.stat(folder)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & stat.S_ISVTX


def _private_paths() -> list[tuple[str, int]]:
    data = paths.data_dir()
    found = [(data, PRIVATE_DIR)] if _own_folder(data) else []
    for pattern in ("agentctx.db", "agentctx.db-wal", "agentctx.db-shm", "vectors.db*", "logs", "logs/*"):
        for path in glob.glob(os.path.join(data, pattern)):
            found.append((path, PRIVATE_DIR if os.path.isdir(path) else PRIVATE_FILE))
    return found


def _loose_permissions() -> list[str]:
    if os.name == "nt":
        return []
    loose = []
    for path, _ in _private_paths():
        try:
            if os.stat(path).st_mode & 0o077:
                loose.append(path)
        except OSError:
            continue
    return loose


def _vectors_problem() -> str | None:
    from agentctx.store import vectors

    path = vectors.path()
    if not os.path.exists(path):
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check")]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None if rows == ["ok"] else "; ".join(rows[:3])


def examine(path: str | None = None) -> dict:
    """What is wrong with the store at ``path`` (default: the store), without changing anything."""
    path = path or paths.db_path()
    report: dict = {"store": path, "exists": os.path.exists(path), "problems": []}
    problems = report["problems"]
    report["quarantined_copies"] = sorted(p for p in glob.glob(path + ".corrupt-*")
                                          if not p.endswith(("-wal", "-shm", ".salvaged")))
    if report["quarantined_copies"]:
        problems.append(f"{len(report['quarantined_copies'])} damaged cop(ies) moved aside earlier still hold data")
    loose = _loose_permissions()
    report["loose_permissions"] = loose
    if loose:
        problems.append(f"{len(loose)} file(s) readable by other users")
    vec = _vectors_problem()
    report["vectors"] = vec or "ok"
    if vec:
        problems.append(f"the vector file is damaged ({vec})")
    if not report["exists"]:
        report["integrity"] = "no store yet"
        return report
    try:
        conn = _open(path)
    except sqlite3.DatabaseError as exc:
        report["integrity"] = [str(exc)]
        problems.append(f"the store cannot be opened ({exc})")
        return report
    try:
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            report["integrity"] = [str(exc)]
            problems.append(f"the store is not a readable database ({exc})")
            return report
        report["schema"] = {"store": version, "this_agentctx": migrations.LATEST}
        if version > migrations.LATEST:
            problems.append(f"the store is from a newer agentctx (schema {version} > {migrations.LATEST}): update")
        report.update(integrity.check(conn))
        if report["integrity"] != "ok":
            problems.append("integrity check failed: " + "; ".join(report["integrity"][:3]))
        if report["fts"] != "ok":
            problems.append(f"the full-text index is damaged or incomplete ({report['fts']})")
        report["read_only"] = not os.access(path, os.W_OK) or not os.access(os.path.dirname(path) or ".", os.W_OK)
        if report["read_only"]:
            problems.append("the store is read-only for this user")
    finally:
        conn.close()
    return report


def _replace_with_salvage(path: str, actions: list[str]) -> None:
    """Salvage the damaged store at ``path`` into a fresh one that takes its place (the damaged file is kept)."""
    stamp = clock.now().replace(":", "").replace("-", "").replace(".", "")
    fresh = f"{path}.salvage-{stamp}"
    conn = db.connect(fresh)
    try:
        copied = salvage.salvage(path, conn)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    moved = db.quarantine(path, reason="integrity check failed; salvaged by agentctx doctor")
    os.replace(fresh, path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(fresh + suffix):
            os.remove(fresh + suffix)
    os.rename(moved, moved + ".salvaged")  # kept, but not offered for salvage again
    rows = sum(t["added"] for t in copied.values())
    lost = sum(t["damaged_reads"] for t in copied.values())
    recs = copied.get("records", {}).get("added", 0)
    actions.append(f"salvaged {rows} rows ({recs} records) into a fresh store"
                   + (f"; {lost} damaged area(s) could not be read" if lost else "")
                   + f"; the damaged file is kept as {moved}.salvaged")


def _merge_quarantined(path: str, copies: list[str], actions: list[str]) -> None:
    conn = db.connect(path)
    try:
        for copy in copies:
            try:
                copied = salvage.salvage(copy, conn)
            except sqlite3.DatabaseError as exc:
                actions.append(f"could not read {copy} ({exc}); left as it is")
                continue
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(copy + suffix):
                    os.rename(copy + suffix, copy + suffix + ".salvaged")
            added = sum(t["added"] for t in copied.values())
            actions.append(f"merged {added} rows still readable in {copy} (renamed to …salvaged)")
    finally:
        conn.close()


def repair(path: str | None = None) -> dict:
    """Fix what ``examine`` finds; the report after repair, with ``actions`` (what was done)."""
    path = path or paths.db_path()
    before = examine(path)
    actions: list[str] = []
    if before.get("schema", {}).get("store", 0) > migrations.LATEST:
        return {**before, "actions": ["nothing repaired: the store is from a newer agentctx; update the plugin"]}
    if before["exists"] and (before.get("integrity") != "ok" or before.get("fts", "ok") != "ok"):
        _repair_file(path, before, actions)
    if before["quarantined_copies"]:
        _merge_quarantined(path, before["quarantined_copies"], actions)
    if before.get("vectors", "ok") != "ok":
        from agentctx.store import vectors

        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(vectors.path() + suffix):
                os.remove(vectors.path() + suffix)
        actions.append("removed the damaged vector file (the next consolidation embeds the records again)")
    if before["loose_permissions"]:
        for p, mode in _private_paths():
            try:
                os.chmod(p, mode)
            except OSError:
                continue
        actions.append(f"made {len(before['loose_permissions'])} file(s) owner-only")
    after = examine(path)
    return {**after, "before": before["problems"], "actions": actions or ["nothing needed repairing"]}


def _errors(path: str) -> list[str]:
    try:
        conn = _open(path)
        try:
            return integrity.integrity_errors(conn) + [p for p in [integrity.fts_problem(conn)] if p]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]


def _repair_file(path: str, before: dict, actions: list[str]) -> None:
    """Least drastic first: the full-text index, then free pages, then indexes, then salvage."""
    tables_ok = not before.get("damaged_tables") and isinstance(before.get("fts"), str)
    if tables_ok and before.get("fts", "ok") != "ok":
        actions.append(f"the full-text index was {integrity.rebuild_fts(path)} from the records")
    if tables_ok and _errors(path):
        try:
            conn = _open(path)
            try:
                conn.execute("VACUUM")  # pages nothing references any more, a damaged free list
            finally:
                conn.close()
            actions.append("rewrote the file (VACUUM)")
        except sqlite3.DatabaseError:
            pass
    if _errors(path):
        _repair_tables(path, actions)


def _repair_tables(path: str, actions: list[str]) -> None:
    try:
        conn = _open(path)
        try:
            integrity.reindex(conn)
            fixed = integrity.integrity_errors(conn) == [] and integrity.fts_problem(conn) is None
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        fixed = False
    if fixed:
        actions.append("rebuilt the store's indexes (REINDEX)")
        return
    try:
        _replace_with_salvage(path, actions)
    except sqlite3.DatabaseError as exc:
        moved = db.quarantine(path, reason=str(exc))
        actions.append(f"nothing could be read ({exc}); the file was moved to {moved} and a fresh store started")
