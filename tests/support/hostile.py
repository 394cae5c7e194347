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
TITLE = "Payments retry three times with backoff"
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


def payloads(repo: Path, transcript: Path) -> list[tuple[str, dict]]:
    """(hook script, stdin) for every hook, in a session's order, aimed at ``repo`` and ``transcript``."""
    base = {"session_id": "s-hostile", "cwd": str(repo), "transcript_path": str(transcript)}
    return [
        ("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        ("user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                "prompt": "how many times do payments retry, and what backoff?"}),
        ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Write",
                           "tool_input": {"file_path": str(repo / "src" / "app.py"), "content": "x = 1\n"},
                           "tool_response": {"success": True}}),
        ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                           "tool_input": {"command": "make test"}, "tool_response": {"stdout": "2 passed"}}),
        ("cwd_changed", {**base, "hook_event_name": "CwdChanged", "old_cwd": str(repo), "new_cwd": str(repo / "src")}),
        ("subagent_start", {**base, "hook_event_name": "SubagentStart", "agent_id": "a1", "agent_type": "Explore"}),
        ("subagent_stop", {**base, "hook_event_name": "SubagentStop", "agent_id": "a1", "agent_type": "Explore",
                           "agent_transcript_path": str(transcript),
                           "last_assistant_message": "Payments retry three times; the backoff doubles."}),
        ("pre_compact", {**base, "hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""}),
        ("stop", {**base, "hook_event_name": "Stop"}),
        ("session_end", {**base, "hook_event_name": "SessionEnd", "reason": "other"}),
    ]


# The CLI commands run against the repository, and what each must exit with: a refused CLAUDE.md or team
# file is an error for the command about it (one line), nothing else is.
CLI_RUNS = (("status",), ("remote", "status"), ("consolidate",), ("sync", "--yes"), ("team", "export"), ("doctor",))


def expected_exit(kind: str, args: tuple[str, ...]) -> int | None:
    """The exit status ``args`` must have against a repository of ``kind`` (None: not checked, doctor
    reports what it finds about the store itself)."""
    if args == ("doctor",):
        return None
    if args in (("sync", "--yes"), ("team", "export")):
        return 0 if kind == "deep" else 1  # a 2,000-deep Markdown line is still Markdown
    return 0


def expected_reports(repo: Path, transcript: Path, kind: str) -> set[str]:
    """The paths that must each have their one "ignored" log line after every entry point ran."""
    out = {str(repo / rel) for rel in PARSED}
    if kind != "deep":
        out |= {str(repo / rel) for rel in MARKDOWN}
    if kind not in ("huge", "deep"):  # a source file is read up to its bound, not refused
        out.add(str(repo / "src" / "app.py"))
    if kind not in ("outside", "huge"):  # an empty transcript; a 4 GiB one is read up to its window
        out.add(str(transcript))
    return out


def reports(log_text: str) -> dict[str, int]:
    """{path: how many "ignored" lines the log has for it}."""
    import re

    out: dict[str, int] = {}
    for line in log_text.splitlines():
        m = re.search(r" (\S+) ignored: ", line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out


def in_place(hook: str) -> dict[str, str]:
    """The environment that makes ``hooks/launch.sh`` run ``hook`` in its own process rather than hand it to a
    detached one: PostToolUse's handler then meets the hostile repository where its exit status, stderr and time
    are seen (Stop and SessionEnd hand off as in Claude Code; their work is awaited with ``idle``)."""
    return {"AGENTCTX_HOOK_DETACHED": "no"} if hook == "post_tool_use" else {}


def idle(home: Path) -> bool:
    """No detached extraction or consolidation is running (their lock files are gone)."""
    locks = home / "locks"
    return not locks.exists() or not [p for p in locks.iterdir() if p.suffix == ".lock" or ".lock." in p.name]
