"""Per-type properties have one home (``kinds.KINDS``): every type has every property, and every rule
that reads a per-type table covers every type (adding a type cannot silently default or crash)."""

from __future__ import annotations

import pytest

from agentctx import kinds, scoring
from agentctx.consolidation import dedup
from agentctx.remote import rules as remote_rules
from agentctx.sharing import teamsync, transfer
from agentctx.store import records


def test_every_type_has_every_property_and_nothing_else():
    for name, props in kinds.KINDS.items():
        assert set(props) == set(kinds.PROPERTIES), name
        assert isinstance(props["description"], str) and props["description"]
        assert 0 < props["weight"] and 0 < props["daily_decay"] <= 1.0
        assert props["heading"] and props["colour"].startswith("#") and len(props["colour"]) == 7
        assert props["digest"] in (None, "decisions", "handover", "profile", "developer")
        assert all(isinstance(props[p], bool) for p in ("shared", "merged", "linked"))


@pytest.mark.parametrize("table", ["TYPE_DESCRIPTIONS", "TYPE_WEIGHT", "DAILY_DECAY", "HEADINGS", "COLOURS"])
def test_every_per_type_table_covers_every_type(table):
    assert set(getattr(kinds, table)) == set(kinds.TYPES)


def test_the_type_lists_are_read_from_kinds_everywhere():
    assert set(kinds.SHARED_TYPES) | set(kinds.LOCAL_TYPES) == set(kinds.TYPES)
    assert teamsync.ORDER == kinds.SHARED_TYPES and teamsync.EXCLUDED_TYPES == kinds.LOCAL_TYPES
    assert remote_rules.LOCAL_TYPES == kinds.LOCAL_TYPES
    assert dedup.TYPES == kinds.MERGED_TYPES
    assert kinds.in_digest_section("decisions") == ("decision", "convention")


def test_scoring_weighs_and_decays_every_type_by_its_row():
    for name in kinds.TYPES:  # fresh, unused, explicit: the standing factor is 1, what is left is the weight
        assert scoring.final_score(1.0, name, 0, "explicit", 0, 0) == pytest.approx(kinds.KINDS[name]["weight"])
        assert scoring.stored_score(name, 10.0, "explicit", 0, 0) == pytest.approx(
            kinds.KINDS[name]["daily_decay"] ** 10)


def test_export_has_a_heading_for_every_type(conn, proj):
    for name in kinds.TYPES:
        records.add(conn, proj.id, type=name, title=f"A {name} record", body="body")
    text = "".join(transfer.export_markdown(conn, proj.id))
    for name in kinds.TYPES:
        assert f"### {kinds.HEADINGS[name]} (" in text, name
