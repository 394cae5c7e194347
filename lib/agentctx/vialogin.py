"""Extraction through the person's own Claude Code login: ``claude -p`` headless (on by default).

Used when there is no ``ANTHROPIC_API_KEY``, a ``claude`` is found and it is logged in
(:func:`login_state`); ``agentctx config --no-llm`` (or ``--no-claude-login``) turns it off. The child
session fires nobody's hooks, loads no plugin and no MCP server, and writes no session. Each flag of
:data:`ISOLATION` was checked against the pinned CLI 2.1.332 (a user settings hook, a user MCP server
and an installed plugin with hooks and an MCP server: none fires; see
tests/process/test_claude_login.py); ``--bare`` is not usable, it never reads the OAuth login.
It runs in the temp directory (no project CLAUDE.md) with our system prompt replacing Claude Code's
and ``AGENTCTX_DISABLE=1`` in its environment. Its tokens are priced as Haiku 4.5 and count against
the spending caps like API calls (``store/spend.py``). A rate-limited answer (429, 529) ends the child after one
retry and rests the login path for ``LIMIT_REST_S`` (the no-model path meanwhile), so a limit the person's own
session shares is not spent in the background.
"""

from __future__ import annotations

import json
import os
import time

from agentctx import fsio, paths, settings
from agentctx.llm import LLMError, Usage
from agentctx.logs import log

MODEL = os.environ.get("AGENTCTX_CLAUDE_MODEL", "claude-haiku-4-5")
LOGIN_CHECK_S = 6 * 3600  # how long a ``claude auth status`` answer is kept
# A rate-limited or overloaded answer (429, 529): the child gives up after one retry (Claude Code's own default,
# 10 retries with backoff, kept a worker ~2.5 minutes on one 429 and spent the person's own rate limit, which
# their session shares), and the login path rests this long, the no-model path taking its place.
CHILD_RETRIES = "1"
LIMIT_REST_S = 15 * 60
LIMITED_STATUSES = (429, 529)
ISOLATION = [
    "--safe-mode",  # no CLAUDE.md, skills, installed plugins, hooks, MCP servers, commands, agents
    "--setting-sources", "",  # no user, project or local settings (their hooks and enabled plugins)
    "--settings", json.dumps({"disableAllHooks": True}),
    "--strict-mcp-config", "--mcp-config", json.dumps({"mcpServers": {}}),  # no MCP server of anyone
    "--no-session-persistence",  # no transcript under ~/.claude/projects
    "--tools", "", "--disable-slash-commands",
]
NOTICE = ("agentctx: no ANTHROPIC_API_KEY, so the decisions, conventions and preferences you state are extracted "
          "after each turn through your Claude Code login (claude -p with Haiku 4.5, no tools, no hooks; "
          "capped at ${daily:.2f} a day, ${session:.2f} a session); turn it off with `agentctx config --no-llm`.")


def find_claude() -> str | None:
    """The ``claude`` executable (``AGENTCTX_CLAUDE_BIN`` overrides the PATH lookup)."""
    found = os.environ.get("AGENTCTX_CLAUDE_BIN") or _on_path("claude")
    return found if found and os.access(found, os.X_OK) else None


def _on_path(name: str) -> str | None:
    """The first executable file ``name`` in a folder of PATH (SessionStart asks this: no ``shutil``, whose
    archive modules cost ~2 ms to import; on Windows the PATHEXT suffixes are tried too)."""
    suffixes = [""] + (os.environ.get("PATHEXT", ".EXE;.CMD;.BAT").split(";") if os.name == "nt" else [])
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        for suffix in suffixes:
            candidate = os.path.join(folder or ".", name + suffix)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def state_file() -> str:
    """Where the login path keeps what it told the person and when it was limited."""
    return paths.sub("login.json")


def _state() -> dict:
    try:
        with open(state_file(), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_state(**changes) -> None:
    try:
        fsio.write_atomic(state_file(), json.dumps({**_state(), **changes}))
    except OSError:
        pass


def _refused(creds: str | None) -> str | None:
    """Why the login was refused by the last ``claude -p`` (401/403), while that is recent and the
    credentials file has not changed since; else None."""
    seen = _state().get("refused") or {}
    at = float(seen.get("at") or 0)
    if time.time() - at >= LOGIN_CHECK_S:
        return None
    try:
        if creds and os.path.isfile(creds) and os.path.getmtime(creds) > at:  # signed in again since
            return None
    except OSError:
        pass
    return str(seen.get("why") or "refused")


def _limited() -> tuple[str, float] | None:
    """(why, until when) while the login path rests after a rate-limited ``claude -p``; else None."""
    seen = _state().get("limited")
    try:
        at = float(seen.get("at") or 0) if isinstance(seen, dict) else 0.0
    except (TypeError, ValueError):
        return None
    now = time.time()
    return (str(seen.get("why") or "rate-limited"), at + LIMIT_REST_S) if at <= now < at + LIMIT_REST_S else None


def _credentials() -> str | None:
    """Where an offline sign-in sits, if one does: a token in the environment, or the CLI's credentials file."""
    for name in ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"):
        if os.environ.get(name, "").strip():
            return name
    folder = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    creds = os.path.join(folder, ".credentials.json")
    try:
        with open(creds, encoding="utf-8") as fh:
            oauth = json.load(fh).get("claudeAiOauth") or {}
        if oauth.get("accessToken") or oauth.get("refreshToken"):
            return creds
    except (OSError, ValueError, AttributeError):
        pass
    return None


def login_state(binary: str, *, ask: bool = True) -> tuple[bool, str]:
    """(logged in, how we know), offline. A ``claude -p`` refused (401/403) in the last ``LOGIN_CHECK_S``
    answers no (until the credentials file changes); a token in the environment or the credentials file
    answers yes at once; else (the macOS keychain) ``claude auth status --json``, asked at most every ``LOGIN_CHECK_S``
    per binary and kept in ``<data dir>/login.json``; ``ask=False`` never runs it (the hot path)."""
    found = _credentials()
    refused = _refused(found)
    if refused:
        return False, refused
    if found:
        return True, f"signed in ({found})"
    seen = _state().get("auth") or {}
    if seen.get("binary") == binary and time.time() - float(seen.get("at") or 0) < LOGIN_CHECK_S:
        return bool(seen.get("logged_in")), str(seen.get("how") or "claude auth status")
    if not ask:
        return False, "not known yet"
    import subprocess
    import tempfile

    try:
        done = subprocess.run([binary, "auth", "status", "--json"], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "AGENTCTX_DISABLE": "1"}, cwd=tempfile.gettempdir(),
                              stdin=subprocess.DEVNULL)
        data = json.loads(done.stdout or "{}")
        method = str(data.get("authMethod") or "none")
        # An API key comes from the environment (then the API path runs) or from settings, which the child skips.
        answer = bool(data.get("loggedIn")) and method not in ("none", "api_key")
    except (OSError, subprocess.SubprocessError, ValueError, AttributeError):
        answer, method = False, "unknown"
    how = f"claude auth status: {method}"
    _save_state(auth={"binary": binary, "logged_in": answer, "how": how, "at": time.time()})
    return answer, how


def say_once(why: str) -> None:
    """Log why extraction does not go through the login, once per distinct reason."""
    if _state().get("said") != why:
        log("extraction", why)
        _save_state(said=why)


def notice_once(daily_cap: float, session_cap: float) -> str | None:
    """The line the person is shown the first time the login path runs (SessionStart's ``systemMessage``),
    or None when it was shown already."""
    if _state().get("told"):
        return None
    _save_state(told=time.time())
    return NOTICE.format(daily=daily_cap, session=session_cap)


def route(*, ask: bool = True) -> tuple[bool, str]:
    """(extract through the login, why), for an environment without ``ANTHROPIC_API_KEY`` whose
    settings allow it. Not found or not logged in: the no-model path, and why."""
    binary = find_claude()
    if not binary:
        return False, "no ANTHROPIC_API_KEY and no claude found: the no-model path (explicit capture)"
    limited = _limited()
    if limited:
        why, until = limited
        return False, (f"claude -p was rate-limited ({why}): the no-model path until "
                       f"{time.strftime('%H:%M', time.localtime(until))}")
    ok, how = login_state(binary, ask=ask)
    if not ok:
        return False, f"no ANTHROPIC_API_KEY and {binary} is not logged in ({how}): the no-model path (explicit capture)"
    return True, f"no ANTHROPIC_API_KEY: through your Claude Code login ({binary}, {how})"


def wanted() -> bool:
    """Whether the settings and the environment leave extraction to the login (not whether it is logged in)."""
    current = settings.load()
    return (bool(current["llm"]) and bool(current["claude_login"]) and os.environ.get("AGENTCTX_LLM", "").strip() != "0"
            and not os.environ.get("ANTHROPIC_API_KEY", "").strip())


def silent_at_start() -> bool:
    """Whether ``notice_at_start`` has nothing to say until the state file, the settings or the environment
    change: the person was told, or the login path is not wanted (``injection.sealing``)."""
    return bool(_state().get("told")) or not wanted()


def notice_at_start() -> str | None:
    """SessionStart's line, once: the login path would run here (checked without running ``claude``)."""
    if _state().get("told") or not wanted() or not route(ask=False)[0]:
        return None
    current = settings.load()
    return notice_once(float(current["daily_cap_usd"]), float(current["session_cap_usd"]))


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
        import subprocess
        import tempfile

        env = {**os.environ, "AGENTCTX_DISABLE": "1", "CLAUDE_CODE_MAX_RETRIES": CHILD_RETRIES}
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
        if data.get("api_error_status") in (401, 403):  # signed out or expired: the no-model path for now
            why = f"claude -p was refused: {str(data.get('result'))[:120]}"
            _save_state(refused={"at": time.time(), "why": why})
            raise LLMError(why)
        if data.get("api_error_status") in LIMITED_STATUSES:  # rest, rather than spend the person's limit
            why = f"{data.get('api_error_status')}: {str(data.get('result'))[:120]}"
            _save_state(limited={"at": time.time(), "why": why})
            raise LLMError(f"claude -p was rate-limited ({why})")
        if data.get("is_error") or done.returncode != 0:
            raise LLMError(f"claude -p failed: {str(data.get('subtype') or data.get('result'))[:200]}")
        return str(data.get("result") or "")
