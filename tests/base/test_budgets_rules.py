"""The budget rules at their limits (issue 15): the token estimator, the 9,000-character cap of every injected
text, whole blocks kept from the top, a field clipped to its length and a text to its tokens."""

from __future__ import annotations

import pytest

from agentctx import budgets, project, render
from agentctx.injection import briefs, digest
from agentctx.store import records
from tests.conftest import make_repo

# ---------------------------------------------------------------- the estimator


@pytest.mark.parametrize(("text", "tokens"), [
    ("abcd" * 375, 375),  # 1,500 ASCII characters are 375 tokens
    ("abcd" * 375 + "e", 376),  # one more starts the next token
    ("数" * 375, 375),  # every other character is a token of its own
    ("abc数", 2),  # 3 ASCII characters round up to 1, plus 1
])
def test_four_ascii_characters_or_one_other_character_make_a_token(text, tokens):
    assert budgets.estimate_tokens(text) == tokens


# ---------------------------------------------------------------- fit_blocks


def test_injected_text_stays_below_9000_characters_by_default():
    """Claude Code moves a hook's output over 10,000 characters to a file: every injected text is kept below
    9,000 characters, joined with its newlines, whatever its token cap."""
    assert budgets.fit_blocks(["x" * 8999], 10**6) == (["x" * 8999], 2250)
    assert budgets.fit_blocks(["x" * 9000], 10**6) == ([], 0)
    two = ["x" * 4499, "y" * 4499]  # 4,499 + the newline + 4,499 = 8,999 characters
    assert budgets.fit_blocks(two, 10**6)[0] == two
    assert budgets.fit_blocks(["x" * 4499, "y" * 4500], 10**6)[0] == ["x" * 4499], "9,000 joined: the second goes"
    three = ["x" * 2999, "y" * 2999, "z" * 2999]  # 2 newlines: 8,999 characters
    assert budgets.fit_blocks(three, 10**6)[0] == three
    assert budgets.fit_blocks([*three[:2], "z" * 3000], 10**6)[0] == three[:2]


def test_blocks_are_kept_while_their_tokens_fit_exactly():
    """Each block after the first costs its own tokens plus its newline's; the cap is inclusive."""
    blocks = ["abcd", "efg", "hij"]  # 1 + ("\nefg": 1) + ("\nhij": 1) = 3 tokens
    assert budgets.fit_blocks(blocks, 3) == (blocks, 3)
    assert budgets.fit_blocks(blocks, 2) == (blocks[:2], 2)
    assert budgets.fit_blocks(["abcd", "efgh", "ijkl"], 5) == (["abcd", "efgh", "ijkl"], 4), "2 + 2 + 1 fit in 5"
    assert budgets.fit_blocks(["abcd", "efgh", "ijkl"], 4) == (["abcd", "efgh"], 3)


def test_a_block_that_does_not_fit_ends_the_list():
    """The text is cut at the first block that does not fit; a smaller block after it is not taken instead."""
    assert budgets.fit_blocks(["a", "b" * 40, "c"], 5) == (["a"], 1)
    assert budgets.fit_blocks(["a", "b" * 40, "c"], 5, max_chars=10**6) == (["a"], 1)
    assert budgets.fit_blocks(["a", "b" * 9000, "c"], 10**6) == (["a"], 1)


def test_blocks_can_be_joined_by_another_separator():
    """The joiner counts like the newline: a blank line between blocks is 2 characters each."""
    blocks = ["x" * 4, "y" * 4, "z" * 4]  # 4 + 2 + 4 + 2 + 4 = 16 characters joined
    assert budgets.fit_blocks(blocks, 100, max_chars=17, joiner="\n\n") == (blocks, 4)
    assert budgets.fit_blocks(blocks, 100, max_chars=16, joiner="\n\n") == (blocks[:2], 3)


# ---------------------------------------------------------------- clip and clip_tokens


def test_a_field_is_clipped_to_exactly_its_length_with_the_marker():
    assert budgets.clip("a" * 1200, 1200) == "a" * 1200
    assert budgets.clip("a" * 1201, 1200) == "a" * 1198 + " …"
    assert len(budgets.clip("a" * 1201, 1200)) == 1200
    assert budgets.clip("abcdef", 2) == " …" and budgets.clip("abcdef", 3) == "a …"
    assert budgets.clip("abcdef", 5, marker="...") == "ab..."


def test_a_text_clipped_to_no_room_is_the_marker_alone():
    """With the marker's own token the whole cap, no character of the text is kept."""
    assert budgets.clip_tokens("abcdef", 1) == "…"
    assert budgets.clip_tokens("abcdef", 0) == "…"
    assert budgets.clip_tokens("数据库", 1) == "…"
    assert budgets.clip_tokens("abcdefghi", 2) == "abcd…"


def _longest_prefix(text: str, room: int) -> str:
    """The longest prefix of ``text`` whose estimate is within ``room`` (a plain scan, for comparison)."""
    n = 0
    while n < len(text) and budgets.estimate_tokens(text[: n + 1]) <= room:
        n += 1
    return text[:n]


@pytest.mark.parametrize("text", [
    "abcdefghijklmnopqrstuvwxyz0123456789" * 2,
    "数据库迁移需要锁表" * 4,
    "ab数cd据ef库gh迁ij移kl需mn要op锁qr表st" * 2,
    "🚀x🚀xx🚀xxx🚀xxxx🚀xxxxx🚀" * 2,
])
def test_a_text_is_clipped_to_the_longest_prefix_within_its_tokens(text):
    """``clip_tokens``: the whole text when it fits (at the cap exactly too), else the longest prefix that fits
    in the cap less the marker's token, then the marker: for every cap up to the whole text's estimate."""
    whole = budgets.estimate_tokens(text)
    for cap in range(whole + 2):
        out = budgets.clip_tokens(text, cap)
        if cap >= whole:
            assert out == text, cap
        else:
            assert out == _longest_prefix(text, cap - 1) + "…", cap
            assert budgets.estimate_tokens(out) <= max(cap, 1)


def test_a_clipped_text_ends_without_the_spaces_before_the_marker():
    assert budgets.clip_tokens("abcd    efgh ijkl", 3) == "abcd…"
    assert budgets.clip("abc   defghij", 8) == "abc …"


# ---------------------------------------------------------------- SubagentStart: 800 tokens


def _summed(blocks: list[str]) -> int:
    """Tokens of blocks as the cap counts them: each block with the newline before it, estimated on its own."""
    return sum(budgets.estimate_tokens(("\n" if i else "") + b) for i, b in enumerate(blocks))


def _brief_with_handover(conn, tmp_path, cjk: int):
    """A project of its own with 12 decisions and a handover of ``cjk`` ideographs (one token each): the
    general-purpose brief uncapped and as SubagentStart gives it."""
    repo = make_repo(tmp_path / f"p{cjk}", remote=f"git@github.com:acme/p{cjk}.git")
    proj = project.detect(str(repo))
    for i in range(12):
        records.add(conn, proj.id, type="decision", title=f"Rule {i}: ledger writes go through the outbox",
                    body="The relay replays the outbox idempotently per account; payments only emit intents.")
    records.add(conn, proj.id, type="handover", title="Refund endpoint half done", body="账" * cjk)
    whole = digest.build(conn, proj, sections=["decisions", "handover"], cap=10**6, kind="subagent")
    return whole.text.splitlines()[1:-1], briefs.brief(conn, proj, "general-purpose")


def test_a_subagent_brief_keeps_whole_blocks_while_they_fit_in_exactly_800_tokens(conn, home, tmp_path):
    """README: SubagentStart ≤ 800 tokens, cut from the bottom at a block boundary. Growing the handover one
    token at a time moves the brief across the limit: it keeps every block while they fit in 800 tokens with
    the fence (at 800 exactly too), and not one more."""
    fence = budgets.estimate_tokens(render.fence("subagent", []))
    probe, _ = _brief_with_handover(conn, tmp_path, 1)
    start = 1 + 800 - fence - _summed(probe)  # the handover size at which the whole brief counts 800 tokens
    assert start > 10
    for cjk in range(start - 2, start + 3):
        blocks, brief = _brief_with_handover(conn, tmp_path, cjk)
        fits = max(k for k in range(len(blocks) + 1) if fence + _summed(blocks[:k]) <= 800)
        assert brief.text.splitlines()[1:-1] == blocks[:fits], cjk
        assert fits == (len(blocks) if cjk <= start else len(blocks) - 1), cjk
        assert brief.tokens <= 800
