"""Retrieval expansion, a consolidation step: what a record means but does not spell out.

For every current record whose expansion is pending (new, edited, or its session changed: then only its
``context`` is redone, its ``terms`` stand), in batches:

* ``terms`` (indexed by FTS5 at half a body word's weight): the spellings its text implies
  (``lexicon.variants``: "de-stress" → "destress", "TestTransferConcurrent" → "test transfer
  concurrent") and, when the embedding model is loaded, the nearest words of the model's vocabulary to
  each of its common-noun content words (at most NEIGHBOURS_PER_WORD each, cosine ≥ MIN_SIMILARITY,
  MAX_NEIGHBOUR_TERMS a record; never the commonest words of the vocabulary nor words a large share of
  the store already holds): "camping" brings "tents" and "hiking", "stress" brings "anxiety". The hot
  path then matches a prompt's other words without loading a model.
* ``context``: the word stems of its neighbours in its session (the records just before and after),
  CONTEXT_WORDS of each at most, which the second ranking stage (``relevance``) reads: an answer
  recorded right after the question that names its topic is found by that topic. The previous record's
  context is refreshed too, since this record is its new next neighbour.

Only records unchanged since they were read are written (``store.expansion_queue``). After a pass that
expanded many records, the full-text index is merged into one segment (``compact_index``).
"""

from __future__ import annotations

import re

from agentctx import lexicon
from agentctx.store import expansion_queue, search
from agentctx.store.search import STOPWORDS


def total_records(conn) -> int:
    return search.document_counts(conn, [])[0]

BATCH = 256
CONTEXT_WORDS = 32
NEIGHBOURS_PER_WORD = 2
MIN_SIMILARITY = 0.6
MAX_NEIGHBOUR_TERMS = 24
# A related word already held by more than this share of the store's records (and by more than
# COMMON_MIN records) is not added: it would tell the record apart from nothing and swell the index.
COMMON_SHARE, COMMON_MIN = 0.01, 20
COMPACT_AFTER = 500  # records expanded in one pass from which the full-text index is merged afterwards
_LOWER_WORD = re.compile(r"(?<![\w-])[a-z]{4,}(?![\w-])")  # a word written in lowercase: not a name


def _stems(rec: dict, toks: list[str] | None = None, stems: list[str] | None = None) -> list[str]:
    """The first distinct content-word stems of a record's title and body, in order: enough for
    ``context_of`` (2 × CONTEXT_WORDS: at most CONTEXT_WORDS of them can be taken by another neighbour).
    ``toks`` and ``stems``: the text's tokens and their stems, when the caller has them."""
    if toks is None:
        toks = lexicon.tokens(f"{rec['title']}\n{rec['body']}")
    out: dict[str, None] = {}
    for tok, st in zip(toks, lexicon.stems(toks) if stems is None else stems, strict=True):
        if tok in STOPWORDS or len(tok) < 2:
            continue
        out[st] = None
        if len(out) >= 2 * CONTEXT_WORDS:
            break
    return list(out)


class _Stems:
    """``_stems`` of the records met in one pass, each worked out once (keyed by its text)."""

    def __init__(self, size: int = 8192):
        self.size, self.kept = size, {}

    def __call__(self, rec: dict, toks: list[str] | None = None, stems: list[str] | None = None) -> list[str]:
        key = (rec["title"], rec["body"])
        got = self.kept.get(key)
        if got is None:
            if len(self.kept) >= self.size:
                self.kept.clear()
            got = self.kept[key] = _stems(rec, toks, stems)
        return got


def context_of(*neighbours: dict | None, stems=_stems) -> str:
    """Distinct content-word stems of the neighbours' titles and bodies, CONTEXT_WORDS of each at most."""
    out: dict[str, None] = {}
    for rec in neighbours:
        if not rec:
            continue
        taken = 0
        for stem in stems(rec):
            if stem not in out:
                out[stem] = None
                taken += 1
                if taken >= CONTEXT_WORDS:
                    break
    return " ".join(out)


def content_words(text: str) -> list[str]:
    """The record's common-noun-like words: lowercase where written, 4+ letters, not stop words."""
    return [w for w in dict.fromkeys(_LOWER_WORD.findall(text)) if w not in STOPWORDS]


def terms_of(text: str, similar: dict[str, list[str]], words: list[str] | None = None,
             toks: list[str] | None = None, stems: list[str] | None = None) -> str:
    """``lexicon.variants`` of ``text`` plus the vocabulary neighbours of its content words that it does
    not already hold (by stem). ``words``, ``toks``, ``stems``: its content words, tokens and their stems,
    when the caller has them."""
    if toks is None:
        toks = lexicon.tokens(text)
    out = dict.fromkeys(lexicon.variants(text, toks))
    have = set(lexicon.stems(toks) if stems is None else stems)
    added = 0
    for word in content_words(text) if words is None else words:
        for near in similar.get(word, ()):
            stem = lexicon.stem(near)
            if stem in have or near in STOPWORDS or added >= MAX_NEIGHBOUR_TERMS:
                continue
            have.add(stem)
            out[near] = None
            added += 1
    return " ".join(out)


def run(conn, *, embedder=None, out_of_time=lambda: False, dry_run: bool = False) -> dict:
    """Expand every pending current record (all projects); the step's report. A record whose ``terms``
    still stand (only a record of its session changed or went) gets its context redone, not its terms."""
    info: dict = {"pending": expansion_queue.count(conn), "expanded": 0,
                  "vocabulary_neighbours": embedder is not None}
    if dry_run:
        return info
    last = 0
    held: dict[str, int] = {}  # records holding each related word met so far (one count per word per pass)
    stems = _Stems()
    while not out_of_time():
        rows = expansion_queue.batch(conn, last, BATCH)
        if not rows:
            break
        last = rows[-1]["seq"]
        todo = [(r, f"{r['title']}\n{r['body']}") for r in rows if not r["has_terms"]]  # terms to work out
        words = [content_words(text) for _, text in todo]
        similar: dict[str, list[str]] = {}
        if embedder is not None and todo:
            similar = embedder.similar_words([w for ws in words for w in ws], per_word=NEIGHBOURS_PER_WORD,
                                             min_similarity=MIN_SIMILARITY)
            fresh = [w for ws in similar.values() for w in ws if w not in held]
            if fresh:
                total, counts = search.document_counts(conn, list(dict.fromkeys(fresh)))
                held.update(counts)
            limit = max(COMMON_SHARE * total_records(conn), COMMON_MIN)
            similar = {w: [n for n in ws if held.get(n, 0) <= limit] for w, ws in similar.items()}
        terms = {}
        for (rec, text), ws in zip(todo, words, strict=True):
            toks = lexicon.tokens(text)
            st = lexicon.stems(toks)
            stems(rec, toks, st)  # kept for the contexts of its neighbours (and its own as one)
            terms[rec["seq"]] = terms_of(text, similar, ws, toks, st)
        sides = expansion_queue.neighbours_of(conn, rows)
        batch_seqs = {r["seq"] for r in rows}
        refresh = [(rec, before) for rec, (before, _) in zip(rows, sides, strict=True)
                   if before and before["seq"] not in batch_seqs and not before["expand_pending"]]
        # the previous record's own previous neighbour (its session is the record's)
        earlier = expansion_queue.neighbours_of(conn, [{**before, "session_id": rec["session_id"],
                                                        "project_id": rec["project_id"]} for rec, before in refresh])
        writes = [(rec["seq"], terms.get(rec["seq"]), context_of(before, after, stems=stems), rec["updated_at"])
                  for rec, (before, after) in zip(rows, sides, strict=True)]
        contexts = [(before["seq"], context_of(prev_before, rec, stems=stems), before["updated_at"])
                    for (rec, before), (prev_before, _) in zip(refresh, earlier, strict=True)]
        info["expanded"] += expansion_queue.write(conn, writes, contexts)
    if info["expanded"] >= COMPACT_AFTER:
        expansion_queue.compact_index(conn)
        info["index_compacted"] = True
    return info
