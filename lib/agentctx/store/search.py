"""Hot-path retrieval, no model: FTS5 BM25 picks candidates (superseded records standing in for the
current record that replaced them), ``relevance`` scores them again on word stems (a length floor,
prompt coverage, session context), ``scoring`` weighs type and, within bounds, age and confidence.

Degradation ladder (ADR-005): FTS5 → LIKE scan → pinned records only. The prompt never
reaches FTS5 as syntax: it is cut into word tokens, each quoted as a phrase and joined
with OR, so quotes, ``*``, ``-``, ``:``, ``NEAR``, parentheses and any script are inert.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

from agentctx import clock, lexicon, relevance
from agentctx.scoring import final_score
from agentctx.store.query import columns, current_sql

MAX_QUERY_TERMS = 24
MAX_TERM_CHARS = 64
# A 1 MB prompt is searched by its head and tail: that is where the ask usually is.
HEAD_CHARS, TAIL_CHARS = 12_000, 4_000
CANDIDATES = 40
COMMON_FRACTION = 0.20  # 0.10 changed the top 3 for 1 prompt in 3 at 100k records; 0.20 keeps 94% of it
COMMON_MIN_RECORDS = 2000
PRERANK = 300
# Candidate generation is bounded by the records it has to rank (``candidate_match``): the rarest words
# until their records add up to this many; the other words find a record only where two of them meet.
CANDIDATE_POSTINGS = 10_000  # every prompt of bench/prompts.py fits at 10k records (the most: 9,610); at 100k none does
MAX_PAIRED = 5  # the commonest words beyond those: the rarest this many of them are paired (10 pairs at most)

_WORD = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does doing done for from had has have
    having he her here hers him his how i if in into is it its just me my no nor not of off on once
    only or our ours out over own please same she should so some such than that the their theirs
    them then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours yes ok okay sure thanks thank
    let lets let's go get got make need want like also now then about again all any each few more
    most other hi hey hello continue proceed new use using used add added way thing things something
    look see show tell know think work works working try trying change update help instead
    one ones every else really much many lot lots still already maybe might must whether etc""".split()
)

# A whole prompt that only acknowledges or steers, in any case, with whitespace around it and a run of
# ".", "!" or "?" after it: a set, not a regular expression (compiling one cost every prompt ~0.3 ms).
_TRIVIAL = frozenset((
    "ok", "okay", "k", "yes", "yep", "yeah", "y", "no", "nope", "n", "sure", "thank", "thanks", "thank you",
    "thanks you", "thx", "ty", "continue", "go", "go on", "go ahead", "proceed", "do it", "next", "done", "great",
    "good", "nice", "cool", "perfect", "lgtm", "right", "correct", "agreed", "please", "yes please", "keep going",
    "carry on", "sounds good", "looks good",
))


# Words that, alone, only acknowledge or steer ("looks good, thanks", "ok go ahead", "yes please do it").
_ACK_WORDS = frozenset(
    """ok okay k yes yep yeah y no nope n sure thanks thank thx ty you continue go on ahead proceed do it next
    done great good nice cool perfect lgtm right correct agreed please keep going carry sounds looks fine
    awesome alright all makes sense sgtm that this works""".split()
)
_ACK_MAX_WORDS = 6


def is_trivial(prompt: str) -> bool:
    """"ok", "yes", "continue", "looks good, thanks" and friends: nothing worth searching for."""
    if not prompt or not prompt.strip() or prompt.strip().rstrip(".!?").rstrip().lower() in _TRIVIAL:
        return True
    if len(prompt) > 80:
        return False
    words = re.findall(r"[^\W\d_]+", prompt.lower())
    return 0 < len(words) <= _ACK_MAX_WORDS and all(w in _ACK_WORDS for w in words)


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
    if "-" in text:  # "de-stress" is also searched as "destress" (records are indexed with both spellings)
        for word in lexicon.joined(text):
            if word not in seen and word not in STOPWORDS:
                seen.add(word)
                out.append(word)
    if len(out) > MAX_QUERY_TERMS:
        tail = MAX_QUERY_TERMS // 2
        out = out[: MAX_QUERY_TERMS - tail] + out[-tail:]
    return out


# BM25 column weights (title, body, terms): a word in the title counts three times one in the body, a
# word the consolidation pass added (``terms``) half. The second stage (``relevance``) uses the same.
BM25_WEIGHTS = relevance.FIELD_WEIGHTS
BM25 = "bm25(records_fts, {}, {}, {})".format(*BM25_WEIGHTS)  # the one ranking expression over records_fts
MIN_SPLIT, MAX_SPLIT = 5, 16  # a word no record holds, of this length, is also looked for as two words ("destress")
MAX_SPLIT_WORDS = 2


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


def _matches(conn: sqlite3.Connection, expression: str) -> int:
    return conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH ?", (expression,)).fetchone()[0]


def document_counts(conn: sqlite3.Connection, words: list[str]) -> tuple[int, dict[str, int]]:
    """(records in the store, {word: records holding it}) — every word, zero counts included."""
    (total,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM records").fetchone()
    return total, {word: _matches(conn, phrase(word)) for word in words}


def splits(conn: sqlite3.Connection, counts: dict[str, int]) -> dict[str, tuple[tuple[str, str], int]]:
    """Words no record holds that the index has as two adjacent words: {"destress": (("de", "stress"), n)}.

    Only words of MIN_SPLIT to MAX_SPLIT letters, MAX_SPLIT_WORDS of them at most (a pasted log is full
    of words no record holds); the split found in the most records wins."""
    out = {}
    tried = 0
    for word, n in counts.items():
        if n or not MIN_SPLIT <= len(word) <= MAX_SPLIT or not word.isalpha() or tried >= MAX_SPLIT_WORDS:
            continue
        tried += 1
        best = None
        for i in range(2, len(word) - 1):
            parts = (word[:i], word[i:])
            found = _matches(conn, phrase(" ".join(parts)))
            if found and (best is None or found > best[1]):
                best = (parts, found)
        if best:
            out[word] = best
    return out


def informative(conn: sqlite3.Connection, words: list[str], counts: dict[str, int] | None = None,
                total: int | None = None) -> list[str]:
    """Drop query words no record contains, and near-ubiquitous ones in a large store.

    A word is dropped when it is in more than COMMON_FRACTION of records and in more than
    COMMON_MIN_RECORDS of them: ranking every record with "fix" or "py" in a 100k code store
    is most of the query time and adds almost nothing to BM25, whose weight is in the rare
    words. Small stores are searched with every word. The two rarest words are always kept.
    """
    if counts is None or total is None:
        total, counts = document_counts(conn, words)
    counts = {w: n for w, n in counts.items() if n}
    limit = max(COMMON_FRACTION * total, COMMON_MIN_RECORDS)
    kept = [w for w in words if w in counts and counts[w] <= limit]
    if len(kept) < 2:
        kept = [w for w in words if w in sorted(counts, key=counts.__getitem__)[:2]]
    return kept


def candidate_match(words: list[str], counts: dict[str, int]) -> str:
    """The FTS5 expression that generates the candidates for ``words`` (``informative`` ones, with their
    ``counts``), bounded so a prompt with several common words never ranks every record holding one.

    The rarest words, in order, while the records holding them add up to at most CANDIDATE_POSTINGS (the
    rarest one always): any record holding one is a candidate, as BM25's weight is in them. Each other
    word alone would only bring records BM25 ranks below those; a record holding two of them (of the
    MAX_PAIRED rarest) is a candidate too. Every word is in the expression, so BM25 weighs them all as
    before; only the records matched differ. Where every word fits, this is the plain OR of them all."""
    ordered = sorted(words, key=lambda w: counts.get(w, 0))
    rare: list[str] = []
    postings = 0
    for word in ordered:
        postings += counts.get(word, 0)
        if rare and postings > CANDIDATE_POSTINGS:
            break
        rare.append(word)
    common = [w for w in ordered if w not in rare]
    paired = common[:MAX_PAIRED]
    pairs = [f"({phrase(a)} AND {phrase(b)})" for i, a in enumerate(paired) for b in paired[i + 1:]]
    # The commonest words, not paired, ride with the rarest word: no record more, but BM25 still weighs them.
    pairs += [f"({phrase(w)} AND {phrase(rare[0])})" for w in common[MAX_PAIRED:]]
    return " OR ".join([phrase(w) for w in rare] + pairs)


class Hit:
    """A search result: the record, its query relevance, final score, ladder rung, the share of the
    prompt's word weight it covers and how many of the prompt's words it holds (``relevance.score``;
    coverage 1.0 on the rungs below FTS5, which cannot tell)."""

    __slots__ = ("record", "relevance", "score", "rung", "coverage", "matched")

    def __init__(self, record: dict, relevance: float, score: float, rung: str, coverage: float = 1.0,
                 matched: int = 0):
        self.record, self.relevance, self.score, self.rung = record, relevance, score, rung  # rung: fts|like|pinned
        self.coverage, self.matched = coverage, matched


def average_length(conn: sqlite3.Connection) -> float:
    """Mean words of title + body per record, from FTS5's own running totals (its "averages" record:
    varints of the row count and each column's token count), so no scan is needed. sqlite3.DatabaseError
    when that record cannot be what FTS5 wrote (a varint cut short, fewer than three values): the
    search's error path then verifies the index."""
    row = conn.execute("SELECT block FROM records_fts_data WHERE id = 1").fetchone()
    data = bytes(row[0]) if row and row[0] is not None else b""
    values = _varints(data)
    if not data:
        return 1.0
    if values is None or len(values) < 3:
        raise sqlite3.DatabaseError("the full-text index's averages record is malformed")
    if values[0] <= 0:
        return 1.0
    return (values[1] + values[2]) / values[0]


def _varints(data: bytes) -> list[int] | None:
    """SQLite varints (7 bits a byte, big-endian; the 9th byte carries 8); None when the last is cut short."""
    values: list[int] = []
    i = 0
    while i < len(data):
        value = 0
        for k in range(9):
            if i >= len(data):
                return None
            byte = data[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def _scope_clause(include_superseded: bool) -> str:
    clause = "(r.project_id = ? OR r.scope = 'global')"
    if not include_superseded:
        clause += " AND " + current_sql("r")  # current and not rolled up
    return clause


def _type_clause(types: list[str]) -> str:
    return f" AND r.type IN ({','.join('?' * len(types))})" if types else ""


def _rank(rows: Iterable[tuple], rung: str, reference: str) -> list[Hit]:
    """Hits from (record, relevance[, coverage[, matched]]) rows, ordered: pinned first, then by final score."""
    hits = []
    ref = clock.to_datetime(reference)
    for rec, rel, *rest in rows:
        age = clock.age_days(rec.get("valid_from") or rec.get("recorded_at"), ref)
        since_use = clock.age_days(rec.get("last_accessed") or rec.get("recorded_at"), ref)
        uses = int(rec.get("access_count") or 0) + int(rec.get("reinforce_count") or 0)
        score = final_score(rel, rec["type"], age, rec["confidence"], uses, since_use)
        hits.append(Hit(rec, rel, score, rung, *rest))
    hits.sort(key=lambda h: (not h.record.get("pinned"), -h.score))
    return hits


def current_by_ids(conn: sqlite3.Connection, project_id: str, record_ids: list[str],
                   types: list[str] | None = None) -> dict[str, dict]:
    """{id: record} of the current records of this project (or global) among ``record_ids`` (of ``types``),
    looked up by id: the unary ``+`` keeps SQLite from scanning the project's index instead."""
    if not record_ids:
        return {}
    cols = columns("r")
    rows = conn.execute(
        f"SELECT {cols} FROM records r WHERE r.id IN ({','.join('?' * len(record_ids))}) "
        "AND (+r.project_id = ? OR +r.scope = 'global') AND +r.superseded_at IS NULL AND +r.archived_at IS NULL"
        + (f" AND +r.type IN ({','.join('?' * len(types))})" if types else ""),
        (*record_ids, project_id, *(types or ())))
    return {r["id"]: dict(r) for r in rows}


def session_neighbours(conn: sqlite3.Connection, record_ids: list[str]) -> dict[str, list[str]]:
    """{record id: ids of the records just before and after it in its session} (one statement)."""
    if not record_ids:
        return {}
    side = ("(SELECT r.id FROM records r WHERE r.session_id = c.session_id AND r.project_id = c.project_id "
            "AND r.seq {op} c.seq ORDER BY r.seq {order} LIMIT 1)")
    rows = conn.execute(
        f"SELECT c.id, {side.format(op='<', order='DESC')}, {side.format(op='>', order='ASC')} FROM records c "
        f"WHERE c.id IN ({','.join('?' * len(record_ids))}) AND c.session_id IS NOT NULL", list(record_ids))
    return {r[0]: [x for x in (r[1], r[2]) if x] for r in rows}


def rank(rows: Iterable[tuple], rung: str = "fts") -> list[Hit]:
    """Hits for (record, relevance[, coverage[, matched]]) rows, scored now by the standing rules: pinned first,
    then by final score (what the hybrid ranking shares with this one)."""
    return _rank(rows, rung, clock.now())


def rescore(conn: sqlite3.Connection, query: relevance.Query, rows: Iterable[tuple[dict, float]]) -> list[tuple]:
    """The second stage: (record, relevance, coverage, matched) for FTS5 candidates given as (record with its
    ``terms`` and ``context``, BM25). The derived columns are dropped from the record afterwards. A
    candidate the second stage finds nothing in (the index matched a spelling it does not share) keeps
    a sliver of its BM25, below every candidate it scores."""
    avg = average_length(conn)
    out = []
    for rec, bm in rows:
        rel, cov, matched = relevance.score(query, rec, avg)
        rec.pop("terms", None)
        rec.pop("context", None)
        out.append((rec, rel if rel > 0 else 1e-6 * bm, cov, matched))
    return out


def successors(conn: sqlite3.Connection, project_id: str, record_ids: list[str]) -> dict[str, dict]:
    """{superseded record id: the current record that finally replaced it} (following ``superseded_by``
    through every later version), in this project's scope; retired records without a successor, and
    chains ending in an archived record, are left out."""
    if not record_ids:
        return {}
    cols = columns("r") + ", r.terms, r.context"
    rows = conn.execute(
        "WITH RECURSIVE chain(start, id, depth) AS ("
        f"SELECT id, superseded_by, 1 FROM records WHERE id IN ({','.join('?' * len(record_ids))}) "
        "AND superseded_by IS NOT NULL UNION ALL SELECT chain.start, r.superseded_by, chain.depth + 1 "
        "FROM chain JOIN records r ON r.id = chain.id WHERE r.superseded_by IS NOT NULL AND chain.depth < 50) "
        f"SELECT chain.start AS start, {cols} FROM chain JOIN records r ON r.id = chain.id "
        f"WHERE {_scope_clause(False)}", (*record_ids, project_id)).fetchall()
    out = {}
    for row in rows:
        rec = dict(row)
        out[rec.pop("start")] = rec
    return out


def _fts(conn, project_id, match, query, types, include_superseded, reference) -> list[Hit]:
    cols = columns("r") + ", r.terms, r.context"
    # Superseded records are candidates too: a prompt worded like an old fact finds the record that
    # replaced it (rescore), never the old one, unless history is asked for.
    where = "(r.project_id = ? OR r.scope = 'global')" + ("" if include_superseded else " AND r.archived_at IS NULL")
    where += _type_clause(types)
    # Rank inside FTS5 first and join only the best rowids: joining every match to its full
    # row before sorting costs ~15 ms at 100k records. If filtering (project, superseded,
    # type) leaves too few of those, rank the filtered set in full instead.
    sql = (
        f"WITH hits AS (SELECT rowid AS rid, {BM25} AS bm FROM records_fts "
        "WHERE records_fts MATCH ? ORDER BY bm LIMIT ?) "
        f"SELECT {cols}, hits.bm AS bm FROM hits JOIN records r ON r.seq = hits.rid WHERE {where} "
        "ORDER BY hits.bm LIMIT ?"
    )
    rows = conn.execute(sql, (match, PRERANK, project_id, *types, CANDIDATES)).fetchall()
    if len(rows) < CANDIDATES:
        if _matches(conn, match) > PRERANK:
            rows = conn.execute(
                f"SELECT {cols}, {BM25} AS bm FROM records_fts "
                f"JOIN records r ON r.seq = records_fts.rowid WHERE records_fts MATCH ? AND {where} "
                "ORDER BY bm LIMIT ?",
                (match, project_id, *types, CANDIDATES),
            ).fetchall()
    pairs = []
    for row in rows:
        rec = dict(row)
        bm = rec.pop("bm")
        if bm is None:  # BM25 without a score: FTS5's running totals are damaged
            raise sqlite3.DatabaseError("the full-text index gave no BM25 score")
        pairs.append((rec, -bm))
    scored = rescore(conn, query, pairs)
    if not include_superseded:
        scored = _current_for_superseded(conn, project_id, query, scored, types)
    return _rank(scored, "fts", reference)


def _current_for_superseded(conn, project_id, query, scored: list[tuple], types: list[str]) -> list[tuple]:
    """Replace each superseded candidate by the current record that replaced it, which takes the old
    record's relevance and coverage when those are higher than its own (the prompt is about that fact)."""
    old = [rec["id"] for rec, *_ in scored if rec.get("superseded_at")]
    new = successors(conn, project_id, old) if old else {}
    best: dict[str, tuple] = {}
    for rec, rel, cov, matched in scored:
        if rec.get("superseded_at"):
            succ = new.get(rec["id"])
            if succ is None or (types and succ["type"] not in types):
                continue
            if succ["id"] not in best:  # scored on its own words first, as its own candidate would be
                best[succ["id"]] = rescore(conn, query, [(succ, 0.0)])[0]
            rec = best[succ["id"]][0]
        mine = best.get(rec["id"])
        best[rec["id"]] = ((rec, max(rel, mine[1]), max(cov, mine[2]), max(matched, mine[3])) if mine
                           else (rec, rel, cov, matched))
    return list(best.values())


def _like(conn, project_id, words, types, include_superseded, reference) -> list[Hit]:
    words = sorted(words, key=len, reverse=True)[:6]
    if not words:
        return []
    cols = columns("r")
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
        found = [w for w in words if w in text]
        pairs.append((rec, float(sum(2 if w in rec["title"].lower() else 1 for w in found)), len(found) / len(words)))
    return _rank(pairs, "like", reference)


def _pinned(conn, project_id, types, reference) -> list[Hit]:
    cols = columns("r")
    rows = conn.execute(
        f"SELECT {cols} FROM records r WHERE {_scope_clause(False)}{_type_clause(types)} AND r.pinned = 1 "
        "ORDER BY r.recorded_at DESC LIMIT ?",
        (project_id, *types, CANDIDATES),
    ).fetchall()
    return _rank([(dict(r), 1.0) for r in rows], "pinned", reference)


def _indexed(conn, project_id, words, counts, types, include_superseded, reference) -> list[Hit]:
    """The FTS5 rungs (sqlite3.DatabaseError when the index cannot answer)."""
    total, counts = counts or document_counts(conn, words)
    useful = informative(conn, words, counts, total)
    split = splits(conn, counts)
    useful += [" ".join(parts) for parts, _ in split.values()]
    weights = {w: split[w][1] if w in split else n for w, n in counts.items()}
    query = relevance.Query(weights, total, {w: parts for w, (parts, _) in split.items()})
    found = {**weights, **{" ".join(parts): n for parts, n in split.values()}}
    return (_fts(conn, project_id, candidate_match(useful, found), query, types, include_superseded, reference)
            if useful else [])


def _after_error(conn, project_id, words, types, include_superseded, reference) -> list[Hit]:
    """A search that failed on the index: FTS5's integrity check (a failing index is rebuilt from the
    records and the next SessionStart says so), then the search again, or a scan when it still fails."""
    from agentctx.store import integrity

    try:
        if integrity.verify_fts(conn, "search"):
            return _indexed(conn, project_id, words, None, types, include_superseded, reference)
    except (sqlite3.DatabaseError, MemoryError):
        pass
    try:
        return _like(conn, project_id, words, types, include_superseded, reference)
    except sqlite3.OperationalError:
        return _pinned(conn, project_id, types, reference)


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
    counts: tuple[int, dict[str, int]] | None = None,
) -> list[Hit]:
    """Best records for ``text`` in this project (plus global ones), best first.

    ``exclude`` drops ids (per-session dedup); ``relative_floor`` drops hits whose
    relevance is below that fraction of the best hit's; ``counts`` is ``document_counts`` of
    ``terms(text)`` when the caller has it already.
    """
    types = list(types or [])
    words = terms(text)
    reference = clock.now()
    hits: list[Hit] = []
    if words:
        try:
            hits = _indexed(conn, project_id, words, counts, types, include_superseded, reference)
        except (sqlite3.DatabaseError, MemoryError):  # no FTS5, or a damaged index (SQLITE_NOMEM from a damaged
            # length is a MemoryError): verified and rebuilt, then searched again or scanned
            hits = _after_error(conn, project_id, words, types, include_superseded, reference)
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
