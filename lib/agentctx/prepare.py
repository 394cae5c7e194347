"""Script environments prepared before they are needed, so the first session after an install has its tools.

Every entry point (hooks/*.py, mcp/server.py, lib/agentctx_*.py) is a PEP 723 script run by
``uv run --script`` with a committed lock beside it (``X.py.lock``, written by ``uv lock --script``).
uv keys a script's environment by the script's path, so a new plugin folder (install or update)
starts without any: Claude Code then starts the MCP server while uv is still downloading its packages,
and gives up after ``MCP_TIMEOUT``. The first SessionStart of a plugin folder therefore starts one
detached process that runs ``uv sync --script`` on every entry script, the MCP server first, and
says once, in one line, that agentctx is getting ready. Whether a folder is prepared is machine state
kept in ``<cache dir>/ready/`` (``paths.cache_dir``): deleting it only means this happens again.

The check at SessionStart is one ``stat`` of a marker file (plus reading plugin.json); nothing heavy is
imported on that path. ``python -m agentctx.prepare --root DIR`` prepares a folder in the foreground.
"""

from __future__ import annotations

import json
import os
import sys
import time

from agentctx import envstamp, paths, spawn
from agentctx.logs import log

try:  # the builtin module: importing hashlib (OpenSSL) costs ~2 ms on every SessionStart
    from _sha1 import sha1
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import sha1

NOTICE = ("agentctx is getting ready: installing its Python packages in the background (first run only); "
          "if its MCP tools are missing from this session, they are there in the next one.")
RETRY_FAILED_S = 3600  # a preparation that failed (e.g. offline) is tried again, quietly, after this
RESTART_STALE_S = 1800  # one that never finished (killed, machine slept) is started again after this
SYNC_TIMEOUT_S = 900
FIRST = ("mcp/server.py", "hooks/session_start.py", "hooks/user_prompt_submit.py")  # needed soonest


def plugin_root() -> str:
    """The plugin folder this code runs from (lib/.. )."""
    return os.path.dirname(spawn.LIB_DIR)


def scripts(root: str) -> list[str]:
    """The PEP 723 entry scripts under ``root`` (relative paths), the ones a session needs first, first."""
    found = []
    for folder, prefix in (("hooks", ""), ("mcp", ""), ("lib", "agentctx_")):
        try:
            names = sorted(os.listdir(os.path.join(root, folder)))
        except OSError:
            continue
        for name in names:
            if not (name.endswith(".py") and name.startswith(prefix)):
                continue
            try:
                with open(os.path.join(root, folder, name), encoding="utf-8") as fh:
                    head = fh.read(1024)
            except OSError:
                continue
            if "# /// script" in head:
                found.append(f"{folder}/{name}")
    return sorted(found, key=lambda rel: (FIRST.index(rel) if rel in FIRST else len(FIRST), rel))


def _version(root: str) -> str:
    try:
        with open(os.path.join(root, ".claude-plugin", "plugin.json"), encoding="utf-8") as fh:
            return str(json.load(fh).get("version", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def marker(root: str) -> str:
    """The state file of one plugin folder and version."""
    key = sha1(f"{os.path.abspath(root)}\0{_version(root)}".encode()).hexdigest()[:16]
    return os.path.join(paths.cache_dir(), "ready", f"{key}.json")


def _read(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as fh:
            state = json.load(fh)
        return state if isinstance(state, dict) else {}
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # unreadable: treated like a preparation that never finished


def _write(path: str, state: dict) -> None:
    from agentctx import fsio

    fsio.write_json(path, state)


def _claim(path: str, root: str) -> bool:
    """Create the marker exclusively (two sessions starting at once: one of them prepares)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"status": "started", "root": root, "started": time.time()}, fh)
    return True


def _start(root: str, path: str) -> None:
    argv, env = spawn.python_module("agentctx.prepare", ["--root", root, "--marker", path], path=[spawn.LIB_DIR])
    spawn.detached(argv, env=env, cwd=root)


def at_session_start(root: str | None = None) -> str | None:
    """Start preparing the plugin folder's script environments if that never happened; the one-line notice
    for the user the first time, else None. Only inside Claude Code (``CLAUDE_PLUGIN_ROOT`` set): the demo
    and tests that call the handler in-process prepare nothing. Never raises (a hook must not fail on it)."""
    try:
        root = root or os.environ.get("CLAUDE_PLUGIN_ROOT")
        if not root or not os.path.isdir(root):
            return None
        path = marker(root)
        state = _read(path)
        if state is None:
            if not _claim(path, root):
                return None
            _start(root, path)
            return NOTICE
        status, since = state.get("status"), state.get("finished") or state.get("started") or 0
        age = time.time() - since if isinstance(since, (int, float)) else RESTART_STALE_S
        if (status == "failed" and age >= RETRY_FAILED_S) or (status not in ("done", "failed")
                                                              and age >= RESTART_STALE_S):
            _write(path, {"status": "started", "root": root, "started": time.time(), "retry": True})
            _start(root, path)  # quietly: the user was told the first time
        return None
    except Exception as exc:  # noqa: BLE001 - fail open
        log("prepare", f"not started: {type(exc).__name__}: {exc}")
        return None


def run(root: str, path: str | None = None, *, uv: str | None = None, env: dict[str, str] | None = None) -> dict:
    """``uv sync --script`` every entry script under ``root`` (uv's own locks make parallel runs safe);
    records the outcome in the marker ``path`` when given and in the log. Returns the outcome."""
    import subprocess

    uv = uv or spawn.find_uv()
    started = time.monotonic()
    env = dict(os.environ if env is None else env)
    env.pop("VIRTUAL_ENV", None)  # the hook's own environment: not the one being synced
    failed: dict[str, str] = {}
    recorded = 0
    todo = scripts(root)
    for rel in todo:
        if uv is None:
            failed[rel] = "uv not found"
            continue
        try:
            since = time.time()
            done = subprocess.run([uv, "sync", "--quiet", "--script", os.path.join(root, rel)], env=env, cwd=root,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=SYNC_TIMEOUT_S)
            if done.returncode != 0:
                lines = [line for line in done.stderr.splitlines() if line.strip()]
                failed[rel] = f"uv exited {done.returncode}: " + (lines[-1] if lines else "")
            elif rel.startswith("hooks/"):  # the hook launcher can now skip uv for it
                recorded += envstamp.for_prepared(root, rel, since, env)
        except (OSError, subprocess.SubprocessError) as exc:
            failed[rel] = f"{type(exc).__name__}: {exc}"
    seconds = round(time.monotonic() - started, 1)
    outcome = {"status": "failed" if failed else "done", "root": root, "finished": time.time(),
               "seconds": seconds, "scripts": len(todo), "failed": failed, "recorded": recorded}
    if path:
        _write(path, outcome)
    if failed:
        first = next(iter(failed.items()))
        log("prepare", f"{len(failed)} of {len(todo)} script environments not ready after {seconds} s "
                       f"({first[0]}: {first[1]}); retrying in a later session")
    else:
        log("prepare", f"{len(todo)} script environments ready in {seconds} s")
    return outcome


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m agentctx.prepare", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=plugin_root(), help="the plugin folder (default: this one)")
    ap.add_argument("--marker", default=None, help="state file to record the outcome in (default: the folder's)")
    args = ap.parse_args(argv)
    outcome = run(args.root, args.marker or marker(args.root))
    print(json.dumps(outcome))
    return 0 if outcome["status"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
