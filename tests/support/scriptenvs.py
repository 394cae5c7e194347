"""What the tests' hook and plugin processes inherit from the developer's shell, and the uv script
environments they need, prepared by the suite itself (``agentctx.prepare``, as the first SessionStart
of an install does), online where the machine is, so nothing depends on ``.ci/run`` having run first."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.bundle import test_cache

# What a user's shell passes to Claude Code and so to hooks and the MCP server: uv's settings (any UV_*),
# where caches live, and the CA bundle variables that TLS needs on machines with their own certificates.
PASSTHROUGH = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
               "XDG_CACHE_HOME", "AGENTCTX_CACHE_DIR")
STATE_DIR = test_cache() / "state"  # AGENTCTX_CACHE_DIR for the whole test session (never the real one)


def passthrough(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The user-shell variables above and every ``UV_*`` variable that is set."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items() if k in PASSTHROUGH or k.startswith("UV_")}


_prepared: dict[str, dict] = {}


def prepare(root: Path) -> dict:
    """``uv sync --script`` every entry script under ``root`` (once per test session and folder) and mark
    the folder prepared, so a SessionStart under test does not start the preparation again."""
    key = str(Path(root).resolve())
    if key not in _prepared:
        from agentctx import prepare as prep

        _prepared[key] = prep.run(key, prep.marker(key))
    return _prepared[key]
