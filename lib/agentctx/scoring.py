"""Ranking rules for the hot path: the one place that weighs types, age and confidence.

final = relevance × recency_decay(type, age) × type_weight × confidence_weight × stored score
(``score`` is 1.0 until the consolidation pass rewrites it). Pinned records rank first.
"""

from __future__ import annotations

TYPES = ("decision", "convention", "preference", "discovery", "bugfix", "handover", "profile")
CONFIDENCES = ("explicit", "inferred", "reinforced")
SCOPES = ("project", "global")

TYPE_WEIGHT = {
    "decision": 1.3,
    "convention": 1.25,
    "bugfix": 1.1,
    "preference": 1.0,
    "discovery": 1.0,
    "profile": 0.9,
    "handover": 0.8,
}

# Daily decay factor by type. Decisions and conventions never decay: only supersession
# retires them. Discoveries and bugfixes decay 0.95/day (the Prism seed); handovers fast.
DAILY_DECAY = {
    "decision": 1.0,
    "convention": 1.0,
    "profile": 1.0,
    "preference": 0.998,
    "discovery": 0.95,
    "bugfix": 0.95,
    "handover": 0.8,
}
# Retrieval never lets age erase an exact match entirely.
DECAY_FLOOR = 0.05

CONFIDENCE_WEIGHT = {"explicit": 1.0, "reinforced": 1.0, "inferred": 0.8}

# A hit weaker than this fraction of the best hit's relevance is noise for per-turn injection.
RELATIVE_FLOOR = 0.15


def recency_decay(record_type: str, age_days: float) -> float:
    """Multiplier in [DECAY_FLOOR, 1] for a record of this type and age."""
    factor = DAILY_DECAY.get(record_type, 0.98)
    if factor >= 1.0:
        return 1.0
    return max(DECAY_FLOOR, factor ** age_days)


def final_score(
    relevance: float, record_type: str, age_days: float, confidence: str, stored_score: float | None
) -> float:
    """Combine query relevance with the record's standing."""
    return (
        relevance
        * recency_decay(record_type, age_days)
        * TYPE_WEIGHT.get(record_type, 1.0)
        * CONFIDENCE_WEIGHT.get(confidence, 0.8)
        * (1.0 if stored_score is None else stored_score)
    )
