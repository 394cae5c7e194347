"""What the store holds and what Claude is given: status, digest, inject, demo."""

from __future__ import annotations

import os

import click

from agentctx import __version__, budgets, paths
from agentctx.injection import digest, turn
from agentctx.kinds import TYPES
from agentctx.store import archive, db, records, sessions
from agentctx.surfaces.cli.context import Ctx, dump, json_option, pass_ctx


@click.command()
@json_option
@pass_ctx
def status(c: Ctx, as_json):
    """Counts, database size and the tokens injected per recent session."""
    conn, proj = c.conn, c.project
    prune = archive.prune_candidates(conn, proj.id, limit=20)
    size = sum(os.path.getsize(paths.db_path() + s) for s in ("", "-wal") if os.path.exists(paths.db_path() + s))
    sess = sessions.recent(conn, proj.id, limit=10)
    totals = sessions.totals(conn, proj.id)
    data = {
        "version": __version__,
        "project": {"id": proj.id, "name": proj.name, "root": proj.root, "remote": proj.remote},
        "store": {"path": paths.db_path(), "bytes": size, "schema": db.schema_version(conn)},
        "records": records.counts(conn, proj.id),
        "records_all_projects": records.count_all(conn),
        "sessions": sess,
        "tokens_injected_total": totals["tokens_injected"],
        "log": os.path.join(paths.data_dir(), "logs", "agentctx.log"),
    }
    data["extraction"] = _extraction_totals(totals)
    data["spending"] = _spending(conn, sess)
    if as_json:
        dump({**data, "prune_candidates": prune})
        return
    click.echo(f"agentctx {__version__} · project {proj.name} ({proj.id})" + (f" · {proj.remote}" if proj.remote else ""))
    click.echo(f"store {data['store']['path']} · {size / 1024:.0f} KiB · {data['records_all_projects']} records in all projects")
    for rtype in TYPES:
        n = data["records"].get(rtype)
        if n:
            click.echo(f"  {rtype:<11} {n['active']:>6} current  {n['superseded']:>6} superseded")
    if not data["records"]:
        click.echo("  no records for this project yet")
    click.echo(f"tokens injected in this project: {data['tokens_injected_total']}")
    x = data["extraction"]
    click.echo(f"extraction ({x['mode']}{': ' + x['why'] if x['why'] else ''}): {x['runs']} runs, {x['input_tokens']:,} input / {x['output_tokens']:,} "
               f"output tokens, ${x['cost_usd']:.4f} at Haiku 4.5 prices")
    for s in sess:
        click.echo(f"  {s['started_at'][:16]}  {s['session_id'][:12]:<12} {s['tokens_injected']:>6} tokens "
                   f"in {s['injections']} injections" + ("" if s["ended_at"] else "  (open)"))
    sp = data["spending"]
    line = f"spending on model calls: today ${sp['today_usd']:.4f} of ${sp['daily_cap_usd']:.2f} (daily cap)"
    if sp.get("session_id"):
        line += f" · session {sp['session_id'][:12]} ${sp['session_usd']:.4f} of ${sp['session_cap_usd']:.2f}"
    click.echo(line + (f"\n  PAUSED: {sp['paused']}" if sp["paused"] else ""))
    if prune:
        click.echo(f"prune candidates (score < 0.1 for 60 days; delete with agentctx prune --yes): {len(prune)}")
        for r in prune[:10]:
            click.echo(f"  {r['id']}  {r['type']:<10} {r['title'][:70]}")


def _spending(conn, sess: list[dict]) -> dict:
    """Spend against the caps: today, and this session (Claude Code's, else the project's newest)."""
    from agentctx.store import spend

    sid = os.environ.get("CLAUDE_CODE_SESSION_ID") or (sess[0]["session_id"] if sess else None)
    return {**spend.status(conn, sid), "session_id": sid, "paused": spend.paused(conn, sid),
            "last_days": spend.by_day(conn, 7)}


def _extraction_totals(totals: dict) -> dict:
    from agentctx.capture import extract

    how, why = extract.mode(check_sdk=False)
    return {"mode": how, "why": why, "runs": totals["extraction_runs"], "input_tokens": totals["extraction_input_tokens"],
            "output_tokens": totals["extraction_output_tokens"], "cost_usd": round(totals["extraction_cost_usd"], 6)}


@click.command("digest")
@json_option
@pass_ctx
def digest_(c: Ctx, as_json):
    """Show what SessionStart injects for this project now."""
    dig = digest.build(c.conn, c.project)
    if as_json:
        dump({"text": dig.text, "tokens": dig.tokens, "chars": len(dig.text), "record_ids": dig.record_ids,
               "budget": budgets.SESSION_START_TOKENS})
    else:
        click.echo(dig.text)
        click.echo(f"({dig.tokens} of {budgets.SESSION_START_TOKENS} tokens, {len(dig.text)} characters)", err=True)


@click.command()
@click.argument("prompt")
@click.option("--session", default="agentctx-cli-preview", help="Session whose dedup state applies.")
@json_option
@pass_ctx
def inject(c: Ctx, prompt, session, as_json):
    """Show what UserPromptSubmit would inject for PROMPT (nothing is recorded)."""
    text, ids, tokens = turn.select(c.conn, c.project.id, session, prompt)
    if as_json:
        dump({"text": text, "tokens": tokens, "record_ids": ids, "budget": budgets.TURN_TOKENS})
    else:
        click.echo(text or "(nothing to inject)")


@click.command()
@click.option("--home", type=click.Path(file_okay=False), help="Keep the demo store here (default: a temp dir).")
def demo(home):
    """Build a sample project store and show what Claude would be given, before and after a change."""
    from agentctx.surfaces import demo as demo_mod

    demo_mod.run(home, echo=click.echo)
