"""Script environments prepared before they are needed, so the first session after an install has its tools.

Every entry point (hooks/*.py, mcp/server.py, lib/agentctx_*.py) is a PEP 723 script run by
``uv run --script`` with a committed lock beside it (``X.py.lock``, written by ``uv lock --script``).
uv keys a script's environment by the script's path, so a new plugin folder (install or update)
starts without any: Claude Code then starts the MCP server while uv is still downloading its packages,
and gives up after ``MCP_TIMEOUT``. The first SessionStart of a plugin folder therefore starts one
detached process that runs ``uv sync --script`` on every entry script, the MCP server first. The MCP
server itself starts on the standard library (mcp/launch.sh runs it with any Python 3.10+), so its tools are
there in the very first session; only where no such Python exists does SessionStart say, once, in one line
the person sees (``systemMessage``), that they arrive in the next session. When uv cannot install (offline,
a proxy, a rejected certificate), SessionStart says so in one line with the cause and the fix, once per cause
(``classify``, ``notice_once``; hooks/launch.sh calls ``--uv-failed`` when uv fails before a hook runs), and
every other hook stays silent. Whether a folder is prepared is machine state
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
          "its MCP tools arrive in the next session (no Python 3.10+ found to start them without those packages).")
RETRY_FAILED_S = 3600  # a preparation that failed (e.g. offline) is tried again, quietly, after this
RESTART_STALE_S = 1800  # one that never finished (killed, machine slept) is started again after this
SYNC_TIMEOUT_S = 900
FIRST = ("mcp/server.py", "hooks/session_start.py", "hooks/user_prompt_submit.py")  # needed soonest


# Why uv could not install, from its error text (first match wins: a certificate error through a proxy is a
# certificate error): (cause, words of uv's message in lower case, what happened, the fix).
CAUSES = (
    ("certificate", ("invalid peer certificate", "certificate verify failed", "unknownissuer", "self-signed certificate",
                     "self signed certificate"),
     "a TLS certificate was rejected, as behind a proxy or antivirus that inspects TLS",
     "set UV_NATIVE_TLS=1 (use the system's certificates) or SSL_CERT_FILE=/path/to/its-ca.pem where Claude Code "
     "starts, then restart it"),
    ("offline", ("network connectivity is disabled", "network was disabled", "--offline"),
     "uv is offline and the packages are not in its cache",
     "let uv go online once (unset UV_OFFLINE, or `offline = true` in uv.toml), then start a new session"),
    ("proxy", ("proxy", "tunnel error"),
     "the proxy did not let uv through",
     "check HTTPS_PROXY / HTTP_PROXY / NO_PROXY where Claude Code starts"),
    ("network", ("dns error", "failed to lookup address", "connection refused", "timed out", "network is unreachable",
                 "error sending request", "request failed after", "failed to fetch", "failed to download"),
     "PyPI (files.pythonhosted.org) could not be reached",
     "connect to the network (or set UV_INDEX_URL to an index you can reach), then start a new session"),
)
UV_NOTICE = "agentctx cannot install its Python packages with uv: {what}. Until then {effect}."
HOOKS_OFF = "agentctx adds no context (its MCP tools work, with keyword search only)"
ALL_OFF = "agentctx is inactive"
SOME_OFF = "parts of agentctx are inactive"


def classify(uv_stderr: str) -> tuple[str, str]:
    """(cause, what happened with uv's own words and the fix) for uv's error output; cause ``uv`` and uv's last
    line when the cause is unknown."""
    lines = [line.strip() for line in uv_stderr.splitlines() if line.strip()]
    text = uv_stderr.lower()
    for cause, words, what, fix in CAUSES:
        if any(word in text for word in words):
            said = [line for line in lines if any(word in line.lower() for word in words)]
            detail = said[-1].removeprefix("cause: ")[:160] if said else ""  # the deepest cause uv names
            return cause, f"{what} (uv: {detail}). Fix: {fix}" if detail else f"{what}. Fix: {fix}"
    return "uv", f"uv failed ({(lines[-1] if lines else 'no message')[:200]}); details in {_log_path()}"


def _log_path() -> str:
    from agentctx.logs import log_path

    return log_path()


def notice_once(cause: str, line: str) -> str | None:
    """``line`` the first time ``cause`` is met since uv last succeeded, else None (one marker file per cause)."""
    folder = os.path.join(paths.cache_dir(), "notices")
    try:
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(os.path.join(folder, f"uv-{cause}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return None
    except OSError:
        pass  # cannot remember: say it (better twice than never)
    return line


def clear_notices() -> None:
    """uv installed: a later failure is told again."""
    folder = os.path.join(paths.cache_dir(), "notices")
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith("uv-"):
            try:
                os.remove(os.path.join(folder, name))
            except OSError:
                pass


def uv_failed(uv_stderr: str, effect: str = HOOKS_OFF) -> str | None:
    """The one line SessionStart shows when uv could not install packages, once per cause."""
    cause, what = classify(uv_stderr)
    return notice_once(cause, UV_NOTICE.format(what=what, effect=effect))


def server_starts_without_uv(root: str) -> bool:
    """Whether mcp/launch.sh finds a Python >= 3.10 to start the MCP server on (lib/find_python.sh)."""
    import subprocess

    probe = ('. "$1/lib/find_python.sh"; find_python; [ -n "$py_bin" ] && '
             'exec "$py_bin" -S -c "import sys; sys.exit(sys.version_info < (3, 10))"')
    try:
        return subprocess.run(["sh", "-c", probe, "sh", root], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


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


def settled(root: str) -> bool:
    """Whether the plugin folder's environments were prepared: SessionStart has nothing more to start or
    say about them, now or as time passes (``injection.sealing``)."""
    state = _read(marker(root))
    return bool(state) and state.get("status") == "done"


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
    """Start preparing the plugin folder's script environments if that never happened; the one line for the
    person, else None: the first time only when the MCP server cannot start without those environments, and
    once per cause when a preparation failed. Only inside Claude Code (``CLAUDE_PLUGIN_ROOT`` set): the demo
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
            return None if server_starts_without_uv(root) else NOTICE
        status, since = state.get("status"), state.get("finished") or state.get("started") or 0
        age = time.time() - since if isinstance(since, (int, float)) else RESTART_STALE_S
        if (status == "failed" and age >= RETRY_FAILED_S) or (status not in ("done", "failed")
                                                              and age >= RESTART_STALE_S):
            _write(path, {"status": "started", "root": root, "started": time.time(), "retry": True})
            _start(root, path)  # quietly: the user was told the first time
        if status == "failed" and isinstance(state.get("cause"), str) and isinstance(state.get("notice"), str):
            return notice_once(state["cause"], UV_NOTICE.format(what=state["notice"], effect=SOME_OFF))
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
    errors = ""  # uv's first error output, for the cause
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
                errors = errors or done.stderr
            elif rel.startswith("hooks/"):  # the hook launcher can now skip uv for it
                recorded += envstamp.for_prepared(root, rel, since, env)
        except (OSError, subprocess.SubprocessError) as exc:
            failed[rel] = f"{type(exc).__name__}: {exc}"
    envs = {rel: found for rel in todo if rel not in failed and (found := _describe(uv, root, rel, env))}
    seconds = round(time.monotonic() - started, 1)
    outcome = {"status": "failed" if failed else "done", "root": root, "finished": time.time(),
               "seconds": seconds, "scripts": len(todo), "failed": failed, "envs": envs, "recorded": recorded}
    if errors:
        outcome["cause"], outcome["notice"] = classify(errors)
    elif not failed:
        clear_notices()
    if path:
        _write(path, outcome)
    if failed:
        first = next(iter(failed.items()))
        log("prepare", f"{len(failed)} of {len(todo)} script environments not ready after {seconds} s "
                       f"({first[0]}: {first[1]}); retrying in a later session")
    else:
        log("prepare", f"{len(todo)} script environments ready in {seconds} s")
    return outcome


_DESCRIBE = ("import json, sys, sysconfig; print(json.dumps({'python': sys.executable, 'version': '%d.%d' % "
             "sys.version_info[:2], 'paths': list(dict.fromkeys(sysconfig.get_path(k) for k in ('purelib', 'platlib')))}))")


def _describe(uv: str | None, root: str, rel: str, env: dict[str, str]) -> dict | None:
    """{python, version, paths (site-packages)} of a prepared script's environment, or None."""
    import subprocess

    if uv is None:
        return None
    try:
        python = subprocess.run([uv, "python", "find", "--script", os.path.join(root, rel)], env=env, cwd=root,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60).stdout.strip()
        if not python:
            return None
        done = subprocess.run([python, "-c", _DESCRIBE], env=env, cwd=root, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)
        found = json.loads(done.stdout)
        return found if isinstance(found, dict) and isinstance(found.get("paths"), list) else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def use_packages(root: str, rel: str) -> bool:
    """Put the site-packages of the prepared environment of script ``rel`` on ``sys.path`` (after lib/), so a
    process started by another Python of the same version (mcp/launch.sh) imports its packages. False when
    that environment is not prepared or has another Python version (then the process does without)."""
    state = _read(marker(root)) or {}
    found = (state.get("envs") or {}).get(rel) if isinstance(state.get("envs"), dict) else None
    if not isinstance(found, dict) or found.get("version") != f"{sys.version_info[0]}.{sys.version_info[1]}":
        return False
    paths_ = [p for p in found.get("paths") or [] if isinstance(p, str) and os.path.isdir(p) and p not in sys.path]
    sys.path[1:1] = paths_
    return True


def environments(root: str, rels: list[str], uv: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """{script: its environment folder in uv's cache} for the scripts that have one, as uv itself keys them
    (by the script's path: ``uv sync --dry-run --script`` names the folder, and names nothing else when the
    script has none, unlike ``uv python find``), for ``agentctx uninstall``."""
    import re
    import subprocess

    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "VIRTUAL_ENV"}
    found = {}
    for rel in rels:
        try:
            done = subprocess.run([uv, "sync", "--dry-run", "--offline", "--script", os.path.join(root, rel)],
                                  env=env, cwd=root, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        named = re.search(r"Would use script environment at: (.+)", done.stdout + done.stderr)
        if named and os.path.isfile(os.path.join(named.group(1).strip(), "pyvenv.cfg")):
            found[rel] = named.group(1).strip()
    return found


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m agentctx.prepare", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=plugin_root(), help="the plugin folder (default: this one)")
    ap.add_argument("--marker", default=None, help="state file to record the outcome in (default: the folder's)")
    ap.add_argument("--uv-failed", metavar="FILE", help="uv's error output (a hook's env could not be made): print "
                                                        "SessionStart's systemMessage for it, once per cause")
    args = ap.parse_args(argv)
    if args.uv_failed:
        try:
            with open(args.uv_failed, encoding="utf-8", errors="replace") as fh:
                errors = fh.read()[-20_000:]
        except OSError:
            errors = ""
        line = uv_failed(errors, HOOKS_OFF if os.path.exists(paths.db_path()) else ALL_OFF)
        if line:
            print(json.dumps({"systemMessage": line}))
        return 0
    outcome = run(args.root, args.marker or marker(args.root))
    print(json.dumps(outcome))
    return 0 if outcome["status"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
