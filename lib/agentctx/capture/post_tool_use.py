"""PostToolUse / PostToolUseFailure (async): what a tool call showed becomes observations
(``capture.observe``): written files, error stubs, test outcomes, git events. No model; prints nothing."""

from __future__ import annotations

from agentctx.capture import observe
from agentctx.hookio import HookEvent


def on_post_tool_use(event: HookEvent) -> dict | None:
    """PostToolUse / PostToolUseFailure hook: store what the tool call showed; print nothing."""
    tool = event.tool_name
    if tool in observe.FILE_TOOLS:
        if event.name != "PostToolUseFailure":
            observe.observe_file(tool, event.tool_input, event.tool_response, event.session_id, event.cwd)
    elif tool == "Bash":
        observe.observe_bash(event)
    return None
