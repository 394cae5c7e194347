"""Commands on records: record, get, list, search, edit, pin, supersede, history, import, export.

Every read and write by id is this project's (or a global record): another project's ids are "no record".
"""

from __future__ import annotations

import sys

import click

from agentctx.kinds import CONFIDENCES, SCOPES, TYPES
from agentctx.sharing import transfer
from agentctx.store import records, search
from agentctx.surfaces.cli.context import Ctx, InputFile, dump, input_lines, json_option, pass_ctx, read_input, when

MAX_IMPORT_LINE_BYTES = 4 * 1024 * 1024  # one exported record is at most a few hundred KB
MAX_BODY_FILE_BYTES = records.MAX_BODY_CHARS * 4  # UTF-8; the body's own limit is checked in characters
MAX_QUERY_BYTES = 1_000_000


def _short(rec: dict) -> str:
    state = "" if not rec.get("superseded_at") else (
        f"  [superseded by {rec['superseded_by']}]" if rec.get("superseded_by") else "  [retired: forgotten]")
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
        lines.append(f"  SUPERSEDED at {rec['superseded_at']} by {rec['superseded_by']}" if rec["superseded_by"]
                     else f"  RETIRED at {rec['superseded_at']} with no successor (forgotten)")
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
        return read_input(body_file, MAX_BODY_FILE_BYTES, "the body file")
    return body or ""


@click.command()
@click.option("--type", "rtype", required=True, type=click.Choice(TYPES), help="Record type.")
@click.option("--title", required=True, help="One-line statement of the fact.")
@click.option("--body", help="Details, rationale.")
@click.option("--body-file", type=InputFile(), help="Read the body from a file (- for stdin).")
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
        confidence=confidence, pinned=pin, valid_from=when(valid_from), source="cli", supersedes=supersedes,
    )
    if as_json:
        dump(rec)
    elif rec.get("reinforced"):  # the same fact was already current: reinforced, not stored twice
        click.echo(f"already recorded {rec['id']}  {rec['type']}: {rec['title']} "
                   f"(reinforced: stated {rec['reinforce_count'] + 1} times)")
    else:
        click.echo(f"recorded {rec['id']}  {rec['type']}: {rec['title']}")


@click.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@pass_ctx
def get(c: Ctx, ids, as_json):
    """Show records in full (ids or unique id prefixes), with their supersession chain."""
    out = []
    for ref in ids:
        rec = records.resolve(c.conn, ref, c.project.id)
        before, after = records.lineage(c.conn, rec["id"], project_id=c.project.id)
        out.append((rec, before, after))
    if as_json:
        dump([{**r, "supersedes": [x["id"] for x in b], "superseded_chain": [x["id"] for x in a]} for r, b, a in out])
    else:
        click.echo("\n\n".join(_full(r, b, a) for r, b, a in out))


@click.command("list")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only these types (repeatable).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 100000))
@json_option
@pass_ctx
def list_(c: Ctx, types, limit, as_json):
    """List current records of this project, pinned first."""
    recs = records.active(c.conn, c.project.id, types, limit=limit, include_global=True)
    if as_json:
        dump(recs)
    else:
        click.echo("\n".join(_short(r) for r in recs) or "no records")


@click.command("search")
@click.argument("query")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only these types (repeatable).")
@click.option("--all", "include_superseded", is_flag=True, help="Include superseded records.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@json_option
@pass_ctx
def search_(c: Ctx, query, types, include_superseded, limit, as_json):
    """Full-text search (any text is safe: quotes, *, -, NEAR are taken literally; QUERY - reads stdin)."""
    if query == "-":  # the slash commands pass the user's words through a heredoc, never through the shell
        query = read_input("-", MAX_QUERY_BYTES, "the query")
    hits = search.search(c.conn, c.project.id, query, limit=limit, types=types, include_superseded=include_superseded)
    if as_json:
        dump([{**h.record, "relevance": round(h.relevance, 4), "score": round(h.score, 4), "rung": h.rung} for h in hits])
    else:
        click.echo("\n".join(_short(h.record) for h in hits) or "no matches")


@click.command()
@click.argument("ref")
@click.option("--title")
@click.option("--body")
@click.option("--body-file", type=InputFile(), help="Read the body from a file (- for stdin).")
@click.option("--type", "rtype", type=click.Choice(TYPES))
@click.option("--scope", type=click.Choice(SCOPES))
@click.option("--confidence", type=click.Choice(CONFIDENCES))
@json_option
@pass_ctx
def edit(c: Ctx, ref, title, body, body_file, rtype, scope, confidence, as_json):
    """Correct a record in place. With no field options, opens $EDITOR (title on line 1)."""
    if all(v is None for v in (title, body, body_file, rtype, scope, confidence)):
        rec = records.resolve(c.conn, ref, c.project.id)
        edited = click.edit(f"{rec['title']}\n\n{rec['body']}\n", extension=".md")
        if edited is None:
            raise click.ClickException("no changes")
        head, _, rest = edited.partition("\n")
        title, body = head.strip(), rest.strip()
    else:
        body = None if body is None and body_file is None else _body(body, body_file)
    rec = records.edit(c.conn, ref, title=title, body=body, type=rtype, scope=scope, confidence=confidence,
                       project_id=c.project.id)
    if as_json:
        dump(rec)
    else:
        click.echo(f"edited {rec['id']}  {rec['title']}")


@click.command()
@click.argument("ref")
@click.option("--off", is_flag=True, help="Unpin instead.")
@json_option
@pass_ctx
def pin(c: Ctx, ref, off, as_json):
    """Pin a record (or --off to unpin)."""
    rec = records.pin(c.conn, ref, on=not off, project_id=c.project.id)
    if as_json:
        dump(rec)
    else:
        click.echo(f"{'unpinned' if off else 'pinned'} {rec['id']}  {rec['title']}")


@click.command()
@click.argument("old_ref")
@click.option("--body", help="What is true now.")
@click.option("--body-file", type=InputFile(), help="Read the body from a file (- for stdin).")
@click.option("--title", help="The new fact in one line (default: the first sentence of the body, never the old title).")
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
        c.conn, c.project.id, old_ref, body=text, title=title, rationale=rationale, valid_from=when(valid_from)
    )
    if as_json:
        dump(rec)
    else:
        derived = "" if title else "; title from the body's first sentence, --title to choose another"
        click.echo(f"recorded {rec['id']}  {rec['title']}  (supersedes {old_ref}{derived})")


@click.command()
@click.argument("ref", required=False)
@click.option("--at", help="Valid time: what was true on this date (default now).")
@click.option("--known-at", help="Transaction time: as the store knew it on this date (default now).")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES))
@json_option
@pass_ctx
def history(c: Ctx, ref, at, known_at, types, as_json):
    """What was true at a date (both time axes), or one record's supersession chain."""
    if ref:
        rec = records.resolve(c.conn, ref, c.project.id)
        before, after = records.lineage(c.conn, rec["id"], project_id=c.project.id)
        chain = [*reversed(before), rec, *after]
        if as_json:
            dump(chain)
        else:
            click.echo("\n".join(
                f"{r['valid_from'][:10]} → {(r['valid_to'] or 'now')[:10]}  {r['id']}  {r['title']}" for r in chain
            ))
        return
    recs = records.history(
        c.conn, c.project.id, at=when(at, end_of_day=True), known_at=when(known_at, end_of_day=True), types=types
    )
    if as_json:
        dump(recs)
    else:
        click.echo("\n".join(_short(r) for r in recs) or "nothing was recorded as true then")


@click.command("import")
@click.argument("source", type=InputFile())
@click.option("--dry-run", is_flag=True, help="Validate only; store nothing.")
@json_option
@pass_ctx
def import_(c: Ctx, source, dry_run, as_json):
    """Import JSONL records (one object per line; `agentctx export --json` writes this format; - reads stdin).

    Bad lines are reported by number and the good ones still land; the exit status is 1 when any line
    was bad."""
    lines = input_lines(source, MAX_IMPORT_LINE_BYTES)
    report = transfer.import_jsonl(c.conn, c.project.id, lines, dry_run=dry_run)
    if as_json:
        dump(report.as_dict())
    else:
        for number, error in report.errors:
            click.echo(f"line {number}: {error}", err=True)
        verb = "would import" if dry_run else "imported"
        refused = f"{report.refused} refused (their ids belong to another project here), " if report.refused else ""
        click.echo(f"{verb} {report.added} records, {report.existing} already present, {refused}"
                   f"{len(report.errors) - report.refused} bad lines")
    if report.errors:
        sys.exit(1)


@click.command()
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
