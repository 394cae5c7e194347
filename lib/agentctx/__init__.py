"""agentctx: a structured, bi-temporal context layer for coding agents.

Hot-path modules (paths, clock, ids, budgets, scoring, redact, db, project, records,
search, render, sessions, digest, turn, hookio) import only the standard library.
Everything heavy (sqlite-utils, click) is imported lazily by the modules that need it.
"""

__version__ = "0.1.0"
