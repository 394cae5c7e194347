"""Where agentctx keeps its data: the user data directory, never the plugin folder.

The directory is the one platformdirs gives for ``user_data_dir("agentctx", appauthor=False)``.
Importing platformdirs costs ~16 ms (it pulls in pathlib), too much for the hook hot path,
so the same rule is computed here with ``os`` alone; ``tests/test_paths.py`` pins it to
platformdirs' own Unix, macOS and Windows classes. ``AGENTCTX_HOME`` overrides it.
"""

from __future__ import annotations

import os
import sys

APP = "agentctx"


def data_dir() -> str:
    """The data directory (not created here)."""
    home = os.environ.get("AGENTCTX_HOME")
    if home:
        return os.path.abspath(os.path.expanduser(home))
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(
            os.path.expanduser("~"), "AppData", "Local"
        )
        return os.path.join(os.path.normpath(base), APP)
    # Like platformdirs (Unix and macOS alike): an absolute $XDG_DATA_HOME wins; the XDG
    # spec says a relative one is invalid, so it is ignored.
    base = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):
        default = "~/Library/Application Support" if sys.platform == "darwin" else "~/.local/share"
        base = os.path.expanduser(default)
    return os.path.join(base, APP)


def cache_dir() -> str:
    """The cache directory (not created here): machine state that may be deleted at any time, such as
    which plugin folders have their script environments prepared. platformdirs'
    ``user_cache_dir("agentctx", appauthor=False)``; ``AGENTCTX_CACHE_DIR`` overrides it."""
    override = os.environ.get("AGENTCTX_CACHE_DIR")
    if override:
        return os.path.abspath(os.path.expanduser(override))
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return os.path.join(os.path.normpath(base), APP, "Cache")
    base = os.environ.get("XDG_CACHE_HOME", "")  # an absolute one wins on macOS too, as in platformdirs
    if not os.path.isabs(base):
        base = os.path.expanduser("~/Library/Caches" if sys.platform == "darwin" else "~/.cache")
    return os.path.join(base, APP)


def db_path() -> str:
    """The single SQLite store shared by every project."""
    return os.path.join(data_dir(), "agentctx.db")


def sub(*parts: str) -> str:
    """A path below the data directory, e.g. ``sub("digests", "p.json")``."""
    return os.path.join(data_dir(), *parts)


def ensure(path: str) -> str:
    """Create a directory (and parents) if needed, owner-only (0700: the store and logs hold project
    knowledge); return it."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def tilde(text: str) -> str:
    """``text`` with the home folder written as ``~`` (``/home/ana/src/x`` -> ``~/src/x``): a stored
    observation never carries the person's absolute home path."""
    home = os.path.expanduser("~").rstrip("/\\")
    if not text or len(home) < 2 or home not in text:
        return text
    import re

    return re.sub(re.escape(home) + r"(?=[/\\]|\b|$)", "~", text)
