"""Team sync through PostgreSQL: ``agentctx remote add|remove|sync|status|share`` and the server admin's
``agentctx remote admin migrate|team|member|scrub``. psycopg is imported only by the commands that talk to a
server (see ``agentctx.remote``). A purge reaches the server through ``agentctx purge``, which
queues it for every remote."""

from __future__ import annotations

import os
from contextlib import contextmanager

import click

from agentctx import project
from agentctx.store import projects
from agentctx.surfaces.cli.context import Ctx, dump, json_option, pass_ctx


@click.group("remote")
def remote():
    """Share records with your team through a PostgreSQL server (opt-in per project)."""


@remote.command("add")
@click.argument("name")
@click.argument("url")
@click.option("--team", help="The team (a PostgreSQL group role) whose copies of your shared projects this "
                             "remote syncs; needed only when your role is in several teams.")
@json_option
@pass_ctx
def add(c: Ctx, name, url, team, as_json):
    """Add a server: postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=verify-full&…], without a password
    (libpq reads it from PGPASSWORD or ~/.pgpass)."""
    from agentctx.remote import client, schema
    from agentctx.store import remote as store

    row = store.add(c.conn, client.check_name(name), client.check_url(url),
                    schema.check_role(team) if team else None)
    if as_json:
        dump({k: row[k] for k in ("name", "url", "team", "added_at")})
        return
    click.echo(f"remote {name} added ({url}). Share a project with `agentctx remote share [DIR]` or a committed "
               ".agentctx/config ([remote] share = true); the next consolidation syncs, or `agentctx remote sync`.")


@remote.command("remove")
@click.argument("name")
@json_option
@pass_ctx
def remove(c: Ctx, name, as_json):
    """Forget a server here (what it holds is untouched)."""
    from agentctx.store import remote as store

    if not store.remove(c.conn, name):
        raise click.ClickException(f"no remote {name}")
    if as_json:
        dump({"removed": name})
    else:
        click.echo(f"remote {name} removed")


BUSY_EXIT = 75  # EX_TEMPFAIL: another sync is running; try again later


@remote.command("sync")
@click.argument("names", nargs=-1)
@click.option("--dry-run", is_flag=True, help="Say what would be pushed and pulled; change nothing.")
@json_option
@pass_ctx
def sync(c: Ctx, names, dry_run, as_json):
    """Push this machine's shared records and pull the team's now (all remotes, or those named).

    Exits 1 when a server was offline or failed, 75 when another sync is running (this one did nothing)."""
    from agentctx.remote import sync as engine

    c.project  # noqa: B018 - registers the current project, so its .agentctx/config is seen
    reports = engine.sync_all(c.conn, list(names) or None, dry_run=dry_run)
    if as_json:
        dump(reports)
    else:
        for name, rep in reports.items():
            click.echo(_line(name, rep))
    if any(r["status"] in ("offline", "error") for r in reports.values()):
        raise SystemExit(1)
    if any(r["status"] in ("busy", "waiting") for r in reports.values()):
        raise SystemExit(BUSY_EXIT)  # another sync holds the lock: nothing was done by this one


def _line(name: str, rep: dict) -> str:
    if rep["status"] == "dry run":
        text = f"{name}: would push {rep['would_push']}"
        text += f", would pull {rep['would_pull']}" if "would_pull" in rep else f" ({rep.get('server', '')})"
        withheld = ", ".join(f"{n} {why}" for why, n in sorted(rep["withheld"].items()))
        return text + (f"; kept local: {withheld}" if withheld else "")
    if rep["status"] in ("busy", "waiting"):
        return f"{name}: {rep['note']}"
    if rep["status"] != "ok":
        return f"{name}: {rep['status']}: {rep['error']} (retried later; nothing local is lost)"
    text = f"{name}: pushed {rep['pushed']}, pulled {rep['pulled']}"
    if rep["conflicts_resolved"]:
        text += f", {rep['conflicts_resolved']} conflicting version(s) superseded by the newer one"
    withheld = ", ".join(f"{n} {why}" for why, n in sorted(rep["withheld"].items()))
    return text + (f"\n  kept local: {withheld}" if withheld else "")


@remote.command("status")
@json_option
@pass_ctx
def status(c: Ctx, as_json):
    """Each server's last sync (one line), what waits to be pushed, and the shared projects."""
    from agentctx.remote import sync as engine

    c.project  # noqa: B018 - registers the current project
    state = engine.status(c.conn)
    if as_json:
        dump(state)
        return
    if not state["remotes"]:
        click.echo("no remote: `agentctx remote add NAME postgresql://USER@HOST/DATABASE`")
    for r in state["remotes"]:
        click.echo(f"{r['name']}  {r['url']}" + (f"  team {r['team']}" if r["team"] else ""))
        click.echo(f"  {r['status']}")
        click.echo(f"  queued {r['queued']} · purges waiting {r['purges_waiting']} · cursor {r['cursor']}")
    shared = state["shared_projects"]
    click.echo("shared projects: " + (", ".join(f"{v['name'] or pid} ({pid}, via {v['via']})"
                                               for pid, v in sorted(shared.items())) or "none"))


def _project_id(c: Ctx, ref: str | None) -> tuple[str, str]:
    """(id, name) of a project given as a directory, an id or a name this store knows."""
    from agentctx.store import remote as store

    if ref is None or os.path.isdir(ref):
        proj = project.detect(ref) if ref else c.project
        projects.register(c.conn, proj)
        return proj.id, proj.name
    matches = [p for p in store.known_projects(c.conn) if ref in (p["id"], p["name"])]
    if len(matches) != 1:
        raise click.ClickException(f"{ref!r} is not a directory nor " + (
            "a project this store knows" if not matches else "a unique project name: give its id"))
    return matches[0]["id"], matches[0]["name"]


@remote.command("share")
@click.argument("project_ref", metavar="[PROJECT]", required=False)
@click.option("--off", is_flag=True, help="Stop sharing it (what the server holds stays).")
@json_option
@pass_ctx
def share(c: Ctx, project_ref, off, as_json):
    """Opt a project (a directory, an id or a name; default: this one) in to team sync, or out with --off."""
    from agentctx.store import remote as store

    pid, name = _project_id(c, project_ref)
    store.set_share(c.conn, pid, not off)
    if as_json:
        dump({"project_id": pid, "name": name, "shared": not off})
    else:
        click.echo(f"{name} ({pid}) " + ("is no longer shared" if off else
                                        "is shared: its records go to the team's server at the next sync"))


@remote.group("admin")
def admin():
    """For the server's admin (connect as the database owner): schema, teams, members."""


@contextmanager
def _admin_conn(url: str):
    """A connection for an admin command; server errors become one ``Error:`` line."""
    from agentctx.remote import client

    try:
        with client.connect(url) as conn:
            yield conn
    except client.RemoteError as exc:
        raise click.ClickException(str(exc)) from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] != "psycopg":
            raise
        raise click.ClickException(f"server: {client.one_line(exc)}") from None


@admin.command("migrate")
@click.argument("url")
@json_option
def admin_migrate(url, as_json):
    """Create or update the agentctx schema (named migrations) in the database the URL names."""
    from agentctx.remote import schema

    with _admin_conn(url) as conn:
        applied = schema.migrate(conn)
    if as_json:
        dump({"applied": applied})
    else:
        click.echo("applied: " + ", ".join(applied) if applied else "the schema is up to date")


@admin.command("team")
@click.argument("url")
@click.argument("team")
@json_option
def admin_team(url, team, as_json):
    """Create a team: a PostgreSQL group role whose members see the projects it shares."""
    from agentctx.remote import schema

    with _admin_conn(url) as conn:
        schema.add_team(conn, team)
    if as_json:
        dump({"team": team})
    else:
        click.echo(f"team {team} ready: add members with `agentctx remote admin member URL ROLE --team {team}`")


@admin.command("member")
@click.argument("url")
@click.argument("role")
@click.option("--team", required=True, help="The team to add the member to.")
@click.option("--password-env", metavar="VAR", help="Set a new role's password from this environment variable.")
@click.option("--remove", is_flag=True, help="Take the member out of the team instead.")
@json_option
def admin_member(url, role, team, password_env, remove, as_json):
    """Add a member (one login role per person) to a team, creating the role if needed."""
    from agentctx.remote import schema

    password = os.environ.get(password_env) if password_env else None
    if password_env and not password:
        raise click.ClickException(f"{password_env} is not set")
    with _admin_conn(url) as conn:
        if remove:
            schema.remove_member(conn, role, team)
            created = False
        else:
            created = schema.add_member(conn, role, team, password=password)
    if as_json:
        dump({"role": role, "team": team, "created": created, "removed": remove})
    else:
        click.echo(f"{role} {'removed from' if remove else 'is in'} team {team}"
                   + (" (role created)" if created else ""))


@admin.command("scrub")
@click.argument("url")
@json_option
def admin_scrub(url, as_json):
    """After purges: rewrite the agentctx tables (VACUUM FULL) and checkpoint, so purged text is gone
    from the server's table files and its WAL can be recycled (replicas, WAL archives and backups keep
    their copies: see docs)."""
    from agentctx.remote import schema

    with _admin_conn(url) as conn:
        done = schema.scrub(conn)
    if as_json:
        dump(done)
    else:
        click.echo(f"rewritten: {', '.join(done['vacuumed'])}; checkpoint: "
                   + ("done" if done["checkpoint"] else f"not allowed ({done.get('checkpoint_error', '')})"))

