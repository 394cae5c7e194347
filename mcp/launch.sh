#!/bin/sh
# Starts the agentctx MCP server (mcp/server.py) over stdio: the plugin.json mcpServers entry.
# The server starts on the standard library, so a Python 3 found by lib/find_python.sh runs it directly, with
# no uv in between (uv run costs 0.1-0.4 s per start and, in the first session after an install, waits for
# downloads). Without one (or when server.py finds it older than 3.10 and sets AGENTCTX_MCP_VIA_UV), uv runs
# it: found by lib/find_uv.sh (Claude Code may give MCP servers a minimal PATH). Without either: one line on
# stderr and exit 127, so Claude Code shows the server as failed.
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
if [ -z "${AGENTCTX_MCP_VIA_UV:-}" ]; then
  . "$root/lib/find_python.sh"
  find_python
  [ -z "$py_bin" ] || exec "$py_bin" -S "$root/mcp/server.py"
fi
. "$root/lib/find_uv.sh"
find_uv
if [ -z "$uv_bin" ]; then
  echo "agentctx MCP server: neither Python >= 3.10 nor uv found; install uv: https://docs.astral.sh/uv/getting-started/installation/" >&2
  exit 127
fi
exec "$uv_bin" run --quiet --script "$root/mcp/server.py"
