"""The ``agentctx`` command line. Every command that prints data takes ``--json``.

The group and its entry point are here; commands are defined at the top level of one module per
concern and attached below, in one place:

* ``records``: record, get, list, search, edit, pin, supersede, history, import, export
* ``status``: status, digest, inject, demo
* ``capture``: config, extract, handover
* ``consolidate``: consolidate, prune, embeddings
* ``profile``: profile (show, edit, clear), rollup
* ``sync``: sync, team (export, import)
* ``remote``: remote (add, remove, sync, status, share, admin): team sync through PostgreSQL
* ``ui``: ui
* ``scrub``: redact (``--rescan`` scrubs what is stored)
* ``forget``: forget, purge
* ``daylog``: log (the daily log)
* ``doctor``: doctor (integrity checks and repairs)
* ``uninstall``: uninstall (what agentctx put outside the store)

Shared pieces (the store connection, ``--json``) are in ``context``, which imports no command
module: no import cycle.
"""

from __future__ import annotations

import os

import click

from agentctx import __version__
from agentctx.surfaces.cli import (
    capture,
    consolidate,
    daylog,
    doctor,
    forget,
    profile,
    records,
    remote,
    scrub,
    status,
    sync,
    ui,
    uninstall,
)
from agentctx.surfaces.cli.context import Ctx, Group


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentctx")
@click.option("--project", "project_dir", metavar="DIR", help="Project directory (default: current).")
@click.pass_context
def cli(ctx: click.Context, project_dir: str | None) -> None:
    """agentctx: typed, bi-temporal project context for coding agents.

    Data lives in one SQLite file (see `agentctx status`); set AGENTCTX_HOME to move it.
    """
    if project_dir is not None and not os.path.isdir(project_dir):
        raise click.BadParameter(f"{project_dir} is not a directory", param_hint="--project")
    ctx.obj = Ctx(project_dir)


for _command in (
    records.record, records.get, records.list_, records.search_, records.edit, records.pin, records.supersede,
    records.history, records.import_, records.export,
    status.status, status.digest_, status.inject, status.demo,
    capture.config_, capture.extract_, capture.handover_,
    consolidate.consolidate, consolidate.prune, consolidate.embeddings,
    profile.profile_, profile.rollup_,
    sync.sync, sync.team,
    remote.remote,
    scrub.redact_, doctor.doctor_,
    ui.ui,
    forget.forget_, forget.purge_, daylog.log_, uninstall.uninstall_,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="agentctx")
