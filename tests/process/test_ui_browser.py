"""The dashboard in real headless Chromium (Debian's /usr/bin/chromium driven by Playwright): search,
edit, pin and supersede through the pages with the store checked afterwards; every page, with data and
empty, checked by what it shows; keyboard use. A screenshot of every page goes to tests/artifacts/ui/
(gitignored): look at them after a change to the dashboard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentctx.store import projects, records, sessions
from tests.support.ui_server import Server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).parents[1] / "artifacts" / "ui"

if not os.path.exists(CHROMIUM):
    if os.environ.get("CI"):
        raise RuntimeError(f"{CHROMIUM} is missing: .ci/run installs it")
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()




@pytest.fixture
def page(chromium, server):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.problems = []  # console errors, page errors, failed requests: the page must load cleanly
    pg.on("console", lambda m: m.type == "error" and pg.problems.append(m.text))
    pg.on("pageerror", lambda e: pg.problems.append(str(e)))
    pg.on("requestfailed", lambda r: pg.problems.append(f"{r.url}: {r.failure}"))
    yield pg
    context.close()


def shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def open_view(page, server, view: str, project_id: str) -> None:
    page.goto(f"{server.url}/#/{view}?project={project_id}")


def card(page, record_id: str):
    return page.locator(f'[data-testid="record"][data-id="{record_id}"]')


def test_search_edit_pin_supersede(page, server, store, proj, conn):
    open_view(page, server, "records", proj.id)
    page.wait_for_selector('[data-testid="results"]')
    page.fill('[data-testid="search"]', "kafka payment")
    page.click('[data-testid="search-go"]')
    page.wait_for_selector('[data-testid="results"][data-count="1"]')
    assert card(page, store["kafka"]).is_visible()
    shot(page, "records-search")

    # pin
    card(page, store["kafka"]).locator('[data-testid="pin"]').click()
    card(page, store["kafka"]).locator(".tag.pin").wait_for()
    assert records.resolve(conn, store["kafka"], all_projects=True)["pinned"] == 1

    # edit (clear the search first: all current records)
    page.fill('[data-testid="search"]', "")
    page.click('[data-testid="search-go"]')
    conv = card(page, store["conv"])
    conv.locator('[data-testid="edit"]').click()
    form = conv.locator('[data-testid="edit-form"]')
    form.locator('input[name="title"]').fill("Migrations are forward-only and reviewed")
    form.locator('textarea[name="body"]').fill("Never edit a released migration; password=hunter2hunter2")
    form.locator('button[type="submit"]').click()
    page.wait_for_selector("text=Migrations are forward-only and reviewed")
    edited = records.resolve(conn, store["conv"], all_projects=True)
    assert edited["title"] == "Migrations are forward-only and reviewed"
    assert "hunter2" not in edited["body"]  # redacted on the way in, as on the command line

    # supersede
    bug = card(page, store["bug"])
    bug.locator('[data-testid="supersede"]').click()
    form = bug.locator('[data-testid="supersede-form"]')
    # The form takes the focus once it has rendered: type only then, as a person does (filling the
    # fields in the same instant the form opens could be lost to that first render).
    page.wait_for_function("() => document.activeElement && document.activeElement.closest("
                           "'[data-testid=\"supersede-form\"]')")
    form.locator('textarea[name="body"]').fill("WAL mode and a 5 s busy timeout fixed it")
    form.locator('input[name="rationale"]').fill("root cause found")
    assert form.locator('textarea[name="body"]').input_value() == "WAL mode and a 5 s busy timeout fixed it"
    shot(page, "records-supersede-form")
    form.locator('button[type="submit"]').click()
    page.wait_for_selector("text=WAL mode and a 5 s busy timeout fixed it")
    old = records.resolve(conn, store["bug"], all_projects=True)
    assert old["superseded_by"]
    new = records.resolve(conn, old["superseded_by"], all_projects=True)
    assert new["body"].startswith("WAL mode and a 5 s busy timeout fixed it") and "root cause found" in new["body"]
    assert card(page, store["bug"]).count() == 0  # gone from the current view

    # the superseded filter shows it
    page.select_option('[data-testid="filter-status"]', "superseded")
    card(page, store["bug"]).wait_for()
    shot(page, "records-superseded")
    assert page.problems == []


def test_validation_error_is_shown_and_nothing_changes(page, server, store, proj, conn):
    open_view(page, server, "records", proj.id)
    kafka = card(page, store["kafka"])
    kafka.locator('[data-testid="edit"]').click()
    kafka.locator('input[name="title"]').fill("   ")
    kafka.locator('button[type="submit"]').click()
    assert "non-empty title" in kafka.locator('[data-testid="record-error"]').inner_text()
    assert records.resolve(conn, store["kafka"], all_projects=True)["title"] == "Use Kafka for the payment events"


def shown(page) -> str:
    """The text a person sees in the page's main area."""
    return page.inner_text("main")


def test_graph_draws_records_files_and_supersession_with_labels(page, server, store, proj):
    open_view(page, server, "graph", proj.id)
    page.wait_for_selector('[data-testid="graph"] canvas')
    assert page.inner_text('[data-testid="graph-info"]') == (
        "6 records (1 superseded version), 3 files, 1 supersession, 4 file links")
    # the canvas gets drawn: wait until it holds non-blank pixels
    page.wait_for_function("""() => {
      const c = document.querySelector('[data-testid="graph"] canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n > 500;
    }""")
    nodes = page.evaluate("() => window.__agentctxGraph.graphData().nodes.map(n => n.id)")
    assert {store["grpc"], store["rest"], store["bug"]} <= set(nodes)  # unlinked records are drawn too
    files = page.inner_text('[data-testid="graph-files"]')
    assert "src/rpc/client.py: Services talk REST between each other; Services talk gRPC between each other" in files \
        or "src/rpc/client.py: Services talk gRPC between each other; Services talk REST between each other" in files
    chains = page.inner_text('[data-testid="graph-chains"]')
    assert "Services talk gRPC between each other ← Services talk REST between each other" in chains
    page.wait_for_timeout(2500)  # let the layout settle and zoom to fit for the screenshot (not an assertion)
    shot(page, "graph")
    assert page.problems == []


def test_every_page_with_data(page, server, store, proj, conn):
    records.add(conn, proj.id, type="profile", key="profile.test_command", title="Test command",
                body="uv run pytest (detected from pyproject.toml)", confidence="inferred")

    open_view(page, server, "projects", proj.id)
    page.wait_for_selector('[data-testid="projects"] >> text=widgets')
    drift = page.inner_text('[data-testid="project-drift"]')
    shot(page, "projects")

    open_view(page, server, "records", proj.id)
    page.wait_for_selector('[data-testid="results"][data-count="6"]')
    assert "6 current records" in shown(page) and "Use Kafka for the payment events" in shown(page)
    shot(page, "records")

    open_view(page, server, "profile", proj.id)
    page.wait_for_selector('[data-testid="profile-fact"]')
    fact = page.inner_text('[data-testid="profile-fact"]')
    assert "Test command" in fact and "uv run pytest (detected from pyproject.toml)" in fact  # the value, not only the key
    assert "Prefer small pure functions" in shown(page)
    shot(page, "profile")

    open_view(page, server, "sessions", proj.id)
    bars = page.locator('[data-testid="chart-tokens"] rect[data-testid="bar"]')
    bars.first.wait_for()
    heights = [float(bars.nth(i).get_attribute("height")) for i in range(bars.count())]
    assert len(heights) == 4 and heights.index(max(heights)) == 2  # 2,100 tokens on 2026-11-25
    cost = page.locator('[data-testid="chart-cost"]')
    assert cost.locator('rect[data-testid="bar"]').count() == 4
    assert "$0.0110" in cost.text_content() and "$1.0000" not in shown(page)  # scaled to the real maximum
    assert "4 sessions · 4,500 tokens injected · 4 extraction runs · extraction cost $0.0170" in shown(page)
    shot(page, "sessions")

    open_view(page, server, "sync", proj.id)
    page.wait_for_selector('[data-testid="proposal-line"]')
    assert "Use Kafka for the payment events" in page.inner_text('[data-testid="proposal"]')
    page.wait_for_selector('[data-testid="diff"]')
    count = int(page.inner_text('[data-testid="drift-count"]'))
    assert drift == f"{count} candidate" + ("s" if count != 1 else "")  # Projects and Sync agree
    shot(page, "sync")
    assert page.problems == []


@pytest.fixture
def empty_server(conn, proj, tmp_path):
    """A store that knows the project and nothing else: no records, sessions or CLAUDE.md."""
    projects.register(conn, proj)
    srv = Server(tmp_path, project_id=proj.id)
    yield srv
    srv.stop()


def test_every_page_when_empty_says_what_to_do_next(chromium, empty_server, proj, conn):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        for view, ready, expected in [
            ("records", '[data-testid="records-empty"]', "agentctx record --type decision"),
            ("graph", '[data-testid="graph-empty"]', "Nothing to draw yet: this project has no records"),
            ("profile", '[data-testid="profile-facts-empty"]', "Nothing detected for this project yet"),
            ("sessions", '[data-testid="sessions-empty"]', "Start one with claude in the project folder"),
            ("sync", '[data-testid="drift-none"]', "There is no CLAUDE.md, and nothing to put in one yet"),
            ("projects", '[data-testid="projects"]', "none"),
        ]:
            open_view(page, empty_server, view, proj.id)
            page.wait_for_selector(ready)
            assert expected in shown(page), (view, shown(page))
            shot(page, f"empty-{view}")
        open_view(page, empty_server, "sync", proj.id)
        page.wait_for_selector('[data-testid="drift-none"]')
        assert "agrees with the store" not in shown(page)  # no CLAUDE.md is not agreement
        open_view(page, empty_server, "profile", proj.id)
        page.wait_for_selector('[data-testid="preferences-empty"]')
        assert "agentctx record --type preference --scope global" in shown(page)

        # records, but no links and no cost: the graph says why it has no lines, the cost chart is not drawn
        records.add(conn, proj.id, type="decision", title="Deploy with Helm charts")
        for i, day in enumerate(("2026-11-20", "2026-11-21")):
            sessions.start(conn, f"free-{i}", proj.id, proj.root, "startup")
            conn.execute("UPDATE sessions SET started_at = ?, tokens_injected = 500, extraction_runs = 1, "
                         "extraction_cost_usd = 0 WHERE session_id = ?", (f"{day}T10:00:00.000000Z", f"free-{i}"))
        open_view(page, empty_server, "graph", proj.id)
        page.wait_for_selector('[data-testid="graph-no-links"]')
        assert "ctx_record(…, files=[…])" in shown(page)
        page.wait_for_timeout(1500)
        shot(page, "graph-no-links")
        open_view(page, empty_server, "sessions", proj.id)
        page.wait_for_selector('[data-testid="cost-none"]')
        assert page.locator('[data-testid="chart-cost"]').count() == 0
        assert "Extraction cost: $0 in every session" in shown(page) and "$1.0000" not in shown(page)
        shot(page, "sessions-zero-cost")
        open_view(page, empty_server, "records", proj.id)
        page.wait_for_selector('[data-testid="results"][data-count="1"]')
        page.fill('[data-testid="search"]', "kubernetes operators")
        page.click('[data-testid="search-go"]')
        page.wait_for_selector('[data-testid="records-none-match"]')
        shot(page, "records-no-match")
        page.click('[data-testid="records-none-match"] button')
        page.wait_for_selector('[data-testid="results"][data-count="1"]')
    finally:
        context.close()
    assert problems == []


def test_no_project_yet(chromium, home, tmp_path):
    srv = Server(tmp_path)
    context = chromium.new_context(viewport={"width": 1280, "height": 700})
    try:
        page = context.new_page()
        page.goto(f"{srv.url}/#/projects")
        page.wait_for_selector('[data-testid="projects-empty"]')
        assert "uv run agentctx demo --home /tmp/agentctx-demo" in page.inner_text("main")
        shot(page, "projects-empty")
    finally:
        context.close()
        srv.stop()


def test_the_dashboard_works_from_the_keyboard(page, server, store, proj, conn):
    open_view(page, server, "records", proj.id)
    page.wait_for_selector('[data-testid="results"]')

    def tab_to(testid: str, limit: int = 60) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement && document.activeElement.dataset.testid") == testid:
                return
        raise AssertionError(f"Tab never reached {testid}")

    tab_to("nav-sessions")
    page.keyboard.press("Enter")
    page.wait_for_selector('[data-testid="sessions"]')
    assert page.evaluate("() => location.hash").startswith("#/sessions")
    open_view(page, server, "records", proj.id)
    page.wait_for_selector('[data-testid="results"][data-count="5"]')
    first = page.locator('[data-testid="record"]').first.get_attribute("data-id")
    tab_to("pin")
    assert page.evaluate("() => document.activeElement.closest('[data-testid=record]').dataset.id") == first
    page.keyboard.press("Enter")
    card(page, first).locator(".tag.pin").wait_for()
    assert records.resolve(conn, first, all_projects=True)["pinned"] == 1
    tab_to("edit")
    page.keyboard.press("Enter")
    page.wait_for_selector('[data-testid="edit-form"]')
    # the opened form takes the focus (an effect right after it renders)
    page.wait_for_function("() => document.activeElement && document.activeElement.name === 'title'", timeout=5000)
    focus_ring = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert focus_ring != "none"  # the focused control is visibly marked
    shot(page, "keyboard-edit")
    assert page.problems == []


def test_a_page_from_another_origin_cannot_write(chromium, server, store, proj, conn, tmp_path):
    """A page served from another local port (cross-origin, same-site) posts to the dashboard the way a CSRF
    page would: Chromium sends its Origin and Sec-Fetch-Site, the server refuses, the store is unchanged."""
    import http.server
    import threading

    target = f"{server.url}/api/records/{store['kafka']}/edit?project={proj.id}"
    (tmp_path / "evil.html").write_text(f"""<!doctype html><script>
      fetch({json_str(target)}, {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
                                   body: '{{"title": "HIJACKED"}}'}}).finally(() => document.title = "sent");
    </script>""")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path))  # noqa: E731
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://localhost:{evil.server_address[1]}/evil.html")
        page.wait_for_function("document.title === 'sent'")
    finally:
        context.close()
        evil.shutdown()
    # the response is opaque to the page; the server's log says why it refused (before any handler ran)
    log = (tmp_path / "data" / "logs" / "agentctx.log").read_text()
    assert f"ui refused POST /api/records/{store['kafka']}/edit: cross-site request" in log
    assert records.resolve(conn, store["kafka"], all_projects=True)["title"] == "Use Kafka for the payment events"


def json_str(value: str) -> str:
    import json

    return json.dumps(value)
