"""The SessionStart digest's rules at their limits (lib/agentctx/injection/digest.py, ADR-007).

Each section has its own token budget and its own body length; a section's top record that is too long is shown
with the longest body that fits; the sections read the newest handover only and the 40 best decisions (or
conventions) before the consolidated ranking orders them; the closing hint counts what is not shown; the whole is
cut to 1,500 tokens and 9,000 characters; a precomputed digest is used only while it is fresh. The numbers are
written out: a test that reads them from the module would still pass when they change.
"""

from __future__ import annotations

import json
import os

import pytest

from agentctx import budgets, render, settings
from agentctx.injection import digest
from agentctx.store import db, records

SESSION_START_TOKENS = 1500  # README: SessionStart "≤ 1,500 tokens"
MAX_CHARS = 9000  # README: "Every injected string is under 9,000 characters"
SECTION_TOKENS = {"profile": 220, "decisions": 560, "conventions": 400, "handover": 380, "developer": 200}
BODY_CHARS = {"profile": 160, "decisions": 220, "conventions": 220, "handover": 1400, "developer": 160}
HEADINGS = {"profile": "## Project profile: widgets", "decisions": "## Decisions and conventions in force",
            "conventions": "## Conventions in force", "handover": "## Last session handover",
            "developer": "## Developer profile (all projects)"}
OTHER = "0therproject0001"  # another project: the developer profile shows its global preferences
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def tokens(text: str) -> int:
    return budgets.estimate_tokens(text)


def add(conn, proj, section: str, title: str, body: str = "", **fields) -> dict:
    """A record of the kind ``section`` shows."""
    if section == "developer":
        return records.add(conn, OTHER, type="preference", scope="global", title=title, body=body, **fields)
    if section == "profile":
        fields.setdefault("key", "profile." + "".join(c for c in title.lower() if c.isalnum())[:40])
    kind = {"profile": "profile", "decisions": "decision", "conventions": "convention", "handover": "handover"}
    return records.add(conn, proj.id, type=kind[section], title=title, body=body, **fields)


def regrow(conn, proj, section: str, rec: dict, title: str, body: str = "") -> dict:
    """``rec`` replaced by one with this title and body (superseded: same type, scope and key)."""
    return records.supersede(conn, OTHER if section == "developer" else proj.id, rec["id"], title=title, body=body)


def body_lines(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines[0].startswith("<agentctx-context ") and lines[-1] == "</agentctx-context>"
    return lines[1:-1]


def section_of(text: str, name: str) -> list[str]:
    """The section's heading and record lines in a digest's text ([] when the section is not there)."""
    lines = body_lines(text)
    if HEADINGS[name] not in lines:
        return []
    start = lines.index(HEADINGS[name])
    out = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("- "):
            break
        out.append(line)
    return out


def section(conn, proj, name: str) -> list[str]:
    """The section built alone, with the whole digest's cap out of the way."""
    return section_of(digest.build(conn, proj, sections=[name], cap=10**6).text, name)


def counted(lines: list[str]) -> int:
    """A section's size as its budget counts it: each line's estimate, with the newline before it."""
    return sum(tokens(line if i == 0 else "\n" + line) for i, line in enumerate(lines))


def letters(n: int) -> str:
    """``n`` characters without a space (a clipped body keeps exactly its length)."""
    return (LETTERS * (n // 26 + 1))[:n]


# ---------------------------------------------------------------- each section's token budget


@pytest.mark.parametrize("name", ["profile", "decisions", "conventions", "developer"])
def test_a_sections_last_record_is_shown_exactly_while_the_section_stays_within_its_budget(conn, proj, home, name):
    """Profile 220, decisions 560, conventions 400, developer 200 tokens: pinned records fill the section to within
    a few lines of its budget, then one more record grows a character at a time. It is shown exactly while the
    section (heading and lines) stays within the budget; past it, the section ends with the records before it."""
    budget = SECTION_TOKENS[name]
    fillers: list[dict] = []
    while True:
        lines = section(conn, proj, name) or [HEADINGS[name]]
        assert len(lines) == 1 + len(fillers), "every filler fits"
        room = budget - counted(lines)
        if room < 60:
            break
        fillers.append(add(conn, proj, name, f"Filler {len(fillers)} " + "f" * 40, letters(60), pinned=True))
    before = lines
    last = add(conn, proj, name, "Grows")
    lines = section(conn, proj, name)
    assert lines[-1].startswith(("- Grows (", "- [decision] Grows (")), "the unpinned record comes last"
    fixed = len(lines[-1]) - len("Grows")  # the line without its title
    at_limit = 4 * room - 1 - fixed  # title characters that make the line and its newline exactly ``room`` tokens
    seen = {}
    for size in range(at_limit - 6, at_limit + 7):
        last = regrow(conn, proj, name, last, "Grows" + "g" * (size - len("Grows")))
        lines = section(conn, proj, name)
        shown = last["title"] in lines[-1]
        assert lines[: len(before)] == before and len(lines) == len(before) + shown, "whole records only"
        assert counted(lines) <= budget, (size, counted(lines))
        seen[size] = counted(lines) if shown else None
    assert all(seen[size] is not None for size in range(at_limit - 6, at_limit + 1)), seen
    assert all(seen[size] is None for size in range(at_limit + 1, at_limit + 7)), seen
    assert seen[at_limit] == budget, "the budget is used up to the token"


def test_the_handover_is_shortened_to_exactly_380_tokens_whatever_its_title(conn, proj, home):
    """A handover too long for its 380-token section keeps the longest body that fits: with ASCII text, heading
    (6 tokens) and line (1,492 characters and a newline: 373 tokens for the ASCII, 1 for the marker "…") come to
    exactly 380, for any title length. A title of 44 characters or fewer leaves room for the first 1,400."""
    rec = add(conn, proj, "handover", "h", letters(3000))
    for title_chars in range(40, 140):
        rec = regrow(conn, proj, "handover", rec, "H" * title_chars, letters(3000))
        heading, line = section(conn, proj, "handover")
        assert heading == "## Last session handover" and line.startswith("- " + "H" * title_chars + " (")
        assert counted([heading, line]) <= 380
        if title_chars <= 44:
            assert line.endswith(": " + letters(1398) + " …"), "the body's first 1,400 characters, whole"
        else:
            assert len(line) == 1492 and line.endswith(" …"), title_chars
            assert counted([heading, line]) == 380, title_chars


def test_a_record_too_long_for_its_section_keeps_its_title_or_leaves_the_section_out(conn, proj, home):
    """The developer profile (200 tokens) with one long-titled preference: while its title and date fit, it is
    shown without a body (the body marker would not fit); one token more and the section is left out, heading
    and all. Each CJK character is one token, so the sweep passes every size."""
    pref = add(conn, proj, "developer", "p" + "偏" * 170, "Always explain the plan first.")
    sizes = set()
    for cjk in range(170, 195):
        pref = regrow(conn, proj, "developer", pref, "p" + "偏" * cjk, "Always explain the plan first.")
        lines = section(conn, proj, "developer")
        alone = render.record_block(pref, body_chars=0, show_type=False)  # title, date and id
        size = counted([HEADINGS["developer"], alone])
        sizes.add(size)
        if size > 200:
            assert lines == [], cjk
        elif size == 200:
            assert lines == [HEADINGS["developer"], alone], cjk
        else:
            assert lines[0] == HEADINGS["developer"] and (lines[1] == alone or lines[1].startswith(alone + ": ")), cjk
            assert counted(lines) <= 200
    assert {199, 200, 201} <= sizes


def test_an_over_long_top_record_is_shown_shortened_and_the_ones_after_it_are_left_out(conn, proj, home):
    """The profile (220 tokens): a pinned fact whose title and body are over the budget comes first, cut to the
    longest body that fits; a short fact after it does not fit any more."""
    top = add(conn, proj, "profile", "Top fact " + "数" * 120, "据" * 150, pinned=True)
    short = add(conn, proj, "profile", "Short fact", "pytest -q")
    dig = digest.build(conn, proj, sections=["profile"])
    heading, line = section_of(dig.text, "profile")
    assert line.startswith(f"- 📌 Top fact {'数' * 120} (") and line.endswith(" …")
    assert counted([heading, line]) == 220, "cut at the budget"
    assert "Short fact" not in dig.text
    assert dig.record_ids == [top["id"]] and short["id"] not in dig.record_ids


def test_a_section_without_records_is_left_out_heading_and_all(conn, proj, home):
    add(conn, proj, "decisions", "Money is integer cents")
    text = digest.build(conn, proj).text
    assert len(section_of(text, "decisions")) == 2
    for name in ("profile", "handover", "developer"):
        assert HEADINGS[name] not in text, name


# ---------------------------------------------------------------- each section's body length


@pytest.mark.parametrize("name", ["profile", "decisions", "conventions", "handover", "developer"])
def test_a_body_is_shown_whole_up_to_the_sections_length_and_clipped_one_past_it(conn, proj, home, name):
    """Profile and developer bodies 160 characters, decisions and conventions 220, the handover 1,400."""
    size = BODY_CHARS[name]
    rec = add(conn, proj, name, "Body rule", letters(size))
    (line,) = section(conn, proj, name)[1:]
    assert line.endswith("): " + letters(size)), "whole, at the limit"
    regrow(conn, proj, name, rec, "Body rule", letters(size + 1))
    (line,) = section(conn, proj, name)[1:]
    assert line.endswith("): " + letters(size - 2) + " …"), "one past it: clipped to the length, marker included"


def test_each_section_has_its_heading_and_only_decisions_carry_a_type(conn, proj, home):
    add(conn, proj, "profile", "Tests run with pytest -q")
    add(conn, proj, "decisions", "Money is integer cents")
    add(conn, proj, "conventions", "Errors are problem+json")
    add(conn, proj, "handover", "Refund endpoint half done")
    add(conn, proj, "developer", "Explain the plan before editing")
    text = digest.build(conn, proj, sections=list(HEADINGS), cap=10**6).text
    assert section_of(text, "profile")[1].startswith("- Tests run with pytest -q (")
    assert sorted(section_of(text, "decisions")[1:])[0].startswith("- [convention] Errors are problem+json (")
    assert sorted(section_of(text, "decisions")[1:])[1].startswith("- [decision] Money is integer cents (")
    assert section_of(text, "conventions")[1].startswith("- Errors are problem+json (")
    assert section_of(text, "handover")[1].startswith("- Refund endpoint half done (")
    assert section_of(text, "developer")[1].startswith("- Explain the plan before editing (")
    order = [body_lines(text).index(HEADINGS[name]) for name in HEADINGS]
    assert order == sorted(order), "the sections in the order asked"


def test_only_the_sections_asked_for_are_built(conn, proj, home, repo):
    add(conn, proj, "profile", "Tests run with pytest -q")
    add(conn, proj, "handover", "Refund endpoint half done")
    only = digest.build(conn, proj, sections=["handover"])
    assert HEADINGS["handover"] in only.text and HEADINGS["profile"] not in only.text
    assert only.sections == ["handover"]
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "config.toml").write_text("[digest]\nhandover = false\n")
    assert list(settings.load(str(repo)).sections) == ["profile", "decisions", "developer"]
    default = digest.build(conn, proj)  # the project's settings
    assert HEADINGS["profile"] in default.text and HEADINGS["handover"] not in default.text
    assert default.sections == ["profile", "decisions", "developer"]
    with pytest.raises(ValueError, match="unknown digest section"):
        digest.build(conn, proj, sections=["everything"])


# ---------------------------------------------------------------- what each section reads


def test_only_the_newest_handover_is_shown(conn, proj, home):
    older = add(conn, proj, "handover", "Older handover", recorded_at="2026-01-01T00:00:00Z")
    newer = add(conn, proj, "handover", "Newer handover", recorded_at="2026-02-01T00:00:00Z")
    lines = section(conn, proj, "handover")
    assert len(lines) == 2 and lines[1].startswith("- Newer handover (") and newer["id"] in lines[1]
    assert older["id"] not in "\n".join(lines)


def test_a_preference_stated_for_this_project_only_is_shown_among_the_decisions(conn, proj, home):
    """A project-scoped preference is a rule in force here: the decisions section shows it with its type; a
    cross-project one stays in the developer profile only, another project's own one is not shown."""
    here = records.add(conn, proj.id, type="preference", scope="project", title="The UI stays in light mode")
    everywhere = records.add(conn, proj.id, type="preference", scope="global", title="Answer in short sentences")
    elsewhere = records.add(conn, OTHER, type="preference", scope="project", title="Tabs, not spaces")
    text = digest.build(conn, proj, sections=list(HEADINGS), cap=10**6).text
    decisions = "\n".join(section_of(text, "decisions"))
    assert "- [preference] The UI stays in light mode (" in decisions and here["id"] in decisions
    assert everywhere["id"] not in decisions and everywhere["id"] in "\n".join(section_of(text, "developer"))
    assert elsewhere["id"] not in text
    assert here["id"] in digest.build(conn, proj).record_ids, "shown by the default digest too"


def test_the_decisions_section_reads_40_of_this_projects_own_preferences_like_any_other_type(conn, proj, home):
    """``in_force`` reads up to 40 of each type in ranking order; global preferences of this project are not
    read there, so they cannot take a project preference's place among the 40."""
    for i in range(41):
        records.add(conn, proj.id, type="preference", scope="global", title=f"Global habit {i}",
                    recorded_at=f"2026-04-{i % 28 + 1:02d}T00:00:00Z")
    own = [records.add(conn, proj.id, type="preference", scope="project", title=f"Project habit {i}",
                       recorded_at=f"2026-03-{i % 28 + 1:02d}T00:00:00Z") for i in range(41)]
    read = digest.in_force(conn, proj.id, limit=40)
    assert len(read) == 40 and {r["scope"] for r in read} == {"project"}
    assert {r["id"] for r in read} <= {r["id"] for r in own}


@pytest.mark.parametrize("name", ["decisions", "conventions"])
def test_the_ranking_orders_the_40_best_records_and_a_41st_is_not_read(conn, proj, home, name):
    """The consolidation ranking lists all 41 records, worst first: the section starts with the 40th best (the
    last one read), never the 41st."""
    made = [add(conn, proj, name, f"Rule number {i:02d}", recorded_at=f"2026-03-{i + 1:02d}T00:00:00Z",
                valid_from=f"2026-03-{i + 1:02d}T00:00:00Z") for i in range(41)]
    best_first = [r["id"] for r in records.active(conn, proj.id, [made[0]["type"]], limit=50)]
    assert best_first == [r["id"] for r in reversed(made)], "newest first in the store's order"
    digest.write_rank(proj.id, list(reversed(best_first)))
    lines = section(conn, proj, name)
    assert made[1]["id"] in lines[1], lines[1]
    assert all(made[0]["id"] not in line for line in lines)


def test_the_ranking_puts_pinned_records_first_then_records_newer_than_it(conn, proj, home):
    """``ranked``: pinned first; a record the ranking does not know (newer than it) before every ranked one."""
    digest.write_rank(proj.id, ["r0", "r1", "pin"])
    recs = [{"id": "r0", "pinned": 0}, {"id": "new", "pinned": 0}, {"id": "r1", "pinned": 0},
            {"id": "pin", "pinned": 1}, {"id": "new2", "pinned": 0}]
    assert [r["id"] for r in digest.ranked(proj.id, recs)] == ["pin", "new", "new2", "r0", "r1"]


@pytest.mark.parametrize("content", [None, "{not json", "[1, 2]", '{"order": []}', '{"ids": 7}'])
def test_without_a_readable_ranking_the_stores_order_is_kept(conn, proj, home, content):
    """No file, bad JSON, a list, no "ids", "ids" not a list: the records stay as read."""
    path = digest.rank_path(proj.id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if content is not None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(content)
    recs = [{"id": "b", "pinned": 0}, {"id": "a", "pinned": 1}]
    assert digest.ranked(proj.id, recs) == recs


# ---------------------------------------------------------------- the closing hint


def test_the_hint_counts_this_projects_records_not_shown(conn, proj, home):
    text = digest.build(conn, proj).text
    assert body_lines(text) == ["No records stored for this project yet. Durable decisions and conventions can be "
                                "saved with `agentctx record --type decision --title ...`."]
    add(conn, proj, "decisions", "Money is integer cents")
    assert body_lines(digest.build(conn, proj).text)[-1] == "Full text of any record: `agentctx get <id>`."
    # Two preferences of another project are shown too: they are not this project's, so they do not count.
    add(conn, proj, "developer", "Explain the plan before editing")
    add(conn, proj, "developer", "Prefer small commits")
    assert body_lines(digest.build(conn, proj).text)[-1] == "Full text of any record: `agentctx get <id>`."
    records.add(conn, proj.id, type="discovery", title="The relay retries idempotently")  # never in the digest
    assert body_lines(digest.build(conn, proj).text)[-1] == (
        "1 more records for this project are searchable: `agentctx search <terms>` (Bash) or the ctx_search tool; "
        "full text with `agentctx get <id>`.")
    for i in range(2):
        records.add(conn, proj.id, type="discovery", title=f"Discovery {i}")
    assert body_lines(digest.build(conn, proj).text)[-1].startswith("3 more records for this project")


def test_record_ids_are_the_records_shown(conn, proj, home):
    """A section cut by its budget reports the records it shows: the hint counts the rest."""
    made = [add(conn, proj, "decisions", f"Decision {i} " + "d" * 150, letters(200)) for i in range(8)]
    dig = digest.build(conn, proj, sections=["decisions"])
    shown = [r["id"] for r in made if r["id"] in dig.text]
    assert 0 < len(shown) < 8
    assert sorted(dig.record_ids) == sorted(shown)
    assert body_lines(dig.text)[-1].startswith(f"{8 - len(shown)} more records for this project")


# ---------------------------------------------------------------- the whole: 1,500 tokens, 9,000 characters


def test_the_whole_digest_is_cut_at_exactly_1500_tokens(conn, proj, home):
    """A lead (the anchor's place) grows across the limit: it is kept exactly while the fenced digest stays
    within 1,500 tokens, then dropped whole."""
    fence = tokens(render.fence("session-start", []))
    at_limit = 4 * (SESSION_START_TOKENS - fence)  # ASCII characters of a lead that fills the room
    seen = {}
    for size in range(at_limit - 12, at_limit + 12):
        lead = "x" * size
        dig = digest.build(conn, proj, lead=[lead])
        assert dig.tokens == tokens(dig.text) <= SESSION_START_TOKENS, size
        kept = body_lines(dig.text)
        assert kept in ([], [lead]), "the lead whole, or nothing (the hint does not fit after it)"
        seen[size] = dig.tokens if kept else None
    assert seen[at_limit - 12] and seen[at_limit + 11] is None
    assert max(t for t in seen.values() if t) >= SESSION_START_TOKENS - 1, "the cap is used up to the limit"


def test_a_smaller_cap_and_another_kind_name_the_fence(conn, proj, home):
    for i in range(30):
        add(conn, proj, "decisions", f"Decision {i} " + "d" * 100, letters(200))
    dig = digest.build(conn, proj, sections=["decisions"], cap=300, kind="subagent")
    assert dig.text.startswith('<agentctx-context kind="subagent"') and tokens(dig.text) <= 300
    assert "- [decision] Decision " in dig.text


def test_the_whole_digest_stays_under_9000_characters_whatever_the_token_cap(conn, proj, home):
    plain = digest.build(conn, proj)
    (hint,) = body_lines(plain.text)
    room = MAX_CHARS - len(plain.text) + len(hint)  # characters for a lead alone
    longest, seen = 0, set()
    for size in range(room - 6, room + 6):
        dig = digest.build(conn, proj, lead=["x" * size], cap=10**6)
        assert len(dig.text) < MAX_CHARS, size
        seen.add(len(body_lines(dig.text)))
        longest = max(longest, len(dig.text))
    assert longest == MAX_CHARS - 1 and 0 in seen


def test_the_lead_comes_first(conn, proj, home):
    add(conn, proj, "decisions", "Money is integer cents")
    lines = body_lines(digest.build(conn, proj, lead=["## Anchor", "- where we were"]).text)
    assert lines[:3] == ["## Anchor", "- where we were", HEADINGS["decisions"]]


# ---------------------------------------------------------------- the precomputed digest


def write(proj, data) -> None:
    path = digest.cache_path(proj.id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(data if isinstance(data, str) else json.dumps(data))


def test_a_cached_digest_is_read_only_at_its_generation_sections_and_size(conn, proj, home):
    gen = db.generation(conn)
    digest.write_cache(proj.id, digest.Digest("cached text", 3, ["r1"], gen))
    got = digest.read_cache(proj.id, gen)
    assert got is not None and (got.text, got.record_ids, got.sections) == ("cached text", ["r1"],
                                                                             ["profile", "decisions", "handover",
                                                                              "developer"])
    assert digest.read_cache(proj.id, gen, ["profile", "decisions", "handover", "developer"]) is not None
    assert digest.read_cache(proj.id, gen + 1) is None and digest.read_cache(proj.id, gen - 1) is None
    assert digest.read_cache(proj.id, gen, ["decisions"]) is None, "other sections"
    digest.write_cache(proj.id, digest.Digest("brief", 1, [], gen, ["decisions"]))
    assert digest.read_cache(proj.id, gen, ["decisions"]).text == "brief"
    assert digest.read_cache(proj.id, gen) is None
    for size, used in ((1500, True), (1501, False)):
        digest.write_cache(proj.id, digest.Digest("y" * (4 * size), size, [], gen))
        assert (digest.read_cache(proj.id, gen) is not None) is used, size


def test_a_cache_file_without_sections_is_a_digest_of_the_default_sections(conn, proj, home):
    """A cache written before sections were recorded."""
    gen = db.generation(conn)
    write(proj, {"text": "old cache", "tokens": 2, "record_ids": [], "generation": gen})
    assert digest.read_cache(proj.id, gen).text == "old cache"
    assert digest.read_cache(proj.id, gen, ["decisions"]) is None


@pytest.mark.parametrize("data", [None, "{half a dig", "[1, 2]", {"text": "x", "tokens": 1, "colour": "red"}])
def test_a_missing_or_damaged_cache_is_no_cache(conn, proj, home, data):
    if data is not None:
        write(proj, data)
    assert digest.read_cache(proj.id, db.generation(conn)) is None


def test_a_digest_without_a_generation_is_never_fresh(conn, proj, home):
    digest.write_cache(proj.id, digest.Digest("unknown", 1))
    for gen in range(0, 5):
        assert digest.read_cache(proj.id, gen) is None
    assert digest.Digest("unknown", 1).as_dict() == {"text": "unknown", "tokens": 1, "record_ids": [],
                                                     "generation": -1, "sections": list(digest.SECTIONS)}


def test_the_current_digest_is_built_cached_then_reused_until_the_store_changes(conn, proj, home, repo):
    add(conn, proj, "decisions", "Money is integer cents")
    first = digest.current(conn, proj)
    gen = db.generation(conn)
    assert first.generation == gen and "Money is integer cents" in first.text
    cached = digest.read_cache(proj.id, gen, list(digest.SECTIONS))
    assert cached is not None and cached.text == first.text, "written for the next start"
    digest.write_cache(proj.id, digest.Digest("precomputed", 1, [], gen))
    assert digest.current(conn, proj).text == "precomputed"
    add(conn, proj, "decisions", "Services talk gRPC")
    live = digest.current(conn, proj)
    assert "Services talk gRPC" in live.text and live.generation == db.generation(conn) != gen
    # Other sections switched on for the project: a cache of the old sections is not used.
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "config.toml").write_text("[digest]\nprofile = false\n")
    assert digest.current(conn, proj).sections == ["decisions", "handover", "developer"]


def test_an_unwritable_cache_leaves_the_live_digest(conn, proj, home):
    add(conn, proj, "decisions", "Money is integer cents")
    home.mkdir(parents=True, exist_ok=True)
    (home / "digests").write_text("a file where the cache folder should be")
    assert "Money is integer cents" in digest.current(conn, proj).text


def test_the_drift_line_follows_the_decisions_section_only(conn, proj, home):
    from agentctx.sharing import drift

    for title in ("Services talk over gRPC", "Money is integer cents"):
        add(conn, proj, "decisions", title)
    add(conn, proj, "profile", "Tests run with pytest -q")
    add(conn, proj, "handover", "Refund endpoint half done")
    assert len(drift.scan(conn, proj)) == 2
    lines = body_lines(digest.build(conn, proj).text)
    (at,) = [i for i, ln in enumerate(lines) if "not reflected in CLAUDE.md" in ln]
    assert lines[at - 1].startswith("- [decision] ") and lines[at + 1] == HEADINGS["handover"]
