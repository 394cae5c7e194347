"""The SessionStart digest (ADR-007): stable project context under a hard 1,500-token cap.

Composition, in order: project profile, decisions and conventions in force, the last
handover, the developer profile, and a one-line hint of what else is searchable. Each
section has its own budget; the whole is then capped, cut from the bottom at record
boundaries. A digest precomputed at SessionEnd is used when the store has not changed
since (same generation), otherwise it is built live (a few indexed queries).
"""

from __future__ import annotations

import json
import sqlite3

from agentctx import budgets, fsio, paths, project
from agentctx.injection import render
from agentctx.store import db, records

SECTION_TOKENS = {"profile": 220, "decisions": 560, "handover": 380, "developer": 200}  # + a one-line hint
BODY_CHARS = {"profile": 160, "decisions": 220, "handover": 1400, "developer": 160}


class Digest:
    """Digest text, its token estimate, the records it shows and the store generation it reflects."""

    __slots__ = ("text", "tokens", "record_ids", "generation")

    def __init__(self, text: str, tokens: int, record_ids: list[str] | None = None, generation: int = -1):
        self.text, self.tokens = text, tokens
        self.record_ids = list(record_ids or [])
        self.generation = generation

    def as_dict(self) -> dict:
        return {"text": self.text, "tokens": self.tokens, "record_ids": self.record_ids, "generation": self.generation}


def _section(heading: str, recs: list[dict], budget: int, body_chars: int, show_type: bool = True):
    blocks = [render.record_block(r, body_chars=body_chars, show_type=show_type) for r in recs]
    kept, _ = budgets.fit_blocks([heading, *blocks], budget)
    if len(kept) == 1 and recs:
        # The top record alone is over budget (a long handover, a CJK body): show it with the
        # longest body that fits rather than dropping the section.
        lo, hi = 0, body_chars
        while lo < hi:
            mid = (lo + hi + 1) // 2
            fits = len(budgets.fit_blocks([heading, render.record_block(recs[0], body_chars=mid, show_type=show_type)],
                                          budget)[0]) == 2
            lo, hi = (mid, hi) if fits else (lo, mid - 1)
        kept, _ = budgets.fit_blocks([heading, render.record_block(recs[0], body_chars=lo, show_type=show_type)], budget)
    if len(kept) <= 1:
        return [], []
    return kept, [r["id"] for r in recs[: len(kept) - 1]]


def build(conn: sqlite3.Connection, proj: project.Project, *, lead: list[str] | None = None) -> Digest:
    """Compose the digest for ``proj`` from the store; ``lead`` blocks (the anchor) come first."""
    blocks: list[str] = list(lead or [])
    used: list[str] = []
    plan = [
        ("profile", f"## Project profile: {render.escape(proj.name)}",
         records.active(conn, proj.id, ["profile"], limit=20), False),
        ("decisions", "## Decisions and conventions in force",
         ranked(proj.id, records.active(conn, proj.id, ["decision", "convention"], limit=40)), True),
        ("handover", "## Last session handover",
         records.active(conn, proj.id, ["handover"], limit=1), False),
        ("developer", "## Developer profile (all projects)", records.global_preferences(conn), False),
    ]
    for name, heading, recs, show_type in plan:
        kept, kept_ids = _section(heading, recs, SECTION_TOKENS[name], BODY_CHARS[name], show_type)
        blocks += kept
        used += kept_ids
        if name == "decisions":  # CLAUDE.md drift (ADR-013): read from the drift table, never CLAUDE.md
            from agentctx.sharing.drift import note

            blocks += [line for line in [note(conn, proj.id)] if line]
    total = records.count_active(conn, proj.id)
    others = {r["id"] for r in plan[-1][2] if r["project_id"] != proj.id}  # other projects' global preferences
    rest = total - len([rid for rid in used if rid not in others])
    if total:
        hint = (
            f"{rest} more records for this project are searchable: `agentctx search <terms>` "
            "(Bash) or the ctx_search tool; full text with `agentctx get <id>`."
            if rest > 0 else "Full text of any record: `agentctx get <id>`."
        )
    else:
        hint = (
            "No records stored for this project yet. Durable decisions and conventions can be "
            "saved with `agentctx record --type decision --title ...`."
        )
    blocks.append(hint)
    cap = budgets.SESSION_START_TOKENS - budgets.estimate_tokens(render.fence("session-start", []))
    kept, _ = budgets.fit_blocks(blocks, cap, max_chars=budgets.MAX_INJECTED_CHARS - render.FENCE_OVERHEAD)
    text = render.fence("session-start", kept)
    kept_ids = [rid for rid in used if any(rid in b for b in kept)]
    return Digest(text, budgets.estimate_tokens(text), kept_ids)


def rank_path(project_id: str) -> str:
    return paths.sub("digests", f"{project_id}.rank.json")


def write_rank(project_id: str, record_ids: list[str]) -> None:
    """Store the consolidation pass's ranking of decisions and conventions (atomically)."""
    fsio.write_json(rank_path(project_id), {"ids": list(record_ids)})


def ranked(project_id: str, recs: list[dict]) -> list[dict]:
    """``recs`` in the consolidated order: pinned first, records newer than the ranking next, then ranked."""
    try:
        with open(rank_path(project_id), encoding="utf-8") as fh:
            order = {rid: i for i, rid in enumerate(json.load(fh)["ids"])}
    except (OSError, ValueError, TypeError, KeyError):
        return recs
    return sorted(recs, key=lambda r: (not r["pinned"], order.get(r["id"], -1)))


def cache_path(project_id: str) -> str:
    return paths.sub("digests", f"{project_id}.json")


def write_cache(project_id: str, digest: Digest) -> None:
    """Write atomically (temp file + rename), so a reader never sees half a digest."""
    fsio.write_json(cache_path(project_id), digest.as_dict(), ensure_ascii=False)


def read_cache(project_id: str, generation: int) -> Digest | None:
    """The cached digest if it was built at this generation and is within budget."""
    try:
        with open(cache_path(project_id), encoding="utf-8") as fh:
            data = json.load(fh)
        cached = Digest(**data)
    except (OSError, ValueError, TypeError):
        return None
    if cached.generation != generation or budgets.estimate_tokens(cached.text) > budgets.SESSION_START_TOKENS:
        return None
    return cached


def current(conn: sqlite3.Connection, proj: project.Project, *, refresh_cache: bool = True) -> Digest:
    """The digest to inject now: the cached one if fresh, else built live (and cached)."""
    gen = db.generation(conn)
    cached = read_cache(proj.id, gen)
    if cached is not None:
        return cached
    fresh = build(conn, proj)
    fresh.generation = gen
    if refresh_cache:
        try:
            write_cache(proj.id, fresh)
        except OSError:
            pass
    return fresh
