#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "tomli>=2; python_version < '3.11'"]
# # sqlite-utils: imported only to migrate an outdated store; tomli: .agentctx/config.toml on Python 3.10
# ///
"""SubagentStop hook: see lib/agentctx/events/subagent_stop.py. Prints nothing; fails open: always
exits 0."""

import os
import sys

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from agentctx.events import frame  # noqa: E402
from agentctx.events.subagent_stop import on_subagent_stop  # noqa: E402

frame.run("SubagentStop", on_subagent_stop)
