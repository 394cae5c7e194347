"""The entity graph's links: the files, symbols, packages and commands a record is about.

Deterministic, no model: a record's title and body are matched against the project's own
vocabulary (:func:`vocabulary`), read from its files without running anything:

* files and folders: every file under the root (``.git``, dependency and build folders skipped,
  excluded paths of ``.agentctx/config.toml`` too). A mention matches by its path relative to the root
  or, when only one file has that name, by its file name (``settings.py``). A path-like mention with a
  known source extension that names no file (yet) is linked as written (a capitalised bare name such
  as ``Next.js`` is not a file). A folder of the tree (``docs/v1``) is linked as a ``module``;
* symbols: functions, classes, types and constants defined in the source files (Python, Go, Rust,
  JS/TS, Java/Kotlin, Ruby; by regular expression), matched as whole identifiers (``rows.Close()``
  matches ``Close`` only when ``rows`` is not the whole name); an identifier in backticks
  (`` `flags.Enabled` ``) is a symbol even when its definition was not found;
* packages: dependency names from the manifests (``capture.stack.manifest_packages``), matched as
  whole words, case-insensitively, also as prose names them (:func:`package_aliases`: ``kafka-go`` as
  Kafka, ``next`` as Next.js). A dependency named like an everyday word (``next``) also matches the word;
* commands: the profile's commands, package.json scripts and Makefile/justfile targets as they are
  run (``pnpm optimize-images``, ``make test``), and code spans that start with a known tool.

The extraction model names entities too (``entities`` in its reply, when an API key is set); those
are resolved against the same vocabulary (:func:`resolve`). Links are ``applies_to`` edges made once
(``graph.link(..., once=True)``). The vocabulary is cached for ``VOCAB_TTL_S`` (in memory and in the
cache dir), and capped: at most ``MAX_FILES`` paths and ``MAX_SCAN_FILES`` source files read.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time

from agentctx import kinds, paths, safefile

MAX_FILES = 20_000
MAX_SCAN_FILES = 3_000
MAX_SCAN_BYTES = 256 * 1024
MAX_LINKS = 12  # per record
VOCAB_TTL_S = 600
LINKED_TYPES = kinds.LINKED_TYPES
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "env", "__pycache__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tox", ".nox", "dist", "build", "target", ".next", ".nuxt", ".cache", ".gradle", ".idea",
    ".vscode", "coverage", ".terraform", "vendor", "bower_components", ".agentctx",
})
SOURCE_EXTS = frozenset({
    "py", "pyi", "go", "rs", "js", "jsx", "ts", "tsx", "mjs", "cjs", "java", "kt", "rb", "php", "c", "h", "cc", "cpp",
    "hpp", "cs", "swift", "scala", "ex", "exs", "sql", "sh", "bash", "zsh", "toml", "yaml", "yml", "json", "md",
    "mdx", "html", "css", "scss", "vue", "svelte", "proto", "graphql", "tf", "ini", "cfg", "lock", "xml", "gradle",
})
TOOLS = frozenset({
    "make", "just", "npm", "pnpm", "yarn", "bun", "npx", "node", "deno", "uv", "pip", "python", "python3", "pytest",
    "poetry", "ruff", "mypy", "black", "tox", "nox", "cargo", "rustc", "go", "gofmt", "docker", "kubectl", "helm",
    "git", "gh", "terraform", "mvn", "gradle", "bundle", "rake", "rails", "fly", "vercel", "alembic", "sqlc",
    "goose", "psql", "curl", "jest", "vitest", "tsc", "eslint", "prettier", "dotnet", "swift", "mix", "php",
})
_DEFS = {  # (extensions, pattern whose group 1 is a defined name)
    "py": re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)|^([A-Z][A-Z0-9_]{3,})\s*[:=]", re.M),
    "go": re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)|^type\s+([A-Za-z_]\w*)", re.M),
    "rs": re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:fn|struct|enum|trait|type|const|static)\s+"
                     r"([A-Za-z_]\w*)", re.M),
    "js": re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|interface|type|enum)\s+"
                     r"([A-Za-z_$][\w$]*)|^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=", re.M),
    "java": re.compile(r"^\s*(?:public|private|protected)?\s*(?:static\s+)?(?:final\s+)?(?:class|interface|enum|record)"
                       r"\s+([A-Za-z_]\w*)|^\s*(?:public|private|protected)\s+[\w<>\[\], ]+\s+([a-z]\w*)\s*\(", re.M),
    "rb": re.compile(r"^\s*(?:def|class|module)\s+(?:self\.)?([A-Za-z_]\w*[?!]?)", re.M),
}
_LANG = {"py": "py", "pyi": "py", "go": "go", "rs": "rs", "js": "js", "jsx": "js", "ts": "js", "tsx": "js",
         "mjs": "js", "cjs": "js", "java": "java", "kt": "java", "rb": "rb"}
_IDENT = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_CODE = re.compile(r"`([^`\n]{2,120})`")
_PATHISH = re.compile(r"(?<![\w@])(?:\.{0,2}/)?[\w.@-]+(?:/[\w.@\[\]-]+)*\.[A-Za-z][\w]{0,9}\b|(?<![\w@])[\w.@-]+/[\w.@/-]+")
_WORDS = re.compile(r"[A-Za-z0-9][\w.+-]*")
_memo: dict[str, tuple[float, Vocabulary]] = {}


class Vocabulary:
    """What a project is made of: files, defined symbols, dependency packages, commands."""

    __slots__ = ("root", "files", "by_name", "dirs", "symbols", "packages", "aliases", "commands")

    def __init__(self, root: str, files: list[str], symbols: list[str], packages: list[str], commands: list[str]):
        self.root = root
        self.files = set(files)
        self.by_name: dict[str, list[str]] = {}
        self.dirs: set[str] = set()
        for f in files:
            self.by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)
            parts = f.split("/")[:-1]
            self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        self.symbols = set(symbols)
        self.packages = {p.lower(): p for p in packages if len(p) >= 2}
        self.aliases: dict[str, str] = {}  # how prose names a package -> the package
        for lower, name in sorted(self.packages.items(), key=lambda kv: -len(kv[0])):
            for alias in package_aliases(lower):
                self.aliases.setdefault(alias, name)
        self.commands = sorted(set(commands), key=len, reverse=True)

    def as_dict(self) -> dict:
        return {"root": self.root, "files": sorted(self.files), "symbols": sorted(self.symbols),
                "packages": sorted(self.packages.values()), "commands": self.commands}


# Ecosystem affixes around a library's own name: kafka-go, firebase-admin, python-dateutil, @types/node.
_AFFIXES = re.compile(r"^(?:@types/|python-|py-|node-|go-)|(?:-go|-js|\.js|-py|-python|-rs|-sdk|-client|-admin|"
                      r"-core)$")


def package_aliases(name: str) -> set[str]:
    """How prose names a package (lower-case): itself, a Go module's last path part, that without an
    ecosystem affix (``kafka-go`` → ``kafka``), and ``<name>.js`` (``next`` → ``next.js``)."""
    out = {name}
    # a Go module path's last part names it (github.com/jackc/pgx -> pgx); an npm scope's does not (@next/mdx)
    last = name if name.startswith("@") else name.rstrip("/").rsplit("/", 1)[-1]
    out.add(last)
    bare = _AFFIXES.sub("", last)
    if len(bare) >= 4:
        out.add(bare)
    out.add(last + ".js")
    return {a for a in out if len(a) >= 2}


# ---------------------------------------------------------------------------------------------
# The vocabulary


def _walk(root: str) -> list[str]:
    from agentctx import project_settings

    settings = project_settings.load(root)
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
                         and not settings.excluded(rel_dir + d))
        for name in sorted(names):
            rel = rel_dir + name
            if not settings.excluded(rel):
                found.append(rel)
                if len(found) >= MAX_FILES:
                    return found
    return found


def _symbols(root: str, files: list[str]) -> list[str]:
    out: set[str] = set()
    scanned = 0
    for rel in files:
        lang = _LANG.get(rel.rsplit(".", 1)[-1].lower()) if "." in rel else None
        if lang is None:
            continue
        if scanned >= MAX_SCAN_FILES:
            break
        try:
            fh = safefile.open_regular(os.path.join(root, rel), root)
            if fh is None:
                continue
            with fh:
                text = fh.read(MAX_SCAN_BYTES).decode("utf-8", errors="replace")
        except safefile.Refused as exc:
            safefile.refuse(exc, "entities")
            continue
        except OSError:
            continue
        scanned += 1
        for m in _DEFS[lang].finditer(text):
            name = next((g for g in m.groups() if g), "")
            if len(name) >= 3 and not name.startswith("__"):
                out.add(name)
    return sorted(out)


def _commands(root: str) -> list[str]:
    """Commands as the project runs them: the detected profile's, npm scripts, make/just targets."""
    from agentctx.capture import stack

    out: list[str] = []
    try:
        facts = stack.detect(root)
    except (OSError, ValueError):
        facts = []
    for fact in facts:
        if fact.key.removeprefix("profile.") in stack.COMMANDS:
            out += [c.strip() for c in re.split(r"\s*(?:;|&&|\|\|)\s*|,\s+(?=[a-z])", fact.value) if c.strip()]
    out += stack.script_commands(root)
    return [c for c in out if 3 <= len(c) <= 120]


def build_vocabulary(root: str) -> Vocabulary:
    """Read the project at ``root`` (no cache)."""
    from agentctx.capture import stack

    files = _walk(root) if os.path.isdir(root) else []
    try:
        packages = stack.manifest_packages(root)
    except (OSError, ValueError):
        packages = []
    return Vocabulary(root, files, _symbols(root, files), packages, _commands(root) if files else [])


def _cache_file(root: str) -> str:
    from agentctx.project import sha256

    return os.path.join(paths.cache_dir(), "entities", sha256(root.encode()).hexdigest()[:24] + ".json")


def vocabulary(root: str, *, fresh: bool = False) -> Vocabulary:
    """The project's vocabulary, rebuilt when older than ``VOCAB_TTL_S`` (or with ``fresh``)."""
    now = time.time()
    memo = _memo.get(root)
    if memo and not fresh and now - memo[0] < VOCAB_TTL_S:
        return memo[1]
    path = _cache_file(root)
    if not fresh:
        try:
            if now - os.path.getmtime(path) < VOCAB_TTL_S:
                with open(path, encoding="utf-8") as fh:
                    d = json.load(fh)
                vocab = Vocabulary(d["root"], d["files"], d["symbols"], d["packages"], d["commands"])
                _memo[root] = (os.path.getmtime(path), vocab)
                return vocab
        except (OSError, ValueError, KeyError, TypeError):
            pass
    vocab = build_vocabulary(root)
    try:
        from agentctx.fsio import write_json

        write_json(path, vocab.as_dict())
    except OSError:
        pass
    _memo[root] = (now, vocab)
    return vocab


# ---------------------------------------------------------------------------------------------
# Matching


def _file(vocab: Vocabulary, token: str) -> str | None:
    token = token.strip("`'\"()[]{}<>,;:").removeprefix("./")
    if not token or token.startswith(("http:", "https:", "//")) or "://" in token:
        return None
    root = vocab.root.rstrip("/") + "/"
    if token.startswith(root):
        token = token[len(root):]
    if token in vocab.files:
        return token
    name = token.rsplit("/", 1)[-1]
    matches = vocab.by_name.get(name, [])
    if "/" in token:
        matches = [m for m in matches if m.endswith("/" + token) or m == token]
    if len(matches) == 1:
        return matches[0]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in SOURCE_EXTS and not name.startswith(".") and name.count(".") <= 2 and not ext.isdigit() \
            and not re.match(r"^v?\d+(?:\.\d+)+", name) and ("/" in token or (len(name) >= 5 and name[0].islower())):
        return token  # named as a file, not (or not yet) in the tree: linked as written ("Next.js" is not)
    return None


def _folder(vocab: Vocabulary, token: str) -> str | None:
    """A folder of the project that ``token`` names (``docs/v1``, ``i18n/<locale>/``), else None."""
    token = token.strip("`'\"()[]{},;:").removeprefix("./")
    token = re.sub(r"/<[^>]*>.*$|/$", "", token)
    if token in vocab.dirs and ("/" in token or len(token) >= 4):
        return token
    return None


def _is_command(span: str, vocab: Vocabulary) -> bool:
    words = span.split()
    if len(words) < 2 or not re.match(r"^[\w./-]+$", words[0]):
        return False
    first = words[0].rsplit("/", 1)[-1]
    known = {c.split()[0] for c in vocab.commands}
    return first in TOOLS or first in known


def mentions(text: str, vocab: Vocabulary) -> list[tuple[str, str]]:
    """(kind, name) of the entities ``text`` mentions, in order of appearance, without repeats."""
    found: dict[tuple[str, str], None] = {}
    spans = [m.group(1).strip() for m in _CODE.finditer(text)]
    for command in vocab.commands:  # commands as the project runs them (longest first)
        if command in text:
            found[("command", command)] = None
    for span in spans:
        if _is_command(span, vocab):
            found[("command", " ".join(span.split()))] = None
    for m in re.finditer(r"(?<![\w@])[\w.@-]+/[\w.@/<>-]*", text):  # folders first: "docs/v1", "i18n/<locale>/"
        folder = _folder(vocab, m.group(0))
        if folder:
            found[("module", folder)] = None
    for m in _PATHISH.finditer(text):
        name = _file(vocab, m.group(0))
        if name:
            found[("file", name)] = None
    files = {n for k, n in found if k == "file"}
    for m in _IDENT.finditer(text):
        ident = m.group(0)
        parts = ident.split(".")
        for part in (ident, parts[-1]) if len(parts) > 1 else (ident,):
            if part in vocab.symbols and not any(part in f for f in files):
                found[("symbol", part)] = None
                break
    for span in spans:  # `flags.Enabled`, `rows.Close()`: code the record names
        ident = span.removesuffix("()")
        if re.fullmatch(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)+|[A-Za-z_$]*[A-Z_][\w$]*", ident) \
                and not _file(vocab, ident):
            found[("symbol", ident)] = None
    words = {w.lower().rstrip(".") for w in _WORDS.findall(text)}
    for alias, name in vocab.aliases.items():
        if alias in words:
            found[("package", name)] = None
    return list(found)[:MAX_LINKS]


def resolve(names: list[str], vocab: Vocabulary) -> list[tuple[str, str]]:
    """The extraction model's entity names as (kind, name): a file of the project, a package, a defined
    symbol or a command; anything else identifier-like is taken as a symbol, the rest dropped."""
    out: dict[tuple[str, str], None] = {}
    for raw in names:
        name = " ".join(str(raw).split()).strip("`")
        if not name or len(name) > 200:
            continue
        path = _file(vocab, name)
        if path and ("/" in name or "." in name):
            out[("file", path)] = None
        elif name.lower() in vocab.aliases:
            out[("package", vocab.aliases[name.lower()])] = None
        elif _folder(vocab, name):
            out[("module", _folder(vocab, name))] = None
        elif name in vocab.symbols:
            out[("symbol", name)] = None
        elif " " in name and _is_command(name, vocab):
            out[("command", name)] = None
        elif re.fullmatch(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*(?:\(\))?", name):
            out[("symbol", name.removesuffix("()"))] = None
    return list(out)[:MAX_LINKS]


# ---------------------------------------------------------------------------------------------
# Linking


def link_record(conn: sqlite3.Connection, project_id: str, record: dict, vocab: Vocabulary,
                extra: list[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """Link one record to what it mentions (plus ``extra`` pairs); the (kind, name) pairs linked.
    Inside the caller's transaction."""
    from agentctx.redact import redact
    from agentctx.store import graph

    pairs = list(dict.fromkeys([*mentions(f"{record['title']}\n{record.get('body') or ''}", vocab), *extra]))
    for kind, name in pairs[:MAX_LINKS]:
        graph.link(conn, record["id"], graph.entity(conn, project_id, kind, redact(name)[:300]), once=True)
    return pairs[:MAX_LINKS]


def _meta_key(project_id: str) -> str:
    return f"entities_seq:{project_id}"


LINK_CHUNK = 100  # records linked per transaction (with where it got to: a pass cut short resumes there)


def link_project(conn: sqlite3.Connection, project_id: str, root: str, *, vocab: Vocabulary | None = None,
                 limit: int = 5000) -> dict:
    """Link the project's current records not looked at yet (by insertion order); a report."""
    from agentctx.store import db, graph

    after = db.meta_value(conn, _meta_key(project_id))
    recs = graph.records_after(conn, project_id, after, LINKED_TYPES, limit=limit)
    if not recs:
        return {"records": 0, "linked": 0, "links": 0}
    vocab = vocab or vocabulary(root)
    linked = links = 0
    for start in range(0, len(recs), LINK_CHUNK):  # short transactions: hooks wait for the write lock
        part = recs[start:start + LINK_CHUNK]
        with db.transaction(conn):
            for rec in part:
                pairs = link_record(conn, project_id, rec, vocab)
                linked += bool(pairs)
                links += len(pairs)
            db.set_meta_value(conn, _meta_key(project_id), part[-1]["seq"])
    return {"records": len(recs), "linked": linked, "links": links, "files": len(vocab.files),
            "symbols": len(vocab.symbols), "packages": len(vocab.packages), "commands": len(vocab.commands)}
