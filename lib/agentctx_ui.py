#!/usr/bin/env -S uv run --quiet --script
# /// script
# requires-python = ">=3.10"
# dependencies = ["sqlite-utils>=4.0", "starlette>=0.40", "uvicorn>=0.30", "model2vec>=0.6", "numpy>=1.26",
#                 "apsw>=3.46", "sqlite-vec>=0.1.6"]
# # model2vec, numpy, apsw, sqlite-vec: the record search ranks like ctx_search (hybrid) once vectors exist
# ///
"""The dashboard server ``agentctx ui`` runs through uv: see lib/agentctx/surfaces/ui/app.py.

``uv run --script lib/agentctx_ui.py [--port N] [--no-browser] [--project-id ID] [--idle-seconds S]
[--ready-file PATH]``
"""

import argparse
import os
import sys

sys.dont_write_bytecode = False
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agentctx.surfaces.ui import app  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(prog="agentctx_ui", description="agentctx dashboard on 127.0.0.1")
    parser.add_argument("--port", type=int, default=None, help="exact port (default: 7327 or the next free one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open the browser")
    parser.add_argument("--project-id", default=None, help="project shown first")
    parser.add_argument("--idle-seconds", type=float, default=app.IDLE_SECONDS, help="exit after this long idle")
    parser.add_argument("--ready-file", default=None, help="write {url, port, pid} here once listening")
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    parser.add_argument("--watch-pid", type=int, action="append", default=[],
                        help="exit when this process is gone (repeatable; what `agentctx ui` passes)")
    args = parser.parse_args()
    try:
        return app.serve(port=args.port, idle_seconds=args.idle_seconds, open_browser=not args.no_browser,
                         project_id=args.project_id, ready_file=args.ready_file, quiet=args.quiet,
                         watch_pids=args.watch_pid)
    except OSError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
