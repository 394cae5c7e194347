"""The log file: one line per event, never an exception. Stdlib only (hooks and workers write it)."""

from __future__ import annotations

import os

from agentctx import paths

LOG_MAX_BYTES = 1024 * 1024


def log_path() -> str:
    return paths.sub("logs", "agentctx.log")


def log(event: str, message: str) -> None:
    """Append one line to the log (rotated at 1 MB); falls back to the temp dir."""
    from agentctx import clock  # here: ``datetime``, which a hook that logs nothing (SessionStart sealed) never needs

    line = f"{clock.now()} {event} {' '.join(str(message).split())[:2000]}\n"
    fallback = os.path.join(os.environ.get("TMPDIR") or ("C:\\Temp" if os.name == "nt" else "/tmp"), "agentctx-hooks.log")
    for target in (log_path(), fallback):
        try:
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            if os.path.exists(target) and os.path.getsize(target) > LOG_MAX_BYTES:
                os.replace(target, target + ".1")
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # owner-only, even in /tmp
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(line)
            return
        except OSError:
            continue
