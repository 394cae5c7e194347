"""The server's schema: named migrations applied in order, and the admin operations.

Everything lives in the ``agentctx`` schema of the database the remote URL names:

* ``teams``: the PostgreSQL group roles that are agentctx teams. A member is a login role granted
  one or more team roles; a team role is granted ``agentctx_member`` (the table privileges).
* ``projects``: one row per team and shared project, keyed by (team, the project id every client
  computes: the hash of the normalized git remote). Each team's copy of a project is its own: two teams
  sharing one repository never see, block or learn of each other (``s004_team_copies``).
* ``records``: the shared records, keyed by (team, project, id), with both time axes (``valid_from``/
  ``valid_to``, ``recorded_at``/``superseded_at``), ``superseded_by``/``supersedes``, and provenance
  (``source``, the role that first pushed it, the role that last changed it); ``seq`` is its latest change.
* ``changes``: the append-only change log (no UPDATE, DELETE or TRUNCATE: a trigger refuses them),
  keyed by (team, seq); ``seq`` comes from the team's own sequence (reached only through
  ``next_change``), so a client pulls its team's ``seq > cursor`` and numbers say nothing of other
  teams. Only ids: a purge leaves no content behind. Triggers set ``seq``, ``author`` and ``at``
  on the log, ``author`` / ``updated_by`` on records and ``purged_by`` on tombstones: a client cannot
  forge provenance.
* ``purged``: tombstones (ids only), so a client that was offline cannot push a purged record back.

Row-level security: a role sees and writes only the rows of the teams it belongs to (projects, records,
changes, tombstones). Members may insert projects for their own teams, write records, and append changes;
they cannot rewrite the log or move a record to another team or project.

Migrations are recorded in ``agentctx.migrations``; run them as the database owner (``agentctx
remote admin migrate``). Never edit a released migration: add a new one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MEMBER_ROLE = "agentctx_member"
MIGRATE_LOCK = 0x61676374_6D696772  # pg_advisory_xact_lock key: one migrator at a time
SEQUENCE_LOCK = 0x61676374_73657173  # ... and one creator of a team's change sequence
MIGRATIONS: list[Callable] = []
_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def migration(fn: Callable) -> Callable:
    MIGRATIONS.append(fn)
    return fn


@migration
def s001_tables(conn) -> None:
    """Teams, projects, records (bi-temporal, with provenance), the change log and tombstones."""
    conn.execute(f"""
        DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
            CREATE ROLE {MEMBER_ROLE} NOLOGIN;
          END IF;
        END $$""")
    conn.execute("""
        CREATE TABLE agentctx.teams (
          role name PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now())""")
    conn.execute("""
        CREATE TABLE agentctx.projects (
          id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{16}$'),
          name text NOT NULL DEFAULT '',
          team name NOT NULL REFERENCES agentctx.teams (role),
          created_by name NOT NULL DEFAULT current_user,
          created_at timestamptz NOT NULL DEFAULT now())""")
    conn.execute("""
        CREATE TABLE agentctx.records (
          id text PRIMARY KEY CHECK (length(id) = 26),
          project_id text NOT NULL REFERENCES agentctx.projects (id),
          type text NOT NULL,
          key text,
          title text NOT NULL,
          body text NOT NULL DEFAULT '',
          pinned boolean NOT NULL DEFAULT false,
          confidence text NOT NULL,
          source text NOT NULL,
          supersedes text,
          valid_from timestamptz NOT NULL,
          valid_to timestamptz,
          recorded_at timestamptz NOT NULL,
          superseded_at timestamptz,
          superseded_by text,
          updated_at timestamptz,
          author name NOT NULL DEFAULT current_user,
          updated_by name NOT NULL DEFAULT current_user,
          seq bigint NOT NULL DEFAULT 0)""")
    conn.execute("CREATE INDEX records_supersedes ON agentctx.records (supersedes)")
    conn.execute("CREATE INDEX records_keys ON agentctx.records (project_id, key) "
                 "WHERE key IS NOT NULL AND superseded_at IS NULL")
    conn.execute("CREATE SEQUENCE agentctx.change_seq")
    conn.execute("""
        CREATE FUNCTION agentctx.record_provenance() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          NEW.author := CASE WHEN TG_OP = 'INSERT' THEN current_user ELSE OLD.author END;
          NEW.updated_by := current_user;
          RETURN NEW;
        END $$""")
    conn.execute("CREATE TRIGGER records_provenance BEFORE INSERT OR UPDATE ON agentctx.records "
                 "FOR EACH ROW EXECUTE FUNCTION agentctx.record_provenance()")
    conn.execute("""
        CREATE TABLE agentctx.changes (
          seq bigint PRIMARY KEY,
          project_id text NOT NULL,
          record_id text NOT NULL,
          op text NOT NULL CHECK (op IN ('upsert', 'purge')),
          author name NOT NULL DEFAULT current_user,
          at timestamptz NOT NULL DEFAULT now())""")
    conn.execute("""
        CREATE FUNCTION agentctx.append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'agentctx.changes is append-only';
        END $$""")
    conn.execute("""
        CREATE FUNCTION agentctx.change_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          NEW.seq := nextval('agentctx.change_seq');
          NEW.author := current_user;
          NEW.at := now();
          RETURN NEW;
        END $$""")
    conn.execute("CREATE TRIGGER changes_stamp BEFORE INSERT ON agentctx.changes "
                 "FOR EACH ROW EXECUTE FUNCTION agentctx.change_stamp()")
    conn.execute("CREATE TRIGGER changes_append_only BEFORE UPDATE OR DELETE ON agentctx.changes "
                 "FOR EACH ROW EXECUTE FUNCTION agentctx.append_only()")
    conn.execute("CREATE TRIGGER changes_no_truncate BEFORE TRUNCATE ON agentctx.changes "
                 "FOR EACH STATEMENT EXECUTE FUNCTION agentctx.append_only()")
    conn.execute("""
        CREATE TABLE agentctx.purged (
          id text PRIMARY KEY,
          project_id text NOT NULL,
          purged_by name NOT NULL DEFAULT current_user,
          purged_at timestamptz NOT NULL DEFAULT now())""")
    conn.execute("""
        CREATE FUNCTION agentctx.purge_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          NEW.purged_by := current_user;
          NEW.purged_at := now();
          RETURN NEW;
        END $$""")
    conn.execute("CREATE TRIGGER purged_stamp BEFORE INSERT ON agentctx.purged "
                 "FOR EACH ROW EXECUTE FUNCTION agentctx.purge_stamp()")


@migration
def s002_row_level_security(conn) -> None:
    """A role sees and writes only its teams' projects; members get exactly the privileges sync needs."""
    conn.execute("""
        CREATE FUNCTION agentctx.in_team(team name) RETURNS boolean LANGUAGE sql STABLE AS $$
          SELECT COALESCE((SELECT pg_has_role(current_user, r.oid, 'MEMBER') FROM pg_roles r
                           WHERE r.rolname = team), false)
        $$""")
    visible = "project_id IN (SELECT id FROM agentctx.projects)"  # itself filtered by the projects policy
    for table in ("teams", "projects", "records", "changes", "purged"):
        conn.execute(f"ALTER TABLE agentctx.{table} ENABLE ROW LEVEL SECURITY")
    conn.execute("CREATE POLICY mine ON agentctx.teams FOR SELECT USING (agentctx.in_team(role))")
    conn.execute("CREATE POLICY mine ON agentctx.projects FOR SELECT USING (agentctx.in_team(team))")
    conn.execute("CREATE POLICY mine_new ON agentctx.projects FOR INSERT WITH CHECK (agentctx.in_team(team))")
    conn.execute(f"CREATE POLICY mine ON agentctx.records USING ({visible}) WITH CHECK ({visible})")
    for table in ("changes", "purged"):
        conn.execute(f"CREATE POLICY mine ON agentctx.{table} FOR SELECT USING ({visible})")
        conn.execute(f"CREATE POLICY mine_new ON agentctx.{table} FOR INSERT WITH CHECK ({visible})")
    conn.execute(f"GRANT USAGE ON SCHEMA agentctx TO {MEMBER_ROLE}")
    conn.execute(f"GRANT SELECT ON agentctx.migrations, agentctx.teams TO {MEMBER_ROLE}")
    conn.execute(f"GRANT SELECT, INSERT ON agentctx.projects, agentctx.changes, agentctx.purged TO {MEMBER_ROLE}")
    conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON agentctx.records TO {MEMBER_ROLE}")
    conn.execute(f"GRANT USAGE ON SEQUENCE agentctx.change_seq TO {MEMBER_ROLE}")


@migration
def s003_record_identity(conn) -> None:
    """Records and tombstones keyed by (project, id): an id another team (or another project) holds never
    blocks a push and cannot be squatted, and a duplicate-key error cannot tell a member that it exists.
    The change sequence is no longer readable by members (its trigger runs as the owner), and what
    the catalogue shows about row counts is revoked where this role may (see docs: what PostgreSQL
    itself still reveals)."""
    conn.execute("ALTER TABLE agentctx.records DROP CONSTRAINT records_pkey")
    conn.execute("ALTER TABLE agentctx.records ADD PRIMARY KEY (project_id, id)")
    conn.execute("DROP INDEX agentctx.records_supersedes")
    conn.execute("CREATE INDEX records_supersedes ON agentctx.records (project_id, supersedes)")
    conn.execute("ALTER TABLE agentctx.purged DROP CONSTRAINT purged_pkey")
    conn.execute("ALTER TABLE agentctx.purged ADD PRIMARY KEY (project_id, id)")
    conn.execute("""
        CREATE FUNCTION agentctx.next_change() RETURNS bigint LANGUAGE sql VOLATILE SECURITY DEFINER
        SET search_path = pg_catalog AS $$ SELECT nextval('agentctx.change_seq') $$""")
    conn.execute("REVOKE ALL ON FUNCTION agentctx.next_change() FROM PUBLIC")
    conn.execute(f"GRANT EXECUTE ON FUNCTION agentctx.next_change() TO {MEMBER_ROLE}")
    conn.execute("""
        CREATE OR REPLACE FUNCTION agentctx.change_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          NEW.seq := agentctx.next_change();
          NEW.author := current_user;
          NEW.at := now();
          RETURN NEW;
        END $$""")
    conn.execute(f"REVOKE ALL ON SEQUENCE agentctx.change_seq FROM {MEMBER_ROLE}, PUBLIC")
    for view in STATISTICS_VIEWS:  # row and change counts of every table, other teams' rows included
        try:
            with conn.transaction():
                conn.execute(f"REVOKE SELECT ON pg_catalog.{view} FROM PUBLIC")
        except Exception:  # noqa: BLE001 - not the catalogue's owner: the admin revokes it (docs)
            pass


@migration
def s004_team_copies(conn) -> None:
    """Each team's copy of a project is its own: projects keyed by (team, id), records and tombstones by
    (team, project, id), the change log by (team, seq) with one sequence per team. Two teams sharing one
    repository never see, block or learn of each other, and whoever shares a project first owns only their
    own team's copy (no squatting). Existing rows move to the team that owned their project; change numbers
    already given stay (each team's sequence continues from the highest), so clients' cursors stay valid.
    The sequences belong to the owner and are reached only through ``next_change(team)`` (``SECURITY
    DEFINER``, for the caller's own teams), so a member reads no other team's count, and the change lock
    is taken per team."""
    for table in ("records", "purged", "changes"):
        conn.execute(f"ALTER TABLE agentctx.{table} ADD COLUMN team name")
    conn.execute("UPDATE agentctx.records r SET team = p.team FROM agentctx.projects p WHERE p.id = r.project_id")
    conn.execute("UPDATE agentctx.purged t SET team = p.team FROM agentctx.projects p WHERE p.id = t.project_id")
    conn.execute("DELETE FROM agentctx.purged WHERE team IS NULL")  # a tombstone of no project guards nothing
    conn.execute("ALTER TABLE agentctx.changes DISABLE TRIGGER changes_append_only")  # this once, in this transaction
    conn.execute("UPDATE agentctx.changes c SET team = p.team FROM agentctx.projects p WHERE p.id = c.project_id")
    conn.execute("DELETE FROM agentctx.changes WHERE team IS NULL")  # of no project: no member could ever read it
    conn.execute("ALTER TABLE agentctx.changes ENABLE TRIGGER changes_append_only")
    for table in ("records", "purged", "changes"):
        conn.execute(f"ALTER TABLE agentctx.{table} ALTER COLUMN team SET NOT NULL")
    conn.execute("ALTER TABLE agentctx.records DROP CONSTRAINT records_project_id_fkey")
    conn.execute("ALTER TABLE agentctx.projects DROP CONSTRAINT projects_pkey")
    conn.execute("ALTER TABLE agentctx.projects ADD PRIMARY KEY (team, id)")
    conn.execute("ALTER TABLE agentctx.records DROP CONSTRAINT records_pkey")
    conn.execute("ALTER TABLE agentctx.records ADD PRIMARY KEY (team, project_id, id)")
    conn.execute("ALTER TABLE agentctx.purged DROP CONSTRAINT purged_pkey")
    conn.execute("ALTER TABLE agentctx.purged ADD PRIMARY KEY (team, project_id, id)")
    conn.execute("ALTER TABLE agentctx.changes DROP CONSTRAINT changes_pkey")
    conn.execute("ALTER TABLE agentctx.changes ADD PRIMARY KEY (team, seq)")
    for table in ("records", "purged", "changes"):
        conn.execute(f"ALTER TABLE agentctx.{table} ADD CONSTRAINT {table}_project FOREIGN KEY (team, project_id) "
                     "REFERENCES agentctx.projects (team, id)")
    conn.execute("DROP INDEX agentctx.records_supersedes")
    conn.execute("CREATE INDEX records_supersedes ON agentctx.records (team, project_id, supersedes)")
    conn.execute("DROP INDEX agentctx.records_keys")
    conn.execute("CREATE INDEX records_keys ON agentctx.records (team, project_id, key) "
                 "WHERE key IS NOT NULL AND superseded_at IS NULL")
    conn.execute("""
        CREATE FUNCTION agentctx.record_place() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.team IS DISTINCT FROM OLD.team OR NEW.project_id IS DISTINCT FROM OLD.project_id THEN
            RAISE EXCEPTION 'a record stays in its team and project';
          END IF;
          RETURN NEW;
        END $$""")
    conn.execute("CREATE TRIGGER records_place BEFORE UPDATE ON agentctx.records "
                 "FOR EACH ROW EXECUTE FUNCTION agentctx.record_place()")
    # Row-level security by the row's own team (its project, in that team, is guaranteed by the keys above).
    # The teams table is itself filtered to the role's teams: one uncorrelated subquery per statement.
    mine = "team IN (SELECT role FROM agentctx.teams)"
    conn.execute("DROP POLICY mine ON agentctx.records")
    conn.execute(f"CREATE POLICY mine ON agentctx.records USING ({mine}) WITH CHECK ({mine})")
    for table in ("changes", "purged"):
        conn.execute(f"DROP POLICY mine ON agentctx.{table}")
        conn.execute(f"DROP POLICY mine_new ON agentctx.{table}")
        conn.execute(f"CREATE POLICY mine ON agentctx.{table} FOR SELECT USING ({mine})")
        conn.execute(f"CREATE POLICY mine_new ON agentctx.{table} FOR INSERT WITH CHECK ({mine})")
    # One sequence per team, the owner's (its name from a hash: a role name need not make a good identifier);
    # numbers become visible in order because every append runs under the team's change lock (client.py).
    conn.execute(f"""
        CREATE FUNCTION agentctx.team_sequence(t name) RETURNS regclass LANGUAGE plpgsql VOLATILE
        SET search_path = pg_catalog AS $$
        DECLARE
          seq_name text := 'change_seq_' || left(encode(sha256(convert_to(t, 'UTF8')), 'hex'), 32);
          found regclass := to_regclass('agentctx.' || quote_ident(seq_name));
        BEGIN
          IF found IS NULL THEN
            PERFORM pg_advisory_xact_lock({SEQUENCE_LOCK});
            found := to_regclass('agentctx.' || quote_ident(seq_name));
            IF found IS NULL THEN
              EXECUTE format('CREATE SEQUENCE agentctx.%I', seq_name);
              found := to_regclass('agentctx.' || quote_ident(seq_name));
            END IF;
          END IF;
          RETURN found;
        END $$""")
    conn.execute("REVOKE ALL ON FUNCTION agentctx.team_sequence(name) FROM PUBLIC")
    start = conn.execute("SELECT COALESCE(max(seq), 0) + 1 FROM agentctx.changes").fetchone()[0]
    for (team,) in conn.execute("SELECT role FROM agentctx.teams").fetchall():
        seq = conn.execute("SELECT agentctx.team_sequence(%s)::text", (team,)).fetchone()[0]
        conn.execute(f"ALTER SEQUENCE {seq} RESTART WITH {int(start)}")  # after every number given before
    conn.execute("""
        CREATE FUNCTION agentctx.next_change(t name) RETURNS bigint LANGUAGE plpgsql VOLATILE SECURITY DEFINER
        SET search_path = pg_catalog AS $$
        BEGIN
          -- session_user: the member who logged in (current_user is this function's owner here).
          IF NOT COALESCE((SELECT pg_has_role(session_user, r.oid, 'MEMBER') FROM pg_roles r
                           WHERE r.rolname = t), false) THEN
            RAISE EXCEPTION 'permission denied for team %', t USING ERRCODE = 'insufficient_privilege';
          END IF;
          RETURN nextval(agentctx.team_sequence(t));
        END $$""")
    conn.execute("REVOKE ALL ON FUNCTION agentctx.next_change(name) FROM PUBLIC")
    conn.execute(f"GRANT EXECUTE ON FUNCTION agentctx.next_change(name) TO {MEMBER_ROLE}")
    conn.execute("""
        CREATE OR REPLACE FUNCTION agentctx.change_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          NEW.seq := agentctx.next_change(NEW.team);
          NEW.author := current_user;
          NEW.at := now();
          RETURN NEW;
        END $$""")
    conn.execute("DROP FUNCTION agentctx.next_change()")
    conn.execute("DROP SEQUENCE agentctx.change_seq")


STATISTICS_VIEWS = ("pg_stat_user_tables", "pg_stat_all_tables", "pg_statio_user_tables", "pg_statio_all_tables",
                    "pg_stat_xact_user_tables", "pg_stat_xact_all_tables", "pg_stat_user_indexes",
                    "pg_stat_all_indexes", "pg_statio_user_indexes", "pg_statio_all_indexes",
                    "pg_statio_user_sequences", "pg_statio_all_sequences", "pg_sequences")
NAMES = tuple(fn.__name__ for fn in MIGRATIONS)


def migrate(conn) -> list[str]:
    """Apply pending migrations in one transaction (as the database owner); the names applied."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        conn.execute("CREATE SCHEMA IF NOT EXISTS agentctx")
        conn.execute("CREATE TABLE IF NOT EXISTS agentctx.migrations ("
                     "name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        done = {row[0] for row in conn.execute("SELECT name FROM agentctx.migrations")}
        applied = []
        for fn in MIGRATIONS:
            if fn.__name__ in done:
                continue
            fn(conn)
            conn.execute("INSERT INTO agentctx.migrations (name) VALUES (%s)", (fn.__name__,))
            applied.append(fn.__name__)
    return applied


def missing(conn) -> list[str]:
    """Migrations this client needs that the server lacks (all of them when there is no schema)."""
    row = conn.execute("SELECT to_regclass('agentctx.migrations')").fetchone()
    if row[0] is None:
        return list(NAMES)
    done = {r[0] for r in conn.execute("SELECT name FROM agentctx.migrations")}
    return [name for name in NAMES if name not in done]


def check_role(name: str) -> str:
    """A role name agentctx creates or grants: lowercase letters, digits and _, at most 63."""
    if not _ROLE.match(name or ""):
        raise ValueError(f"{name!r} is not a valid role name (lowercase letters, digits and _, starting with a letter)")
    return name


def add_team(conn, team: str) -> None:
    """Create the group role ``team`` (if needed), give it the member privileges, register it."""
    from psycopg import sql

    check_role(team)
    with conn.transaction():
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (team,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(team)))
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(MEMBER_ROLE), sql.Identifier(team)))
        conn.execute("INSERT INTO agentctx.teams (role) VALUES (%s) ON CONFLICT DO NOTHING", (team,))
        if conn.execute("SELECT to_regprocedure('agentctx.team_sequence(name)')").fetchone()[0] is not None:
            conn.execute("SELECT agentctx.team_sequence(%s)", (team,))  # now: its existence says nothing later


def add_member(conn, role: str, team: str, *, password: str | None = None) -> bool:
    """Grant ``team`` to the login role ``role``, creating it (with ``password`` if given) when it
    does not exist; True when it was created."""
    from psycopg import sql

    check_role(role)
    check_role(team)
    with conn.transaction():
        if conn.execute("SELECT 1 FROM agentctx.teams WHERE role = %s", (team,)).fetchone() is None:
            raise ValueError(f"{team} is not an agentctx team: add it first (agentctx remote admin team)")
        created = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None
        if created:
            stmt = sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role))
            if password:
                stmt = sql.SQL("{} PASSWORD {}").format(stmt, sql.Literal(password))
            conn.execute(stmt)
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(team), sql.Identifier(role)))
    return created


def remove_member(conn, role: str, team: str) -> None:
    """Revoke ``team`` from ``role`` (the role itself stays: drop it yourself if it has to go)."""
    from psycopg import sql

    with conn.transaction():
        conn.execute(sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(check_role(team)),
                                                         sql.Identifier(check_role(role))))


SCRUBBED = ("records", "purged", "changes", "projects")


def scrub(conn) -> dict:
    """After purges: rewrite the agentctx tables so deleted rows' text is gone from their files
    (``VACUUM FULL``: a new copy of each table and its indexes, the old files removed), then a
    ``CHECKPOINT`` so the WAL that still holds the text can be recycled. Run as the tables' owner on an
    autocommit connection; ``VACUUM FULL`` locks each table briefly. What stays: WAL segments kept for
    replicas, ``wal_keep_size`` or an archive, and backups (see the docs). {"vacuumed": [...],
    "checkpoint": bool}."""
    done: dict = {"vacuumed": [], "checkpoint": False}
    for table in SCRUBBED:
        conn.execute(f"VACUUM (FULL, ANALYZE) agentctx.{table}")
        done["vacuumed"].append(table)
    try:
        conn.execute("CHECKPOINT")  # superuser, or pg_checkpoint (PostgreSQL 15+)
        done["checkpoint"] = True
    except Exception as exc:  # noqa: BLE001 - not allowed to: the server's next checkpoint does it
        done["checkpoint_error"] = " ".join(str(exc).split())[:200]
    return done

