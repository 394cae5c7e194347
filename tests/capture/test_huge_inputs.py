"""Inputs that used to take minutes: a Bash command with 692 KiB of leading ``VAR=x`` words (quadratic word
skipping) and 10 MB of ``/compact`` instructions (the whole text redacted before clipping). Their cost is
measured by bench/reliability_bench.py; here, what they produce."""

from __future__ import annotations

from pathlib import Path

from agentctx.capture import observe
from tests.support.hooks import run_hook


def test_leading_assignments_are_skipped_and_the_program_found():
    words = observe.segments("A=1 " * 20_000 + "pytest tests/test_a.py -x")
    assert words == [["pytest", "tests/test_a.py", "-x"]]
    assert observe.test_command("A=1 " * 20_000 + "pytest tests/test_a.py") == ("pytest", ["tests/test_a.py"])
    assert observe.segments("FOO=1 BAR=2 timeout 60 nice -n 5 uv run --frozen pytest -q") == [["pytest", "-q"]]


def test_a_huge_command_is_read_up_to_its_bound():
    huge = "A=1 " * (692 * 1024 // 4) + "pytest"
    assert len(huge) > observe.MAX_COMMAND_CHARS
    assert observe.segments(huge) == []  # what runs is named at the start; nothing past the bound is parsed
    assert observe.segments("pytest -q && " + "A=1 " * 200_000) == [["pytest", "-q"]]


def test_pre_compact_with_ten_megabytes_of_instructions(home: Path, repo: Path):
    focus = "Keep the payment flow; never log password=hunter2hunter2. " * (10 * 1024 * 1024 // 58)
    assert len(focus) >= 10 * 1024 * 1024 - 100
    payload = {"session_id": "s-big", "cwd": str(repo), "hook_event_name": "PreCompact", "trigger": "manual",
               "custom_instructions": focus, "transcript_path": "/nonexistent.jsonl"}
    proc = run_hook("pre_compact", payload, home, timeout=120)
    assert proc.returncode == 0 and proc.stdout == b""
    (backup,) = list((home / "anchors").glob("*/s-big.md"))
    text = backup.read_text()
    assert "Compaction focus: Keep the payment flow" in text and "hunter2" not in text
    assert len(text) < 5_000
    log = home / "logs" / "agentctx.log"
    assert not log.exists() or "PreCompact error" not in log.read_text()
