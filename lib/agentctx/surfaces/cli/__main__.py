"""``python -m agentctx.surfaces.cli``: the same as ``agentctx``."""

from agentctx.surfaces.cli import main

main()
