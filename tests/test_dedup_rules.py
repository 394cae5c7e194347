"""Near-duplicate merging rule by rule (``consolidation.dedup``), with vectors placed by hand in the real vector
store so each test controls exactly which pairs are similar and how similar: what is never merged, what a
merge keeps, how a pass goes on after a pair it skips, and what the model is asked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentctx.capture import llm
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
    ("reinforced", "explicit", "explicit"), ("explicit", "inferred", "explicit"), ("inferred", "inferred", "reinforced"),
    ("inferred", "reinforced", "reinforced"),
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
