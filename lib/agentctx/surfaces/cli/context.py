"""What every command shares: the error-handling group class, the lazily opened store and project,
``--json`` and its output. Imports no command module (they import this one)."""

from __future__ import annotations

import json
import math
import os
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


class Number(click.FloatRange):
    """A finite number in a range: ``inf``, ``nan`` and values outside it are refused with the range."""

    name = "number"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class InputFile(click.ParamType):
    """A file to read (``-``: stdin). Only a regular file: a FIFO, a device or a folder is refused here,
    before anything is opened (``safefile``), so nothing hangs or reads without end."""

    name = "file"

    def convert(self, value, param, ctx):
        from agentctx import safefile

        if value == "-":
            return value
        try:
            if safefile.resolve(os.fspath(value)) is None:
                self.fail(f"{value}: No such file", param, ctx)
        except safefile.Refused as exc:
            self.fail(f"{value}: {exc.reason}; only a regular file is read", param, ctx)
        return os.fspath(value)


def _describe(value: str) -> str:
    return "stdin" if value == "-" else value


def open_input(value: str):
    """A binary stream for an ``InputFile`` value (stdin for ``-``)."""
    from agentctx import safefile

    if value == "-":
        return sys.stdin.buffer
    try:
        fh = safefile.open_regular(value)
    except safefile.Refused as exc:
        raise click.ClickException(f"{value}: {exc.reason}; only a regular file is read") from None
    if fh is None:
        raise click.ClickException(f"{value}: No such file")
    return fh


def read_input(value: str, limit: int, what: str = "input") -> str:
    """The whole text (UTF-8, a BOM dropped) of an ``InputFile`` value; ClickException when it is larger
    than ``limit`` bytes or not UTF-8."""
    stream = open_input(value)
    try:
        data = stream.read(limit + 1)
    finally:
        if value != "-":
            stream.close()
    if len(data) > limit:
        raise click.ClickException(f"{what} ({_describe(value)}) is larger than {limit:,} bytes; nothing was read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{what} ({_describe(value)}) is not UTF-8 text (byte {exc.start})") from None


class LineTooLong(ValueError):
    """A line longer than the reader's bound: reading stopped there."""


def input_lines(value: str, max_line: int):
    """The lines of an ``InputFile`` value, each decoded (bad bytes replaced); a line longer than
    ``max_line`` bytes yields a ``LineTooLong`` in its place and ends the reading (``/dev/zero`` on stdin
    is one endless line)."""
    stream = open_input(value)
    try:
        while True:
            raw = stream.readline(max_line + 1)
            if not raw:
                return
            if len(raw) > max_line and not raw.endswith(b"\n"):
                yield LineTooLong(f"longer than {max_line:,} bytes; nothing after it was read")
                return
            yield raw.decode("utf-8", errors="replace")
    finally:
        if value != "-":
            stream.close()
