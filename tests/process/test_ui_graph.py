"""The dashboard graph in real headless Chromium, at 10 and at ~500 nodes: no two labels overlap, every mark
and label lies inside the canvas, a handover's chain of versions is one node, and a traceback's ``<string>`` is
never a file node (the data layer refuses it; an older store's is not drawn). Screenshots go to
tests/artifacts/ui/graph-10.png and graph-500.png: look at them after a change to the graph."""

from __future__ import annotations

import json

import pytest

from agentctx.store import graph, projects, records
from tests.process.test_ui_browser import CHROMIUM, shot  # noqa: F401 - skips the module without Chromium
from tests.support.hooks import run_hook
from tests.support.ui_server import Server

TYPES = ("decision", "convention", "bugfix", "discovery", "preference")
WORDS = ("ledger", "payments", "retry", "queue", "schema", "cache", "token", "invoice", "worker", "export", "login",
         "search", "upload", "report", "billing", "session")


def seed(conn, proj, n_records: int, n_files: int) -> dict:
    """``n_records`` current records (one superseded twice), ``n_files`` files linked to them, a handover
    rewritten by five sessions, and a ``<string>`` file node as an older version could have stored it."""
    projects.register(conn, proj)
    files = [graph.entity(conn, proj.id, "file", f"src/{WORDS[i % len(WORDS)]}/{WORDS[(i * 7) % len(WORDS)]}_{i}.py")
             for i in range(n_files)]
    ids = []
    for i in range(n_records - 2):
        title = (f"{WORDS[i % len(WORDS)].capitalize()} {WORDS[(i * 3 + 1) % len(WORDS)]} rule {i}: keep the "
                 f"{WORDS[(i * 5 + 2) % len(WORDS)]} path idempotent")
        rid = records.add(conn, proj.id, type=TYPES[i % len(TYPES)], title=title, body="")["id"]
        ids.append(rid)
        for k in range(i % 3):
            if files:
                graph.link(conn, rid, files[(i + k * 11) % len(files)])
    first = records.add(conn, proj.id, type="decision", title="Services talk REST", body="JSON")["id"]
    second = records.supersede(conn, proj.id, first, title="Services talk gRPC", body="protobuf")["id"]
    records.supersede(conn, proj.id, second, title="Services talk gRPC through the mesh", body="mTLS")
    hand = records.add(conn, proj.id, type="handover", key="handover.current", title="Handover 1", body="step 1")
    for n in range(2, 6):
        hand = records.supersede(conn, proj.id, hand["id"], title=f"Handover {n}", body=f"step {n}")
    bad = "01BADNODE0000000000000000"
    conn.execute("INSERT INTO nodes (id, project_id, kind, name, created_at) VALUES (?, ?, 'file', '<string>', "
                 "'2026-01-01T00:00:00.000000Z')", (bad, proj.id))
    if ids:
        graph.link(conn, ids[0], bad)
    return {"handover": hand["id"]}


def open_graph(chromium, server, proj, name: str) -> dict:
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    try:
        page.goto(f"{server.url}/#/graph?project={proj.id}")
        page.wait_for_selector('[data-testid="graph"] canvas')
        page.wait_for_function("() => window.__agentctxGraphFitted === true", timeout=120_000)
        out = page.evaluate("""() => {
          const g = window.__agentctxGraph, c = document.querySelector('[data-testid="graph"] canvas');
          return {width: c.clientWidth, height: c.clientHeight, labels: window.__agentctxLabels,
                  nodes: g.graphData().nodes.map(n => ({id: n.id, kind: n.kind, label: n.label, folded: n.folded,
                                                        ...g.graph2ScreenCoords(n.x, n.y)}))};
        }""")
        out["chains"] = page.inner_text('[data-testid="graph-chains"]')
        out["files"] = page.inner_text('[data-testid="graph-files"]')
        shot(page, name)
        canvas = shot.__globals__["ARTIFACTS"] / f"{name}-canvas.png"
        page.locator('[data-testid="graph"]').screenshot(path=str(canvas))  # the drawing alone, to look at
        out["problems"] = problems
        return out
    finally:
        context.close()


def check_readable(drawn: dict) -> None:
    width, height, labels = drawn["width"], drawn["height"], drawn["labels"]
    for n in drawn["nodes"]:  # every mark inside the canvas, clear of the edge
        assert 6 <= n["x"] <= width - 6 and 6 <= n["y"] <= height - 6, n
    for box in labels:
        assert box["x0"] >= 0 and box["y0"] >= 0 and box["x1"] <= width and box["y1"] <= height, box
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not (a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]), (a, b)
    assert not any("<string>" in n["label"] for n in drawn["nodes"]) and "<string>" not in drawn["files"]
    handovers = [n for n in drawn["nodes"] if n["kind"] == "record" and n["label"].startswith("Handover")]
    assert [(h["label"], h["folded"]) for h in handovers] == [("Handover 5", 4)]  # one node for the chain
    assert "Handover" not in drawn["chains"] and "Services talk gRPC through the mesh ← Services talk gRPC" in drawn[
        "chains"]
    assert drawn["problems"] == []


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    from tests.process.test_ui_browser import ARGS

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.mark.parametrize(("n_records", "n_files", "name"), [(6, 3, "graph-10"), (300, 190, "graph-500")])
def test_the_graph_is_readable(chromium, conn, proj, tmp_path, n_records, n_files, name):
    seed(conn, proj, n_records, n_files)
    srv = Server(tmp_path, project_id=proj.id)
    try:
        drawn = open_graph(chromium, srv, proj, name)
    finally:
        srv.stop()
    count = len(drawn["nodes"])
    assert (count == 10) if n_records == 6 else (450 <= count <= 520), count
    check_readable(drawn)
    if n_records == 6:  # at this size every name fits
        assert {b["id"] for b in drawn["labels"]} == {n["id"] for n in drawn["nodes"]}
    else:
        assert len(drawn["labels"]) >= 60, len(drawn["labels"])  # 81 with this seed (a fixed layout)
    print(f"{name}: {count} nodes, {len(drawn['labels'])} labels drawn")


def test_a_traceback_pseudo_file_is_never_a_file_node(repo, home, conn):
    from agentctx import project

    proj = project.detect(str(repo))
    with pytest.raises(ValueError, match="not a file name"):
        graph.entity(conn, proj.id, "file", "<string>")
    assert graph.is_file_name("src/app.py") and not graph.is_file_name("<frozen importlib._bootstrap>")
    (repo / "app.py").write_text("x = 1\n")
    failing = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "python -c 'import app; app.run()'"},
               "error": 'Exit code 1\nTraceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
                        '  File "' + str(repo / "app.py") + '", line 3, in run\nKeyError: \'PAYMENTS_TOKEN\''}
    assert run_hook("post_tool_use", json.dumps(failing), home).returncode == 0
    names = [r[0] for r in conn.execute("SELECT name FROM nodes WHERE kind IN ('file', 'module')")]
    assert "<string>" not in names and "app.py" in names
