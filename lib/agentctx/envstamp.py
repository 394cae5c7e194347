"""The launchers' record of a script's prepared uv environment, so a hook can start without uv.

``uv run --script`` spends ~10 ms a run re-checking an environment that has not changed. Once uv has run
(or synced) an entry script, its interpreter is written to a record in the cache dir, at a path mirroring
the script's (``<cache dir>/launch/<absolute script path>``), never in the plugin folder. The record's
second line says which uv and uv settings made it. ``hooks/launch.sh`` (``script_env`` in
``lib/find_uv.sh``, where the path and that line are computed) runs the interpreter directly while the
record is newer than the script and its lock, names the same uv and settings, and the interpreter exists;
on any doubt it goes through uv, and a run that fails on the direct path deletes the record.

A record is written only when the lock and the script are older than the run that proved the environment
(``MARGIN_S`` before it started): a lock changed while uv was checking it leaves no record, and the next
run through uv writes one. Deleting records only costs that one run.
"""

from __future__ import annotations

import os
import sys
import time

MARGIN_S = 2.0  # a lock or script changed this close to the run that proved the environment: no record
STAMP_VAR, KEY_VAR = "AGENTCTX_ENV_STAMP", "AGENTCTX_ENV_KEY"  # set by hooks/launch.sh on its path through uv


def write(stamp: str, key: str, script: str, interpreter: str, since: float) -> bool:
    """Record ``interpreter`` as ``script``'s environment in ``stamp`` unless the script or its lock changed
    after ``since - MARGIN_S``, or the interpreter is not a virtual environment's. True when written."""
    try:
        if not (stamp and key and os.path.isabs(stamp)) or "\n" in interpreter + key:
            return False
        if not os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(interpreter)), "pyvenv.cfg")):
            return False  # a base interpreter (e.g. ``uv python find`` before any sync): not the script's env
        for path in (script, script + ".lock"):
            if os.stat(path).st_mtime >= since - MARGIN_S:
                return False
        os.makedirs(os.path.dirname(stamp), mode=0o700, exist_ok=True)
        tmp = f"{stamp}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(f"{interpreter}\n{key}\n")
        os.replace(tmp, stamp)
        return True
    except OSError:
        return False


def take() -> tuple[str, str, float] | None:
    """At a hook's start: (record path, key, now) when the launcher ran it through uv and wants the record
    written, else None. The variables are removed, so nothing this process starts writes a record."""
    stamp, key = os.environ.pop(STAMP_VAR, ""), os.environ.pop(KEY_VAR, "")
    return (stamp, key, time.time()) if stamp and key else None


def record_this_run(taken: tuple[str, str, float], script: str) -> bool:
    """At the hook's end: record this interpreter as ``script``'s environment (``taken`` from ``take``)."""
    stamp, key, since = taken
    return write(stamp, key, os.path.abspath(script), sys.executable, since)


def locate(script: str, env: dict[str, str] | None = None) -> tuple[str, str, str]:
    """(uv, record path, key) for the absolute ``script`` of a plugin folder, as its launcher computes them
    in ``env`` (``lib/find_uv.sh``: the rule lives there only); empty strings where there are none."""
    import subprocess

    lib = os.path.join(os.path.dirname(os.path.dirname(script)), "lib", "find_uv.sh")
    code = '. "$1"; find_uv; script_env "$2"; printf "%s\\n%s\\n%s\\n" "$uv_bin" "$env_stamp" "$env_key"'
    try:
        out = subprocess.run(["sh", "-c", code, "sh", lib, script], env=env, capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return "", "", ""
    uv, stamp, key = (out.stdout.split("\n") + ["", "", ""])[:3]
    return (uv, stamp, key) if out.returncode == 0 else ("", "", "")


def for_prepared(root: str, rel: str, since: float, env: dict[str, str] | None = None) -> bool:
    """After ``uv sync --script`` of ``root/rel`` succeeded (started at ``since``): record its environment
    where the launcher will look (``locate``); ``uv python find --script`` names the interpreter.
    True when written."""
    import subprocess

    script = os.path.join(os.path.abspath(root), rel)
    uv, stamp, key = locate(script, env)
    if not (uv and stamp):
        return False
    try:
        found = subprocess.run([uv, "python", "find", "--script", script], env=env, capture_output=True, text=True,
                               timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    interpreter = found.stdout.strip()
    return found.returncode == 0 and bool(interpreter) and write(stamp, key, script, interpreter, since)
