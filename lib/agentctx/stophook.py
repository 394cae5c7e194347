"""The Stop hook: start the extraction worker detached and return at once. Prints nothing.

Stop fires at the end of every assistant response. When a worker for the session is already
running, it is only told that more arrived (``flight`` pending flag), so at most one worker per
session exists. The worker is ``lib/agentctx_worker.py`` run by uv (its PEP 723 dependencies
include the ``anthropic`` SDK); the hook itself imports only the standard library.
"""

from __future__ import annotations

import os

from . import flight
from .hookio import cwd, field, log, session_id

LIB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(LIB, "agentctx_worker.py")


def _uv() -> str | None:
    found = os.environ.get("AGENTCTX_UV") or os.environ.get("UV")  # uv sets UV for the scripts it runs
    if found and os.path.isfile(found):
        return found
    import shutil

    return shutil.which("uv")


def worker_command(sid: str, transcript_path: str, workdir: str, *, final: bool = False,
                   background: bool = False) -> list[str] | None:
    """The argv of the extraction worker (None when uv cannot be found)."""
    uv = _uv()
    if uv is None:
        return None
    argv = [uv, "run", "--quiet", "--script", WORKER, "--session-id", sid, "--transcript", transcript_path,
            "--cwd", workdir]
    # Background work at low CPU priority: it must not slow the session (or this hook's exit).
    nice = next((p for p in ("/usr/bin/nice", "/bin/nice") if os.path.exists(p)), None)
    return ([nice, "-n", "10"] if nice else []) + argv + (["--final"] if final else []) + (
        ["--background"] if background else [])


def start_worker(sid: str, transcript_path: str, workdir: str, *, final: bool = False) -> int | None:
    """Start (or nudge) the session's worker; the pid started, or None."""
    lock = flight.for_session("extract", sid)
    if lock.held():
        lock.mark_pending()
        return None
    argv = worker_command(sid, transcript_path, workdir, final=final, background=True)
    if argv is None:
        log("Stop", "extraction not started: uv not found")
        return None
    from .spawn import detached

    return detached(argv, cwd=workdir)


def on_stop(payload: dict) -> None:
    """Stop hook handler: never a decision, never additionalContext, never exit 2."""
    path = field(payload, "transcript_path")
    if not path or not os.path.isfile(path):
        return None
    start_worker(session_id(payload), path, cwd(payload))
    return None
