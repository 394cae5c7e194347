"""The layout's rules, checked on the source: SQL on the store's tables only in ``agentctx/store/``;
the CLI package's commands at module top level, with no import cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "lib" / "agentctx" / "store"


def _store_tables() -> tuple[str, ...]:
    """Every table the migrations create (a fresh store, built by the store's own code)."""
    import os
    import sqlite3
    import tempfile

    from agentctx.store import migrations

    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(os.path.join(tmp, "t.db"))
        migrations.apply(conn)
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        conn.close()
    return tuple(sorted(n for n in names if not n.startswith(("sqlite_", "_sqlite"))))


TABLES = _store_tables()
# A statement on a table: the keyword that names it, then the name (maybe quoted). Case-insensitive,
# so `delete from sessions` counts too; prose ("records from the store") does not name a table after FROM.
_SQL = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+[\"'`\[]?(" + "|".join(sorted(TABLES, key=len, reverse=True))
                  + r")\b[\"'`\]]?(?!\.)", re.IGNORECASE)


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


# ------------------------------------------------------------------------------------- the layers

PKG = ROOT / "lib" / "agentctx"


def module_name(path: Path) -> str:
    """``lib/agentctx/store/records.py`` -> ``agentctx.store.records``."""
    parts = list(path.relative_to(ROOT / "lib").with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, name: str, is_package: bool = False) -> set[str]:
    """Every ``agentctx`` module the source imports, at module level or inside functions, relative
    imports resolved; ``from agentctx.store import records`` counts as ``agentctx.store.records``."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "agentctx"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "agentctx":
                continue
            for alias in node.names:
                out.add(f"{mod}.{alias.name}")
                out.add(mod)
    return out


def layer_of(module: str, packages: set[str]) -> str:
    """The layer of a module: its top-level package under agentctx, or ``base`` for a top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in packages else "base"


def layering_violations(graph: dict[str, set[str]], layers: tuple[str, ...]) -> list[str]:
    """``a -> b`` for each import of a later layer, or of a module in a cycle (any cycle of modules)."""
    packages = set(layers) - {"base"}
    rank = {name: i for i, name in enumerate(layers)}
    known = set(graph)
    found = []
    for src, deps in graph.items():
        for dep in deps:
            if dep not in known or dep == src:
                continue
            a, b = layer_of(src, packages), layer_of(dep, packages)
            if rank[b] > rank[a]:
                found.append(f"{src} -> {dep}: {a} imports the later layer {b}")
    # cycles among modules (imports inside functions included): Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in known or w == v:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append("import cycle: " + " <-> ".join(sorted(group)))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(found)


def the_import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    files = sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts and "vendor" not in p.parts)
    names = {module_name(p) for p in files}
    for p in files:
        name = module_name(p)
        deps = imported_modules(p.read_text(encoding="utf-8"), name, p.name == "__init__.py")
        # ``from agentctx.store import db`` names the package too: there it is only the namespace
        modules = deps & names
        graph[name] = {d for d in modules if not (d != name and _namespace_only(d, modules))}
    return graph


def _namespace_only(package: str, deps: set[str]) -> bool:
    """``from agentctx.store import db`` adds both ``agentctx.store`` and ``agentctx.store.db``: the
    package is only a namespace there when a submodule of it is also imported (``modules`` holds only
    names of real modules)."""
    return any(d.startswith(package + ".") for d in deps)


def test_imports_run_one_way_through_the_layers():
    import agentctx

    graph = the_import_graph()
    assert len(graph) > 100
    problems = layering_violations(graph, agentctx.LAYERS)
    assert problems == [], "imports must follow agentctx.LAYERS, with no cycle:\n" + "\n".join(problems)


def test_every_package_has_a_layer():
    import agentctx

    packages = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(agentctx.LAYERS) - {"base"}


def test_the_layer_check_finds_planted_violations():
    import agentctx

    graph = the_import_graph()
    graph["agentctx.store.records"] = graph["agentctx.store.records"] | {"agentctx.capture.extract"}
    upward = layering_violations(graph, agentctx.LAYERS)
    assert "agentctx.store.records -> agentctx.capture.extract: store imports the later layer capture" in upward
    planted = '''
def later():
    from agentctx.injection import digest  # inside a function: still an import
    from ..events import frame
'''
    deps = imported_modules(planted, "agentctx.capture.observe")
    assert {"agentctx.injection.digest", "agentctx.events.frame"} <= deps
    graph["agentctx.capture.observe"] = graph["agentctx.capture.observe"] | {"agentctx.injection.digest"}
    assert "agentctx.capture.observe -> agentctx.injection.digest: capture imports the later layer injection" in \
        layering_violations(graph, agentctx.LAYERS)
    cyc = {"agentctx.a": {"agentctx.b"}, "agentctx.b": {"agentctx.c"}, "agentctx.c": {"agentctx.a"}}
    assert layering_violations(cyc, ("base",)) == ["import cycle: agentctx.a <-> agentctx.b <-> agentctx.c"]
    same_layer = {"agentctx.store.x": {"agentctx.store.y"}, "agentctx.store.y": set()}
    assert layering_violations(same_layer, ("base", "store")) == []
