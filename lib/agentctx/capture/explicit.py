"""Deterministic capture of what the USER states explicitly (no model, no key needed).

Only the developer's own messages are read (never Claude's text, tool output or compaction
summaries). A sentence becomes a record when it says, in so many words, that something was
decided or is a rule from now on:

* decision: "we decided ...", "let's go with ...", "we'll go with ...", "use X instead of Y"
* convention: "from now on ..."
* preference: "always ...", "never ...", "don't ever ...", "we/I always|never ..."

Questions and conditionals ("should we always ...?", "if we decided ...") are skipped. Records
carry source ``user_statement``, confidence ``explicit``, a body quoting the statement, and a key
made from a hash of the normalized statement, so saying it again never makes a second record.
"""

from __future__ import annotations

import hashlib
import re

from agentctx.redact import redact

MAX_STATEMENT = 280

_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("convention", re.compile(r"\bfrom now on\b|\bgoing forward\b|\bfrom here on\b", re.I)),
    ("decision", re.compile(
        r"\b(?:we(?:'ve| have)?\s+(?:just\s+)?decided|(?:we|i)\s+(?:chose|picked|settled on)|"
        r"let'?s\s+(?:go|stick)\s+with|(?:we|i)(?:'ll| will)\s+(?:go|stick)\s+with|"
        r"we(?:'re| are)\s+going\s+with|the decision is)\b", re.I)),
    ("decision", re.compile(r"\buse\s+\S.{0,80}?\s+instead\s+of\s+\S", re.I)),
    ("preference", re.compile(
        r"^(?:please\s+|and\s+|also,?\s+|so\s+)?(?:always|never|don'?t\s+ever|do\s+not\s+ever)\b|"
        r"\b(?:we|you)\s+(?:should\s+|must\s+)?(?:always|never)\b|"
        r"\bi\s+(?:always|never)\s+(?:want|use|prefer|write|run|put|keep|like)\b|"
        r"\bdon'?t\s+ever\b|\bdo\s+not\s+ever\b", re.I)),
]
_SKIP = re.compile(r"^(?:if|whether|did|do|does|have|has|should|would|could|can|when|why|how|what)\b", re.I)
_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+")


class Statement:
    """One explicit statement: the record type it maps to and its text."""

    __slots__ = ("type", "text", "key")

    def __init__(self, type: str, text: str):
        self.type, self.text = type, text
        self.key = "stmt." + hashlib.sha256(normalize(text).encode()).hexdigest()[:20]

    def __repr__(self) -> str:
        return f"Statement({self.type}, {self.text!r})"


def normalize(text: str) -> str:
    """Lower-case words only: how two sayings of one statement compare."""
    return " ".join(_WORD.findall(text.lower()))


def sentences(text: str) -> list[str]:
    """The developer's sentences: code blocks and quoted lines (``>``) dropped."""
    text = _CODE_FENCE.sub("\n", text)
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(">")]
    out = []
    for part in _SENTENCE.split("\n".join(lines)):
        part = " ".join(part.split()).strip(" -*•")
        if part:
            out.append(part)
    return out


def classify(sentence: str) -> str | None:
    """The record type a sentence states explicitly, or None."""
    if sentence.endswith("?") or _SKIP.match(sentence) or len(normalize(sentence).split()) < 3:
        return None
    for rtype, pattern in _RULES:
        if pattern.search(sentence):
            return rtype
    return None


def statements(user_texts) -> list[Statement]:
    """Explicit statements in the developer's messages, first occurrence of each, in order."""
    found: dict[str, Statement] = {}
    for text in user_texts:
        for sentence in sentences(redact(text)):
            rtype = classify(sentence)
            if rtype is None:
                continue
            if len(sentence) > MAX_STATEMENT:
                sentence = sentence[: MAX_STATEMENT - 1].rstrip() + "…"
            stmt = Statement(rtype, sentence)
            found.setdefault(stmt.key, stmt)
    return list(found.values())


def from_entries(entries) -> list[Statement]:
    """Statements in transcript entries, reading role ``user`` only."""
    return statements(e.text for e in entries if e.role == "user")


def to_record(stmt: Statement) -> dict:
    """The ``records.add`` arguments for a statement."""
    return {
        "type": stmt.type, "title": stmt.text, "body": f'The developer said: "{stmt.text}"',
        "scope": "project", "confidence": "explicit", "source": "user_statement", "key": stmt.key,
    }
