"""Hybrid retrieval: the hot path's ranking fused with vector similarity, where a model may be loaded.

``search_records`` is the one hybrid ranking: ``ctx_search`` (MCP) and the dashboard's search both call
it (through ``Loader``, which loads the model once). Candidates come from both sides: the FTS5 ranking
(``store.search``, with its second stage) and the nearest vectors of the project. Each candidate's
score is its lexical relevance over the best candidate's, plus FUSED_VECTOR_WEIGHT × its cosine
similarity rescaled between the weakest and the best vector candidate, plus NEIGHBOUR_WEIGHT × the best
such score of its session neighbours (which become candidates too); then the standing rules (type,
bounded age, confidence; pinned first) apply as on the hot path. Both weights were chosen on the LoCoMo
dev split (bench/eval). Queries are embedded as the model embeds any text: an idf-weighted query vector
(tried so that a name every record shares would not dominate a short question) found less on the dev split,
alone (0.451 against 0.512 at @5) and fused (0.684 against 0.700). Only current records come back: vector
hits are re-read from the store and dropped when superseded or archived.

``rrf`` (reciprocal rank fusion) stays for the digest ranking of the consolidation pass.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable

from agentctx.store import search

RRF_K = 60
FTS_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0  # the digest ranking's RRF weight of the vector ranking
CANDIDATES = 40  # read from each side
FUSED_VECTOR_WEIGHT = 0.25  # search_records: weight of the rescaled cosine against lexical relevance (dev split)
NEIGHBOUR_WEIGHT = 0.2  # search_records: share of the best session neighbour's score a record adds (dev split)
RECHECK_S = 300  # Loader: how often to look for vectors again while there are none


def rrf(rankings: list[tuple[list[str], float]], k: int = RRF_K) -> list[str]:
    """Fuse (ids best first, weight) rankings: Σ weight / (k + rank); ties keep first-seen order."""
    scores: dict[str, float] = {}
    for ids, weight in rankings:
        for rank, rid in enumerate(ids, 1):
            scores[rid] = scores.get(rid, 0.0) + weight / (k + rank)
    order = {rid: i for i, rid in enumerate(dict.fromkeys(r for ids, _ in rankings for r in ids))}
    return sorted(scores, key=lambda r: (-scores[r], order[r]))


def vector_ids(store, embedder, project_id: str, text: str, k: int) -> list[str]:
    """Record ids of the project nearest to ``text`` (a long text: plain embedding), best first."""
    q = embedder.encode([text])[0]
    return [rid for rid, _ in store.knn(project_id, q, k)]


def _cosines(store, project_id: str, q, depth: int):
    """(the ``depth`` nearest records {id: cosine}, lookup(ids) -> {id: cosine} for any of the project's)."""
    kept = store.similarities(project_id, q)
    if kept is not None:  # the project's matrix in memory: every cosine at once
        rows, sims = kept
        ids = list(rows)
        k = min(depth, len(ids))
        top = sims.argpartition(len(ids) - k)[len(ids) - k:] if k else []
        return ({ids[i]: float(sims[i]) for i in top},
                lambda wanted: {r: float(sims[rows[r]]) for r in wanted if r in rows})
    near = dict(store.knn(project_id, q, depth))

    def lookup(wanted: list[str]) -> dict[str, float]:
        out = {r: near[r] for r in wanted if r in near}
        out.update({rid: float(vec @ q) for rid, vec in store.vectors_of([r for r in wanted if r not in near]).items()})
        return out

    return near, lookup


def search_records(conn: sqlite3.Connection, project_id: str, text: str, *, store=None, embedder=None,
                   limit: int = 10, types: Iterable[str] | None = None,
                   include_superseded: bool = False) -> list[dict]:
    """Records for ``text``, best first: the fused ranking, or the hot path's alone without vectors."""
    return [h.record for h in search_hits(conn, project_id, text, store=store, embedder=embedder, limit=limit,
                                          types=types, include_superseded=include_superseded)]


def search_hits(conn: sqlite3.Connection, project_id: str, text: str, *, store=None, embedder=None,
                limit: int = 10, types: Iterable[str] | None = None, include_superseded: bool = False) -> list:
    """``search_records`` as ``store.search.Hit`` objects (``relevance`` is the fused score)."""
    types = list(types or [])
    depth = max(limit, CANDIDATES)
    if store is None or embedder is None:
        return search.search(conn, project_id, text, limit=limit, types=types, include_superseded=include_superseded)
    hits = search.search(conn, project_id, text, limit=depth, types=types, include_superseded=include_superseded)
    q = embedder.encode([text])[0]
    lexical = {h.record["id"]: h for h in hits}
    near, lookup = _cosines(store, project_id, q, depth)
    found = search.current_by_ids(conn, project_id, [rid for rid in near if rid not in lexical], types)
    if not lexical and not found:
        return []
    top_rel = max((h.relevance for h in hits), default=0.0) or 1.0
    lo, hi = (min(near.values()), max(near.values())) if near else (0.0, 1.0)
    span = (hi - lo) or 1.0
    pool = {rid: (h.record, h.relevance, h.coverage, h.matched) for rid, h in lexical.items()}
    pool.update({rid: (rec, 0.0, 0.0, 0) for rid, rec in found.items()})
    # Session neighbours of the candidates score too (what the answer next to a matching record needs).
    nbrs = search.session_neighbours(conn, list(pool))
    everyone = list({*pool, *(n for ns in nbrs.values() for n in ns)})
    cosines = lookup(everyone)
    base = {}
    for rid in everyone:
        cos = cosines.get(rid)
        closeness = min(1.0, max(0.0, (cos - lo) / span)) if cos is not None else 0.0
        base[rid] = (pool[rid][1] if rid in pool else 0.0) / top_rel + FUSED_VECTOR_WEIGHT * closeness
    newcomers = search.current_by_ids(conn, project_id, [n for n in base if n not in pool], types)
    pool.update({rid: (rec, 0.0, 0.0, 0) for rid, rec in newcomers.items()})
    rows = [(rec, base[rid] + NEIGHBOUR_WEIGHT * max((base[n] for n in nbrs.get(rid, ())), default=0.0), cov, m)
            for rid, (rec, _, cov, m) in pool.items()]
    return search.rank(rows)[:limit]


class Loader:
    """(vector store, embedder) for hybrid search in a long-lived process, loaded once; None (FTS5 only)
    while embeddings are off or no vectors of the configured model exist, looked for again at most every
    RECHECK_S. Never downloads a model. Thread-safe."""

    def __init__(self):
        self._pair: tuple | None = None
        self._checked: float | None = None  # time.monotonic() of the last look; None: never looked
        self._lock = threading.Lock()

    def get(self, recheck_s: float | None = None) -> tuple | None:
        """The pair, or None; ``recheck_s`` overrides RECHECK_S. The first call always looks (the monotonic
        clock counts from boot: "never looked" is not time 0)."""
        with self._lock:
            if self._pair is not None:
                return self._pair
            now = time.monotonic()
            wait = RECHECK_S if recheck_s is None else recheck_s
            if self._checked is not None and now - self._checked < wait:
                return None
            self._checked = now
            self._pair = _load()
            return self._pair

    def close(self) -> None:
        with self._lock:
            if self._pair is not None:
                self._pair[0].close()
            self._pair, self._checked = None, None


def _load() -> tuple | None:
    import logging

    try:
        from agentctx import settings
        from agentctx.consolidation import embeddings
        from agentctx.store import vectors

        if not settings.value("embeddings") or not os.path.exists(vectors.path()):
            return None
        emb = embeddings.load(download=False)
        store = vectors.Store(busy_ms=2000)
        if store.tag() != emb.tag:
            store.close()
            return None
        return store, emb
    except Exception as exc:  # noqa: BLE001 - no model2vec, no model, damaged file: FTS5 alone
        logging.getLogger("agentctx.hybrid").info("hybrid search off: %s", exc)
        return None
