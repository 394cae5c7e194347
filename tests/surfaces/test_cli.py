"""The agentctx CLI: every command through click's CliRunner, and the real bin/agentctx as a process."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentctx import budgets, clock, paths
from agentctx.store import db, records, sessions
from agentctx.surfaces.cli import cli
from tests.conftest import make_repo

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "bin" / "agentctx"

Run = Callable[..., Result]


@pytest.fixture
def run(home: Path, repo: Path) -> Run:
    """Invoke the CLI in-process with ``--project <repo>`` (unless ``project=None``)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, project: Path | None = repo) -> Result:
        pre = ["--project", str(project)] if project is not None else []
        return runner.invoke(cli, [*pre, *args], input=input, catch_exceptions=False)

    return invoke


def ok(result: Result) -> Result:
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return result


def as_json(result: Result):
    return json.loads(ok(result).stdout)


def add(run: Run, *args: str) -> dict:
    return as_json(run("record", *args, "--json"))


def store_state() -> list:
    """Everything a user would call stored data (records, edges, sessions, dedup, generation)."""
    conn = sqlite3.connect(paths.db_path())
    try:
        out = []
        for table in ("records", "edges", "sessions", "injections", "meta", "_sqlite_migrations"):
            out.append((table, sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {table}"))))
        return out
    finally:
        conn.close()


# ---------------------------------------------------------------- record


def test_record_with_all_options(run: Run, repo: Path) -> None:
    old = add(run, "--type", "decision", "--title", "Services talk REST", "--valid-from", "2026-01-01")
    rec = add(run, "--type", "decision", "--title", "Services talk gRPC", "--body", "protobuf in /proto",
              "--scope", "project", "--key", "arch.transport", "--confidence", "inferred", "--pin",
              "--valid-from", "2026-03-01", "--supersedes", old["id"][:12])
    assert rec["type"] == "decision" and rec["title"] == "Services talk gRPC"
    assert rec["body"] == "protobuf in /proto" and rec["key"] == "arch.transport"
    assert rec["confidence"] == "inferred" and rec["pinned"] == 1 and rec["scope"] == "project"
    assert rec["valid_from"] == "2026-03-01T00:00:00.000000Z" and rec["source"] == "cli"
    got = as_json(run("get", old["id"], "--json"))[0]
    assert got["superseded_by"] == rec["id"] and got["valid_to"] == rec["valid_from"]

    glob = add(run, "--type", "preference", "--title", "Prefers tabs", "--scope", "global")
    assert glob["scope"] == "global"


def test_record_plain_output(run: Run) -> None:
    out = ok(run("record", "--type", "bugfix", "--title", "Fixed the flaky test")).stdout
    assert out.startswith("recorded ") and out.rstrip().endswith("bugfix: Fixed the flaky test")
    assert len(out.split()[1]) == 26


def test_record_body_from_stdin_and_file(run: Run, tmp_path: Path) -> None:
    rec = as_json(run("record", "--type", "handover", "--title", "Handover", "--body-file", "-", "--json",
                      input="Line one\nLine two with ünïcödé\n"))
    assert rec["body"] == "Line one\nLine two with ünïcödé"
    f = tmp_path / "body.md"
    f.write_text("From a file.\n", encoding="utf-8")
    rec = add(run, "--type", "discovery", "--title", "Disc", "--body-file", str(f))
    assert rec["body"] == "From a file."


def test_record_redacts_secrets(run: Run) -> None:
    rec = add(run, "--type", "discovery", "--title", "Key", "--body",
              "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwx")
    assert "sk-ant" not in rec["body"] and "[REDACTED" in rec["body"]


# ---------------------------------------------------------------- get


def test_get_several_ids_prefix_and_json(run: Run) -> None:
    a = add(run, "--type", "decision", "--title", "v1")
    b = as_json(run("supersede", a["id"], "--body", "second", "--title", "v2", "--json"))
    c = as_json(run("supersede", b["id"], "--body", "third", "--title", "v3", "--json"))
    got = as_json(run("get", c["id"][:20], a["id"].lower(), b["id"], "--json"))
    assert [g["id"] for g in got] == [c["id"], a["id"], b["id"]]
    assert got[0]["supersedes"] == [b["id"], a["id"]] and got[0]["superseded_chain"] == []
    assert got[1]["supersedes"] == [] and got[1]["superseded_chain"] == [b["id"], c["id"]]
    assert got[2]["supersedes"] == [a["id"]] and got[2]["superseded_chain"] == [c["id"]]

    text = ok(run("get", b["id"])).stdout
    assert text.startswith("v2\n")
    assert f"SUPERSEDED at {as_json(run('get', b['id'], '--json'))[0]['superseded_at']} by {c['id']}" in text
    assert "Supersedes:" in text and "Superseded by:" in text
    assert f"{a['id']}  decision" in text and f"{c['id']}  decision" in text


# ---------------------------------------------------------------- list


def test_list(run: Run, tmp_path: Path) -> None:
    assert ok(run("list")).stdout.strip() == "no records"
    a = add(run, "--type", "decision", "--title", "First decision")
    b = add(run, "--type", "bugfix", "--title", "A bugfix")
    p = add(run, "--type", "convention", "--title", "Pinned convention", "--pin")
    g = add(run, "--type", "preference", "--title", "Global pref", "--scope", "global")
    old = add(run, "--type", "decision", "--title", "Old")
    ok(run("supersede", old["id"], "--body", "new"))
    other = make_repo(tmp_path / "other", "git@github.com:acme/other.git")
    add(lambda *x, **k: run(*x, project=other, **k), "--type", "decision", "--title", "Other project")

    listed = as_json(run("list", "--json"))
    titles = [r["title"] for r in listed]
    assert titles[0] == "Pinned convention"
    assert set(titles) == {"First decision", "A bugfix", "Pinned convention", "Global pref", "new"}  # new fact, new title
    assert old["id"] not in [r["id"] for r in listed]
    assert [r["id"] for r in as_json(run("list", "--type", "bugfix", "--json"))] == [b["id"]]
    assert {r["id"] for r in as_json(run("list", "--type", "bugfix", "--type", "decision", "--json"))} >= {a["id"], b["id"]}
    assert len(as_json(run("list", "--limit", "2", "--json"))) == 2
    text = ok(run("list")).stdout
    assert f"{p['id']}  convention" in text and "📌" in text and g["id"] in text


# ---------------------------------------------------------------- search


def test_search(run: Run) -> None:
    a = add(run, "--type", "discovery", "--title", "PgBouncer drops prepared statements")
    b = add(run, "--type", "bugfix", "--title", "PgBouncer pool exhausted under load")
    old = add(run, "--type", "decision", "--title", "Use pgbouncer transaction pooling")
    new = as_json(run("supersede", old["id"], "--title", "Use session pooling", "--body", "no pgbouncer", "--json"))
    hits = as_json(run("search", 'pgbouncer "prepared', "--json"))
    assert hits[0]["id"] == a["id"] and hits[0]["rung"] == "fts"
    assert isinstance(hits[0]["relevance"], float) and isinstance(hits[0]["score"], float)
    ids = {h["id"] for h in hits}
    assert old["id"] not in ids and {a["id"], b["id"], new["id"]} <= ids
    assert [h["id"] for h in as_json(run("search", "pgbouncer", "--type", "bugfix", "--json"))] == [b["id"]]
    assert old["id"] in {h["id"] for h in as_json(run("search", "pgbouncer", "--all", "--json"))}
    assert len(as_json(run("search", "pgbouncer", "--limit", "1", "--json"))) == 1
    assert ok(run("search", "kubernetes")).stdout.strip() == "no matches"
    assert a["id"] in ok(run("search", "NEAR(prepared) AND -statements*")).stdout


# ---------------------------------------------------------------- edit


def test_edit_options(run: Run) -> None:
    rec = add(run, "--type", "convention", "--title", "Tabs", "--body", "Use tabs")
    out = as_json(run("edit", rec["id"][:10], "--title", "Spaces", "--json"))
    assert out["title"] == "Spaces" and out["body"] == "Use tabs" and out["id"] == rec["id"]
    out = as_json(run("edit", rec["id"], "--body", "Four spaces", "--type", "preference", "--scope", "global",
                      "--confidence", "inferred", "--json"))
    assert (out["title"], out["body"], out["type"], out["scope"], out["confidence"]) == \
        ("Spaces", "Four spaces", "preference", "global", "inferred")
    out = as_json(run("edit", rec["id"], "--body-file", "-", "--json", input="From stdin\n"))
    assert out["body"] == "From stdin"
    assert ok(run("edit", rec["id"], "--title", "Plain")).stdout.startswith(f"edited {rec['id']}  Plain")
    assert [r["title"] for r in as_json(run("search", "stdin", "--json"))] == ["Plain"]


def test_edit_with_editor(run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rec = add(run, "--type", "decision", "--title", "Old title", "--body", "Old body")
    script = tmp_path / "fake-editor.sh"
    script.write_text('#!/bin/sh\nprintf "New title\\n\\nNew body\\n" > "$1"\n')
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    monkeypatch.delenv("VISUAL", raising=False)
    out = ok(run("edit", rec["id"])).stdout
    assert out.startswith(f"edited {rec['id']}  New title")
    got = as_json(run("get", rec["id"], "--json"))[0]
    assert (got["title"], got["body"]) == ("New title", "New body")


def test_edit_superseded_is_refused(run: Run) -> None:
    rec = add(run, "--type", "decision", "--title", "v1")
    ok(run("supersede", rec["id"], "--body", "v2"))
    before = store_state()
    r = run("edit", rec["id"], "--title", "rewrite history")
    assert r.exit_code == 1 and r.stderr.startswith("Error: record ") and "superseded" in r.stderr
    assert store_state() == before


# ---------------------------------------------------------------- pin


def test_pin_and_off(run: Run) -> None:
    a = add(run, "--type", "decision", "--title", "A")
    b = add(run, "--type", "decision", "--title", "B")
    assert as_json(run("pin", a["id"], "--json"))["pinned"] == 1
    assert as_json(run("list", "--json"))[0]["id"] == a["id"]
    assert ok(run("pin", a["id"], "--off")).stdout.startswith(f"unpinned {a['id']}")
    assert ok(run("pin", b["id"])).stdout.startswith(f"pinned {b['id']}")
    assert as_json(run("get", a["id"], "--json"))[0]["pinned"] == 0


# ---------------------------------------------------------------- supersede


def test_supersede(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-03-05T10:00:00Z")
    old = add(run, "--type", "decision", "--title", "REST between services", "--valid-from", "2026-01-12", "--pin")
    new = as_json(run("supersede", old["id"], "--body", "gRPC with protobuf", "--title", "gRPC between services",
                      "--why", "latency on the ledger path", "--valid-from", "2026-03-01", "--json"))
    assert new["title"] == "gRPC between services"
    assert new["body"] == "gRPC with protobuf\n\nWhy it changed: latency on the ledger path"
    assert new["valid_from"] == "2026-03-01T00:00:00.000000Z" and new["pinned"] == 1
    got = as_json(run("get", old["id"], "--json"))[0]
    assert got["superseded_by"] == new["id"] and got["valid_to"] == "2026-03-01T00:00:00.000000Z"
    assert got["superseded_at"] == "2026-03-05T10:00:00.000000Z"
    # title only keeps the title; plain output names the old ref
    out = ok(run("supersede", new["id"][:12], "--title", "gRPC everywhere")).stdout
    assert "gRPC everywhere" in out and f"(supersedes {new['id'][:12]})" in out
    # neither body nor title is a usage error, and nothing changes
    before = store_state()
    r = run("supersede", old["id"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("Error: ")
    r = run("supersede", old["id"], "--body", "again")
    assert r.exit_code == 1 and "already superseded" in r.stderr
    assert store_state() == before


# ---------------------------------------------------------------- history


def test_history(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-12T09:00:00Z")
    rest = add(run, "--type", "decision", "--title", "REST", "--valid-from", "2026-01-12")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-03-02T09:00:00Z")
    grpc = as_json(run("supersede", rest["id"], "--title", "gRPC", "--body", "now", "--valid-from", "2026-03-01",
                       "--json"))
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-10T12:00:00Z")
    late = add(run, "--type", "decision", "--title", "Trunk-based development", "--valid-from", "2026-02-01")
    add(run, "--type", "bugfix", "--title", "A bugfix", "--valid-from", "2026-02-01")

    def titles(*args: str) -> list[str]:
        return sorted(r["title"] for r in as_json(run("history", *args, "--json")))

    assert titles("--at", "2026-02-15") == ["A bugfix", "REST", "Trunk-based development"]
    assert titles("--at", "2026-02-15", "--type", "decision") == ["REST", "Trunk-based development"]
    assert titles("--at", "2026-03-01") == ["A bugfix", "Trunk-based development", "gRPC"]
    # as the store knew it on June 9: the back-dated decision recorded June 10 is invisible
    assert titles("--at", "2026-02-15", "--known-at", "2026-06-09") == ["REST"]
    # as known on March 1: the switch to gRPC was recorded on March 2
    assert titles("--at", "2026-03-01", "--known-at", "2026-03-01") == ["REST"]
    assert titles("--at", "2026-01-01") == []
    assert ok(run("history", "--at", "2026-01-01")).stdout.strip() == "nothing was recorded as true then"
    assert "REST" in ok(run("history", "--at", "2026-02-15")).stdout

    chain = as_json(run("history", grpc["id"], "--json"))
    assert [r["id"] for r in chain] == [rest["id"], grpc["id"]]
    assert [r["id"] for r in as_json(run("history", rest["id"][:14], "--json"))] == [rest["id"], grpc["id"]]
    text = ok(run("history", rest["id"])).stdout.splitlines()
    assert text == [f"2026-01-12 → 2026-03-01  {rest['id']}  REST", f"2026-03-01 → now  {grpc['id']}  gRPC"]
    assert late["id"] not in str(chain)


# ---------------------------------------------------------------- import


def _line(**fields) -> str:
    return json.dumps(fields, ensure_ascii=False)


def test_import_reports_bad_lines_and_keeps_good_ones(run: Run, tmp_path: Path) -> None:
    existing = add(run, "--type", "decision", "--title", "Already here")
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join([
        _line(type="decision", title="Imported decision", body="b", id="01JQMP0RTAAAAAAAAAAAAAAAA1",
              valid_from="2026-01-05"),
        "{not json",
        _line(type="opinion", title="Bad type"),
        _line(id=existing["id"], type="decision", title="Duplicate of an existing id"),
        "",
        _line(type="convention", title="Imported convention", key="conv.naming"),
        _line(type="decision", title="Duplicate within the file", id="01JQMP0RTAAAAAAAAAAAAAAAA1"),
        _line(type="decision", title="Bad date", valid_from="yesterday-ish"),
        _line(type="decision", title="Unknown field", colour="blue"),
        "[1, 2, 3]",
    ]) + "\n", encoding="utf-8")
    r = run("import", str(src))
    assert r.exit_code == 1, "any bad line makes the import fail (the good ones still land)"
    assert "imported 2 records, 2 already present, 5 bad lines" in r.stdout
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("line ")]
    assert [e.split(":")[0] for e in errs] == ["line 2", "line 3", "line 8", "line 9", "line 10"]
    assert "unknown type 'opinion'" in errs[1] and "valid_from" in errs[2] and "colour" in errs[3]
    titles = {r["title"] for r in as_json(run("list", "--json"))}
    assert titles == {"Already here", "Imported decision", "Imported convention"}
    got = as_json(run("get", "01JQMP0RTAAAAAAAAAAAAAAAA1", "--json"))[0]
    assert got["title"] == "Imported decision" and got["valid_from"] == "2026-01-05T00:00:00.000000Z"
    assert as_json(run("get", existing["id"], "--json"))[0]["title"] == "Already here"


def test_import_json_report_and_dry_run(run: Run, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(_line(type="decision", title="One") + "\n" + "oops\n" + _line(type="bugfix", title="Two") + "\n")
    ok(run("list"))  # create the store
    before = store_state()
    dry = run("import", str(src), "--dry-run", "--json")
    report = json.loads(dry.stdout)
    assert dry.exit_code == 1 and report["added"] == 2 and report["existing"] == 0
    assert [e["line"] for e in report["errors"]] == [2]
    assert store_state() == before, "--dry-run stores nothing"
    assert "would import 2 records" in run("import", str(src), "--dry-run").stdout
    done = run("import", str(src), "--json")
    report = json.loads(done.stdout)
    assert done.exit_code == 1
    assert report == {"added": 2, "existing": 0, "refused": 0, "errors": [report["errors"][0]]}
    assert report["errors"][0]["line"] == 2 and report["errors"][0]["error"].startswith("JSONDecodeError")
    assert len(as_json(run("list", "--json"))) == 2
    again = json.loads(run("import", str(src), "--json").stdout)
    assert again["added"] == 2, "lines without ids are new records each time"


def test_import_from_stdin(run: Run) -> None:
    r = ok(run("import", "-", input=_line(type="decision", title="Via stdin") + "\n"))
    assert "imported 1 records" in r.stdout


def test_import_of_only_bad_lines_fails(run: Run, tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text("nope\n" + _line(type="opinion", title="x") + "\n" + _line(title="no type") + "\n")
    ok(run("list"))
    before = store_state()
    r = run("import", str(src))
    assert r.exit_code != 0
    assert "imported 0 records, 0 already present, 3 bad lines" in r.stdout
    assert store_state() == before


# ---------------------------------------------------------------- export


def test_export_markdown(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-04-01T00:00:00Z")
    rest = add(run, "--type", "decision", "--title", "REST between services", "--valid-from", "2026-01-12")
    ok(run("supersede", rest["id"], "--title", "gRPC between services", "--body", "protobuf",
           "--valid-from", "2026-03-01"))
    add(run, "--type", "convention", "--title", "Errors are problem+json", "--pin")
    add(run, "--type", "profile", "--title", "Test command", "--body", "uv run pytest", "--key",
        "profile.test_command")
    md = ok(run("export")).stdout
    assert md.startswith("# agentctx export (2026-04-01)")
    assert "## Project widgets" in md and "github.com/acme/widgets" in md
    assert "### Decisions (1)" in md and "#### gRPC between services" in md
    assert "### Conventions (1)" in md and "pinned" in md
    assert "### Project profile (1)" in md and "key `profile.test_command`" in md
    assert "### History: superseded (1)" in md
    assert f"- ~~REST between services~~ (decision, valid 2026-01-12 → 2026-03-01, id `{rest['id']}`)" in md
    assert md.index("### Decisions") < md.index("### Conventions") < md.index("### History")
    out = tmp_path / "export.md"
    ok(run("export", "-o", str(out)))
    assert out.read_text(encoding="utf-8") == md


def test_export_all_projects(run: Run, tmp_path: Path) -> None:
    add(run, "--type", "decision", "--title", "Widgets decision")
    other = make_repo(tmp_path / "gadgets", "git@github.com:acme/gadgets.git")
    ok(run("record", "--type", "decision", "--title", "Gadgets decision", project=other))
    mine = ok(run("export")).stdout
    assert "Widgets decision" in mine and "Gadgets decision" not in mine
    both = ok(run("export", "--all-projects")).stdout
    assert "## Project widgets" in both and "## Project gadgets" in both and "Gadgets decision" in both
    lines = ok(run("export", "--all-projects", "--json")).stdout.splitlines()
    assert len(lines) == 2


def test_export_json_import_is_lossless(run: Run, home: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-02-01T08:00:00Z")
    a = add(run, "--type", "decision", "--title", "REST", "--body", "json", "--valid-from", "2026-01-12")
    b = add(run, "--type", "profile", "--title", "Test command", "--body", "pytest", "--key", "profile.test_command")
    add(run, "--type", "preference", "--title", "Global pref", "--scope", "global", "--confidence", "inferred")
    add(run, "--type", "discovery", "--title", "Leaked?", "--body", "password=hunter2secret")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-03-02T08:00:00Z")
    ok(run("supersede", a["id"], "--title", "gRPC", "--body", "protobuf", "--why", "latency",
           "--valid-from", "2026-03-01"))
    add(run, "--type", "profile", "--title", "Test command", "--body", "uv run pytest", "--key",
        "profile.test_command")
    add(run, "--type", "profile", "--title", "Test command", "--body", "uv run pytest", "--key",
        "profile.test_command")  # reinforces
    c = add(run, "--type", "bugfix", "--title", "Pinned bugfix", "--pin")
    ok(run("edit", c["id"], "--body", "edited later"))
    conn = db.connect()
    with db.transaction(conn):
        sessions.account(conn, "sess-1", b["project_id"], "UserPromptSubmit", [c["id"], b["id"]], 99)
    conn.execute("UPDATE records SET score = 0.0 WHERE id = ?", (b["id"],))
    conn.execute("UPDATE records SET score = 0.37, session_id = 'sess-x' WHERE id = ?", (c["id"],))
    conn.close()

    exported = ok(run("export", "--json")).stdout
    assert len(exported.splitlines()) == 7
    dump = tmp_path / "dump.jsonl"
    dump.write_text(exported, encoding="utf-8")

    def rows() -> dict[str, dict]:
        conn = sqlite3.connect(paths.db_path())
        conn.row_factory = sqlite3.Row
        try:
            out = {}
            for r in conn.execute("SELECT * FROM records"):
                d = dict(r)
                d.pop("seq")
                d.pop("pending_embedding")  # embedding state: an imported record is embedded again
                d.pop("redaction_stamp")  # redaction state: an imported record is redacted and stamped again
                out[d["id"]] = d
            return out
        finally:
            conn.close()

    original = rows()
    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path / "fresh"))
    monkeypatch.setenv("AGENTCTX_NOW", "2026-09-09T09:09:09Z")  # import time must not leak into any field
    report = as_json(run("import", str(dump), "--json"))
    assert report == {"added": 7, "existing": 0, "refused": 0, "errors": []}
    assert paths.db_path() == str(tmp_path / "fresh" / "agentctx.db")
    restored = rows()
    assert set(restored) == set(original)
    for rid, rec in original.items():
        assert restored[rid] == rec, rid
    assert ok(run("export", "--json")).stdout == exported
    # supersession still navigable after the round trip
    got = as_json(run("get", a["id"], "--json"))[0]
    assert got["superseded_chain"] and got["superseded_by"] == got["superseded_chain"][0]
    # importing the same dump again adds nothing
    assert as_json(run("import", str(dump), "--json")) == {"added": 0, "existing": 7, "refused": 0, "errors": []}


# ---------------------------------------------------------------- status, digest, inject


def test_status(run: Run, home: Path) -> None:
    a = add(run, "--type", "decision", "--title", "A")
    ok(run("supersede", a["id"], "--body", "B"))
    add(run, "--type", "bugfix", "--title", "C")
    conn = db.connect()
    with db.transaction(conn):
        sessions.start(conn, "s-1", a["project_id"], "/x", "startup")
        sessions.account(conn, "s-1", a["project_id"], "SessionStart", [a["id"]], 321)
        sessions.account(conn, "s-1", a["project_id"], "UserPromptSubmit", [], 79)
        sessions.account(conn, "s-other", "someotherproject", "SessionStart", [], 1000)
    conn.close()
    data = as_json(run("status", "--json"))
    assert data["project"]["name"] == "widgets" and data["project"]["remote"] == "github.com/acme/widgets"
    assert data["records"] == {"decision": {"active": 1, "superseded": 1, "archived": 0}, "bugfix": {"active": 1, "superseded": 0, "archived": 0}}
    assert data["records_all_projects"] == 3
    assert data["store"]["path"] == str(home / "agentctx.db") and data["store"]["bytes"] > 4096
    assert data["store"]["schema"] >= 1
    assert [(s["session_id"], s["tokens_injected"], s["injections"]) for s in data["sessions"]] == [("s-1", 400, 2)]
    assert data["tokens_injected_total"] == 400
    text = ok(run("status")).stdout
    assert "project widgets" in text and "tokens injected in this project: 400" in text
    assert "decision" in text and "(open)" in text


def test_status_of_an_empty_project(run: Run) -> None:
    assert "no records for this project yet" in ok(run("status")).stdout


def test_digest_command(run: Run) -> None:
    add(run, "--type", "decision", "--title", "Money is integer cents", "--pin")
    add(run, "--type", "profile", "--title", "Test command", "--body", "uv run pytest", "--key", "profile.test")
    data = as_json(run("digest", "--json"))
    assert data["budget"] == budgets.SESSION_START_TOKENS
    assert data["tokens"] == budgets.estimate_tokens(data["text"]) <= budgets.SESSION_START_TOKENS
    assert data["chars"] == len(data["text"])
    assert len(data["record_ids"]) == 2 and "Money is integer cents" in data["text"]
    r = ok(run("digest"))
    assert r.stdout.startswith('<agentctx-context kind="session-start"')
    assert f"of {budgets.SESSION_START_TOKENS} tokens" in r.stderr


def test_inject_command(run: Run) -> None:
    rec = add(run, "--type", "bugfix", "--title", "Webhook retries double-charged", "--body", "idempotency keys")
    data = as_json(run("inject", "why did webhook retries double charge?", "--json"))
    assert data["record_ids"] == [rec["id"]] and data["budget"] == budgets.TURN_TOKENS
    assert 0 < data["tokens"] <= budgets.TURN_TOKENS and "Webhook retries" in data["text"]
    # inject records nothing: asking again gives the same answer
    assert as_json(run("inject", "why did webhook retries double charge?", "--json")) == data
    assert ok(run("inject", "ok")).stdout.strip() == "(nothing to inject)"
    # a session whose dedup state already has the record gets nothing
    conn = db.connect()
    with db.transaction(conn):
        sessions.account(conn, "seen", rec["project_id"], "UserPromptSubmit", [rec["id"]], 10)
    conn.close()
    assert as_json(run("inject", "webhook retries", "--session", "seen", "--json"))["record_ids"] == []


def test_demo(run: Run, tmp_path: Path) -> None:
    out = ok(run("demo", "--home", str(tmp_path / "demo"), project=None)).stdout
    sections = out.split("\n=== ")
    six = next(s for s in sections if s.startswith("6."))
    eight = next(s for s in sections if s.startswith("8."))
    assert "Services talk to each other over gRPC" in six
    assert "REST/JSON" not in six
    assert "Services talk to each other over REST/JSON (valid from 2026-01-12)" in eight
    assert "gRPC" not in eight
    assert (tmp_path / "demo" / "data" / "agentctx.db").is_file()
    four = next(s for s in sections if s.startswith("4."))
    assert "(nothing)" in four


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(("args", "code", "fragment"), [
    (["frobnicate"], 2, "No such command 'frobnicate'"),
    (["record", "--title", "no type"], 2, "Missing option '--type'"),
    (["record", "--type", "decision"], 2, "Missing option '--title'"),
    (["record", "--type", "opinion", "--title", "x"], 2, "'opinion' is not one of"),
    (["get", "01JZZZZZZZZZZZZZZZZZZZZZZZ"], 1, "no record 01JZZZZZZZZZZZZZZZZZZZZZZZ"),
    (["get", "not-an-id"], 1, "is not a record id"),
    (["pin", "01JZZZZZZZ"], 1, "no record 01JZZZZZZZ"),
    (["supersede", "01JZZZZZZZ", "--body", "x"], 1, "no record"),
    (["record", "--type", "decision", "--title", "t", "--valid-from", "notadate"], 2, "not an ISO date"),
    (["history", "--at", "2026-13-45"], 2, "not an ISO date"),
    (["history", "--known-at", "yesterday"], 2, "not an ISO date"),
    (["record", "--type", "decision", "--title", "t", "--body", "a", "--body-file", "-"], 2, "not both"),
    (["record", "--type", "decision", "--title", " "], 1, "non-empty title"),
    (["get"], 2, "Missing argument"),
    (["import", "/nonexistent/file.jsonl"], 2, "No such file"),
    (["list", "--limit", "0"], 2, "--limit"),
])
def test_bad_input_one_error_line_and_nothing_changes(run: Run, args: list[str], code: int, fragment: str) -> None:
    add(run, "--type", "decision", "--title", "Existing record")
    before = store_state()
    r = run(*args)
    assert r.exit_code == code
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert fragment in lines[0]
    assert store_state() == before


def test_project_on_a_missing_directory(run: Run, tmp_path: Path) -> None:
    add(run, "--type", "decision", "--title", "Existing record")
    before = store_state()
    r = run("list", project=tmp_path / "does-not-exist")
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "is not a directory" in lines[0]
    assert store_state() == before


def test_ambiguous_prefix_is_an_error(run: Run, home: Path, repo: Path) -> None:
    conn = db.connect()
    from agentctx import project

    pid = project.detect(str(repo)).id
    records.add(conn, pid, type="decision", title="one", record_id="01JAMBAMBAMBAMBAMBAMBAMBA1")
    records.add(conn, pid, type="decision", title="two", record_id="01JAMBAMBAMBAMBAMBAMBAMBA2")
    conn.close()
    r = run("get", "01JAMB")
    assert r.exit_code == 1 and r.stderr == "Error: 01JAMB matches several records; give more of the id\n"


def test_help_and_version(run: Run) -> None:
    assert "record" in ok(run("--help", project=None)).stdout
    assert "0.1.0" in ok(run("--version", project=None)).stdout


def test_cli_uses_agentctx_home(run: Run, home: Path) -> None:
    add(run, "--type", "decision", "--title", "Where am I stored?")
    assert (home / "agentctx.db").is_file()
    assert clock.now()  # sanity: no frozen clock leaks between tests


# ---------------------------------------------------------------- the real executable

UV = shutil.which("uv") or os.path.expanduser("~/.local/bin/uv")
needs_uv = pytest.mark.skipif(not os.path.exists(UV), reason="uv is not installed")


def _exe(home: Path, *args: str, input: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "AGENTCTX_HOME": str(home)}
    env.pop("AGENTCTX_NOW", None)
    env["PATH"] = os.path.dirname(UV) + os.pathsep + env.get("PATH", "")
    return subprocess.run([str(BIN), *args], input=input, capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


@needs_uv
def test_real_executable_round_trip(home: Path, repo: Path) -> None:
    r = _exe(home, "--project", str(repo), "record", "--type", "decision", "--title", "Real process",
             "--body-file", "-", "--json", input="Body from stdin\n")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["title"] == "Real process" and rec["body"] == "Body from stdin"
    r = _exe(home, "search", "real process", "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert [h["id"] for h in json.loads(r.stdout)] == [rec["id"]]
    r = _exe(home, "--project", str(repo), "status", "--json")
    assert json.loads(r.stdout)["records"] == {"decision": {"active": 1, "superseded": 0, "archived": 0}}
    assert (home / "agentctx.db").is_file()


@needs_uv
def test_real_executable_bad_input(home: Path, repo: Path) -> None:
    for args, fragment in ((["record", "--title", "x"], "Missing option '--type'"),
                           (["get", "01JZZZZZZZ"], "no record"),
                           (["--project", str(repo / "missing"), "list"], "is not a directory"),
                           (["nope"], "No such command")):
        r = _exe(home, *args, cwd=repo)
        assert r.returncode != 0
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0], r.stderr
        assert r.stdout == ""
