"""The second ranking stage: how well a candidate record answers the prompt, from its own words.

FTS5's BM25 picks the candidates (``store.search``); each is scored again here on word stems
(``lexicon``), standard library only:

* **BM25 with a length floor**: k1 1.2, b 0.75 over the title (×3), the body and the record's
  ``terms`` (×0.5: spellings and related words the consolidation pass added), with the record's
  length taken as at least the store's average. Plain BM25 rewards a record for being shorter than
  average without bound, so a one-line record that echoes a word of the prompt beat the longer one
  that answers it; below the average, length no longer buys relevance.
* **Session context**: a prompt word found only among the record's session neighbours (its
  ``context`` stems) adds CONTEXT_WEIGHT × that word's weight: the answer given right after the
  question that names the topic.
* **Coverage**: the score is multiplied by the idf-weighted share of the prompt's words the record
  holds (its own words count fully; words only in its terms or its context count HALF_CREDIT), so the
  record that answers more of the prompt outranks one that repeats a single word of it.

``Query.coverage`` over every word of the prompt (words no record holds included) is also what
``injection.turn`` reads to decide whether anything is worth injecting at all.
"""

from __future__ import annotations

import math

from agentctx import lexicon

K1, B = 1.2, 0.75
FIELD_WEIGHTS = (3.0, 1.0, 0.5)  # title, body, terms: also FTS5's bm25() weights (store.search)
CONTEXT_WEIGHT = 0.3
HALF_CREDIT = 0.5


def idf(df: int, total: int) -> float:
    """Okapi BM25's idf, never negative."""
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


class Query:
    """The prompt's words as weighted stems. ``words`` maps each prompt word to the number of records
    holding it; ``splits`` maps a word no record holds to the parts it was found as ("destress" →
    ("de", "stress")), which then stand for it."""

    __slots__ = ("terms", "total_weight", "prefixes")

    def __init__(self, words: dict[str, int], total: int, splits: dict[str, tuple[str, ...]] | None = None):
        splits = splits or {}
        self.terms: list[tuple[tuple[str, ...], float]] = []  # (stems that must all be present, weight)
        seen: set[tuple[str, ...]] = set()
        prefixes: set[str] = set()
        for word, df in words.items():
            parts = splits.get(word) or tuple(lexicon.tokens(word))
            stems = tuple(dict.fromkeys(lexicon.stem(p) for p in parts))
            if not stems or stems in seen:
                continue
            seen.add(stems)
            self.terms.append((stems, idf(df, max(total, 1))))
            prefixes.update(x[:3] for x in (*stems, *parts))
        self.total_weight = sum(w for _, w in self.terms)
        # Only tokens that may stem to a query stem are stemmed when a record is scored: those starting with
        # a stem's first three letters, or a prompt word's (a last y → i changes the third: "key" → "kei"),
        # or with a whole stem of two letters ("ids" → "id"). See ``bag``.
        self.prefixes = frozenset(prefixes)

    def __bool__(self) -> bool:
        return bool(self.terms)


def bag(text: str | None, prefixes: frozenset[str] | None = None) -> tuple[int, dict[str, int]]:
    """(tokens in ``text``, stem counts), counting only tokens whose first three (or two) letters are one of
    ``prefixes`` if given."""
    toks = lexicon.tokens(text or "")
    out: dict[str, int] = {}
    for tok in toks:
        if prefixes is not None and tok[:3] not in prefixes and tok[:2] not in prefixes:
            continue
        s = lexicon.stem(tok)
        out[s] = out.get(s, 0) + 1
    return len(toks), out


def _count(stems: tuple[str, ...], counts: dict[str, int]) -> int:
    if len(stems) == 1:
        return counts.get(stems[0], 0)
    return min(counts.get(s, 0) for s in stems)


def score(query: Query, rec: dict, avg_len: float) -> tuple[float, float, int]:
    """(relevance, coverage, prompt words it holds) of one record: its ``title``, ``body``, ``terms`` and
    ``context`` (the count is of words in its own text or terms, not its context)."""
    if not query:
        return 0.0, 0.0, 0
    pre = query.prefixes
    (n_title, title), (n_body, body) = bag(rec.get("title"), pre), bag(rec.get("body"), pre)
    _, terms = bag(rec.get("terms"), pre)
    context = set((rec.get("context") or "").split())
    length = n_title + n_body
    norm = K1 * (1.0 - B + B * max(length, avg_len) / max(avg_len, 1.0))
    wt, wb, wx = FIELD_WEIGHTS
    total = covered = 0.0
    matched = 0
    for stems, weight in query.terms:
        own = wt * _count(stems, title) + wb * _count(stems, body) if (title or body) else 0
        tf = own + wx * _count(stems, terms) if terms else own
        if tf:
            total += weight * tf * (K1 + 1.0) / (tf + norm)
            covered += weight if own else HALF_CREDIT * weight
            matched += 1
        elif all(s in context for s in stems):
            total += CONTEXT_WEIGHT * weight
            covered += HALF_CREDIT * weight
    coverage = covered / query.total_weight if query.total_weight else 0.0
    return total * coverage, coverage, matched
