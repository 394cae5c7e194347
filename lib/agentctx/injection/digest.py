"""The SessionStart digest (ADR-007): stable project context under a hard 1,500-token cap.

Composition, in order: project profile, decisions and conventions in force (with the
preferences stated for this project only), the last handover, the developer profile, and a one-line
hint of what else is searchable. Each section has its own budget; the whole is then capped, cut from
the bottom at record boundaries. A digest precomputed at SessionEnd is used when the store has not changed
since (same generation), otherwise it is built live (a few indexed queries).
"""

from __future__ import annotations

import json
import re
import sqlite3

from agentctx import budgets, fsio, kinds, paths, project, render
from agentctx.kinds import DIGEST_SECTIONS as SECTIONS
from agentctx.store import db, records

SECTION_TOKENS = {"profile": 220, "decisions": 560, "conventions": 400, "handover": 380,
                  "developer": 200}  # + a one-line hint
BODY_CHARS = {"profile": 160, "decisions": 220, "conventions": 220, "handover": 1400, "developer": 160}


class Digest:
    """Digest text, its token estimate, the records it shows and the store generation it reflects."""

    __slots__ = ("text", "tokens", "record_ids", "generation", "sections")

    def __init__(self, text: str, tokens: int, record_ids: list[str] | None = None, generation: int = -1,
                 sections: list[str] | None = None):
        self.text, self.tokens = text, tokens
        self.record_ids = list(record_ids or [])
        self.generation = generation
        self.sections = list(SECTIONS if sections is None else sections)

    def as_dict(self) -> dict:
        return {"text": self.text, "tokens": self.tokens, "record_ids": self.record_ids, "generation": self.generation,
                "sections": self.sections}


def _section(heading: str, recs: list[dict], budget: int, body_chars: int, show_type: bool):
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


def in_force(conn: sqlite3.Connection, project_id: str, *, limit: int) -> list[dict]:
    """The decisions section's records before the consolidated ranking orders them: the project's decisions and
    conventions, and the preferences stated for this project only (shown with their type). The developer
    profile shows the cross-project preferences; without this no section would show a project's own."""
    own = kinds.in_digest_section("developer")
    return records.active(conn, project_id, kinds.in_digest_section("decisions") + own, limit=limit, project_scoped=own)


def _plan(conn: sqlite3.Connection, proj: project.Project, name: str) -> tuple[str, list[dict], bool]:
    """(heading, records, show the type) of one section."""
    if name == "profile":
        return f"## Project profile: {render.escape(proj.name)}", records.active(conn, proj.id, kinds.in_digest_section("profile"), limit=20), False
    if name == "decisions":
        return "## Decisions and conventions in force", ranked(proj.id, in_force(conn, proj.id, limit=40)), True
    if name == "conventions":
        return "## Conventions in force", ranked(proj.id, records.active(conn, proj.id, ["convention"], limit=40)), False
    if name == "handover":
        return "## Last session handover", records.active(conn, proj.id, kinds.in_digest_section("handover"), limit=1), False
    if name == "developer":
        return "## Developer profile (all projects)", records.global_preferences(conn), False
    raise ValueError(f"unknown digest section {name!r}")


def _words(text: str) -> str:
    """Lower-cased words, space-padded, so ``in`` compares whole words."""
    return " " + " ".join(re.findall(r"\w+", (text or "").lower())) + " "


def _not_shown(recs: list[dict], shown: str, name: str) -> list[dict]:
    """``recs`` less what the lead blocks already say: a record whose title they hold is left out, but
    the handover keeps what only it says (its title and body lines already shown are dropped)."""
    if not shown:
        return recs
    out = []
    for rec in recs:
        title = _words(rec["title"]) if rec["title"].strip() else ""
        if name != "handover":
            if not (title and title in shown):
                out.append(rec)
            continue
        lines = [ln for ln in (rec.get("body") or "").splitlines()
                 if not (_words(ln).strip() and _words(ln.lstrip("-*• 0123456789.)")) in shown
                         and not ln.rstrip().endswith(":"))]
        body = "\n".join(ln for i, ln in enumerate(lines)
                         if not (ln.rstrip().endswith(":") and (i + 1 == len(lines) or lines[i + 1].rstrip().endswith(":"))))
        out.append({**rec, "title": "Where the work stands" if title and title in shown else rec["title"],
                    "body": body})
    return out


def settings_sections(proj: project.Project) -> list[str]:
    """The SessionStart sections on for this project (``settings``: project file, plugin option, user config)."""
    from agentctx import settings

    return list(settings.load(proj.root).sections)


def build(conn: sqlite3.Connection, proj: project.Project, *, lead: list[str] | None = None,
          sections: list[str] | tuple[str, ...] | None = None, cap: int = budgets.SESSION_START_TOKENS,
          kind: str = "session-start") -> Digest:
    """Compose the digest for ``proj`` from the store; ``lead`` blocks (the anchor) come first.

    ``sections`` (default: the project's settings) and ``cap`` (tokens, fence included) also build
    the smaller briefs of other injections (``kind`` names the fence), e.g. a subagent's.
    """
    blocks: list[str] = list(lead or [])
    used: list[str] = []
    sections = list(settings_sections(proj) if sections is None else sections)
    plan = [(name, *_plan(conn, proj, name)) for name in sections]
    shown = _words("\n".join(lead or [])) if lead else ""  # the digest never shows one text twice
    for name, heading, recs, show_type in plan:
        recs = _not_shown(recs, shown, name)
        kept, kept_ids = _section(heading, recs, SECTION_TOKENS[name], BODY_CHARS[name], show_type)
        blocks += kept
        used += kept_ids
        if name == "decisions":  # CLAUDE.md drift (ADR-013): read from the drift table, never CLAUDE.md
            from agentctx.sharing.drift import note

            blocks += [line for line in [note(conn, proj.id)] if line]
    total = records.count_active(conn, proj.id)
    others = {r["id"] for _, _, recs, _ in plan for r in recs if r["project_id"] != proj.id}  # others' global ones
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
    room = cap - budgets.estimate_tokens(render.fence(kind, []))
    kept, _ = budgets.fit_blocks(blocks, room, max_chars=budgets.MAX_INJECTED_CHARS - render.FENCE_OVERHEAD)
    text = render.fence(kind, kept)
    kept_ids = [rid for rid in used if any(rid in b for b in kept)]
    return Digest(text, budgets.estimate_tokens(text), kept_ids, sections=sections)


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


def read_cache(project_id: str, generation: int, sections: list[str] | None = None) -> Digest | None:
    """The cached digest if it was built at this generation, with these sections, and is within budget."""
    try:
        with open(cache_path(project_id), encoding="utf-8") as fh:
            data = json.load(fh)
        cached = Digest(**data)
    except (OSError, ValueError, TypeError):
        return None
    if cached.generation != generation or budgets.estimate_tokens(cached.text) > budgets.SESSION_START_TOKENS:
        return None
    if cached.sections != list(SECTIONS if sections is None else sections):
        return None
    return cached


def current(conn: sqlite3.Connection, proj: project.Project) -> Digest:
    """The digest to inject now: the cached one if fresh, else built live (and cached)."""
    gen = db.generation(conn)
    sections = settings_sections(proj)
    cached = read_cache(proj.id, gen, sections)
    if cached is not None:
        return cached
    fresh = build(conn, proj, sections=sections)
    fresh.generation = gen
    try:
        write_cache(proj.id, fresh)
    except OSError:
        pass
    return fresh
