"""Hostile repositories: every kind of file a cloned repository (or a hook payload) can put where agentctx
reads, planted in a real git repository. Used by tests/test_hostile_repo.py and bench/reliability_bench.py."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
from pathlib import Path

# What agentctx reads from a repository (relative paths), and the transcript a payload names.
MARKDOWN = ("CLAUDE.md", ".claude/CLAUDE.md", ".agentctx/context.md")
PARSED = (".agentctx/config.toml", "pyproject.toml", "package.json", "Cargo.toml")
PLAIN = ("Makefile", "src/app.py")
TARGETS = (*PARSED, *MARKDOWN, *PLAIN)
# Files agentctx writes into a repository: a symlink there must never be written through.
WRITTEN = (".agentctx/.gitattributes",)
KINDS = ("devzero", "fifo", "socket", "outside", "dangling", "huge", "deep")
HUGE_BYTES = 4 << 30  # sparse: costs no disk; read whole, it exhausts any memory limit below it
DEPTH = 2000
MEMORY_LIMIT = 2 << 30  # address space of every process run against a hostile repository
OUTSIDE_TEXT = "# outside the repository: agentctx must neither read nor write this\n"


def _nested(rel: str) -> bytes:
    """A file ``DEPTH`` levels deep in its own syntax (TOML arrays, JSON arrays)."""
    if rel.endswith(".json"):
        return ('{"name": "x", "scripts": ' + "[" * DEPTH + "]" * DEPTH + "}\n").encode()
    if rel.endswith(".toml"):
        return ("[project]\nname = 'x'\ndeep = " + "[" * DEPTH + "]" * DEPTH + "\n").encode()
    return ("- " + "[" * DEPTH + "\n").encode()  # Markdown, a Makefile, Python: text, not nested data


def _socket(path: Path) -> None:
    here = os.getcwd()
    os.chdir(path.parent)  # AF_UNIX paths are limited to ~100 bytes: bind the bare name
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path.name)
        sock.close()
    finally:
        os.chdir(here)


def plant(path: Path, kind: str, outside: Path) -> None:
    """Put a file of ``kind`` at ``path`` (``outside``: a folder outside the repository)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        _socket(path)
    elif kind == "outside":
        target = outside / (path.name + ".outside")
        target.write_text(OUTSIDE_TEXT)
        path.symlink_to(target)
    elif kind == "dangling":
        path.symlink_to(outside / "created-by-agentctx" / path.name)
    elif kind == "huge":
        with open(path, "wb") as fh:
            fh.truncate(HUGE_BYTES)
    elif kind == "deep":
        path.write_bytes(_nested(path.name))
    else:
        raise ValueError(kind)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def make(root: Path, kind: str) -> tuple[Path, Path, Path]:
    """(repository, outside folder, transcript path) with every target of ``kind``; symlinks and small
    files are committed (git keeps symlinks), FIFOs, sockets and the sparse huge files stay untracked."""
    repo, outside = root / "repo", root / "outside"
    repo.mkdir(parents=True)
    outside.mkdir()
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", f"git@github.com:hostile/{kind}.git")
    for rel in TARGETS:
        plant(repo / rel, kind, outside)
    if kind in ("dangling", "outside", "devzero"):
        for rel in WRITTEN:
            plant(repo / rel, "dangling" if kind == "dangling" else kind, outside)
    tracked = [rel for rel in (*TARGETS, *WRITTEN) if os.path.islink(repo / rel)
               or (repo / rel).is_file() and (repo / rel).stat().st_size < 1 << 20]
    if tracked:
        git(repo, "add", "--", *tracked)
        git(repo, "commit", "-qm", f"hostile: {kind}")
    transcript = root / "transcript.jsonl"
    if kind == "deep":
        transcript.write_text('{"type": "user", "message": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    elif kind == "outside":
        transcript.write_text("")
    else:
        plant(transcript, kind, outside)
    return repo, outside, transcript


def limit_memory(limit: int = MEMORY_LIMIT):
    """A ``preexec_fn`` capping the child's address space (its children inherit the cap)."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def snapshot(outside: Path) -> dict[str, bytes]:
    """Every file under ``outside``: nothing agentctx does may change it or add to it."""
    return {str(p.relative_to(outside)): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}
