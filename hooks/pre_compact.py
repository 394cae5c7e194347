#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "tomli>=2; python_version < '3.11'"]
# # sqlite-utils: imported only to migrate an outdated store; tomli: .agentctx/config.toml on Python 3.10
# ///
"""PreCompact hook: see lib/agentctx/events/pre_compact.py. Never blocks compaction: prints nothing, exits 0."""

import os
import sys

# Cache our own modules' bytecode even where PYTHONDONTWRITEBYTECODE is set: compiling
# lib/agentctx from source costs ~15 ms per hook run.
sys.dont_write_bytecode = False
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from agentctx.events import frame  # noqa: E402
from agentctx.events.pre_compact import on_pre_compact  # noqa: E402

frame.run("PreCompact", on_pre_compact)
