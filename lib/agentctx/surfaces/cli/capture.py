"""Capture at the command line: settings (config), extraction now (extract), the handover."""

from __future__ import annotations

import os
import sys

import click

from agentctx import settings
from agentctx.surfaces.cli.context import Ctx, InputFile, Number, dump, json_option, pass_ctx


def _shown(value: bool | float | int, kind: str) -> str:
    return ("on" if value else "off") if kind == "bool" else f"${value:.2f}" if kind == "usd" else str(value)


def _digest_switch(ctx, param, values):
    out = {}
    for item in values:
        name, _, state = item.partition("=")
        if name not in settings.SECTIONS or state not in ("on", "off"):
            raise click.BadParameter(f"{item!r}: SECTION=on|off, SECTION one of "
                                     f"{', '.join(settings.SECTIONS)}", ctx, param)
        out[f"digest_{name}"] = state == "on"
    return out


@click.command("config")
@click.option("--llm/--no-llm", "llm", default=None, help="Turn LLM extraction at turn end on or off.")
@click.option("--claude-login/--no-claude-login", "claude_login", default=None,
              help="Without an API key, extract through your Claude Code login (claude -p) when it is "
                   "logged in (on by default).")
@click.option("--daily-cap", "daily_cap_usd", type=Number(min=0), default=None, metavar="USD",
              help="Spending cap for model calls per UTC day, all projects (default 2.00; 0: none at all).")
@click.option("--session-cap", "session_cap_usd", type=Number(min=0), default=None, metavar="USD",
              help="Spending cap for model calls per session (default 0.50).")
@click.option("--embeddings/--no-embeddings", "embeddings", default=None,
              help="Local embeddings at session end (off: full-text search alone).")
@click.option("--ui-port", "ui_port", type=click.IntRange(1, 65535), default=None, metavar="PORT",
              help="The port `agentctx ui` tries first (default 7327).")
@click.option("--digest", "digest", multiple=True, callback=_digest_switch, metavar="SECTION=on|off",
              help="A SessionStart digest section (profile, decisions, handover, developer) on or off; repeatable.")
@click.option("--show", is_flag=True, help="Print the settings in force here and where each comes from (the "
              "default with no other option).")
@json_option
def config_(llm, claude_login, daily_cap_usd, session_cap_usd, embeddings, ui_port, digest, show, as_json):
    """Show or change settings. Changes go to config.json in the data directory; for each setting the
    repository's .agentctx/config.toml, then the plugin option (/plugin in Claude Code), then config.json,
    then the default decide, and --show says which did."""
    from agentctx import project
    from agentctx.capture import extract

    changes = {k: v for k, v in (("llm", llm), ("claude_login", claude_login), ("daily_cap_usd", daily_cap_usd),
                                 ("session_cap_usd", session_cap_usd), ("embeddings", embeddings),
                                 ("ui_port", ui_port)) if v is not None} | digest
    if changes:
        try:
            settings.save_user(**changes)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
    root = project.detect(os.getcwd()).root
    current = settings.load(root)
    how, why = extract.mode(check_sdk=False)
    shadowed = [k for k in changes if current.sources[k] != "user"]
    if as_json:
        dump({"settings": current.as_dict(), "user_file": settings.user_path(), "project_root": root,
              "plugin_file": settings.claude_settings_path(), "notes": current.notes,
              "shadowed": shadowed, "extraction_mode": how, "why": why})
        return
    for s in settings.SETTINGS:
        source = current.sources[s.key]
        where = current.where[s.key]
        click.echo(f"{s.key}: {_shown(current[s.key], s.kind)}  ({source}{f': {where}' if where else ''})")
    for note in current.notes:
        click.echo(f"note: {note}")
    for key in shadowed:
        click.echo(f"note: {key} saved to {settings.user_path()}, but the {current.sources[key]} layer "
                   f"({current.where[key]}) decides it")
    click.echo(f"extraction now: {how}" + (f" ({why})" if why else ""))


@click.command("extract")
@click.option("--session-id", required=True, help="The Claude Code session id.")
@click.option("--transcript", required=True, type=InputFile(),
              help="The session's transcript JSONL.")
@json_option
@pass_ctx
def extract_(c: Ctx, session_id, transcript, as_json):
    """Extract records from what a session added since the last run, now (what Stop starts)."""
    from agentctx.capture import extract
    from agentctx.consolidation import worker
    from agentctx.events import stop

    workdir = c.project_dir or os.getcwd()
    if extract.mode()[1].startswith("the anthropic SDK"):  # this environment lacks it: the worker has it
        argv = stop.worker_command(session_id, transcript, workdir, final=True)
        if argv is None:
            raise click.ClickException("uv not found: cannot run the extraction worker")
        import subprocess

        sys.exit(subprocess.run([*argv, *(["--json"] if as_json else [])]).returncode)
    results = worker.work(session_id, transcript, workdir, final=True)
    if as_json:
        dump([r.as_dict() for r in results])
        return
    for r in results:
        line = f"{r.status} ({r.mode or 'no new conversation'})"
        if r.written:
            line += f": {len(r.written)} records"
        if r.usage is not None and r.usage.calls:
            line += f"; {r.usage.calls} calls, ${r.usage.cost_usd:.5f}"
        click.echo(" ".join([line, *r.notes, r.why if r.why not in r.notes else "", r.error]).strip())


@click.command("handover")
@json_option
@pass_ctx
def handover_(c: Ctx, as_json):
    """Show the project's current handover (what the last session left, with its version)."""
    from agentctx.capture import handover

    current = handover.read(c.conn, c.project.id)
    rec = current["record"]
    if as_json:
        dump({"version": current["version"], **current["fields"],
               "record": None if rec is None else {k: rec[k] for k in ("id", "session_id", "recorded_at", "updated_at")}})
        return
    if rec is None:
        click.echo("no handover for this project yet")
        return
    click.echo(f"{rec['title']}\n  version {current['version']} · id {rec['id']} · session {rec['session_id'] or '?'}"
               f" · {rec['updated_at'] or rec['recorded_at']}")
    if rec["body"]:
        click.echo("\n" + rec["body"])
