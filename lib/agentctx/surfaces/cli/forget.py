"""Forgetting at the command line: forget (retire without a replacement) and purge (remove from disk)."""

from __future__ import annotations

import click

from agentctx.surfaces.cli.context import Ctx, dump, json_option, pass_ctx


@click.command("forget")
@click.argument("ref")
@json_option
@pass_ctx
def forget_(c: Ctx, ref, as_json):
    """Retire a record with no replacement: it leaves search, digests and injections; history keeps it."""
    from agentctx.maintenance import forgetting

    rec = forgetting.forget(c.conn, c.project.id, ref)
    if as_json:
        dump(rec)
    else:
        click.echo(f"forgot {rec['id']}  {rec['type']}: {rec['title']}  (kept in history; "
                   f"`agentctx purge {rec['id']} --yes` removes it from disk)")


@click.command("purge")
@click.argument("ref")
@click.option("--yes", is_flag=True, help="Really remove it (there is no undo).")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@json_option
@pass_ctx
def purge_(c: Ctx, ref, yes, dry_run, as_json):
    """Remove a record from every place on disk: store, archive, search index, vectors, digests, anchors,
    handovers quoting it, neighbours' search expansion, logs, the team file, the CLAUDE.md lines agentctx
    wrote for it and stores moved aside as damaged. Says what it removed, and names what it cannot."""
    from agentctx.maintenance import forgetting

    if not yes and not dry_run:
        raise click.UsageError("purge cannot be undone: add --yes (or --dry-run to see what it would remove)")
    report = forgetting.purge(c.conn, c.project.id, ref, dry_run=dry_run, edit_claude_md=True)
    if as_json:
        dump(report)
        return
    click.echo(describe(report))


def describe(report: dict) -> str:
    """The purge report as lines: what was removed where."""
    verb = "would remove" if report["dry_run"] else "removed"
    lines = [f"{'would purge' if report['dry_run'] else 'purged'} {report['id']}  {report['type']}: "
             f"{report['title']}  (was {report['was']})"]
    store = report["store"]
    parts = [f"{n} {name.replace('_', ' ')}" for name, n in store.items() if n]
    lines.append(f"  store: {verb} " + (", ".join(parts) if parts else "the record")
                 + "; search index " + ("rebuilt" if report.get("compacted", {}).get("fts_rebuilt") else "updated"))
    compacted = report.get("compacted") or {}
    if compacted:
        lines.append("  store file vacuumed (secure_delete), WAL truncated" if compacted.get("vacuumed") and
                     compacted.get("wal_truncated") else
                     "  store file not fully compacted now (another process held it): the deleted text may stay "
                     "in free pages until a later purge compacts the file")
    quoted = {t: n for t, n in report["quoted"].items() if n["rows"]}
    for table, n in quoted.items():
        lines.append(f"  {table}: {verb} the record's text from {n['rows']} row(s)")
    v = report["vectors"]
    if v.get("removed"):
        lines.append(f"  vectors: {verb} its vector" + (f" ({v['index']})" if v.get("index") else ""))
    if v.get("error"):
        lines.append(f"  vectors: not checked ({v['error']})")
    for kind, n in report["files"].items():
        if n["changed"]:
            what = f"{n['lines']} line(s) in {n['changed']} file(s)" if n["lines"] else f"{n['changed']} file(s)"
            lines.append(f"  {kind.replace('_', ' ')}: {verb} {what}")
    if report.get("team_file"):
        lines.append(f"  team file: {verb} its block from {report['team_file']} (commit that change to share it)")
    if report.get("remotes"):
        lines.append(f"  team remotes: {'would queue' if report['dry_run'] else 'queued'} for "
                     f"{', '.join(report['remotes'])} (gone from the server and teammates' stores at the next sync)")
    if report.get("derived"):
        lines.append(f"  handovers: {verb} the lines quoting it from {report['derived']} (titles regenerated)")
    if report.get("expansion"):
        lines.append(f"  search expansion: {verb} {report['expansion']} neighbour(s)' derived words "
                     "(worked out again at the next consolidation)")
    for other in report.get("quoted_by") or []:
        lines.append(f"  still quoted by {other['type']} {other['id']} (yours): {other['command']}")
    claude = report.get("claude_md") or {}
    for where in claude.get("removed", []):
        lines.append(f"  CLAUDE.md: {verb} the line agentctx wrote for it ({where})")
    for named in claude.get("named", []):
        lines.append(f"  CLAUDE.md: {named['path']}:{named['line']} names it: {named['command']}")
    aside = report.get("moved_aside") or {}
    for copy in aside.get("cleaned", []):
        lines.append(f"  moved-aside store: {verb} it from {copy}")
    for named in aside.get("named", []):
        lines.append(f"  moved-aside store {named['path']} cannot be opened ({named['error']}): {named['command']}")
    if report.get("remotes"):
        lines.append("  team servers keep deleted rows in their table files and WAL until their admin runs "
                     "`agentctx remote admin scrub URL`")
    if report.get("team_file_error"):
        lines.append(f"  team file: not checked ({report['team_file_error']})")
    return "\n".join(lines)
