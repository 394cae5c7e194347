"""The README's injection limits, asserted as the numbers it promises, through the real entry points at the limit.

SessionStart ≤ 1,500 tokens (a ``compact`` start with every digest section full and an anchor on top: only the
final cut keeps that in budget); per prompt ≤ 3 records and ≤ 2,000 tokens; every injected string under 9,000
characters. The numbers are written out on purpose: a test that compares with ``budgets.SESSION_START_TOKENS``
still passes when the constant itself is raised.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentctx import budgets, clock, ids, project, render
from agentctx.capture import handover
from agentctx.events.session_start import on_session_start
from agentctx.events.user_prompt_submit import on_user_prompt_submit
from agentctx.hookio import HookEvent
from agentctx.injection import digest, turn
from agentctx.store import db, records, sessions
from tests.conftest import make_repo
from tests.support.hooks import context_of, run_hook

SESSION_START_TOKENS = 1500  # README: SessionStart "≤ 1,500 tokens, cut from the bottom at record boundaries"
PROMPT_TOKENS = 2000  # README: UserPromptSubmit "≤ 3 records, ≤ 2,000 tokens"
PROMPT_RECORDS = 3
MAX_CHARS = 9000  # README: "Every injected string is under 9,000 characters"

SID = "sess-limits"
PROSE = ("The ledger service owns every balance mutation; payments only emit intents through the outbox, "
         "which the relay replays idempotently per account. ")
ANCHOR_HEADING = "## Where this session was before compaction (anchor state)"
DIGEST_HEADINGS = ("## Project profile: ", "## Decisions and conventions in force", "## Last session handover",
                   "## Developer profile (all projects)")


def tokens(text: str) -> int:
    return budgets.estimate_tokens(text)


def body_lines(fenced: str) -> list[str]:
    """The lines between the fence's opening and closing tags."""
    lines = fenced.splitlines()
    assert lines[0].startswith("<agentctx-context ") and lines[-1] == "</agentctx-context>"
    return lines[1:-1]


def start_payload(repo: Path, source: str, session: str = SID) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart", "source": source,
            "transcript_path": "/nonexistent.jsonl"}


def prompt_payload(repo: Path, prompt: str, session: str = SID) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": prompt,
            "transcript_path": "/nonexistent.jsonl"}


# ---------------------------------------------------------------- SessionStart: 1,500 tokens


def fill_every_section(conn: sqlite3.Connection, proj: project.Project) -> dict[str, int]:
    """More than each digest section can show: profile facts, decisions and conventions, a long handover,
    global preferences (from other projects); discoveries too (never in the digest). Counts per section."""
    for i in range(30):
        records.add(conn, proj.id, type="profile", key=f"profile.fact_{i}", title=f"Profile fact {i}: pytest -q",
                    body=PROSE)
    for i in range(60):
        records.add(conn, proj.id, type="decision" if i % 3 else "convention",
                    title=f"Rule {i}: ledger writes go through the outbox", body=PROSE * 3)
    records.add(conn, proj.id, type="handover", title="Refund endpoint half done; ledger client pending",
                body=PROSE * 20)
    for i in range(25):
        records.add(conn, f"otherproject{i:04d}", type="preference", scope="global",
                    title=f"Preference {i}: explain the plan before editing", body=PROSE)
    for i in range(10):
        records.add(conn, proj.id, type="discovery", title=f"Discovery {i}", body=PROSE)
    return {"profile": 30, "decisions": 60, "developer": 25}


def write_anchor(conn: sqlite3.Connection, proj: project.Project, sid: str = SID) -> list[str]:
    """A full anchor for ``sid`` (what PreCompact stores), as the digest blocks it becomes."""
    text = "kept across compaction: " + "the refund flow must stay idempotent per account " * 4
    fresh = {
        "intent": [{"key": "prompt", "text": "Finish the refund endpoint " + text}],
        "changes": [{"key": f"file:src/mod_{i}.py", "text": f"src/mod_{i}.py (written/edited 2×) {text}"}
                    for i in range(40)],
        "decisions": [{"key": f"rec:{i}", "text": f"[decision] choice {i}: {text}"} for i in range(20)],
        "next_steps": [{"key": f"step:{i}", "text": f"step {i}: {text}"} for i in range(10)],
    }
    handover.update_anchor(conn, proj.id, sid, fresh)
    blocks = handover.anchor_blocks(conn, sid)
    assert blocks and blocks[0] == ANCHOR_HEADING
    return blocks


def test_a_compact_session_start_with_every_section_full_and_an_anchor_is_cut_to_1500_tokens(
        conn, proj, home, repo):
    shown_at_most = fill_every_section(conn, proj)
    anchor_blocks = write_anchor(conn, proj)

    # A normal start: every section is there, each one cut by its own budget (more records than it shows).
    startup = context_of(run_hook("session_start", start_payload(repo, "startup", "sess-other"), home))
    assert tokens(startup) <= SESSION_START_TOKENS and len(startup) < MAX_CHARS
    plain = body_lines(startup)
    for heading in DIGEST_HEADINGS:
        assert any(line.startswith(heading) for line in plain), heading
    sections = "\n".join(plain)
    profile = sections.split("## Project profile: ", 1)[1].split("\n## ", 1)[0]
    assert 0 < profile.count("\n- ") < shown_at_most["profile"]
    assert 0 < sections.count("\n- [decision] ") + sections.count("\n- [convention] ") < shown_at_most["decisions"]
    handover = sections.split("## Last session handover\n", 1)[1].splitlines()[0]
    assert handover.startswith("- Refund endpoint half done") and handover.endswith(" …"), "the body was shortened"
    developer = sections.split("## Developer profile (all projects)", 1)[1].split("\n## ", 1)[0]
    assert 0 < developer.count("\n- ") < shown_at_most["developer"]
    assert plain[-1].endswith("full text with `agentctx get <id>`."), "the hint closes an uncut digest"

    # The anchor on top of all that is over the limit: the final cut is what keeps a compact start in budget.
    uncapped = render.fence("session-start", [*anchor_blocks, *plain])
    assert tokens(uncapped) > SESSION_START_TOKENS

    proc = run_hook("session_start", start_payload(repo, "compact"), home)
    assert proc.returncode == 0, proc.stderr
    compact = context_of(proc)
    assert tokens(compact) <= SESSION_START_TOKENS
    assert len(compact) < MAX_CHARS
    lines = body_lines(compact)
    anchor_lines = "\n".join(anchor_blocks).splitlines()
    assert lines[: len(anchor_lines)] == anchor_lines, "the anchor comes first, whole"
    rest = lines[len(anchor_lines):]
    assert rest and rest == plain[: len(rest)], "then the digest, cut from the bottom at a line (record) boundary"
    assert len(rest) < len(plain)
    assert tokens(render.fence("session-start", [*anchor_lines, *plain[: len(rest) + 5]])) > SESSION_START_TOKENS, \
        "cut only near the limit"
    row = sessions.get(conn, SID)  # the start waited in a file (store.starts) until a reader folded it
    assert row["tokens_injected"] == tokens(compact) <= SESSION_START_TOKENS


def test_the_digest_keeps_whole_blocks_exactly_while_they_fit_in_1500_tokens(conn, proj, home):
    """At the boundary: a lead (the anchor's place) then the hint are kept while the fenced digest stays within
    1,500 tokens; the first block that does not fit ends it."""
    plain = digest.build(conn, proj)  # an empty store: the fence and the one-line hint
    (hint,) = body_lines(plain.text)
    room = 4 * (SESSION_START_TOKENS - plain.tokens)  # ASCII characters left for the lead, roughly
    seen, largest = set(), 0
    for size in range(room - 40, room + 600):
        lead = "x" * size
        dig = digest.build(conn, proj, lead=[lead])
        assert dig.tokens == tokens(dig.text) <= SESSION_START_TOKENS, size
        kept = body_lines(dig.text)
        blocks = [lead, hint]
        assert kept == blocks[: len(kept)], "whole blocks, in order"
        if len(kept) < len(blocks):  # the next block did not fit: with it, the digest would pass the limit
            # (per-block estimates are summed, which may over-count the joined text by a token)
            assert tokens(render.fence("session-start", blocks[: len(kept) + 1])) > SESSION_START_TOKENS - 2, size
        seen.add(len(kept))
        largest = max(largest, dig.tokens)
    assert seen == {0, 1, 2}, "the sweep crossed both boundaries"
    assert largest >= SESSION_START_TOKENS - 1, "the cap is used up to the limit"


def developer_section(text: str) -> list[str]:
    lines = body_lines(text)
    start = lines.index("## Developer profile (all projects)")
    return [lines[start], *[ln for ln in lines[start + 1:] if ln.startswith("- ")]]


def test_the_developer_profile_takes_at_most_200_tokens_of_the_digest(conn, proj, home):
    """README: reinforced global preferences appear in every SessionStart digest (≤ 200 tokens). A second
    preference grows a character at a time: it is shown exactly while the section stays within 200 tokens."""
    other = "0therproject0001"
    first = records.add(conn, other, type="preference", scope="global", title="Explain the plan before editing " + "e" * 150,
                        body="Always. " * 20, pinned=True)  # pinned: it leads the section
    block = developer_section(digest.build(conn, proj).text)[1]
    pad = (-_ascii("\n" + block)) % 4  # make the first entry's estimate exact
    first = records.supersede(conn, other, first["id"], title=first["title"] + "!" * pad, body=first["body"])
    second = records.add(conn, other, type="preference", scope="global", title="Prefer small commits " + "x" * 100,
                         body="Always. " * 20)
    shown = []
    for _ in range(120):
        section = developer_section(digest.build(conn, proj).text)
        assert len(section) >= 2 and first["title"] in section[1], "the first preference always fits"
        size = tokens("\n".join(section))
        assert size <= 200, size
        with_second = any(second["title"] in line for line in section)
        shown.append((with_second, size))
        if not with_second:
            break
        second = records.supersede(conn, other, second["id"], title=second["title"] + "y", body=second["body"])
    assert shown[0][0] and not shown[-1][0], "the sweep crossed the limit"
    assert max(size for _, size in shown) == 200


def test_a_precomputed_digest_is_used_up_to_exactly_1500_tokens(conn, proj, home, repo, monkeypatch):
    """The cached digest (SessionEnd writes it) is injected only while it is within 1,500 tokens."""
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    records.add(conn, proj.id, type="decision", title="Money is integer cents")
    event = HookEvent.of("SessionStart", session_id=SID, cwd=str(repo), source="startup")
    for size, used in ((SESSION_START_TOKENS, True), (SESSION_START_TOKENS + 1, False)):
        fill = next(n for n in range(4 * size) if tokens(render.fence("session-start", ["y" * n])) == size)
        text = render.fence("session-start", ["y" * fill])
        digest.write_cache(proj.id, digest.Digest(text, size, [], db.generation(conn)))
        out = on_session_start(event)["hookSpecificOutput"]["additionalContext"]
        assert (out == text) is used, size
        assert tokens(out) <= SESSION_START_TOKENS
        if not used:
            assert "Money is integer cents" in out, "built live instead"


def test_the_digest_stays_under_9000_characters_even_with_a_larger_token_cap(conn, proj, home):
    """The character cap is its own rule: with the token cap out of the way, it alone holds the digest."""
    plain = digest.build(conn, proj)
    (hint,) = body_lines(plain.text)
    room = MAX_CHARS - len(plain.text)  # characters left for the lead, roughly
    seen, longest = set(), 0
    for size in range(room - 8, room + len(hint) + 8):
        lead = "x" * size
        dig = digest.build(conn, proj, lead=[lead], cap=10**6)
        assert len(dig.text) < MAX_CHARS, (size, len(dig.text))
        kept = body_lines(dig.text)
        blocks = [lead, hint]
        assert kept == blocks[: len(kept)]
        if len(kept) < len(blocks):
            assert len(render.fence("session-start", blocks[: len(kept) + 1])) >= MAX_CHARS, size
        seen.add(len(kept))
        longest = max(longest, len(dig.text))
    assert seen == {0, 1, 2} and longest == MAX_CHARS - 1


# ---------------------------------------------------------------- UserPromptSubmit: 3 records, 2,000 tokens


def test_a_narrow_prompt_injects_3_records_then_the_next_3(conn, proj, home, repo, monkeypatch):
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    made = [records.add(conn, proj.id, type="bugfix", title=f"Webhook signature check {i} used local time",
                        body="The webhook signature test failed on clock skew.") for i in range(7)]
    event = HookEvent.of("UserPromptSubmit", session_id=SID, cwd=str(repo), prompt="webhook signature clock skew")
    seen: list[str] = []
    for expected in (3, 3, 1, 0):
        out = on_user_prompt_submit(event)
        if not expected:
            assert out is None
            break
        text = out["hookSpecificOutput"]["additionalContext"]
        shown = [r["id"] for r in made if f"id {r['id']})" in text]
        assert len(shown) == expected == len([ln for ln in body_lines(text) if ln.startswith("- ")])
        assert not set(shown) & set(seen)
        seen += shown
    assert sorted(seen) == sorted(r["id"] for r in made)
    assert turn.select(conn, proj.id, SID, "webhook signature clock skew") == ("", [], 0), "all of them seen"


def test_a_broad_prompt_injects_up_to_8_shorter_records(conn, proj, home, repo, monkeypatch):
    """README: up to 8 shorter records for a broad or multi-part prompt, within the same 2,000 tokens."""
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    made = [records.add(conn, proj.id, type="decision", title=f"Kafka topic decision {i}",
                        body="Kafka topic retention and partitions, with the reasons. " * 20) for i in range(10)]
    broad = HookEvent.of("UserPromptSubmit", session_id="s-broad", cwd=str(repo),
                         prompt="give me an overview of every kafka topic decision")
    text = on_user_prompt_submit(broad)["hookSpecificOutput"]["additionalContext"]
    lines = [ln for ln in body_lines(text) if ln.startswith("- ")]
    assert len(lines) == 8 and tokens(text) <= PROMPT_TOKENS and len(text) < MAX_CHARS
    assert all(len(ln) < 400 for ln in lines), "shorter entries"
    narrow = HookEvent.of("UserPromptSubmit", session_id="s-narrow", cwd=str(repo),
                          prompt="which kafka topic decision applies here")
    text = on_user_prompt_submit(narrow)["hookSpecificOutput"]["additionalContext"]
    lines = [ln for ln in body_lines(text) if ln.startswith("- ")]
    assert len(lines) == PROMPT_RECORDS and all(len(ln) > 1000 for ln in lines)
    assert len(made) == 10


def test_ctx_search_lists_8_results_for_a_narrow_query_and_15_for_a_broad_one():
    """README: ctx_search shows 8 current records for a narrow query, 15 for a broad or multi-part one; a prompt
    gets 3 records with bodies up to 1,200 characters, or 8 entries of up to 280."""
    assert budgets.search_depth("what database do we use") == 8
    assert budgets.search_depth("how do we deploy and where are the logs?") == 15
    assert budgets.turn_depth("what database do we use") == (3, 1200, False)
    assert budgets.turn_depth("give me an overview of auth") == (8, 280, True)


@pytest.mark.parametrize(("prompt", "broad"), [
    ("Redis? Memcached?", True),  # two questions, nothing else
    ("Redis?", False),
    ("- the flaky test\n- the slow build", True),
    ("- the flaky test", False),
    ("what broke the nightly build", False),  # one ask
    ("what broke the build and where are the logs", True),  # two asks joined by "and"
    ("x" * 2500 + " give me an overview " + "y" * 2500, False),  # a long prompt is judged by its head and tail
    ("give me an overview " + "y" * 5000, True),
    ("y" * 5000 + " give me an overview", True),
    ("y" * 1996 + " overview " + "z" * 1994, True),  # exactly 4,000 characters: judged whole
    ("y" * 1996 + " overview " + "z" * 1995, False),  # 4,001: head and tail, "overview" split between them
    ("." * 1992 + "overview" + "." * 4000, True),  # ends on the head's last character
    ("." * 1993 + "overview" + "." * 4000, False),  # one past it
    ("." * 4000 + "overview" + "." * 1992, True),  # starts on the tail's first character
    ("." * 3999 + "overview" + "." * 1993, False),  # one before it
])
def test_what_makes_a_prompt_broad(prompt, broad):
    assert budgets.is_broad(prompt) is broad, prompt[:40]


def test_what_is_broad_is_what_the_patterns_alone_said_on_every_kind_of_prompt():
    """The patterns are compiled and run only for a prompt that could match them: the answer is the one
    running them on every prompt gave (the function as it was, kept here)."""
    import random
    import re

    list_item = re.compile(budgets._LIST_ITEM, re.MULTILINE)
    breadth, ask = re.compile(budgets._BREADTH, re.IGNORECASE), re.compile(budgets._ASK, re.IGNORECASE)

    def before(prompt: str) -> bool:
        text = prompt if len(prompt) <= 4000 else prompt[:2000] + "\n" + prompt[-2000:]
        return (text.count("?") >= 2 or len(list_item.findall(text)) >= 2 or len(ask.findall(text)) >= 2
                or bool(breadth.search(text)))

    pieces = ["what", "How", "WHERE", "is", "are", "do", "can", "should", "and", "AND", "also", "Also", "band",
              "island", "the", "ledger", "outbox", "overview", "Summarize", "summary", "recap", "all the", "ALL OF",
              "all", "list every", "list", "both", "Compare", "comparison", "difference between", "differences",
              "each of", "catch me up", "walk me through", "remind me", "what do we know", "everything",
              "İs", "ſummary", "REMİND ME", "ﬁle", "Ok", "日本語", "ledger's", "x-ray"]
    seps = [" ", " ", " ", "  ", ". ", "? ", "?", "!", "; ", ", ", "\n", "\n- ", "\n1. ", "\n2) ", "\t", ".", "\u2028"]
    rng = random.Random(11)
    disagree = [text for text in ("what broke also how", "How is it ALSO\twhere", "what broke?\twhere is it",
                                  "what broke;\u2003how", "do it and\x0bwhere", "give me both", "each of them")
                if budgets.is_broad(text) is not before(text)]
    for _ in range(20_000):
        n = rng.randint(1, 9)
        text = rng.choice(["", "", "- ", "1. ", " "]) + "".join(rng.choice(pieces) + rng.choice(seps) for _ in range(n))
        if budgets.is_broad(text) is not before(text):
            disagree.append(text)
    assert not disagree, disagree[:5]


def test_a_field_is_clipped_to_its_length_and_a_text_to_its_tokens():
    assert budgets.clip("abcdef", 6) == "abcdef" and budgets.clip("abcdefg", 6) == "abcd …"
    assert budgets.clip("abcdef", 1) == " …", "room for the marker only"
    assert budgets.clip_tokens("abcd" * 5, 5) == "abcd" * 5, "exactly at the cap: whole"
    assert budgets.clip_tokens("abcd" * 5 + "e", 5) == "abcd" * 4 + "…"


def test_a_subagent_brief_is_cut_to_800_tokens(conn, proj, home, repo):
    """README: SubagentStart ≤ 800 tokens; a planner's brief of full sections needs the cut."""
    fill_every_section(conn, proj)
    uncapped = digest.build(conn, proj, sections=["decisions", "handover"], cap=10**6, kind="subagent")
    assert tokens(uncapped.text) > 800
    proc = run_hook("subagent_start", {"session_id": SID, "cwd": str(repo), "hook_event_name": "SubagentStart",
                                       "agent_id": "agent-1", "agent_type": "general-purpose"}, home)
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc)
    assert tokens(text) <= 800 and len(text) < MAX_CHARS
    assert text.startswith('<agentctx-context kind="subagent"')
    lines = body_lines(text)
    assert lines and lines == body_lines(uncapped.text)[: len(lines)], "cut from the bottom at a record boundary"


def _block(rec: dict) -> str:
    return render.record_block(rec, body_chars=turn.BODY_CHARS)


def _ascii(text: str) -> int:
    return len(text.encode("ascii", "ignore"))


def _pair(pad: int, cjk: int) -> tuple[dict, dict]:
    """Two decisions matching "ledger outbox" (not stored yet): the first pinned, so it comes first; the second
    with ``cjk`` ideographs in its body and its title padded by ``pad`` characters. The first block's ASCII length
    is a multiple of 4, and so is the second's with the newline before it: every estimate is exact, so the
    per-block sum the cap is checked with equals the estimate of the injected text."""
    stamp = clock.parse("2026-03-01")

    def rec(title: str, body: str, pinned: bool) -> dict:
        return {"id": ids.new_id(), "type": "decision", "title": title, "body": body, "valid_from": stamp,
                "pinned": pinned, "confidence": "explicit", "scope": "project"}

    first = rec("Ledger outbox ordering", "Ledger outbox relay keeps ordering per account. " + "账" * 900, True)
    while _ascii(_block(first)) % 4:
        first["title"] += "!"
    second = rec("Ledger outbox replay z" + "z" * pad, "Ledger outbox replays are idempotent. " + "据" * cjk, False)
    while _ascii("\n" + _block(second)) % 4:
        second["title"] = "_" + second["title"]
    return first, second


def _store_pair(conn: sqlite3.Connection, tmp_path: Path, name: str, pair: tuple[dict, dict]) -> tuple[Path, list]:
    """The pair stored, with their ids and dates, in a project of its own."""
    repo = make_repo(tmp_path / name, remote=f"git@github.com:acme/{name}.git")
    proj = project.detect(str(repo))
    stored = [records.add(conn, proj.id, type=r["type"], title=r["title"], body=r["body"], valid_from=r["valid_from"],
                          pinned=r["pinned"], record_id=r["id"]) for r in pair]
    assert [_block(r) for r in stored] == [_block(r) for r in pair]
    return repo, stored


def test_a_prompt_injects_records_exactly_while_they_fit_in_2000_tokens(conn, home, tmp_path, monkeypatch):
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    probe = _pair(0, 1000)  # size the second body so that the sweep over the title starts just under the limit
    cjk = 1000 - (tokens(render.fence("prompt", [_block(r) for r in probe])) - (PROMPT_TOKENS - 12))
    injected = []
    for pad in range(0, 100):
        pair = _pair(pad, cjk)
        whole = tokens(render.fence("prompt", [_block(r) for r in pair]))
        repo, (first, second) = _store_pair(conn, tmp_path, f"p{pad}", pair)
        out = on_user_prompt_submit(HookEvent.of("UserPromptSubmit", session_id=f"s{pad}", cwd=str(repo),
                                                 prompt="ledger outbox"))
        text = out["hookSpecificOutput"]["additionalContext"]
        assert tokens(text) <= PROMPT_TOKENS and len(text) < MAX_CHARS, pad
        assert body_lines(text)[0] == _block(first)
        both = second["id"] in text
        assert both is (whole <= PROMPT_TOKENS), (pad, whole)
        if both:
            assert text == render.fence("prompt", [_block(first), _block(second)])
        injected.append(tokens(text))
        if not both:
            break
    assert injected[0] < PROMPT_TOKENS and max(injected) == PROMPT_TOKENS, injected


def test_three_long_records_are_cut_to_2000_tokens_in_the_hook_process(conn, proj, home, repo):
    made = [records.add(conn, proj.id, type="decision", title=f"Ledger outbox rule {i} " + "规则" * 100,
                        body="ledger outbox " + "数据库迁移需要锁表" * 200) for i in range(3)]
    uncapped = render.fence("prompt", [_block(r) for r in made])
    assert tokens(uncapped) > PROMPT_TOKENS
    seen: set[str] = set()
    for _ in made:
        proc = run_hook("user_prompt_submit", prompt_payload(repo, "ledger outbox rules"), home)
        assert proc.returncode == 0, proc.stderr
        text = context_of(proc)
        assert tokens(text) <= PROMPT_TOKENS and len(text) < MAX_CHARS
        shown = {r["id"] for r in made if f"id {r['id']})" in text}
        assert len(shown) == 1 and not shown & seen, "whole records only, each once per session"
        seen |= shown
    assert seen == {r["id"] for r in made}
    last = run_hook("user_prompt_submit", prompt_payload(repo, "ledger outbox rules"), home)
    assert last.returncode == 0 and last.stdout == b""
    row = conn.execute("SELECT tokens_injected, injections FROM sessions WHERE session_id = ?", (SID,)).fetchone()
    assert row["injections"] == 3 and row["tokens_injected"] <= 3 * PROMPT_TOKENS


@pytest.mark.parametrize("prompt", ["ok", "yes", "continue"])
def test_ok_yes_continue_inject_nothing(conn, proj, home, repo, prompt):
    records.add(conn, proj.id, type="decision", title="ok yes continue are words in this record")
    proc = run_hook("user_prompt_submit", prompt_payload(repo, prompt), home)
    assert proc.returncode == 0 and proc.stdout == b""
