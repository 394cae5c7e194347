"""Hot-path retrieval: safe FTS5 queries, ranking, isolation and the degradation ladder."""

from __future__ import annotations

import sqlite3

import pytest

from agentctx import clock, project, scoring
from agentctx.store import records, search

OTHER = "0ther0project000"


@pytest.fixture
def store(conn: sqlite3.Connection, proj: project.Project) -> dict[str, dict]:
    """A small project store plus noise, keyed by a short name."""
    recs = {
        "pgbouncer": records.add(conn, proj.id, type="discovery", title="PgBouncer drops prepared statements",
                                 body="Transaction pooling in pgbouncer breaks server-side prepared statements."),
        "money": records.add(conn, proj.id, type="decision", title="Money is stored as integer cents",
                             body="Never floats: BIGINT cents plus an ISO 4217 currency column."),
        "ueberweisung": records.add(conn, proj.id, type="convention", title="Überweisung gebühren",
                                    body="Bank transfer fees are booked on the ledger the same day."),
        "cjk": records.add(conn, proj.id, type="discovery", title="数据库迁移 需要 锁表",
                           body="Schema migrations on the orders table lock it."),
        "emoji": records.add(conn, proj.id, type="convention", title="Release notes use 🚀 for features",
                             body="And 🐛 for fixes in the changelog."),
        "webhook": records.add(conn, proj.id, type="bugfix", title="Webhook retries double-charged on timeout",
                               body="Idempotency keys are now required on POST /charges."),
    }
    return recs


def ids(hits: list[search.Hit]) -> list[str]:
    return [h.record["id"] for h in hits]


# ---------------------------------------------------------------- query building


def test_fts_query_quotes_every_term() -> None:
    assert search.fts_query('Why does "pgbouncer" NEAR(drop) -x*') == '"pgbouncer" OR "near" OR "drop"'
    assert search.fts_query("Überweisung Gebühren!") == '"überweisung" OR "gebühren"'
    assert search.fts_query("ok thanks") is None
    assert search.fts_query("") is None
    assert search.fts_query("   \n\t ") is None
    assert search.fts_query("a b c : * - ( )") is None


def test_terms_are_distinct_and_capped() -> None:
    words = [f"word{i}" for i in range(100)]
    out = search.terms(" ".join(words + words))
    assert len(out) == search.MAX_QUERY_TERMS
    assert len(set(out)) == len(out)
    half = search.MAX_QUERY_TERMS // 2
    assert out == words[: search.MAX_QUERY_TERMS - half] + words[-half:], "head and tail words are both kept"
    assert search.terms("Deploy deploy DEPLOY") == ["deploy"]
    assert search.terms("x" * 65 + " fine") == ["fine"]


HOSTILE = [
    'pgbouncer "',
    '"pgbouncer',
    '"pgbouncer" "prepared',
    'pgbouncer*',
    '*pgbouncer*',
    '-pgbouncer',
    'NOT pgbouncer',
    'pgbouncer -foo',
    'title:pgbouncer',
    'records_fts:pgbouncer a:b',
    'NEAR(pgbouncer prepared)',
    'NEAR(pgbouncer prepared, 2)',
    'AND OR NOT pgbouncer',
    'pgbouncer AND OR NOT',
    '(pgbouncer',
    'pgbouncer)',
    '((pgbouncer) OR (',
    "'; DROP TABLE records; -- pgbouncer",
    'pgbouncer\'; DELETE FROM records WHERE 1=1; --',
    '{pgbouncer} ^pgbouncer +pgbouncer',
    'pgbouncer\x00nul',
    '🔥 pgbouncer 💥',
    'pgbouncer\\ % _ ?',
]


@pytest.mark.parametrize("prompt", HOSTILE)
def test_hostile_prompts_are_inert_and_still_find_the_record(
    conn: sqlite3.Connection, proj: project.Project, store: dict, prompt: str
) -> None:
    hits = search.search(conn, proj.id, prompt)
    assert hits, prompt
    assert hits[0].record["id"] == store["pgbouncer"]["id"]
    assert hits[0].rung == "fts"
    # nothing was executed: the store is intact
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == len(store)


@pytest.mark.parametrize("prompt", ['"', '""', "*", "-", ":", "NEAR()", "AND OR NOT", "()", "'; --", "🚀", "¿?"])
def test_prompts_with_no_searchable_words_return_nothing(
    conn: sqlite3.Connection, proj: project.Project, store: dict, prompt: str
) -> None:
    assert search.search(conn, proj.id, prompt) == []


def test_non_ascii_prompts(conn: sqlite3.Connection, proj: project.Project, store: dict) -> None:
    assert ids(search.search(conn, proj.id, "gebühren"))[:1] == [store["ueberweisung"]["id"]]
    assert ids(search.search(conn, proj.id, "Wie buchen wir Überweisung?"))[:1] == [store["ueberweisung"]["id"]]
    # diacritics are folded on both sides
    assert ids(search.search(conn, proj.id, "gebuhren"))[:1] == [store["ueberweisung"]["id"]]
    assert ids(search.search(conn, proj.id, "数据库迁移"))[:1] == [store["cjk"]["id"]]
    assert ids(search.search(conn, proj.id, "锁表"))[:1] == [store["cjk"]["id"]]
    assert ids(search.search(conn, proj.id, "🚀 release notes"))[:1] == [store["emoji"]["id"]]


def test_megabyte_prompt_with_the_ask_at_the_end(conn: sqlite3.Connection, proj: project.Project,
                                                 store: dict) -> None:
    """A pasted log (many distinct words, none in the store) with the question at the very end."""
    paragraph = " ".join(f"logline{i} severity{i % 7} component{i % 13} elapsed{i}ms" for i in range(40))
    prompt = (paragraph + "\n") * (1_000_000 // (len(paragraph) + 1) + 1)
    prompt += "\nWhy does pgbouncer break this?"
    assert len(prompt) > 1_000_000
    hits = search.search(conn, proj.id, prompt)
    assert ids(hits)[:1] == [store["pgbouncer"]["id"]]
    assert "pgbouncer" in search.terms(prompt)
    assert len(search.terms(prompt)) <= search.MAX_QUERY_TERMS


def test_megabyte_prompt_with_the_ask_at_the_start(conn: sqlite3.Connection, proj: project.Project,
                                                   store: dict) -> None:
    filler = " ".join(f"token{i}" for i in range(50))
    prompt = "Why were webhook retries double charged? " + (filler + " ") * (1_000_000 // len(filler))
    assert len(prompt) > 1_000_000
    assert ids(search.search(conn, proj.id, prompt))[:1] == [store["webhook"]["id"]]


@pytest.mark.parametrize("prompt", ["", " ", "\n\t  \n"])
def test_empty_prompt(conn: sqlite3.Connection, proj: project.Project, store: dict, prompt: str) -> None:
    assert search.search(conn, proj.id, prompt) == []


# ---------------------------------------------------------------- filters and isolation


def test_superseded_records_are_excluded_unless_asked(conn: sqlite3.Connection, proj: project.Project) -> None:
    rest = records.add(conn, proj.id, type="decision", title="Services talk REST", body="ledger service calls")
    grpc = records.supersede(conn, proj.id, rest["id"], title="Services talk gRPC", body="ledger service calls")
    assert ids(search.search(conn, proj.id, "ledger service")) == [grpc["id"]]
    # worded like the old fact, the prompt finds what replaced it, never the old record (test_retrieval)
    assert ids(search.search(conn, proj.id, "REST")) == [grpc["id"]]
    both = ids(search.search(conn, proj.id, "ledger service", include_superseded=True))
    assert sorted(both) == sorted([rest["id"], grpc["id"]])
    assert ids(search.search(conn, proj.id, "REST", include_superseded=True)) == [rest["id"]]


def test_project_isolation_but_global_records_are_shared(conn: sqlite3.Connection, proj: project.Project) -> None:
    mine = records.add(conn, proj.id, type="decision", title="Kafka for the event bus")
    theirs = records.add(conn, OTHER, type="decision", title="Kafka topics per tenant")
    glob = records.add(conn, OTHER, type="preference", title="Prefers Kafka examples in Python", scope="global")
    found = ids(search.search(conn, proj.id, "kafka"))
    assert theirs["id"] not in found
    assert sorted(found) == sorted([mine["id"], glob["id"]])
    assert sorted(ids(search.search(conn, OTHER, "kafka"))) == sorted([theirs["id"], glob["id"]])


def test_type_filter_limit_and_exclude(conn: sqlite3.Connection, proj: project.Project, store: dict) -> None:
    extra = [records.add(conn, proj.id, type="discovery", title=f"pgbouncer note {i}") for i in range(5)]
    assert len(search.search(conn, proj.id, "pgbouncer", limit=3)) == 3
    only = search.search(conn, proj.id, "pgbouncer OR charged", types=["bugfix"])
    assert ids(only) == [store["webhook"]["id"]]
    skip = {store["pgbouncer"]["id"], extra[0]["id"]}
    assert not skip & set(ids(search.search(conn, proj.id, "pgbouncer", exclude=skip)))


def test_relative_floor_drops_weak_hits(conn: sqlite3.Connection, proj: project.Project) -> None:
    strong = records.add(conn, proj.id, type="decision", title="Redis cache eviction policy allkeys-lru",
                         body="Redis cache eviction: allkeys-lru on the cache cluster.")
    weak = records.add(conn, proj.id, type="discovery", title="Long note",
                       body=" ".join(["filler"] * 300) + " eviction")
    prompt = "redis cache eviction allkeys lru policy"
    assert set(ids(search.search(conn, proj.id, prompt))) == {strong["id"], weak["id"]}
    assert ids(search.search(conn, proj.id, prompt, relative_floor=0.5)) == [strong["id"]]


# ---------------------------------------------------------------- ranking


def test_pinned_records_rank_first(conn: sqlite3.Connection, proj: project.Project) -> None:
    strong = records.add(conn, proj.id, type="decision", title="Celery retries with exponential backoff",
                         body="Celery retries: exponential backoff, max 5 retries.")
    weak = records.add(conn, proj.id, type="handover", title="Misc notes",
                       body="Lots of unrelated words here, and celery somewhere " + "padding " * 60)
    assert ids(search.search(conn, proj.id, "celery retries backoff")) == [strong["id"], weak["id"]]
    records.pin(conn, weak["id"], all_projects=True)
    hits = search.search(conn, proj.id, "celery retries backoff")
    assert ids(hits) == [weak["id"], strong["id"]]
    assert hits[0].score < hits[1].score, "pinned outranks even a better-scored hit"


def test_old_bugfix_ranks_below_an_equally_matching_new_one(conn: sqlite3.Connection, proj: project.Project,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Age breaks the tie, within its bound (scoring.STANDING_SPAN): never more than ×0.9 / ×1.05."""
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-01T00:00:00Z")
    old = records.add(conn, proj.id, type="bugfix", title="Timeout in ledger client fixed (March)",
                      body="Raised the ledger client timeout.", valid_from=clock.parse("2026-03-01"))
    new = records.add(conn, proj.id, type="bugfix", title="Timeout in ledger client fixed (May)",
                      body="Raised the ledger client timeout.", valid_from=clock.parse("2026-05-30"))
    hits = search.search(conn, proj.id, "ledger client timeout")
    assert ids(hits) == [new["id"], old["id"]]
    assert hits[0].relevance == pytest.approx(hits[1].relevance)
    span = scoring.STANDING_SPAN
    assert (1 - span) / (1 + span / 2) <= hits[1].score / hits[0].score < 1


def test_decisions_do_not_decay(conn: sqlite3.Connection, proj: project.Project,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-01T00:00:00Z")
    old = records.add(conn, proj.id, type="decision", title="Use Terraform for infra",
                      body="All cloud resources in Terraform.", valid_from=clock.parse("2024-01-01"))
    new = records.add(conn, proj.id, type="decision", title="Use Terraform for infra",
                      body="All cloud resources in Terraform.", valid_from=clock.parse("2026-05-31"))
    hits = {h.record["id"]: h for h in search.search(conn, proj.id, "terraform infra")}
    assert hits[old["id"]].score == pytest.approx(hits[new["id"]].score)


def test_type_weight_breaks_ties(conn: sqlite3.Connection, proj: project.Project,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-01T00:00:00Z")
    handover = records.add(conn, proj.id, type="handover", title="Vault secrets rotation", body="same words")
    decision = records.add(conn, proj.id, type="decision", title="Vault secrets rotation", body="same words")
    discovery = records.add(conn, proj.id, type="discovery", title="Vault secrets rotation", body="same words")
    assert ids(search.search(conn, proj.id, "vault rotation")) == [decision["id"], discovery["id"], handover["id"]]


def test_inferred_confidence_ranks_below_explicit(conn: sqlite3.Connection, proj: project.Project) -> None:
    inferred = records.add(conn, proj.id, type="convention", title="Branch names use ticket ids, said once",
                           confidence="inferred")
    explicit = records.add(conn, proj.id, type="convention", title="Branch names use ticket ids, as agreed")
    hits = search.search(conn, proj.id, "branch names ticket")
    assert ids(hits) == [explicit["id"], inferred["id"]]
    assert hits[0].relevance == pytest.approx(hits[1].relevance)
    span = scoring.STANDING_SPAN  # confidence is part of the standing, within the same bound
    assert hits[1].score == pytest.approx(hits[0].score * (1 - span + span * 0.8))


# ---------------------------------------------------------------- degradation ladder


def _break_fts(conn: sqlite3.Connection) -> None:
    for trigger in ("records_fts_ai", "records_fts_ad", "records_fts_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE records_fts")


def test_like_fallback_when_fts_is_gone(conn: sqlite3.Connection, proj: project.Project, store: dict) -> None:
    _break_fts(conn)
    # writes still work without the index
    late = records.add(conn, proj.id, type="discovery", title="Pgbouncer max_client_conn is 100")
    superseded = records.add(conn, proj.id, type="discovery", title="pgbouncer old fact")
    records.supersede(conn, proj.id, superseded["id"], title="replacement fact", body="")
    records.add(conn, OTHER, type="discovery", title="pgbouncer in another project")

    hits = search.search(conn, proj.id, 'Why does "pgbouncer" NEAR(x) fail? -- 100%_ *')
    assert hits and all(h.rung == "like" for h in hits)
    assert set(ids(hits)) == {store["pgbouncer"]["id"], late["id"]}
    # title matches weigh more than body-only matches
    assert ids(search.search(conn, proj.id, "prepared statements"))[:1] == [store["pgbouncer"]["id"]]
    assert ids(search.search(conn, proj.id, "gebühren")) == [store["ueberweisung"]["id"]]
    assert ids(search.search(conn, proj.id, "数据库迁移")) == [store["cjk"]["id"]]
    # LIKE wildcards in the prompt are literal
    assert search.search(conn, proj.id, "%% __") == []


def test_last_rung_returns_pinned_records_only(conn: sqlite3.Connection, proj: project.Project, store: dict,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    records.pin(conn, store["money"]["id"], all_projects=True)
    pinned_old = records.add(conn, proj.id, type="decision", title="Pinned then superseded", pinned=True)
    records.supersede(conn, proj.id, pinned_old["id"], title="Successor, still pinned", body="")
    records.add(conn, OTHER, type="decision", title="Someone else's pin", pinned=True)
    _break_fts(conn)

    def broken_like(*args, **kwargs):
        raise sqlite3.OperationalError("simulated: LIKE scan failed")

    monkeypatch.setattr(search, "_like", broken_like)
    hits = search.search(conn, proj.id, "pgbouncer prepared statements")
    assert hits and all(h.rung == "pinned" for h in hits)
    titles = sorted(h.record["title"] for h in hits)
    assert titles == ["Money is stored as integer cents", "Successor, still pinned"]


def test_search_hit_carries_scores(conn: sqlite3.Connection, proj: project.Project, store: dict) -> None:
    hit = search.search(conn, proj.id, "pgbouncer")[0]
    assert hit.rung == "fts" and hit.relevance > 0 and hit.score > 0
    assert hit.record["title"] == "PgBouncer drops prepared statements"


# ---------------------------------------------------------------- trivial prompts


@pytest.mark.parametrize("prompt", ["ok", "OK", "okay.", "yes", "Yes!", "continue", "Continue.", "Thanks!",
                                    "thank you", "  ", "", "\n", "go ahead", "lgtm", "sounds good!", "y", "k"])
def test_trivial_prompts(prompt: str) -> None:
    assert search.is_trivial(prompt)


@pytest.mark.parametrize("prompt", ["ok, now fix the pgbouncer config", "yes but use gRPC", "continue with the refunds",
                                    "thanks, why do webhooks double charge?", "Why is CI red?", "k8s", "no way to cache this?"])
def test_real_prompts_are_not_trivial(prompt: str) -> None:
    assert not search.is_trivial(prompt)


# ---------------------------------------------------------------- large stores


def _bulk(conn: sqlite3.Connection, project_id: str, n: int, title: str, body: str) -> None:
    from agentctx import clock, ids

    stamp = clock.now()
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO records (id, project_id, type, title, body, valid_from, recorded_at, source) "
        "VALUES (?, ?, 'discovery', ?, ?, ?, ?, 'import')",
        [(ids.new_id(), project_id, f"{title} {i}", body, stamp, stamp) for i in range(n)],
    )
    conn.execute("COMMIT")


def test_near_ubiquitous_words_are_not_ranked_in_large_stores(conn: sqlite3.Connection, proj: project.Project) -> None:
    _bulk(conn, proj.id, 2500, "worker note", "the worker restarted")
    target = records.add(conn, proj.id, type="bugfix", title="Worker deadlock in the ledger reconciler",
                         body="The reconciler held two locks; now ordered.")
    words = search.terms("worker deadlock reconciler")
    assert search.informative(conn, words) == ["deadlock", "reconciler"]  # "worker" is in 2,501 of 2,501
    assert search.informative(conn, ["worker", "nosuchword"]) == ["worker"]  # the rarest matching word stays
    hits = search.search(conn, proj.id, "worker deadlock reconciler", limit=3)
    assert ids(hits)[0] == target["id"]


def test_prerank_falls_back_when_top_hits_belong_to_other_projects(conn: sqlite3.Connection, proj: project.Project) -> None:
    _bulk(conn, "another-project", search.PRERANK + 50, "kafka kafka partition", "kafka kafka kafka")
    mine = records.add(conn, proj.id, type="decision", title="We use kafka for events", body="One topic per aggregate.")
    hits = search.search(conn, proj.id, "kafka", limit=3)
    assert ids(hits) == [mine["id"]]


def test_digest_reads_current_records_in_index_order(conn: sqlite3.Connection, proj: project.Project) -> None:
    plan = " ".join(
        row[3] for row in conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM records WHERE project_id = ? AND type = ? AND superseded_at IS NULL "
            "ORDER BY pinned DESC, score DESC, recorded_at DESC LIMIT 5", (proj.id, "decision"))
    )
    assert "records_active_rank" in plan and "TEMP B-TREE" not in plan


def test_archived_records_are_not_retrieved(conn: sqlite3.Connection, proj: project.Project) -> None:
    kept = records.add(conn, proj.id, type="discovery", title="Kafka consumer lag alarm at 10k messages")
    rolled = records.add(conn, proj.id, type="discovery", title="Kafka consumer lag seen on Monday")
    conn.execute("UPDATE records SET archived_at = ? WHERE id = ?", (clock.now(), rolled["id"]))
    assert ids(search.search(conn, proj.id, "kafka consumer lag")) == [kept["id"]]
    assert [r["id"] for r in records.active(conn, proj.id, ["discovery"])] == [kept["id"]]
    assert records.count_active(conn, proj.id) == 1
    assert {r["id"] for r in records.history(conn, proj.id)} == {kept["id"], rolled["id"]}  # history keeps it


def test_current_record_count_reads_only_an_index(conn: sqlite3.Connection, proj: project.Project) -> None:
    plan = " ".join(row[3] for row in conn.execute(
        "EXPLAIN QUERY PLAN SELECT COUNT(*) FROM records WHERE project_id = ? AND superseded_at IS NULL "
        "AND archived_at IS NULL", (proj.id,)))
    assert "COVERING INDEX records_current" in plan
