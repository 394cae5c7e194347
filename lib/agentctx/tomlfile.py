"""TOML text to a dict: ``tomllib`` (Python 3.11+) or its backport ``tomli`` (3.10). Stdlib on 3.11,
imported only when a file is parsed. One place for every TOML file agentctx reads (project settings,
stack detection, the remote's opt-in)."""

from __future__ import annotations


def load_toml(text: str) -> dict:
    """Parse TOML; ValueError if invalid."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: the scripts that read TOML depend on tomli there
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from None
