"""The developer profile (``agentctx profile show|edit|clear``) and ``agentctx rollup``."""

from __future__ import annotations

import click

from agentctx.surfaces.cli.context import Ctx, dump, json_option, pass_ctx


@click.group("profile")
def profile_() -> None:
    """The developer profile: your preferences that hold in every project (ADR-010)."""


@profile_.command("show")
@json_option
@pass_ctx
def show(c: Ctx, as_json):
    """List global preferences; those marked * are in every SessionStart digest."""
    from agentctx.capture import devprofile

    devprofile.promote(c.conn)
    recs = devprofile.profile(c.conn)
    if as_json:
        dump(recs)
        return
    if not recs:
        click.echo("no global preferences yet")
        return
    for r in recs:
        mark = "*" if r["in_digest"] else " "
        click.echo(f"{mark} {r['id']}  {r['confidence']:<10} {r['sessions']} session(s)  {r['title']}")
    click.echo(f"* = in every SessionStart digest (explicit, or inferred and seen in "
               f"{devprofile.SESSIONS} sessions)")


@profile_.command("edit")
@click.argument("ref", metavar="ID")
@click.option("--rule", help="The corrected preference, one sentence.")
@click.option("--project-only", is_flag=True, help="It is not global: keep it for its project only.")
@json_option
@pass_ctx
def edit(c: Ctx, ref, rule, project_only, as_json):
    """Correct a global preference, or scope a misattributed one to its project."""
    from agentctx.capture import devprofile

    rec = devprofile.edit(c.conn, ref, c.project.id, rule=rule, project_only=project_only)
    if as_json:
        dump(rec)
    else:
        click.echo(f"edited {rec['id']} ({rec['scope']}): {rec['title']}")


@profile_.command("clear")
@click.argument("ref", metavar="ID")
@json_option
@pass_ctx
def clear(c: Ctx, ref, as_json):
    """Remove a global preference from the profile (retired, kept in history)."""
    from agentctx.capture import devprofile

    rec = devprofile.clear(c.conn, ref, c.project.id)
    if as_json:
        dump(rec)
    else:
        click.echo(f"cleared {rec['id']}: {rec['title']} (no longer injected; `agentctx history {rec['id']}` keeps it)")


@click.command("rollup")
@click.option("--dry-run", is_flag=True, help="Show what would be rolled up; change nothing.")
@json_option
@pass_ctx
def rollup_(c: Ctx, dry_run, as_json):
    """Summarize this project's old discoveries and bugfixes into one rollup record (Haiku)."""
    from agentctx.capture import extract
    from agentctx.consolidation import rollup

    client, why = None, ""
    if not dry_run:
        how, why = extract.mode()
        if how == "llm":
            from agentctx import llm

            client = llm.Client()
        elif not why:
            why = f"rollup needs the Anthropic API (extraction mode is {how})"
        elif why.startswith("the anthropic SDK"):
            why += "; `agentctx consolidate` runs the rollup where it is installed"
    report = rollup.run(c.conn, c.project.id, client=client, dry_run=dry_run)
    if report["status"] == "skipped" and why:
        report["reason"] = why
    if as_json:
        dump(report)
    else:
        click.echo(rollup.describe(report))
