"""The typed hook event: built once in the fail-open frame, every field with its one fallback rule."""

from __future__ import annotations

import os

from agentctx.hookio import HookEvent


def test_fields_are_typed_and_wrong_types_count_as_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    ev = HookEvent("PostToolUse", {
        "session_id": 7, "cwd": str(tmp_path), "prompt": ["x"], "tool_name": "Bash",
        "tool_input": "not an object", "tool_response": {"stdout": "ok"}, "is_interrupt": "yes",
    })
    assert ev.name == "PostToolUse" and ev.session_id == "unknown" and ev.cwd == str(tmp_path)
    assert ev.prompt == "" and ev.tool_name == "Bash" and ev.tool_input == {} and ev.tool_response == {"stdout": "ok"}
    assert ev.is_interrupt is False and ev.source == "startup" and ev.raw["session_id"] == 7


def test_the_payload_names_the_event_when_it_says_so():
    assert HookEvent("PostToolUse", {"hook_event_name": "PostToolUseFailure"}).name == "PostToolUseFailure"
    assert HookEvent.of("SessionStart", source="compact").source == "compact"


def test_session_id_falls_back_to_the_environment(monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "from-env")
    assert HookEvent("Stop", {}).session_id == "from-env"
    assert HookEvent("Stop", {"session_id": "given"}).session_id == "given"


def test_cwd_is_always_an_existing_folder(tmp_path, monkeypatch):
    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project_dir))
    assert HookEvent("Stop", {"cwd": str(tmp_path / "gone")}).cwd == str(project_dir)
    assert HookEvent("Stop", {}).cwd == str(project_dir)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "also-gone"))
    assert HookEvent("Stop", {"cwd": str(tmp_path / "gone")}).cwd == os.getcwd()
