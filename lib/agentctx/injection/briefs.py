"""What a subagent (Agent/Task tool) is briefed with, by its type, within ``budgets.SUBAGENT_TOKENS``.

A subagent starts with its own empty context: neither the SessionStart digest nor per-prompt records
of the main conversation reach it. What it gets depends on what it is for:

* read-only explorers (``Explore``) search the code, they do not decide anything: only the
  conventions in force (how things are done here), so what they report follows them;
* Claude Code's helpers for its own setup (``statusline-setup``, ``claude-code-guide``): nothing;
* planners (``Plan``), ``general-purpose`` and any other agent (custom and plugin agents): the
  decisions and conventions in force and the last handover.

The brief is a digest (``injection.digest``) of those sections, fenced like every injection (kind
``subagent``). Sections the project turned off in ``.agentctx/config.toml`` ([digest]) stay off here.
The SubagentStart hook (``events.subagent_start``) injects it and accounts it to the session.
"""

from __future__ import annotations

import sqlite3

from agentctx import budgets, project, settings
from agentctx.injection import digest

BRIEFS: dict[str, tuple[str, ...]] = {
    "Explore": ("conventions",),
    "statusline-setup": (),
    "claude-code-guide": (),
    "Plan": ("decisions", "handover"),
    "general-purpose": ("decisions", "handover"),
}
DEFAULT_BRIEF = ("decisions", "handover")  # custom and plugin agents do real work: brief them fully
_SETTING = {"conventions": "decisions"}  # which [digest] switch a brief section follows


def sections_for(agent_type: str, current: settings.Resolved | None = None) -> tuple[str, ...]:
    """The digest sections a subagent of this type is briefed with (the digest switches in force applied)."""
    wanted = BRIEFS.get(agent_type, DEFAULT_BRIEF)
    if current is None:
        return wanted
    on = set(current.sections)
    return tuple(name for name in wanted if _SETTING.get(name, name) in on)


def brief(conn: sqlite3.Connection, proj: project.Project, agent_type: str) -> digest.Digest | None:
    """The brief for a subagent of ``agent_type`` in ``proj``; None when there is nothing to give it."""
    sections = sections_for(agent_type, settings.load(proj.root))
    if not sections:
        return None
    dig = digest.build(conn, proj, sections=list(sections), cap=budgets.SUBAGENT_TOKENS, kind="subagent")
    return dig if dig.record_ids else None
