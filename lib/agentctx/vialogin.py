"""Extraction through the person's own Claude Code login: ``claude -p`` headless (on by default).

Used when there is no ``ANTHROPIC_API_KEY``, a ``claude`` is found and ``claude auth status`` says it is
logged in (checked at most every ``LOGIN_CHECK_S``, the answer kept in ``<data dir>/login.json``);
``agentctx config --no-claude-login`` or ``--no-llm`` turns it off. The child session must not fire
anyone's hooks, load any plugin or MCP server, or write a session (checked against the pinned CLI
2.1.332's ``claude --help``; ``--bare`` is not usable: it never reads the OAuth login):
``--setting-sources ""`` (no user, project or local settings: no hooks, no enabled plugins from
them), ``--settings {"disableAllHooks": true}``, ``--strict-mcp-config`` without ``--mcp-config``
(no MCP servers), ``--no-session-persistence``, ``--tools ""``, ``--disable-slash-commands``, in the
temp directory (no project CLAUDE.md), with our system prompt replacing Claude Code's, and
``AGENTCTX_DISABLE=1`` in its environment (every agentctx hook honors it). Its tokens are priced as
Haiku 4.5 and count against the spending caps like API calls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

from agentctx import fsio, paths
from agentctx.llm import LLMError, Usage

MODEL = os.environ.get("AGENTCTX_CLAUDE_MODEL", "claude-haiku-4-5")
LOGIN_CHECK_S = 6 * 3600
ISOLATION = ["--setting-sources", "", "--settings", json.dumps({"disableAllHooks": True}), "--strict-mcp-config",
             "--no-session-persistence", "--tools", "", "--disable-slash-commands"]
NOTICE = ("agentctx extracts the decisions, conventions and preferences you state from each session through your "
          "Claude Code login (claude -p, Haiku 4.5, capped at ${daily:.2f} a day); turn it off with "
          "`agentctx config --no-llm`.")


def find_claude() -> str | None:
    """The ``claude`` executable (``AGENTCTX_CLAUDE_BIN`` overrides the PATH lookup)."""
    found = os.environ.get("AGENTCTX_CLAUDE_BIN") or shutil.which("claude")
    return found if found and os.access(found, os.X_OK) else None


def _login_file() -> str:
    return paths.sub("login.json")


def logged_in(binary: str, *, fresh: bool = False) -> bool:
    """Whether ``binary`` is logged in (``claude auth status --json``), cached per binary."""
    import time

    try:
        with open(_login_file(), encoding="utf-8") as fh:
            seen = json.load(fh)
        if not fresh and seen.get("binary") == binary and time.time() - float(seen.get("at", 0)) < LOGIN_CHECK_S:
            return bool(seen.get("logged_in"))
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    try:
        done = subprocess.run([binary, "auth", "status", "--json"], capture_output=True, text=True, timeout=20,
                              env={**os.environ, "AGENTCTX_DISABLE": "1"}, cwd=tempfile.gettempdir())
        answer = bool(json.loads(done.stdout).get("loggedIn")) if done.returncode == 0 else False
    except (OSError, subprocess.SubprocessError, ValueError, AttributeError):
        answer = False
    try:
        fsio.write_atomic(_login_file(), json.dumps({"binary": binary, "logged_in": answer, "at": time.time()}))
    except OSError:
        pass
    return answer


def notice_once(daily_cap: float) -> str | None:
    """The line the person is shown the first time extraction runs through their login (queued for
    the next SessionStart's ``systemMessage``); None every later time."""
    marker = paths.sub("login-notice-shown")
    if os.path.exists(marker):
        return None
    try:
        fsio.write_atomic(marker, "shown\n")
    except OSError:
        return None
    return NOTICE.format(daily=daily_cap)


class LoginClient:
    """Same interface as ``llm.Client``: ``complete(system, user, usage) -> text``."""

    def __init__(self, binary: str | None = None, *, timeout: float | None = None):
        self.binary = binary or find_claude()
        if not self.binary:
            raise LLMError("claude not found")
        self.timeout = float(timeout if timeout is not None else os.environ.get("AGENTCTX_LLM_TIMEOUT", 120))

    def command(self, system: str) -> list[str]:
        return [self.binary, "-p", "--output-format", "json", "--model", MODEL, "--system-prompt", system, *ISOLATION]

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
