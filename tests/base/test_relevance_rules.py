"""The second ranking stage reads every record word that stems like a prompt word (``relevance``), including
those whose stem does not start with the word's first three letters."""

from __future__ import annotations

import pytest

from agentctx import relevance


def _score(prompt_words: list[str], title: str, body: str = "") -> tuple[float, float, int]:
    query = relevance.Query({w: 1 for w in prompt_words}, 100)
    return relevance.score(query, {"title": title, "body": body}, avg_len=8.0)


@pytest.mark.parametrize(("prompt", "title"), [
    (["key"], "API key rotation every 90 days"),  # key -> kei: the third letter changes
    (["keys"], "API key rotation every 90 days"),
    (["key"], "Signing keys live in the vault"),
    (["day"], "Backups run every day at noon"),  # day -> dai
    (["days"], "Backups kept for 30 day windows"),
    (["id"], "Record ids are ULIDs"),  # ids -> id: a stem of two letters
    (["ids"], "Every row has an id column"),
])
def test_a_word_whose_stem_changes_its_third_letter_or_has_two_is_still_found(prompt, title):
    relevance_, coverage, matched = _score(prompt, title)
    assert matched == 1 and coverage == 1.0 and relevance_ > 0.5, (prompt, title)


def test_api_key_is_covered_whole_by_a_record_about_api_keys():
    _, coverage, matched = _score(["api", "key"], "API key rotation every 90 days")
    assert (coverage, matched) == (1.0, 2)


def test_words_that_only_share_letters_do_not_count():
    assert _score(["key"], "Keyboard shortcuts for the editor")[2] == 0
    assert _score(["id"], "An idea for the identity page")[2] == 0
