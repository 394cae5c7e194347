"""TOML text to a dict: ``tomllib`` (Python 3.11+) or its backport ``tomli`` (3.10). Stdlib on 3.11,
imported only when a file is parsed. One place for every TOML file agentctx reads (project settings,
stack detection, the remote's opt-in), with a nesting bound checked before the parser runs
(``safefile.nesting``): TOML nested 2,000 levels deep is a bad file, not a RecursionError."""

from __future__ import annotations

from agentctx.safefile import MAX_DEPTH, TOML_TOKENS, nesting


def load_toml(text: str, max_depth: int = MAX_DEPTH) -> dict:
    """Parse TOML; ValueError if invalid or nested deeper than ``max_depth``."""
    if nesting(text, TOML_TOKENS) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    try:
        import tomllib
    except ImportError:  # Python 3.10: the scripts that read TOML depend on tomli there
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
