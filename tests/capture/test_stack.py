"""Project profile detection (agentctx.capture.stack) and its refresh rules in the store."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from agentctx.capture import stack
from agentctx.store import records
from agentctx.tomlfile import load_toml

PYPROJECT = textwrap.dedent("""\
    [project]
    name = "svc"
    requires-python = ">=3.11"
    dependencies = ["fastapi>=0.110", "SQLAlchemy[asyncio]>=2", "pydantic"]

    [project.scripts]
    svc = "svc.cli:main"

    [dependency-groups]
    dev = ["pytest>=8", "ruff", "mypy"]

    [build-system]
    requires = ["hatchling"]
    build-backend = "hatchling.build"

    [tool.pytest.ini_options]
    testpaths = ["tests"]

    [tool.ruff]
    line-length = 100  # a comment

    [tool.ruff.format]
    quote-style = "double"

    [tool.mypy]
    strict = true
""")


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def facts(root: Path) -> dict[str, str]:
    return {f.key: f.value for f in stack.detect(str(root))}


def test_python_project_with_uv(tmp_path):
    write(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": "", "src/svc/__main__.py": ""})
    found = facts(tmp_path)
    assert found["profile.stack"].startswith("Python ≥3.11 (hatchling, uv)")
    assert "fastapi" in found["profile.stack"] and "sqlalchemy" in found["profile.stack"]
    assert found["profile.test_command"] == "uv run pytest"
    assert found["profile.lint_command"] == "uv run ruff check ."
    assert found["profile.format_command"] == "uv run ruff format ."
    assert found["profile.typecheck_command"] == "uv run mypy ."
    assert found["profile.build_command"] == "uv build"
    assert "svc → svc.cli:main" in found["profile.entry_points"]
    assert "python -m svc (src/svc/__main__.py)" in found["profile.entry_points"]
    body = next(f for f in stack.detect(str(tmp_path)) if f.key == "profile.test_command").body
    assert body == "uv run pytest (detected from pyproject.toml)"


def test_makefile_targets_win_over_tool_defaults(tmp_path):
    write(tmp_path, {"pyproject.toml": PYPROJECT, "poetry.lock": "",
                     "Makefile": ".PHONY: test lint\ntest: deps\n\tpytest -q\nlint:\n\truff check .\nVAR := 1\n"})
    found = facts(tmp_path)
    assert found["profile.test_command"] == "make test"
    assert found["profile.lint_command"] == "make lint"
    assert found["profile.typecheck_command"] == "poetry run mypy ."  # no make target for it
    assert "Poetry" in found["profile.stack"]
    sources = {f.key: f.sources for f in stack.detect(str(tmp_path))}
    assert sources["profile.test_command"] == ["Makefile"]


def test_node_project(tmp_path):
    package = {
        "name": "web", "packageManager": "pnpm@9.1.0", "bin": {"webctl": "bin/webctl.js"},
        "engines": {"node": ">=20"},
        "scripts": {"test": "vitest run", "build": "vite build", "lint": "eslint .", "dev": "vite"},
        "dependencies": {"react": "^18"}, "devDependencies": {"typescript": "^5", "vitest": "^1"},
    }
    write(tmp_path, {"package.json": json.dumps(package), "tsconfig.json": "{}"})
    found = facts(tmp_path)
    assert found["profile.stack"].startswith("TypeScript on Node.js ≥20 (pnpm)")
    assert "React" in found["profile.stack"] and "Vitest" in found["profile.stack"]
    assert found["profile.test_command"] == "pnpm test"
    assert found["profile.build_command"] == "pnpm build"
    assert found["profile.run_command"] == "pnpm dev"
    assert found["profile.typecheck_command"] == "npx tsc --noEmit"
    assert "webctl → bin/webctl.js" in found["profile.entry_points"]


def test_npm_placeholder_test_script_is_not_a_test_command(tmp_path):
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}),
                     "package-lock.json": "{}"})
    found = facts(tmp_path)
    assert "profile.test_command" not in found
    assert found["profile.stack"] == "JavaScript on Node.js (npm)"


def test_rust_and_go(tmp_path):
    rust = write(tmp_path / "rust", {
        "Cargo.toml": '[package]\nname = "cli"\nedition = "2021"\n\n[dependencies]\ntokio = { version = "1" }\n'
                      'clap = "4"\n',
        "src/main.rs": "fn main() {}\n",
    })
    found = facts(rust)
    assert found["profile.stack"] == "Rust (edition 2021); tokio, clap"
    assert found["profile.test_command"] == "cargo test"
    assert found["profile.lint_command"] == "cargo clippy --all-targets"
    assert found["profile.run_command"] == "cargo run"
    assert "cli → src/main.rs" in found["profile.entry_points"]

    go = write(tmp_path / "go", {
        "go.mod": "module github.com/acme/api\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.1\n",
        "cmd/api/main.go": "package main\n", ".golangci.yml": "",
    })
    found = facts(go)
    assert found["profile.stack"] == "Go 1.22 (module github.com/acme/api); Gin"
    assert found["profile.test_command"] == "go test ./..."
    assert found["profile.lint_command"] == "golangci-lint run"
    assert found["profile.entry_points"] == "cmd/api"


def test_other_ecosystems_and_ci(tmp_path):
    write(tmp_path, {"Gemfile": "source 'https://rubygems.org'\ngem 'rails', '~> 7.1'\n", "spec/x_spec.rb": "",
                     "Dockerfile": "FROM ruby\n", ".github/workflows/ci.yml": "", "justfile": "fmt:\n    rubocop -a\n"})
    found = facts(tmp_path)
    assert found["profile.stack"] == "Ruby, Rails (Bundler); Docker; CI: GitHub Actions"
    assert found["profile.test_command"] == "bundle exec rspec"
    assert found["profile.format_command"] == "just fmt"
    assert found["profile.run_command"] == "bin/rails server"


def test_nothing_recognized_and_malformed_files(tmp_path):
    assert stack.detect(str(tmp_path)) == []
    assert stack.detect(str(tmp_path / "missing")) == []
    write(tmp_path, {"pyproject.toml": "[project\nname = ", "package.json": "{not json", "Makefile": "test:\n\tx\n"})
    found = facts(tmp_path)  # the broken manifests are skipped, the Makefile still counts
    assert found == {"profile.test_command": "make test"}


def test_large_files_are_not_read(tmp_path):
    write(tmp_path, {"Makefile": "test:\n\tpytest\n" + "# filler\n" * (stack.MAX_FILE_BYTES // 8)})
    assert stack.detect(str(tmp_path)) == []


def test_toml_reader_without_tomllib(tmp_path, monkeypatch):
    """Python 3.10 has no tomllib: its backport tomli (a dependency there) must give the same profile."""
    write(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": "", "Cargo.toml": '[package]\nname = "x"\n'
                     'edition = "2021"\n[[bin]]\nname = "tool"\npath = "src/tool.rs"\n'})
    expected = facts(tmp_path)
    monkeypatch.setitem(sys.modules, "tomllib", None)  # makes `import tomllib` raise ImportError
    with pytest.raises(ImportError):
        import tomllib  # noqa: F401
    assert facts(tmp_path) == expected
    parsed = load_toml(PYPROJECT)
    assert parsed["project"]["scripts"] == {"svc": "svc.cli:main"}
    assert parsed["dependency-groups"]["dev"] == ["pytest>=8", "ruff", "mypy"]
    assert "format" in parsed["tool"]["ruff"]
    assert "tool.rs" in expected["profile.entry_points"]


def _profile(conn, pid):
    return {r["key"]: r for r in records.active(conn, pid, ["profile"], limit=100)}


def test_refresh_adds_keeps_and_supersedes(conn, repo, proj):
    write(repo, {"pyproject.toml": PYPROJECT, "uv.lock": ""})
    first = stack.refresh(conn, proj.id, str(repo))
    assert "profile.test_command" in first.added and not first.changed
    current = _profile(conn, proj.id)
    test_rec = current["profile.test_command"]
    assert (test_rec["title"], test_rec["confidence"], test_rec["source"]) == ("Test command", "inferred", "mcp_tool")

    total = conn.execute("SELECT COUNT(*), SUM(reinforce_count) FROM records").fetchone()
    again = stack.refresh(conn, proj.id, str(repo))
    assert not again.added and not again.changed and "profile.test_command" in again.unchanged
    assert conn.execute("SELECT COUNT(*), SUM(reinforce_count) FROM records").fetchone() == total  # nothing written

    write(repo, {"Makefile": "test:\n\tpytest\n"})
    changed = stack.refresh(conn, proj.id, str(repo))
    assert changed.changed == ["profile.test_command"]
    now = _profile(conn, proj.id)["profile.test_command"]
    assert now["body"] == "make test (detected from Makefile)"
    old = records.resolve(conn, test_rec["id"], all_projects=True)
    assert old["superseded_by"] == now["id"]  # the old value stays in history

    stated = records.add(conn, proj.id, type="profile", key="profile.lint_command", title="Lint command",
                         body="make check-style", source="cli")
    kept = stack.refresh(conn, proj.id, str(repo))
    assert kept.kept == {"profile.lint_command": "uv run ruff check ."}
    assert _profile(conn, proj.id)["profile.lint_command"]["id"] == stated["id"]
