#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "anthropic>=0.69", "tomli>=2; python_version < '3.11'"]
# ///
"""The extraction worker the Stop hook starts detached: see lib/agentctx/consolidation/worker.py and extract.py.

``uv run --script lib/agentctx_worker.py --session-id S --transcript PATH [--cwd DIR] [--final]``
"""

import os
import sys

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agentctx.consolidation.worker import main  # noqa: E402

sys.exit(main())
