"""Baseline for bench/hooks_bench.py: the least any Python hook that reads the store can do, run by the script
environment's interpreter like the hooks: parse the event's JSON from stdin, open the store read-only, read one
value, print a JSON answer. Nothing of agentctx is imported. Its ratio to the bare interpreter is the floor
under the hooks' ratios (issue 21's targets are stated as such ratios)."""

import json
import os
import sqlite3
import sys

event = json.loads(sys.stdin.read() or "{}")
path = os.path.join(os.environ["AGENTCTX_HOME"], "agentctx.db")
conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
version = conn.execute("PRAGMA user_version").fetchone()[0]
conn.close()
sys.stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": event.get("hook_event_name", ""),
                                                    "additionalContext": f"schema {version}"}}))
