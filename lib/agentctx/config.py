"""User settings: one small JSON file, ``<data dir>/config.json``. Stdlib only (the Stop hook reads it).

``llm``: extraction through the Anthropic API at turn end (ADR-009; on by default, needs
``ANTHROPIC_API_KEY``). ``claude_login``: when there is no API key, extract through the user's
own Claude Code login by running ``claude -p`` (on by default, used when a logged-in ``claude`` is
found; see ``vialogin``). Without either, the deterministic capture of what the person states runs.
"""

from __future__ import annotations

import json

from agentctx import paths

DEFAULTS: dict[str, bool | float] = {
    "llm": True, "claude_login": True, "embeddings": True,  # embeddings: see consolidate.py
    # Spending caps for model calls (extraction, rollup), in USD at Haiku 4.5 prices: per UTC day across
    # all projects, and per session. Reached: model calls pause (agentctx.spending). 0 allows none.
    "daily_cap_usd": 2.0, "session_cap_usd": 0.5,
}


def path() -> str:
    return paths.sub("config.json")


def _valid(default: bool | float, value: object) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def load() -> dict[str, bool | float]:
    """The settings, defaults filled in; an unreadable file (or value) counts as unset."""
    out = dict(DEFAULTS)
    try:
        with open(path(), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return out
    if isinstance(data, dict):
        for key, default in DEFAULTS.items():
            if _valid(default, data.get(key)):
                out[key] = data[key] if isinstance(default, bool) else float(data[key])
    return out


def save(**changes: bool | float) -> dict[str, bool | float]:
    """Apply ``changes`` (known keys only) and write the file atomically; return the settings."""
    unknown = set(changes) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    for key, value in changes.items():
        if not isinstance(DEFAULTS[key], bool) and not _valid(DEFAULTS[key], value):
            raise ValueError(f"{key} must be a number of US dollars >= 0, not {value!r}")
    current = load()
    current.update({k: bool(v) if isinstance(DEFAULTS[k], bool) else float(v) for k, v in changes.items()})
    from agentctx.fsio import write_atomic

    write_atomic(path(), json.dumps(current, indent=2, sort_keys=True) + "\n")
    return current
