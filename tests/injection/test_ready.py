"""The seal's rules (``injection.ready``): what breaks a seal, what does not, and what is never sealed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentctx import fsio, jsonfast
from agentctx.injection import ready

AGO = time.time() - 60


@pytest.fixture
def world(home: Path, tmp_path: Path):
    """A digest cache, a settings file, a store file without a WAL, a notice folder: all a minute old."""
    cache, setting, store, notices = (tmp_path / "cache.json", tmp_path / "config.json", tmp_path / "agentctx.db",
                                      tmp_path / "notices")
    cache.write_text(jsonfast.dumps({"text": "<ctx>", "tokens": 3, "record_ids": ["r1"], "generation": 7,
                                     "sections": ["decisions"]}))
    setting.write_text("{}")
    store.write_bytes(b"x" * 4096)
    notices.mkdir()
    for path in (cache, setting, store):
        os.utime(path, (AGO, AGO))
    return {"cwd": str(tmp_path), "cache": str(cache), "setting": setting, "store": store, "notices": notices}


def seal(world, since: int | None = None) -> bool:
    """Seal as a run that began well after the files were made (their change times, unlike their
    modification times, cannot be set back), unless ``since`` says when it began."""
    return ready.seal(world["cwd"], project={"id": "p1", "name": "widgets", "root": world["cwd"], "remote": None},
                      cache=world["cache"], generation=7, sections=["decisions"],
                      files=[str(world["store"]), str(world["setting"]), world["cache"]],
                      wal=str(world["store"]) + "-wal", listings=[str(world["notices"])],
                      since_ns=since if since is not None else time.time_ns() + 10 * ready.MARGIN_NS)


def test_a_sealed_answer_is_served_while_nothing_changes(world):
    assert seal(world)
    served = ready.serve(world["cwd"])
    assert (served.text, served.record_ids, served.tokens, served.project["id"]) == ("<ctx>", ["r1"], 3, "p1")


def test_an_empty_wal_and_no_wal_are_the_same_state_but_a_frame_is_a_change(world):
    assert seal(world)
    wal = Path(str(world["store"]) + "-wal")
    wal.write_bytes(b"")  # the next reader made it again, empty
    assert ready.serve(world["cwd"]) is not None
    wal.write_bytes(b"f" * 32)  # a writer appended
    assert ready.serve(world["cwd"]) is None


@pytest.mark.parametrize("change", ["rewrite", "same size and time", "notice", "environment", "cache"])
def test_any_change_to_what_it_was_read_from_breaks_the_seal(world, change, monkeypatch):
    assert seal(world)
    if change == "rewrite":
        world["setting"].write_text('{"digest_handover": false}')
    elif change == "same size and time":  # the content changed, size and mtime put back: the inode's ctime moved
        world["setting"].write_text("[]")
        os.utime(world["setting"], (AGO, AGO))
    elif change == "notice":
        (world["notices"] / "1.txt").write_text("a line")
    elif change == "environment":
        monkeypatch.setenv("AGENTCTX_LLM", "0" if os.environ.get("AGENTCTX_LLM") != "0" else "1")
    else:
        fsio.write_atomic(world["cache"], jsonfast.dumps({"text": "<ctx>", "tokens": 3, "record_ids": ["r1"],
                                                           "generation": 8, "sections": ["decisions"]}))
    assert ready.serve(world["cwd"]) is None


def test_nothing_is_sealed_over_a_file_changed_too_close_to_the_run(world):
    """A change in the same tick of the file system's clock could be followed by another unseen one."""
    os.utime(world["setting"], None)  # changed now
    assert not seal(world, since=time.time_ns())
    assert ready.serve(world["cwd"]) is None
    assert seal(world, since=time.time_ns() + 10 * ready.MARGIN_NS) is True  # (a run that began well after it)


def test_whole_second_times_take_the_coarse_margin():
    now = time.time_ns()
    second = now - now % 1_000_000_000 - 1_000_000_000  # a whole second, 1-2 s ago
    assert ready._recent([second, second], now)  # within 2 s on a file system that keeps whole seconds
    assert not ready._recent([second + 1, second + 1], now)  # ns times: 50 ms is the margin


def test_a_seal_belongs_to_one_folder(world, tmp_path):
    assert seal(world)
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert ready.serve(str(other)) is None
    ready.unseal(world["cwd"])
    assert ready.serve(world["cwd"]) is None
