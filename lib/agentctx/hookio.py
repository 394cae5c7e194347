"""The fail-open frame every hook runs in: read stdin JSON, call a handler, print, exit 0.

Any error (bad stdin, locked or damaged store, a bug) is written as one line to the log
and the hook exits 0 with no output, so agentctx never blocks or erases anything in a
session. A damaged store is moved aside and the handler retried once on a fresh store.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from agentctx import clock, paths

MAX_STDIN_BYTES = 16 * 1024 * 1024
HOOK_BUSY_MS = 1000
LOG_MAX_BYTES = 1024 * 1024

Handler = Callable[[dict], "dict | None"]


def log_path() -> str:
    return paths.sub("logs", "agentctx.log")


def log(event: str, message: str) -> None:
    """Append one line to the log (rotated at 1 MB); falls back to the temp dir."""
    line = f"{clock.now()} {event} {' '.join(str(message).split())[:2000]}\n"
    fallback = os.path.join(os.environ.get("TMPDIR") or ("C:\\Temp" if os.name == "nt" else "/tmp"), "agentctx-hooks.log")
    for target in (log_path(), fallback):
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.exists(target) and os.path.getsize(target) > LOG_MAX_BYTES:
                os.replace(target, target + ".1")
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(line)
            return
        except OSError:
            continue


def read_payload(stream=None) -> dict:
    """Parse the hook's stdin; raises ValueError on anything but a JSON object."""
    stream = stream or sys.stdin.buffer
    raw = stream.read(MAX_STDIN_BYTES + 1)
    if len(raw) > MAX_STDIN_BYTES:
        raise ValueError(f"stdin larger than {MAX_STDIN_BYTES} bytes")
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        raise ValueError("empty stdin")
    payload = json.loads(text)
    if not isinstance(payload, dict):
        raise ValueError(f"stdin is JSON {type(payload).__name__}, not an object")
    return payload


def field(payload: dict, name: str, default: str = "") -> str:
    """A string field from the payload (non-strings count as missing)."""
    value = payload.get(name)
    return value if isinstance(value, str) else default


def session_id(payload: dict) -> str:
    return field(payload, "session_id") or os.environ.get("CLAUDE_CODE_SESSION_ID") or "unknown"


def cwd(payload: dict) -> str:
    found = field(payload, "cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    return found if os.path.isdir(found) else os.getcwd()


def emit(output: dict) -> None:
    data = json.dumps(output, ensure_ascii=False).encode("utf-8")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def run(event: str, handler: Handler) -> None:
    """Run ``handler`` as the hook for ``event`` and exit 0, whatever happens."""
    code = 0
    try:
        if os.environ.get("AGENTCTX_DISABLE"):
            return
        payload = read_payload()
        output = _call(event, handler, payload)
        if output:
            emit(output)
    except BaseException as exc:  # noqa: BLE001 - fail open, always
        if not isinstance(exc, SystemExit):
            log(event, f"error: {type(exc).__name__}: {exc}")
    finally:
        try:
            sys.stdout.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def _call(event: str, handler: Handler, payload: dict) -> dict | None:
    from agentctx.store import db

    try:
        return handler(payload)
    except Exception as exc:
        if not db.is_corruption(exc):
            raise
        moved = db.quarantine(reason=str(exc))
        log(event, f"store damaged ({exc}); moved to {moved}; retrying on a fresh store")
        return handler(payload)
