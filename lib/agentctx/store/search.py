"""Hot-path retrieval: FTS5 BM25 reranked by age, type and confidence; no model.

Degradation ladder (ADR-005): FTS5 → LIKE scan → pinned records only. The prompt never
reaches FTS5 as syntax: it is cut into word tokens, each quoted as a phrase and joined
with OR, so quotes, ``*``, ``-``, ``:``, ``NEAR``, parentheses and any script are inert.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

from agentctx import clock
from agentctx.scoring import final_score
from agentctx.store.records import COLUMNS, current_sql

MAX_QUERY_TERMS = 24
MAX_TERM_CHARS = 64
# A 1 MB prompt is searched by its head and tail: that is where the ask usually is.
HEAD_CHARS, TAIL_CHARS = 12_000, 4_000
CANDIDATES = 40
COMMON_FRACTION = 0.20  # 0.10 changed the top 3 for 1 prompt in 3 at 100k records; 0.20 keeps 94% of it
COMMON_MIN_RECORDS = 2000
PRERANK = 300

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does doing done for from had has have
    having he her here hers him his how i if in into is it its just me my no nor not of off on once
    only or our ours out over own please same she should so some such than that the their theirs
    them then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours yes ok okay sure thanks thank
    let lets let's go get got make need want like also now then about again all any each few more
    most other hi hey hello continue proceed new use using used add added way thing things something
    look see show tell know think work works working try trying change update help instead""".split()
)

_TRIVIAL = re.compile(
    r"^\s*(?:ok(?:ay)?|k|yes|yep|yeah|y|no|nope|n|sure|thanks?(?: you)?|thx|ty|continue|go(?: on| ahead)?|"
    r"proceed|do it|next|done|great|good|nice|cool|perfect|lgtm|right|correct|agreed|please|yes please|"
    r"keep going|carry on|sounds good|looks good)\s*[.!?]*\s*$",
    re.IGNORECASE,
)


def is_trivial(prompt: str) -> bool:
    """"ok", "yes", "continue" and friends: nothing worth searching for."""
    return not prompt or not prompt.strip() or bool(_TRIVIAL.match(prompt))


def terms(text: str) -> list[str]:
    """Distinct, lowercased content words of ``text``, in order, capped.

    Over the cap, the first and the last words are kept (half each): a question typed
    after a pasted log must not lose its words to the log's.
    """
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + " " + text[-TAIL_CHARS:]
    out: list[str] = []
    seen: set[str] = set()
    for match in _WORD.finditer(text.lower()):
        word = match.group(0).strip("_")
        if len(word) < 2 or word in STOPWORDS or word in seen or len(word) > MAX_TERM_CHARS:
            continue
        seen.add(word)
        out.append(word)
    if len(out) > MAX_QUERY_TERMS:
        tail = MAX_QUERY_TERMS // 2
        out = out[: MAX_QUERY_TERMS - tail] + out[-tail:]
    return out


# BM25 column weights (title, body): a word in the title counts three times one in the body.
BM25_WEIGHTS = (3.0, 1.0)
BM25 = f"bm25(records_fts, {BM25_WEIGHTS[0]}, {BM25_WEIGHTS[1]})"  # the one ranking expression over records_fts


def phrase(word: str) -> str:
    """One word as an FTS5 phrase: quotes doubled, so any text is literal (no operators, no columns)."""
    return '"' + word.replace('"', '""') + '"'


def any_of(words: list[str]) -> str:
    """An FTS5 MATCH expression for records holding any of ``words`` (each a literal phrase)."""
    return " OR ".join(phrase(w) for w in words)


def fts_query(text: str) -> str | None:
    """A safe FTS5 MATCH expression for free text, or None when nothing is searchable."""
    words = terms(text)
    if not words:
        return None
    return any_of(words)


def informative(conn: sqlite3.Connection, words: list[str]) -> list[str]:
    """Drop query words no record contains, and near-ubiquitous ones in a large store.

    A word is dropped when it is in more than COMMON_FRACTION of records and in more than
    COMMON_MIN_RECORDS of them: ranking every record with "fix" or "py" in a 100k code store
    is most of the query time and adds almost nothing to BM25, whose weight is in the rare
    words. Small stores are searched with every word. The two rarest words are always kept.
    """
    (total,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM records").fetchone()
    counts = {}
    for word in words:
        (n,) = conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH ?", (phrase(word),)).fetchone()
        if n:
            counts[word] = n
    limit = max(COMMON_FRACTION * total, COMMON_MIN_RECORDS)
    kept = [w for w in words if w in counts and counts[w] <= limit]
    if len(kept) < 2:
        kept = [w for w in words if w in sorted(counts, key=counts.__getitem__)[:2]]
    return kept


class Hit:
    """A search result: the record, its query relevance, final score and ladder rung."""

    __slots__ = ("record", "relevance", "score", "rung")

    def __init__(self, record: dict, relevance: float, score: float, rung: str):
        self.record, self.relevance, self.score, self.rung = record, relevance, score, rung  # rung: fts|like|pinned


def _scope_clause(include_superseded: bool) -> str:
    clause = "(r.project_id = ? OR r.scope = 'global')"
    if not include_superseded:
        clause += " AND " + current_sql("r")  # current and not rolled up
    return clause


def _type_clause(types: list[str]) -> str:
    return f" AND r.type IN ({','.join('?' * len(types))})" if types else ""


def _rank(rows: Iterable[tuple[dict, float]], rung: str, reference: str) -> list[Hit]:
    hits = []
    ref = clock.to_datetime(reference)
    for rec, relevance in rows:
        age = clock.age_days(rec.get("valid_from") or rec.get("recorded_at"), ref)
        since_use = clock.age_days(rec.get("last_accessed") or rec.get("recorded_at"), ref)
        uses = int(rec.get("access_count") or 0) + int(rec.get("reinforce_count") or 0)
        score = final_score(relevance, rec["type"], age, rec["confidence"], uses, since_use)
        hits.append(Hit(rec, relevance, score, rung))
    hits.sort(key=lambda h: (not h.record.get("pinned"), -h.score))
    return hits


def _fts(conn, project_id, query, types, include_superseded, reference) -> list[Hit]:
    cols = ", ".join("r." + c.strip() for c in COLUMNS.split(","))
    where = f"{_scope_clause(include_superseded)}{_type_clause(types)}"
    # Rank inside FTS5 first and join only the best rowids: joining every match to its full
    # row before sorting costs ~15 ms at 100k records. If filtering (project, superseded,
    # type) leaves too few of those, rank the filtered set in full instead.
    sql = (
        f"WITH hits AS (SELECT rowid AS rid, {BM25} AS bm FROM records_fts "
        "WHERE records_fts MATCH ? ORDER BY bm LIMIT ?) "
        f"SELECT {cols}, hits.bm AS bm FROM hits JOIN records r ON r.seq = hits.rid WHERE {where} "
        "ORDER BY hits.bm LIMIT ?"
    )
    rows = conn.execute(sql, (query, PRERANK, project_id, *types, CANDIDATES)).fetchall()
    if len(rows) < CANDIDATES:
        (matches,) = conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH ?", (query,)).fetchone()
        if matches > PRERANK:
            rows = conn.execute(
                f"SELECT {cols}, {BM25} AS bm FROM records_fts "
                f"JOIN records r ON r.seq = records_fts.rowid WHERE records_fts MATCH ? AND {where} "
                "ORDER BY bm LIMIT ?",
                (query, project_id, *types, CANDIDATES),
            ).fetchall()
    pairs = []
    for row in rows:
        rec = dict(row)
        pairs.append((rec, -rec.pop("bm")))
    return _rank(pairs, "fts", reference)


def _like(conn, project_id, words, types, include_superseded, reference) -> list[Hit]:
    words = sorted(words, key=len, reverse=True)[:6]
    if not words:
        return []
    cols = ", ".join("r." + c.strip() for c in COLUMNS.split(","))
    match_any = " OR ".join(["(r.title LIKE ? ESCAPE '\\' OR r.body LIKE ? ESCAPE '\\')"] * len(words))
    params: list = [project_id, *types]
    for w in words:
        pattern = "%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        params += [pattern, pattern]
    rows = conn.execute(
        f"SELECT {cols} FROM records r WHERE {_scope_clause(include_superseded)}{_type_clause(types)} "
        f"AND ({match_any}) ORDER BY r.recorded_at DESC LIMIT ?",
        (*params, CANDIDATES),
    ).fetchall()
    pairs = []
    for row in rows:
        rec = dict(row)
        text = (rec["title"] + " " + rec["body"]).lower()
        pairs.append((rec, float(sum(2 if w in rec["title"].lower() else 1 for w in words if w in text))))
    return _rank(pairs, "like", reference)


def _pinned(conn, project_id, types, reference) -> list[Hit]:
    cols = ", ".join("r." + c.strip() for c in COLUMNS.split(","))
    rows = conn.execute(
        f"SELECT {cols} FROM records r WHERE {_scope_clause(False)}{_type_clause(types)} AND r.pinned = 1 "
        "ORDER BY r.recorded_at DESC LIMIT ?",
        (project_id, *types, CANDIDATES),
    ).fetchall()
    return _rank([(dict(r), 1.0) for r in rows], "pinned", reference)


def search(
    conn: sqlite3.Connection,
    project_id: str,
    text: str,
    *,
    limit: int = 10,
    types: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    include_superseded: bool = False,
    relative_floor: float = 0.0,
) -> list[Hit]:
    """Best records for ``text`` in this project (plus global ones), best first.

    ``exclude`` drops ids (per-session dedup); ``relative_floor`` drops hits whose
    relevance is below that fraction of the best hit's.
    """
    types = list(types or [])
    words = terms(text)
    reference = clock.now()
    hits: list[Hit] = []
    if words:
        try:
            useful = informative(conn, words)
            hits = _fts(conn, project_id, any_of(useful), types, include_superseded, reference) if useful else []
        except sqlite3.DatabaseError:  # no FTS5, or a damaged index (rebuilt on the next write): scan instead
            try:
                hits = _like(conn, project_id, words, types, include_superseded, reference)
            except sqlite3.OperationalError:
                hits = _pinned(conn, project_id, types, reference)
    if relative_floor and hits:
        best = max(h.relevance for h in hits)
        hits = [h for h in hits if h.record.get("pinned") or h.relevance >= relative_floor * best]
    skip = set(exclude)
    return [h for h in hits if h.record["id"] not in skip][:limit]


def rank_among(conn: sqlite3.Connection, text: str, record_ids: Iterable[str], limit: int) -> list[str]:
    """Of these record ids, those whose text matches ``text``, best BM25 first (a file's records
    searched by topic). The ids come from a scoped read."""
    match = fts_query(text)
    if not match:
        return []
    import json

    return [r[0] for r in conn.execute(
        "SELECT r.id FROM records_fts JOIN records r ON r.seq = records_fts.rowid "
        "WHERE records_fts MATCH ? AND r.id IN (SELECT value FROM json_each(?)) "
        f"ORDER BY {BM25} LIMIT ?",
        (match, json.dumps(list(record_ids)), limit),
    )]
