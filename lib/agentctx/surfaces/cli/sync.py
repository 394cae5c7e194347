"""Sharing: ``agentctx sync`` (CLAUDE.md drift) and ``agentctx team export|import``."""

from __future__ import annotations

import click

from agentctx.surfaces.cli.context import Ctx, dump


def _team_summary(report: dict) -> str:
    head = {"absent": "no .agentctx/context.md in this project",
            "unchanged": "unchanged since the last sync: nothing imported"}.get(report["status"])
    if head:
        return head
    parts = [f"{len(report['added'])} new", f"{len(report['edited'])} edited (old versions kept in history)",
             f"{len(report['retired'])} deleted blocks retired", f"{report['unchanged']} unchanged"]
    if report["conflicts"]:
        parts.append(f"{len(report['conflicts'])} older conflicting versions kept in history")
    return "imported: " + ", ".join(parts)


@click.command("sync")
@click.option("--yes", is_flag=True, help="Apply the proposal without asking (after you reviewed it).")
@click.option("--json", "as_json", is_flag=True, help="Print the proposal as JSON (applies only with --yes).")
@click.pass_obj
def sync(c: Ctx, yes, as_json):
    """Show the proposed CLAUDE.md change for drift candidates; apply it only when confirmed."""
    from agentctx.sharing import drift

    proj = c.project
    prop = drift.apply(c.conn, proj) if yes else drift.proposal(c.conn, proj)
    if as_json:
        dump({k: v for k, v in prop.items() if k != "new_text"} | {"applied": bool(prop.get("applied"))})
        return
    if not prop["candidates"]:
        click.echo("CLAUDE.md reflects the store's decisions and conventions: nothing to propose.")
        return
    click.echo(f"{len(prop['candidates'])} drift candidate(s) for {prop['path']}:")
    for line in prop["lines"]:
        click.echo(f"  {line}")
    for line in prop["not_applied"]:
        click.echo(f"  (by hand) {line}")
    if not prop["diff"]:
        return
    if yes:
        click.echo(f"\nApplied to {prop['path']}.")
        return
    click.echo("\n" + prop["diff"])
    try:
        ok = click.confirm(f"Apply this change to {prop['path']}?", default=False)
    except click.exceptions.Abort:
        ok = False
    if not ok:
        click.echo("Not applied. CLAUDE.md is unchanged.")
        return
    drift.apply(c.conn, proj, expected_diff=prop["diff"])
    click.echo(f"Applied to {prop['path']}.")


@click.group("team")
def team():
    """The team file .agentctx/context.md: commit it; teammates' sessions import it."""


@team.command("export")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def team_export(c: Ctx, as_json):
    """Write (or refresh) .agentctx/context.md from this project's shareable records."""
    from agentctx.sharing import teamsync

    path = teamsync.export(c.conn, c.project, create=True)
    count = len(teamsync.shareable(c.conn, c.project.id))
    if as_json:
        dump({"path": path, "records": count})
    else:
        click.echo(f"{count} records written to {path} (commit it; later consolidations keep it current)")


@team.command("import")
@click.option("--force", is_flag=True, help="Import even if the file did not change since the last sync.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def team_import(c: Ctx, force, as_json):
    """Read .agentctx/context.md back: new blocks, edits, deletions; bad blocks reported by line."""
    from agentctx.sharing import teamsync

    report = teamsync.import_changes(c.conn, c.project, force=force)
    if as_json:
        dump(report)
    else:
        click.echo(_team_summary(report))
        for err in report["errors"]:
            click.echo(f"  line {err['line']}: {err['error']}", err=True)
    if report["errors"]:
        raise SystemExit(1)
