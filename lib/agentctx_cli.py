#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "click>=8.1", "tomli>=2; python_version < '3.11'", "psycopg[binary]>=3.2"]
# ///
"""Entry point for ``bin/agentctx`` (the plugin's CLI on Claude's Bash PATH)."""

import os
import sys

# Cache our own modules' bytecode even where PYTHONDONTWRITEBYTECODE is set: compiling
# lib/agentctx from source costs ~15 ms per hook run.
sys.dont_write_bytecode = False
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agentctx.surfaces.cli import main  # noqa: E402

main()
