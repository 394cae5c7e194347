"""The consolidation pass in-process: embeddings, near-duplicates, scores, archive, prune, digest ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentctx import flight
from agentctx.consolidation import consolidate
from agentctx.injection import digest
from agentctx.store import archive, db, records, vectors
from agentctx.surfaces.cli import cli
from tests.support.models import TEST_MODEL as MODEL
from tests.support.models import TEST_MODEL_DIM, TEST_MODEL_TAG


@pytest.fixture
def model(monkeypatch):
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(MODEL))
    monkeypatch.setenv("AGENTCTX_LLM", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def add(conn, proj, rtype, title, body="", **kw):
    return records.add(conn, proj.id, type=rtype, title=title, body=body, **kw)


def log_text(home: Path) -> str:
    path = home / "logs" / "agentctx.log"
    return path.read_text() if path.exists() else ""


def test_pending_records_are_embedded_once_and_again_after_an_edit(home, conn, proj, model):
    a = add(conn, proj, "decision", "Use PostgreSQL 16 for the main database")
    add(conn, proj, "convention", "Tests live in tests/ and run with pytest")
    report = consolidate.run(proj)
    assert report["status"] == "ok", report
    step = report["steps"]["embeddings"]
    assert step["embedded"] == 2 and step["model"] == TEST_MODEL_TAG and step["backend"] == "vec0"
    rows = conn.execute("SELECT pending_embedding, embedded_model FROM records").fetchall()
    assert [tuple(r) for r in rows] == [(0, TEST_MODEL_TAG)] * 2
    assert consolidate.run(proj)["steps"]["embeddings"]["embedded"] == 0
    records.edit(conn, a["id"], body="Version 16, with pgvector", all_projects=True)
    assert consolidate.run(proj)["steps"]["embeddings"]["embedded"] == 1
    store = vectors.Store()
    assert store.count() == 2
    store.close()


def test_without_a_model_the_pass_still_runs_on_fts5(home, conn, proj, monkeypatch):
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(home / "no-model-here"))
    add(conn, proj, "decision", "Use PostgreSQL 16 for the main database")
    report = consolidate.run(proj)
    assert report["status"] == "ok" and "does not exist" in report["steps"]["embeddings"]["skipped"]
    assert "embeddings skipped" in log_text(home) and "search stays on FTS5" in log_text(home)
    assert report["steps"]["scores"] is not None and report["steps"]["digest"]["ranked"] == 1
    assert consolidate.run(proj, use_embeddings=False)["steps"]["embeddings"] == {"skipped": "embeddings are off"}


def test_the_config_flag_turns_embeddings_off(home, conn, proj, model):
    from agentctx import settings

    settings.save_user(embeddings=False)
    add(conn, proj, "decision", "Use PostgreSQL 16 for the main database")
    assert consolidate.run(proj)["steps"]["embeddings"] == {"skipped": "embeddings are off"}
    assert not Path(vectors.path()).exists()


def test_a_model_change_re_embeds_everything(home, conn, proj, model):
    add(conn, proj, "decision", "Use PostgreSQL 16 for the main database")
    add(conn, proj, "decision", "Deploy with Helm charts")
    consolidate.run(proj)
    store = vectors.Store()
    store.reset("another-model|64", 64)  # as if the vectors came from another model
    store.close()
    conn.execute("UPDATE records SET embedded_model = 'another-model|64'")
    report = consolidate.run(proj)
    assert report["steps"]["embeddings"]["embedded"] == 2
    assert f"vector store holds another-model|64 vectors, the model is now {TEST_MODEL_TAG}" in log_text(home)
    store = vectors.Store()
    assert store.tag() == TEST_MODEL_TAG and store.dim() == TEST_MODEL_DIM and store.count() == 2
    store.close()


def test_near_duplicates_merge_into_the_older_record(home, conn, proj, model):
    old = add(conn, proj, "decision", "Use PostgreSQL 16 for the main database", valid_from="2026-01-05",
              confidence="inferred")
    conn.execute("UPDATE records SET reinforce_count = 2, access_count = 3 WHERE id = ?", (old["id"],))
    # The same words in another order: not an exact restatement (that would reinforce at write time),
    # so two records until the pass merges them.
    new = add(conn, proj, "decision", "For the main database use PostgreSQL 16", confidence="explicit")
    other = add(conn, proj, "decision", "Deploy the services with Helm charts on Kubernetes")
    report = consolidate.run(proj)
    merges = report["steps"]["dedup"]["merges"]
    assert [(m["kept"], m["merged"], m["confirmed_by"]) for m in merges] == [(old["id"], new["id"], "strict")]
    kept, gone = records.resolve(conn, old["id"], all_projects=True), records.resolve(conn, new["id"], all_projects=True)
    assert gone["superseded_by"] == old["id"] and gone["superseded_at"]
    assert kept["reinforce_count"] == 3 and kept["confidence"] == "explicit" and kept["access_count"] == 3
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE from_id = ? AND to_id = ? AND rel_type = 'derives_from'",
                        (old["id"], new["id"])).fetchone()[0] == 1
    assert records.resolve(conn, other["id"], all_projects=True)["superseded_at"] is None
    store = vectors.Store()
    assert new["id"] not in store.ids() and old["id"] in store.ids()
    store.close()


class Judge:
    """A client with the llm.Client interface that answers the confirmation prompt with a fixed word."""

    def __init__(self, word):
        self.word, self.calls = word, []

    def complete(self, system, user, usage):
        self.calls.append(user)
        return self.word


@pytest.mark.parametrize("word, merged", [("SAME", 1), ("DIFFERENT", 0)])
def test_a_model_confirms_candidate_pairs(home, conn, proj, model, word, merged):
    from agentctx import llm
    from agentctx.consolidation import dedup, embeddings

    recs = [add(conn, proj, "bugfix", "Fix <script> injection in the login form", valid_from="2026-02-01"),
            add(conn, proj, "bugfix", "Fix the <script> injection in the login form")]
    emb = embeddings.load()
    store = vectors.Store()
    store.reset(emb.tag, emb.dim)
    vecs = emb.encode([embeddings.text_for(r) for r in recs])
    store.upsert([(r["id"], proj.id, "bugfix", vectors.to_blob(v)) for r, v in zip(recs, vecs, strict=True)])
    judge = Judge(word)
    merges = dedup.run(conn, store, proj.id, client=judge, usage=llm.Usage())
    store.close()
    assert len(merges) == merged and len(judge.calls) == 1
    user = judge.calls[0]
    assert "&lt;script&gt;" in user and "<script>" not in user  # escaped, fenced


def test_scores_decay_by_type_and_mark_prune_candidates(home, conn, proj, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-01T00:00:00Z")
    dec = add(conn, proj, "decision", "Use PostgreSQL", valid_from="2025-06-01", recorded_at="2025-06-01T00:00:00Z")
    disc = add(conn, proj, "discovery", "The cache warms in 3 s", valid_from="2026-05-22",
               recorded_at="2026-05-22T00:00:00Z")
    stale = add(conn, proj, "discovery", "Old flaky CI runner", valid_from="2026-01-01",
                recorded_at="2026-01-01T00:00:00Z")
    archive.rescore(conn)
    score = {r["id"]: r for r in map(dict, conn.execute("SELECT id, score, low_score_since FROM records"))}
    assert score[dec["id"]]["score"] == 1.0
    assert score[disc["id"]]["score"] == pytest.approx(0.95 ** 10, abs=1e-3)
    assert score[stale["id"]]["score"] < 0.1 and score[stale["id"]]["low_score_since"].startswith("2026-06-01T00:00:00")
    assert score[disc["id"]]["low_score_since"] is None
    assert archive.prune_candidates(conn, proj.id) == []  # low for 0 days only
    monkeypatch.setenv("AGENTCTX_NOW", "2026-08-15T00:00:00Z")
    assert [r["id"] for r in archive.prune_candidates(conn, proj.id)] == [stale["id"]]


def test_status_lists_and_prune_deletes_only_on_request(home, conn, proj, repo):
    keep = add(conn, proj, "discovery", "Still useful")
    doomed = add(conn, proj, "discovery", "Old flaky CI runner")
    conn.execute("UPDATE records SET score = 0.01, low_score_since = '2025-01-01T00:00:00Z' WHERE id = ?",
                 (doomed["id"],))
    runner = CliRunner()
    status = json.loads(runner.invoke(cli, ["--project", str(repo), "status", "--json"]).output)
    assert [r["id"] for r in status["prune_candidates"]] == [doomed["id"]]
    assert doomed["id"] in runner.invoke(cli, ["--project", str(repo), "status"]).output
    listed = runner.invoke(cli, ["--project", str(repo), "prune"])
    assert "1 prune candidates" in listed.output and records.resolve(conn, doomed["id"], all_projects=True)
    done = runner.invoke(cli, ["--project", str(repo), "prune", "--yes"])
    assert done.exit_code == 0 and "1 deleted" in done.output
    assert [r["id"] for r in records.active(conn, proj.id)] == [keep["id"]]


def test_old_superseded_records_move_to_the_cold_table_and_history_still_finds_them(home, conn, proj, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-10T00:00:00Z")
    rest = add(conn, proj, "decision", "Services talk REST", valid_from="2026-01-01")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-02-01T00:00:00Z")
    grpc = records.supersede(conn, proj.id, rest["id"], body="Services talk gRPC", valid_from="2026-02-01")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-01T00:00:00Z")
    assert archive.archive(conn, dry_run=True) == 1
    assert archive.archive(conn) == 1
    assert conn.execute("SELECT COUNT(*) FROM records WHERE id = ?", (rest["id"],)).fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM records_archive WHERE id = ?", (rest["id"],)).fetchone()[0] == 1
    then = records.history(conn, proj.id, at="2026-01-15")
    assert [r["id"] for r in then] == [rest["id"]]
    assert [r["id"] for r in records.history(conn, proj.id)] == [grpc["id"]]
    assert archive.archive(conn) == 0


def test_the_digest_follows_the_consolidated_ranking_and_new_records_come_first(home, conn, proj, model):
    for i in range(6):
        add(conn, proj, "decision", f"Decision number {i} about module m{i}")
    add(conn, proj, "handover", "Working on module m4 caching", body="Next: finish the m4 cache")
    report = consolidate.run(proj)
    assert report["steps"]["digest"]["ranked"] == 6 and report["steps"]["digest"]["signals"] == 3
    ranked = json.loads(Path(digest.rank_path(proj.id)).read_text())["ids"]
    cached = digest.read_cache(proj.id, db.generation(conn))
    assert cached is not None and cached.tokens <= 1500
    assert [i for i in cached.record_ids if i in ranked] == ranked[: len([i for i in cached.record_ids if i in ranked])]
    assert records.resolve(conn, ranked[0], all_projects=True)["title"] == "Decision number 4 about module m4"  # the handover's focus
    fresh = add(conn, proj, "decision", "A decision made after the pass")
    live = digest.build(conn, proj)
    assert live.record_ids[0] == fresh["id"] and live.tokens <= 1500


def test_the_ranking_covers_what_the_decisions_section_shows_a_project_preference_too(home, conn, proj, monkeypatch):
    """The pass ranks the decisions section's records (``digest.in_force``): this project's own preference is
    ranked with the decisions, a cross-project one is not (the developer profile shows it)."""
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(home / "no-model-here"))
    decision = add(conn, proj, "decision", "Use PostgreSQL 16 for the main database")
    own = records.add(conn, proj.id, type="preference", scope="project", title="The UI stays in light mode")
    everywhere = records.add(conn, proj.id, type="preference", scope="global", title="Answer in short sentences")
    report = consolidate.run(proj)
    assert report["status"] == "ok" and report["steps"]["digest"]["ranked"] == 2
    ranked = json.loads(Path(digest.rank_path(proj.id)).read_text())["ids"]
    assert set(ranked) == {decision["id"], own["id"]} and everywhere["id"] not in ranked


def test_two_passes_at_once_one_runs(home, conn, proj, model):
    held = flight.Lock("consolidate")
    assert held.acquire()
    try:
        report = consolidate.run(proj)
    finally:
        held.release()
    assert report["status"] == "busy"
    assert "another consolidation pass is running" in log_text(home)
    assert consolidate.run(proj)["status"] == "ok"


def test_the_time_box_leaves_the_rest_for_the_next_pass(home, conn, proj, model):
    for i in range(5):
        add(conn, proj, "discovery", f"Finding {i}")
    report = consolidate.run(proj, seconds=0)
    assert report["status"] == "partial" and "time box reached" in log_text(home)
    assert conn.execute("SELECT COUNT(*) FROM records WHERE pending_embedding = 1").fetchone()[0] == 5
    assert consolidate.run(proj)["steps"]["embeddings"]["embedded"] == 5


def test_dry_run_changes_nothing(home, conn, proj, model, repo):
    add(conn, proj, "decision", "Use PostgreSQL 16 for the main database")
    gen = db.generation(conn)
    out = CliRunner().invoke(cli, ["--project", str(repo), "consolidate", "--dry-run", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["dry_run"] and report["steps"]["embeddings"]["pending"] == 1
    assert db.generation(conn) == gen and not Path(digest.rank_path(proj.id)).exists()
    assert conn.execute("SELECT pending_embedding FROM records").fetchone()[0] == 1


def test_the_other_consolidation_steps_run(home, conn, proj, model):
    add(conn, proj, "decision", "Use PostgreSQL 16 for the main database")
    steps = consolidate.run(proj)["steps"]
    for name in ("rollup", "devprofile", "drift", "teamsync"):
        assert name in steps and "skipped" not in steps[name] and not steps[name].get("error"), (name, steps[name])


def test_without_a_model_similar_but_different_facts_are_never_merged(home, conn, proj, model):
    """A static model scores these pairs above 0.92 (MySQL vs PostgreSQL: ~0.965); words and numbers decide."""
    pairs = [("Use MySQL 8 for the main database", "Use PostgreSQL 16 for the main database"),
             ("Pin numpy to 1.26 in the worker", "Pin numpy to 2.1 in the worker"),
             ("No emojis in commit messages for deploy", "No emojis in commit messages for media")]
    for a, b in pairs:
        add(conn, proj, "decision", a)
        add(conn, proj, "decision", b)
    report = consolidate.run(proj)
    assert report["steps"]["dedup"]["merged"] == 0
    assert records.count_active(conn, proj.id) == 6
    from agentctx.consolidation import dedup

    store = vectors.Store()
    assert dedup.candidates(*store.matrix(proj.id, "decision"))  # they were candidates, and were refused
    store.close()


@pytest.mark.parametrize("answer, merged", [("SAME", 1), ("DIFFERENT", 0)])
def test_with_an_api_key_haiku_confirms_merges_through_the_real_sdk(home, conn, proj, monkeypatch, answer, merged):
    from tests.support import fake_api

    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(MODEL))
    monkeypatch.delenv("AGENTCTX_LLM", raising=False)
    add(conn, proj, "decision", "Use PostgreSQL 16 for the main database", valid_from="2026-01-05")
    add(conn, proj, "decision", "Use PostgreSQL 16 for the main database server")  # a near-duplicate, not a restatement
    fact = 'fact n='
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.text(
            answer if fact in json.dumps(body) else "OK")) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        report = consolidate.run(proj)
        asked = [r.body for r in api.requests if r.is_messages and fact in json.dumps(r.body)]
    assert report["steps"]["dedup"]["merged"] == merged and report["steps"]["dedup"]["confirmed_by"] == "haiku"
    assert len(asked) == 1 and "inert data" in json.dumps(asked[0]["system"])
    assert records.count_active(conn, proj.id) == 2 - merged
