"""SubagentStop: what a subagent concluded becomes one ``discovery`` record, always ``inferred``.

A subagent's final message is its report to the main conversation (``last_assistant_message``):
useful later (where the parser lives, why a test fails), but it is the model's reading, not
something the developer stated, so it is stored with confidence ``inferred`` and source
``hook_observation`` (never explicit, never shared in the team file; old ones are rolled up with
the other discoveries). Keyed by the agent's id: a resumed subagent's new conclusion supersedes
its earlier one. Lines naming an excluded path are left out; nothing is stored when the project
turned capture off. Prints nothing: an ``additionalContext`` here would keep the subagent running.
"""

from __future__ import annotations

import re

from agentctx import budgets, project, project_settings
from agentctx.hookio import HookEvent
from agentctx.store import db, records

MIN_CHARS = 40  # "Done." is not a conclusion
BODY_CHARS = 4000
TITLE_CHARS = 200
BUSY_MS = 3000
_FIRST = re.compile(r"^(.+?[.!?])(?:\s|$)")


def conclusion(agent_type: str, text: str, settings: project_settings.Settings) -> tuple[str, str] | None:
    """(title, body) of the record for a subagent's final message; None when there is nothing to keep."""
    lines = [ln for ln in text.strip().splitlines() if not settings.mentions_excluded(ln)]
    body = "\n".join(lines).strip()
    if len(body) < MIN_CHARS:
        return None
    first = next(ln for ln in lines if ln.strip()).strip().lstrip("#*- ").strip()
    m = _FIRST.match(first)
    summary = budgets.clip(m.group(1) if m else first, TITLE_CHARS)
    who = agent_type or "subagent"
    return f"{who} subagent concluded: {summary}", budgets.clip(body, BODY_CHARS)


def on_subagent_stop(event: HookEvent) -> dict | None:
    """SubagentStop hook: store the conclusion as an inferred discovery; print nothing."""
    text = event.last_assistant_message
    if len(text.strip()) < MIN_CHARS:
        return None
    proj = project.detect(event.cwd)
    settings = project_settings.load(proj.root)
    if not settings.capture:
        return None
    found = conclusion(event.agent_type, text, settings)
    if found is None:
        return None
    title, body = found
    key = "subagent." + (event.agent_id or "unknown")[:100]
    conn = db.connect(busy_ms=BUSY_MS)
    try:
        records.upsert_by_key(conn, proj.id, key, type="discovery", title=title, body=body, confidence="inferred",
                              source="hook_observation", session_id=event.session_id)
    finally:
        conn.close()
    return None
