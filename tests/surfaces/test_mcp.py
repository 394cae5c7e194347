"""The MCP server as Claude Code starts it: the SDK's real stdio client spawns exactly what plugin.json declares.

The server runs through ``uv run --script`` with ``UV_OFFLINE=1`` and the real uv cache: its script environment
was prepared at the start of the test session (``script_envs`` in tests/conftest.py), so it starts offline.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import ListRootsResult, Root

from agentctx import budgets, project
from agentctx.kinds import TYPES
from agentctx.store import db, graph, migrations, records
from tests.conftest import make_repo
from tests.support.scriptenvs import passthrough

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"ctx_search", "ctx_get", "ctx_record", "ctx_supersede", "ctx_project", "ctx_related", "ctx_sync_claudemd"}
ID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
LINE = re.compile(r"^- (?P<id>[0-9A-Z]{26}) \| (?P<type>\w+) \| (?P<date>\d{4}-\d\d-\d\d) \| (?P<status>[a-z/]+)"
                  r"(?: \| \d hops)? \| (?P<title>.+)$")


def declared_server(env: dict[str, str], cwd: Path) -> StdioServerParameters:
    """The plugin.json ``mcpServers`` entry with ${CLAUDE_PLUGIN_ROOT} substituted, as Claude Code runs it."""
    spec = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["mcpServers"]["agentctx"]

    def sub(text: str) -> str:
        return text.replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT))

    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    full = {
        "PATH": os.pathsep.join(dict.fromkeys([str(Path(uv).parent), "/usr/local/bin", "/usr/bin", "/bin"])),
        "HOME": str(Path.home()),
        "LANG": "C.UTF-8",
        "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "UV_OFFLINE": "1",
        "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv"),
        **{k: sub(v) for k, v in (spec.get("env") or {}).items()},
        **env,
    }
    for name, value in passthrough().items():  # what the user's shell passes on (uv settings, CA bundles)
        full.setdefault(name, value)
    return StdioServerParameters(command=spec["command"], args=[sub(a) for a in spec["args"]], env=full, cwd=str(cwd))


class Client:
    """A synchronous face on the SDK's ClientSession (an anyio portal runs the async side)."""

    def __init__(self, params: StdioServerParameters, errlog, roots: list[Path] | None = None):
        self._stack = contextlib.ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal())
        callback = None
        if roots is not None:
            async def callback(_context):  # noqa: ANN001 - the SDK's list_roots callback
                return ListRootsResult(roots=[Root(uri=p.as_uri(), name=p.name) for p in roots])
        streams = self._stack.enter_context(
            self.portal.wrap_async_context_manager(stdio_client(params, errlog=errlog)))
        self.session = self._stack.enter_context(self.portal.wrap_async_context_manager(
            ClientSession(*streams, read_timeout_seconds=120, list_roots_callback=callback)))
        self.init = self.portal.call(self.session.initialize)

    def tools(self):
        return self.portal.call(self.session.list_tools).tools

    def call(self, name: str, args: dict):
        return self.portal.call(self.session.call_tool, name, args)

    def text(self, name: str, args: dict | None = None) -> str:
        """The text of a successful call (fails the test on a tool error)."""
        result = self.call(name, args or {})
        body = "".join(c.text for c in result.content if c.type == "text")
        assert not result.is_error, body
        assert result.structured_content is None  # plain text, not {"result": ...}
        return body

    def error(self, name: str, args: dict) -> str:
        """The message of a refused call (fails the test if it succeeded)."""
        result = self.call(name, args)
        body = "".join(c.text for c in result.content if c.type == "text")
        assert result.is_error, f"{name}({str(args)[:200]}) should fail but returned: {body[:500]}"
        return body

    def close(self) -> None:
        self._stack.close()


def snapshot(db_file: Path) -> list:
    """Every row that describes stored knowledge (records, graph, projects)."""
    conn = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    try:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
                for t in ("records", "edges", "nodes", "record_entities")]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A project checkout (pyproject, Makefile) and a store with facts about it and another project."""
    base = tmp_path_factory.mktemp("mcp")
    data = base / "data"
    work = make_repo(base / "shop", remote="https://github.com/acme/shop.git")
    (work / "pyproject.toml").write_text('[project]\nname = "shop"\nrequires-python = ">=3.11"\n'
                                         'dependencies = ["django>=5"]\n[tool.pytest.ini_options]\n')
    (work / "uv.lock").write_text("")
    (work / "Makefile").write_text("test:\n\tuv run pytest\nlint:\n\tuv run ruff check .\n")
    old_env = os.environ.get("AGENTCTX_HOME")
    os.environ["AGENTCTX_HOME"] = str(data)
    try:
        conn = db.connect()
        proj = project.detect(str(work))
        recs = {
            "rest": records.add(conn, proj.id, type="decision", title="Services talk over REST",
                                body="payments and ledger call each other with REST and JSON."),
            "bug": records.add(conn, proj.id, type="bugfix", title="Invoice PDF crashed on emoji names",
                               body="WeasyPrint needed the Noto Color Emoji font; installed in the Dockerfile."),
            "pref": records.add(conn, proj.id, type="preference", scope="global", title="Prefers small commits",
                                body="Imperative subject lines, one change per commit."),
            "conv": records.add(conn, proj.id, type="convention", title="Money is integer cents",
                                body="Never floats for amounts.", pinned=True),
        }
        recs["grpc"] = records.supersede(conn, proj.id, recs["rest"]["id"], title="Services talk over gRPC",
                                         body="payments and ledger use gRPC with protobuf contracts.",
                                         rationale="REST validation was too slow on the ledger path.")
        with db.transaction(conn):
            graph.link(conn, recs["bug"]["id"], graph.entity(conn, proj.id, "file", "shop/invoices/pdf.py"))
        for i in range(40):  # many matches with long and non-ASCII titles: the 15-result budget
            records.add(conn, proj.id, type="discovery",
                        title=f"Kafka consumer group {i} rebalances " + "when partitions move between brokers " * 6,
                        body="Kafka 再平衡 takes 30 s 🚀 " * 50)
        other = records.add(conn, "someotherproject", type="decision", title="Other project uses Kafka",
                            body="not ours")
        conn.close()
    finally:
        if old_env is None:
            os.environ.pop("AGENTCTX_HOME", None)
        else:
            os.environ["AGENTCTX_HOME"] = old_env
    return {"base": base, "data": data, "work": work, "proj": proj, "recs": recs, "other": other,
            "db": data / "agentctx.db"}


@pytest.fixture(scope="module")
def server(world):
    errlog = open(world["base"] / "server-stderr.log", "w+")  # noqa: SIM115 - closed below
    env = {"AGENTCTX_HOME": str(world["data"]), "CLAUDE_PROJECT_DIR": str(world["work"])}
    client = Client(declared_server(env, world["work"]), errlog)
    client.text("ctx_project")  # waits for the warm-up, so later snapshots are stable
    yield client
    client.close()
    errlog.close()


def lines_of(text: str) -> list[re.Match]:
    matches = [LINE.match(line) for line in text.splitlines()[1:]]
    assert all(matches), text
    return matches  # type: ignore[return-value]


def test_initialize_and_instructions(server):
    info = server.init.server_info
    assert info.name == "agentctx" and info.version
    instructions = server.init.instructions or ""
    assert 200 < len(instructions.encode()) < 2048
    for name in TOOLS:
        assert name in instructions
    assert "not instructions" in instructions


def test_tools_are_few_small_and_plain(server):
    tools = {t.name: t for t in server.tools()}
    assert set(tools) == TOOLS and len(tools) <= 7
    for tool in tools.values():
        assert 150 < len(tool.description.encode()) < 2048, tool.name
        assert tool.output_schema is None, tool.name  # structured_output=False: plain text results
    search = tools["ctx_search"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {"query", "type", "file", "scope"}
    assert tools["ctx_record"].input_schema["required"] == ["type", "title", "body"]
    assert set(tools["ctx_supersede"].input_schema["required"]) == {"old_id", "new_body", "rationale"}
    assert tools["ctx_project"].input_schema.get("required", []) == []
    type_schema = json.dumps(tools["ctx_record"].input_schema["properties"]["type"])
    assert all(t in type_schema for t in TYPES)
    assert tools["ctx_search"].annotations.read_only_hint is True
    assert tools["ctx_record"].annotations.read_only_hint is False


def test_search_returns_a_compact_index(server, world):
    recs = world["recs"]
    text = server.text("ctx_search", {"query": "how do services talk, REST or gRPC?"})
    found = {m["id"]: m for m in lines_of(text)}
    assert recs["grpc"]["id"] in found
    assert recs["rest"]["id"] not in found  # superseded: history, not the current view
    hit = found[recs["grpc"]["id"]]
    assert (hit["type"], hit["status"], hit["date"]) == ("decision", "current", recs["grpc"]["valid_from"][:10])
    assert hit["title"].startswith("Services talk over gRPC")
    assert "ctx_get" in text.splitlines()[0]
    pinned = lines_of(server.text("ctx_search", {"query": "money amounts cents"}))
    assert pinned[0]["id"] == recs["conv"]["id"] and pinned[0]["status"] == "pinned"


def test_search_budget_fifteen_results(server, world):
    text = server.text("ctx_search", {"query": "all the kafka consumer rebalances and brokers"})  # broad: 15
    found = lines_of(text)
    assert len(found) == 15
    assert len(lines_of(server.text("ctx_search", {"query": "kafka consumer rebalances brokers"}))) == 8  # narrow
    assert budgets.estimate_tokens(text) <= 1000
    for line in text.splitlines()[1:]:
        assert budgets.estimate_tokens(line) <= 60, line
    assert world["other"]["id"] not in text  # another project's record


def test_search_filters(server, world):
    recs = world["recs"]
    only_bugs = lines_of(server.text("ctx_search", {"query": "invoice emoji kafka", "type": "bugfix"}))
    assert [m["id"] for m in only_bugs] == [recs["bug"]["id"]]
    glob = lines_of(server.text("ctx_search", {"query": "small commits", "scope": "global"}))
    assert [m["id"] for m in glob] == [recs["pref"]["id"]] and glob[0]["status"] == "current/global"
    assert recs["pref"]["id"] not in server.text("ctx_search", {"query": "small commits kafka", "scope": "project"})
    by_file = lines_of(server.text("ctx_search", {"query": "emoji font", "file": "shop/invoices/pdf.py"}))
    assert [m["id"] for m in by_file] == [recs["bug"]["id"]]
    none = server.text("ctx_search", {"query": "kafka", "file": "shop/invoices/pdf.py"})
    assert none.startswith("No current records match")


def test_search_any_text_is_safe(server, world):
    text = server.text("ctx_search", {"query": 'emoji" OR NEAR(invoice* -pdf) AND (col:x ^ "'})
    assert world["recs"]["bug"]["id"] in text
    assert server.text("ctx_search", {"query": "zzqx unmatched words"}).startswith("No current records match")


def test_search_bad_calls(server, world):
    before = snapshot(world["db"])
    assert "query is empty" in server.error("ctx_search", {"query": ""})
    assert "query is empty" in server.error("ctx_search", {"query": "   \n "})
    assert "102,400 characters" in server.error("ctx_search", {"query": "a" * 102_400})
    assert "no searchable words" in server.error("ctx_search", {"query": '*** "" () -'})
    assert "query" in server.error("ctx_search", {"query": 42})
    assert "query" in server.error("ctx_search", {})
    assert "type" in server.error("ctx_search", {"query": "kafka", "type": "decisions"})
    assert "scope" in server.error("ctx_search", {"query": "kafka", "scope": "everything"})
    assert "not a file path" in server.error("ctx_search", {"query": "kafka", "file": "x/" * 2000})
    assert "file" in server.error("ctx_search", {"query": "kafka", "file": 7})
    assert snapshot(world["db"]) == before


def test_get_full_records_with_lineage(server, world):
    recs = world["recs"]
    old = server.text("ctx_get", {"ids": [recs["rest"]["id"]]})
    assert "## Services talk over REST" in old and "REST and JSON" in old
    assert f"SUPERSEDED on {recs['grpc']['recorded_at'][:10]} by {recs['grpc']['id']}" in old
    assert "superseded by (newer versions" in old and recs["grpc"]["id"] in old
    new = server.text("ctx_get", {"ids": [recs["grpc"]["id"][:18].lower(), recs["bug"]["id"]]})  # a prefix works
    assert "supersedes (older versions" in new and recs["rest"]["id"] in new
    assert "Why it changed: REST validation was too slow" in new
    assert "files: shop/invoices/pdf.py" in new and "WeasyPrint" in new
    conn = sqlite3.connect(world["db"])
    assert conn.execute("SELECT access_count FROM records WHERE id = ?", (recs["bug"]["id"],)).fetchone()[0] >= 1
    conn.close()


def test_get_bad_calls(server, world):
    before = snapshot(world["db"])
    missing = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"
    message = server.error("ctx_get", {"ids": [world["recs"]["bug"]["id"], missing]})
    assert f"no record {missing}" in message and "other 1 id(s) are fine" in message
    assert "not a record id" in server.error("ctx_get", {"ids": ["hello world"]})
    assert f"no record {world['other']['id']}" in server.error("ctx_get", {"ids": [world["other"]["id"]]})
    assert "ids is empty" in server.error("ctx_get", {"ids": []})
    assert "at most 20" in server.error("ctx_get", {"ids": [f"01ZZZZZZZZZZZZZZZZZZZZZZ{i:02d}" for i in range(21)]})
    assert "ids" in server.error("ctx_get", {"ids": world["recs"]["bug"]["id"]})  # a string, not a list
    assert "ids" in server.error("ctx_get", {"ids": [1, 2]})
    assert snapshot(world["db"]) == before


def test_record_then_related_and_search(server, world):
    text = server.text("ctx_record", {
        "type": "decision", "title": "Refunds go through the ledger service",
        "body": "POST /refunds calls ledger.refund(); never write refunds directly.",
        "files": ["shop/refunds/views.py", str(world["work"] / "shop" / "ledger" / "client.py")],
    })
    new_id = ID.search(text).group(0)
    assert "linked to shop/refunds/views.py, shop/ledger/client.py" in text
    conn = sqlite3.connect(world["db"])
    row = conn.execute("SELECT type, source, confidence, scope FROM records WHERE id = ?", (new_id,)).fetchone()
    conn.close()
    assert row == ("decision", "mcp_tool", "explicit", "project")
    related = server.text("ctx_related", {"file": "shop/ledger/client.py"})
    assert [m["id"] for m in lines_of(related)] == [new_id]
    assert new_id in server.text("ctx_search", {"query": "refunds ledger"})

    replaced = server.text("ctx_record", {"type": "decision", "title": "Refunds go through the payments API",
                                          "body": "The ledger is called by payments only.", "supersedes": new_id})
    newer = ID.search(replaced).group(0)
    assert f"supersedes {new_id}" in replaced
    assert f"by {newer}" in server.text("ctx_get", {"ids": [new_id]})


def test_record_bad_calls(server, world):
    before = snapshot(world["db"])
    ok = {"type": "decision", "title": "A fine title", "body": "A fine body."}
    assert "type" in server.error("ctx_record", {**ok, "type": "opinion"})
    assert "non-empty title" in server.error("ctx_record", {**ok, "title": "   "})
    assert "NUL" in server.error("ctx_record", {**ok, "title": "bad\x00title"})
    assert "the limit is 300" in server.error("ctx_record", {**ok, "title": "t" * 301})
    assert "1,048,576 characters; the limit is 32,000" in server.error("ctx_record", {**ok, "body": "b" * 1_048_576})
    assert "body" in server.error("ctx_record", {"type": "decision", "title": "no body"})
    assert "no record 01ZZZZZZZZ" in server.error("ctx_record", {**ok, "supersedes": "01ZZZZZZZZ"})
    superseded = world["recs"]["rest"]["id"]
    assert f"{superseded} is already superseded by {world['recs']['grpc']['id']}" in server.error(
        "ctx_record", {**ok, "supersedes": superseded})
    assert "files" in server.error("ctx_record", {**ok, "files": "shop/app.py"})
    assert "files is empty" in server.error("ctx_record", {**ok, "files": ["shop/app.py", " "]})
    assert "scope" in server.error("ctx_record", {**ok, "scope": "team"})
    assert snapshot(world["db"]) == before


def test_supersede(server, world):
    created = server.text("ctx_record", {"type": "convention", "title": "Dates are stored as naive UTC",
                                         "body": "datetime without tzinfo, always UTC."})
    old_id = ID.search(created).group(0)
    text = server.text("ctx_supersede", {"old_id": old_id, "new_body": "Timestamps are timezone-aware UTC.",
                                         "rationale": "Naive datetimes broke the DST report.",
                                         "new_title": "Dates are stored timezone-aware"})
    new_id = ID.search(text).group(0)
    assert f"it supersedes {old_id}" in text
    full = server.text("ctx_get", {"ids": [new_id]})
    assert "## Dates are stored timezone-aware" in full and "convention" in full
    assert "Why it changed: Naive datetimes broke the DST report." in full
    assert old_id not in server.text("ctx_search", {"query": "naive UTC dates timezone"})

    before = snapshot(world["db"])
    args = {"old_id": old_id, "new_body": "x", "rationale": "y"}
    assert f"{old_id} is already superseded by {new_id}" in server.error("ctx_supersede", args)
    assert "no record 01ZZZZZZZZZZ" in server.error("ctx_supersede", {**args, "old_id": "01ZZZZZZZZZZ"})
    assert "new_body is empty" in server.error("ctx_supersede", {**args, "old_id": new_id, "new_body": " "})
    assert "rationale is empty" in server.error("ctx_supersede", {**args, "old_id": new_id, "rationale": ""})
    assert "old_id is empty" in server.error("ctx_supersede", {**args, "old_id": ""})
    assert "new_body" in server.error("ctx_supersede", {"old_id": new_id, "new_body": ["x"], "rationale": "y"})
    assert "limit is 32,000" in server.error("ctx_supersede", {**args, "old_id": new_id, "new_body": "b" * 1_048_576})
    assert snapshot(world["db"]) == before


def test_project_profile_detected_and_refreshed(server, world):
    text = server.text("ctx_project")
    assert text.startswith("Project shop | ")
    assert "- Test command: make test (detected from Makefile)" in text
    assert "- Lint command: make lint (detected from Makefile)" in text
    assert "Python ≥3.11 (uv); django" in text
    before = snapshot(world["db"])
    assert "Profile refreshed" not in server.text("ctx_project")
    assert snapshot(world["db"]) == before  # same repository, nothing written

    makefile = world["work"] / "Makefile"
    saved = makefile.read_text()
    makefile.write_text("lint:\n\tuv run ruff check .\n")
    try:
        text = server.text("ctx_project")
    finally:
        makefile.write_text(saved)
    assert "- Test command: uv run pytest (detected from pyproject.toml)" in text
    assert "1 changed (old values kept in history)" in text
    conn = sqlite3.connect(world["db"])
    versions = conn.execute("SELECT body, superseded_at IS NULL FROM records WHERE key = 'profile.test_command' "
                            "ORDER BY recorded_at").fetchall()
    conn.close()
    assert versions == [("make test (detected from Makefile)", 0), ("uv run pytest (detected from pyproject.toml)", 1)]


def test_related(server, world):
    bug = world["recs"]["bug"]["id"]
    text = server.text("ctx_related", {"file": str(world["work"] / "shop" / "invoices" / "pdf.py")})
    assert text.startswith("1 current records linked to shop/invoices/pdf.py")
    assert [m["id"] for m in lines_of(text)] == [bug]
    assert server.text("ctx_related", {"file": "pdf.py"}).count(bug) == 1  # a unique suffix finds it too
    assert server.text("ctx_related", {"file": "shop/nothing.py"}).startswith("No current records are linked")
    assert "file is empty" in server.error("ctx_related", {"file": ""})
    assert "not a file path" in server.error("ctx_related", {"file": "x" * 5000})
    assert "file" in server.error("ctx_related", {"file": None})


def test_server_survived_every_bad_call(server, world):
    assert {t.name for t in server.tools()} == TOOLS
    assert server.text("ctx_search", {"query": "invoice"})
    log = (world["base"] / "server-stderr.log").read_text()
    assert "Traceback" not in log and "internal error" not in log, log[-3000:]


def test_store_from_a_newer_agentctx_is_refused_untouched(tmp_path):
    data = tmp_path / "data"
    work = make_repo(tmp_path / "proj")
    os.environ["AGENTCTX_HOME"] = str(data)
    try:
        conn = db.connect()
        rec = records.add(conn, project.detect(str(work)).id, type="decision", title="Kept as it is", body="b")
        conn.execute(f"PRAGMA user_version = {migrations.LATEST + 1}")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    finally:
        os.environ.pop("AGENTCTX_HOME", None)
    db_file = data / "agentctx.db"
    digest = hashlib.sha256(db_file.read_bytes()).hexdigest()
    with open(tmp_path / "stderr.log", "w+") as errlog:
        client = Client(declared_server({"AGENTCTX_HOME": str(data), "CLAUDE_PROJECT_DIR": str(work)}, work), errlog)
        try:
            calls = [("ctx_search", {"query": "kept"}), ("ctx_get", {"ids": [rec["id"]]}), ("ctx_project", {}),
                     ("ctx_record", {"type": "decision", "title": "t", "body": "b"}), ("ctx_related", {"file": "a.py"}),
                     ("ctx_supersede", {"old_id": rec["id"], "new_body": "n", "rationale": "r"})]
            for name, args in calls:
                message = client.error(name, args)
                assert f"schema {migrations.LATEST + 1}, newer than this agentctx understands" in message, message
                assert "update the plugin" in message
            assert {t.name for t in client.tools()} == TOOLS  # still serving
        finally:
            client.close()
    assert hashlib.sha256(db_file.read_bytes()).hexdigest() == digest


def test_project_from_the_clients_roots(tmp_path):
    """Without CLAUDE_PROJECT_DIR the server asks the client for its roots."""
    data = tmp_path / "data"
    work = make_repo(tmp_path / "rooted", remote="git@github.com:acme/rooted.git")
    (work / "go.mod").write_text("module github.com/acme/rooted\n\ngo 1.22\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "Makefile").write_text("test:\n\ttrue\n")  # would give a profile if it were taken for the project
    with open(tmp_path / "stderr.log", "w+") as errlog:
        client = Client(declared_server({"AGENTCTX_HOME": str(data)}, elsewhere), errlog, roots=[work])
        try:
            text = client.text("ctx_project")
        finally:
            client.close()
    assert text.startswith(f"Project rooted | {work.resolve()} | github.com/acme/rooted")
    assert "- Test command: go test ./... (detected from go.mod)" in text
    conn = sqlite3.connect(data / "agentctx.db")
    owners = {r[0] for r in conn.execute("SELECT DISTINCT project_id FROM records")}
    conn.close()
    assert owners == {project.detect(str(work)).id}  # nothing was detected or written for the working directory
