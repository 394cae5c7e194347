"""The hot-path search's limits and helpers at their boundaries (``store.search``): what counts as a prompt
worth searching, which words of it are searched (caps, head and tail of a long paste), compound words looked
for as two, and the mean record length BM25 is normalised with, read from FTS5's own totals."""

from __future__ import annotations

import pytest

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
