"""The dashboard server over real HTTP: API views, writes through agentctx.store.records, ADR-015 refusals,
the per-start token, idle exit and ``agentctx ui --detach``."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentctx.store import records
from tests.support.ui_server import Server, store_snapshot

ROOT = Path(__file__).resolve().parents[2]




def request(srv: Server, method: str, path: str, body=None, headers: dict | None = None):
    """(status, parsed JSON or text, headers) of a raw HTTP request; Host defaults to the server's own."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    hdrs = {"Host": f"127.0.0.1:{srv.port}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
        hdrs["Content-Length"] = str(len(data))
    hdrs.update(headers or {})
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in hdrs.items():
        conn.putheader(k, v)
    conn.endheaders(data)
    res = conn.getresponse()
    raw = res.read().decode()
    conn.close()
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = raw
    return res.status, parsed, dict(res.getheaders())


def token_of(srv: Server) -> str:
    status, page, _ = request(srv, "GET", "/")
    assert status == 200
    return re.search(r'name="agentctx-token" content="([^"]+)"', page).group(1)


def test_views_return_the_store(server, store, proj, conn):
    status, projects, headers = request(server, "GET", "/api/projects")
    assert status == 200 and [p["id"] for p in projects] == [proj.id]
    assert projects[0]["current_records"] == 5 and projects[0]["all_records"] == 6  # REST is superseded
    assert "set-cookie" not in {k.lower() for k in headers}
    q = f"project={proj.id}"
    status, hits, _ = request(server, "GET", f"/api/records?{q}&q=kafka")
    assert status == 200 and [h["id"] for h in hits] == [store["kafka"]]
    _, current, _ = request(server, "GET", f"/api/records?{q}&type=decision")
    assert {r["id"] for r in current} == {store["kafka"], store["grpc"]}
    _, old, _ = request(server, "GET", f"/api/records?{q}&status=superseded")
    assert [r["id"] for r in old] == [store["rest"]]
    _, glob, _ = request(server, "GET", f"/api/records?{q}&scope=global")
    assert [r["id"] for r in glob] == [store["pref"]]
    _, detail, _ = request(server, "GET", f"/api/records/{store['grpc']}")
    assert [r["id"] for r in detail["supersedes"]] == [store["rest"]] and detail["files"] == ["src/rpc/client.py"]
    _, g, _ = request(server, "GET", f"/api/graph?{q}")
    rels = {(link["source"], link["target"], link["rel"]) for link in g["links"]}
    assert (store["grpc"], store["rest"], "supersedes") in rels
    assert sum(1 for n in g["nodes"] if n["kind"] == "file") == 3
    _, prof, _ = request(server, "GET", f"/api/profile?{q}")
    assert [p["id"] for p in prof["preferences"]] == [store["pref"]]
    _, sess, _ = request(server, "GET", f"/api/sessions?{q}")
    assert [s["tokens_injected"] for s in sess] == [1200, 300, 2100, 900]
    assert request(server, "GET", f"/api/records?{q}&status=bogus")[0] == 400
    assert request(server, "GET", "/api/records")[0] == 400


def test_writes_go_through_records_with_the_token(server, store, proj, conn):
    tok = {"X-Agentctx-Token": token_of(server)}
    q = f"project={proj.id}"
    status, rec, _ = request(server, "POST", f"/api/records/{store['conv']}/edit?{q}",
                             {"title": "Migrations are forward-only, always", "body": "key sk-ant-api03-" + "A" * 90},
                             tok)
    assert status == 200, rec
    stored = records.resolve(conn, store["conv"], all_projects=True)
    assert stored["title"] == "Migrations are forward-only, always"
    assert "sk-ant-api03" not in stored["body"]  # redacted like any other write
    assert request(server, "POST", f"/api/records/{store['kafka']}/pin?{q}", {"on": True}, tok)[0] == 200
    assert records.resolve(conn, store["kafka"], all_projects=True)["pinned"] == 1
    status, new, _ = request(server, "POST", f"/api/records/{store['bug']}/supersede?{q}",
                             {"body": "Fixed for good by WAL mode", "rationale": "root cause found"}, tok)
    assert status == 200
    assert records.resolve(conn, store["bug"], all_projects=True)["superseded_by"] == new["id"]
    # Validation errors come back as 400 with the message, and change nothing.
    before = store_snapshot(conn)
    status, err, _ = request(server, "POST", f"/api/records/{store['kafka']}/edit?{q}", {"title": "   "}, tok)
    assert status == 400 and "non-empty title" in err["error"]
    status, err, _ = request(server, "POST", f"/api/records/{store['rest']}/pin?{q}", {"on": True}, tok)
    assert status == 400 and "superseded" in err["error"]
    assert request(server, "POST", f"/api/records/{store['kafka']}/edit?{q}", [1, 2], tok)[0] == 400
    status, err, _ = request(server, "POST", f"/api/records/{store['kafka']}/edit?{q}", {}, tok)
    assert status == 400 and "nothing to change" in err["error"]
    status, err, _ = request(server, "POST", f"/api/records/{store['kafka']}/edit?{q}", {"body": "x" * 300_000}, tok)
    assert status == 413
    assert store_snapshot(conn) == before


def test_sync_shows_drift_and_the_proposed_diff(server, store, proj, conn):
    tok = {"X-Agentctx-Token": token_of(server)}
    status, prop, _ = request(server, "POST", f"/api/sync/proposal?project={proj.id}", {}, tok)
    assert status == 200, prop
    kinds = {c["record_id"]: c["kind"] for c in prop["candidates"]}
    assert store["kafka"] in kinds and kinds[store["grpc"]] in ("contradicted", "superseded_in_claudemd", "missing")
    assert "+- Use Kafka for the payment events" in prop["diff"].replace("+ ", "+")
    assert (proj.root + "/CLAUDE.md") == prop["path"]
    assert open(prop["path"]).read() == "# Widgets\n\n- Services talk REST between each other.\n"  # not written
    _, table, _ = request(server, "GET", f"/api/drift?project={proj.id}")
    assert {r["record_id"] for r in table} == set(kinds)
    assert prop["exists"] is True and prop["compared"] >= len(prop["candidates"])


def test_the_projects_drift_count_is_the_sync_candidate_count(server, store, proj, conn):
    """Projects assesses CLAUDE.md by the rule Sync applies, so both pages give one number, before any scan."""
    _, projects, _ = request(server, "GET", "/api/projects")
    assert projects[0]["drift_checked"] is True
    _, prop, _ = request(server, "POST", f"/api/sync/proposal?project={proj.id}", {},
                         {"X-Agentctx-Token": token_of(server)})
    assert projects[0]["drift"] == len(prop["candidates"]) > 0
    Path(proj.root, "CLAUDE.md").write_text("# Widgets\n\n- Use Kafka for the payment events.\n")
    _, projects, _ = request(server, "GET", "/api/projects")
    _, prop, _ = request(server, "POST", f"/api/sync/proposal?project={proj.id}", {},
                         {"X-Agentctx-Token": token_of(server)})
    assert projects[0]["drift"] == len(prop["candidates"])


def test_the_graph_holds_records_files_and_supersession(server, store, proj):
    _, g, _ = request(server, "GET", f"/api/graph?project={proj.id}")
    nodes = {n["id"]: n for n in g["nodes"]}
    assert store["bug"] in nodes  # a record without links is still drawn
    assert nodes[store["rest"]]["current"] is False and nodes[store["grpc"]]["current"] is True
    assert {n["label"] for n in g["nodes"] if n["kind"] == "file"} == {
        "src/payments/events.py", "src/rpc/client.py", "migrations/0001.sql"}
    rels = {(link["source"], link["target"], link["rel"]) for link in g["links"]}
    assert (store["grpc"], store["rest"], "supersedes") in rels
    assert sum(1 for link in g["links"] if link["rel"] == "applies_to") == 4
    assert g["current_records"] == g["shown_records"] == 5


def test_the_profile_carries_the_detected_values(server, store, proj, conn):
    records.add(conn, proj.id, type="profile", key="profile.test_command", title="Test command",
                body="make test (detected from Makefile)", confidence="inferred")
    _, prof, _ = request(server, "GET", f"/api/profile?project={proj.id}")
    assert [(f["key"], f["title"], f["body"]) for f in prof["project"]] == [
        ("profile.test_command", "Test command", "make test (detected from Makefile)")]


FORGED = [
    ("forged Host", "GET", "/api/projects", {"Host": "attacker.example:80"}),
    ("rebinding Host, right port", "GET", "/api/projects", {"Host": "rebind.attacker.example:{port}"}),
    ("Host without the port", "GET", "/", {"Host": "localhost"}),
    ("cross-site fetch", "GET", "/api/projects", {"Sec-Fetch-Site": "cross-site"}),
    ("same-site, other port", "GET", "/api/projects", {"Sec-Fetch-Site": "same-site"}),
    ("foreign Origin", "GET", "/api/projects", {"Origin": "http://evil.example"}),
]


@pytest.mark.parametrize("name,method,path,headers", FORGED, ids=[f[0] for f in FORGED])
def test_forged_reads_are_refused(server, name, method, path, headers):
    headers = {k: v.format(port=server.port) for k, v in headers.items()}
    status, body, _ = request(server, method, path, headers=headers)
    assert status == 403 and body["error"].startswith("refused")


def test_refused_writes_change_nothing(server, store, proj, conn):
    token = token_of(server)
    good = {"X-Agentctx-Token": token}
    path = f"/api/records/{store['kafka']}/edit?project={proj.id}"
    change = {"title": "HIJACKED"}
    before = store_snapshot(conn)
    port = server.port
    attempts = {
        "no token": {},
        "wrong token": {"X-Agentctx-Token": token[:-1] + ("A" if token[-1] != "A" else "B")},
        "token in the query, not the header": {},
        "empty token": {"X-Agentctx-Token": ""},
        "cross-site POST with the token": {**good, "Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
        "Origin mismatch": {**good, "Origin": f"http://localhost:{port + 1}"},
        "Origin null": {**good, "Origin": "null"},
        "forged Host": {**good, "Host": f"evil.example:{port}"},
    }
    for name, headers in attempts.items():
        where = path + (f"&token={token}" if "query" in name else "")
        status, body, _ = request(server, "POST", where, change, headers)
        assert status == 403, name
    # a second token header (one right, one wrong) is ambiguous: refused
    conn_ = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn_.putrequest("POST", path, skip_host=True)
    for k, v in (("Host", f"127.0.0.1:{port}"), ("Content-Type", "application/json"),
                 ("Content-Length", str(len(json.dumps(change)))),
                 ("X-Agentctx-Token", token), ("X-Agentctx-Token", "wrong")):
        conn_.putheader(k, v)
    conn_.endheaders(json.dumps(change).encode())
    assert conn_.getresponse().status == 403
    conn_.close()
    assert store_snapshot(conn) == before
    # and the same request with the token, same-origin, goes through
    status, _, _ = request(server, "POST", path, change, {**good, "Origin": f"http://127.0.0.1:{port}",
                                                          "Sec-Fetch-Site": "same-origin"})
    assert status == 200 and records.resolve(conn, store["kafka"], all_projects=True)["title"] == "HIJACKED"


def test_each_start_has_its_own_token(store, tmp_path, proj):
    first = Server(tmp_path, project_id=proj.id)
    try:
        token = token_of(first)
    finally:
        first.stop()
    second = Server(tmp_path, project_id=proj.id)
    try:
        assert token_of(second) != token
        status, _, _ = request(second, "POST", f"/api/records/x/pin?project={proj.id}", {"on": True},
                               {"X-Agentctx-Token": token})
        assert status == 403
    finally:
        second.stop()


def test_listens_on_loopback_only(server):
    out = subprocess.run(["ss", "-ltnH", f"sport = :{server.port}"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("ss not available")
    addresses = {line.split()[3] for line in out.stdout.splitlines() if line.strip()}
    assert addresses == {f"127.0.0.1:{server.port}"}


def test_exits_when_idle(store, tmp_path, proj):
    srv = Server(tmp_path, project_id=proj.id, idle_minutes=0.02)  # 1.2 s
    try:
        assert srv.proc.wait(timeout=60) == 0
    finally:
        srv.stop()


def test_ctx_ui_command_starts_it_detached_and_reuses_it(store, repo, tmp_path):
    """/ctx-ui's `!` command as bash runs it (bin/agentctx → uv → `agentctx ui --detach`)."""
    text = (ROOT / "commands" / "ctx-ui.md").read_text()
    (command,) = re.findall(r"!`([^`]+)`", text)
    script = command.replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT)).replace("$ARGUMENTS", "--no-browser --idle-minutes 2")

    def run():
        return subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True, timeout=240)

    first = run()
    url = re.search(r"http://127\.0\.0\.1:(\d+)/#/records\?project=\S+", first.stdout)
    assert first.returncode == 0 and url, first.stdout + first.stderr
    port = int(url.group(1))
    info = json.loads((tmp_path / "data" / "ui" / "server.json").read_text())
    try:
        assert info["port"] == port
        second = run()
        assert second.returncode == 0 and second.stdout == first.stdout  # the same server, not a second one
        status, health, _ = request(SimpleNamespace(port=port), "GET", "/api/health")
        assert status == 200 and health["pid"] == info["pid"]
    finally:
        os.kill(info["pid"], signal.SIGTERM)


def test_foreground_ui_opens_the_browser_and_exits_when_idle(store, repo, tmp_path):
    """`agentctx ui` in the foreground: the browser ($BROWSER, as Python's webbrowser reads it) gets the URL,
    and the command returns once the server went idle."""
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": f"{browser} %s"}
    done = subprocess.run([sys.executable, "-m", "agentctx.surfaces.cli", "--project", str(repo), "ui", "--idle-minutes", "0.05"],
                          capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr
    url = re.search(r"agentctx dashboard: (http://127\.0\.0\.1:\d+/#/records\?project=\w+)", done.stdout).group(1)
    assert opened.read_text().split() == [url]
    assert not (tmp_path / "data" / "ui" / "server.json").exists()  # removed on exit
