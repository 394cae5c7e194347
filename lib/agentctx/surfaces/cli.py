"""The ``agentctx`` command line. Every command that prints data takes ``--json``."""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import click

from agentctx import __version__, budgets, clock, paths, project
from agentctx.injection import digest, turn
from agentctx.kinds import CONFIDENCES, SCOPES, TYPES
from agentctx.sharing import transfer
from agentctx.store import db, records, search


class _Group(click.Group):
    """Turns expected failures into one ``Error: ...`` line and a non-zero exit."""

    def main(self, *args, **kwargs):  # type: ignore[override]
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            _fail("aborted", 1)
        except click.UsageError as exc:
            hint = f" (see: agentctx {exc.ctx.command.name} --help)" if exc.ctx and exc.ctx.command.name != "cli" else ""
            _fail(f"{exc.format_message()}{hint}", 2)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except (records.RecordError, db.StoreError, ValueError) as exc:
            _fail(str(exc), 1)
        except sqlite3.Error as exc:
            _fail(f"store: {exc}", 1)


def _fail(message: str, code: int) -> None:
    """One line on stderr (click's messages can span lines, e.g. a missing --type lists choices)."""
    click.echo(f"Error: {' '.join(message.split())}", err=True)
    sys.exit(code)


def _connect() -> sqlite3.Connection:
    try:
        return db.connect()
    except sqlite3.DatabaseError as exc:
        if db.is_corruption(exc):
            moved = db.quarantine(reason=str(exc))
            click.echo(f"agentctx: the store was damaged and moved to {moved}; starting a fresh one", err=True)
            return db.connect()
        raise


class Ctx:
    """Lazily opened connection and project for a command."""

    def __init__(self, project_dir: str | None):
        self.project_dir = project_dir
        self._conn: sqlite3.Connection | None = None
        self._project: project.Project | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = _connect()
        return self._conn

    @property
    def project(self) -> project.Project:
        if self._project is None:
            self._project = project.detect(self.project_dir)
            project.register(self.conn, self._project)
        return self._project


pass_ctx = click.make_pass_decorator(Ctx)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def _dump(data) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _short(rec: dict) -> str:
    state = "" if not rec.get("superseded_at") else f"  [superseded by {rec['superseded_by']}]"
    pin = " 📌" if rec.get("pinned") else ""
    return f"{rec['id']}  {rec['type']:<10} {rec['valid_from'][:10]}  {rec['title']}{pin}{state}"


def _full(rec: dict, before: list[dict], after: list[dict]) -> str:
    lines = [
        f"{rec['title']}",
        f"  id {rec['id']} · {rec['type']} · {rec['scope']} · {rec['confidence']} · source {rec['source']}"
        + (" · pinned" if rec["pinned"] else "") + (f" · key {rec['key']}" if rec["key"] else ""),
        f"  valid {rec['valid_from']} → {rec['valid_to'] or 'now'} · recorded {rec['recorded_at']}",
    ]
    if rec["superseded_at"]:
        lines.append(f"  SUPERSEDED at {rec['superseded_at']} by {rec['superseded_by']}")
    if rec["body"]:
        lines += ["", rec["body"]]
    if before:
        lines += ["", "Supersedes:"] + [f"  {_short(r)}" for r in before]
    if after:
        lines += ["", "Superseded by:"] + [f"  {_short(r)}" for r in after]
    return "\n".join(lines)


def _body(body: str | None, body_file) -> str:
    if body is not None and body_file is not None:
        raise click.UsageError("give --body or --body-file, not both")
    if body_file is not None:
        return body_file.read()
    return body or ""


def _when(value: str | None, *, end_of_day: bool = False) -> str | None:
    if value is None:
        return None
    try:
        return clock.parse(value, end_of_day=end_of_day)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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


@cli.command()
@click.option("--type", "rtype", required=True, type=click.Choice(TYPES), help="Record type.")
@click.option("--title", required=True, help="One-line statement of the fact.")
@click.option("--body", help="Details, rationale.")
@click.option("--body-file", type=click.File("r", encoding="utf-8"), help="Read the body from a file (- for stdin).")
@click.option("--scope", type=click.Choice(SCOPES), default="project", show_default=True)
@click.option("--key", help="Structured key, e.g. profile.test_command: replaces the active record with that key.")
@click.option("--confidence", type=click.Choice(CONFIDENCES), default="explicit", show_default=True)
@click.option("--pin", is_flag=True, help="Pin it: pinned records come first in every injection.")
@click.option("--valid-from", help="When it became true (ISO date); default now.")
@click.option("--supersedes", metavar="ID", help="The record this one replaces.")
@json_option
@pass_ctx
def record(c: Ctx, rtype, title, body, body_file, scope, key, confidence, pin, valid_from, supersedes, as_json):
    """Store a decision, convention, preference, discovery, bugfix, handover or profile fact."""
    rec = records.add(
        c.conn, c.project.id, type=rtype, title=title, body=_body(body, body_file), scope=scope, key=key,
        confidence=confidence, pinned=pin, valid_from=_when(valid_from), source="cli", supersedes=supersedes,
    )
    if as_json:
        _dump(rec)
    else:
        click.echo(f"recorded {rec['id']}  {rec['type']}: {rec['title']}")


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@pass_ctx
def get(c: Ctx, ids, as_json):
    """Show records in full (ids or unique id prefixes), with their supersession chain."""
    out = []
    for ref in ids:
        rec = records.resolve(c.conn, ref)
        before, after = records.lineage(c.conn, rec["id"])
        out.append((rec, before, after))
    if as_json:
        _dump([{**r, "supersedes": [x["id"] for x in b], "superseded_chain": [x["id"] for x in a]} for r, b, a in out])
    else:
        click.echo("\n\n".join(_full(r, b, a) for r, b, a in out))


@cli.command("list")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only these types (repeatable).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 100000))
@json_option
@pass_ctx
def list_(c: Ctx, types, limit, as_json):
    """List current records of this project, pinned first."""
    recs = records.active(c.conn, c.project.id, types, limit=limit, include_global=True)
    if as_json:
        _dump(recs)
    else:
        click.echo("\n".join(_short(r) for r in recs) or "no records")


@cli.command("search")
@click.argument("query")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only these types (repeatable).")
@click.option("--all", "include_superseded", is_flag=True, help="Include superseded records.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@json_option
@pass_ctx
def search_(c: Ctx, query, types, include_superseded, limit, as_json):
    """Full-text search (any text is safe: quotes, *, -, NEAR are taken literally; QUERY - reads stdin)."""
    if query == "-":  # the slash commands pass the user's words through a heredoc, never through the shell
        query = sys.stdin.read(1_000_000)
    hits = search.search(c.conn, c.project.id, query, limit=limit, types=types, include_superseded=include_superseded)
    if as_json:
        _dump([{**h.record, "relevance": round(h.relevance, 4), "score": round(h.score, 4), "rung": h.rung} for h in hits])
    else:
        click.echo("\n".join(_short(h.record) for h in hits) or "no matches")


@cli.command()
@click.argument("ref")
@click.option("--title")
@click.option("--body")
@click.option("--body-file", type=click.File("r", encoding="utf-8"))
@click.option("--type", "rtype", type=click.Choice(TYPES))
@click.option("--scope", type=click.Choice(SCOPES))
@click.option("--confidence", type=click.Choice(CONFIDENCES))
@json_option
@pass_ctx
def edit(c: Ctx, ref, title, body, body_file, rtype, scope, confidence, as_json):
    """Correct a record in place. With no field options, opens $EDITOR (title on line 1)."""
    if all(v is None for v in (title, body, body_file, rtype, scope, confidence)):
        rec = records.resolve(c.conn, ref)
        edited = click.edit(f"{rec['title']}\n\n{rec['body']}\n", extension=".md")
        if edited is None:
            raise click.ClickException("no changes")
        head, _, rest = edited.partition("\n")
        title, body = head.strip(), rest.strip()
    else:
        body = None if body is None and body_file is None else _body(body, body_file)
    rec = records.edit(c.conn, ref, title=title, body=body, type=rtype, scope=scope, confidence=confidence)
    if as_json:
        _dump(rec)
    else:
        click.echo(f"edited {rec['id']}  {rec['title']}")


@cli.command()
@click.argument("ref")
@click.option("--off", is_flag=True, help="Unpin instead.")
@json_option
@pass_ctx
def pin(c: Ctx, ref, off, as_json):
    """Pin a record (or --off to unpin)."""
    rec = records.pin(c.conn, ref, on=not off)
    if as_json:
        _dump(rec)
    else:
        click.echo(f"{'unpinned' if off else 'pinned'} {rec['id']}  {rec['title']}")


@cli.command()
@click.argument("old_ref")
@click.option("--body", help="What is true now.")
@click.option("--body-file", type=click.File("r", encoding="utf-8"))
@click.option("--title", help="New title (default: the old one).")
@click.option("--why", "rationale", help="Why it changed.")
@click.option("--valid-from", help="When the change took effect (ISO date); default now.")
@json_option
@pass_ctx
def supersede(c: Ctx, old_ref, body, body_file, title, rationale, valid_from, as_json):
    """Replace a fact that is no longer true. The old record stays in history."""
    text = _body(body, body_file)
    if not text.strip() and not title:
        raise click.UsageError("give the new --body (or --title)")
    rec = records.supersede(
        c.conn, c.project.id, old_ref, body=text, title=title, rationale=rationale, valid_from=_when(valid_from)
    )
    if as_json:
        _dump(rec)
    else:
        click.echo(f"recorded {rec['id']}  {rec['title']}  (supersedes {old_ref})")


@cli.command()
@click.argument("ref", required=False)
@click.option("--at", help="Valid time: what was true on this date (default now).")
@click.option("--known-at", help="Transaction time: as the store knew it on this date (default now).")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES))
@json_option
@pass_ctx
def history(c: Ctx, ref, at, known_at, types, as_json):
    """What was true at a date (both time axes), or one record's supersession chain."""
    if ref:
        rec = records.resolve(c.conn, ref)
        before, after = records.lineage(c.conn, rec["id"])
        chain = [*reversed(before), rec, *after]
        if as_json:
            _dump(chain)
        else:
            click.echo("\n".join(
                f"{r['valid_from'][:10]} → {(r['valid_to'] or 'now')[:10]}  {r['id']}  {r['title']}" for r in chain
            ))
        return
    recs = records.history(
        c.conn, c.project.id, at=_when(at, end_of_day=True), known_at=_when(known_at, end_of_day=True), types=types
    )
    if as_json:
        _dump(recs)
    else:
        click.echo("\n".join(_short(r) for r in recs) or "nothing was recorded as true then")


@cli.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@click.option("--dry-run", is_flag=True, help="Validate only; store nothing.")
@json_option
@pass_ctx
def import_(c: Ctx, source, dry_run, as_json):
    """Import JSONL records (one object per line; `agentctx export --json` writes this format)."""
    lines = source.readlines()
    with click.progressbar(length=len(lines), label="importing", file=sys.stderr) as bar:
        report = transfer.import_jsonl(c.conn, c.project.id, lines, dry_run=dry_run, progress=bar.update)
    if as_json:
        _dump(report.as_dict())
    else:
        for number, error in report.errors:
            click.echo(f"line {number}: {error}", err=True)
        verb = "would import" if dry_run else "imported"
        click.echo(f"{verb} {report.added} records, {report.existing} already present, {len(report.errors)} bad lines")
    if report.errors and not report.added and not report.existing:
        sys.exit(1)


@cli.command()
@click.option("--all-projects", is_flag=True, help="Every project in the store, not just this one.")
@click.option("-o", "--output", type=click.File("w", encoding="utf-8"), default="-", help="File (default stdout).")
@click.option("--json", "as_json", is_flag=True, help="JSONL (lossless, re-importable) instead of Markdown.")
@pass_ctx
def export(c: Ctx, all_projects, output, as_json):
    """Export the store as organized Markdown (or lossless JSONL with --json)."""
    pid = None if all_projects else c.project.id
    chunks = transfer.export_jsonl(c.conn, pid) if as_json else transfer.export_markdown(c.conn, pid)
    for chunk in chunks:
        output.write(chunk + "\n")


@cli.command()
@json_option
@pass_ctx
def status(c: Ctx, as_json):
    """Counts, database size and the tokens injected per recent session."""
    conn, proj = c.conn, c.project
    size = sum(os.path.getsize(paths.db_path() + s) for s in ("", "-wal") if os.path.exists(paths.db_path() + s))
    sess = [dict(r) for r in conn.execute(
        "SELECT session_id, started_at, ended_at, source, tokens_injected, injections, extraction_cost_usd "
        "FROM sessions WHERE project_id = ? ORDER BY started_at DESC LIMIT 10", (proj.id,))]
    data = {
        "version": __version__,
        "project": {"id": proj.id, "name": proj.name, "root": proj.root, "remote": proj.remote},
        "store": {"path": paths.db_path(), "bytes": size, "schema": conn.execute("PRAGMA user_version").fetchone()[0]},
        "records": records.counts(conn, proj.id),
        "records_all_projects": conn.execute("SELECT COUNT(*) FROM records").fetchone()[0],
        "sessions": sess,
        "tokens_injected_total": conn.execute(
            "SELECT COALESCE(SUM(tokens_injected), 0) FROM sessions WHERE project_id = ?", (proj.id,)).fetchone()[0],
        "log": os.path.join(paths.data_dir(), "logs", "agentctx.log"),
    }
    data["extraction"] = _extraction_totals(conn, proj.id)
    if as_json:
        _dump(data)
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


@cli.command("digest")
@json_option
@pass_ctx
def digest_(c: Ctx, as_json):
    """Show what SessionStart injects for this project now."""
    dig = digest.build(c.conn, c.project)
    if as_json:
        _dump({"text": dig.text, "tokens": dig.tokens, "chars": len(dig.text), "record_ids": dig.record_ids,
               "budget": budgets.SESSION_START_TOKENS})
    else:
        click.echo(dig.text)
        click.echo(f"({dig.tokens} of {budgets.SESSION_START_TOKENS} tokens, {len(dig.text)} characters)", err=True)


@cli.command()
@click.argument("prompt")
@click.option("--session", default="agentctx-cli-preview", help="Session whose dedup state applies.")
@json_option
@pass_ctx
def inject(c: Ctx, prompt, session, as_json):
    """Show what UserPromptSubmit would inject for PROMPT (nothing is recorded)."""
    text, ids, tokens = turn.select(c.conn, c.project.id, session, prompt)
    if as_json:
        _dump({"text": text, "tokens": tokens, "record_ids": ids, "budget": budgets.TURN_TOKENS})
    else:
        click.echo(text or "(nothing to inject)")


@cli.command()
@click.option("--home", type=click.Path(file_okay=False), help="Keep the demo store here (default: a temp dir).")
def demo(home):
    """Build a sample project store and show what Claude would be given, before and after a change."""
    from agentctx.surfaces import demo as demo_mod

    demo_mod.run(home, echo=click.echo)


# -- extraction (issue 4, part B): config, extract, and the status line's totals ------------------


def _extraction_totals(conn: sqlite3.Connection, project_id: str) -> dict:
    from agentctx.capture import extract

    row = conn.execute(
        "SELECT COALESCE(SUM(extraction_runs), 0), COALESCE(SUM(extraction_input_tokens), 0), "
        "COALESCE(SUM(extraction_output_tokens), 0), COALESCE(SUM(extraction_cost_usd), 0) "
        "FROM sessions WHERE project_id = ?", (project_id,)).fetchone()
    how, why = extract.mode(check_sdk=False)
    return {"mode": how, "why": why, "runs": row[0], "input_tokens": row[1], "output_tokens": row[2],
            "cost_usd": round(row[3], 6)}


@cli.command("config")
@click.option("--llm/--no-llm", "llm", default=None, help="Turn LLM extraction at turn end on or off.")
@click.option("--claude-login/--no-claude-login", "claude_login", default=None,
              help="Without an API key, extract through your Claude Code login (claude -p).")
@click.option("--show", is_flag=True, help="Print the settings (the default with no other option).")
@json_option
def config_(llm, claude_login, show, as_json):
    """Show or change settings (stored in config.json in the data directory)."""
    from agentctx import config
    from agentctx.capture import extract

    changes = {k: v for k, v in (("llm", llm), ("claude_login", claude_login)) if v is not None}
    settings = config.save(**changes) if changes else config.load()
    how, why = extract.mode(check_sdk=False)
    if as_json:
        _dump({**settings, "path": config.path(), "extraction_mode": how, "why": why})
        return
    for key, value in settings.items():
        click.echo(f"{key}: {'on' if value else 'off'}")
    click.echo(f"extraction now: {how}" + (f" ({why})" if why else ""))


@cli.command("extract")
@click.option("--session-id", required=True, help="The Claude Code session id.")
@click.option("--transcript", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The session's transcript JSONL.")
@json_option
@pass_ctx
def extract_(c: Ctx, session_id, transcript, as_json):
    """Extract records from what a session added since the last run, now (what Stop starts)."""
    from agentctx.capture import extract, stop, worker

    workdir = c.project_dir or os.getcwd()
    if extract.mode()[1].startswith("the anthropic SDK"):  # this environment lacks it: the worker has it
        argv = stop.worker_command(session_id, transcript, workdir, final=True)
        if argv is None:
            raise click.ClickException("uv not found: cannot run the extraction worker")
        import subprocess

        sys.exit(subprocess.run([*argv, *(["--json"] if as_json else [])]).returncode)
    results = worker.work(session_id, transcript, workdir, final=True)
    if as_json:
        _dump([r.as_dict() for r in results])
        return
    for r in results:
        line = f"{r.status} ({r.mode or 'no new conversation'})"
        if r.written:
            line += f": {len(r.written)} records"
        if r.usage is not None and r.usage.calls:
            line += f"; {r.usage.calls} calls, ${r.usage.cost_usd:.5f}"
        click.echo(" ".join([line, *r.notes, r.error]).strip())


# -- handover (issue 4, part A) -------------------------------------------------------------------


@cli.command("handover")
@json_option
@pass_ctx
def handover_(c: Ctx, as_json):
    """Show the project's current handover (what the last session left, with its version)."""
    from agentctx.capture import handover

    current = handover.read(c.conn, c.project.id)
    rec = current["record"]
    if as_json:
        _dump({"version": current["version"], **current["fields"],
               "record": None if rec is None else {k: rec[k] for k in ("id", "session_id", "recorded_at", "updated_at")}})
        return
    if rec is None:
        click.echo("no handover for this project yet")
        return
    click.echo(f"{rec['title']}\n  version {current['version']} · id {rec['id']} · session {rec['session_id'] or '?'}"
               f" · {rec['updated_at'] or rec['recorded_at']}")
    if rec["body"]:
        click.echo("\n" + rec["body"])


# Command groups kept in their own modules (profile and rollup, dashboard, consolidation,
# CLAUDE.md sync and the team file) add themselves to ``cli``.
from agentctx.surfaces import cli_consolidate, cli_profile, cli_sync, cli_ui  # noqa: E402

for _group in (cli_profile, cli_ui, cli_consolidate, cli_sync):
    _group.register(cli)

def main() -> None:
    cli(prog_name="agentctx")


if __name__ == "__main__":
    main()
