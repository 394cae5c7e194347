"""SubagentStart: brief a subagent (Agent/Task tool) by its type, within ``budgets.SUBAGENT_TOKENS``.

A subagent starts with its own empty context: neither the SessionStart digest nor per-prompt records
of the main conversation reach it. What it gets depends on what it is for:

* read-only explorers (``Explore``) search the code, they do not decide anything: only the
  conventions in force (how things are done here), so what they report follows them;
* Claude Code's helpers for its own setup (``statusline-setup``, ``claude-code-guide``): nothing;
* planners (``Plan``), ``general-purpose`` and any other agent (custom and plugin agents): the
  decisions and conventions in force and the last handover.

The brief is a digest (``injection.digest``) of those sections, fenced like every injection (kind
``subagent``), and accounted to the session (``sessions.account`` with ``SubagentStart``: counted in
its tokens, never as seen by the main conversation). Sections the project turned off in
``.agentctx/config.toml`` ([digest]) stay off here. Nothing to say (no record) prints nothing.
"""

from __future__ import annotations

import sqlite3

from agentctx import budgets, project, project_settings
from agentctx.hookio import HOOK_BUSY_MS, HookEvent
from agentctx.injection import digest
from agentctx.logs import log
from agentctx.store import db, sessions

BRIEFS: dict[str, tuple[str, ...]] = {
    "Explore": ("conventions",),
    "statusline-setup": (),
    "claude-code-guide": (),
    "Plan": ("decisions", "handover"),
    "general-purpose": ("decisions", "handover"),
}
DEFAULT_BRIEF = ("decisions", "handover")  # custom and plugin agents do real work: brief them fully
_SETTING = {"conventions": "decisions"}  # which [digest] switch a brief section follows


def sections_for(agent_type: str, settings: project_settings.Settings | None = None) -> tuple[str, ...]:
    """The digest sections a subagent of this type is briefed with (the project's switches applied)."""
    wanted = BRIEFS.get(agent_type, DEFAULT_BRIEF)
    if settings is None:
        return wanted
    on = set(settings.sections)
    return tuple(name for name in wanted if _SETTING.get(name, name) in on)


def brief(conn: sqlite3.Connection, proj: project.Project, agent_type: str) -> digest.Digest | None:
    """The brief for a subagent of ``agent_type`` in ``proj``; None when there is nothing to give it."""
    sections = sections_for(agent_type, project_settings.load(proj.root))
    if not sections:
        return None
    dig = digest.build(conn, proj, sections=list(sections), cap=budgets.SUBAGENT_TOKENS, kind="subagent")
    return dig if dig.record_ids else None


def on_subagent_start(event: HookEvent) -> dict | None:
    """SubagentStart hook: the brief as the subagent's additionalContext, accounted to the session."""
    proj = project.detect(event.cwd)
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    try:
        dig = brief(conn, proj, event.agent_type)
        if dig is None:
            return None
        try:
            with db.transaction(conn):
                sessions.account(conn, event.session_id, proj.id, sessions.SUBAGENT_EVENT, dig.record_ids, dig.tokens)
        except sqlite3.Error as exc:  # read-only or locked store: brief anyway
            log("SubagentStart", f"accounting skipped: {type(exc).__name__}: {exc}")
    finally:
        conn.close()
    return {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": dig.text}}
