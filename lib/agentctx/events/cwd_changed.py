"""The session's current folder follows ``cd``: CwdChanged, and PostToolUse for a Bash ``cd`` / ``pushd``.

The hooks take the project from each payload's ``cwd`` (it follows ``cd``), but the MCP server is one
long-lived process started in the session's first folder. So the folder the session is in now is
kept on its session row (``sessions.follow``), and the MCP tools read it on every call: after
``cd ../other-repo``, ctx_search and ctx_record answer for ``other-repo``.

Two entries in hooks.json run this handler:

* ``CwdChanged`` (``new_cwd``). Claude Code 2.1.332 fires it only when a settings file (user,
  project, local or managed) or the ``--agent`` also declares a CwdChanged or FileChanged hook: a
  plugin's own CwdChanged hook alone never runs there;
* ``PostToolUse`` for Bash with ``if: Bash(cd *)`` / ``Bash(pushd *)``: runs synchronously after a
  command that changes folder (the payload's ``cwd`` is the new folder), so the change is stored
  before Claude's next tool call. Other commands do not start it.

When the project changed, one line tells the user (``systemMessage``). Nothing is injected:
CwdChanged cannot add context, and the digest of the new project is not re-sent (the per-prompt
injection already follows the folder).
"""

from __future__ import annotations

import os

from agentctx import project
from agentctx.hookio import HOOK_BUSY_MS, HookEvent
from agentctx.store import db, projects, records, sessions


def on_cwd_changed(event: HookEvent) -> dict | None:
    """Store the session's new folder; say so in one line when it is another project."""
    folder = event.new_cwd if event.new_cwd and os.path.isdir(event.new_cwd) else event.cwd
    proj = project.detect(folder)
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    try:
        with db.transaction(conn):
            projects.register(conn, proj)
            moved = sessions.follow(conn, event.session_id, proj.id, folder)
        count = records.count_active(conn, proj.id) if moved else 0
    finally:
        conn.close()
    if not moved:
        return None
    return {"systemMessage": f"agentctx: this session now uses the context of project {proj.name} "
                             f"({count} current records) for its MCP tools and prompts."}
