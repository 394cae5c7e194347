"""Candidate generation of the per-prompt query bounded by the records it ranks (``search.candidate_match``):
the rarest words find candidates alone until their records add up to CANDIDATE_POSTINGS, the others only
where two of them meet; a store where every word fits is searched with them all, as before."""

from __future__ import annotations

import pytest

from agentctx.store import records, search


def test_words_that_fit_are_all_ored_rarest_first():
    assert search.candidate_match(["retry", "ledger", "kafka"], {"retry": 900, "ledger": 40, "kafka": 7}) == \
        '"kafka" OR "ledger" OR "retry"'


def test_past_the_bound_the_commoner_words_only_count_in_pairs(monkeypatch):
    monkeypatch.setattr(search, "CANDIDATE_POSTINGS", 100)
    counts = {"kafka": 7, "ledger": 60, "retry": 900, "queue": 700, "worker": 1200}
    assert search.candidate_match(list(counts), counts) == (
        '"kafka" OR "ledger" OR ("queue" AND "retry") OR ("queue" AND "worker") OR ("retry" AND "worker")')


def test_the_rarest_word_is_always_a_generator_and_a_lone_common_word_is_dropped(monkeypatch):
    monkeypatch.setattr(search, "CANDIDATE_POSTINGS", 100)
    assert search.candidate_match(["retry"], {"retry": 5000}) == '"retry"'
    assert search.candidate_match(["retry", "queue"], {"retry": 5000, "queue": 4000}) == '"queue"'


def test_only_the_rarest_common_words_are_paired(monkeypatch):
    monkeypatch.setattr(search, "CANDIDATE_POSTINGS", 10)
    words = [f"w{i}" for i in range(9)]
    counts = {w: 100 + i for i, w in enumerate(words)}
    match = search.candidate_match(words, counts)
    pairs = search.MAX_PAIRED * (search.MAX_PAIRED - 1) // 2
    assert match.startswith('"w0" OR ') and match.count(" AND ") == pairs + 3
    assert match.endswith('("w6" AND "w0") OR ("w7" AND "w0") OR ("w8" AND "w0")'), "weighed, never alone"


def test_quotes_stay_literal_in_pairs_too(monkeypatch):
    monkeypatch.setattr(search, "CANDIDATE_POSTINGS", 1)
    match = search.candidate_match(['a"b', "c", "d"], {'a"b': 5, "c": 6, "d": 7})
    assert match == '"a""b" OR ("c" AND "d")'


@pytest.fixture
def store(conn, proj):
    add = lambda title, body: records.add(conn, proj.id, type="discovery", title=title, body=body)["id"]  # noqa: E731
    ids = {
        "rare": add("Kafka consumer lag", "The kafka consumer falls behind under load."),
        "both": add("Retry queue backs up", "The retry queue fills when the worker is slow."),
        "one": add("Retry budget", "Each call gets three retries."),
    }
    for i in range(6):  # common words: in most records
        add(f"Note {i}", "retry queue worker details")
    return ids


def test_in_a_store_a_record_with_two_common_words_is_found_one_with_one_only_without_the_bound(
        conn, proj, store, monkeypatch):
    prompt = "kafka retry queue"
    found = {h.record["id"] for h in search.search(conn, proj.id, prompt, limit=20)}
    assert {store["rare"], store["both"], store["one"]} <= found
    monkeypatch.setattr(search, "CANDIDATE_POSTINGS", 1)  # only "kafka" generates alone
    found = [h.record["id"] for h in search.search(conn, proj.id, prompt, limit=20)]
    assert found[0] == store["rare"] and store["both"] in found and store["one"] not in found
