#!/usr/bin/env python3
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "model2vec>=0.6", "numpy>=1.26", "apsw>=3.46", "sqlite-vec>=0.1.6",
#                 "tomli>=2; python_version < '3.11'"]
# # None of these is needed to start or to answer with keyword search: the server runs on the standard library.
# # sqlite-utils: only to migrate an outdated store; model2vec, numpy, apsw, sqlite-vec: hybrid ctx_search;
# # tomli: TOML on Python 3.10 (tomllib on 3.11+)
# ///
"""agentctx MCP server (stdio): search and read the project's context store, record and supersede facts.

Claude Code starts it from the plugin's ``mcpServers`` entry (``mcp/launch.sh``), which runs it with any
Python >= 3.10 directly (no ``uv run``): the protocol (``agentctx.surfaces.mcp_stdio``) and the tool list
(``agentctx.surfaces.mcp_schema``) are standard library only, so ``initialize`` and ``tools/list`` are
answered within milliseconds, also in the first session after an install, before uv has installed anything.
The first tool call opens the store (``agentctx.surfaces.mcp_tools.Service``), with the packages of this
script's uv environment on ``sys.path`` once ``agentctx.prepare`` has made it (same Python version only;
without them ctx_search is keyword-only and an outdated store is not migrated). The project comes from
``CLAUDE_PROJECT_DIR``, else the client's first root, else the working directory. Logs go to stderr only.
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = False  # cache lib/agentctx bytecode even where PYTHONDONTWRITEBYTECODE is set
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lib"))

if sys.version_info < (3, 10):  # noqa: UP036 - launch.sh found only an old Python: it lets uv pick one
    os.environ["AGENTCTX_MCP_VIA_UV"] = "1"
    os.execv("/bin/sh", ["sh", os.path.join(ROOT, "mcp", "launch.sh")])

from agentctx import __version__  # noqa: E402
from agentctx.surfaces import mcp_schema, mcp_stdio  # noqa: E402


class Tools(mcp_stdio.Handler):
    """The Service behind the tools, made on the first call."""

    def __init__(self) -> None:
        self.service = None

    def open(self, session: mcp_stdio.Session) -> None:
        from agentctx import prepare

        prepare.use_packages(ROOT, "mcp/server.py")  # looked for again on each call until open succeeds
        from agentctx.surfaces import mcp_tools

        try:
            service = mcp_tools.Service()
            service.conn()  # opens the store: creating or migrating one needs sqlite-utils
        except ImportError as exc:
            raise mcp_stdio.CallRefused(
                f"agentctx cannot open its store yet: its Python packages are not installed ({exc}). They are "
                "installed in the background when a session starts; if uv cannot install them, the first line "
                "of the session says why. Try again later.") from None
        if not service.from_env:
            folder = _first_root(session)
            if folder:
                service.set_project_dir(folder)
        service.warm(detect=True)
        self.service = service

    def call(self, session: mcp_stdio.Session, tool: mcp_schema.Tool, args: list) -> str:
        from agentctx.surfaces import mcp_tools

        try:
            return getattr(self.service, tool.method)(*args)
        except mcp_tools.ToolInputError as exc:
            raise mcp_stdio.CallRefused(str(exc)) from None

    def close(self) -> None:
        if self.service is not None:
            self.service.close()


def _first_root(session: mcp_stdio.Session) -> str | None:
    """The client's first file:// root that is a folder, if the client has roots."""
    if "roots" not in session.client_capabilities:
        return None
    from urllib.parse import unquote, urlparse

    try:
        roots = session.request("roots/list").get("roots") or []
    except Exception as exc:  # noqa: BLE001 - roots are a hint: keep the working directory
        print(f"agentctx-mcp: roots/list failed: {exc}", file=sys.stderr, flush=True)
        return None
    for root in roots:
        uri = urlparse(str(root.get("uri", "")) if isinstance(root, dict) else "")
        if uri.scheme == "file" and os.path.isdir(unquote(uri.path)):
            return unquote(uri.path)
    return None


if __name__ == "__main__":
    mcp_stdio.Session(Tools(), "agentctx", __version__, mcp_schema.INSTRUCTIONS).serve()
