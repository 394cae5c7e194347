"""A hook call's input and output: stdin JSON read once into a typed ``HookEvent``, JSON printed back.

The fail-open frame that runs a handler with it is ``events.frame``. Stdlib only, no store: the
capture layer may take a ``HookEvent`` without reaching up to the hook handlers.
"""

from __future__ import annotations

import os
import sys

from agentctx import jsonfast

MAX_STDIN_BYTES = 16 * 1024 * 1024
HOOK_BUSY_MS = 1000  # how long a hook waits for the store's lock

# A hook handler, ``Callable[[HookEvent], dict | None]``: named in annotations only (SessionStart's sealed path
# imports this module, and ``collections.abc`` or ``typing`` would cost it 1.5-8 ms).
Handler = "Callable[[HookEvent], dict | None]"


def read_payload(stream=None) -> dict:
    """Parse the hook's stdin; raises ValueError on anything but a JSON object."""
    stream = stream or sys.stdin.buffer
    raw = stream.read(MAX_STDIN_BYTES + 1)
    if len(raw) > MAX_STDIN_BYTES:
        raise ValueError(f"stdin larger than {MAX_STDIN_BYTES} bytes")
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        raise ValueError("empty stdin")
    payload = jsonfast.loads(text)
    if not isinstance(payload, dict):
        raise ValueError(f"stdin is JSON {type(payload).__name__}, not an object")
    return payload


def _text(payload: dict, name: str) -> str:
    value = payload.get(name)
    return value if isinstance(value, str) else ""


def _object(payload: dict, name: str) -> dict:
    value = payload.get(name)
    return value if isinstance(value, dict) else {}


class HookEvent:
    """One hook call's stdin, parsed once: every field typed, with its fallback applied here only.

    Strings are "" when missing or not strings; objects are {} when missing or not objects.
    ``cwd`` is always an existing folder (``project.working_dir``); ``raw`` keeps the payload.
    """

    __slots__ = (
        "name", "session_id", "cwd", "transcript_path", "source", "prompt", "reason", "tool_name",
        "tool_input", "tool_response", "error", "is_interrupt", "custom_instructions", "agent_type", "agent_id",
        "last_assistant_message", "agent_transcript_path", "old_cwd", "new_cwd", "raw",
    )

    def __init__(self, name: str, payload: dict) -> None:
        from agentctx.project import working_dir

        self.name: str = _text(payload, "hook_event_name") or name
        self.session_id: str = _text(payload, "session_id") or os.environ.get("CLAUDE_CODE_SESSION_ID") or "unknown"
        self.cwd: str = working_dir(_text(payload, "cwd"))
        self.transcript_path: str = _text(payload, "transcript_path")
        self.source: str = _text(payload, "source") or "startup"  # SessionStart: startup|resume|clear|compact
        self.prompt: str = _text(payload, "prompt")  # UserPromptSubmit
        self.reason: str = _text(payload, "reason")  # SessionEnd
        self.tool_name: str = _text(payload, "tool_name")  # PostToolUse(Failure)
        self.tool_input: dict = _object(payload, "tool_input")
        self.tool_response: dict = _object(payload, "tool_response")
        self.error: str = _text(payload, "error")  # PostToolUseFailure
        self.is_interrupt: bool = payload.get("is_interrupt") is True
        self.custom_instructions: str = _text(payload, "custom_instructions")  # PreCompact
        self.agent_type: str = _text(payload, "agent_type")  # SubagentStart/Stop
        self.agent_id: str = _text(payload, "agent_id")
        self.last_assistant_message: str = _text(payload, "last_assistant_message")  # Stop/SubagentStop
        self.agent_transcript_path: str = _text(payload, "agent_transcript_path")  # SubagentStop
        self.old_cwd: str = _text(payload, "old_cwd")  # CwdChanged
        self.new_cwd: str = _text(payload, "new_cwd")
        self.raw: dict = payload

    @classmethod
    def of(cls, name: str, payload: dict | None = None, **fields: object) -> HookEvent:
        """An event from a payload dict and/or keyword fields (tests and in-process callers)."""
        return cls(name, {**(payload or {}), **fields})

    def __repr__(self) -> str:
        return f"HookEvent({self.name!r}, session_id={self.session_id!r}, cwd={self.cwd!r})"


def emit(output: dict) -> None:
    data = jsonfast.dumps(output, ensure_ascii=False).encode("utf-8")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
