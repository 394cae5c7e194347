"""The hot-path search's limits and helpers at their boundaries (``store.search``): what counts as a prompt
worth searching, which words of it are searched (caps, head and tail of a long paste), compound words looked
for as two, and the mean record length BM25 is normalised with, read from FTS5's own totals."""

from __future__ import annotations

import sqlite3

import pytest

from agentctx import clock, relevance, scoring
from agentctx.store import records, search

ACKS = ["looks good thanks", "ok go ahead", "yes please do it", "sounds good keep going thanks sure",
        "great thanks makes sense all good"]


@pytest.mark.parametrize("prompt", ACKS)
def test_up_to_six_words_of_acknowledgement_are_trivial(prompt):
    assert search.is_trivial(prompt) and search.is_trivial(prompt + "!")


@pytest.mark.parametrize(("prompt", "trivial"), [
    ("ok ok ok ok ok ok", True),  # six
    ("ok ok ok ok ok ok ok", False),  # seven: a sentence, searched
    ("great thanks " + "!" * 67, True),  # 80 characters
    ("great thanks " + "!" * 68, False),  # 81: too long to be an acknowledgement
    ("?!", False),  # no word at all is not an acknowledgement either
    ("42", False),
    ("", True), ("   ", True),
    ("ok, the ledger outbox", False),
])
def test_what_is_trivial_at_the_limits(prompt, trivial):
    assert search.is_trivial(prompt) is trivial


# What counted as a whole-prompt acknowledgement when it was a regular expression: the set must agree with it.
_AS_PATTERN = (
    r"^\s*(?:ok(?:ay)?|k|yes|yep|yeah|y|no|nope|n|sure|thanks?(?: you)?|thx|ty|continue|go(?: on| ahead)?|"
    r"proceed|do it|next|done|great|good|nice|cool|perfect|lgtm|right|correct|agreed|please|yes please|"
    r"keep going|carry on|sounds good|looks good)\s*[.!?]*\s*$"
)


def test_what_is_trivial_is_what_it_was_when_a_pattern_decided():
    import itertools
    import random
    import re

    pattern = re.compile(_AS_PATTERN, re.IGNORECASE)

    def before(prompt: str) -> bool:
        if not prompt or not prompt.strip() or pattern.match(prompt):
            return True
        if len(prompt) > 80:
            return False
        words = re.findall(r"[^\W\d_]+", prompt.lower())
        return 0 < len(words) <= 6 and all(w in search._ACK_WORDS for w in words)

    rng = random.Random(3)
    phrases = ["ok", "okay", "k", "yes", "yep", "yeah", "y", "no", "nope", "n", "sure", "thank", "thanks", "thank you",
               "thanks you", "thx", "ty", "continue", "go", "go on", "go ahead", "proceed", "do it", "next", "done",
               "great", "good", "nice", "cool", "perfect", "lgtm", "right", "correct", "agreed", "please",
               "yes please", "keep going", "carry on", "sounds good", "looks good",
               "go  on", "thankyou", "oks", "o k", "yes  please", "carry", "nah", "okay okay", "ok, the ledger"]
    around = ["", " ", "\t", "\n", "  \n ", " " * 85]  # past 80 characters only the whole-prompt rule decides
    after = ["", ".", "!", "?", "...", "!?", ". ", " .", " . .", ".!", "?\n", ". !", ",", " ,", "!!!x", "!" * 85]
    tried = 0
    for phrase, lead, tail, trail in itertools.product(phrases, around, after, around):
        text = lead + "".join(c.upper() if rng.random() < 0.3 else c for c in phrase) + tail + trail
        assert search.is_trivial(text) is before(text), repr(text)
        tried += 1
    assert tried > 10_000


def test_a_word_of_64_characters_is_searched_and_one_of_65_is_not():
    assert search.terms("a" * 64 + " " + "b" * 65) == ["a" * 64]


def test_24_words_are_searched_the_first_and_last_12_over_that():
    words = [f"word{i:02d}x" for i in range(40)]
    assert search.terms(" ".join(words[:24])) == words[:24]
    assert search.terms(" ".join(words[:25])) == words[:12] + words[13:25]
    assert search.terms(" ".join(words)) == words[:12] + words[-12:]


def test_a_long_paste_is_searched_by_its_first_12000_and_last_4000_characters():
    whole = "first " + "." * (16_000 - len("first ") - len(" last")) + " last"
    assert len(whole) == 16_000 and search.terms(whole) == ["first", "last"]
    middle = "." * 12_500 + " middle " + "." * 4_000
    assert search.terms(middle) == [], "in neither the head nor the tail"
    head = "." * 11_993 + " headx " + "." * 4_010
    assert search.terms(head) == ["headx"], "the head's last characters"
    tail = "." * 12_010 + " tailx " + "." * 3_993
    assert search.terms(tail) == ["tailx"], "the tail's first characters"
    assert search.terms("." * 16_001 + " end") == ["end"]
    across = "." * 11_995 + " straddling " + "." * (16_000 - 11_995 - len(" straddling "))
    assert len(across) == 16_000 and search.terms(across) == ["straddling"], "16,000 characters: searched whole"
    # exactly 12,000 and 4,000 characters: a word across either cut is cut there
    assert search.terms("." * 11_995 + "headxyz" + "." * 5_000) == ["headx"]
    assert search.terms("." * 12_500 + "abtailx" + "." * 3_995) == ["tailx"]


def test_a_word_no_record_holds_is_looked_for_as_two_adjacent_words(conn, proj):
    records.add(conn, proj.id, type="discovery", title="Why the de stress job runs at night", body="")
    records.add(conn, proj.id, type="discovery", title="Tea time and the tea timer", body="tea timer ab cdef")
    records.add(conn, proj.id, type="discovery", title="abc def", body="")
    records.add(conn, proj.id, type="discovery", title="another abc def", body="")
    records.add(conn, proj.id, type="discovery", title="The x ray machine, a think s list, t hinks", body="")
    counts = {"destress": 0, "teatimer": 0, "abcdef": 0, "xray": 0, "thinks": 0}
    found = search.splits(conn, counts)
    assert found == {"destress": (("de", "stress"), 1), "teatimer": (("tea", "timer"), 1)}, "two words at most"
    assert search.splits(conn, {"abcdef": 0}) == {"abcdef": (("abc", "def"), 2)}, "the split most records hold"
    assert search.splits(conn, {"xray": 0}) == {}, "4 letters: too short to split"
    assert search.splits(conn, {"thinks": 0}) == {}, "each part has 2 letters or more (think s, t hinks)"
    assert search.splits(conn, {"destress": 3}) == {}, "a word some record holds is not split"
    assert search.splits(conn, {"destress2": 0}) == {}, "letters only"


def test_split_lengths_are_5_to_16_letters(conn, proj):
    records.add(conn, proj.id, type="discovery", title="ab cde and abcdefgh ijklmnop and abcdefgh ijklmnopq",
                body="")
    assert search.splits(conn, {"abcde": 0}) == {"abcde": (("ab", "cde"), 1)}
    assert search.splits(conn, {"abcdefghijklmnop": 0}) == {"abcdefghijklmnop": (("abcdefgh", "ijklmnop"), 1)}
    assert search.splits(conn, {"abcdefghijklmnopq": 0}) == {}


def test_the_mean_record_length_comes_from_fts5s_own_totals(conn, proj):
    assert search.average_length(conn) == 1.0, "an empty store"
    records.add(conn, proj.id, type="decision", title="alpha bravo", body="charlie delta echo")  # 5 words
    records.add(conn, proj.id, type="decision", title="foxtrot", body="")  # 1
    records.add(conn, proj.id, type="decision", title="golf hotel india", body="juliet kilo lima")  # 6
    assert search.average_length(conn) == pytest.approx(4.0)
    records.add(conn, proj.id, type="decision", title="long", body=" ".join(["word"] * 399))  # 400: 2-byte varints
    assert search.average_length(conn) == pytest.approx((12 + 400) / 4)
    for i in range(130):  # more than 127 rows: the row count is a 2-byte varint too
        records.add(conn, proj.id, type="discovery", title=f"note {i}", body="")
    assert search.average_length(conn) == pytest.approx((12 + 400 + 130 * 2) / 134)


def test_a_hyphenated_word_is_also_searched_joined_once_and_never_as_a_stop_word():
    assert search.terms("de-stress") == ["de", "stress", "destress"]
    assert search.terms("destress de-stress") == ["destress", "de", "stress"], "already a word of the prompt"
    assert search.terms("in-to") == [], '"into" is a stop word, like "in" and "to"'


@pytest.mark.parametrize("prompt", ["awesome", "fine!", "sgtm", "alright, makes sense"])
def test_one_to_six_words_that_only_acknowledge_are_trivial(prompt):
    assert search.is_trivial(prompt)


def test_splits_keep_the_first_of_equally_held_splits_and_parts_of_two_letters(conn, proj):
    records.add(conn, proj.id, type="discovery", title="ab cdef", body="")
    records.add(conn, proj.id, type="discovery", title="abc def", body="")
    records.add(conn, proj.id, type="discovery", title="The sign up form, and re do", body="")
    assert search.splits(conn, {"abcdef": 0}) == {"abcdef": (("ab", "cdef"), 1)}, "a tie: the shorter first part"
    assert search.splits(conn, {"signup": 0}) == {"signup": (("sign", "up"), 1)}
    assert search.splits(conn, {"redo": 0}) == {}, "4 letters, though the index has re do"
    assert search.splits(conn, {"nowhereelse": 0}) == {}, "no split in the index"
    assert search.splits(conn, {"redo": 0, "xray": 0, "signup": 0}) == {"signup": (("sign", "up"), 1)}, \
        "words that are not tried do not end the search"


# counts as ``document_counts`` gives them: the rule reads the numbers it is given, whatever the store holds.
@pytest.mark.parametrize(("counts", "total", "kept"), [
    # up to 2,000 records is never too common, while 20% of the store is less
    ({"alpha": 2000, "beta": 2001, "gamma": 5, "delta": 7, "echo": 0}, 5000, ["alpha", "gamma", "delta"]),
    # in a store of 20,000, up to 20% (4,000) is kept
    ({"alpha": 4000, "beta": 4001, "gamma": 5, "delta": 7, "echo": 0}, 20_000, ["alpha", "gamma", "delta"]),
    # two words left are enough
    ({"alpha": 3000, "beta": 2500, "gamma": 5, "delta": 7, "echo": 0}, 5000, ["gamma", "delta"]),
    # one left: the two rarest words the store holds are searched
    ({"alpha": 3000, "beta": 2500, "gamma": 5, "delta": 0, "echo": 0}, 5000, ["beta", "gamma"]),
    # none left: the same
    ({"alpha": 3000, "beta": 2500, "gamma": 2600, "delta": 0, "echo": 0}, 5000, ["beta", "gamma"]),
])
def test_words_in_more_than_2000_records_and_20_percent_of_the_store_are_not_searched(conn, counts, total, kept):
    assert search.informative(conn, list(counts), counts, total) == kept


def test_without_a_total_the_counts_are_looked_up_again(conn, proj):
    records.add(conn, proj.id, type="discovery", title="alpha note", body="")
    assert search.informative(conn, ["alpha", "zulu"], {"zulu": 9}, None) == ["alpha"]
    assert search.informative(conn, ["alpha", "zulu"], None, 10) == ["alpha"]


def _averages(conn, block: bytes | None) -> float:
    """``average_length`` of FTS5's averages record set to ``block`` (None: the record missing)."""
    if block is None:
        conn.execute("DELETE FROM records_fts_data WHERE id = 1")
    else:
        conn.execute("UPDATE records_fts_data SET block = ? WHERE id = 1", (block,))
    return search.average_length(conn)


def test_the_mean_record_length_of_one_record_none_left_and_an_unreadable_total(conn, proj):
    only = records.add(conn, proj.id, type="decision", title="alpha bravo", body="charlie")
    assert search.average_length(conn) == 3.0, "one record of 3 words"
    records.revise(conn, only["id"], stamp=clock.now(), project_id=proj.id, title="!!!", body="alpha bravo")
    assert search.average_length(conn) == 2.0, "a title without a word"
    records.revise(conn, only["id"], stamp=clock.now(), project_id=proj.id, title="alpha bravo", body="")
    assert search.average_length(conn) == 2.0, "no body"
    conn.execute("DELETE FROM records WHERE id = ?", (only["id"],))
    assert search.average_length(conn) == 1.0, "no record left: no division by zero"
    # SQLite varints of 1 to 9 bytes: the 9th byte carries 8 bits. 2**56 + 7 = 0x80 0xC0 0x80 × 6, then 0x07.
    nine = bytes([0x80, 0xC0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x07])
    assert _averages(conn, b"\x02" + nine + b"\x03\x00") == (2**56 + 7 + 3) / 2
    for bad in (b"\x02\x05", b"\x02\x05\x85"):  # one column only; a varint cut short: not what FTS5 wrote
        with pytest.raises(sqlite3.DatabaseError):
            _averages(conn, bad)
    assert _averages(conn, b"") == 1.0
    assert _averages(conn, None) == 1.0


NOW = "2026-06-01T00:00:00Z"
OTHER = "0ther0project000"


def test_a_hits_score_counts_age_from_valid_from_uses_and_days_since_the_last_use(conn, proj, monkeypatch):
    """``scoring.final_score`` of: the age since the fact became true (not since it was written down), its uses
    (injections plus restatements) and the days since its last use (since it was written, if never used)."""
    monkeypatch.setenv("AGENTCTX_NOW", NOW)
    day = "2026-05-31T00:00:00Z"

    def add(title, rtype="decision", **kw):
        return records.add(conn, proj.id, type=rtype, title=f"Ledger outbox {title}", body="", **kw)["id"]

    fresh, restated, used, both = add("fresh"), add("restated"), add("used"), add("both ways")
    records.reinforce(conn, restated, project_id=proj.id, times=3)
    records.reinforce(conn, both, project_id=proj.id, times=2)
    for _ in range(3):
        records.touch(conn, [used, both], project_id=proj.id)
    old_fact = add("old fact", "discovery", valid_from="2025-06-01T00:00:00Z", recorded_at=day)
    used_lately, used_long_ago = add("used lately", recorded_at="2026-01-01T00:00:00Z"), \
        add("used long ago", recorded_at="2026-01-01T00:00:00Z")
    records.touch(conn, [used_lately], day, project_id=proj.id)
    records.touch(conn, [used_long_ago], "2026-01-02T00:00:00Z", project_id=proj.id)
    conn.commit()
    # (type, days since valid_from, uses, days since the last use)
    expected = {fresh: ("decision", 0, 0, 0), restated: ("decision", 0, 3, 0), used: ("decision", 0, 3, 0),
                both: ("decision", 0, 5, 0), old_fact: ("discovery", 365, 0, 1),
                used_lately: ("decision", 151, 1, 1), used_long_ago: ("decision", 151, 1, 150)}
    hits = search.search(conn, proj.id, "ledger outbox", limit=20)
    assert {h.record["id"] for h in hits} == set(expected)
    for h in hits:
        rtype, age, uses, since = expected[h.record["id"]]
        assert h.score == pytest.approx(scoring.final_score(h.relevance, rtype, age, "explicit", uses, since)), \
            h.record["title"]


def test_a_candidate_the_second_stage_finds_nothing_in_keeps_a_sliver_of_its_bm25(conn):
    """``rescore``: relevance 0 becomes 1e-6 × BM25 (given as a positive number, higher is better), below any
    candidate the second stage scores; the derived columns are dropped from the record."""
    query = relevance.Query({"ledger": 1, "zebra": 1}, 10)
    nothing = {"id": "r1", "title": "Outbox relay", "body": "", "terms": "", "context": ""}
    something = {"id": "r2", "title": "Ledger", "body": "", "terms": "", "context": ""}
    (rec, rel, cov, matched), scored = search.rescore(conn, query, [(nothing, 2.5), (something, 0.5)])
    assert (rec, cov, matched) == ({"id": "r1", "title": "Outbox relay", "body": ""}, 0.0, 0)
    assert rel == pytest.approx(2.5e-6)
    assert scored[1] > 0.1 and scored[2] == 0.5 and scored[3] == 1


def test_fts_candidates_are_ranked_by_their_bm25_when_the_second_stage_finds_nothing(conn, proj):
    """The sliver keeps BM25's order: the record where the matched word weighs more comes first."""
    strong = records.add(conn, proj.id, type="discovery", title="Ledger", body="ledger ledger")
    weak = records.add(conn, proj.id, type="discovery", title="Notes", body="ledger " + "filler " * 40)
    query = relevance.Query({"zebra": 1}, 10)  # nothing the records hold
    hits = search._fts(conn, proj.id, search.any_of(["ledger"]), query, [], False, clock.now())
    assert [h.record["id"] for h in hits] == [strong["id"], weak["id"]]
    assert 0 < hits[1].relevance < hits[0].relevance < 1e-4


def _without_fts(conn) -> None:
    for trigger in ("records_fts_ai", "records_fts_ad", "records_fts_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE records_fts")


def test_without_fts5_the_six_longest_words_are_scanned_and_a_title_word_counts_twice(conn, proj):
    """The LIKE rung: relevance 2 per prompt word in the title, 1 per word only in the body; coverage the share of
    the scanned words found (as substrings)."""
    near = records.add(conn, proj.id, type="discovery", title="Reconciler", body="the outbox relay")
    plural = records.add(conn, proj.id, type="discovery", title="Notes", body="about the ledgers")
    single = records.add(conn, proj.id, type="discovery", title="Notes", body="about the ledger")
    records.add(conn, OTHER, type="discovery", title="Reconciler relay", body="another project's")
    _without_fts(conn)
    # longest first: reconciler, idempotent, outboxes, ledgers, ledger, relay; "box" (the seventh) is not scanned
    hits = {h.record["id"]: h for h in search.search(conn, proj.id,
                                                     "reconciler idempotent outboxes ledgers ledger relay box")}
    assert all(h.rung == "like" for h in hits.values()) and set(hits) == {near["id"], plural["id"], single["id"]}
    assert (hits[near["id"]].relevance, hits[near["id"]].coverage) == (2.0 + 1.0, 2 / 6), "reconciler, relay"
    assert (hits[plural["id"]].relevance, hits[plural["id"]].coverage) == (2.0, 2 / 6), "ledgers, ledger"
    assert (hits[single["id"]].relevance, hits[single["id"]].coverage) == (1.0, 1 / 6), "ledger"


def test_the_last_rung_gives_pinned_records_as_covering_the_prompt_without_counting_words(conn, proj):
    """With no FTS5 index and a LIKE scan SQLite refuses (its pattern-length limit), the pinned records of the
    project come back, each with relevance 1.0 and coverage 1.0 (that rung cannot tell) and no matched word."""
    pinned = records.add(conn, proj.id, type="decision", title="Ledger outbox", body="relay", pinned=True)
    records.add(conn, proj.id, type="decision", title="Ledger outbox relay", body="not pinned")
    records.add(conn, OTHER, type="decision", title="Ledger outbox", body="another project's", pinned=True)
    _without_fts(conn)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 4)
    hits = search.search(conn, proj.id, "ledger outbox")
    assert [(h.record["id"], h.rung, h.relevance, h.coverage, h.matched) for h in hits] == [
        (pinned["id"], "pinned", 1.0, 1.0, 0)]


def test_a_search_returns_10_records_unless_told_and_never_more_than_40_candidates(conn, proj):
    for i in range(45):
        records.add(conn, proj.id, type="discovery", title=f"Ledger outbox note {i}", body="")
    assert len(search.search(conn, proj.id, "ledger outbox")) == 10
    assert len(search.search(conn, proj.id, "ledger outbox", limit=100)) == 40


def test_a_relative_floor_of_one_keeps_the_best_hits_and_pinned_ones(conn, proj):
    best = [records.add(conn, proj.id, type="decision", title=f"Ledger outbox relay {n}", body="")["id"]
            for n in ("one", "two")]
    records.add(conn, proj.id, type="decision", title="Ledger notes", body="")
    pinned = records.add(conn, proj.id, type="decision", title="Outbox", body="a long body " * 20, pinned=True)
    hits = search.search(conn, proj.id, "ledger outbox relay", relative_floor=1.0)
    assert [h.record["id"] for h in hits] == [pinned["id"], *best]


def test_a_word_no_record_holds_finds_the_records_with_its_two_parts(conn, proj):
    both = records.add(conn, proj.id, type="discovery", title="Why the de stress job runs at night", body="")
    records.add(conn, proj.id, type="discovery", title="Stress test results", body="")
    hits = search.search(conn, proj.id, "destress")
    assert [h.record["id"] for h in hits] == [both["id"]]
    assert hits[0].matched == 1 and hits[0].coverage == 1.0


def test_session_neighbours_are_the_records_just_before_and_after_in_the_same_session_and_project(conn, proj):
    def add(title, session_id, project_id=proj.id):
        return records.add(conn, project_id, type="discovery", title=title, body="", session_id=session_id)["id"]

    first, middle = add("first", "s1"), add("middle", "s1")
    add("elsewhere", "s2")
    add("another project's", "s1", OTHER)
    last, alone = add("last", "s1"), add("alone", None)
    assert search.session_neighbours(conn, [first, middle, last, alone]) == {
        first: [middle], middle: [first, last], last: [middle]}
    assert search.session_neighbours(conn, []) == {}


def test_current_by_ids_reads_this_projects_current_records_and_global_ones_of_the_types_asked(conn, proj):
    def add(title, rtype="discovery", project_id=proj.id, **kw):
        return records.add(conn, project_id, type=rtype, title=title, body="", **kw)["id"]

    mine, decision = add("mine"), add("a decision", "decision")
    shared = add("a shared preference", "preference", OTHER, scope="global")
    theirs = add("another project's", project_id=OTHER)
    old = add("old")
    records.supersede(conn, proj.id, old, title="new", body="")
    every = [mine, decision, shared, theirs, old]
    assert set(search.current_by_ids(conn, proj.id, every)) == {mine, decision, shared}
    assert set(search.current_by_ids(conn, proj.id, every, ["decision", "preference"])) == {decision, shared}
    assert search.current_by_ids(conn, proj.id, [mine])[mine]["title"] == "mine"
    assert search.current_by_ids(conn, proj.id, []) == {}


def test_a_superseded_candidate_stands_for_its_current_successor_with_the_better_of_both_scores(conn, proj):
    """A prompt worded partly like the old fact: the successor is found once, with the higher relevance,
    coverage and matched-word count of the two (here its own are higher: it answers more of the prompt)."""
    old = records.add(conn, proj.id, type="decision", title="Ledger services talk REST", body="")
    new = records.supersede(conn, proj.id, old["id"], title="Ledger services talk gRPC over HTTP2 with deadlines",
                            body="gRPC deadlines on every call.")
    prompt = "rest grpc http2 deadlines"
    apart = {h.record["id"]: h for h in search.search(conn, proj.id, prompt, include_superseded=True)}
    assert set(apart) == {old["id"], new["id"]}
    (hit,) = search.search(conn, proj.id, prompt)
    own, was = apart[new["id"]], apart[old["id"]]
    assert hit.record["id"] == new["id"] and own.matched == 3 > was.matched == 1
    assert (hit.relevance, hit.coverage, hit.matched) == (max(own.relevance, was.relevance),
                                                          max(own.coverage, was.coverage), 3)


def test_a_successor_of_another_type_than_asked_is_left_out_and_the_other_candidates_stay(conn, proj):
    old = records.add(conn, proj.id, type="discovery", title="Ledger outbox ledger outbox", body="")
    records.add(conn, proj.id, type="decision", title="Outbox relay decided", body="", supersedes=old["id"])
    other = records.add(conn, proj.id, type="discovery", title="Ledger outbox notes", body="and more words")
    assert [h.record["id"] for h in search.search(conn, proj.id, "ledger outbox", types=["discovery"])] == [
        other["id"]]


def test_a_fact_whose_replacement_was_rolled_up_is_not_presented(conn, proj):
    old = records.add(conn, proj.id, type="decision", title="Services talk REST", body="")
    new = records.supersede(conn, proj.id, old["id"], title="Services talk gRPC", body="")
    conn.execute("UPDATE records SET archived_at = ? WHERE id = ?", (clock.now(), new["id"]))
    assert search.search(conn, proj.id, "services rest") == []
    assert search.successors(conn, proj.id, [old["id"]]) == {}


def test_rank_among_orders_the_given_records_that_match_best_bm25_first(conn, proj):
    def add(title, body=""):
        return records.add(conn, proj.id, type="discovery", title=title, body=body)["id"]

    weak, strong, other = add("Notes", "ledger " + "filler " * 30), add("Ledger ledger"), add("Ledger outbox")
    unrelated = add("Kafka topics")
    assert search.rank_among(conn, "ledger", [weak, strong, unrelated], 10) == [strong, weak]
    assert search.rank_among(conn, "ledger", [weak, strong, other], 1) == [strong]
    assert search.rank_among(conn, "ok thanks", [weak, strong], 10) == []


def test_history_searched_on_every_rung_says_which_records_are_superseded(conn, proj):
    """``agentctx search --all`` and ctx_search mark a superseded record from its ``superseded_at``: the FTS5 rung's
    hits carry it as the LIKE rung's do."""
    old = records.add(conn, proj.id, type="decision", title="Services talk REST", body="ledger service calls")
    new = records.supersede(conn, proj.id, old["id"], title="Services talk gRPC", body="ledger service calls")
    for rung in ("fts", "like"):
        if rung == "like":
            _without_fts(conn)
        hits = search.search(conn, proj.id, "ledger service", include_superseded=True)
        assert {h.rung for h in hits} == {rung}
        state = {h.record["id"]: (h.record["superseded_at"], h.record["superseded_by"]) for h in hits}
        assert state[new["id"]] == (None, None) and state[old["id"]][0] and state[old["id"]][1] == new["id"], rung
        assert search.search(conn, proj.id, "ledger service")[0].record["superseded_at"] is None


def test_a_successor_the_second_stage_finds_nothing_in_keeps_its_predecessors_relevance(conn, proj):
    """When neither the superseded candidate nor its successor holds a word of the prompt for the second stage,
    the successor takes the old record's sliver (its own BM25 stand-in is 0): nothing is made up."""
    for i in range(3):
        records.add(conn, proj.id, type="discovery", title=f"Ledger note {i}", body="ledger ledger ledger")
    old = records.add(conn, proj.id, type="decision", title="Notes", body="ledger " + "filler " * 60)
    new = records.supersede(conn, proj.id, old["id"], title="Outbox relay", body="")
    query = relevance.Query({"zebra": 1}, 10)  # nothing any record holds

    def sliver(include_superseded: bool, record_id: str) -> float:
        hits = search._fts(conn, proj.id, search.any_of(["ledger"]), query, [], include_superseded, clock.now())
        return next(h.relevance for h in hits if h.record["id"] == record_id)

    was = sliver(True, old["id"])
    assert 0 < was < 1e-6
    assert sliver(False, new["id"]) == was


def test_a_relative_floor_keeps_the_hits_at_that_share_of_the_best_relevance_or_more(conn, proj):
    for i in range(20):
        records.add(conn, proj.id, type="discovery", title=f"Kafka topic {i}", body="partitions and retention")
    strong = records.add(conn, proj.id, type="decision", title="Redis cache eviction", body="allkeys-lru")
    weak = records.add(conn, proj.id, type="discovery", title="Notes", body="eviction " + "filler " * 40)
    every = {h.record["id"]: h.relevance for h in search.search(conn, proj.id, "redis cache eviction")}
    best = every[strong["id"]]
    assert set(every) == {strong["id"], weak["id"]} and best > 2 and every[weak["id"]] < 0.5 * best
    assert [h.record["id"] for h in search.search(conn, proj.id, "redis cache eviction", relative_floor=0.5)] == [
        strong["id"]]
