#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "tomli>=2; python_version < '3.11'"]
# # sqlite-utils: imported only to migrate an outdated store; tomli: .agentctx/config.toml on Python 3.10
# ///
"""SubagentStart hook: see lib/agentctx/events/subagent_start.py. Prints the brief; fails open:
always exits 0."""

import os
import sys

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from agentctx.events import frame  # noqa: E402
from agentctx.events.subagent_start import on_subagent_start  # noqa: E402

frame.run("SubagentStart", on_subagent_start)
