"""The vector file: vec0 (sqlite-vec through apsw) and the numpy fallback agree; model identity is kept."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from agentctx.store import vectors


def _unit(rng, n, dim=32):
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _fill(store, mat, project="p"):
    store.reset("toy|32", 32)
    store.upsert([(f"R{i:04d}", project if i % 3 else "other", "decision", vectors.to_blob(v)) for i, v in enumerate(mat)])


def test_vec0_loads_here_through_apsw(home):
    store = vectors.Store()
    assert store.backend == "vec0"
    store.close()


def test_vec0_and_numpy_return_the_same_neighbours(home, tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    mat = _unit(rng, 300)
    fast = vectors.Store(str(tmp_path / "a.db"))
    _fill(fast, mat)
    monkeypatch.setenv("AGENTCTX_NO_VEC0", "1")
    slow = vectors.Store(str(tmp_path / "b.db"))
    assert (fast.backend, slow.backend) == ("vec0", "numpy")
    _fill(slow, mat)
    for q in _unit(rng, 5):
        a, b = fast.knn("p", q, 10), slow.knn("p", q, 10)
        assert [r for r, _ in a] == [r for r, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-5)
        assert all(int(r[1:]) % 3 for r, _ in a)  # only project p
    fast.close()
    slow.close()


def test_upsert_replaces_and_delete_removes(home):
    store = vectors.Store()
    store.reset("toy|32", 32)
    rng = np.random.default_rng(1)
    a, b = _unit(rng, 2)
    store.upsert([("X", "p", "decision", vectors.to_blob(a))])
    store.upsert([("X", "p", "decision", vectors.to_blob(b))])
    assert store.count() == 1
    assert store.knn("p", b, 1)[0][0] == "X" and store.knn("p", b, 1)[0][1] == pytest.approx(1.0, abs=1e-5)
    assert store.delete(["X", "nope"]) == 1 and store.count() == 0
    store.close()


def test_a_model_change_resets_never_mixes(home):
    store = vectors.Store()
    store.reset("old|32", 32)
    store.upsert([("X", "p", "decision", vectors.to_blob(np.ones(32) / np.sqrt(32)))])
    assert store.ready("old|32", 32) and not store.ready("new|64", 64)
    store.reset("new|64", 64)
    assert store.count() == 0 and store.tag() == "new|64" and store.dim() == 64
    store.upsert([("Y", "p", "decision", vectors.to_blob(np.ones(64) / 8))])
    assert store.knn("p", np.ones(64) / 8, 3)[0][0] == "Y"
    store.close()


def test_a_numpy_written_file_is_indexed_when_vec0_becomes_available(home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NO_VEC0", "1")
    store = vectors.Store()
    _fill(store, _unit(np.random.default_rng(3), 30))
    store.close()
    monkeypatch.delenv("AGENTCTX_NO_VEC0")
    store = vectors.Store()
    assert store.backend == "vec0" and store.ready("toy|32", 32)
    q = _unit(np.random.default_rng(4), 1)[0]
    assert [r for r, _ in store.knn("p", q, 5)] == [r for r, _ in vectors.brute_knn(*store.matrix("p"), q, 5)]
    store.close()


@pytest.mark.parametrize("counted", [-2, 0, 3])
def test_a_projects_matrix_holds_every_vector_read_even_when_the_count_before_it_differs(home, monkeypatch, counted):
    """The matrix is filled row by row after a count; rows written or removed between the two are still
    read as they are (here the count is made to be off by ``counted``)."""
    mat = _unit(np.random.default_rng(5), 40)
    store = vectors.Store()
    _fill(store, mat)
    real = store.execute

    def execute(sql, params=()):
        rows = real(sql, params)
        return [(list(rows)[0][0] + counted,)] if sql.startswith("SELECT COUNT(*) FROM vectors WHERE") else rows

    monkeypatch.setattr(store, "execute", execute)
    ids, got = store.matrix("p", "decision")
    wanted = [i for i in range(40) if i % 3]
    assert ids == [f"R{i:04d}" for i in wanted] and got.dtype == np.float32
    assert np.array_equal(got, mat[wanted])
    assert store.matrix("nobody")[1].shape == (0, 32)
    store.close()


def test_the_hooks_store_never_gets_a_vec0_table(home, conn):
    store = vectors.Store()
    store.reset("toy|32", 32)
    store.close()
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert not any("vec" in n for n in names)
    plain = sqlite3.connect(vectors.path())  # the plain table is readable without the extension
    assert plain.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 0
    plain.close()
