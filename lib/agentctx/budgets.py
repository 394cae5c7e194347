"""Every injection budget, and the one token estimator used to enforce them.

Token estimator (documented in docs/guide.md and ADR-007): each ASCII character counts 1/4 token and
every other character counts one whole token, rounded up. It over-counts English prose
slightly (Claude's tokenizer averages ~4.2 chars/token) and is safe for CJK and emoji,
so a budget measured with it is never exceeded in practice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SESSION_START_TOKENS = 1500
TURN_TOKENS = 2000
# Per-prompt depth (intent-aware, ``turn_depth``): a narrow prompt gets at most TURN_RECORDS records with
# bodies up to TURN_BODY_CHARS; a broad or multi-part one up to TURN_RECORDS_BROAD shorter entries. Both
# stay within TURN_TOKENS.
TURN_RECORDS = 3
TURN_BODY_CHARS = 1200
TURN_RECORDS_BROAD = 8
TURN_BODY_CHARS_BROAD = 280
# ctx_search's default depth: results listed for a narrow query, for a broad one (each ≤ 60 tokens).
SEARCH_RESULTS = 8
SEARCH_RESULTS_BROAD = 15
SUBAGENT_TOKENS = 800  # SubagentStart: the brief a Task subagent starts with (sized by its type, below this cap)
# Claude Code moves any hook output string over 10,000 characters to a file and shows a preview.
MAX_INJECTED_CHARS = 9000


def estimate_tokens(text: str) -> int:
    """Estimate Claude tokens for ``text`` (see module docstring)."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    return -(-ascii_chars // 4) + other


def fit_blocks(
    blocks: Iterable[str], max_tokens: int, *, max_chars: int = MAX_INJECTED_CHARS, joiner: str = "\n"
) -> tuple[list[str], int]:
    """Keep blocks from the top while the joined text stays within both caps.

    Blocks are whole records or headings; a block that does not fit ends the list, so the
    text is cut from the bottom at a block boundary and never mid-record.
    Returns the kept blocks and their estimated token count.
    """
    kept: list[str] = []
    chars = tokens = 0
    for block in blocks:
        sep = joiner if kept else ""
        # Summing per-block estimates can only over-count the joined text: safe for a cap.
        more_tokens = estimate_tokens(sep + block)
        if chars + len(sep) + len(block) >= max_chars or tokens + more_tokens > max_tokens:
            break
        kept.append(block)
        chars += len(sep) + len(block)
        tokens += more_tokens
    return kept, estimate_tokens(joiner.join(kept))


def clip(text: str, max_chars: int, marker: str = " …") -> str:
    """Shorten one field to ``max_chars`` (used for a record's body, never across records)."""
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - len(marker))].rstrip() + marker


def clip_tokens(text: str, max_tokens: int, marker: str = "…") -> str:
    """Shorten ``text`` so ``estimate_tokens`` of the result is at most ``max_tokens`` (the longest
    prefix that fits, plus ``marker``)."""
    if estimate_tokens(text) <= max_tokens:
        return text
    room = max_tokens - estimate_tokens(marker)  # below 0 like 0: no character fits
    lo, hi = 0, len(text)  # the longest prefix within ``room``: estimate_tokens grows with the prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + marker


# What makes a prompt broad, as patterns compiled only for a prompt that could match them (each is ~0.1-0.3 ms
# to compile, and most prompts are one plain question), with the words each needs to match at all.
_LIST_ITEM = r"^\s*(?:[-*•]|\d{1,2}[.)])\s+\S"  # two of them: a list of items (needs a second line)
_BREADTH = (r"\b(?:overview|summar(?:y|i[sz]e)|recap|everything|catch me up|walk me through|remind me|"
            r"what do we know|all (?:the|our|of|we)|list (?:all|every|the)|both|compare|comparison|"
            r"differences? between|each of)\b")
_BREADTH_NEEDS = ("overview", "summar", "recap", "everything", "catch me up", "walk me through", "remind me",
                  "what do we know", "all ", "list ", "both", "compar", "difference", "each of")
_ASK = (r"(?:^|[.;!?]\s+|\band\s+|\balso\s+)(?:how|what|where|why|which|when|who|can|should|do|does|is|are)\b")


def _then_space(text: str, marks: tuple[str, ...]) -> bool:
    """Whether one of ``marks`` is followed by whitespace somewhere in ``text``."""
    for mark in marks:
        at = text.find(mark)
        while at >= 0:
            nxt = at + len(mark)
            if nxt < len(text) and text[nxt].isspace():
                return True
            at = text.find(mark, at + 1)
    return False


def is_broad(prompt: str) -> bool:
    """A prompt asking for several things: two or more questions, a list of items, two asks joined
    ("how do we X and where is Y"), or words asking for breadth ("overview", "all the", "both")."""
    text = prompt if len(prompt) <= 4000 else prompt[:2000] + "\n" + prompt[-2000:]
    if text.count("?") >= 2:
        return True
    if "\n" in text and len(re.compile(_LIST_ITEM, re.MULTILINE).findall(text)) >= 2:
        return True
    # The word checks below are exact for ASCII text (its case is the patterns' case); other text is
    # matched by the patterns alone.
    plain = text.isascii()
    folded = text.lower() if plain else ""
    # a second ask needs a mark, "and" or "also" followed by whitespace (only the first can open the text)
    if (not plain or _then_space(text, (".", ";", "!", "?")) or _then_space(folded, ("and", "also"))) and \
            len(re.compile(_ASK, re.IGNORECASE).findall(text)) >= 2:
        return True
    return ((not plain or any(w in folded for w in _BREADTH_NEEDS))
            and bool(re.compile(_BREADTH, re.IGNORECASE).search(text)))


def turn_depth(prompt: str) -> tuple[int, int, bool]:
    """(most records, body characters each, broad?) to inject for this prompt."""
    if is_broad(prompt):
        return TURN_RECORDS_BROAD, TURN_BODY_CHARS_BROAD, True
    return TURN_RECORDS, TURN_BODY_CHARS, False


def search_depth(query: str) -> int:
    """How many results ctx_search lists by default for this query."""
    return SEARCH_RESULTS_BROAD if is_broad(query) else SEARCH_RESULTS
