"""Retrieval rules (issue 10), one test per rule: each fails if its rule is taken out.

Ranking: bounded age, non-decaying decisions, the length floor, coverage, session context, successors of
superseded facts. Vocabulary: Porter stems, joined and split spellings, the consolidation pass's
expansion (and the triggers that clear it). Injection: the answer gate, the relative cutoff, intent-aware
depth, acknowledgements. Hybrid: idf-weighted queries, records embedded with their context, fusion that
brings vector-only candidates, one ranking for ctx_search and the dashboard, the vector loader's clock.
"""

from __future__ import annotations

import sqlite3

import pytest

from agentctx import budgets, clock, lexicon, project, relevance, scoring
from agentctx.consolidation import expand, hybrid
from agentctx.injection import turn
from agentctx.store import db, records, search
from tests.support.models import TEST_MODEL

SESSION = "retrieval-session"


def ids(hits) -> list[str]:
    return [h.record["id"] for h in hits]


def add(conn, proj, title, body="", rtype="discovery", **kw) -> dict:
    return records.add(conn, proj.id, type=rtype, title=title, body=body, **kw)


# ---------------------------------------------------------------- ranking: age within bounds


def test_a_relevant_months_old_gotcha_outranks_a_fresh_record_that_barely_matches(
        conn: sqlite3.Connection, proj: project.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-01T00:00:00Z")
    old = add(conn, proj, "Celery worker deadlock when the broker connection drops",
              "Set broker_connection_retry_on_startup and a visibility timeout; the worker deadlocked otherwise.",
              rtype="bugfix", valid_from=clock.parse("2025-12-01"))
    fresh = add(conn, proj, "Upgraded the celery version in the lock file", rtype="bugfix",
                valid_from=clock.parse("2026-05-31"))
    hits = search.search(conn, proj.id, "celery worker deadlock after the broker connection drops")
    assert ids(hits)[:2] == [old["id"], fresh["id"]]  # 180 days at 0.95/day once scaled it by 0.05
    assert hits[0].relevance > hits[1].relevance


def test_age_moves_a_score_only_within_the_standing_span() -> None:
    fresh = scoring.final_score(1.0, "bugfix", 0, "explicit", 0, 0)
    ancient = scoring.final_score(1.0, "bugfix", 3650, "explicit", 0, 3650)
    assert fresh > ancient >= fresh * (1 - scoring.STANDING_SPAN) - 1e-9
    assert scoring.final_score(1.0, "decision", 3650, "explicit", 0, 3650) == pytest.approx(
        scoring.final_score(1.0, "decision", 0, "explicit", 0, 3650))  # decisions in force never decay


def test_a_decision_in_force_is_never_outranked_by_age(conn: sqlite3.Connection, proj: project.Project,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-01T00:00:00Z")
    rule = add(conn, proj, "Money is stored as integer cents", "Never floats for amounts.", rtype="decision",
               valid_from=clock.parse("2023-01-01"))
    note = add(conn, proj, "Money formatting note", "Amounts shown with two decimals.", valid_from=clock.parse("2026-05-31"))
    hits = search.search(conn, proj.id, "how is money stored, integer cents or floats?")
    assert ids(hits)[:2] == [rule["id"], note["id"]]


# ---------------------------------------------------------------- relevance: second stage


def _query(words: dict[str, int], total: int = 1000) -> relevance.Query:
    return relevance.Query(words, total)


def test_a_short_record_echoing_the_prompt_does_not_beat_the_one_that_answers_it() -> None:
    query = _query({"vault": 40, "secrets": 40, "rotate": 30})
    echo = {"title": "Vault secrets?", "body": ""}
    answer = {"title": "Rotate the vault secrets monthly",
              "body": "The rotate-keys job in ops/cron rotates every vault secret on the first Monday; the "
                      "old versions stay readable for a day so running services can reload them."}
    assert relevance.score(query, answer, avg_len=20)[0] > relevance.score(query, echo, avg_len=20)[0]
    # below the average length, shortness buys nothing: the echo scores as if it were average-sized
    short, padded = relevance.score(query, echo, 20), relevance.score(query, {**echo, "body": "x " * 16}, 20)
    assert short[0] == pytest.approx(padded[0])


def test_covering_more_of_the_prompt_beats_repeating_one_word_of_it() -> None:
    query = _query({"kafka": 50, "consumer": 50, "lag": 50})
    repeats = {"title": "Kafka", "body": "kafka kafka kafka kafka kafka"}
    covers = {"title": "Incident review notes",
              "body": "during the deploy window the kafka consumer lag grew " + " ".join(f"w{i}" for i in range(50))}
    r_rep, c_rep, m_rep = relevance.score(query, repeats, 10)
    r_cov, c_cov, m_cov = relevance.score(query, covers, 10)
    assert (c_cov, m_cov) == (pytest.approx(1.0), 3) and (c_rep, m_rep) == (pytest.approx(1 / 3), 1)
    assert r_rep / c_rep > r_cov / c_cov  # by BM25 alone, repeating the one word wins...
    assert r_cov > r_rep  # ...weighted by how much of the prompt it holds, the record that answers more wins


def test_a_record_next_to_the_question_that_names_the_topic_is_found_by_it() -> None:
    query = _query({"pose": 20, "hold": 20})
    answer = {"title": "John", "body": "I typically hold it for 30-60 seconds."}
    with_context = {**answer, "context": " ".join(lexicon.stem(w) for w in ("long", "usually", "pose"))}
    assert relevance.score(query, with_context, 10)[0] > relevance.score(query, answer, 10)[0]


def test_a_prompt_worded_like_a_superseded_fact_finds_what_replaced_it(conn: sqlite3.Connection,
                                                                        proj: project.Project) -> None:
    old = add(conn, proj, "Deploy the backend on a single VM with docker compose", rtype="decision")
    new = records.supersede(conn, proj.id, old["id"], title="Deploy the backend to Fly.io machines in two regions",
                            body="The VM is retired; blue-green deploys through fly deploy.")
    newest = records.supersede(conn, proj.id, new["id"], title="Deploy the backend to Fly.io in three regions",
                               body="Added Singapore.")
    hits = search.search(conn, proj.id, "how do I run docker compose on the production VM?")
    assert ids(hits) == [newest["id"]]  # through every later version, never an old one
    text, shown, _ = turn.select(conn, proj.id, SESSION, "how do I run docker compose on the production VM?")
    assert shown == [newest["id"]] and "docker compose" not in text


# ---------------------------------------------------------------- vocabulary


@pytest.mark.parametrize("word, stem", [("painting", "paint"), ("painted", "paint"), ("crashes", "crash"),
                                        ("running", "run"), ("databases", "databas"), ("ponies", "poni"),
                                        ("relational", "relat"), ("hopping", "hop"), ("agreed", "agre")])
def test_porter_stems(word: str, stem: str) -> None:
    assert lexicon.stem(word) == stem


def test_spelling_variants_of_compounds_and_identifiers_but_never_of_keys() -> None:
    found = lexicon.variants("went running to de-stress; TestTransferConcurrent and WebAuthn sign-in "
                             "ghp_R7tY2uI9oP4aS6dF8gH1jK3lZ5x sk-ant-api03-Zq8vN3xK7pL2mR9tW4yB6cD1fG5hJ0kQ")
    assert {"destress", "signin", "test", "transfer", "concurrent", "web", "authn"} <= set(found)
    assert not [w for w in found if any(ch.isdigit() for ch in w)]  # tokens with digits are never split or joined


def test_a_hyphenated_record_is_found_by_the_joined_word_and_back(conn: sqlite3.Connection,
                                                                  proj: project.Project) -> None:
    hyphen = add(conn, proj, "Running helps me de-stress after release days")
    joined = add(conn, proj, "Onboarding: the signin page", "New users land on signin after the invite mail.")
    assert ids(search.search(conn, proj.id, "how do you destress?")) == [hyphen["id"]]  # split at query time
    assert ids(search.search(conn, proj.id, "how does sign-in work?")) == [joined["id"]]  # joined at query time


def test_expansion_indexes_identifier_parts_and_stores_session_context(conn: sqlite3.Connection,
                                                                       proj: project.Project) -> None:
    question = add(conn, proj, "Which test is flaky in CI?", session_id="s1")
    answer = add(conn, proj, "TestTransferConcurrent", "It shares the dev database; give it its own schema.",
                 session_id="s1")
    assert answer["id"] not in ids(search.search(conn, proj.id, "transfer concurrent test"))  # one token
    report = expand.run(conn)
    assert report["expanded"] == 2
    assert ids(search.search(conn, proj.id, "transfer concurrent test"))[:1] == [answer["id"]]
    row = conn.execute("SELECT context, expand_pending FROM records WHERE id = ?", (answer["id"],)).fetchone()
    assert "flaki" in row["context"].split() and row["expand_pending"] == 0
    assert question["id"] != answer["id"]


@pytest.mark.parametrize("recursive", [0, 1])
def test_editing_a_record_clears_what_was_derived_from_its_old_text(conn: sqlite3.Connection, proj: project.Project,
                                                                   recursive: int) -> None:
    conn.execute(f"PRAGMA recursive_triggers = {recursive}")  # sqlite-utils turns it on: right either way
    first = add(conn, proj, "LegacyPaymentGateway retries", session_id="s1")
    second = add(conn, proj, "Refund flow", "calls the gateway", session_id="s1")
    other = add(conn, proj, "Unrelated session note", session_id="s2")
    expand.run(conn)
    assert ids(search.search(conn, proj.id, "legacy payment gateway"))[:1] == [first["id"]]
    records.edit(conn, first["id"], title="Gateway retries", all_projects=True)
    rows = {r["id"]: r for r in conn.execute("SELECT id, terms, context, expand_pending FROM records")}
    assert rows[first["id"]]["terms"] is None and rows[second["id"]]["context"] is None
    assert rows[first["id"]]["expand_pending"] == rows[second["id"]]["expand_pending"] == 1
    assert rows[other["id"]]["expand_pending"] == 0  # another session keeps its expansion
    assert search.search(conn, proj.id, "legacy payment") == []  # the old spelling left the index too
    conn.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")
    conn.execute("DELETE FROM records WHERE id = ?", (first["id"],))
    conn.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")


# ---------------------------------------------------------------- injection: gate, cutoff, depth


@pytest.fixture
def project_store(conn: sqlite3.Connection, proj: project.Project) -> dict[str, dict]:
    return {
        "fmt": add(conn, proj, "Format and lint Python with ruff", "ruff format, line length 100.", rtype="convention"),
        "tz": add(conn, proj, "Sighting timestamps shifted after DST", "Store UTC; convert when rendering.",
                  rtype="bugfix"),
        "upload": add(conn, proj, "Photo uploads over 10 MB timed out behind nginx",
                      "Raised client_max_body_size to 25m and made uploads resumable.", rtype="bugfix"),
        "deploy": add(conn, proj, "Deploy the backend to Fly.io machines", "Blue-green through fly deploy.",
                      rtype="decision"),
    }


@pytest.mark.parametrize("prompt", ["how do I compress log files with the nginx gzip settings?",
                                    "which GraphQL error codes does the mobile app handle after DST?",
                                    "explain the CAP theorem briefly"])
def test_a_prompt_the_records_do_not_answer_injects_nothing(conn, proj, project_store, prompt) -> None:
    """A word or two in common (nginx, DST) is not an answer: the best record must hold MIN_COVERAGE of
    the prompt's word weight (or MIN_MATCHED of its words)."""
    assert turn.select(conn, proj.id, SESSION, prompt) == ("", [], 0)


def test_an_answered_prompt_injects_only_the_records_close_to_the_best(conn, proj, project_store) -> None:
    weaker = add(conn, proj, "Photo uploads time out on slow mobile networks", rtype="discovery")
    prompt = "photo uploads time out behind nginx"
    text, shown, _ = turn.select(conn, proj.id, SESSION, prompt)
    assert shown == [project_store["upload"]["id"]]
    hits = {h.record["id"]: h for h in search.search(conn, proj.id, prompt, limit=10)}
    best, second = hits[project_store["upload"]["id"]], hits[weaker["id"]]
    assert second.coverage >= scoring.MIN_COVERAGE  # it answers part of the prompt...
    assert second.score < scoring.INJECT_CUTOFF * best.score  # ...much less well than the best: left out


@pytest.mark.parametrize("prompt", ["looks good, thanks", "ok thanks", "great, go ahead", "yes please do it"])
def test_acknowledgements_inject_nothing(conn, proj, prompt) -> None:
    add(conn, proj, "Looks good: the review checklist", "thanks to everyone, go ahead and merge")
    assert search.is_trivial(prompt)
    assert turn.select(conn, proj.id, SESSION, prompt) == ("", [], 0)


def test_a_broad_prompt_gets_more_shorter_entries_within_the_same_cap(conn, proj) -> None:
    long_body = "Details of the decision and its rationale. " * 60
    for i in range(10):
        add(conn, proj, f"Kafka topic decision {i}", long_body, rtype="decision")
    narrow = turn.select(conn, proj.id, "s-narrow", "which kafka topic decision applies here")
    broad = turn.select(conn, proj.id, "s-broad", "give me an overview of every kafka topic decision")
    assert len(narrow[1]) == budgets.TURN_RECORDS < len(broad[1]) <= budgets.TURN_RECORDS_BROAD
    for text, _, tokens in (narrow, broad):
        assert tokens <= budgets.TURN_TOKENS and len(text) < budgets.MAX_INJECTED_CHARS
    assert max(len(line) for line in broad[0].splitlines()) < budgets.TURN_BODY_CHARS_BROAD + 120


@pytest.mark.parametrize("prompt, broad", [
    ("how do we deploy and where are the logs?", True), ("Why is CI red? And what broke the build?", True),
    ("fix these:\n- the flaky test\n- the slow build", True), ("give me an overview of auth", True),
    ("what database do we use", False), ("how is the search index built?", False),
])
def test_intent_depth(prompt: str, broad: bool) -> None:
    assert budgets.is_broad(prompt) is broad
    assert budgets.turn_depth(prompt)[0] == (budgets.TURN_RECORDS_BROAD if broad else budgets.TURN_RECORDS)
    assert budgets.search_depth(prompt) == (budgets.SEARCH_RESULTS_BROAD if broad else budgets.SEARCH_RESULTS)


# ---------------------------------------------------------------- hybrid


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(TEST_MODEL))
    monkeypatch.setenv("AGENTCTX_LLM", "0")
    from agentctx.consolidation import embeddings

    return embeddings.load(download=False)


def test_records_are_embedded_with_their_session_neighbours(model) -> None:
    import numpy as np

    from agentctx.consolidation import embeddings

    me = {"type": "discovery", "title": "John", "body": "I hold it for 30-60 seconds."}
    before = {"type": "discovery", "title": "Tim", "body": "How long do you hold that yoga pose?"}
    got = embeddings.encode_records(model, [me], [(before, None)])[0]
    own, side = model.encode([embeddings.text_for(me), embeddings.text_for(before)])
    want = own + embeddings.CONTEXT_SHARE * side
    assert np.allclose(got, want / np.linalg.norm(want), atol=1e-6)


def test_a_neighbour_in_the_same_batch_is_encoded_once_and_counts_the_same(model) -> None:
    import numpy as np

    from agentctx.consolidation import embeddings

    a = {"id": "A", "type": "discovery", "title": "Tim", "body": "How long do you hold that yoga pose?"}
    b = {"id": "B", "type": "discovery", "title": "John", "body": "I hold it for 30-60 seconds."}
    c = {"id": "C", "type": "discovery", "title": "Tim", "body": "That is longer than I manage."}
    seen: list[str] = []
    real = model.encode
    model.encode = lambda texts: seen.extend(texts) or real(texts)
    try:
        got = embeddings.encode_records(model, [a, b, c], [(None, dict(b)), (dict(a), dict(c)), (dict(b), None)])
    finally:
        model.encode = real
    assert len(seen) == 3  # not 3 + 4 neighbour copies
    va, vb, vc = real([embeddings.text_for(r) for r in (a, b, c)])
    want = vb + embeddings.CONTEXT_SHARE * (va + vc)
    assert np.allclose(got[1], want / np.linalg.norm(want), atol=1e-6)


def test_fusion_brings_candidates_from_both_sides(conn, proj, model) -> None:
    from agentctx.consolidation import consolidate

    lexical = add(conn, proj, "Relational database choice", "We keep state in one cluster.", rtype="decision")
    semantic = add(conn, proj, "Postgres is the primary datastore", "All services use PostgreSQL.", rtype="decision")
    consolidate.run(proj, use_embeddings=True)
    pair = hybrid.Loader().get()
    assert pair is not None
    found = [r["id"] for r in hybrid.search_records(conn, proj.id, "which relational database", store=pair[0],
                                                    embedder=pair[1], limit=5)]
    assert found[0] == lexical["id"] and semantic["id"] in found  # no shared word: the vector side brings it
    assert [r["id"] for r in hybrid.search_records(conn, proj.id, "which relational database", limit=5)] == [
        lexical["id"]]
    pair[0].close()


def test_the_dashboard_search_ranks_like_ctx_search(conn, proj, model, monkeypatch) -> None:
    from agentctx.consolidation import consolidate
    from agentctx.surfaces.ui import data

    add(conn, proj, "Relational database choice", "We keep state in one cluster.", rtype="decision")
    add(conn, proj, "Postgres is the primary datastore", "All services use PostgreSQL.", rtype="decision")
    consolidate.run(proj, use_embeddings=True)
    monkeypatch.setattr(data, "VECTORS", hybrid.Loader())
    pair = data.VECTORS.get()
    want = [r["id"] for r in hybrid.search_records(conn, proj.id, "which relational database", store=pair[0],
                                                   embedder=pair[1], limit=50)]
    got = [r["id"] for r in data.record_list(conn, proj.id, query="which relational database")]
    assert got == want and len(got) == 2
    pair[0].close()


def test_the_vector_loader_looks_on_first_use_whatever_the_monotonic_clock(monkeypatch) -> None:
    """time.monotonic() counts from boot: compared with 0.0, the first 300 s after a boot ran FTS5 only."""
    calls = []
    monkeypatch.setattr(hybrid, "_load", lambda: calls.append(1) or ("store", "embedder"))
    monkeypatch.setattr(hybrid.time, "monotonic", lambda: 5.0)  # five seconds after boot
    loader = hybrid.Loader()
    assert loader.get() == ("store", "embedder") and calls == [1]
    monkeypatch.setattr(hybrid, "_load", lambda: calls.append(2))
    empty = hybrid.Loader()
    assert empty.get() is None and empty.get() is None and calls == [1, 2]  # then at most every RECHECK_S
    monkeypatch.setattr(hybrid.time, "monotonic", lambda: 5.0 + hybrid.RECHECK_S + 1)
    assert empty.get() is None and calls == [1, 2, 2]


def test_store_schema_has_the_expansion_columns(conn: sqlite3.Connection) -> None:
    cols = {r[1] for r in conn.execute("PRAGMA table_info(records)")}
    assert {"terms", "context", "expand_pending"} <= cols
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'records_fts'").fetchone()[0]
    assert "terms" in sql and "porter unicode61" in sql
    assert db.connect  # the migration ran through the normal connect
