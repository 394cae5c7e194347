"""Team sync through PostgreSQL: the shared tier beyond the git team file.

* ``schema``: the server's schema as named migrations (projects, records, the append-only change log,
  purge tombstones, row-level security) and the admin operations (teams, members);
* ``rules``: what never leaves the machine, and how two versions of a record combine (one rule, used
  on the server when a push arrives and locally when a pull arrives);
* ``client``: every statement sent to the server (psycopg 3, imported only here and only when used);
* ``optin``: which projects the user shares (``agentctx remote share``, ``.agentctx/config``);
* ``sync``: one sync (push, then pull from the cursor), its status, backoff, and the consolidation step.

Hooks never come here: they read and write the local store, and triggers queue what changed
(``store/remote.py``). Sync runs in the detached consolidation process or ``agentctx remote sync``.
"""
