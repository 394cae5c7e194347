"""Every injection budget, and the one token estimator used to enforce them.

Token estimator (documented in the README): each ASCII character counts 1/4 token and
every other character counts one whole token, rounded up. It over-counts English prose
slightly (Claude's tokenizer averages ~4.2 chars/token) and is safe for CJK and emoji,
so a budget measured with it is never exceeded in practice.
"""

from __future__ import annotations

from collections.abc import Iterable

SESSION_START_TOKENS = 1500
TURN_TOKENS = 2000
TURN_RECORDS = 3
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
    room = max(0, max_tokens - estimate_tokens(marker))
    lo, hi = 0, len(text)  # the longest prefix within ``room``: estimate_tokens grows with the prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + marker
