"""Ranking rules: the one place that weighs types, age and confidence.

final = relevance × type_weight × standing factor, computed at query time, where the standing factor
maps ``stored_score(type, age, confidence, uses, days since last use)`` into [1 − STANDING_SPAN,
1 + STANDING_SPAN / 2]: age, use and confidence order records that match about equally well and
never hide a relevant one (a months-old gotcha that answers the prompt outranks a fresh record that
does not; decisions and conventions in force do not decay at all). The consolidation pass writes the
same ``stored_score`` to ``records.score`` (pruning and digest order read it). Pinned records rank first.
"""

from __future__ import annotations

from agentctx.kinds import DAILY_DECAY, TYPE_WEIGHT

# Per-type ranking weight and daily decay: ``kinds.KINDS`` (one row per type). Decisions and conventions
# never decay: only supersession retires them; discoveries and bugfixes decay 0.95/day (the Prism seed).
# How far standing (age, use, confidence) can move a score: ×0.9 for a fully decayed or unused record,
# ×1.05 for a fresh, often used one. Relevance decides; standing breaks near-ties.
STANDING_SPAN = 0.1

CONFIDENCE_WEIGHT = {"explicit": 1.0, "reinforced": 1.0, "inferred": 0.8}

# A hit weaker than this fraction of the best hit's relevance is noise for per-turn injection.
RELATIVE_FLOOR = 0.15

# What a prompt gets injected (``worth_injecting``): nothing unless some record answers it, that is holds
# at least MIN_COVERAGE of the prompt's word weight (``relevance``) or at least MIN_MATCHED of its words (a
# question after a long paste: the paste's words dilute the share) — a prompt about something the project
# has no record of matches one or two of its words at most; then each record that answers it so and
# scores at least INJECT_CUTOFF of the best (INJECT_CUTOFF_BROAD for a broad or multi-part prompt, whose
# parts are answered by records of unequal strength).
MIN_COVERAGE = 0.2
MIN_MATCHED = 3
INJECT_CUTOFF = 0.6
INJECT_CUTOFF_BROAD = 0.35


def final_score(
    relevance: float, record_type: str, age_days: float, confidence: str, uses: int, days_since_use: float
) -> float:
    """Query relevance × type weight × the record's standing factor: ``stored_score`` computed now (the
    rule the consolidation pass writes to ``records.score``, so recency and confidence count once and
    are never stale), bounded to [1 − STANDING_SPAN, 1 + STANDING_SPAN / 2]."""
    standing = min(1.5, stored_score(record_type, age_days, confidence, uses, days_since_use))
    return relevance * TYPE_WEIGHT.get(record_type, 1.0) * (1.0 - STANDING_SPAN + STANDING_SPAN * standing)


def worth_injecting(hits: list, *, broad: bool = False) -> list:
    """The hits (``store.search.Hit``, best first) worth injecting for a prompt, in order. A pinned record
    the prompt matches at all is always among them (the user pinned it; it leads)."""
    answers = [h for h in hits if h.record.get("pinned") or h.coverage >= MIN_COVERAGE or h.matched >= MIN_MATCHED]
    if not answers:
        return []
    best = max(h.score for h in hits)
    if best <= 0:
        return []
    cutoff = (INJECT_CUTOFF_BROAD if broad else INJECT_CUTOFF) * best
    return [h for h in answers if h.record.get("pinned") or h.score >= cutoff]


# Stored score (the consolidation pass): base × access × recency × confidence, in [0, ~1.5].
ACCESS_BOOST_MAX = 0.5  # at most +50% for records injected or reinforced often
ACCESS_DAILY_DECAY = 0.98  # the boost fades with days since the record was last used
PRUNE_SCORE = 0.1  # below this for PRUNE_AFTER_DAYS: a prune candidate (agentctx prune)
PRUNE_AFTER_DAYS = 60
ARCHIVE_AFTER_DAYS = 90  # superseded for longer: moved to records_archive


def stored_score(record_type: str, age_days: float, confidence: str, uses: int, days_since_use: float,
                 base: float = 1.0) -> float:
    """What the consolidation pass writes to ``records.score`` (no floor: it decides pruning)."""
    import math

    factor = DAILY_DECAY.get(record_type, 0.98)
    recency = factor ** max(0.0, age_days)  # 1.0 ** age is 1.0: decisions, conventions and profiles never decay
    access = 1.0 + min(ACCESS_BOOST_MAX, 0.1 * math.log1p(max(0, uses))) * ACCESS_DAILY_DECAY ** max(0.0, days_since_use)
    return base * access * recency * CONFIDENCE_WEIGHT.get(confidence, 0.8)
