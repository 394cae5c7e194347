"""What every command shares: the error-handling group class, the lazily opened store and project,
``--json`` and its output. Imports no command module (they import this one)."""

from __future__ import annotations

import json
import sqlite3
import sys

import click

from agentctx import clock, project
from agentctx.store import db, projects, records


class Group(click.Group):
    """Turns expected failures into one ``Error: ...`` line and a non-zero exit."""

    def main(self, *args, **kwargs):  # type: ignore[override]
        try:
            return self._main_repairing_index(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            fail("aborted", 1)
        except click.UsageError as exc:
            hint = f" (see: agentctx {exc.ctx.command.name} --help)" if exc.ctx and exc.ctx.command.name != "cli" else ""
            fail(f"{exc.format_message()}{hint}", 2)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except (records.RecordError, db.StoreError, ValueError) as exc:
            fail(str(exc), 1)
        except sqlite3.Error as exc:
            fail(f"store: {db.describe(exc)}", 1)
        except OSError as exc:  # a file the command writes (export -o, the team file) on a full disk
            fail(db.describe(exc), 1)

    def _main_repairing_index(self, *args, **kwargs):
        """Run the command; if the full-text index turns out damaged, rebuild it and run it once more
        (the index is derived from the records: a write never fails for it)."""
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except sqlite3.DatabaseError as exc:
            from agentctx import paths
            from agentctx.store import integrity

            done = integrity.repair_index(paths.db_path()) if integrity.index_suspect(exc) else None
            if not done:
                raise
            click.echo(f"agentctx: {done}; running the command again", err=True)
            return super().main(*args, standalone_mode=False, **kwargs)


def fail(message: str, code: int) -> None:
    """One line on stderr (click's messages can span lines, e.g. a missing --type lists choices)."""
    click.echo(f"Error: {' '.join(message.split())}", err=True)
    sys.exit(code)


def connect() -> sqlite3.Connection:
    """The store; a damaged one is moved aside (with a note on stderr) and a fresh one started."""
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
            self._conn = connect()
        return self._conn

    @property
    def project(self) -> project.Project:
        if self._project is None:
            self._project = project.detect(self.project_dir)
            if not db.is_read_only(self.conn):  # a read-only store still answers search, status, get
                try:
                    projects.register(self.conn, self._project)
                except sqlite3.OperationalError as exc:
                    if "readonly" not in str(exc):
                        raise
        return self._project


pass_ctx = click.make_pass_decorator(Ctx)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def dump(data) -> None:
    """Print ``data`` as indented JSON (non-ASCII kept)."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def when(value: str | None, *, end_of_day: bool = False) -> str | None:
    """A date option as a store timestamp; BadParameter if it is not a date."""
    if value is None:
        return None
    try:
        return clock.parse(value, end_of_day=end_of_day)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
