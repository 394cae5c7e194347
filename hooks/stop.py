#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["tomli>=2; python_version < '3.11'"]  # .agentctx/config.toml on Python 3.10
# ///
"""Stop hook: see lib/agentctx/events/stop.py. Starts extraction detached; prints nothing; exits 0."""

import os
import sys

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from agentctx.events import frame  # noqa: E402
from agentctx.events.stop import on_stop  # noqa: E402

frame.run("Stop", on_stop)
