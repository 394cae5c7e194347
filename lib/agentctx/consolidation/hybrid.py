"""Hybrid retrieval: reciprocal rank fusion (RRF) of the FTS5 ranking and the vector ranking.

Used where a model may be loaded (the MCP server, the consolidation pass, the evaluation);
the UserPromptSubmit hook stays on FTS5 alone. Only current records come back: vector hits
are re-read from the store and dropped when superseded or archived, so fusion never brings a
stale record back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from agentctx.store import records, search

RRF_K = 60
FTS_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
OVERFETCH = 4  # each ranking is read this many times deeper than the answer (hybrid search seed)


def rrf(rankings: list[tuple[list[str], float]], k: int = RRF_K) -> list[str]:
    """Fuse (ids best first, weight) rankings: Σ weight / (k + rank); ties keep first-seen order."""
    scores: dict[str, float] = {}
    for ids, weight in rankings:
        for rank, rid in enumerate(ids, 1):
            scores[rid] = scores.get(rid, 0.0) + weight / (k + rank)
    order = {rid: i for i, rid in enumerate(dict.fromkeys(r for ids, _ in rankings for r in ids))}
    return sorted(scores, key=lambda r: (-scores[r], order[r]))


def _current(conn: sqlite3.Connection, project_id: str, rec_ids: list[str], types: list[str]) -> dict[str, dict]:
    rows = records.current(conn, project_id, include_global=True, ids=rec_ids, types=types)
    return {r["id"]: r for r in rows}


def vector_ids(store, embedder, project_id: str, text: str, k: int) -> list[str]:
    """Record ids of the project nearest to ``text``, best first."""
    q = embedder.encode([text])[0]
    return [rid for rid, _ in store.knn(project_id, q, k)]


def search_records(conn: sqlite3.Connection, project_id: str, text: str, *, store=None, embedder=None,
                   limit: int = 10, types: Iterable[str] | None = None) -> list[dict]:
    """Current records for ``text``, best first: RRF of FTS5 and vectors, or FTS5 alone without a model.

    Pinned records keep coming first, as on the FTS5 path.
    """
    types = list(types or [])
    depth = limit * OVERFETCH
    fts = search.search(conn, project_id, text, limit=depth, types=types)
    by_id = {h.record["id"]: h.record for h in fts}
    rankings = [([h.record["id"] for h in fts], FTS_WEIGHT)]
    if store is not None and embedder is not None:
        near = vector_ids(store, embedder, project_id, text, depth * 2)
        current = _current(conn, project_id, near, types)
        by_id.update(current)
        rankings.append(([rid for rid in near if rid in current], VECTOR_WEIGHT))
    fused = rrf(rankings)
    recs = [by_id[rid] for rid in fused if rid in by_id]
    recs.sort(key=lambda r: not r.get("pinned"))  # stable: fused order within pinned / unpinned
    return recs[:limit]
