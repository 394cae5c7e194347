#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["tomli>=2; python_version < '3.11'"]  # .agentctx/config.toml on Python 3.10
# ///
"""Stop hook: see lib/agentctx/capture/stop.py. Starts extraction detached; prints nothing; exits 0."""

import os
import sys

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from agentctx import hookio  # noqa: E402
from agentctx.capture.stop import on_stop  # noqa: E402

hookio.run("Stop", on_stop)
