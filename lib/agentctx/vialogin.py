"""Extraction through the user's own Claude Code login: ``claude -p`` headless (opt-in).

Used when there is no ``ANTHROPIC_API_KEY`` and ``agentctx config --claude-login`` is on. The
child session must not fire agentctx again: it runs with ``AGENTCTX_DISABLE=1`` (every agentctx
hook honors it), no tools, no session persistence, no MCP servers, in the temp directory (no
project CLAUDE.md or project settings), with our system prompt replacing Claude Code's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

from agentctx.llm import LLMError, Usage

MODEL = os.environ.get("AGENTCTX_CLAUDE_MODEL", "claude-haiku-4-5")


def find_claude() -> str | None:
    """The ``claude`` executable (``AGENTCTX_CLAUDE_BIN`` overrides the PATH lookup)."""
    found = os.environ.get("AGENTCTX_CLAUDE_BIN") or shutil.which("claude")
    return found if found and os.access(found, os.X_OK) else None


class LoginClient:
    """Same interface as ``llm.Client``: ``complete(system, user, usage) -> text``."""

    def __init__(self, binary: str | None = None, *, timeout: float | None = None):
        self.binary = binary or find_claude()
        if not self.binary:
            raise LLMError("claude not found")
        self.timeout = float(timeout if timeout is not None else os.environ.get("AGENTCTX_LLM_TIMEOUT", 120))

    def command(self, system: str) -> list[str]:
        return [self.binary, "-p", "--output-format", "json", "--model", MODEL, "--system-prompt", system,
                "--tools", "", "--no-session-persistence", "--strict-mcp-config", "--disable-slash-commands"]

    def complete(self, system: str, user: str, usage: Usage) -> str:
        env = {**os.environ, "AGENTCTX_DISABLE": "1"}
        try:
            done = subprocess.run(self.command(system), input=user, capture_output=True, text=True, env=env,
                                  timeout=self.timeout, cwd=tempfile.gettempdir())
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LLMError(f"claude -p: {type(exc).__name__}") from None
        try:
            data = json.loads(done.stdout)
        except ValueError:
            raise LLMError(f"claude -p exited {done.returncode} without JSON output") from None
        if not isinstance(data, dict):
            raise LLMError("claude -p printed unexpected JSON")
        if isinstance(data.get("usage"), dict):
            usage.add(data["usage"])
        if data.get("is_error") or done.returncode != 0:
            raise LLMError(f"claude -p failed: {str(data.get('subtype') or data.get('result'))[:200]}")
        return str(data.get("result") or "")
