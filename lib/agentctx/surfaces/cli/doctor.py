"""``agentctx doctor [--repair] [--json]``: check the store's integrity; with ``--repair``, fix what can be."""

from __future__ import annotations

import sys

import click

from agentctx.surfaces.cli.context import dump, json_option


@click.command("doctor")
@click.option("--repair", is_flag=True,
              help="Rebuild damaged indexes, salvage what a damaged store holds into a fresh one, fix permissions.")
@json_option
def doctor_(repair, as_json):
    """Check the store (integrity, full-text index, damaged copies, permissions); exit 1 while problems remain."""
    from agentctx.maintenance import doctor

    report = doctor.repair() if repair else doctor.examine()
    if as_json:
        dump(report)
    else:
        click.echo(f"store {report['store']}")
        for line in report.get("before", []) if repair else []:
            click.echo(f"  found: {line}")
        for action in report.get("actions", []):
            click.echo(f"  done: {action}")
        for line in report["problems"]:
            click.echo(f"  problem: {line}")
        if not report["problems"]:
            click.echo("  ok: integrity, full-text index, vectors and permissions are sound")
        elif not repair:
            click.echo("  run `agentctx doctor --repair` to fix what can be fixed")
    sys.exit(1 if report["problems"] else 0)
