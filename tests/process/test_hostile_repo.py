"""A hostile repository (issue 22, part 1): each kind of file a clone can hold (a symlink to /dev/zero, a FIFO,
a socket, a symlink out of the repository, a dangling symlink, a 4 GiB file, TOML and JSON nested 2,000 deep)
planted at every path agentctx reads, in a real git repository. Every hook runs as a process with JSON stdin,
then the CLI and the consolidation pass, each under a 2 GiB address-space limit and a timeout: each finishes,
exits as it should, keeps working with its defaults (the stored decision is still injected), reports each
file once in the log and names them in SessionStart's one notice line, and writes nothing outside the
repository and the data dir (nor through a symlink)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support import hostile
from tests.support.cli import BIN, UV
from tests.support.hooks import LAUNCH, ROOT, hook_env
from tests.support.models import TEST_MODEL
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX file kinds")

TITLE = hostile.TITLE
HOOK_TIMEOUT = 90
CLI_TIMEOUT = 300


def _env(home: Path) -> dict[str, str]:
    return hook_env(home, AGENTCTX_EMBED_MODEL=str(TEST_MODEL))


def hook(name: str, payload: dict, home: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["sh", str(LAUNCH), name], input=json.dumps(payload).encode(), capture_output=True,
                          timeout=HOOK_TIMEOUT, env={**_env(home), **hostile.in_place(name)}, cwd=str(ROOT),
                          preexec_fn=hostile.limit_memory())


def cli(home: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**_env(home), "PATH": os.path.dirname(UV) + os.pathsep + _env(home)["PATH"]}
    return subprocess.run([str(BIN), "--project", str(repo), *args], capture_output=True, text=True, env=env,
                          cwd=str(repo), timeout=CLI_TIMEOUT, preexec_fn=hostile.limit_memory(), stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("kind", hostile.KINDS)
def test_every_entry_point_holds_against_a_hostile_repository(tmp_path: Path, kind: str) -> None:
    home = tmp_path / "data"
    repo, outside, transcript = hostile.make(tmp_path / "clone", kind)
    before = hostile.snapshot(outside)
    recorded = cli(home, repo, "record", "--type", "decision", "--title", TITLE)
    assert recorded.returncode == 0, recorded.stderr

    outputs = {}
    for name, payload in hostile.payloads(repo, transcript):
        proc = hook(name, payload, home)
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        assert b"Traceback" not in proc.stderr, (name, proc.stderr[-2000:])
        outputs.setdefault(name, proc)
    wait_for(lambda: hostile.idle(home), "the detached extraction and consolidation to finish", timeout=240)

    start = json.loads(outputs["session_start"].stdout)
    assert TITLE in start["hookSpecificOutput"]["additionalContext"], "defaults kept: the digest is injected"
    log_text = (home / "logs" / "agentctx.log").read_text()
    assert not re.search(r"(?i)\b(error|recursionerror|memoryerror)\b", log_text), log_text

    runs = {" ".join(args): cli(home, repo, *args) for args in hostile.CLI_RUNS}
    for args in hostile.CLI_RUNS:
        what, proc = " ".join(args), runs[" ".join(args)]
        assert "Traceback" not in proc.stderr, (what, proc.stderr[-2000:])
        code = hostile.expected_exit(kind, args)
        if code is not None:
            assert proc.returncode == code, (what, proc.returncode, proc.stdout[-1000:], proc.stderr[-1000:])
            if code:
                errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error: ")]
                assert len(errors) == 1, (what, proc.stderr)
    if kind != "deep":
        assert "CLAUDE.md" in runs["sync --yes"].stderr and "context.md" in runs["team export"].stderr

    # Reported once: one log line per refused file, however many processes met it.
    per_path = hostile.reports((home / "logs" / "agentctx.log").read_text())
    assert all(n == 1 for n in per_path.values()), per_path
    missing = hostile.expected_reports(repo, transcript, kind) - set(per_path)
    assert not missing, (missing, per_path)

    # Named in SessionStart's notice, in one line (a second session sees them all).
    again = hook("session_start", {"session_id": "s-2", "cwd": str(repo), "hook_event_name": "SessionStart",
                                   "source": "startup"}, home)
    notice = json.loads(again.stdout).get("systemMessage", "")
    assert "\n" not in notice and "agentctx ignored" in notice and "config.toml" in notice, notice
    assert TITLE in json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]

    # Nothing written outside the repository and the data dir, nor through a symlink.
    assert hostile.snapshot(outside) == before
    assert not (outside / "created-by-agentctx").exists()
    for rel in hostile.WRITTEN:
        if kind in ("dangling", "outside", "devzero"):
            assert os.path.islink(repo / rel), rel
    for rel in hostile.TARGETS:
        if kind in ("devzero", "outside", "dangling"):
            assert os.path.islink(repo / rel), f"{rel} was replaced"
