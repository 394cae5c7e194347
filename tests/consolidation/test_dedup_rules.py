"""Near-duplicate merging rule by rule (``consolidation.dedup``), with vectors placed by hand in the real vector
store so each test controls exactly which pairs are similar and how similar: what is never merged, what a
merge keeps, how a pass goes on after a pair it skips, and what the model is asked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentctx import llm
from agentctx.consolidation import dedup
from agentctx.store import records, vectors
from tests.support import fake_api

DIM = 16
SAME_TEXT = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"


def unit(*weights: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for i, x in weights:
        v[i] = x
    return (v / np.linalg.norm(v)).astype(np.float32)


def pair(first: int, cos: float) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors in dimensions ``first`` and ``first + 1`` with this cosine."""
    return unit((first, 1.0)), unit((first, cos), (first + 1, float(np.sqrt(1 - cos * cos))))


def restatement(conn, proj, title: str, extra: str = "", **kw) -> dict:
    """A record that the no-model rule takes for a restatement of another with the same title (not an exact
    one: ``records.add`` would reinforce that instead of storing it)."""
    return records.add(conn, proj.id, type=kw.pop("type", "decision"), title=title,
                       body=SAME_TEXT + (" " + extra if extra else ""), **kw)


def store_of(proj, rows: list[tuple[dict, np.ndarray]]) -> vectors.Store:
    store = vectors.Store()
    store.reset("test-vectors|16", DIM)
    store.upsert([(r["id"], proj.id, r["type"], vectors.to_blob(v)) for r, v in rows])
    return store


def run(conn, proj, rows, **kw) -> list[dict]:
    store = store_of(proj, rows)
    try:
        return dedup.run(conn, store, proj.id, **kw)
    finally:
        store.close()


def current_ids(conn, proj) -> set[str]:
    return {r["id"] for r in records.current(conn, proj.id, include_global=True)}


# ---------------------------------------------------------------- a pass goes on after a pair it skips


def test_three_restatements_merge_into_the_oldest_and_each_is_merged_once(conn, proj, home):
    a = restatement(conn, proj, "Ledger writes go through the outbox", valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Ledger writes go through the outbox", "kilo")
    c = restatement(conn, proj, "Ledger writes go through the outbox", "lima")
    merges = run(conn, proj, [(a, unit((0, 1.0))), (b, unit((0, 0.99), (1, 0.141))), (c, unit((0, 0.99), (1, -0.141)))])
    assert sorted((m["kept"], m["merged"]) for m in merges) == sorted([(a["id"], b["id"]), (a["id"], c["id"])])
    assert current_ids(conn, proj) == {a["id"]}
    assert records.get(conn, a["id"], proj.id)["reinforce_count"] == 2


@pytest.mark.parametrize("skipped", ["superseded", "keyed", "other scope", "refused"])
def test_a_pair_that_must_not_merge_is_skipped_and_the_pass_goes_on(conn, proj, home, skipped):
    """The most similar pair comes first and is left alone; the next pair still merges."""
    x = restatement(conn, proj, "Money is integer cents", valid_from="2026-01-01T00:00:00Z")
    y_kw = {"key": "decision.money"} if skipped == "keyed" else {"scope": "global"} if skipped == "other scope" else {}
    y = restatement(conn, proj, "Money is integer cents", "kilo", **y_kw)
    if skipped == "superseded":
        records.supersede(conn, proj.id, y["id"], body="Money is integer cents, BIGINT")
    p = restatement(conn, proj, "Deploys go through Helm", valid_from="2026-01-01T00:00:00Z")
    q = restatement(conn, proj, "Deploys go through Helm", "kilo")
    # 0.95: a candidate the no-model rule refuses (it needs > 0.96); else the most similar pair of all
    xv, yv = pair(0, 0.95 if skipped == "refused" else 0.995)
    pv, qv = pair(2, 0.97)
    merges = run(conn, proj, [(x, xv), (y, yv), (p, pv), (q, qv)])
    assert [(m["kept"], m["merged"]) for m in merges] == [(p["id"], q["id"])]
    assert records.get(conn, x["id"], proj.id)["superseded_at"] is None


def test_a_pair_whose_first_or_second_record_is_gone_is_skipped(conn, proj, home):
    for which in (0, 1):
        first = restatement(conn, proj, f"Rule {which}: queues use SQS", valid_from="2026-01-01T00:00:00Z")
        second = restatement(conn, proj, f"Rule {which}: queues use SQS", "kilo")
        gone = (first, second)[which]
        records.supersede(conn, proj.id, gone["id"], body="Queues use RabbitMQ")
        assert run(conn, proj, list(zip((first, second), pair(0, 0.99), strict=True))) == []


# ---------------------------------------------------------------- what a merge keeps


@pytest.mark.parametrize(("older", "newer", "kept"), [
    ("reinforced", "explicit", "explicit"), ("explicit", "inferred", "explicit"),
    ("inferred", "inferred", "reinforced"), ("inferred", "reinforced", "reinforced"),
])
def test_the_merged_record_takes_the_higher_confidence(conn, proj, home, older, newer, kept):
    a = restatement(conn, proj, "Money is integer cents", confidence=older, valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Money is integer cents", "kilo", confidence=newer)
    run(conn, proj, list(zip((a, b), pair(0, 0.99), strict=True)))
    assert records.get(conn, a["id"], proj.id)["confidence"] == kept


def test_a_merge_adds_the_duplicates_reinforcements_uses_and_pin_and_dates_its_retirement(conn, proj, home,
                                                                                        monkeypatch):
    a = restatement(conn, proj, "Money is integer cents", valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Money is integer cents", "kilo", pinned=True)
    for _ in range(2):
        records.add(conn, proj.id, type="decision", title="Money is integer cents", body=b["body"])  # reinforces b
    records.touch(conn, [b["id"]] * 5, project_id=proj.id)
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.text("SAME")) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        store = store_of(proj, list(zip((a, b), pair(0, 0.95123), strict=True)))
        merges = dedup.run(conn, store, proj.id, client=llm.Client(timeout=10, max_retries=0), usage=llm.Usage())
        store.close()
    assert merges == [{"kept": a["id"], "merged": b["id"], "type": "decision", "similarity": 0.9512,
                       "confirmed_by": "haiku"}]
    kept, gone = records.get(conn, a["id"], proj.id), records.get(conn, b["id"], proj.id)
    assert kept["reinforce_count"] == 2 + 1 and kept["access_count"] == 5 and kept["pinned"]
    assert gone["superseded_by"] == a["id"] and gone["superseded_at"] and gone["updated_at"] == gone["superseded_at"]


# ---------------------------------------------------------------- dry runs, the model's question, its failure


def test_a_dry_run_merges_nothing_and_leaves_the_records_to_compare_again(conn, proj, home):
    a = restatement(conn, proj, "Money is integer cents", valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Money is integer cents", "kilo")
    store = store_of(proj, list(zip((a, b), pair(0, 0.99), strict=True)))
    try:
        planned = dedup.run(conn, store, proj.id, dry_run=True)
        assert [(m["kept"], m["merged"]) for m in planned] == [(a["id"], b["id"])]
        assert current_ids(conn, proj) == {a["id"], b["id"]}
        assert store.unchecked(proj.id, "decision") == {a["id"], b["id"]}
        dedup.run(conn, store, proj.id)
        assert current_ids(conn, proj) == {a["id"]} and store.unchecked(proj.id, "decision") == set()
    finally:
        store.close()


def test_the_model_is_asked_about_both_facts_escaped_and_clipped(conn, proj, home, monkeypatch):
    a = records.add(conn, proj.id, type="decision", title="Use <Postgres>", body="a" * 1499 + "Z" + "q" * 40,
                    valid_from="2026-01-01T00:00:00Z")
    b = records.add(conn, proj.id, type="decision", title="Deploy with Helm", body="")
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.text("DIFFERENT")) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        assert run(conn, proj, list(zip((a, b), pair(0, 0.95), strict=True)),
                   client=llm.Client(timeout=10, max_retries=0), usage=llm.Usage()) == []
        (asked,) = [r.body for r in api.requests if r.is_messages]
    user = json.dumps(asked["messages"])
    assert '<fact n=\\"1\\">Use &lt;Postgres&gt;\\n' + "a" * 1499 + "Z</fact>" in user
    assert '<fact n=\\"2\\">Deploy with Helm\\n</fact>' in user


def test_a_failing_model_falls_back_to_the_no_model_rule_for_the_rest_of_the_pass(conn, proj, home, monkeypatch):
    a = restatement(conn, proj, "Money is integer cents", valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Money is integer cents", "kilo")
    c = restatement(conn, proj, "Deploys go through Helm", valid_from="2026-01-01T00:00:00Z")
    d = restatement(conn, proj, "Deploys go through Helm", "kilo")
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.error(500)) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        merges = run(conn, proj, [*zip((a, b), pair(0, 0.99), strict=True), *zip((c, d), pair(2, 0.98), strict=True)],
                     client=llm.Client(timeout=10, max_retries=0), usage=llm.Usage())
        asked = [r for r in api.requests if r.is_messages]
    assert [(m["merged"], m["confirmed_by"]) for m in merges] == [(b["id"], "strict"), (d["id"], "strict")]
    assert len(asked) == 1, "after one failure the model is not asked again in this pass"


def test_without_a_similarity_there_is_no_evidence_to_merge():
    fact = {"title": "Money is integer cents", "body": SAME_TEXT}
    assert dedup.strictly_same(fact, dict(fact)) is False


def test_only_the_new_records_are_compared_with_all_the_others():
    a, b = pair(0, 0.99)
    matrix = np.vstack([a, b, unit((5, 1.0))]).astype(np.float32)
    assert [(x, y) for _, x, y in dedup.candidates(["A", "B", "C"], matrix, only={"A"})] == [("A", "B")]
    assert dedup.candidates(["A", "B", "C"], matrix, only={"C"}) == []


# ---------------------------------------------------------------- which pairs are candidates


def test_a_pair_at_exactly_cosine_092_is_not_a_candidate_and_one_just_above_is():
    """Candidates are pairs *above* the threshold (float64 rows: the dot product is exactly the cosine)."""
    at = np.array([[1.0, 0.0], [0.92, np.sqrt(1 - 0.92 * 0.92)]])
    assert at[0] @ at[1] == 0.92 == dedup.THRESHOLD
    assert dedup.candidates(["A", "B"], at) == []
    above = float(np.nextafter(0.92, 1.0))
    just = np.array([[1.0, 0.0], [above, np.sqrt(1 - above * above)]])
    assert dedup.candidates(["A", "B"], just) == [(above, "A", "B")]


@pytest.mark.parametrize("only_every", [None, 3])
def test_candidates_picked_block_by_block_and_a_few_rows_at_a_time_are_each_records_nearest(monkeypatch, only_every):
    """Blocks and row chunks far smaller than the records (as 100k records are to SQUARE and KEEP_ROWS) give
    what comparing every pair at once gives: each compared record's NEIGHBOURS nearest above the threshold."""
    monkeypatch.setattr(dedup, "SQUARE", 40)
    monkeypatch.setattr(dedup, "KEEP_ROWS", 7)
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((30, 16))
    matrix = centres[rng.integers(0, 30, 300)] + 0.08 * rng.standard_normal((300, 16))
    matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    ids = [f"r{i:03d}" for i in range(300)]
    only = None if only_every is None else set(ids[::only_every])
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -np.inf)
    expected: dict[tuple[str, str], float] = {}
    for i in range(300):  # each compared record's nearest among all the others
        if only is not None and ids[i] not in only:
            continue
        best = sorted((j for j in range(300) if sims[i, j] > dedup.THRESHOLD), key=lambda j: (-sims[i, j], j))
        for j in best[:dedup.NEIGHBOURS]:
            expected[tuple(sorted((ids[i], ids[j])))] = float(sims[i, j])
    found = dedup.candidates(ids, matrix, only=only)
    assert len(expected) > 50 and len(found) == len(expected)
    assert {(a, b): pytest.approx(sim, abs=1e-5) for sim, a, b in found} == expected


def test_a_record_alone_has_no_candidates_and_is_never_its_own():
    assert dedup.candidates(["A"], np.array([[1.0, 0.0]], dtype=np.float32)) == []
    # at a threshold below every cosine, the other record is the candidate, never the record itself
    found = dedup.candidates(["A", "B"], np.array([[1.0, 0.0], [-0.6, 0.8]]), threshold=-1.0)
    assert found == [(pytest.approx(-0.6), "A", "B")]


def test_a_new_record_is_paired_with_its_three_nearest_only():
    """Five records as near as 0.96-0.99 to A: the new A is paired with its 3 nearest (``NEIGHBOURS``)."""
    near = {"B": 0.96, "C": 0.97, "D": 0.98, "E": 0.99}
    rows = [unit((0, 1.0))] + [unit((0, cos), (i + 1, float(np.sqrt(1 - cos * cos))))
                               for i, cos in enumerate(near.values())]
    found = dedup.candidates(["A", *near], np.vstack(rows).astype(np.float32), only={"A"})
    assert [(a, b) for _, a, b in found] == [("A", "E"), ("A", "D"), ("A", "C")]


def test_a_pass_takes_at_most_2000_pairs_and_the_least_similar_wait():
    """334 groups of 4 identical vectors give 2,004 pairs at cosine 1.0, and one more pair is at 0.95:
    2,000 are taken, all at 1.0; the rest waits for the next pass."""
    groups = 334
    matrix = np.zeros((groups * 4 + 2, groups + 2), dtype=np.float32)
    for g in range(groups):
        matrix[4 * g:4 * g + 4, g] = 1.0
    matrix[-2, groups], matrix[-1, groups], matrix[-1, groups + 1] = 1.0, 0.95, np.sqrt(1 - 0.95 * 0.95)
    ids = [f"R{i:05d}" for i in range(len(matrix))]
    found = dedup.candidates(ids, matrix)
    assert len(found) == 2000 and {sim for sim, _, _ in found} == {1.0}
    assert (ids[-2], ids[-1]) not in {(a, b) for _, a, b in found}


# ---------------------------------------------------------------- the no-model rule


class Embedder:
    """Stands in for the embedding model: the two texts it is given come back as unit vectors with this cosine."""

    def __init__(self, cos: float):
        self.cos, self.texts = cos, []

    def encode(self, texts):
        self.texts = list(texts)
        return np.array([[1.0, 0.0], [self.cos, np.sqrt(1 - self.cos * self.cos)]])


@pytest.mark.parametrize(("cos", "stored", "same"), [
    (0.96, 0.99, False),  # at the limit: not above it, whatever the stored similarity says
    (float(np.nextafter(0.96, 1.0)), 0.0, True),
])
def test_with_the_embedding_model_the_cosine_of_title_and_body_must_be_above_096(cos, stored, same):
    a = {"title": "Money is integer cents", "body": SAME_TEXT}
    b = {"title": "Money is integer cents", "body": SAME_TEXT + " kilo"}
    embedder = Embedder(cos)
    assert dedup.strictly_same(a, b, embedder, stored) is same
    assert embedder.texts == [f"Money is integer cents\n{SAME_TEXT}", f"Money is integer cents\n{SAME_TEXT} kilo"]


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


@pytest.mark.parametrize(("more", "same"), [(2, True), (3, False)])
def test_without_a_model_content_words_shared_at_exactly_08_still_merge(more, same):
    """Title and body words together: "ledger" and 7 words against "ledger" and those 7 and 2 more is 8 of 10
    shared (0.8, the least that merges); 3 more is 8 of 11."""
    a = {"title": "Ledger", "body": " ".join(WORDS[:7])}
    b = {"title": "Ledger", "body": " ".join(WORDS[:7 + more])}
    assert dedup.strictly_same(a, b, None, 0.99) is same


def test_facts_without_a_content_word_are_never_merged():
    fact = {"title": "The", "body": "of a"}
    assert dedup.strictly_same(fact, dict(fact), None, 0.99) is False


def test_a_title_without_a_content_word_is_not_the_title_of_one_with_a_word():
    body = " ".join(SAME_TEXT.split() * 2)
    assert dedup.strictly_same({"title": "The", "body": body}, {"title": "Ledger", "body": body}, None, 0.99) is False


# ---------------------------------------------------------------- the pass: deadline, pairs it skips, provenance


@pytest.mark.parametrize(("late", "merged"), [(0.0, 1), (0.001, 0)])
def test_a_pass_compares_up_to_its_deadline_and_past_it_leaves_the_rest_for_the_next(conn, proj, home, monkeypatch,
                                                                                    late, merged):
    """At the deadline the pair is still compared; past it the pass stops and the records stay unchecked."""
    import time

    a = restatement(conn, proj, "Money is integer cents", valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Money is integer cents", "kilo")
    store = store_of(proj, list(zip((a, b), pair(0, 0.99), strict=True)))
    monkeypatch.setattr(time, "monotonic", lambda: 100.0 + late)
    try:
        merges = dedup.run(conn, store, proj.id, deadline=100.0)
        assert len(merges) == merged and len(current_ids(conn, proj)) == 2 - merged
        assert store.unchecked(proj.id, "decision") == (set() if merged else {a["id"], b["id"]})
    finally:
        store.close()


def test_a_merged_duplicate_is_not_merged_again_and_the_pass_goes_on(conn, proj, home):
    """B restates A (0.97) and C restates B (0.965) but not A (0.87): once B is merged into A, the pair (B, C)
    is skipped, C stays, and the next pair (P, Q) still merges."""
    ta = np.arccos(0.97)
    tc = ta + np.arccos(0.965)
    a = restatement(conn, proj, "Ledger writes go through the outbox", valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Ledger writes go through the outbox", "kilo", valid_from="2026-01-02T00:00:00Z")
    c = restatement(conn, proj, "Ledger writes go through the outbox", "lima", valid_from="2026-01-03T00:00:00Z")
    p = restatement(conn, proj, "Deploys go through Helm", valid_from="2026-01-01T00:00:00Z")
    q = restatement(conn, proj, "Deploys go through Helm", "kilo")
    pv, qv = pair(3, 0.962)
    merges = run(conn, proj, [(a, unit((0, 1.0))), (b, unit((0, np.cos(ta)), (1, np.sin(ta)))),
                              (c, unit((0, np.cos(tc)), (1, np.sin(tc)))), (p, pv), (q, qv)])
    assert [(m["kept"], m["merged"]) for m in merges] == [(a["id"], b["id"]), (p["id"], q["id"])]
    assert current_ids(conn, proj) == {a["id"], c["id"], p["id"]}


def test_a_pair_refused_by_the_no_model_rule_is_left_and_the_next_pair_still_merges(conn, proj, home):
    """The most similar pair (0.995) states two versions, so it is refused; the next one (0.97) merges."""
    x = restatement(conn, proj, "Use PostgreSQL 15", valid_from="2026-01-01T00:00:00Z")
    y = restatement(conn, proj, "Use PostgreSQL 16")
    p = restatement(conn, proj, "Deploys go through Helm", valid_from="2026-01-01T00:00:00Z")
    q = restatement(conn, proj, "Deploys go through Helm", "kilo")
    merges = run(conn, proj, [*zip((x, y), pair(0, 0.995), strict=True), *zip((p, q), pair(2, 0.97), strict=True)])
    assert [(m["kept"], m["merged"]) for m in merges] == [(p["id"], q["id"])]
    assert {x["id"], y["id"]} <= current_ids(conn, proj)


def _ordered(conn, proj, title: str, *, how: str, which: int) -> tuple[dict, dict]:
    """Two restatements, the first one older and first in the pair (the smaller id), and the one at ``which``
    made unmergeable: deleted, superseded, archived or keyed."""
    from agentctx import ids
    from agentctx.store import archive

    kws = [{"valid_from": "2026-01-01T00:00:00Z"}, {}]
    if how == "keyed":
        kws[which]["key"] = "decision." + title.split()[0].lower()
    recs = [restatement(conn, proj, title, extra, record_id=ids.new_id(ms=1_700_000_000_000 + i), **kw)
            for i, (extra, kw) in enumerate(zip(("", "kilo"), kws, strict=True))]
    target = recs[which]["id"]
    if how == "deleted":
        assert archive.prune(conn, proj.id, [target]) == 1
    elif how == "superseded":
        records.supersede(conn, proj.id, target, body="Something else entirely")
    elif how == "archived":
        archive.soft_archive(conn, proj.id, [target], "2026-01-05T00:00:00Z")
    return recs[0], recs[1]


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("how", ["deleted", "superseded", "archived", "keyed"])
def test_a_pair_with_either_record_gone_or_keyed_is_skipped_and_the_next_pair_merges(conn, proj, home, how, which):
    x, y = _ordered(conn, proj, "Money is integer cents", how=how, which=which)
    assert x["id"] < y["id"]
    p = restatement(conn, proj, "Deploys go through Helm", valid_from="2026-01-01T00:00:00Z")
    q = restatement(conn, proj, "Deploys go through Helm", "kilo")
    merges = run(conn, proj, [*zip((x, y), pair(0, 0.995), strict=True), *zip((p, q), pair(2, 0.97), strict=True)])
    assert [(m["kept"], m["merged"]) for m in merges] == [(p["id"], q["id"])]


def test_a_merge_is_dated_and_leaves_a_derives_from_edge_from_the_kept_record(conn, proj, home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-10T00:00:00Z")
    a = restatement(conn, proj, "Money is integer cents", valid_from="2026-01-01T00:00:00Z")
    b = restatement(conn, proj, "Money is integer cents", "kilo")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-03-01T00:00:00Z")
    assert len(run(conn, proj, list(zip((a, b), pair(0, 0.99), strict=True)))) == 1
    kept, gone = records.get(conn, a["id"], proj.id), records.get(conn, b["id"], proj.id)
    assert gone["superseded_at"] == gone["updated_at"] == kept["updated_at"] == "2026-03-01T00:00:00.000000Z"
    assert gone["superseded_by"] == a["id"] and gone["valid_to"] == b["valid_to"]
    assert kept["reinforce_count"] == 1 and kept["access_count"] == 0 and not kept["pinned"]
    edges = conn.execute("SELECT from_id, to_id, rel_type FROM edges WHERE to_id = ?", (b["id"],)).fetchall()
    assert [tuple(e) for e in edges] == [(a["id"], b["id"], "derives_from")]

