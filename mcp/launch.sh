#!/bin/sh
# Starts the agentctx MCP server (mcp/server.py) with uv, over stdio: the plugin.json mcpServers entry.
# uv is found by lib/find_uv.sh (Claude Code may give MCP servers a minimal PATH). Without uv: one line
# on stderr and exit 127, so Claude Code shows the server as failed.
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
. "$root/lib/find_uv.sh"
find_uv
if [ -z "$uv_bin" ]; then
  echo "agentctx MCP server: uv not found; install it: https://docs.astral.sh/uv/getting-started/installation/" >&2
  exit 127
fi
exec "$uv_bin" run --quiet --script "$root/mcp/server.py"
