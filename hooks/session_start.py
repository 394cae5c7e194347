#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "tomli>=2; python_version < '3.11'"]
# # sqlite-utils: imported only to migrate an outdated store; tomli: .agentctx/config.toml on Python 3.10
# ///
"""SessionStart hook: see lib/agentctx/events/session_start.py. Fails open: always exits 0."""

import os
import sys

# Cache our own modules' bytecode even where PYTHONDONTWRITEBYTECODE is set: compiling
# lib/agentctx from source costs ~15 ms per hook run.
sys.dont_write_bytecode = False
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from agentctx.events import frame  # noqa: E402
from agentctx.events.session_start import on_session_start  # noqa: E402

frame.run("SessionStart", on_session_start)
