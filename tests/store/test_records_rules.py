"""Project scoping and supersession in lib/agentctx/store/records.py, rule by rule (the mutation run's target):
which project a read or write by id reaches, what "current" means, how a keyed value is reinforced, superseded or
kept, what retiring a record writes, and the ranking order of the digest's read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentctx.store import db, query, records
from agentctx.store.records import RecordError

P1, P2 = "project00000001", "project00000002"
T0, T1, T2 = "2026-01-01T00:00:00.000000Z", "2026-02-01T00:00:00.000000Z", "2026-03-01T00:00:00.000000Z"


def ids_where(conn: sqlite3.Connection, where: str, params: tuple, alias: str = "") -> set[str]:
    table = f"records {alias}" if alias else "records"
    col = f"{alias}.id" if alias else "id"
    return {r[0] for r in conn.execute(f"SELECT {col} FROM {table} WHERE {where}", params)}


@pytest.fixture
def three(conn: sqlite3.Connection) -> dict[str, dict]:
    """P1's own record, P2's own record and P2's global preference."""
    return {
        "mine": records.add(conn, P1, type="decision", title="Money is integer cents"),
        "theirs": records.add(conn, P2, type="decision", title="Money is a decimal"),
        "global": records.add(conn, P2, type="preference", title="Answers in British English", scope="global"),
    }


def edges(conn: sqlite3.Connection) -> list[tuple]:
    return [tuple(r) for r in conn.execute("SELECT from_id, to_id, rel_type FROM edges ORDER BY from_id, to_id")]


# ---------------------------------------------------------------- scope_sql and current_sql


def test_a_scope_reaches_the_projects_records_and_every_global_one(conn, three):
    mine, theirs, glob = (three[k]["id"] for k in ("mine", "theirs", "global"))
    assert ids_where(conn, *query.scope_sql(P1)) == {mine, glob}
    assert ids_where(conn, *query.scope_sql(P1, include_global=False)) == {mine}
    assert ids_where(conn, *query.scope_sql(P1, all_projects=True)) == {mine, theirs, glob}
    assert query.scope_sql(None, True) == ("1", ())


def test_a_scope_with_an_alias_names_the_aliased_table(conn, three):
    where, params = query.scope_sql(P1, alias="r")
    assert where == "(r.project_id = ? OR r.scope = 'global')" and params == (P1,)
    assert query.scope_sql(P1, alias="r", include_global=False) == ("r.project_id = ?", (P1,))
    assert ids_where(conn, where, params, alias="r") == {three["mine"]["id"], three["global"]["id"]}


def test_a_read_by_id_without_a_project_is_refused():
    with pytest.raises(TypeError, match="needs project_id"):
        query.scope_sql(None)
    with pytest.raises(TypeError):
        query.scope_sql(b"project00000001")  # type: ignore[arg-type]


def test_current_means_neither_superseded_nor_archived(conn):
    live = records.add(conn, P1, type="decision", title="Live")
    old = records.add(conn, P1, type="decision", title="Old")
    records.supersede(conn, P1, old["id"], body="Newer.")
    rolled = records.add(conn, P1, type="decision", title="Rolled up")
    conn.execute("UPDATE records SET archived_at = ? WHERE id = ?", (T0, rolled["id"]))
    current = ids_where(conn, query.current_sql(), ())
    assert live["id"] in current and old["id"] not in current and rolled["id"] not in current
    assert query.current_sql("r") == "r.superseded_at IS NULL AND r.archived_at IS NULL"
    assert ids_where(conn, query.current_sql("r"), (), alias="r") == current


# ---------------------------------------------------------------- reads by id stay in the project


def test_another_projects_record_is_no_record_by_default(conn, three):
    theirs = three["theirs"]["id"]
    assert records.get(conn, theirs, P1) is None
    assert records.get(conn, theirs, project_id=P1) is None
    assert records.get(conn, theirs, P1, all_projects=True)["id"] == theirs
    assert records.get(conn, three["global"]["id"], P1)["id"] == three["global"]["id"]  # global: everyone's
    with pytest.raises(RecordError, match=f"no record {theirs}"):
        records.resolve(conn, theirs, P1)
    with pytest.raises(RecordError, match=f"no record {theirs[:12]}"):
        records.resolve(conn, theirs[:12].lower(), P1)
    assert records.resolve(conn, theirs, all_projects=True)["id"] == theirs


def test_a_25_character_prefix_resolves_like_any_prefix(conn):
    rec = records.add(conn, P1, type="decision", title="Money is integer cents")
    assert records.resolve(conn, rec["id"][:25], P1)["id"] == rec["id"]
    assert records.resolve(conn, " " + rec["id"].lower() + " ", P1)["id"] == rec["id"]


def test_a_prefix_shared_by_two_records_is_refused_and_one_record_is_returned_whole(conn):
    a = records.add(conn, P1, type="decision", title="First", record_id="01KB2Z0000000000000000000A")
    b = records.add(conn, P1, type="decision", title="Second", record_id="01KB2Z0000000000000000000B")
    with pytest.raises(RecordError, match="01KB2Z0000 matches several records"):
        records.resolve(conn, "01KB2Z0000", P1)
    assert records.resolve(conn, "01KB2Z0000000000000000000A", P1) == records.get(conn, a["id"], P1)
    assert records.resolve(conn, "01KB2Z0000000000000000000B", P1)["title"] == "Second"
    assert b["id"] == "01KB2Z0000000000000000000B"


def test_a_bad_reference_is_named_in_the_error(conn):
    with pytest.raises(RecordError, match=r"^\(empty\) is not a record id$"):
        records.resolve(conn, "", P1)
    with pytest.raises(RecordError, match=r"^\(empty\) is not a record id$"):
        records.resolve(conn, None, P1)  # type: ignore[arg-type]
    with pytest.raises(RecordError, match=r"^NOT-AN-ID is not a record id$"):
        records.resolve(conn, "not-an-id", P1)


# ---------------------------------------------------------------- active: the digest's read


def test_active_reads_fifty_records_by_default(conn):
    with db.transaction(conn):
        for i in range(51):
            records.insert(conn, P1, type="decision", title=f"Rule {i}", body="", stamp=T0)
    assert len(records.active(conn, P1, ["decision"])) == 50
    assert len(records.active(conn, P1)) == 50
    assert len(records.active(conn, P1, ["decision"], limit=51)) == 51


def test_active_reads_only_the_types_asked_for(conn):
    d = records.add(conn, P1, type="decision", title="Money is integer cents")
    records.add(conn, P1, type="convention", title="Branches carry the ticket id")
    assert [r["id"] for r in records.active(conn, P1, ["decision"])] == [d["id"]]
    assert len(records.active(conn, P1, None)) == 2


def test_active_leaves_out_other_projects_and_their_global_records_unless_asked(conn, three):
    mine, theirs, glob = (three[k]["id"] for k in ("mine", "theirs", "global"))
    assert [r["id"] for r in records.active(conn, P1, ["decision", "preference"])] == [mine]
    assert [r["id"] for r in records.active(conn, P1)] == [mine]
    assert {r["id"] for r in records.active(conn, P1, ["decision", "preference"], include_global=True)} == {mine, glob}
    assert {r["id"] for r in records.active(conn, P1, include_global=True)} == {mine, glob}
    assert theirs not in {r["id"] for r in records.current(conn, P1)}


def test_active_reads_the_project_scoped_types_only_where_their_scope_is_project(conn):
    """``project_scoped``: those types are read only with scope ``project``; the other types at any scope."""
    own = records.add(conn, P1, type="preference", scope="project", title="The UI stays in light mode")
    records.add(conn, P1, type="preference", scope="global", title="Answer in short sentences")
    rule = records.add(conn, P1, type="decision", scope="global", title="Money is integer cents")
    got = records.active(conn, P1, ["decision", "preference"], project_scoped=["preference"])
    assert {r["id"] for r in got} == {own["id"], rule["id"]}
    assert len(records.active(conn, P1, ["decision", "preference"])) == 3


def test_active_orders_pinned_first_then_by_score_then_newest(conn):
    """Across two types (the merged read) and within one (the named ``rank`` order)."""
    made = {}
    for name, rtype, pinned, score, at in (
        ("pinned old weak", "convention", 1, 0.1, T0),
        ("strong old", "decision", 0, 0.9, T0),
        ("strong new", "convention", 0, 0.9, T1),
        ("weak newest", "decision", 0, 0.2, T2),
    ):
        made[name] = records.add(conn, P1, type=rtype, title=name, pinned=bool(pinned), recorded_at=at)
        conn.execute("UPDATE records SET score = ? WHERE id = ?", (score, made[name]["id"]))
    want = ["pinned old weak", "strong new", "strong old", "weak newest"]
    assert [r["title"] for r in records.active(conn, P1, ["decision", "convention"])] == want
    assert [r["title"] for r in records.active(conn, P1)] == want
    assert [r["title"] for r in records.active(conn, P1, ["decision", "convention"], limit=2)] == want[:2]
    assert [r["title"] for r in records.current(conn, P1, order="rank")] == want


# ---------------------------------------------------------------- history


def test_history_returns_two_hundred_rows_by_default(conn):
    with db.transaction(conn):
        for i in range(201):
            records.insert(conn, P1, type="decision", title=f"Rule {i}", body="", stamp=T0)
    assert len(records.history(conn, P1)) == 200
    assert len(records.history(conn, P1, limit=201)) == 201


def test_history_at_a_date_and_as_known_then(conn, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTCTX_NOW", T1)
    old = records.add(conn, P1, type="decision", title="REST", valid_from=T0)
    records.add(conn, P1, type="convention", title="Black")
    monkeypatch.setenv("AGENTCTX_NOW", T2)
    new = records.supersede(conn, P1, old["id"], body="gRPC.", valid_from=T2)

    def titles(**kw) -> list[str]:
        return sorted(r["title"] for r in records.history(conn, P1, **kw))

    assert titles() == ["Black", "gRPC"]
    assert titles(types=["decision"]) == ["gRPC"]
    assert titles(at="2026-02-15T00:00:00.000000Z") == ["Black", "REST"]
    assert titles(at="2026-01-15T00:00:00.000000Z") == ["REST"]  # Black was valid from when it was recorded
    assert titles(at=T2, known_at="2026-02-15T00:00:00.000000Z") == ["Black", "REST"]
    assert new["valid_from"] == T2


# ---------------------------------------------------------------- retire


def test_retire_writes_the_successor_and_an_edge_and_reports_it(conn):
    old = records.add(conn, P1, type="decision", title="REST", valid_from=T0, recorded_at=T0)
    new = records.add(conn, P1, type="decision", title="gRPC", recorded_at=T1)
    with db.transaction(conn):
        assert records.retire(conn, old["id"], stamp=T2, project_id=P1, by=new["id"], valid_to=T1) is True
    row = records.get(conn, old["id"], P1)
    assert (row["superseded_at"], row["superseded_by"], row["valid_to"], row["updated_at"]) == (T2, new["id"], T1,
                                                                                             None)
    assert edges(conn) == [(new["id"], old["id"], "supersedes")]
    # already retired: left alone, history is never rewritten
    with db.transaction(conn):
        assert records.retire(conn, old["id"], stamp="2026-04-01T00:00:00.000000Z", project_id=P1, by=None,
                              valid_to="2026-04-01T00:00:00.000000Z") is False
    again = records.get(conn, old["id"], P1)
    assert (again["superseded_at"], again["superseded_by"], again["valid_to"]) == (T2, new["id"], T1)


def test_retire_without_a_successor_adds_no_edge_and_keeps_valid_to(conn):
    rec = records.add(conn, P1, type="preference", title="Tabs", valid_from=T0)
    with db.transaction(conn):
        assert records.retire(conn, rec["id"], stamp=T1, project_id=P1, mark_updated=True) is True
    row = records.get(conn, rec["id"], P1)
    assert (row["superseded_at"], row["superseded_by"], row["valid_to"], row["updated_at"]) == (T1, None, None, T1)
    assert edges(conn) == []


def test_a_fact_never_stops_being_true_before_it_started(conn):
    rec = records.add(conn, P1, type="decision", title="REST", valid_from=T1)
    with db.transaction(conn):
        records.retire(conn, rec["id"], stamp=T2, project_id=P1, valid_to=T0)
    assert records.get(conn, rec["id"], P1)["valid_to"] == T1


def test_retire_never_reaches_another_projects_record(conn, three):
    theirs = three["theirs"]["id"]
    with db.transaction(conn):
        assert records.retire(conn, theirs, stamp=T1, project_id=P1) is False
    assert records.get(conn, theirs, P2)["superseded_at"] is None
    with db.transaction(conn):
        assert records.retire(conn, theirs, stamp=T1, all_projects=True) is True


# ---------------------------------------------------------------- add and supersede


def test_a_new_record_is_not_pinned_unless_asked(conn):
    assert records.add(conn, P1, type="decision", title="Plain")["pinned"] == 0
    assert records.add(conn, P1, type="decision", title="Keyed", key="decision.keyed")["pinned"] == 0
    assert records.upsert_by_key(conn, P1, "decision.up", type="decision", title="Upserted")[1]["pinned"] == 0
    assert records.add(conn, P1, type="decision", title="Pinned", pinned=True)["pinned"] == 1


def test_add_keeps_the_times_and_the_id_it_is_given(conn):
    rec = records.add(conn, P1, type="decision", title="Dated", valid_from=T0, recorded_at=T1,
                      record_id="01KB2Z0000000000000000000C")
    assert (rec["id"], rec["valid_from"], rec["recorded_at"]) == ("01KB2Z0000000000000000000C", T0, T1)
    keyed = records.add(conn, P1, type="profile", title="Lint", body="ruff", key="profile.lint", valid_from=T0,
                        recorded_at=T1, record_id="01KB2Z0000000000000000000D")
    assert (keyed["id"], keyed["valid_from"], keyed["recorded_at"]) == ("01KB2Z0000000000000000000D", T0, T1)


def test_a_restatement_reinforces_and_says_so(conn):
    first = records.add(conn, P1, type="decision", title="Money is integer cents")
    again = records.add(conn, P1, type="decision", title="money is integer cents.")
    assert again["id"] == first["id"] and again["reinforced"] is True and again["reinforce_count"] == 1
    assert "reinforced" not in first


def test_a_record_given_its_own_id_is_stored_even_when_it_restates_one(conn):
    """An id given (an import, a replay) means "store this record": never folded into a restatement."""
    first = records.add(conn, P1, type="decision", title="Money is integer cents")
    copy = records.add(conn, P1, type="decision", title="Money is integer cents", record_id="01KB2Z0000000000000000000E")
    assert copy["id"] == "01KB2Z0000000000000000000E" and "reinforced" not in copy
    assert records.get(conn, first["id"], P1)["reinforce_count"] == 0


def test_superseding_with_the_same_words_still_retires_the_old_record(conn):
    old = records.add(conn, P1, type="decision", title="Money is integer cents", valid_from=T0)
    new = records.add(conn, P1, type="decision", title="Money is integer cents", supersedes=old["id"], valid_from=T1)
    assert new["id"] != old["id"] and "reinforced" not in new
    retired = records.get(conn, old["id"], P1)
    assert (retired["superseded_by"], retired["valid_to"]) == (new["id"], T1)


def test_the_old_record_stops_being_valid_when_its_successor_starts(conn, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTCTX_NOW", T2)
    old = records.add(conn, P1, type="decision", title="REST", valid_from=T0)
    new = records.add(conn, P1, type="decision", title="gRPC", supersedes=old["id"])
    assert new["valid_from"] == new["recorded_at"] == T2
    assert records.get(conn, old["id"], P1)["valid_to"] == T2
    dated = records.add(conn, P1, type="decision", title="GraphQL", supersedes=new["id"], valid_from=T1)
    assert dated["valid_from"] == T1 and records.get(conn, new["id"], P1)["valid_to"] == T2  # never before start


def test_supersede_keeps_the_given_title_and_appends_the_rationale(conn):
    old = records.add(conn, P1, type="decision", title="REST")
    new = records.supersede(conn, P1, old["id"], title="Services talk gRPC", body="Protobuf in /proto. Fast.",
                            rationale=" latency ")
    assert new["title"] == "Services talk gRPC"
    assert new["body"] == "Protobuf in /proto. Fast.\n\nWhy it changed: latency"


def test_supersede_with_a_title_only(conn):
    old = records.add(conn, P1, type="decision", title="REST")
    new = records.supersede(conn, P1, old["id"], title="gRPC", body="", rationale="latency")
    assert (new["title"], new["body"]) == ("gRPC", "Why it changed: latency")
    newer = records.supersede(conn, P1, new["id"], title="GraphQL", body="  ", rationale="  ")
    assert (newer["title"], newer["body"]) == ("GraphQL", "")


def test_supersede_with_a_body_only_titles_it_by_its_first_sentence(conn):
    old = records.add(conn, P1, type="decision", title="REST")
    new = records.supersede(conn, P1, old["id"], body="Services talk gRPC now. Protobuf in /proto.")
    assert new["title"] == "Services talk gRPC now"
    assert new["body"] == "Services talk gRPC now. Protobuf in /proto."
    blank = records.supersede(conn, P1, new["id"], title="  ", body="GraphQL everywhere.")
    assert blank["title"] == "GraphQL everywhere"


def test_supersede_needs_a_title_or_a_body(conn):
    old = records.add(conn, P1, type="decision", title="REST")
    with pytest.raises(RecordError, match="say what is true now"):
        records.supersede(conn, P1, old["id"], title=" ", body=" ", rationale="latency")
    with pytest.raises(RecordError, match="say what is true now"):
        records.supersede(conn, P1, old["id"], body="")
    assert records.get(conn, old["id"], P1)["superseded_at"] is None


# ---------------------------------------------------------------- upsert_by_key


def up(conn, body: str, **kw) -> tuple[str, dict]:
    kw.setdefault("type", "profile")
    kw.setdefault("title", "Test command")
    return records.upsert_by_key(conn, P1, kw.pop("key", "profile.test_command"), body=body, **kw)


def test_the_same_value_reinforces_and_a_new_one_supersedes(conn):
    outcome, first = up(conn, "pytest -q", valid_from=T0, recorded_at=T0)
    assert outcome == "added" and (first["valid_from"], first["recorded_at"]) == (T0, T0)
    outcome, same = up(conn, "pytest -q")
    assert (outcome, same["id"], same["reinforce_count"]) == ("reinforced", first["id"], 1)
    outcome, new = up(conn, "uv run pytest -q", valid_from=T1, recorded_at=T2)
    assert outcome == "superseded" and (new["valid_from"], new["recorded_at"]) == (T1, T2)
    old = records.get(conn, first["id"], P1)
    assert (old["superseded_by"], old["superseded_at"], old["valid_to"]) == (new["id"], T2, T1)
    assert edges(conn) == [(new["id"], first["id"], "supersedes")]


def test_without_reinforcement_the_same_value_changes_nothing_and_a_new_one_supersedes(conn):
    outcome, first = up(conn, "pytest -q", reinforce_same=False)
    assert outcome == "added"
    outcome, same = up(conn, "pytest -q", reinforce_same=False)
    assert (outcome, same["id"], same["reinforce_count"]) == ("unchanged", first["id"], 0)
    outcome, new = up(conn, "uv run pytest -q", reinforce_same=False)
    assert outcome == "superseded" and new["body"] == "uv run pytest -q"
    assert records.get(conn, first["id"], P1)["superseded_by"] == new["id"]


def test_a_wider_sameness_reinforces_a_reworded_value_and_keeps_the_first_wording(conn):
    def same_words(holder: dict, title: str, body: str) -> bool:
        return holder["body"].casefold() == body.casefold()

    outcome, first = up(conn, "TypeError in parse()", same=same_words)
    assert outcome == "added"
    outcome, again = up(conn, "typeerror IN PARSE()", same=same_words)
    assert (outcome, again["id"], again["body"], again["reinforce_count"]) == ("reinforced", first["id"],
                                                                              "TypeError in parse()", 1)
    outcome, other = up(conn, "KeyError in load()", same=same_words)
    assert outcome == "superseded" and other["body"] == "KeyError in load()"
    outcome, quiet = up(conn, "KEYERROR in LOAD()", same=same_words, reinforce_same=False)
    assert (outcome, quiet["id"], quiet["reinforce_count"]) == ("unchanged", other["id"], 0)


def test_a_stated_value_outlives_an_inferred_one(conn):
    outcome, stated = up(conn, "make test", confidence="explicit")
    outcome, kept = up(conn, "pytest", confidence="inferred", keep_stated=True)
    assert (outcome, kept["id"], kept["body"]) == ("kept", stated["id"], "make test")
    # the inferred restatement of the stated value reinforces it
    outcome, same = up(conn, "make test", confidence="inferred", keep_stated=True)
    assert (outcome, same["id"], same["reinforce_count"]) == ("reinforced", stated["id"], 1)
    # a stated value replaces a stated one
    outcome, new = up(conn, "make check", confidence="explicit", keep_stated=True)
    assert outcome == "superseded" and new["body"] == "make check"
    # without keep_stated (the default) an inferred value replaces it
    outcome, inferred = up(conn, "tox", confidence="inferred")
    assert outcome == "superseded" and inferred["body"] == "tox"


def test_an_inferred_value_replaces_an_inferred_one_even_when_stated_ones_are_kept(conn):
    up(conn, "pytest", confidence="inferred", keep_stated=True)
    outcome, new = up(conn, "pytest -x", confidence="inferred", keep_stated=True)
    assert outcome == "superseded" and new["body"] == "pytest -x"
    up(conn, "make test", confidence="reinforced", keep_stated=True)
    outcome, kept = up(conn, "tox", confidence="inferred", keep_stated=True)
    assert (outcome, kept["body"]) == ("kept", "make test")


def test_an_explicit_supersedes_retires_it_and_the_key_holder(conn):
    holder = up(conn, "pytest -q")[1]
    loose = records.add(conn, P1, type="profile", title="We test with nose")
    outcome, new = up(conn, "pytest -q", supersedes=loose["id"])
    assert outcome == "superseded" and new["id"] not in (holder["id"], loose["id"])
    assert records.get(conn, holder["id"], P1)["superseded_by"] == new["id"]
    assert records.get(conn, loose["id"], P1)["superseded_by"] == new["id"]
    assert records.get(conn, new["id"], P1)["reinforce_count"] == 0


def test_an_explicit_supersedes_overrides_keeping_and_unchanged(conn):
    stated = up(conn, "make test")[1]
    loose = records.add(conn, P1, type="profile", title="We test with nose")
    outcome, new = up(conn, "tox", confidence="inferred", keep_stated=True, supersedes=loose["id"])
    assert outcome == "superseded" and records.get(conn, stated["id"], P1)["superseded_by"] == new["id"]
    other = records.add(conn, P1, type="profile", title="We test with trial")
    outcome, newer = up(conn, "tox", reinforce_same=False, supersedes=other["id"])
    assert outcome == "superseded" and records.get(conn, new["id"], P1)["superseded_by"] == newer["id"]
    assert records.get(conn, other["id"], P1)["superseded_by"] == newer["id"]


def test_superseding_the_key_holder_itself_supersedes_it_once(conn):
    holder = up(conn, "pytest -q")[1]
    outcome, new = up(conn, "pytest -q", supersedes=holder["id"])
    assert outcome == "superseded" and records.get(conn, holder["id"], P1)["superseded_by"] == new["id"]
    assert edges(conn) == [(new["id"], holder["id"], "supersedes")]


def test_a_keyed_value_of_another_project_is_never_its_holder(conn):
    theirs = records.upsert_by_key(conn, P2, "profile.test_command", type="profile", title="Test command",
                                   body="pytest -q")[1]
    outcome, mine = up(conn, "pytest -q", reinforce_same=False, keep_stated=True, same=lambda *_: True)
    assert outcome == "added" and mine["id"] != theirs["id"]
    assert records.get(conn, theirs["id"], P2)["superseded_at"] is None


def test_outcomes_that_write_nothing_never_wait_for_the_write_lock(home: Path, conn):
    """A hook must not wait on another writer to learn that nothing changes: "unchanged" and "kept" are
    answered while another connection holds the write lock; a real change waits (and here gives up)."""
    up(conn, "make test", confidence="explicit")
    quick = db.connect(busy_ms=100)
    writer = db.connect()
    try:
        writer.execute("BEGIN IMMEDIATE")
        assert up(quick, "make test", reinforce_same=False)[0] == "unchanged"
        assert up(quick, "make test", reinforce_same=False, keep_stated=True)[0] == "unchanged"
        assert up(quick, "pytest", confidence="inferred", keep_stated=True)[0] == "kept"
        assert up(quick, "MAKE TEST", same=lambda h, t, b: h["body"] == b.lower(), reinforce_same=False)[0] == \
            "unchanged"
        with pytest.raises(sqlite3.OperationalError, match="locked|busy"):
            up(quick, "pytest", confidence="explicit", keep_stated=True)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        quick.close()
