"""User settings: one small JSON file, ``<data dir>/config.json``. Stdlib only (the Stop hook reads it).

``llm``: extraction through the Anthropic API at turn end (ADR-009; on by default, needs
``ANTHROPIC_API_KEY``). ``claude_login``: when there is no API key, extract through the user's
own Claude Code login by running ``claude -p`` (opt-in, off by default). Without either, the
deterministic capture of explicit user statements runs instead.
"""

from __future__ import annotations

import json

from agentctx import paths

DEFAULTS: dict[str, bool] = {"llm": True, "claude_login": False, "embeddings": True}  # embeddings: see consolidate.py


def path() -> str:
    return paths.sub("config.json")


def load() -> dict[str, bool]:
    """The settings, defaults filled in; an unreadable file counts as empty."""
    out = dict(DEFAULTS)
    try:
        with open(path(), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return out
    if isinstance(data, dict):
        for key, default in DEFAULTS.items():
            if isinstance(data.get(key), type(default)):
                out[key] = data[key]
    return out


def save(**changes: bool) -> dict[str, bool]:
    """Apply ``changes`` (known keys only) and write the file atomically; return the settings."""
    unknown = set(changes) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    current = load()
    current.update({k: bool(v) for k, v in changes.items()})
    from agentctx.fsio import write_atomic

    write_atomic(path(), json.dumps(current, indent=2, sort_keys=True) + "\n")
    return current
