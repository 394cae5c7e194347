"""The per-prompt selection at its edge (``injection.turn``): records are injected whole or not at all, so a
record whose block alone is over the 2,000-token budget injects nothing, and nothing is counted for it."""

from __future__ import annotations

import sqlite3

import pytest

from agentctx import budgets, clock, project, render
from agentctx.injection import turn
from agentctx.store import db, records

PROMPT_TOKENS = 2000  # README: UserPromptSubmit "≤ 3 records, ≤ 2,000 tokens"
PROMPT = "ledger outbox ordering"


def _oversize(conn: sqlite3.Connection, record_id: str, ideographs: int, marks: int = 0) -> str:
    """Give the record a title padded with ``ideographs`` CJK characters (one token each) and ``marks`` "!", as a
    store written outside this version's 300-character title check could hold (an older version, a hand edit);
    its block."""
    title = "Ledger outbox ordering " + "账" * ideographs + "!" * marks
    conn.execute("UPDATE records SET title = ? WHERE id = ?", (title, record_id))
    conn.commit()
    return render.record_block(records.get(conn, record_id, all_projects=True), body_chars=turn.BODY_CHARS)


def test_a_record_fills_the_prompt_budget_to_2000_tokens_and_one_token_more_injects_nothing(
        conn: sqlite3.Connection, proj: project.Project) -> None:
    rec = records.add(conn, proj.id, type="decision", title="Ledger outbox ordering",
                      body="The ledger outbox relay keeps ordering per account.")
    # The block's ASCII length a multiple of 4: the estimate of the fenced text is then exactly the fence's and the
    # block's own, the sum the cap is checked with.
    marks = next(m for m in range(4) if len(_oversize(conn, rec["id"], 0, m).encode("ascii", "ignore")) % 4 == 0)
    pad = 1000
    pad += PROMPT_TOKENS - budgets.estimate_tokens(render.fence("prompt", [_oversize(conn, rec["id"], pad, marks)]))
    block = _oversize(conn, rec["id"], pad, marks)
    assert budgets.estimate_tokens(render.fence("prompt", [block])) == 2000
    text, shown, tokens = turn.select(conn, proj.id, "s-at-the-limit", PROMPT)
    assert (text, shown, tokens) == (render.fence("prompt", [block]), [rec["id"]], 2000)

    block = _oversize(conn, rec["id"], pad + 1, marks)
    assert budgets.estimate_tokens(render.fence("prompt", [block])) == 2001
    assert turn.select(conn, proj.id, "s-one-past", PROMPT) == ("", [], 0), "never cut mid-record, nothing counted"



def test_with_the_token_cap_out_of_the_way_a_prompts_text_stays_under_9000_characters(
        conn: sqlite3.Connection, proj: project.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The character cap is its own rule: escaped "&" (5 characters, 1.25 tokens each) makes long blocks, and with
    the token cap raised, the 9,000 characters alone decide whether the second record fits."""
    monkeypatch.setattr(budgets, "TURN_TOKENS", 10**6)
    first = records.add(conn, proj.id, type="decision", title="Ledger outbox ordering", pinned=True,
                        body="The ledger outbox relay keeps ordering per account. " + "&" * 1100)
    said = "Ledger outbox replays are idempotent."
    second = records.add(conn, proj.id, type="decision", title="Ledger outbox replays", body=said)
    head = render.record_block(records.get(conn, first["id"], project_id=proj.id), body_chars=turn.BODY_CHARS)
    shown = set()
    for size in range(8990, 9011):  # the characters the prompt's text would have with both records
        filler = size - len(render.fence("prompt", [head, render.record_block(second, body_chars=turn.BODY_CHARS)]))
        body = said + "&" * (filler // 5) + "." * (filler % 5)
        with db.transaction(conn):
            records.revise(conn, second["id"], stamp=clock.now(), project_id=proj.id, body=body)
        tail = render.record_block(records.get(conn, second["id"], project_id=proj.id), body_chars=turn.BODY_CHARS)
        assert len(render.fence("prompt", [head, tail])) == size
        text, ids, _ = turn.select(conn, proj.id, f"s{size}", "ledger outbox ordering replays")
        assert len(text) < 9000 and ids[0] == first["id"], size
        assert text == render.fence("prompt", [head, tail][: len(ids)])
        if size >= 9000:
            assert ids == [first["id"]], size
        shown.add(len(ids))
    assert shown == {1, 2}
