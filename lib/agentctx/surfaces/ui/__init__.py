"""The local dashboard (``agentctx ui``): a Starlette app over the store, bound to 127.0.0.1.

``data`` reads and writes the store for each view, ``guard`` enforces ADR-015 (Host, cross-site
and token checks), ``app`` assembles the routes and runs uvicorn until the server goes idle.
"""
