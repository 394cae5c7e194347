"""``agentctx demo``: a sample project store, and what Claude is given from it.

Runs offline with no account: it writes a throwaway store and project, then calls the
same hook handlers Claude Code runs (SessionStart, UserPromptSubmit) and shows their output.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

SAMPLE = [
    # (type, title, body, extra)
    ("profile", "Test command", "uv run pytest -q", {"key": "profile.test_command"}),
    ("profile", "Stack", "Python 3.12, FastAPI, PostgreSQL 16, deployed on Fly.io", {"key": "profile.stack"}),
    ("profile", "Lint command", "uv run ruff check .", {"key": "profile.lint_command"}),
    ("decision", "Services talk to each other over REST/JSON",
     "Internal calls between payments-api and the ledger service use REST with JSON bodies.",
     {"valid_from": "2026-01-12"}),
    ("decision", "Money is stored as integer cents",
     "Never floats: amounts are BIGINT cents with an ISO 4217 currency column.", {"valid_from": "2026-01-05", "pinned": True}),
    ("decision", "Auth uses short-lived JWTs issued by the gateway",
     "Services verify the gateway's JWT (5 min expiry); no session cookies.", {"valid_from": "2026-02-02"}),
    ("convention", "Errors are RFC 9457 problem+json", "Every 4xx/5xx body is application/problem+json with a type URI.", {}),
    ("convention", "Migrations are forward-only", "Alembic migrations never edit a released migration; add a new one.", {}),
    ("bugfix", "Webhook retries double-charged on timeout",
     "Idempotency keys are now required on POST /charges; the retry worker reuses the original key.", {}),
    ("discovery", "The ledger sandbox resets every night at 02:00 UTC",
     "Integration tests that run across midnight UTC fail; schedule CI before 01:30.", {}),
    ("handover", "Refunds: endpoint drafted, ledger call pending",
     "POST /refunds validates and persists; next: call the ledger service and add the webhook event.", {}),
    ("preference", "Prefers small commits with imperative subject lines",
     "Stated explicitly; applies to every project.", {"scope": "global"}),
]
PROMPTS = (
    "The integration tests failed again last night around midnight, any idea why?",
    "Why did webhook retries double-charge customers?",
    "How should the new refunds endpoint call the ledger service?",
)


def run(home: str | None = None, echo: Callable[[str], None] = print) -> None:
    """Build the sample store under ``home`` (or a temp dir) and narrate what gets injected."""
    base = os.path.abspath(home) if home else tempfile.mkdtemp(prefix="agentctx-demo-")
    os.environ["AGENTCTX_HOME"] = os.path.join(base, "data")
    workdir = os.path.join(base, "payments-api")
    os.makedirs(os.path.join(workdir, ".git"), exist_ok=True)
    with open(os.path.join(workdir, ".git", "config"), "w", encoding="utf-8") as fh:
        fh.write('[remote "origin"]\n\turl = git@github.com:acme/payments-api.git\n')

    from agentctx import clock, project
    from agentctx.events.session_start import on_session_start
    from agentctx.events.user_prompt_submit import on_user_prompt_submit
    from agentctx.hookio import HookEvent
    from agentctx.store import db, projects, records

    conn = db.connect()
    proj = project.detect(workdir)
    projects.register(conn, proj)
    if not records.active(conn, proj.id, limit=1):
        for rtype, title, body, extra in SAMPLE:
            vf = extra.get("valid_from")
            records.add(
                conn, proj.id, type=rtype, title=title, body=body, key=extra.get("key"),
                scope=extra.get("scope", "project"), pinned=extra.get("pinned", False),
                valid_from=clock.parse(vf) if vf else None, source="demo",
            )

    def show(title: str, text: str) -> None:
        echo(f"\n=== {title} ===")
        echo(text or "(nothing)")

    def context(out: dict | None) -> str:
        return (out or {}).get("hookSpecificOutput", {}).get("additionalContext", "")

    echo(f"agentctx demo · store {os.environ['AGENTCTX_HOME']} · project {proj.name} ({proj.id})")
    s1 = {"session_id": "demo-1", "cwd": workdir, "source": "startup"}
    show("1. SessionStart injects (hard cap 1,500 tokens)", context(on_session_start(HookEvent("SessionStart", s1))))
    for n, prompt in ((2, PROMPTS[0]), (3, PROMPTS[1])):
        show(f"{n}. UserPromptSubmit for {prompt!r}", context(on_user_prompt_submit(HookEvent("UserPromptSubmit", {**s1, "prompt": prompt}))))
    show("4. The same prompt again in this session: nothing is repeated",
         context(on_user_prompt_submit(HookEvent("UserPromptSubmit", {**s1, "prompt": PROMPTS[1]}))))

    rest = next(r for r in records.active(conn, proj.id, ["decision"]) if "REST" in r["title"])
    new = records.supersede(
        conn, proj.id, rest["id"], title="Services talk to each other over gRPC",
        body="payments-api and the ledger service use gRPC with protobuf contracts in /proto.",
        rationale="REST payload validation cost too much latency on the ledger hot path.",
        valid_from=clock.parse("2026-03-01"),
    )
    echo(f"\n=== 5. Decision superseded: {rest['title']!r} → {new['title']!r} (valid from 2026-03-01) ===")
    s2 = {**s1, "session_id": "demo-2"}
    text = context(on_session_start(HookEvent("SessionStart", s2)))
    show("6. Next SessionStart: decisions now in force (REST is gone, gRPC is in)",
         "\n".join(line for line in text.splitlines() if "[decision]" in line))
    s3 = {**s1, "session_id": "demo-3"}
    show(f"7. A prompt in a session without the digest: {PROMPTS[2]!r}",
         context(on_user_prompt_submit(HookEvent("UserPromptSubmit", {**s3, "prompt": PROMPTS[2]}))))
    before = records.history(conn, proj.id, at=clock.parse("2026-02-15", end_of_day=True), types=["decision"])
    show("8. History: decisions that were true on 2026-02-15 (as known today)",
         "\n".join(f"- {r['title']} (valid from {r['valid_from'][:10]})" for r in before))
    conn.close()
    echo(f"\nExplore it: AGENTCTX_HOME={os.environ['AGENTCTX_HOME']} uv run agentctx "
         f"--project {workdir} status   (or: list, search, get <id>, history --at 2026-02-15, export)")
