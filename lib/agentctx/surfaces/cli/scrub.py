"""``agentctx redact``: show what redaction does to a text, or scrub what is already stored (``--rescan``)."""

from __future__ import annotations

import click

from agentctx.surfaces.cli.context import Ctx, dump, json_option, pass_ctx, read_input

MAX_TEXT_BYTES = 16 * 1024 * 1024


@click.command("redact")
@click.option("--rescan", is_flag=True,
              help="Apply today's rules to everything stored: records, archive, FTS, digests, anchors, logs, team files.")
@click.option("--dry-run", is_flag=True, help="With --rescan: count what would change; write nothing.")
@json_option
@pass_ctx
def redact_(c: Ctx, rescan, dry_run, as_json):
    """Without --rescan: read text on stdin and print it redacted (what agentctx would store)."""
    from agentctx import redact
    from agentctx.maintenance import rescan as rescan_mod

    if not rescan:
        if dry_run:
            raise click.UsageError("--dry-run goes with --rescan")
        out, found = redact.scan(read_input("-", MAX_TEXT_BYTES, "the text"))
        if as_json:
            dump({"text": out, "found": found})
        else:
            click.echo(out, nl=False)
        return
    report = rescan_mod.run(c.conn, dry_run=dry_run)
    if as_json:
        dump(report)
        return
    verb = "would replace" if dry_run else "replaced"
    click.echo(f"{verb} {report['secrets']} secret(s)")
    for table, n in report["store"].items():
        if n["rows"]:
            click.echo(f"  store {table}: {n['secrets']} in {n['rows']} row(s)")
    for kind, n in report["files"].items():
        if n["changed"]:
            click.echo(f"  {kind.replace('_', ' ')}: {n['secrets']} in {n['changed']} of {n['files']} file(s)")
    done = report.get("compacted")
    if done:
        click.echo("  search index rebuilt" + (", store vacuumed" if done["vacuumed"] else
                                               " (vacuum blocked by another process: run again later)"))
    for path in report["damaged_copies_not_scrubbed"]:
        click.echo(f"  not scrubbed (a damaged store moved aside; delete it if it may hold secrets): {path}")
