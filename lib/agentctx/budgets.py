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


_BROAD: list[re.Pattern] = []  # (list items, breadth words, asks): compiled on first use, UserPromptSubmit only


def _broad_patterns() -> list[re.Pattern]:
    if not _BROAD:
        _BROAD.extend([
            re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+\S", re.MULTILINE),
            re.compile(
                r"\b(?:overview|summar(?:y|i[sz]e)|recap|everything|catch me up|walk me through|remind me|"
                r"what do we know|all (?:the|our|of|we)|list (?:all|every|the)|both|compare|comparison|"
                r"differences? between|each of)\b",
                re.IGNORECASE,
            ),
            re.compile(r"(?:^|[.;!?]\s+|\band\s+|\balso\s+)(?:how|what|where|why|which|when|who|can|should|do|does|"
                       r"is|are)\b", re.IGNORECASE),
        ])
    return _BROAD


def is_broad(prompt: str) -> bool:
    """A prompt asking for several things: two or more questions, a list of items, two asks joined
    ("how do we X and where is Y"), or words asking for breadth ("overview", "all the", "both")."""
    text = prompt if len(prompt) <= 4000 else prompt[:2000] + "\n" + prompt[-2000:]
    list_item, breadth, ask = _broad_patterns()
    return (text.count("?") >= 2 or len(list_item.findall(text)) >= 2 or len(ask.findall(text)) >= 2
            or bool(breadth.search(text)))


def turn_depth(prompt: str) -> tuple[int, int, bool]:
    """(most records, body characters each, broad?) to inject for this prompt."""
    if is_broad(prompt):
        return TURN_RECORDS_BROAD, TURN_BODY_CHARS_BROAD, True
    return TURN_RECORDS, TURN_BODY_CHARS, False


def search_depth(query: str) -> int:
    """How many results ctx_search lists by default for this query."""
    return SEARCH_RESULTS_BROAD if is_broad(query) else SEARCH_RESULTS
