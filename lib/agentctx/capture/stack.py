"""The project profile, detected from the repository's own files, and kept as ``profile`` records.

``detect(root)`` reads a few well-known files at the top of the repository (pyproject.toml,
package.json, Cargo.toml, go.mod, Makefile, justfile, Gemfile, pom.xml, build.gradle, ...) and
returns facts: the stack, the build / test / lint / format / type-check / run commands and the
entry points, each with the files it came from. Nothing is executed and nothing outside
``root`` is read. A Makefile or justfile target wins over a tool's default command: it is
how the project says its own commands are run.

``refresh(conn, project_id, root)`` stores them under keys such as ``profile.test_command``
by rule (``records.upsert_by_key``): a new value supersedes the old detected one, the
same value writes nothing, and a value a person stated (confidence ``explicit``) is kept.
Detected records are ``inferred``: they were read from files, not stated.

Standard library only, but for TOML on Python 3.10: there ``tomli`` (the backport of 3.11's
``tomllib``) is a dependency of the scripts that run this (the MCP server and the CLI).
"""

from __future__ import annotations

import os
import re
import sqlite3

from agentctx.tomlfile import load_toml

MAX_FILE_BYTES = 512_000
MAX_VALUE_CHARS = 600

FIELDS = (  # key suffix, title
    ("stack", "Stack"),
    ("build_command", "Build command"),
    ("test_command", "Test command"),
    ("lint_command", "Lint command"),
    ("format_command", "Format command"),
    ("typecheck_command", "Type-check command"),
    ("run_command", "Run command"),
    ("entry_points", "Entry points"),
)
TITLES = dict(FIELDS)
COMMANDS = ("build_command", "test_command", "lint_command", "format_command", "typecheck_command", "run_command")

PY_FRAMEWORKS = ("django", "fastapi", "flask", "starlette", "litestar", "sqlalchemy", "pydantic", "celery",
                 "click", "typer", "aiohttp", "tornado", "pandas", "polars", "numpy", "torch", "tensorflow",
                 "jax", "scikit-learn", "streamlit", "mcp", "sqlite-utils")
JS_FRAMEWORKS = (("next", "Next.js"), ("react", "React"), ("vue", "Vue"), ("nuxt", "Nuxt"), ("svelte", "Svelte"),
                 ("@sveltejs/kit", "SvelteKit"), ("@angular/core", "Angular"), ("express", "Express"),
                 ("fastify", "Fastify"), ("@nestjs/core", "NestJS"), ("hono", "Hono"), ("electron", "Electron"),
                 ("vite", "Vite"), ("jest", "Jest"), ("vitest", "Vitest"), ("mocha", "Mocha"),
                 ("@playwright/test", "Playwright"), ("prisma", "Prisma"), ("tailwindcss", "Tailwind"))
RUST_CRATES = ("tokio", "axum", "actix-web", "rocket", "warp", "serde", "clap", "sqlx", "diesel", "tonic", "bevy")
GO_MODULES = (("github.com/gin-gonic/gin", "Gin"), ("github.com/labstack/echo", "Echo"),
              ("github.com/gofiber/fiber", "Fiber"), ("github.com/spf13/cobra", "Cobra"),
              ("google.golang.org/grpc", "gRPC"), ("gorm.io/gorm", "GORM"), ("github.com/go-chi/chi", "chi"))
# Make / just targets and the field they name.
TARGETS = (("test", "test_command"), ("tests", "test_command"), ("check", "test_command"),
           ("build", "build_command"), ("lint", "lint_command"), ("fmt", "format_command"),
           ("format", "format_command"), ("typecheck", "typecheck_command"), ("type-check", "typecheck_command"),
           ("mypy", "typecheck_command"), ("run", "run_command"), ("dev", "run_command"),
           ("serve", "run_command"), ("start", "run_command"))


class Fact:
    """One detected profile fact: ``key`` (``profile.<field>``), ``title``, ``value``, ``sources``."""

    __slots__ = ("key", "title", "value", "sources")

    def __init__(self, field: str, value: str, sources: list[str]):
        self.key, self.title, self.value, self.sources = f"profile.{field}", TITLES[field], value, sources

    @property
    def body(self) -> str:
        """What is stored: the value and where it was read."""
        return f"{self.value} (detected from {', '.join(self.sources)})"

    def __repr__(self) -> str:
        return f"Fact({self.key}={self.value!r}, {self.sources})"


class _Found:
    """Collects proposals; per field, a higher priority replaces lower ones, equal ones are joined."""

    def __init__(self, root: str):
        self.root = root
        self.stack: list[tuple[str, str]] = []  # (text, source)
        self.entries: list[tuple[str, str]] = []
        self.cmds: dict[str, list[tuple[int, str, str]]] = {}

    def read(self, name: str) -> str | None:
        """The file's text, or None when absent or refused (``safefile``: reported once in the log)."""
        from agentctx import safefile

        path = os.path.join(self.root, name)
        try:
            return safefile.read_text(path, MAX_FILE_BYTES, self.root)
        except safefile.Refused as exc:
            safefile.refuse(exc, "profile")
        except OSError:
            pass
        return None

    def exists(self, *names: str) -> bool:
        return any(os.path.exists(os.path.join(self.root, n)) for n in names)

    def first(self, *names: str) -> str | None:
        return next((n for n in names if os.path.isfile(os.path.join(self.root, n))), None)

    def add_stack(self, text: str, source: str) -> None:
        if text and all(text != t for t, _ in self.stack):
            self.stack.append((text, source))

    def add_entry(self, text: str, source: str) -> None:
        if text and all(text != t for t, _ in self.entries):
            self.entries.append((text, source))

    def cmd(self, field: str, command: str, source: str, priority: int = 1) -> None:
        self.cmds.setdefault(field, []).append((priority, command, source))

    def facts(self) -> list[Fact]:
        out: list[Fact] = []
        if self.stack:
            out.append(Fact("stack", "; ".join(t for t, _ in self.stack), _sources(self.stack)))
        for field in COMMANDS:
            proposals = self.cmds.get(field)
            if not proposals:
                continue
            top = max(p for p, _, _ in proposals)
            chosen: list[tuple[str, str]] = []
            for p, command, source in proposals:
                if p == top and all(command != c for c, _ in chosen):
                    chosen.append((command, source))
            out.append(Fact(field, "; ".join(c for c, _ in chosen[:3]), _sources(chosen[:3])))
        if self.entries:
            out.append(Fact("entry_points", "; ".join(t for t, _ in self.entries[:8]), _sources(self.entries[:8])))
        for fact in out:
            if len(fact.value) > MAX_VALUE_CHARS:
                fact.value = fact.value[: MAX_VALUE_CHARS - 2].rstrip() + " …"
        return out


def _sources(pairs: list[tuple[str, str]]) -> list[str]:
    return list(dict.fromkeys(s for _, s in pairs))


def detect(root: str) -> list[Fact]:
    """Profile facts for the repository at ``root`` (empty when nothing is recognized)."""
    found = _Found(root)
    for probe in (_python, _node, _rust, _go, _ruby, _jvm, _others, _make, _just, _ci):
        try:
            probe(found)
        except (ValueError, TypeError, KeyError, AttributeError):  # a malformed manifest: skip that probe
            continue
    return found.facts()


# ---------------------------------------------------------------------------------------------
# TOML


def load_json(text: str):
    """Parse JSON with a depth bound (``safefile.load_json``); ValueError if invalid."""
    from agentctx.safefile import load_json as load

    return load(text)


def _parsed(f: _Found, name: str, parse, text: str):
    """``parse(text)`` of the manifest ``name``; a malformed one is logged once (``safefile.report``) and
    its ValueError raised (the probe reading it is skipped)."""
    try:
        return parse(text)
    except ValueError as exc:
        from agentctx import safefile

        safefile.report(os.path.join(f.root, name), f"not parsed: {exc}", "profile")
        raise


# ---------------------------------------------------------------------------------------------
# Probes


def _dep_name(spec: str) -> str:
    m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return m.group(1).lower().replace("_", "-") if m else ""


def _python_deps(f: _Found, data: dict, reqs: str | None) -> tuple[set[str], set[str]]:
    """(runtime dependencies, those plus optional / dev / group ones and requirements files), normalized."""
    project = data.get("project") or {}
    poetry = (data.get("tool") or {}).get("poetry") or {}
    deps = {_dep_name(d) for d in project.get("dependencies") or [] if isinstance(d, str)}
    deps |= {k.lower() for k in (poetry.get("dependencies") or {}) if isinstance(k, str)}
    dev = set(deps)
    for group in list((project.get("optional-dependencies") or {}).values()) + list(
            (data.get("dependency-groups") or {}).values()):
        dev |= {_dep_name(d) for d in group or [] if isinstance(d, str)}
    for group in (poetry.get("group") or {}).values():
        if isinstance(group, dict):
            dev |= {k.lower() for k in (group.get("dependencies") or {}) if isinstance(k, str)}
    if reqs and reqs != "Pipfile":
        dev |= {_dep_name(line) for line in (f.read(reqs) or "").splitlines() if line.strip()[:1].isalnum()}
    return deps, dev


def _python(f: _Found) -> None:
    text = f.read("pyproject.toml")
    data = _parsed(f, "pyproject.toml", load_toml, text) if text else {}
    setup = f.first("setup.py", "setup.cfg")
    reqs = f.first("requirements.txt", "requirements-dev.txt", "Pipfile")
    if not (text or setup or reqs):
        return
    src = "pyproject.toml" if text else (setup or reqs or "")
    project = data.get("project") or {}
    tool = data.get("tool") or {}
    poetry = tool.get("poetry") or {}
    deps, dev = _python_deps(f, data, reqs)

    if f.exists("uv.lock"):
        run, manager = "uv run ", "uv"
    elif f.exists("poetry.lock") or poetry:
        run, manager = "poetry run ", "Poetry"
    elif f.exists("pdm.lock"):
        run, manager = "pdm run ", "PDM"
    elif f.exists("Pipfile.lock", "Pipfile"):
        run, manager = "pipenv run ", "Pipenv"
    else:
        run, manager = "", "pip"
    backend = ((data.get("build-system") or {}).get("build-backend") or "").split(".")[0].replace("_", "-")
    python = "Python"
    requires = project.get("requires-python") or (poetry.get("dependencies") or {}).get("python")
    if isinstance(requires, str) and requires.strip():
        python += " " + requires.strip().replace(">=", "≥")
    extras = [x for x in (backend, manager) if x]
    f.add_stack(python + (f" ({', '.join(extras)})" if extras else ""), src)
    frameworks = [name for name in PY_FRAMEWORKS if name in deps]
    if f.exists("manage.py") and "django" not in frameworks:
        frameworks.insert(0, "django")
    if frameworks:
        f.add_stack(", ".join(frameworks), src)

    ini = tool.get("pytest") or {}
    if ini or f.exists("pytest.ini", "conftest.py", "tests/conftest.py") or "pytest" in dev:
        f.cmd("test_command", f"{run}pytest", "pyproject.toml" if ini else src)
    elif f.exists("tox.ini"):
        f.cmd("test_command", "tox", "tox.ini")
    elif f.exists("noxfile.py"):
        f.cmd("test_command", "nox", "noxfile.py")
    elif f.exists("tests", "test"):
        f.cmd("test_command", f"{run}python -m unittest", src)
    if "ruff" in tool or f.exists("ruff.toml", ".ruff.toml") or "ruff" in dev:
        f.cmd("lint_command", f"{run}ruff check .", "pyproject.toml" if "ruff" in tool else src)
        if isinstance(tool.get("ruff"), dict) and "format" in tool["ruff"]:
            f.cmd("format_command", f"{run}ruff format .", "pyproject.toml")
    elif f.exists(".flake8") or "flake8" in dev:
        f.cmd("lint_command", f"{run}flake8", ".flake8" if f.exists(".flake8") else src)
    elif "pylint" in tool or "pylint" in dev:
        f.cmd("lint_command", f"{run}pylint .", src)
    if "black" in tool or "black" in dev:
        f.cmd("format_command", f"{run}black .", src)
    if "mypy" in tool or f.exists("mypy.ini") or "mypy" in dev:
        f.cmd("typecheck_command", f"{run}mypy .", "mypy.ini" if f.exists("mypy.ini") else src)
    elif "pyright" in tool or f.exists("pyrightconfig.json") or "pyright" in dev:
        f.cmd("typecheck_command", f"{run}pyright", src)
    if backend or setup:
        builder = "uv build" if manager == "uv" else "poetry build" if manager == "Poetry" else "python -m build"
        f.cmd("build_command", builder, src)

    scripts = dict(project.get("scripts") or {})
    scripts.update(poetry.get("scripts") or {})
    for name, target in list(scripts.items())[:6]:
        if isinstance(target, str):
            f.add_entry(f"{name} → {target}", src)
    if f.exists("manage.py"):
        f.add_entry("manage.py (Django)", "manage.py")
        f.cmd("run_command", f"{run}python manage.py runserver", "manage.py")
    for base in ("src", "."):
        try:
            names = sorted(os.listdir(os.path.join(f.root, base)))
        except OSError:
            continue
        for pkg in names[:200]:
            if os.path.isfile(os.path.join(f.root, base, pkg, "__main__.py")) and not pkg.startswith("."):
                rel = os.path.normpath(os.path.join(base, pkg, "__main__.py")).replace(os.sep, "/")
                f.add_entry(f"python -m {pkg} ({rel})", rel)
    for name in ("main.py", "app.py"):
        if f.exists(name):
            f.add_entry(name, name)


def _node_pm(f: _Found, data: dict) -> str:
    """The package manager a package.json project uses (its ``packageManager`` field, else its lockfile)."""
    pm_field = str(data.get("packageManager") or "")
    if pm_field:
        return pm_field.split("@")[0]
    if f.exists("pnpm-lock.yaml"):
        return "pnpm"
    if f.exists("yarn.lock"):
        return "yarn"
    if f.exists("bun.lockb", "bun.lock"):
        return "bun"
    return "npm"


def _node_deps(data: dict) -> dict:
    deps: dict = {}
    for section in ("dependencies", "devDependencies", "peerDependencies"):
        if isinstance(data.get(section), dict):
            deps.update(data[section])
    return deps


def _node_run(pm: str, name: str) -> str:
    """How the package manager runs script ``name``."""
    if name in ("test", "start") and pm in ("npm", "pnpm", "yarn", "bun"):
        return f"{pm} {name}"
    return {"npm": f"npm run {name}", "bun": f"bun run {name}"}.get(pm, f"{pm} {name}")


def _node(f: _Found) -> None:
    text = f.read("package.json")
    if text is None:
        return
    data = _parsed(f, "package.json", load_json, text)
    if not isinstance(data, dict):
        return
    src = "package.json"
    pm = _node_pm(f, data)
    deps = _node_deps(data)
    ts = "typescript" in deps or f.exists("tsconfig.json")
    node = "TypeScript on Node.js" if ts else "JavaScript on Node.js"
    engines = data.get("engines") if isinstance(data.get("engines"), dict) else {}
    if engines.get("node"):
        node += f" {engines['node']}".replace(">=", "≥")
    f.add_stack(f"{node} ({pm})", src)
    frameworks = [label for name, label in JS_FRAMEWORKS if name in deps]
    if frameworks:
        f.add_stack(", ".join(frameworks), src)

    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}

    def run(name: str) -> str:
        return _node_run(pm, name)

    test = str(scripts.get("test") or "")
    if test and "no test specified" not in test:
        f.cmd("test_command", run("test"), src)
    for field, names in (("build_command", ("build",)), ("lint_command", ("lint",)),
                         ("format_command", ("format", "fmt")), ("typecheck_command", ("typecheck", "type-check",
                                                                                        "check-types", "tsc")),
                         ("run_command", ("dev", "start", "serve"))):
        name = next((n for n in names if n in scripts), None)
        if name:
            f.cmd(field, run(name), src)
    if "typecheck_command" not in f.cmds and ts:
        f.cmd("typecheck_command", "npx tsc --noEmit", "tsconfig.json" if f.exists("tsconfig.json") else src, 0)
    bins = data.get("bin")
    if isinstance(bins, str):
        f.add_entry(f"{data.get('name', 'bin')} → {bins}", src)
    elif isinstance(bins, dict):
        for name, path in list(bins.items())[:6]:
            f.add_entry(f"{name} → {path}", src)
    for key in ("main", "module"):
        if isinstance(data.get(key), str):
            f.add_entry(f"{key}: {data[key]}", src)
    if not f.entries:
        for name in ("src/index.ts", "src/index.tsx", "src/main.ts", "src/main.tsx", "index.js", "src/index.js"):
            if f.exists(name):
                f.add_entry(name, name)
                break


def _rust(f: _Found) -> None:
    text = f.read("Cargo.toml")
    if text is None:
        return
    data = _parsed(f, "Cargo.toml", load_toml, text)
    package = data.get("package") or {}
    edition = package.get("edition")
    label = "Rust" + (f" (edition {edition})" if edition else "")
    members = (data.get("workspace") or {}).get("members")
    if members:
        label += f", workspace of {len(members)} crates"
    f.add_stack(label, "Cargo.toml")
    crates = [c for c in RUST_CRATES if c in (data.get("dependencies") or {})]
    if crates:
        f.add_stack(", ".join(crates), "Cargo.toml")
    for field, command in (("build_command", "cargo build"), ("test_command", "cargo test"),
                           ("lint_command", "cargo clippy --all-targets"), ("format_command", "cargo fmt")):
        f.cmd(field, command, "Cargo.toml")
    bins = data.get("bin") or []
    for b in bins[:6] if isinstance(bins, list) else []:
        if isinstance(b, dict) and b.get("name"):
            f.add_entry(f"{b['name']} → {b.get('path', 'src/bin/' + b['name'] + '.rs')}", "Cargo.toml")
    if f.exists("src/main.rs"):
        f.add_entry(f"{package.get('name', 'binary')} → src/main.rs", "Cargo.toml")
        f.cmd("run_command", "cargo run", "Cargo.toml")
    if f.exists("src/lib.rs"):
        f.add_entry("library → src/lib.rs", "Cargo.toml")


def _go(f: _Found) -> None:
    text = f.read("go.mod")
    if text is None:
        return
    module = re.search(r"^module\s+(\S+)", text, re.M)
    version = re.search(r"^go\s+(\S+)", text, re.M)
    f.add_stack("Go" + (f" {version.group(1)}" if version else "") + (f" (module {module.group(1)})" if module else ""),
                "go.mod")
    libs = [label for path, label in GO_MODULES if path in text]
    if libs:
        f.add_stack(", ".join(libs), "go.mod")
    f.cmd("build_command", "go build ./...", "go.mod")
    f.cmd("test_command", "go test ./...", "go.mod")
    lint_cfg = f.first(".golangci.yml", ".golangci.yaml", ".golangci.toml")
    f.cmd("lint_command", "golangci-lint run" if lint_cfg else "go vet ./...", lint_cfg or "go.mod")
    f.cmd("format_command", "gofmt -w .", "go.mod")
    if f.exists("main.go"):
        f.add_entry("main.go", "go.mod")
        f.cmd("run_command", "go run .", "go.mod")
    try:
        for name in sorted(os.listdir(os.path.join(f.root, "cmd")))[:8]:
            if os.path.isfile(os.path.join(f.root, "cmd", name, "main.go")):
                f.add_entry(f"cmd/{name}", "go.mod")
    except OSError:
        pass


def _ruby(f: _Found) -> None:
    text = f.read("Gemfile")
    if text is None:
        return
    rails = re.search(r"""^\s*gem\s+["']rails["']""", text, re.M)
    f.add_stack("Ruby" + (", Rails" if rails else "") + " (Bundler)", "Gemfile")
    if f.exists("spec") or "rspec" in text:
        f.cmd("test_command", "bundle exec rspec", "Gemfile")
    else:
        f.cmd("test_command", "bundle exec rake test", "Gemfile")
    if f.exists(".rubocop.yml") or "rubocop" in text:
        f.cmd("lint_command", "bundle exec rubocop", "Gemfile")
    if rails:
        f.cmd("run_command", "bin/rails server", "Gemfile")


def _jvm(f: _Found) -> None:
    if f.exists("pom.xml"):
        f.add_stack("Java (Maven)", "pom.xml")
        mvn = "./mvnw" if f.exists("mvnw") else "mvn"
        f.cmd("build_command", f"{mvn} package", "pom.xml")
        f.cmd("test_command", f"{mvn} test", "pom.xml")
    gradle = f.first("build.gradle.kts", "build.gradle")
    if gradle:
        text = f.read(gradle) or ""
        kotlin = gradle.endswith(".kts") and "kotlin" in text or "org.jetbrains.kotlin" in text
        f.add_stack(("Kotlin" if kotlin else "Java") + " (Gradle)", gradle)
        g = "./gradlew" if f.exists("gradlew") else "gradle"
        f.cmd("build_command", f"{g} build", gradle)
        f.cmd("test_command", f"{g} test", gradle)


def _others(f: _Found) -> None:
    if f.exists("CMakeLists.txt"):
        f.add_stack("C/C++ (CMake)", "CMakeLists.txt")
        f.cmd("build_command", "cmake -S . -B build && cmake --build build", "CMakeLists.txt")
        f.cmd("test_command", "ctest --test-dir build", "CMakeLists.txt")
    deno = f.first("deno.json", "deno.jsonc")
    if deno:
        f.add_stack("Deno", deno)
        for field, command in (("test_command", "deno test"), ("lint_command", "deno lint"),
                               ("format_command", "deno fmt")):
            f.cmd(field, command, deno)
    if f.exists("mix.exs"):
        f.add_stack("Elixir (Mix)", "mix.exs")
        for field, command in (("build_command", "mix compile"), ("test_command", "mix test"),
                               ("format_command", "mix format")):
            f.cmd(field, command, "mix.exs")
    if f.exists("composer.json"):
        f.add_stack("PHP (Composer)", "composer.json")
    if f.exists("Package.swift"):
        f.add_stack("Swift (SwiftPM)", "Package.swift")
        f.cmd("build_command", "swift build", "Package.swift")
        f.cmd("test_command", "swift test", "Package.swift")
    if f.exists("pubspec.yaml"):
        f.add_stack("Dart/Flutter", "pubspec.yaml")
    try:
        names = os.listdir(f.root)
    except OSError:
        names = []
    dotnet = next((n for n in sorted(names) if n.endswith((".sln", ".csproj", ".fsproj"))), None)
    if dotnet:
        f.add_stack(".NET", dotnet)
        f.cmd("build_command", "dotnet build", dotnet)
        f.cmd("test_command", "dotnet test", dotnet)
    compose = f.first("docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml")
    if compose:
        f.add_stack("Docker Compose", compose)
    elif f.exists("Dockerfile"):
        f.add_stack("Docker", "Dockerfile")


_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:(?![=:])", re.M)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+[^:=\n]*)?:(?!=)", re.M)


def _targets(f: _Found, names: tuple[str, ...], pattern: re.Pattern, tool: str) -> None:
    source = f.first(*names)
    if source is None:
        return
    found = set(pattern.findall(f.read(source) or ""))
    taken: set[str] = set()
    for target, field in TARGETS:
        if target in found and field not in taken:
            taken.add(field)
            f.cmd(field, f"{tool} {target}", source, 2)


def _make(f: _Found) -> None:
    _targets(f, ("GNUmakefile", "Makefile", "makefile"), _MAKE_TARGET, "make")


def _just(f: _Found) -> None:
    _targets(f, ("justfile", "Justfile", ".justfile"), _JUST_RECIPE, "just")


def _ci(f: _Found) -> None:
    workflows = os.path.join(f.root, ".github", "workflows")
    if os.path.isdir(workflows):
        f.add_stack("CI: GitHub Actions", ".github/workflows")
    elif f.exists(".gitlab-ci.yml"):
        f.add_stack("CI: GitLab CI", ".gitlab-ci.yml")


# ---------------------------------------------------------------------------------------------
# What the manifests name (the entity graph's packages and commands: capture/entities.py)


def _quiet(f: _Found, name: str, parse, text: str):
    """``parse(text)``, or None for a malformed manifest (that file is skipped, not the others)."""
    try:
        return _parsed(f, name, parse, text)
    except ValueError:
        return None


def manifest_packages(root: str) -> list[str]:
    """Dependency names from pyproject.toml / requirements, package.json, Cargo.toml, go.mod and Gemfile."""
    f = _Found(root)
    out: set[str] = set()
    text = f.read("pyproject.toml")
    reqs = f.first("requirements.txt", "requirements-dev.txt")
    if text or reqs:
        out |= _python_deps(f, (_quiet(f, "pyproject.toml", load_toml, text) or {}) if text else {}, reqs)[1]
    text = f.read("package.json")
    if text:
        data = _quiet(f, "package.json", load_json, text)
        if isinstance(data, dict):
            out |= {str(k) for k in _node_deps(data)}
    text = f.read("Cargo.toml")
    if text:
        data = _quiet(f, "Cargo.toml", load_toml, text) or {}
        for section in ("dependencies", "dev-dependencies", "build-dependencies"):
            out |= {str(k) for k in (data.get(section) or {}) if isinstance(data.get(section), dict)}
    text = f.read("go.mod")
    if text:
        for path in re.findall(r"^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]+/[\w./-]+)\s+v[\d.]", text, re.M):
            parts = [p for p in path.split("/") if not re.fullmatch(r"v\d+", p)]
            out.add(parts[-1])  # how Go code and people name it: pgx, kafka-go
    text = f.read("Gemfile")
    if text:
        out |= set(re.findall(r"""^\s*gem\s+["']([\w.-]+)["']""", text, re.M))
    return sorted(p for p in out if p)


def script_commands(root: str) -> list[str]:
    """Every package.json script and Makefile / justfile target, as the project runs it."""
    f = _Found(root)
    out: list[str] = []
    text = f.read("package.json")
    data = _quiet(f, "package.json", load_json, text) if text else None
    if isinstance(data, dict) and isinstance(data.get("scripts"), dict):
        pm = _node_pm(f, data)
        out += [_node_run(pm, str(name)) for name in data["scripts"]]
    for names, pattern, tool in ((("GNUmakefile", "Makefile", "makefile"), _MAKE_TARGET, "make"),
                                 (("justfile", "Justfile", ".justfile"), _JUST_RECIPE, "just")):
        source = f.first(*names)
        if source:
            out += [f"{tool} {t}" for t in sorted(set(pattern.findall(f.read(source) or ""))) if t != ".PHONY"]
    return out


# ---------------------------------------------------------------------------------------------
# Keeping the profile records


class Refresh:
    """What ``refresh`` did: keys added, changed (old value superseded), unchanged, and kept
    (a stated value that differs from what the repository suggests: ``{key: detected value}``)."""

    __slots__ = ("added", "changed", "unchanged", "kept", "facts")

    def __init__(self) -> None:
        self.added: list[str] = []
        self.changed: list[str] = []
        self.unchanged: list[str] = []
        self.kept: dict[str, str] = {}
        self.facts: list[Fact] = []


def refresh(conn: sqlite3.Connection, project_id: str, root: str, *, source: str = "mcp_tool") -> Refresh:
    """Detect the profile of ``root`` and store what changed (see the module docstring)."""
    from agentctx.store import records

    report = Refresh()
    report.facts = detect(root)
    lists = {"added": report.added, "superseded": report.changed, "unchanged": report.unchanged}
    for fact in report.facts:
        outcome, _ = records.upsert_by_key(conn, project_id, fact.key, type="profile", title=fact.title,
                                           body=fact.body, confidence="inferred", source=source,
                                           reinforce_same=False, keep_stated=True)
        if outcome == "kept":
            report.kept[fact.key] = fact.value
        else:
            lists[outcome].append(fact.key)
    return report
