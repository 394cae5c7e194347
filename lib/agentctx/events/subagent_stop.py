"""SubagentStop: what a subagent concluded becomes one ``discovery`` record, always ``inferred``.

A subagent's final message is its report to the main conversation (``last_assistant_message``):
useful later (where the parser lives, why a test fails), but it is the model's reading, not
something the developer stated, so it is stored with confidence ``inferred`` and source
``hook_observation`` (never explicit, never shared in the team file; old ones are rolled up with
the other discoveries). Keyed by the agent's id: a resumed subagent's new conclusion supersedes
its earlier one. Lines naming an excluded path are left out; nothing is stored when the project
turned capture off, for a compaction run (Claude Code 2.1.332 compacts in a subagent: its summary is
not a finding) or for a report that is only an acknowledgement ("Excellent!", "Pushed successfully.").
The title is the first sentence that says what was found: openers, acknowledgements and narration
("Now I have…", "Let me…") are skipped. The home folder is written as ``~``. Prints nothing: an ``additionalContext`` here would keep the subagent running.
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
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_ACK = re.compile(
    r"^(?:excellent|perfect|great|good|done|ok(?:ay)?|all set|success(?:fully)?|awesome|nice|sure|got it|"
    r"pushed successfully|committed successfully|complete[d]?|finished|all done|no problem|understood)\b[^.!?]{0,30}[.!?]*$"
    r"|^(?:now )?(?:i(?:'ve| have) (?:now )?(?:got|gathered|completed|finished|reviewed|analy[sz]ed)|let me|i'll|"
    r"i will|here(?:'s| is| are) (?:the|a|my)|now i|based on my|i (?:now )?have (?:a |enough|all))\b",
    re.IGNORECASE)
_COMPACTION = re.compile(r"^\s*<(?:analysis|summary)>|this session is being continued from a previous conversation",
                         re.IGNORECASE)


def _finding(lines: list[str]) -> str:
    """The first sentence that says what was found ("" when the report holds none)."""
    for line in lines:
        if line.lstrip().startswith("#"):
            continue  # a heading such as "## Summary"
        text = line.strip().lstrip("*->|").strip().strip("*_").strip()
        if not text or text.endswith(":") and len(text) < 60:
            continue  # empty, or a heading such as "**Findings:**"
        for sentence in _SENTENCES.split(text):
            if sentence.strip() and not _ACK.match(sentence.strip()):
                return sentence.strip()
    return ""


def conclusion(agent_type: str, text: str, settings: project_settings.Settings) -> tuple[str, str] | None:
    """(title, body) of the record for a subagent's final message; None when there is nothing to keep."""
    from agentctx.paths import tilde

    if "compact" in (agent_type or "").lower() or _COMPACTION.search(text[:2000]):
        return None
    lines = [tilde(ln) for ln in text.strip().splitlines() if not settings.mentions_excluded(ln)]
    body = "\n".join(lines).strip()
    if len(body) < MIN_CHARS:
        return None
    first = _finding(lines)
    if len(first) < 12:
        return None  # only an acknowledgement
    summary = budgets.clip(first, TITLE_CHARS)
    who = f"{agent_type} subagent" if agent_type and agent_type.lower() != "subagent" else "Subagent"
    return f"{who} concluded: {summary}", budgets.clip(body, BODY_CHARS)


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
