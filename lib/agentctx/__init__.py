"""agentctx: a structured, bi-temporal context layer for coding agents.

The packages follow the data flow, and each imports only from those before it in ``LAYERS`` (never
a later one, not even inside a function; ``tests/test_architecture.py`` checks every import):

* the base modules (``agentctx/*.py``): rules and plumbing with no store (budgets, scoring, redaction,
  kinds, project identity and settings, paths, clock, ids, logs, rendering, the model clients);
* ``store``: the SQLite file, every SQL statement on its tables, the query rules;
* ``capture``: what a session says and does, turned into records (transcripts, observations,
  explicit statements, model extraction, the handover and anchor, stack detection);
* ``sharing``: files people read or share (CLAUDE.md drift, the team file, export/import, daily logs);
* ``maintenance``: what a person runs on the store (doctor, forget and purge, the secret rescan);
* ``remote``: team sync through PostgreSQL;
* ``injection``: what reaches a session (the digest, per-prompt selection, subagent briefs);
* ``consolidation``: the detached work between sessions (the extraction worker, the consolidation pass);
* ``events``: one module per Claude Code hook event, and the fail-open frame they run in;
* ``surfaces``: the CLI, the MCP tools, the dashboard, the demo.

Hot-path modules (SessionStart, UserPromptSubmit) import only the standard library; everything
heavy (sqlite-utils, click, the SDKs) is imported lazily by the modules that need it.
"""

__version__ = "0.1.0"

LAYERS = ("base", "store", "capture", "sharing", "maintenance", "remote", "injection", "consolidation",
          "events", "surfaces")
