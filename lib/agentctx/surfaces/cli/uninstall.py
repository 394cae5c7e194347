"""``agentctx uninstall``: remove what agentctx put outside its store (``maintenance.uninstall``)."""

from __future__ import annotations

import sys

import click

from agentctx.surfaces.cli.context import dump, json_option

NEXT = "claude plugin uninstall agentctx@agentctx"


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


@click.command("uninstall")
@click.option("--purge-data", is_flag=True, help="Delete the store too (every project's records, logs, settings).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before deleting the store (--purge-data).")
@click.option("--dry-run", is_flag=True, help="List what would be removed, with sizes; remove nothing.")
@json_option
def uninstall_(purge_data, yes, dry_run, as_json):
    """Remove agentctx's uv script environments, its cache folder and old plugin copies Claude Code left;
    the store stays unless --purge-data. Then run `claude plugin uninstall agentctx@agentctx`."""
    from agentctx import paths
    from agentctx.maintenance import uninstall

    items = uninstall.plan(purge_data=purge_data)
    if purge_data and not dry_run and not yes:
        if as_json or not sys.stdin.isatty():
            raise click.ClickException("--purge-data deletes the store: confirm with --yes")
        click.confirm(f"Delete the store and everything in {paths.data_dir()}? This cannot be undone", abort=True)
    if not dry_run:
        uninstall.remove(items)
    total = sum(i["bytes"] for i in items if dry_run or i.get("removed"))
    kept = [] if purge_data else [paths.data_dir()]
    if as_json:
        dump({"dry_run": dry_run, "items": items, "bytes": total, "kept": kept, "next": NEXT})
        return
    for item in items:
        state = "would remove" if dry_run else "removed" if item.get("removed") else f"NOT removed ({item.get('error')})"
        click.echo(f"{state}: {item['kind']} {item['path']} ({_mb(item['bytes'])}; {item['why']})")
    click.echo(f"{'would free' if dry_run else 'freed'} {_mb(total)} in {len(items)} places"
               + (f"; the store stays in {kept[0]} (--purge-data deletes it)" if kept else ""))
    click.echo(f"then: {NEXT}; Claude Code keeps its copy of the plugin folder: this command, run from that copy "
               "once more afterwards, removes it too")
    if not dry_run and any(not i.get("removed") for i in items):
        sys.exit(1)
