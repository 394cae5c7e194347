"""Run hook scripts as Claude Code does: ``sh hooks/launch.sh <name>`` with JSON on stdin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.scriptenvs import passthrough

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "hooks" / "launch.sh"


def hook_env(data_home: Path, **extra: str) -> dict[str, str]:
    """A hook environment as Claude Code gives it: a minimal PATH with uv reachable, the store in
    ``data_home``, and what the user's shell passes on (``scriptenvs.passthrough``)."""
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    path = [str(Path.home() / ".local" / "bin"), "/usr/local/bin", "/usr/bin", "/bin", str(Path(uv).parent)]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(path)),
        "HOME": str(Path.home()),
        "LANG": "C.UTF-8",
        "AGENTCTX_HOME": str(data_home),
        "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        # No model calls from hooks under test unless a test opts in (the Stop hook's worker
        # would otherwise call whatever ANTHROPIC_BASE_URL points at).
        "AGENTCTX_LLM": "0",
    }
    env.update(passthrough())  # uv settings, cache locations, CA bundles: what the user's shell passes on
    env.update(extra)
    return env


def run_hook(
    name: str, payload: dict | bytes | str, data_home: Path, *, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """Run one hook (``session_start``, ``user_prompt_submit``, ``session_end``) as a process."""
    if isinstance(payload, dict):
        stdin = json.dumps(payload).encode()
    elif isinstance(payload, str):
        stdin = payload.encode()
    else:
        stdin = payload
    env = dict(env if env is not None else hook_env(data_home))
    if name == "post_tool_use":
        # launch.sh hands PostToolUse to a detached process; tests read the store right after the hook, so it
        # runs in place here (the hand-off has its own test, tests/events/test_session_end.py).
        env.setdefault("AGENTCTX_HOOK_DETACHED", "no")
    return subprocess.run(["sh", str(LAUNCH), name], input=stdin, capture_output=True, timeout=timeout, env=env,
                          cwd=str(ROOT))


def context_of(proc: subprocess.CompletedProcess[bytes]) -> str | None:
    """The additionalContext a hook printed (None when it printed nothing)."""
    out = proc.stdout.decode().strip()
    if not out:
        return None
    data = json.loads(out)
    return data.get("hookSpecificOutput", {}).get("additionalContext")
