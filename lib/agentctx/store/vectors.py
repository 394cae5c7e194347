"""Record vectors in their own SQLite file, ``<data dir>/vectors.db``: never the hooks' store.

The hooks open ``agentctx.db`` with the stdlib ``sqlite3`` and must never meet a ``vec0`` table,
so vectors live apart. Rows are kept in a plain table (``vectors``: record id, project, type,
float32 blob) that is the source of truth; when the sqlite-vec extension can be loaded (through
``apsw``, which can load extensions on every platform, unlike many stdlib builds) a ``vec0``
index mirrors it for KNN, else a numpy brute-force scan answers the same query. The file
remembers the model tag and dimension; a different model resets it (never mixes vectors).
"""

from __future__ import annotations

import os
import sqlite3

from agentctx import paths
from agentctx.logs import log

KEEP_MAX = 150_000  # Store.similarities keeps a project's matrix in memory up to this many vectors (≤ 154 MB)


def path() -> str:
    return paths.sub("vectors.db")


def summary(file: str | None = None) -> dict:
    """{"vectors": n, "vector_model": tag} read-only from the vector file (stdlib, no extension
    loaded: the CLI's view); {"vectors_error": ...} when it cannot be read."""
    try:
        vc = sqlite3.connect(f"file:{file or path()}?mode=ro", uri=True)
        try:
            return {"vectors": vc.execute("SELECT COUNT(*) FROM vectors").fetchone()[0],
                    "vector_model": (vc.execute("SELECT value FROM meta WHERE key = 'tag'").fetchone() or [None])[0]}
        finally:
            vc.close()
    except sqlite3.Error as exc:
        return {"vectors_error": str(exc)}


def _open_vec(file: str):
    """An apsw connection with sqlite-vec loaded, or None when either is unavailable."""
    if os.environ.get("AGENTCTX_NO_VEC0", "").strip() == "1":
        return None
    try:
        import apsw
        import sqlite_vec

        conn = apsw.Connection(file)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        return conn
    except Exception as exc:  # ImportError, or an extension that does not load on this platform
        log("consolidate", f"sqlite-vec unavailable ({type(exc).__name__}: {exc}); numpy brute force instead")
        return None


class _Stdlib:
    """The stdlib connection with apsw's tiny subset used here."""

    def __init__(self, file: str):
        self.c = sqlite3.connect(file, isolation_level=None, timeout=30)

    def execute(self, sql, params=()):
        return self.c.execute(sql, params)

    def executemany(self, sql, seq):
        return self.c.executemany(sql, seq)

    def close(self):
        self.c.close()


class Store:
    """The vector file: ``reset`` on a model change, ``upsert``, ``delete``, ``knn``, ``matrix``."""

    def __init__(self, file: str | None = None, *, busy_ms: int = 30_000):
        self.file = file or path()
        paths.ensure(os.path.dirname(self.file))
        vec = _open_vec(self.file)
        self.backend = "vec0" if vec is not None else "numpy"
        self.db = vec if vec is not None else _Stdlib(self.file)
        self._kept: dict[str, tuple] = {}  # project id -> (data_version, ids, row of id, matrix): similarities()
        if vec is not None:
            vec.setbusytimeout(busy_ms)
        self.execute("PRAGMA journal_mode=WAL")
        self.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        self.execute("CREATE TABLE IF NOT EXISTS vectors (rid INTEGER PRIMARY KEY, record_id TEXT UNIQUE NOT NULL, "
                     "project_id TEXT, type TEXT, vec BLOB NOT NULL)")
        self.execute("CREATE INDEX IF NOT EXISTS vectors_project ON vectors(project_id, type)")
        if "checked" not in {r[1] for r in self.execute("PRAGMA table_info(vectors)")}:
            # 1 once near-duplicate detection compared the vector with its project and type
            self.execute("ALTER TABLE vectors ADD COLUMN checked INTEGER NOT NULL DEFAULT 0")

    def execute(self, sql: str, params=()):
        return self.db.execute(sql, params)

    def close(self) -> None:
        self.db.close()

    def _begin(self):
        self.execute("BEGIN IMMEDIATE")

    def _commit(self):
        self.execute("COMMIT")

    def _rollback(self):
        try:
            self.execute("ROLLBACK")
        except Exception:
            pass

    # -- model identity

    def tag(self) -> str | None:
        row = list(self.execute("SELECT value FROM meta WHERE key = 'tag'"))
        return row[0][0] if row else None

    def dim(self) -> int | None:
        row = list(self.execute("SELECT value FROM meta WHERE key = 'dim'"))
        return int(row[0][0]) if row else None

    def reset(self, tag: str, dim: int) -> None:
        """Drop every vector and start over for model ``tag`` of dimension ``dim``."""
        self._kept.clear()
        self._begin()
        try:
            self.execute("DELETE FROM vectors")
            self.execute("DROP TABLE IF EXISTS vec_index")
            self.execute("INSERT OR REPLACE INTO meta VALUES ('tag', ?), ('dim', ?)", (tag, str(dim)))
            self._commit()
        except BaseException:
            self._rollback()
            raise
        self._ensure_index(dim)

    def _ensure_index(self, dim: int) -> None:
        if self.backend != "vec0":
            return
        self.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_index USING vec0(rid INTEGER PRIMARY KEY, "
                     f"embedding float[{int(dim)}] distance_metric=cosine, project_id TEXT)")
        (n_idx,) = list(self.execute("SELECT COUNT(*) FROM vec_index"))[0]
        (n_rows,) = list(self.execute("SELECT COUNT(*) FROM vectors"))[0]
        if n_idx != n_rows:  # e.g. rows written by the numpy backend: rebuild the mirror
            self._begin()
            try:
                self.execute("DELETE FROM vec_index")
                for rid, pid, blob in list(self.execute("SELECT rid, project_id, vec FROM vectors")):
                    self.execute("INSERT INTO vec_index(rid, embedding, project_id) VALUES (?, ?, ?)", (rid, blob, pid))
                self._commit()
            except BaseException:
                self._rollback()
                raise

    def ready(self, tag: str, dim: int) -> bool:
        """True when the file holds vectors of this model (else the caller resets and re-embeds)."""
        if self.tag() != tag or self.dim() != dim:
            return False
        self._ensure_index(dim)
        return True

    # -- rows

    def upsert(self, rows: list[tuple[str, str, str, bytes]]) -> None:
        """(record id, project id, type, float32 bytes) rows, in one transaction (a few statements)."""
        self._kept.clear()
        rows = list({r[0]: r for r in rows}.values())  # a record given twice: its last vector
        if not rows:
            return
        self._begin()
        try:
            rid_of: dict[str, int] = {}
            ids = [r[0] for r in rows]
            for start in range(0, len(ids), 500):
                part = ids[start:start + 500]
                rid_of.update(self.execute(f"SELECT record_id, rid FROM vectors WHERE record_id IN "
                                           f"({','.join('?' * len(part))})", part))
            (top,) = list(self.execute("SELECT COALESCE(MAX(rid), 0) FROM vectors"))[0]
            updates, inserts, indexed = [], [], []
            for record_id, pid, rtype, blob in rows:
                rid = rid_of.get(record_id)
                if rid is None:  # the rowid SQLite would give it: this transaction holds the write lock
                    top += 1
                    rid = rid_of[record_id] = top
                    inserts.append((rid, record_id, pid, rtype, blob))
                else:
                    updates.append((blob, pid, rtype, rid))
                indexed.append((rid, blob, pid))
            if updates:
                self.db.executemany("UPDATE vectors SET vec = ?, project_id = ?, type = ?, checked = 0 WHERE rid = ?",
                                    updates)
            if inserts:
                self.db.executemany("INSERT INTO vectors(rid, record_id, project_id, type, vec) VALUES (?, ?, ?, ?, ?)",
                                    inserts)
            if self.backend == "vec0":
                if updates:
                    self.db.executemany("DELETE FROM vec_index WHERE rid = ?", [(u[3],) for u in updates])
                self.db.executemany("INSERT INTO vec_index(rid, embedding, project_id) VALUES (?, ?, ?)", indexed)
            self._commit()
        except BaseException:
            self._rollback()
            raise

    def delete(self, record_ids: list[str]) -> int:
        """Remove the vectors of these records; how many were there."""
        self._kept.clear()
        gone = 0
        self._begin()
        try:
            for record_id in record_ids:
                row = list(self.execute("SELECT rid FROM vectors WHERE record_id = ?", (record_id,)))
                if row:
                    self.execute("DELETE FROM vectors WHERE rid = ?", (row[0][0],))
                    if self.backend == "vec0":
                        self.execute("DELETE FROM vec_index WHERE rid = ?", (row[0][0],))
                    gone += 1
            self._commit()
        except BaseException:
            self._rollback()
            raise
        return gone

    def unchecked(self, project_id: str, rtype: str) -> set[str]:
        """Records of a project and type not yet compared for near-duplicates."""
        return {r[0] for r in self.execute("SELECT record_id FROM vectors WHERE project_id = ? AND type = ? "
                                           "AND checked = 0", (project_id, rtype))}

    def mark_checked(self, record_ids: list[str]) -> None:
        self._begin()
        try:
            for start in range(0, len(record_ids), 500):
                part = record_ids[start:start + 500]
                self.execute(f"UPDATE vectors SET checked = 1 WHERE record_id IN ({','.join('?' * len(part))})", part)
            self._commit()
        except BaseException:
            self._rollback()
            raise

    def ids(self) -> set[str]:
        return {r[0] for r in self.execute("SELECT record_id FROM vectors")}

    def count(self) -> int:
        return list(self.execute("SELECT COUNT(*) FROM vectors"))[0][0]

    def matrix(self, project_id: str, rtype: str | None = None):
        """(record ids, unit float32 matrix) of one project (and type)."""
        import numpy as np

        where, params = "WHERE project_id = ?", [project_id]
        if rtype:
            where += " AND type = ?"
            params.append(rtype)
        dim = self.dim() or 0
        (n,) = list(self.execute(f"SELECT COUNT(*) FROM vectors {where}", params))[0]
        # Filled row by row: the blobs, and a joined copy of them, are never all held beside the matrix.
        ids: list[str] = []
        mat = None
        extra = []  # rows written between the count and the read, should any be
        for rid, blob in self.execute(f"SELECT record_id, vec FROM vectors {where} ORDER BY rid", params):
            vec = np.frombuffer(blob, dtype=np.float32)
            if mat is None:
                mat = np.empty((n, vec.size), dtype=np.float32)
            if len(ids) < n:
                mat[len(ids)] = vec
            else:
                extra.append(vec)
            ids.append(rid)
        if mat is None:
            return [], np.zeros((0, dim), dtype=np.float32)
        if extra:
            mat = np.vstack([mat, np.asarray(extra, dtype=np.float32)])
        return ids, mat[: len(ids)]

    def similarities(self, project_id: str, query_vec) -> tuple[dict[str, int], object] | None:
        """({record id: row}, cosine of every vector of the project with a unit query vector), from the
        project's matrix kept in memory while the file is unchanged (``PRAGMA data_version``): what a
        long-lived process (the MCP server, the dashboard) answers each search with in well under a
        millisecond. None for a project over KEEP_MAX vectors (use ``knn``: its index keeps memory flat)."""
        import numpy as np

        version = list(self.execute("PRAGMA data_version"))[0][0]
        kept = self._kept.get(project_id)
        if kept is None or kept[0] != version:
            (n,) = list(self.execute("SELECT COUNT(*) FROM vectors WHERE project_id = ?", (project_id,)))[0]
            if n > KEEP_MAX:
                return None
            ids, mat = self.matrix(project_id)
            kept = (version, {rid: i for i, rid in enumerate(ids)}, mat)
            self._kept[project_id] = kept
        _, rows, mat = kept
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        return rows, (mat @ q if len(rows) else np.zeros(0, dtype=np.float32))

    def vectors_of(self, record_ids: list[str]) -> dict:
        """{record id: unit float32 vector} of the records that have one."""
        import numpy as np

        out = {}
        for start in range(0, len(record_ids), 500):
            part = list(record_ids[start:start + 500])
            for rid, blob in self.execute(
                    f"SELECT record_id, vec FROM vectors WHERE record_id IN ({','.join('?' * len(part))})", part):
                out[rid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def knn(self, project_id: str, query_vec, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest vectors of a project to a unit query vector: (record id, cosine similarity)."""
        import numpy as np

        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if self.backend == "vec0":
            rows = list(self.execute(
                "SELECT v.record_id, i.distance FROM vec_index i JOIN vectors v ON v.rid = i.rid "
                "WHERE i.embedding MATCH ? AND k = ? AND i.project_id = ? ORDER BY i.distance",
                (q.tobytes(), int(k), project_id)))
            return [(rid, 1.0 - float(dist)) for rid, dist in rows]
        return brute_knn(*self.matrix(project_id), q, k)


def brute_knn(record_ids: list[str], matrix, q, k: int) -> list[tuple[str, float]]:
    """The numpy fallback: exact cosine KNN over unit vectors."""
    import numpy as np

    if not record_ids:
        return []
    sims = matrix @ q
    k = min(k, len(record_ids))
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.lexsort((top, -sims[top]))]
    return [(record_ids[i], float(sims[i])) for i in top]


def to_blob(vec) -> bytes:
    import numpy as np

    return np.asarray(vec, dtype=np.float32).tobytes()
