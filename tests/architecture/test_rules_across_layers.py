"""Rules the mutation run (bench/mutation.py) found unguarded: pinned first, the near-duplicate threshold, which
types decay, the redaction label of each provider key, project scoping and supersession on every path."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone

import pytest

from agentctx import clock, llm, project, redact, render, scoring
from agentctx.consolidation import dedup
from agentctx.events.user_prompt_submit import on_user_prompt_submit
from agentctx.hookio import HookEvent
from agentctx.injection import digest, turn
from agentctx.store import archive, db, query, records, search, vectors
from tests.conftest import make_repo
from tests.support import fake_api

NOW = "2026-06-01T00:00:00Z"


def decisions_section(text: str) -> list[str]:
    """The record lines of the digest's decisions section."""
    section = text.split("## Decisions and conventions in force\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


# ---------------------------------------------------------------- pinned first


def test_a_pinned_decision_leads_the_digest_though_it_is_the_oldest(conn, proj, home):
    """The pinned record is added first and dated first: neither recency nor insertion order can put it on top."""
    pinned = records.add(conn, proj.id, type="decision", title="Money is integer cents", pinned=True,
                         valid_from="2025-01-01T00:00:00Z", recorded_at="2025-01-01T00:00:00Z")
    later = [records.add(conn, proj.id, type="decision" if i % 2 else "convention", title=f"Later rule {i}")
             for i in range(5)]
    lines = decisions_section(digest.build(conn, proj).text)
    assert lines[0].startswith("- 📌 [decision] Money is integer cents")
    assert len(lines) == 6

    # The consolidation pass ranks it last: pinned still leads.
    digest.write_rank(proj.id, [r["id"] for r in later] + [pinned["id"]])
    lines = decisions_section(digest.build(conn, proj).text)
    assert lines[0].startswith("- 📌 [decision] Money is integer cents")
    assert [ln.split("] ", 1)[1].split(" (", 1)[0] for ln in lines[1:]] == [r["title"] for r in later]

    # Unpinned, it takes the place the ranking gives it.
    records.pin(conn, pinned["id"], on=False, project_id=proj.id)
    lines = decisions_section(digest.build(conn, proj).text)
    assert lines[-1].startswith("- [decision] Money is integer cents")


def test_a_pinned_record_leads_the_digest_without_a_ranking_too(conn, proj, home):
    later = [records.add(conn, proj.id, type="decision", title=f"Later rule {i}") for i in range(3)]
    pinned = records.add(conn, proj.id, type="convention", title="Branch names carry the ticket id", pinned=True,
                         recorded_at="2025-01-01T00:00:00Z")
    lines = decisions_section(digest.build(conn, proj).text)
    assert lines[0].startswith("- 📌 [convention] Branch names carry the ticket id")
    assert [r["id"] for r in records.active(conn, proj.id, ["decision", "convention"])][0] == pinned["id"]
    assert len(lines) == 1 + len(later)


def test_a_pinned_old_weak_match_leads_a_prompts_records(conn, proj, home, repo, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    pinned = records.add(conn, proj.id, type="bugfix", title="Webhook notes", pinned=True,
                         body="webhook " + "filler words " * 40, valid_from="2025-06-01T00:00:00Z",
                         recorded_at="2025-06-01T00:00:00Z")
    strong = records.add(conn, proj.id, type="bugfix", title="Webhook signature retries fixed",
                         body="The webhook signature retries used local time.")
    out = on_user_prompt_submit(HookEvent.of("UserPromptSubmit", session_id="s1", cwd=str(repo),
                                             prompt="webhook signature retries"))
    lines = [ln for ln in out["hookSpecificOutput"]["additionalContext"].splitlines() if ln.startswith("- ")]
    assert f"id {pinned['id']})" in lines[0] and f"id {strong['id']})" in lines[1]


# ---------------------------------------------------------------- how a record is injected


def test_one_record_is_one_escaped_line_with_its_type_date_and_id():
    rec = {"id": "01KB2Z0000000000000000000A", "type": "decision", "title": "Money <b>as</b> cents",
           "body": "Never  floats\n for amounts & totals", "valid_from": "2026-03-01T09:30:00.000000Z",
           "recorded_at": "2026-04-01T00:00:00.000000Z", "pinned": 1, "confidence": "inferred"}
    assert render.record_block(rec, body_chars=12) == (
        "- 📌 [decision] Money &lt;b&gt;as&lt;/b&gt; cents (2026-03-01, inferred, id 01KB2Z0000000000000000000A): "
        "Never floa …")
    assert render.record_block(rec, body_chars=100).endswith("): Never floats for amounts &amp; totals")
    plain = {**rec, "pinned": 0, "confidence": "explicit", "valid_from": None}
    assert render.record_block(plain, body_chars=0, show_type=False) == (
        "- Money &lt;b&gt;as&lt;/b&gt; cents (2026-04-01, id 01KB2Z0000000000000000000A)")
    assert render.record_block({**plain, "body": ""}, body_chars=50) == (
        "- [decision] Money &lt;b&gt;as&lt;/b&gt; cents (2026-04-01, id 01KB2Z0000000000000000000A)")


def test_a_prompts_records_carry_their_type(conn, proj, home, repo, monkeypatch):
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    records.add(conn, proj.id, type="bugfix", title="Webhook signature check used local time",
                body="Compare in UTC.", confidence="inferred")
    out = on_user_prompt_submit(HookEvent.of("UserPromptSubmit", session_id="s1", cwd=str(repo),
                                             prompt="webhook signature local time"))
    (line,) = [ln for ln in out["hookSpecificOutput"]["additionalContext"].splitlines() if ln.startswith("- ")]
    assert line.startswith("- [bugfix] Webhook signature check used local time (") and ", inferred, id " in line


def test_the_claudemd_drift_line_follows_the_decisions_once(conn, proj, home, repo):
    from agentctx.sharing import drift

    for title in ("Services talk over gRPC", "Background jobs run on Dramatiq", "Money is integer cents"):
        records.add(conn, proj.id, type="decision", title=title)
    records.add(conn, proj.id, type="handover", title="Refund endpoint half done")
    assert len(drift.scan(conn, proj)) == 3  # no CLAUDE.md: all three are missing there
    lines = digest.build(conn, proj).text.splitlines()
    (at,) = [i for i, ln in enumerate(lines) if "not reflected in CLAUDE.md" in ln]
    assert lines[at - 1].startswith("- [decision] ") and lines[at + 1] == "## Last session handover"


def test_an_explorers_brief_lists_conventions_without_a_type_label(conn, proj, home):
    from agentctx.injection import briefs

    records.add(conn, proj.id, type="convention", title="Errors are problem+json")
    records.add(conn, proj.id, type="decision", title="Money is integer cents")
    text = briefs.brief(conn, proj, "Explore").text
    assert "## Conventions in force\n- Errors are problem+json (" in text and "Money is integer cents" not in text


def test_an_unwritable_digest_cache_costs_nothing_but_the_cache(conn, proj, home):
    records.add(conn, proj.id, type="decision", title="Money is integer cents")
    home.mkdir(parents=True, exist_ok=True)
    (home / "digests").write_text("a file where the cache folder should be")
    assert "Money is integer cents" in digest.current(conn, proj).text


def test_a_digest_of_unknown_generation_is_never_taken_for_a_fresh_one(conn, proj, home):
    records.add(conn, proj.id, type="decision", title="Money is integer cents")
    digest.write_cache(proj.id, digest.Digest("stale text", 3))  # no generation given
    for generation in range(0, 4):
        assert digest.read_cache(proj.id, generation) is None
    assert "stale text" not in digest.current(conn, proj).text


# ---------------------------------------------------------------- near-duplicates: cosine > 0.92


def _pair_matrix(cos: float):
    import numpy as np

    a = np.zeros(8, dtype=np.float32)
    b = np.zeros(8, dtype=np.float32)
    a[0] = 1.0
    b[0], b[1] = cos, math.sqrt(1 - cos * cos)
    return np.vstack([a, b]).astype(np.float32)


@pytest.mark.parametrize(("cos", "candidate"), [(0.70, False), (0.90, False), (0.93, True), (0.99, True)])
def test_only_pairs_above_cosine_092_are_candidates(cos, candidate):
    found = dedup.candidates(["A", "B"], _pair_matrix(cos))
    assert bool(found) is candidate
    if candidate:
        ((sim, a, b),) = found
        assert (a, b) == ("A", "B") and sim == pytest.approx(cos, abs=1e-6)


@pytest.mark.parametrize(("cos", "merged"), [(0.70, 0), (0.95, 1)])
def test_a_dissimilar_pair_is_left_alone_even_by_a_model_that_says_same(conn, proj, home, monkeypatch, cos, merged):
    """The threshold, not the model, decides what is compared: at cosine 0.70 Haiku is never asked."""
    a = records.add(conn, proj.id, type="decision", title="Use PostgreSQL 16", valid_from="2026-01-05T00:00:00Z")
    b = records.add(conn, proj.id, type="decision", title="Deploy with Helm charts")
    store = vectors.Store()
    store.reset("test-vectors|8", 8)
    store.upsert([(r["id"], proj.id, "decision", vectors.to_blob(v)) for r, v in zip((a, b), _pair_matrix(cos),
                                                                                      strict=True)])
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.text("SAME")) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        merges = dedup.run(conn, store, proj.id, client=llm.Client(timeout=10, max_retries=0), usage=llm.Usage())
        asked = [r for r in api.requests if r.is_messages]
    store.close()
    assert len(merges) == merged and len(asked) == merged
    gone = records.get(conn, b["id"], proj.id)
    assert (gone["superseded_by"] == a["id"]) is bool(merged), "the newer one merges into the older"
    assert records.count_active(conn, proj.id) == 2 - merged


@pytest.mark.parametrize(("stored", "same"), [(0.95, False), (0.96, False), (0.97, True)])
def test_without_a_model_only_cosine_above_096_merges_a_restatement(stored, same):
    a = {"title": "Use PostgreSQL 16 for the main database", "body": "Version 16."}
    b = {"title": "Use PostgreSQL 16 for the main database", "body": "Version 16."}
    assert dedup.strictly_same(a, b, None, stored) is same


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa " \
        "quebec romeo sierra tango uniform victor whiskey xray yankee zulu".split()


@pytest.mark.parametrize(("body_a", "body_b", "same"), [
    (WORDS[:8], WORDS[:10], True),  # content words shared: 8 of 10 = 0.8, the least that merges
    (WORDS[:8], WORDS[:11], False),  # 8 of 11
    (WORDS[:4], WORDS[4:8], False),  # nothing shared
])
def test_without_a_model_a_restatement_shares_most_content_words(body_a, body_b, same):
    a = {"title": "Ledger", "body": " ".join(body_a)}
    b = {"title": "Ledger", "body": " ".join(body_b)}
    assert dedup.strictly_same(a, b, None, 0.99) is same


@pytest.mark.parametrize(("title_a", "title_b", "same"), [
    (WORDS[:17], WORDS[:20], True),  # title words shared: 17 of 20 = 0.85, the least that merges
    (WORDS[:17], WORDS[:21], False),
    (WORDS[:1], WORDS[1:2], False),  # different titles over the same long body
])
def test_without_a_model_a_restatement_keeps_its_title(title_a, title_b, same):
    body = " ".join(WORDS) + " " + " ".join(w + "s" for w in WORDS)  # 52 shared words: content overlap stays high
    a = {"title": " ".join(title_a), "body": body}
    b = {"title": " ".join(title_b), "body": body}
    assert dedup.strictly_same(a, b, None, 0.99) is same


def test_candidates_come_most_similar_first():
    import numpy as np

    vecs = [_pair_matrix(cos) for cos in (0.93, 0.99, 0.95)]
    matrix = np.vstack([np.pad(m, ((0, 0), (8 * i, 8 * (2 - i)))) for i, m in enumerate(vecs)]).astype(np.float32)
    found = dedup.candidates(["A1", "A2", "B1", "B2", "C1", "C2"], matrix)
    assert [(a, b) for _, a, b in found] == [("B1", "B2"), ("C1", "C2"), ("A1", "A2")]
    assert [round(sim, 2) for sim, _, _ in found] == [0.99, 0.95, 0.93]


# ---------------------------------------------------------------- decay by type


@pytest.mark.parametrize("rtype", ["decision", "convention", "profile"])
def test_decisions_and_conventions_never_decay(conn, proj, home, monkeypatch, rtype):
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    old = records.add(conn, proj.id, type=rtype, title="Use Terraform for infra", body="Stated in 2023.",
                      valid_from="2023-06-01T00:00:00Z", recorded_at="2023-06-01T00:00:00Z")
    new = records.add(conn, proj.id, type=rtype, title="Use Terraform for infra", body="Stated in 2026.",
                      valid_from="2026-05-31T00:00:00Z")
    assert old["id"] != new["id"]
    archive.rescore(conn)
    assert records.get(conn, old["id"], proj.id)["score"] == 1.0
    hits = {h.record["id"]: h for h in search.search(conn, proj.id, "terraform infra")}
    assert hits[old["id"]].score == pytest.approx(hits[new["id"]].score)


@pytest.mark.parametrize(("rtype", "days", "score"), [
    ("discovery", 10, 0.95 ** 10), ("bugfix", 10, 0.95 ** 10), ("handover", 2, 0.8 ** 2),
    ("discovery", 1, 0.95), ("handover", 1, 0.8),
])
def test_discoveries_and_bugfixes_decay_095_a_day_handovers_08(conn, proj, home, monkeypatch, rtype, days, score):
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    when = (datetime(2026, 6, 1, tzinfo=timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    rec = records.add(conn, proj.id, type=rtype, title="The cache warms in 3 s", valid_from=when, recorded_at=when)
    archive.rescore(conn)
    assert records.get(conn, rec["id"], proj.id)["score"] == pytest.approx(score, abs=1e-4)


def test_a_convention_does_not_decay_like_a_discovery(conn, proj, home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    for rtype in ("convention", "discovery"):
        records.add(conn, proj.id, type=rtype, title=f"Ledger outbox {rtype}", body="ledger outbox relay, 2025",
                    valid_from="2026-01-01T00:00:00Z", recorded_at="2026-01-01T00:00:00Z")
        records.add(conn, proj.id, type=rtype, title=f"Ledger outbox {rtype}", body="ledger outbox relay, 2026",
                    valid_from="2026-05-31T00:00:00Z")
    hits = search.search(conn, proj.id, "ledger outbox relay")
    by: dict[str, list[float]] = {}
    for h in hits:
        by.setdefault(h.record["type"], []).append(h.score)
    assert len(by["convention"]) == len(by["discovery"]) == 2
    assert min(by["convention"]) == pytest.approx(max(by["convention"]))
    # the older discovery ranks lower, but age moves a score only within scoring.STANDING_SPAN (issue 10)
    span = scoring.STANDING_SPAN
    assert max(by["discovery"]) * (1 - span) / (1 + span / 2) <= min(by["discovery"]) < max(by["discovery"])


def test_type_weights_order_equally_matching_records(conn, proj, home, monkeypatch):
    """At equal relevance and age: decision, convention, bugfix, then discovery and preference alike, profile,
    handover last; every weight keeps a match worth ranking (a positive score)."""
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    made = {rtype: records.add(conn, proj.id, type=rtype, title="Vault secrets rotation", body=f"same words {rtype}",
                               valid_from=NOW)
            for rtype in ("handover", "profile", "preference", "discovery", "bugfix", "convention", "decision")}
    score = {h.record["type"]: h.score for h in search.search(conn, proj.id, "vault secrets rotation", limit=10)}
    assert set(score) == set(made)
    assert (score["decision"] > score["convention"] > score["bugfix"] > score["discovery"] > score["profile"]
            > score["handover"] > 0)
    assert score["preference"] == pytest.approx(score["discovery"], rel=0.01)


def test_the_stored_score_rewards_use_at_most_50_percent_and_the_reward_fades():
    """The consolidation pass's score: base × access × recency × confidence; use adds at most +50%, fading with
    the days since the record was last used; an inferred fact counts less than a stated or reinforced one."""
    plain = scoring.stored_score("decision", 0, "explicit", 0, 0)
    used = scoring.stored_score("decision", 0, "explicit", 10, 0)
    assert plain == 1.0 < used < 1.5
    assert scoring.stored_score("decision", 0, "explicit", 10**9, 0) == 1.5
    assert plain < scoring.stored_score("decision", 0, "explicit", 10, 60) < used
    assert scoring.stored_score("decision", 0, "explicit", 10, 10**4) == pytest.approx(1.0)
    assert scoring.stored_score("decision", 0, "explicit", -5, 0) == 1.0, "a bad count never lowers the score"
    assert scoring.stored_score("decision", 0, "reinforced", 0, 0) == 1.0
    assert 0 < scoring.stored_score("decision", 0, "inferred", 0, 0) < 1.0
    assert scoring.stored_score("decision", 0, "explicit", 0, 0, base=2.0) == 2.0
    assert scoring.stored_score("discovery", -3, "explicit", 0, 0) == 1.0, "a date in the future is not a bonus"
    assert scoring.stored_score("decision", 0, "explicit", 10**9, -30) == 1.5, "nor is a use in the future"


def _hit(score: float, coverage: float = 1.0, matched: int = 0, pinned: bool = False) -> search.Hit:
    return search.Hit({"id": f"r{score}-{coverage}-{matched}", "pinned": pinned}, score, score, "fts", coverage, matched)


def test_what_a_prompt_gets_injected_is_what_answers_it_close_to_the_best():
    """``scoring.worth_injecting``: records that hold enough of the prompt (a share of its word weight, or
    enough of its words), scoring close enough to the best; a broad prompt takes weaker ones too; pinned always."""
    inject = scoring.worth_injecting
    best = _hit(1.0)
    near, mid, far = _hit(0.99), _hit((scoring.INJECT_CUTOFF + scoring.INJECT_CUTOFF_BROAD) / 2), _hit(0.01)
    assert inject([best, near, mid, far]) == [best, near]  # narrow is the default
    assert inject([best, near, mid, far], broad=True) == [best, near, mid]
    at_cut = _hit(scoring.INJECT_CUTOFF)
    assert inject([best, at_cut]) == [best, at_cut]
    pinned_far = _hit(0.01, pinned=True, coverage=0.0)
    assert inject([best, pinned_far]) == [best, pinned_far]
    # holding enough of the prompt: a share of its word weight, or enough of its words
    little = _hit(1.0, coverage=scoring.MIN_COVERAGE / 2, matched=scoring.MIN_MATCHED - 1)
    assert inject([little]) == []
    assert inject([_hit(1.0, coverage=scoring.MIN_COVERAGE, matched=0)]) != []
    assert inject([_hit(1.0, coverage=0.0, matched=scoring.MIN_MATCHED)]) != []
    assert inject([_hit(1.0, coverage=0.0, matched=1)]) == [], "one word of the prompt is not an answer"
    assert inject([_hit(1.0, coverage=0.05)]) == [], "a twentieth of the prompt is not an answer"
    assert inject([_hit(1.0, coverage=0.5)]) != [], "half of it is"
    assert inject([]) == [] and inject([_hit(0.0)]) == [], "nothing scores: nothing to inject"


def test_a_reinforced_record_outranks_an_equal_one(conn, proj, home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    plain = records.add(conn, proj.id, type="decision", title="Queues use SQS", body="Stated once, 2025.")
    stated = records.add(conn, proj.id, type="decision", title="Queues use SQS", body="Stated often, 2026.")
    for _ in range(5):
        records.add(conn, proj.id, type="decision", title="Queues use SQS", body="Stated often, 2026.")
    hits = search.search(conn, proj.id, "queues sqs")
    assert [h.record["id"] for h in hits] == [stated["id"], plain["id"]] and hits[0].score > hits[1].score


# ---------------------------------------------------------------- prune after 60 days, archive after 90


def _shift(stamp: str, days: float) -> str:
    return clock.days_before(stamp, -days)


def test_a_record_scoring_below_01_is_a_prune_candidate_after_60_days(conn, proj, home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    low = records.add(conn, proj.id, type="discovery", title="Old flaky CI runner", valid_from="2026-02-01T00:00:00Z")
    kept = records.add(conn, proj.id, type="discovery", title="The cache warms in 3 s", valid_from="2026-05-25T00:00:00Z")
    archive.rescore(conn)
    since = records.get(conn, low["id"], proj.id)
    assert since["score"] < 0.1 <= records.get(conn, kept["id"], proj.id)["score"]
    start = clock.now()
    assert archive.prune_candidates(conn, proj.id, now=_shift(start, 60 - 1 / 24)) == []
    assert [r["id"] for r in archive.prune_candidates(conn, proj.id, now=_shift(start, 60 + 1 / 24))] == [low["id"]]


def test_a_record_superseded_more_than_90_days_ago_moves_to_the_archive(conn, proj, home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    old = records.add(conn, proj.id, type="decision", title="Services talk REST", valid_from="2026-01-01T00:00:00Z")
    records.supersede(conn, proj.id, old["id"], body="Services talk gRPC")
    start = clock.now()
    assert archive.archive(conn, now=_shift(start, 90 - 1 / 24)) == 0
    assert records.get(conn, old["id"], proj.id) is not None
    assert archive.archive(conn, now=_shift(start, 90 + 1 / 24)) == 1
    assert records.get(conn, old["id"], proj.id) is None
    assert [r["id"] for r in records.history(conn, proj.id, at="2026-03-01T00:00:00Z")] == [old["id"]]


# ---------------------------------------------------------------- redaction labels


@pytest.mark.parametrize(("secret", "label"), [
    ("sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3 + "xyzAA", "anthropic_key"),
    ("sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3" * 2, "openai_key"),
    ("AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
    ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "github_token"),
    ("AIza" + "SyA-1234567890abcdefghijklmnopqrstu", "google_api_key"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"),
])
def test_each_provider_key_is_caught_by_its_own_rule(secret, label):
    """The label proves which rule matched: with the provider's rule deleted, a broader one would still hide
    the key under another label, and this fails."""
    assert redact.scan(f"the client uses {secret} today") == (
        f"the client uses [REDACTED:{label}] today", {label: 1})
    assert redact.redact(f"ANTHROPIC_API_KEY={secret}") == f"ANTHROPIC_API_KEY=[REDACTED:{label}]"


# ---------------------------------------------------------------- project scoping


def test_another_projects_record_is_no_record_by_id_on_every_path(conn, proj, home, tmp_path):
    other = project.detect(str(make_repo(tmp_path / "other", remote="git@github.com:acme/other.git")))
    theirs = records.add(conn, other.id, type="decision", title="Gadgets use MySQL")
    shared = records.add(conn, other.id, type="preference", scope="global", title="Explain the plan first")
    assert records.get(conn, theirs["id"], proj.id) is None
    assert records.get(conn, shared["id"], proj.id)["id"] == shared["id"], "global records are everyone's"
    for call in (lambda: records.resolve(conn, theirs["id"], proj.id),
                 lambda: records.resolve(conn, theirs["id"][:12], proj.id),
                 lambda: records.pin(conn, theirs["id"], project_id=proj.id),
                 lambda: records.edit(conn, theirs["id"], title="hijacked", project_id=proj.id),
                 lambda: records.supersede(conn, proj.id, theirs["id"], body="hijacked")):
        with pytest.raises(records.RecordError):
            call()
    stamp = clock.now()
    with db.transaction(conn):
        assert records.retire(conn, theirs["id"], stamp=stamp, project_id=proj.id) is False
    after = records.get(conn, theirs["id"], other.id)
    assert after["title"] == "Gadgets use MySQL" and not after["pinned"] and after["superseded_at"] is None
    assert records.current(conn, proj.id) == [] and records.count_active(conn, proj.id) == 0
    assert [r["id"] for r in records.current(conn, proj.id, include_global=True)] == [shared["id"]]
    assert [h.record["id"] for h in search.search(conn, proj.id, "gadgets mysql explain plan")] == [shared["id"]]
    with pytest.raises(TypeError):
        query.scope_sql(None)
    assert query.scope_sql(None, all_projects=True) == ("1", ())


def _git_config(folder, text: str):
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "config").write_text(text)
    return project.detect(str(folder))


def test_only_a_remotes_first_url_names_the_project(tmp_path):
    """A submodule's url is not a remote; a remote's second url line does not replace its first."""
    sub = _git_config(tmp_path / "a", '[submodule "lib"]\n\turl = git@github.com:acme/lib.git\n')
    assert sub.remote is None and sub.name == "a"
    two = _git_config(tmp_path / "b", '[remote "origin"]\n\turl = git@github.com:acme/first.git\n'
                                      '\turl = git@github.com:acme/second.git\n[core]\n\turl = nothing\n')
    assert two.remote == "github.com/acme/first" and two.name == "first"
    host = _git_config(tmp_path / "c", '[remote "origin"]\n\turl = https://git.example.com\n')
    assert host.remote == "git.example.com" and host.name == "git.example.com"


def test_a_project_is_equal_to_itself_only():
    a = project.Project("id1", "a", "/x", None)
    assert a == project.Project("id1", "other name", "/x", "r") and hash(a) == hash(project.Project("id1", "b", "/x", None))
    assert a != project.Project("id2", "a", "/x", None) and a != project.Project("id1", "a", "/y", None)
    assert a != ("id1", "/x")


def test_a_record_of_this_project_is_found_by_id_and_prefix(conn, proj, home):
    mine = records.add(conn, proj.id, type="decision", title="Widgets use PostgreSQL")
    assert records.resolve(conn, mine["id"], proj.id)["id"] == mine["id"]
    assert records.resolve(conn, mine["id"][:12].lower(), proj.id)["id"] == mine["id"]
    assert records.get(conn, mine["id"], proj.id)["id"] == mine["id"]


# ---------------------------------------------------------------- supersession


def test_a_superseded_fact_is_never_presented_as_current(conn, proj, home, repo, monkeypatch):
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    old = records.add(conn, proj.id, type="decision", title="Services talk REST", body="JSON over HTTP.",
                      valid_from="2026-02-01T00:00:00Z", recorded_at="2026-02-01T00:00:00Z")
    new = records.supersede(conn, proj.id, old["id"], title="Services talk gRPC", body="Protobuf contracts.",
                            rationale="latency", valid_from="2026-04-01T00:00:00Z")
    assert records.get(conn, old["id"], proj.id)["superseded_by"] == new["id"]
    assert [r["id"] for r in records.current(conn, proj.id)] == [new["id"]]
    assert [r["id"] for r in records.active(conn, proj.id, ["decision"])] == [new["id"]]
    assert [h.record["id"] for h in search.search(conn, proj.id, "services talk REST JSON HTTP")] == [new["id"]]
    assert "Services talk REST" not in digest.build(conn, proj).text
    text, ids, _ = turn.select(conn, proj.id, "s1", "services REST JSON over HTTP")
    assert ids == [new["id"]] and "REST" not in text.split("Services talk gRPC", 1)[0]
    # History still knows what was true in March, and when the change happened.
    march = records.history(conn, proj.id, at="2026-03-01T00:00:00Z")
    assert [r["id"] for r in march] == [old["id"]]
    gone = records.get(conn, old["id"], proj.id)
    assert gone["valid_to"] == "2026-04-01T00:00:00Z" and gone["superseded_at"]


def test_a_retired_record_is_not_retired_again(conn, proj, home):
    old = records.add(conn, proj.id, type="decision", title="Services talk REST")
    first = records.supersede(conn, proj.id, old["id"], body="gRPC now")
    before = records.get(conn, old["id"], proj.id)
    with db.transaction(conn):
        assert records.retire(conn, old["id"], stamp=clock.now(), project_id=proj.id, by=first["id"]) is False
    assert records.get(conn, old["id"], proj.id) == before, "history is not rewritten"
    with pytest.raises(records.RecordError):
        records.supersede(conn, proj.id, old["id"], body="again")


def test_a_fact_never_ends_before_it_began(conn, proj, home):
    old = records.add(conn, proj.id, type="decision", title="Queues use SQS", valid_from="2026-05-01T00:00:00Z")
    records.supersede(conn, proj.id, old["id"], body="RabbitMQ now", valid_from="2026-04-01T00:00:00Z")
    gone = records.get(conn, old["id"], proj.id)
    assert gone["valid_to"] == gone["valid_from"] == "2026-05-01T00:00:00Z"


def test_a_keyed_fact_changed_supersedes_the_holder_and_the_same_value_reinforces_it(conn, proj, home):
    first = records.add(conn, proj.id, type="profile", key="profile.test_command", title="Tests: pytest -q")
    again = records.add(conn, proj.id, type="profile", key="profile.test_command", title="Tests: pytest -q")
    assert again["id"] == first["id"] and again["reinforce_count"] == 1
    changed = records.add(conn, proj.id, type="profile", key="profile.test_command", title="Tests: pytest -x")
    assert changed["id"] != first["id"]
    assert records.get(conn, first["id"], proj.id)["superseded_by"] == changed["id"]
    assert records.by_key(conn, proj.id, "profile.test_command")["id"] == changed["id"]
    assert json.dumps([r["id"] for r in records.current(conn, proj.id)]) == json.dumps([changed["id"]])


def _upsert(conn, proj, title, **kw):
    return records.upsert_by_key(conn, proj.id, "profile.test_command", type="profile", title=title, **kw)


def test_the_same_keyed_value_reinforces_or_with_reinforce_same_off_writes_nothing(conn, proj, home):
    outcome, first = _upsert(conn, proj, "Tests: pytest -q")
    assert outcome == "added"
    outcome, again = _upsert(conn, proj, "Tests: pytest -q", reinforce_same=False)
    assert (outcome, again["id"], again["reinforce_count"]) == ("unchanged", first["id"], 0)
    outcome, again = _upsert(conn, proj, "Tests: pytest -q")
    assert (outcome, again["id"], again["reinforce_count"]) == ("reinforced", first["id"], 1)
    outcome, changed = _upsert(conn, proj, "Tests: pytest -x", reinforce_same=False)
    assert outcome == "superseded" and records.get(conn, first["id"], proj.id)["superseded_by"] == changed["id"]


def test_a_stated_value_outlives_an_inferred_one(conn, proj, home):
    _, stated = _upsert(conn, proj, "Tests: pytest -q")
    outcome, kept = _upsert(conn, proj, "Tests: make test", confidence="inferred", keep_stated=True)
    assert (outcome, kept["id"]) == ("kept", stated["id"])
    outcome, same = _upsert(conn, proj, "Tests: pytest -q", confidence="inferred", keep_stated=True)
    assert (outcome, same["id"]) == ("reinforced", stated["id"])
    outcome, newer = _upsert(conn, proj, "Tests: tox", keep_stated=True)  # stated again: it replaces
    assert outcome == "superseded"
    _, guess = _upsert(conn, proj, "Tests: nox", confidence="inferred")
    outcome, later = _upsert(conn, proj, "Tests: hatch test", confidence="inferred", keep_stated=True)
    assert outcome == "superseded" and records.get(conn, guess["id"], proj.id)["superseded_by"] == later["id"], \
        "an inferred value replaces an inferred one"
    assert records.get(conn, newer["id"], proj.id)["superseded_by"] == guess["id"]


def test_a_widened_sameness_keeps_the_holders_wording(conn, proj, home):
    _, first = _upsert(conn, proj, "TypeError in ledger.py line 40")
    outcome, again = _upsert(conn, proj, "TypeError in ledger.py line 41", same=lambda holder, t, b: True)
    assert (outcome, again["id"], again["title"]) == ("reinforced", first["id"], "TypeError in ledger.py line 40")
    outcome, other = _upsert(conn, proj, "KeyError in api.py", same=lambda holder, t, b: False)
    assert outcome == "superseded" and other["id"] != first["id"]


def test_an_explicit_supersedes_retires_it_and_the_key_holder_and_never_reinforces(conn, proj, home):
    _, holder = _upsert(conn, proj, "Tests: pytest -q")
    loose = records.add(conn, proj.id, type="profile", title="Tests run with nose")
    outcome, new = _upsert(conn, proj, "Tests: pytest -q", supersedes=loose["id"])
    assert outcome == "superseded" and new["id"] not in (holder["id"], loose["id"])
    assert records.get(conn, holder["id"], proj.id)["superseded_by"] == new["id"]
    assert records.get(conn, loose["id"], proj.id)["superseded_by"] == new["id"]
    outcome, again = _upsert(conn, proj, "Tests: pytest -q", supersedes=new["id"])
    assert outcome == "superseded" and again["id"] != new["id"], "the holder itself named: replaced, not reinforced"


def test_the_digest_read_includes_global_records_only_when_asked(conn, proj, home):
    mine = records.add(conn, proj.id, type="preference", title="Local: tabs")
    shared = records.add(conn, "0therproject0001", type="preference", scope="global", title="Global: spaces")
    assert [r["id"] for r in records.active(conn, proj.id, ["preference"])] == [mine["id"]]
    assert {r["id"] for r in records.active(conn, proj.id, ["preference"], include_global=True)} == \
        {mine["id"], shared["id"]}

