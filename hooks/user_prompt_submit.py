#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0"]  # imported only to migrate an outdated store
# ///
"""UserPromptSubmit hook: see lib/agentctx/events/user_prompt_submit.py. Fails open: always exits 0."""

import os
import sys

# Cache our own modules' bytecode even where PYTHONDONTWRITEBYTECODE is set: compiling
# lib/agentctx from source costs ~15 ms per hook run.
sys.dont_write_bytecode = False
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from agentctx.events import frame  # noqa: E402
from agentctx.events.user_prompt_submit import on_user_prompt_submit  # noqa: E402

frame.run("UserPromptSubmit", on_user_prompt_submit)
