"""Run the real ``bin/agentctx`` (uv run --script) as a process, as a user or Claude's Bash tool does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "bin" / "agentctx"
UV = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")


def agentctx(home: Path, *args: str, input: str | None = None, cwd: Path | None = None, timeout: float = 300,
             **env: str) -> subprocess.CompletedProcess[str]:
    """``bin/agentctx ARGS`` with the store in ``home``; extra environment variables as keywords."""
    full = {**os.environ, "AGENTCTX_HOME": str(home), **env}
    full.pop("AGENTCTX_NOW", None)
    full["PATH"] = os.path.dirname(UV) + os.pathsep + full.get("PATH", "")
    return subprocess.run([str(BIN), *args], input=input, capture_output=True, text=True, env=full,
                          cwd=str(cwd) if cwd else None, timeout=timeout)
