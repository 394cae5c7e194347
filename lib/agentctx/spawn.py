"""Start a background worker that outlives the hook that started it, and never wait for it.

Used by SessionEnd (consolidation) and Stop (extraction): the hook returns at once while the
worker runs in its own session (POSIX ``setsid``; on Windows a detached process group with
no console), so Claude Code ending the hook's process group does not end the worker. The
worker's stdin, stdout and stderr are the null device: it can never write into a hook's
output or block on a pipe nobody reads. Workers log through ``logs.log``.
"""

from __future__ import annotations

import os
import sys

LIB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # lib/: the PEP 723 entry scripts live here

# Windows process creation flags (named here so no Windows-only import is needed).
_DETACHED_PROCESS = 0x00000008
_CREATE_NEW_PROCESS_GROUP = 0x00000200
_CREATE_NO_WINDOW = 0x08000000


def detached(argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> int:
    """Start ``argv`` detached from this process and return its pid without waiting.

    Raises OSError when the program cannot be started (callers in hooks log it and go on).
    """
    if sys.platform != "win32" and hasattr(os, "posix_spawnp") and _single_threaded():
        return _posix_detached(argv, env, cwd)
    import subprocess  # ~5 ms to import: hooks (single-threaded) take the path above

    kwargs: dict = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "close_fds": True,
        "cwd": cwd,
        "env": env,
    }
    if sys.platform == "win32":
        kwargs["creationflags"] = _DETACHED_PROCESS | _CREATE_NEW_PROCESS_GROUP | _CREATE_NO_WINDOW
    else:
        kwargs["start_new_session"] = True
    proc = subprocess.Popen(argv, **kwargs)  # argv from agentctx, never a shell string
    # Not waited on: a hook exits right after (the worker is re-parented to init); a
    # long-lived caller's ``subprocess`` module reaps it on a later Popen.
    return proc.pid


def _single_threaded() -> bool:
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _posix_detached(argv: list[str], env: dict[str, str] | None, cwd: str | None) -> int:
    """``detached`` without the subprocess module: ``posix_spawnp`` in a new session, the standard streams
    on the null device (every other descriptor Python opens is close-on-exec). posix_spawn has no working
    directory of its own, so this (single-threaded) process changes into ``cwd`` around the call."""
    null = os.devnull
    actions = [(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0), (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_DUP2, 1, 2)]
    here = os.open(".", os.O_RDONLY) if cwd else None  # a descriptor: works even where "." was removed
    try:
        if cwd:
            os.chdir(cwd)
        return os.posix_spawnp(argv[0], argv, os.environ if env is None else env, file_actions=actions, setsid=True)
    finally:
        if here is not None:
            os.fchdir(here)
            os.close(here)


def python_module(module: str, args: list[str], *, path: list[str]) -> tuple[list[str], dict[str, str]]:
    """(argv, env) running ``python -m module args`` with the current interpreter and ``path``
    prepended to PYTHONPATH (the hook's interpreter has the hooks' dependencies); bytecode is cached,
    as in the hooks."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*path, *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return [sys.executable, "-m", module, *args], env


def find_uv() -> str | None:
    """The uv binary for detached work: ``AGENTCTX_UV``, else ``UV`` (uv sets it for the scripts it runs), else PATH."""
    found = os.environ.get("AGENTCTX_UV") or os.environ.get("UV")
    if found and os.path.isfile(found):
        return found
    import shutil

    return shutil.which("uv")


def script_path(name: str) -> str:
    """A PEP 723 entry script in lib/ (``agentctx_worker.py``, ``agentctx_consolidate.py``, ...)."""
    return os.path.join(LIB_DIR, name)


def uv_script(name: str, args: list[str], *, nice: bool = False) -> list[str] | None:
    """argv running lib/``name`` through ``uv run --script`` (None when uv or the script cannot be found).

    ``nice`` runs it at low CPU priority: background work must not slow the session.
    """
    uv, script = find_uv(), script_path(name)
    if uv is None or not os.path.isfile(script):
        return None
    argv = [uv, "run", "--quiet", "--script", script, *args]
    if nice:
        prefix = next((p for p in ("/usr/bin/nice", "/bin/nice") if os.path.exists(p)), None)
        if prefix:
            argv = [prefix, "-n", "10", *argv]
    return argv
