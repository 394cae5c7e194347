"""PostToolUse / PostToolUseFailure (async): what a tool call showed becomes observations
(``capture.observe``): written files, error stubs, test outcomes, git events. No model; prints nothing."""

from __future__ import annotations

from agentctx import project, project_settings
from agentctx.capture import observe
from agentctx.hookio import HookEvent


def on_post_tool_use(event: HookEvent) -> dict | None:
    """PostToolUse / PostToolUseFailure hook: store what the tool call showed; print nothing."""
    tool = event.tool_name
    settings = project_settings.load(project.detect(event.cwd).root)
    if not settings.capture:  # .agentctx/config.toml: capture off for this project
        return None
    if tool == "Bash" and settings.mentions_excluded(str(event.tool_input.get("command") or "")):
        return None  # a command on an excluded path: its output is not captured either
    if tool in observe.FILE_TOOLS:
        if event.name != "PostToolUseFailure":
            observe.observe_file(tool, event.tool_input, event.tool_response, event.session_id, event.cwd)
    elif tool == "Bash":
        observe.observe_bash(event)
    return None
