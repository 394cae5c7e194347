"""Atomic file writes: a temporary file beside the target, then one rename, so a reader sees the
old content or the new, never half of either. The one implementation every writer uses."""

from __future__ import annotations

import os


def write_atomic(path: str, data: str | bytes) -> str:
    """Write ``data`` (text as UTF-8) to ``path`` atomically, creating its folder; returns ``path``.

    The temporary file is removed when anything fails, so no ``*.tmp`` is left behind.
    """
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.agentctx-{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def write_json(path: str, value: object, **dump_options: object) -> str:
    """``value`` as JSON, written atomically (``dump_options`` go to ``json.dumps``)."""
    import json  # here: SessionStart's sealed path writes with ``write_atomic`` and must not pay for ``json``

    return write_atomic(path, json.dumps(value, **dump_options))
