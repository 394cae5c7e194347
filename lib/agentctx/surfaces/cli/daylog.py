"""``agentctx log``: a project's daily log in Markdown (also written to the data directory)."""

from __future__ import annotations

import os

import click

from agentctx.surfaces.cli.context import Ctx, dump, json_option, pass_ctx


def _project(c: Ctx, ref: str | None):
    """The project named by ``--project`` (a folder, a project id or id prefix, or a name), else the current one."""
    from agentctx import project
    from agentctx.store import overview

    if not ref:
        return c.project
    if os.path.isdir(ref):
        return project.detect(ref)
    known = overview.projects(c.conn)
    hits = [p for p in known if p["id"] == ref] or [p for p in known if p["name"] == ref] or \
        [p for p in known if p["id"].startswith(ref)]
    if len(hits) != 1:
        raise click.BadParameter(f"{ref!r} names {'no' if not hits else 'more than one'} known project "
                                 "(give a folder, a project id or a name)", param_hint="--project")
    p = hits[0]
    return project.Project(p["id"], p["name"], p["root"] or "", p["remote"])


@click.command("log")
@click.option("--day", help="The UTC day, YYYY-MM-DD (default: today).")
@click.option("--project", "project_ref", metavar="P", help="A project folder, id or name (default: the current one).")
@json_option
@pass_ctx
def log_(c: Ctx, day, project_ref, as_json):
    """What was decided, what changed (files, commits, tests, errors) and what is next, for one day.

    Printed, and written to <data dir>/logs/<project>/<day>.md (a day with nothing writes no file)."""
    from agentctx.capture import activity
    from agentctx.sharing import daylog

    day = day or activity.today()
    try:
        activity.window(day)
    except ValueError:
        raise click.BadParameter(f"{day!r} is not a date (YYYY-MM-DD)", param_hint="--day") from None
    proj = _project(c, project_ref)
    data = daylog.collect(c.conn, proj, day)
    path = None
    if not daylog.empty(data):
        path = daylog.write(c.conn, proj, day)
    if as_json:
        dump({**data, "path": path})
        return
    click.echo(daylog.render(data), nl=False)
    if path:
        click.echo(f"(written to {path})", err=True)
