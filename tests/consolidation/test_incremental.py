"""The consolidation pass's faster paths give what the plain ones give, and a pass redoes only what changed:
session neighbours read per batch, context stems kept per record, related words worked out once per word,
vector upserts in a few statements, and a record whose terms stand gets its context redone, not its terms."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from agentctx import lexicon, project
from agentctx.consolidation import consolidate, embeddings, expand
from agentctx.store import expansion_queue, records, vectors
from tests.support.models import TEST_MODEL


def add(conn, proj, title, body="", rtype="discovery", **kw) -> dict:
    return records.add(conn, proj.id, type=rtype, title=title, body=body, **kw)


def row(conn, rec_id: str) -> sqlite3.Row:
    return conn.execute("SELECT seq, id, project_id, session_id, title, body, updated_at, terms, context, "
                        "expand_pending FROM records WHERE id = ?", (rec_id,)).fetchone()


def test_neighbours_of_a_batch_are_the_neighbours_of_each_record(conn: sqlite3.Connection,
                                                                 proj: project.Project) -> None:
    made = [add(conn, proj, f"Note {i}", f"body {i}", session_id=("s1", "s2", None)[i % 3]) for i in range(12)]
    made.append(records.add(conn, "other-project", type="discovery", title="Same session id, other project",
                            body="", session_id="s1"))
    rows = [dict(row(conn, r["id"])) for r in made]
    rows.append({**rows[4], "session_id": "s2"})  # a record read with another session than its own
    want = [expansion_queue.neighbours(conn, r) for r in rows]
    got = expansion_queue.neighbours_of(conn, rows)
    assert got == want
    assert sum(1 for b, a in want if b or a) >= 8  # the case is not trivially empty
    assert want[-2] == (None, None)  # alone in its project's session
    assert expansion_queue.neighbours_of(conn, []) == []


def test_context_takes_each_neighbours_words_even_when_they_overlap() -> None:
    first = {"title": "alpha", "body": " ".join(f"word{i}x" for i in range(40))}
    # shares the first neighbour's words first, then 40 of its own: 32 of those must still be taken
    second = {"title": "beta", "body": " ".join([f"word{i}x" for i in range(40)] + [f"term{i}y" for i in range(40)])}
    plain = expand.context_of(first, second)
    kept = expand.context_of(first, second, stems=expand._Stems())
    assert plain == kept
    # the first neighbour's first 32 words, then 32 the second adds (its 31 shared words do not count)
    want = (["alpha"] + [f"word{i}x" for i in range(31)] + ["beta"] + [f"word{i}x" for i in range(31, 40)]
            + [f"term{i}y" for i in range(22)])
    assert plain.split() == want and len(want) == 2 * expand.CONTEXT_WORDS


def test_stems_match_the_stemmer_word_by_word() -> None:
    toks = lexicon.tokens("Painting painted paints; running runners ran, connection connected")
    assert lexicon.stems(toks) == [lexicon.stem(t) for t in toks]
    assert lexicon.variants("plain words only") == []
    assert lexicon.variants("de-stress TestTransfer") == ["destress", "test", "transfer"]


@pytest.fixture(scope="module")
def model() -> embeddings.Embedder:
    return embeddings.load(str(TEST_MODEL))


def reference_similar(emb: embeddings.Embedder, words: list[str], per_word: int, floor: float) -> dict:
    """The rule written plainly: every offered word ranked by cosine, the word itself aside."""
    names, index, mat, offered = emb._vocabulary()
    out = {}
    for w in dict.fromkeys(words):
        if w not in index:
            continue
        sims = mat @ mat[index[w]]
        order = np.argsort(-sims, kind="stable")
        out[w] = [names[j] for j in order if offered[j] and names[j] != w and sims[j] >= floor][:per_word]
    return out


def test_similar_words_follow_the_rule_and_are_the_same_however_they_are_asked(model) -> None:
    names = model._vocabulary()[0]
    words = names[::7][:300] + ["notaword", names[3]]
    want = reference_similar(model, words, 2, 0.6)
    assert sum(1 for v in want.values() if v) >= 20  # related words exist for many of them
    fresh = embeddings.load(str(TEST_MODEL))
    assert fresh.similar_words(words, per_word=2, min_similarity=0.6) == want
    again = {}
    for start in range(0, len(words), 37):  # in other batches, with repeats: answers kept per word
        again.update(fresh.similar_words(words[start:start + 37] + words[:5], per_word=2, min_similarity=0.6))
    assert again == want
    assert fresh.similar_words(words[:50], per_word=1, min_similarity=0.6) == reference_similar(model, words[:50], 1, 0.6)


def test_a_batched_upsert_inserts_updates_and_keeps_the_last_vector_of_a_record(home) -> None:
    rng = np.random.default_rng(3)
    mat = rng.normal(size=(6, 8)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    store = vectors.Store()
    store.reset("m|8", 8)
    store.upsert([("A", "p", "decision", vectors.to_blob(mat[0])), ("B", "p", "decision", vectors.to_blob(mat[1]))])
    store.mark_checked(["A", "B"])
    store.upsert([("B", "p", "bugfix", vectors.to_blob(mat[2])), ("C", "p", "decision", vectors.to_blob(mat[3])),
                  ("C", "p", "decision", vectors.to_blob(mat[4]))])
    got = store.vectors_of(["A", "B", "C"])
    assert np.array_equal(got["A"], mat[0]) and np.array_equal(got["B"], mat[2]) and np.array_equal(got["C"], mat[4])
    assert store.count() == 3 and store.unchecked("p", "decision") == {"C"} and store.unchecked("p", "bugfix") == {"B"}
    assert [rid for rid, _ in store.knn("p", mat[4], 3)][0] == "C"  # the index holds the new vector, once
    if store.backend == "vec0":
        assert list(store.execute("SELECT COUNT(*) FROM vec_index"))[0][0] == 3
    store.close()


def test_a_record_whose_session_changed_gets_its_context_redone_and_keeps_its_terms(
        conn: sqlite3.Connection, proj: project.Project) -> None:
    first = add(conn, proj, "Which test is flaky in CI?", session_id="s1")
    middle = add(conn, proj, "Database migrations", "run before deploys", session_id="s1")
    last = add(conn, proj, "TestTransferConcurrent", "It shares the dev database; give it its own schema.",
               session_id="s1")
    assert expand.run(conn)["expanded"] == 3
    before = {r["id"]: dict(row(conn, r["id"])) for r in (first, middle, last)}
    conn.execute("UPDATE records SET terms = 'kept words' WHERE id = ?", (last["id"],))  # terms stand as they are
    conn.execute("DELETE FROM records WHERE id = ?", (middle["id"],))  # as the cold partition moves a record
    assert row(conn, last["id"])["expand_pending"] == 1 and row(conn, last["id"])["context"] is None
    assert expand.run(conn)["expanded"] == 2
    now = {r["id"]: dict(row(conn, r["id"])) for r in (first, last)}
    assert now[last["id"]]["terms"] == "kept words"  # not worked out again
    assert now[first["id"]]["terms"] == before[first["id"]]["terms"]
    assert now[last["id"]]["context"] == expand.context_of(dict(row(conn, first["id"])))  # its new neighbour
    assert "flaki" in now[last["id"]]["context"].split() and "migrat" not in now[last["id"]]["context"].split()
    assert all(r["expand_pending"] == 0 for r in now.values())
    records.edit(conn, last["id"], body="It needs its own schema.", all_projects=True)  # an edit: terms again
    assert expand.run(conn)["expanded"] == 2
    assert row(conn, last["id"])["terms"] not in (None, "kept words")
    assert "transfer" in row(conn, last["id"])["terms"].split()


def test_a_second_pass_with_nothing_new_redoes_nothing(home, conn, proj, monkeypatch) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(TEST_MODEL))
    monkeypatch.setenv("AGENTCTX_LLM", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for i in range(30):
        add(conn, proj, f"Payment retries step {i}", f"The gateway times out after {i} seconds", session_id=f"s{i % 4}")
    first = consolidate.run(proj)
    assert first["status"] == "ok" and first["steps"]["expand"]["expanded"] == 30
    second = consolidate.run(proj)
    assert second["steps"]["expand"]["expanded"] == 0 and second["steps"]["embeddings"]["embedded"] == 0


def merge_would_work(conn: sqlite3.Connection) -> bool:
    """Whether FTS5 finds segments to merge (run in a transaction that is rolled back)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        before = conn.total_changes
        conn.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('merge', -1000)")
        return conn.total_changes - before >= 2
    finally:
        conn.execute("ROLLBACK")


def test_the_index_is_merged_in_short_transactions_into_what_optimize_gives(conn: sqlite3.Connection,
                                                                            proj: project.Project) -> None:
    from agentctx.store import search

    for i in range(60):
        add(conn, proj, f"Gateway timeout number {i}", f"retry budget {i} for the payment gateway", session_id="s1")
    for seq in [r[0] for r in conn.execute("SELECT seq FROM records")]:  # one small segment per update
        conn.execute("UPDATE records SET terms = 'gateways' WHERE seq = ?", (seq,))
    assert merge_would_work(conn)
    found = [h.record["id"] for h in search.search(conn, proj.id, "gateway timeout retry", limit=20)]
    calls = expansion_queue.compact_index(conn)
    assert calls >= 2 and not merge_would_work(conn)
    conn.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")
    assert [h.record["id"] for h in search.search(conn, proj.id, "gateway timeout retry", limit=20)] == found
