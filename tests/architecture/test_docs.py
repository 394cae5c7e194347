"""The docs keep up with the code. Names are read from the code, never listed here:

* docs/usage.md has every CLI command (its generated help current), MCP tool, slash command, hook event (with
  its timeout and mode), setting (settings.SETTINGS: plugin option and config.json; .agentctx/config.toml; AGENTCTX_* variables, each read where
  the table says) and record type (with the properties kinds.KINDS gives it);
* docs/architecture.md lists agentctx.LAYERS in order, names every module, and gives every table the
  migrations create an owner in store/;
* every relative link, ADR citation and named path resolves; each ADR has context, decision, consequences;
* the README stays short and keeps its two first commands; the plugin description is one or two sentences.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

from agentctx import kinds, project_settings, settings

ROOT = Path(__file__).resolve().parents[1]
while not (ROOT / "pyproject.toml").is_file():  # the file may move into a tests/ sub-folder
    ROOT = ROOT.parent
DOCS = ROOT / "docs"
USAGE = DOCS / "usage.md"
README_MAX_LINES = 250
FIRST_COMMANDS = ("uv run agentctx demo", "uv run --group dev pytest")
CODE_DIRS = ("lib", "hooks", "mcp", "bin", "tests", "bench", "scripts", "commands")
SKIP_DIRS = {".venv", "node_modules", "__pycache__", "vendor", "results", "artifacts", "fixtures"}
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_ADR = re.compile(r"\bADR-(\d{3})\b")
_ENV = re.compile(r"\bAGENTCTX_[A-Z0-9_]*[A-Z0-9]\b")


def gen_cli_docs():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def section(title: str) -> str:
    """The text of the ``## title`` section of docs/usage.md (up to the next ``## ``)."""
    text = USAGE.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/usage.md has no '## {title}' section"
    return match.group(1)


def missing(names, text: str, fmt: str = "`{}`") -> list[str]:
    return sorted(name for name in names if fmt.format(name) not in text)


# ---- names read from the code ---------------------------------------------------------------------------------

def mcp_tools() -> set[str]:
    """The tools mcp/server.py serves: the names in ``agentctx.surfaces.mcp_schema.TOOLS``."""
    from agentctx.surfaces import mcp_schema

    return {tool.name for tool in mcp_schema.TOOLS}


def hook_events() -> tuple[set[str], set[str]]:
    """(events, hook script names) of hooks/hooks.json."""
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    scripts = {h["command"].split()[-1] for entries in hooks.values() for e in entries for h in e["hooks"]}
    return set(hooks), scripts


def project_setting_keys() -> set[str]:
    """``capture.*`` keys the settings parser reads, ``digest.<section>`` for every digest section, and the
    ``[remote]`` keys read anywhere in the package (team sync's opt-in)."""
    source = Path(project_settings.__file__).read_text(encoding="utf-8")
    capture = set(re.findall(r'\bcapture\.get\("(\w+)"', source))
    assert capture, "no capture.get(...) found in project_settings.py: update project_setting_keys()"
    remote = set()
    for path in _code_files((".py",), ("lib",)):
        remote |= set(re.findall(r'\.get\("remote",\s*\{\}\)\.get\("(\w+)"', path.read_text(encoding="utf-8")))
    return ({f"capture.{k}" for k in capture} | {f"digest.{s}" for s in project_settings.SECTIONS}
            | {f"remote.{k}" for k in remote})


def _code_files(suffixes: tuple[str, ...], dirs=CODE_DIRS):
    for top in dirs:
        for folder, subdirs, files in os.walk(ROOT / top):
            subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS]
            for name in files:
                if name.endswith(suffixes):
                    yield Path(folder) / name


def env_vars() -> set[str]:
    """Every AGENTCTX_* variable the shipped code names (Python and shell; the slash commands' here-document
    delimiter is not a variable, and commands/ is not scanned)."""
    found = set()
    for path in _code_files((".py", ".sh"), ("lib", "hooks", "mcp", "bin")):
        found |= set(_ENV.findall(path.read_text(encoding="utf-8", errors="replace")))
    return found


def md_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"#{1,6} (.+)", line)
        if match:
            base = slug(match.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


# ---- the checks -----------------------------------------------------------------------------------------------

def test_every_cli_command_is_in_the_usage_reference_and_its_generated_help_is_current():
    gen = gen_cli_docs()
    paths = gen.command_paths()
    assert {"record", "search", "remote admin migrate"} <= set(paths)  # the walk reaches nested groups
    text = USAGE.read_text(encoding="utf-8")
    assert missing(paths, text, "### `agentctx {}`") == []
    assert gen.splice(text, gen.render()) == text, (
        "the command help in docs/usage.md is out of date: run uv run python scripts/gen_cli_docs.py")


def test_every_mcp_tool_is_documented():
    tools = mcp_tools()
    assert {"ctx_search", "ctx_get", "ctx_record"} <= tools
    assert missing(tools, section("MCP tools"), "`{}(") == []


def test_every_slash_command_is_documented():
    names = {p.stem for p in (ROOT / "commands").glob("*.md")}
    assert names
    assert missing(names, section("Slash commands"), "`/agentctx:{}") == []


def test_every_hook_event_and_script_is_documented():
    events, scripts = hook_events()
    text = section("Hook events")
    assert missing(events, text) == []
    assert missing(scripts, text) == []


def test_every_setting_is_documented():
    text = section("Settings")
    assert missing(settings.BY_KEY, text) == []
    assert missing(project_setting_keys(), text) == []
    variables = env_vars()
    assert {"AGENTCTX_HOME", "AGENTCTX_LLM", "AGENTCTX_DISABLE"} <= variables
    assert missing(variables, text) == []


def test_every_record_type_scope_confidence_and_source_is_documented():
    text = section("Record types")
    for names in (kinds.TYPES, kinds.SCOPES, kinds.CONFIDENCES, kinds.SOURCES):
        assert missing(names, text) == []


def test_the_checks_can_fail():
    """A name the docs lack is reported (guards against a reader that always finds everything)."""
    assert missing({"ctx_nothing_like_this"}, section("MCP tools"), "`{}(") == ["ctx_nothing_like_this"]
    gen = gen_cli_docs()
    stale = USAGE.read_text(encoding="utf-8").replace("Show this message and exit.", "Show it.", 1)
    assert gen.splice(stale, gen.render()) != stale


def test_every_relative_link_resolves_to_a_file_and_heading():
    broken = []
    for doc in md_files():
        in_code = False
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            for target in _LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                dest = (doc.parent / file_part).resolve() if file_part else doc
                where = f"{doc.relative_to(ROOT)}:{n}: {target}"
                if not dest.exists():
                    broken.append(where + " (no such file)")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(where + " (no such heading)")
    assert broken == []


def adr_files() -> dict[str, Path]:
    return {p.name[:3]: p for p in (DOCS / "decisions").glob("[0-9][0-9][0-9]-*.md")}


def test_every_adr_citation_resolves_to_a_decision_file():
    known = adr_files()
    assert len(known) >= 10
    cited = {}
    for path in [*md_files(), *_code_files((".py", ".md", ".toml", ".sh", ".js"))]:
        for number in _ADR.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(number, str(path.relative_to(ROOT)))
    assert {n: where for n, where in cited.items() if n not in known} == {}


@pytest.mark.parametrize("number", sorted(adr_files()))
def test_each_decision_has_context_decision_consequences(number):
    text = adr_files()[number].read_text(encoding="utf-8")
    assert text.startswith(f"# ADR-{number}: ")
    for part in ("## Context", "## Decision", "## Consequences"):
        assert part in text, f"ADR-{number} lacks {part}"


def test_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    pages = [p for p in DOCS.glob("*.md") if p.name != "README.md"]
    assert pages and [p.name for p in pages if f"({p.name})" not in index] == []
    assert "(decisions/)" in index or "(decisions/README.md)" in index


def test_the_readme_is_short_and_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_MAX_LINES
    for command in FIRST_COMMANDS:
        assert command in text
    assert "(docs/" in text


def test_the_plugin_description_is_one_or_two_sentences():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", manifest["description"].strip()) if s]
    assert 1 <= len(sentences) <= 2 and len(manifest["description"]) < 500


_PATH = re.compile(r"`([\w.-]+(?:/[\w.-]+)*(?:\.(?:py|md|json|sh|toml|lock|js|jsonl)|/))(?:::\w+)?`")
_BASES = ("", "lib/agentctx/", "lib/", "docs/", "tests/")
_NOT_OURS = ("~", "/", ".agentctx/", ".claude/", ".venv", "tests/artifacts/")  # a user's repository, generated output
_EXAMPLES = {"settings.py"}  # file names of a user's project the guide uses as examples


def named_paths(text: str) -> set[str]:
    """Repository paths named in backticks (``lib/agentctx/store/records.py``, ``store/records.py``,
    ``budgets.py``, ``tests/support/``), without placeholders or globs."""
    return {path for path in _PATH.findall(text)
            if ("/" in path.rstrip("/") or path.endswith(".py")) and path not in _EXAMPLES}  # `logs/`: the data dir


def test_every_path_the_docs_name_exists():
    """architecture.md, recipes.md and the other pages name modules and files: each must exist (as a path from
    the repository root, from lib/agentctx/, from lib/ or from docs/), so the docs follow the code when it moves."""
    gone = []
    for doc in md_files():
        for path in sorted(named_paths(doc.read_text(encoding="utf-8"))):
            if path.startswith("../shared/") and not (ROOT.parent / "shared").is_dir():
                continue  # the evaluation material beside a checkout: checked where it is there (CI has it)
            if not path.startswith(_NOT_OURS) and not any((ROOT / base / path).exists() for base in _BASES):
                gone.append(f"{doc.relative_to(ROOT)}: {path}")
    assert gone == []


def layer_rows() -> list[tuple[str, str]]:
    """(layer, row text) of the layer table in docs/architecture.md, in its order."""
    rows = []
    for line in (DOCS / "architecture.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| \d+ \| (base modules|`(\w+)/`)[^|]*\| (.*)", line)
        if match:
            rows.append((match.group(2) or "base", match.group(3)))
    return rows


def test_the_architecture_lists_the_layers_in_their_order():
    import agentctx

    assert [layer for layer, _ in layer_rows()] == list(agentctx.LAYERS)


def test_the_architecture_names_every_module_of_the_package():
    """Each module of lib/agentctx (and each sub-package of a layer) is named on the architecture page."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    package = ROOT / "lib" / "agentctx"
    unnamed = []
    for path in sorted(package.glob("*.py")) + sorted(package.glob("*/*.py")) + sorted(package.glob("*/*/")):
        stem = path.stem if path.suffix else path.name
        if stem.startswith("__") or stem in {"static", "vendor"}:
            continue
        rel = path.relative_to(package).as_posix().rstrip("/")
        if f"`{stem}`" not in text and f"`{stem}/`" not in text and rel not in text:
            unnamed.append(rel)
    assert unnamed == []


def test_each_environment_variable_is_read_where_the_table_says():
    """The "read by" column of the environment-variable table names files that really name the variable."""
    rows = re.findall(r"^\| `(AGENTCTX_\w+)` \| ([^|]+) \|", section("Settings"), re.M)
    assert len(rows) >= 10
    wrong = []
    for variable, where in rows:
        for name in re.findall(r"`([^`]+)`", where):
            found = [ROOT / base / name for base in (*_BASES, "lib/agentctx/", "hooks/") if (ROOT / base / name).exists()]
            files = [f for p in found for f in ([p] if p.is_file() else p.rglob("*.py"))]
            if not any(variable in f.read_text(encoding="utf-8", errors="replace") for f in files):
                wrong.append(f"{variable}: {name}")
    assert wrong == []


def test_the_hook_table_gives_each_handler_its_timeout_and_mode():
    """Each (event, script) of hooks/hooks.json has a row in the hook table with its timeout and sync/async."""
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    rows = [re.split(r"(?<!\\)\|", line) for line in section("Hook events").splitlines() if line.startswith("| `")]
    wrong = []
    for event, entries in hooks.items():
        for entry in entries:
            for handler in entry["hooks"]:
                script = handler["command"].split()[-1]
                mine = [r for r in rows if r[1].strip().startswith(f"`{event}`") and f"`{script}`" in r[2]]
                mode = "async" if handler.get("async") else "sync"
                if not any(f"{handler['timeout']} s" in r[3] and r[3].strip().startswith(mode) for r in mine):
                    wrong.append(f"{event} / {script}: {mode}, {handler['timeout']} s")
    assert wrong == []


def test_the_architecture_gives_every_table_its_owner():
    """Each table the migrations create has a row in "The store's tables", naming a store/ module that exists."""
    from tests.architecture.test_architecture import TABLES

    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    part = text[text.index("## The store's tables"):]
    rows = {}
    for line in part.splitlines():
        cells = line.split("|")
        if line.startswith("| `") and len(cells) > 3:
            for table in re.findall(r"`(\w+)`", cells[1]):
                rows[table] = re.findall(r"`(store/\w+\.py)`", cells[3])
    assert sorted(t for t in TABLES if not rows.get(t)) == []
    assert sorted(m for owners in rows.values() for m in owners if not (ROOT / "lib" / "agentctx" / m).is_file()) == []


def test_the_record_type_table_agrees_with_kinds():
    """Weight, daily decay, digest section and sharing in the usage table are those of ``kinds.KINDS``."""
    wrong = []
    rows = {r[1].strip().strip("`"): [c.strip() for c in r] for r in
            (line.split("|") for line in section("Record types").splitlines() if line.startswith("| `"))}
    for name, kind in kinds.KINDS.items():
        cells = rows.get(name)
        if cells is None:
            wrong.append(f"{name}: no row")
            continue
        weight, decay, digest, shared = cells[4], cells[5], cells[6], cells[7]
        if float(weight) != kind["weight"]:
            wrong.append(f"{name}: weight {weight}")
        if (kind["daily_decay"] == 1.0) != decay.startswith("none") or (
                kind["daily_decay"] != 1.0 and float(decay) != kind["daily_decay"]):
            wrong.append(f"{name}: decay {decay}")
        if (kind["digest"] or "none") != digest.split()[0]:
            wrong.append(f"{name}: digest {digest}")
        if kind["shared"] == shared.startswith("no"):
            wrong.append(f"{name}: shared {shared}")
    assert wrong == []
