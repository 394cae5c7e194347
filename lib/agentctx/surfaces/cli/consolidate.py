"""Commands of the consolidation pass: ``consolidate``, ``prune``, ``embeddings`` (``status`` lists the
prune candidates).

``agentctx consolidate`` runs the pass in the foreground. The CLI's own script environment has no
model2vec / numpy, so when they cannot be imported (and embeddings are wanted) the pass runs
through ``lib/agentctx_consolidate.py`` under uv, exactly as SessionEnd starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click

from agentctx import settings
from agentctx.store import archive
from agentctx.surfaces.cli.context import Ctx, Number, json_option, pass_ctx


def _has_vector_stack() -> bool:
    try:
        import model2vec  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


@click.command()
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.option("--no-embeddings", is_flag=True, help="FTS5 only: no model, no vectors (this run).")
@click.option("--time-budget", type=Number(1, 3600), help="Seconds (default 60).")
@json_option
@pass_ctx
def consolidate(c: Ctx, dry_run, no_embeddings, time_budget, as_json):
    """Run the consolidation pass now (embeddings, near-duplicates, scores, archive, digest ranking)."""
    argv = ["--cwd", c.project.root] + (["--dry-run"] if dry_run else []) + (
        ["--no-embeddings"] if no_embeddings else []) + (
        ["--time-budget", str(time_budget)] if time_budget else []) + (["--json"] if as_json else [])
    from agentctx.consolidation import consolidate as mod

    if no_embeddings or not mod.embeddings_enabled() or _has_vector_stack():
        sys.exit(mod.main(argv))
    from agentctx.spawn import uv_script

    command = uv_script("agentctx_consolidate.py", argv)
    if command is None:
        raise click.ClickException("uv not found: run with --no-embeddings, or install uv")
    sys.exit(subprocess.run(command).returncode)


@click.command()
@click.option("--yes", is_flag=True, help="Delete the candidates (default: only list them).")
@json_option
@pass_ctx
def prune(c: Ctx, yes, as_json):
    """List (or with --yes delete) records whose score stayed below 0.1 for 60 days."""
    found = archive.prune_candidates(c.conn, c.project.id)
    gone = archive.prune(c.conn, c.project.id, [r["id"] for r in found]) if yes and found else 0
    if gone:
        _drop_vectors([r["id"] for r in found])
    if as_json:
        click.echo(json.dumps({"candidates": found, "deleted": gone}, indent=2))
        return
    for r in found:
        click.echo(f"{r['id']}  {r['type']:<10} score {r['score']:.3f} since {r['low_score_since'][:10]}  {r['title'][:70]}")
    click.echo(f"{gone} deleted" if yes else f"{len(found)} prune candidates" + (
        " (delete with agentctx prune --yes)" if found else ""))


@click.command()
@click.argument("switch", required=False, type=click.Choice(["on", "off"]))
@json_option
def embeddings(switch, as_json):
    """Show or switch (on|off) embeddings; off keeps search and the digest on FTS5 alone."""
    from agentctx.consolidation import embeddings as emb
    from agentctx.store import vectors

    if switch:
        settings.save_user(embeddings=switch == "on")
    current = settings.load()
    info = {"enabled": current["embeddings"], "decided_by": current.sources["embeddings"], "model": emb.source(), "vectors_file": vectors.path()}
    if os.path.exists(vectors.path()):
        info.update(vectors.summary())
    if as_json:
        click.echo(json.dumps(info, indent=2))
    else:
        click.echo("\n".join(f"{k}: {v}" for k, v in info.items()))


def _drop_vectors(record_ids: list[str]) -> None:
    from agentctx.store import vectors

    if not os.path.exists(vectors.path()):
        return
    try:
        store = vectors.Store()
        store.delete(record_ids)
        store.close()
    except Exception:  # consolidation's clean-up removes them later anyway
        pass
