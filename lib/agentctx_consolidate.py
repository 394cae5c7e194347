#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "anthropic>=0.69", "model2vec>=0.6", "numpy>=1.26", "apsw>=3.46",
#                 "sqlite-vec>=0.1.6", "tomli>=2; python_version < '3.11'", "psycopg[binary]>=3.2"]
# ///
"""The consolidation pass SessionEnd starts detached (and ``agentctx consolidate`` runs): see
lib/agentctx/consolidation/consolidate.py.

``uv run --script lib/agentctx_consolidate.py [--cwd DIR] [--dry-run] [--no-embeddings] [--json]``
"""

import os
import sys

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agentctx.consolidation.consolidate import main  # noqa: E402

sys.exit(main())
