"""Surfaces: how a person or an agent reaches agentctx: the CLI (``cli``), the MCP tools
(``mcp_tools``, served by ``mcp/server.py``), the dashboard (``ui``) and the demo.
"""
