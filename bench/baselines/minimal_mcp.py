"""Baseline for bench/claude_start_bench.py: the least an MCP server can be, a stdio JSON-RPC loop on the standard
library with one tool that does nothing (run with ``python3 -S``). A plugin whose only part is this server shows
what Claude Code itself adds to a session for any plugin MCP server, whatever the server does."""

import json
import sys

TOOL = {"name": "noop", "description": "Does nothing.", "inputSchema": {"type": "object", "properties": {}}}


def answer(msg: dict) -> dict | None:
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        return None  # a notification
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion") or "2025-06-18"
        result = {"protocolVersion": version, "capabilities": {"tools": {}},
                  "serverInfo": {"name": "minimal", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": ""}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": mid, "result": result}


try:
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()
except KeyboardInterrupt:
    pass
