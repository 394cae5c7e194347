"""The dashboard in real headless Chromium (Debian's /usr/bin/chromium driven by Playwright): search,
edit, pin and supersede through the pages with the store checked afterwards; the graph and the
sessions chart render. Screenshots go to tests/artifacts/ui/ (gitignored)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentctx.store import records

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).parent / "artifacts" / "ui"

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
    assert records.resolve(conn, store["kafka"])["pinned"] == 1

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
    edited = records.resolve(conn, store["conv"])
    assert edited["title"] == "Migrations are forward-only and reviewed"
    assert "hunter2" not in edited["body"]  # redacted on the way in, as on the command line

    # supersede
    bug = card(page, store["bug"])
    bug.locator('[data-testid="supersede"]').click()
    form = bug.locator('[data-testid="supersede-form"]')
    form.locator('textarea[name="body"]').fill("WAL mode and a 5 s busy timeout fixed it")
    form.locator('input[name="rationale"]').fill("root cause found")
    shot(page, "records-supersede-form")
    form.locator('button[type="submit"]').click()
    page.wait_for_selector("text=WAL mode and a 5 s busy timeout fixed it")
    old = records.resolve(conn, store["bug"])
    assert old["superseded_by"]
    new = records.resolve(conn, old["superseded_by"])
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
    assert records.resolve(conn, store["kafka"])["title"] == "Use Kafka for the payment events"


def test_graph_renders(page, server, store, proj):
    open_view(page, server, "graph", proj.id)
    page.wait_for_selector('[data-testid="graph"] canvas')
    assert page.inner_text('[data-testid="graph-info"]').startswith("7 nodes, 5 links")  # 4 linked records, 3 files
    # the canvas gets drawn: wait until it holds non-blank pixels
    page.wait_for_function("""() => {
      const c = document.querySelector('[data-testid="graph"] canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n > 500;
    }""")
    nodes = page.evaluate("() => window.__agentctxGraph.graphData().nodes.map(n => n.id)")
    assert store["grpc"] in nodes and store["rest"] in nodes
    page.wait_for_timeout(1500)  # let the layout settle for the screenshot (not an assertion)
    shot(page, "graph")
    assert page.problems == []


def test_sessions_chart_and_other_views_render(page, server, store, proj):
    open_view(page, server, "sessions", proj.id)
    bars = page.locator('[data-testid="chart-tokens"] rect[data-testid="bar"]')
    bars.first.wait_for()
    heights = [float(bars.nth(i).get_attribute("height")) for i in range(bars.count())]
    assert len(heights) == 4 and heights.index(max(heights)) == 2  # 2,100 tokens on 2026-11-25
    assert page.locator('[data-testid="chart-cost"] rect[data-testid="bar"]').count() == 4
    shot(page, "sessions")

    open_view(page, server, "sync", proj.id)
    page.wait_for_selector('[data-testid="proposal-line"]')
    assert "Use Kafka for the payment events" in page.inner_text('[data-testid="proposal"]')
    page.wait_for_selector('[data-testid="diff"]')
    shot(page, "sync")

    open_view(page, server, "profile", proj.id)
    page.wait_for_selector("text=Prefer small pure functions")
    open_view(page, server, "projects", proj.id)
    page.wait_for_selector('[data-testid="projects"] >> text=widgets')
    shot(page, "projects")
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
    assert records.resolve(conn, store["kafka"])["title"] == "Use Kafka for the payment events"


def json_str(value: str) -> str:
    import json

    return json.dumps(value)
