"""The layout's rules, checked on the source: SQL on the store's tables only in ``agentctx/store/``;
the CLI package's commands at module top level, with no import cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "lib" / "agentctx" / "store"
TABLES = ("records", "records_fts", "records_archive", "sessions", "injections", "nodes", "edges",
          "record_entities", "meta")
# A statement on a table: the keyword that names it, then the name (maybe quoted). Case-insensitive,
# so `delete from sessions` counts too; prose ("records from the store") does not name a table after FROM.
_SQL = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+[\"'`\[]?(" + "|".join(TABLES) + r")\b[\"'`\]]?(?!\.)",
                  re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in node.body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    out.add(id(stmt.value))
    return out


def sql_on_store_tables(source: str, name: str = "<source>") -> list[str]:
    """``name:line: statement`` for each string literal (f-strings included, docstrings not) that holds
    SQL on one of the store's tables."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # f"SELECT {cols} FROM records": the literal parts, joined
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        else:
            continue
        for match in _SQL.finditer(text):
            found.append(f"{name}:{node.lineno}: {match.group(0)}")
    return sorted(set(found))


def _sources() -> list[Path]:
    """Every Python file of the plugin (the package, entry scripts, hooks, MCP server), tests and bench aside."""
    files = [*(ROOT / "lib").rglob("*.py"), *(ROOT / "hooks").glob("*.py"), *(ROOT / "mcp").glob("*.py")]
    return sorted(p for p in files if STORE not in p.parents and "__pycache__" not in p.parts)


def test_no_sql_on_store_tables_outside_the_store_layer():
    found = [hit for path in _sources()
             for hit in sql_on_store_tables(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert found == [], "SQL on the store's tables belongs in lib/agentctx/store/:\n" + "\n".join(found)


def test_the_checker_finds_planted_sql():
    planted = '''
"""A module docstring may say: SELECT title FROM records (prose, not code)."""
import sqlite3

def current(conn, pid):
    """Docstrings are prose: UPDATE records is fine here."""
    return conn.execute(
        "SELECT id, title "
        "FROM records WHERE project_id = ? AND superseded_at IS NULL", (pid,)).fetchall()

def forget(conn, sid, cols):
    conn.execute(f"SELECT {cols} FROM  sessions s JOIN edges e ON e.to_id = s.session_id")
    conn.execute("delete from injections where session_id = ?", (sid,))
    conn.execute('INSERT OR IGNORE INTO "nodes" (id) VALUES (?)', (sid,))
    conn.execute("UPDATE meta SET value = value + 1")
    return "records from the store, sessions of a project, INTO the records_fts"
'''
    assert sql_on_store_tables(planted, "planted.py") == [
        "planted.py:12: FROM  sessions", "planted.py:12: JOIN edges", "planted.py:13: from injections",
        'planted.py:14: INTO "nodes"', "planted.py:15: UPDATE meta", "planted.py:8: FROM records",
    ]
    assert not sql_on_store_tables('x = "records from the store"\ny = "the sessions table"\n')
    assert not sql_on_store_tables('"""SELECT * FROM records in a docstring"""\n')
    assert sql_on_store_tables("q = 'select count(*) from records_archive'\n")


# ---------------------------------------------------------------------------------------------- the CLI

CLI = ROOT / "lib" / "agentctx" / "surfaces" / "cli"
PACKAGE = "agentctx.surfaces.cli"


def _imports(path: Path) -> set[str]:
    """The modules of the CLI package that ``path`` imports (``from PACKAGE import x`` counts as ``x``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE):
            if node.module == PACKAGE:
                out |= {alias.name for alias in node.names if (CLI / f"{alias.name}.py").exists()} or {"__init__"}
            else:
                out.add(node.module[len(PACKAGE) + 1:].split(".")[0])
        elif isinstance(node, ast.Import):
            out |= {a.name[len(PACKAGE) + 1:].split(".")[0] for a in node.names if a.name.startswith(PACKAGE + ".")}
    return out


def test_the_cli_package_has_no_import_cycle():
    graph = {p.stem: _imports(p) - {p.stem} for p in CLI.glob("*.py")}
    for name, deps in graph.items():
        if name not in ("__init__", "__main__"):
            assert "__init__" not in deps, f"{name} imports the package that attaches it"
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, "import cycle: " + " -> ".join([*path, name])
        if name in done:
            return
        for dep in graph.get(name, ()):
            visit(dep, (*path, name))
        done.add(name)

    for name in graph:
        visit(name, ())


def test_cli_commands_are_module_level_and_attached_in_one_place():
    from agentctx.surfaces.cli import cli

    def walk(cmd: click.Command):
        yield cmd
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                yield from walk(sub)

    commands = [c for c in walk(cli) if c is not cli]
    assert len(commands) > 20
    for cmd in commands:
        fn = cmd.callback
        assert fn.__module__.startswith(PACKAGE + "."), (cmd.name, fn.__module__)
        assert "<locals>" not in fn.__qualname__, f"{cmd.name} is defined inside a function"
    attaching = [p.name for p in CLI.glob("*.py") if "add_command(" in p.read_text(encoding="utf-8")]
    assert attaching == ["__init__.py"]
