"""The ranking rules with their numbers (issue 15): type weights, decay per type, the standing factor's bounds,
the stored score's use and confidence terms, and what a prompt gets injected, each at its limit."""

from __future__ import annotations

import math

import pytest

from agentctx import scoring
from agentctx.store import search

# ---------------------------------------------------------------- type weight


@pytest.mark.parametrize(("rtype", "weight"), [
    ("decision", 1.3), ("convention", 1.25), ("bugfix", 1.1), ("preference", 1.0), ("discovery", 1.0),
    ("profile", 0.9), ("handover", 0.8),
    ("a-type-added-later", 1.0),  # a type without a weight of its own is weighed 1.0
])
def test_a_fresh_unused_stated_record_scores_its_relevance_times_its_type_weight(rtype, weight):
    """At age 0, never used, explicit: the standing factor is exactly 1, so the score is relevance × weight."""
    assert scoring.final_score(1.0, rtype, 0, "explicit", 0, 0) == pytest.approx(weight)
    assert scoring.final_score(2.5, rtype, 0, "explicit", 0, 0) == pytest.approx(2.5 * weight)


# ---------------------------------------------------------------- standing: ×0.9 to ×1.05


def test_standing_moves_a_score_between_09_and_105_times():
    """A fully decayed record keeps 90% of its score; a fresh one used very often gets 105%; half the use
    reward (+25%) gives 102.5%."""
    assert scoring.final_score(1.0, "discovery", 10**4, "explicit", 0, 0) == pytest.approx(0.9)
    assert scoring.final_score(1.0, "handover", 365, "explicit", 0, 0) == pytest.approx(0.8 * 0.9)
    assert scoring.final_score(1.0, "decision", 0, "explicit", 10**9, 0) == pytest.approx(1.3 * 1.05)
    uses = math.expm1(2.5)  # 0.1 × ln(1 + uses) = 0.25
    assert scoring.final_score(1.0, "discovery", 0, "explicit", uses, 0) == pytest.approx(1.025)
    assert scoring.final_score(1.0, "discovery", 0, "inferred", 0, 0) == pytest.approx(0.98), "0.9 + 0.1 × 0.8"


# ---------------------------------------------------------------- stored score: decay per type


@pytest.mark.parametrize(("rtype", "days", "score"), [
    ("decision", 1000, 1.0), ("convention", 1000, 1.0), ("profile", 1000, 1.0),
    ("preference", 100, 0.998 ** 100), ("preference", 1, 0.998),
    ("discovery", 10, 0.95 ** 10), ("bugfix", 10, 0.95 ** 10), ("bugfix", 1, 0.95),
    ("handover", 2, 0.8 ** 2), ("handover", 1, 0.8), ("handover", 0.5, 0.8 ** 0.5),
    ("a-type-added-later", 10, 0.98 ** 10),  # a type without a rate of its own decays 2% a day
])
def test_each_type_decays_at_its_own_daily_rate(rtype, days, score):
    """README: decisions and conventions never decay (nor do profile facts); discoveries and bugfixes 0.95 a day,
    handovers 0.8, preferences 0.998: the stored score is the rate to the power of the age in days."""
    assert scoring.stored_score(rtype, days, "explicit", 0, 0) == pytest.approx(score, rel=1e-9)


@pytest.mark.parametrize("rtype", ["decision", "convention", "profile", "preference", "discovery", "handover",
                                   "a-type-added-later"])
def test_a_record_dated_now_or_later_has_not_decayed(rtype):
    assert scoring.stored_score(rtype, 0, "explicit", 0, 0) == 1.0
    assert scoring.stored_score(rtype, -2, "explicit", 0, 0) == 1.0, "a date in the future is no bonus"


# ---------------------------------------------------------------- stored score: use and confidence


def test_use_adds_a_tenth_per_e_fold_of_uses_up_to_half_fading_2_percent_a_day():
    """access = 1 + min(0.5, 0.1 × ln(1 + uses)) × 0.98^(days since last use)."""
    assert scoring.stored_score("decision", 0, "explicit", 10, 0) == pytest.approx(1 + 0.1 * math.log(11))
    assert scoring.stored_score("decision", 0, "explicit", 10, 30) == pytest.approx(1 + 0.1 * math.log(11) * 0.98 ** 30)
    cap = math.expm1(5)  # 0.1 × ln(1 + uses) = 0.5 exactly: the cap
    assert scoring.stored_score("decision", 0, "explicit", cap, 0) == pytest.approx(1.5)
    assert scoring.stored_score("decision", 0, "explicit", cap * 2, 0) == pytest.approx(1.5)
    assert scoring.stored_score("decision", 0, "explicit", 10**9, 30) == pytest.approx(1 + 0.5 * 0.98 ** 30)
    assert scoring.stored_score("decision", 0, "explicit", 1, 0) == pytest.approx(1 + 0.1 * math.log(2))
    assert scoring.stored_score("decision", 0, "explicit", -5, 0) == 1.0, "a bad count is no use, never a penalty"
    assert scoring.stored_score("decision", 0, "explicit", 10, -30) == pytest.approx(1 + 0.1 * math.log(11)), \
        "a use dated in the future counts as today's"


def test_use_and_decay_multiply():
    """The stored score is base × access × recency × confidence."""
    assert scoring.stored_score("discovery", 10, "explicit", 10, 5) == pytest.approx(
        (1 + 0.1 * math.log(11) * 0.98 ** 5) * 0.95 ** 10)
    assert scoring.stored_score("discovery", 10, "inferred", 10, 5, base=2.0) == pytest.approx(
        2.0 * (1 + 0.1 * math.log(11) * 0.98 ** 5) * 0.95 ** 10 * 0.8)


@pytest.mark.parametrize(("confidence", "weight"), [
    ("explicit", 1.0), ("reinforced", 1.0), ("inferred", 0.8), ("unheard-of", 0.8),
])
def test_a_stated_or_reinforced_fact_counts_whole_an_inferred_one_80_percent(confidence, weight):
    assert scoring.stored_score("decision", 0, confidence, 0, 0) == pytest.approx(weight)


# ---------------------------------------------------------------- what a prompt gets injected


def _hit(score: float, coverage: float = 1.0, matched: int = 0, pinned: bool = False) -> search.Hit:
    return search.Hit({"id": f"r{score}-{coverage}-{matched}-{pinned}", "pinned": pinned}, score, score, "fts",
                      coverage, matched)


def test_a_record_answers_a_prompt_with_20_percent_of_its_word_weight_or_3_of_its_words():
    """README: nothing is injected unless some record holds at least 20% of the prompt's word weight or 3 of
    its words."""
    inject = scoring.worth_injecting
    assert inject([_hit(1.0, coverage=0.2)]) != []
    assert inject([_hit(1.0, coverage=0.19)]) == []
    assert inject([_hit(1.0, coverage=0.0, matched=3)]) != []
    assert inject([_hit(1.0, coverage=0.0, matched=2)]) == []
    assert inject([_hit(1.0, coverage=0.19, matched=2)]) == [], "neither"


def test_records_scoring_60_percent_of_the_best_are_injected_35_for_a_broad_prompt():
    """README: then the records scoring at least 60% of the best (35% for a broad prompt)."""
    inject = scoring.worth_injecting
    best = _hit(2.0)
    at, under = _hit(1.2), _hit(1.19)  # 60% of 2.0 and just under
    assert inject([best, at, under]) == [best, at]
    at_broad, under_broad = _hit(0.7), _hit(0.69)  # 35% of 2.0 and just under
    assert inject([best, at, at_broad, under_broad], broad=True) == [best, at, at_broad]
    assert inject([best, at_broad]) == [best]


def test_a_pinned_record_is_injected_whatever_it_scores_but_not_alone_for_a_zero_score():
    """A pinned record the prompt matches at all is injected however weakly; when nothing scores above 0,
    nothing is."""
    inject = scoring.worth_injecting
    best, pinned = _hit(1.0), _hit(0.01, coverage=0.0, pinned=True)
    assert inject([best, pinned]) == [best, pinned]
    assert inject([pinned]) == [pinned]
    assert inject([_hit(0.0, pinned=True)]) == [], "nothing scores: nothing to inject"
    assert inject([_hit(0.0), _hit(0.0)]) == []
