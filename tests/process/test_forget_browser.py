"""Forget and purge from the dashboard in real headless Chromium: each asks for confirmation first, then the
store is checked."""

from __future__ import annotations

from agentctx.store import records
from tests.process.test_ui_browser import card, chromium, open_view, page, shot  # noqa: F401 - fixtures


def test_forget_and_purge_ask_first(page, server, store, proj, conn):  # noqa: F811
    open_view(page, server, "records", proj.id)
    page.wait_for_selector('[data-testid="results"]')
    kafka = card(page, store["kafka"])
    kafka.locator('[data-testid="forget"]').click()
    confirm = kafka.locator('[data-testid="forget-confirm"]')
    assert "history keeps it" in confirm.inner_text()
    confirm.locator("text=Cancel").click()
    assert records.get(conn, store["kafka"], proj.id)["superseded_at"] is None  # cancelled: nothing changed
    kafka.locator('[data-testid="forget"]').click()
    kafka.locator('[data-testid="forget-yes"]').click()
    page.wait_for_selector(f'[data-testid="record"][data-id="{store["kafka"]}"]', state="detached")
    rec = records.get(conn, store["kafka"], proj.id)
    assert rec["superseded_at"] and rec["superseded_by"] is None

    conv = card(page, store["conv"])
    conv.locator('[data-testid="purge"]').click()
    assert "cannot be undone" in conv.locator('[data-testid="purge-confirm"]').inner_text()
    shot(page, "purge-confirm")
    conv.locator('[data-testid="purge-yes"]').click()
    notice = page.wait_for_selector('[data-testid="records-notice"]')
    assert notice.inner_text().startswith(f"Purged {store['conv']} “Migrations are forward-only”: removed 1 records")
    assert records.get(conn, store["conv"], proj.id) is None
    page.select_option('[data-testid="filter-status"]', "superseded")
    page.wait_for_selector(f'[data-testid="record"][data-id="{store["kafka"]}"]')
    assert "forgotten" in card(page, store["kafka"]).inner_text()
    assert page.problems == []
