"""Session starts left in files by SessionStart (``store.starts``), folded into the store once."""

from __future__ import annotations

import os
from pathlib import Path

from agentctx import paths
from agentctx.store import db, sessions, starts

PROJECT = {"id": "p1", "name": "widgets", "root": "/work/widgets", "remote": "github.com/acme/widgets"}


def test_a_start_is_folded_once_by_whoever_reads_the_session_first(conn):
    starts.note("s1", PROJECT, "/work/widgets/api", "startup", ["r1", "r2"], 120)
    starts.note("s2", PROJECT, "/work/widgets", "startup", [], 40)
    row = sessions.get(conn, "s1")
    assert (row["project_id"], row["cwd"], row["current_cwd"], row["source"]) == ("p1", "/work/widgets", "/work/widgets/api",
                                                                                 "startup")
    assert (row["tokens_injected"], row["injections"]) == (120, 1)
    assert conn.execute("SELECT name FROM projects WHERE id = 'p1'").fetchone()[0] == "widgets"
    assert len(os.listdir(starts.folder())) == 1  # s2 waits for its own reader
    assert sessions.injected_ids(conn, "s1") == {"r1", "r2"}
    assert sessions.recent(conn, "p1")[0]["session_id"] in {"s1", "s2"} and not os.listdir(starts.folder())


def test_starts_fold_in_the_order_they_happened_and_a_clear_resets_what_was_seen(conn):
    starts.note("s1", PROJECT, "/w", "startup", ["r1"], 10)
    starts.note("s1", PROJECT, "/w", "clear", ["r2"], 20)
    assert sessions.injected_ids(conn, "s1") == {"r2"}
    assert sessions.get(conn, "s1")["source"] == "clear"


def test_inside_a_transaction_the_fold_commits_or_rolls_back_with_it(conn):
    starts.note("s1", PROJECT, "/w", "startup", ["r1"], 10)
    with db.transaction(conn):
        sessions.account(conn, "s1", "p1", "UserPromptSubmit", ["r3"], 5)
    assert sessions.injected_ids(conn, "s1") == {"r1", "r3"}
    assert sessions.get(conn, "s1")["injections"] == 2


def test_a_store_that_cannot_take_them_leaves_them_waiting(home: Path):
    starts.note("s1", PROJECT, "/w", "startup", ["r1"], 10)
    conn = db.connect()
    conn.close()
    os.chmod(paths.db_path(), 0o444)
    try:
        ro = db.connect()
        if not db.is_read_only(ro):  # root writes anyway: nothing to check here
            ro.close()
            return
        assert sessions.get(ro, "s1") is None
        ro.close()
    finally:
        os.chmod(paths.db_path(), 0o600)
    assert [n.startswith("s1.") and n.endswith(".json") for n in os.listdir(starts.folder())] == [True]


def test_two_readers_never_fold_one_start_twice(home: Path):
    starts.note("s1", PROJECT, "/w", "startup", ["r1"], 10)
    first, second = starts.take("s1"), starts.take("s1")
    assert len(first) == 1 and second == []
    starts.release(first)
    assert len(starts.take()) == 1


def test_an_odd_session_id_is_kept_whole_in_the_file_not_in_its_name(conn):
    odd = "../../etc/passwd\n"
    starts.note(odd, PROJECT, "/w", "startup", [], 1)
    assert all("/" not in n and "passwd" not in n for n in os.listdir(starts.folder()))
    assert sessions.get(conn, odd)["session_id"] == odd


def test_a_claim_abandoned_a_day_ago_is_dropped_a_fresh_one_kept(home: Path):
    starts.note("s1", PROJECT, "/w", "startup", [], 1)
    starts.note("s2", PROJECT, "/w", "startup", [], 1)
    old, fresh = starts.take("s1")[0][0], starts.take("s2")[0][0]  # claimed by a process that then died
    day_ago = os.stat(old).st_mtime - starts.ABANDONED_S - 60
    os.utime(old, (day_ago, day_ago))
    assert starts.take() == []
    assert not os.path.exists(old) and os.path.exists(fresh)
