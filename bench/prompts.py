"""Thirty realistic prompts for the UserPromptSubmit benchmark.

They mention terms that bench/make_store.py puts in the store (libraries, modules, error
messages, files), in the lengths developers type: a few words, a paragraph, a pasted stack
trace or log. None is trivial ("ok", "continue"): those return before opening the store.
"""

from __future__ import annotations

_TRACE = """Traceback (most recent call last):
  File "/srv/app/services/billing/invoice_service.py", line 214, in finalize_invoice
    payment = self.repository.fetch_payment(invoice.payment_id)
  File "/srv/app/services/billing/repository.py", line 88, in fetch_payment
    row = conn.execute(query, params).fetchone()
  File "/srv/app/.venv/lib/python3.12/site-packages/sqlalchemy/engine/base.py", line 1412, in execute
    return meth(self, distilled_parameters, execution_options or NO_OPTIONS)
  File "/srv/app/.venv/lib/python3.12/site-packages/sqlalchemy/engine/default.py", line 924, in do_execute
    cursor.execute(statement, parameters)
sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) deadlock detected while waiting for ShareLock on transaction 4821937
DETAIL:  Process 31337 waits for ShareLock on transaction 4821937; blocked by process 31338.
HINT:  See server log for query details.
[SQL: SELECT payments.id, payments.amount_cents FROM payments WHERE payments.id = %(id_1)s FOR UPDATE]
"""

_LOG = "\n".join(
    f"2026-05-{day:02d}T0{hour}:1{minute}:03Z worker-{n} celery.worker.strategy INFO Task "
    f"billing.tasks.reconcile_ledger[{n:04x}-{day:02d}] received; retry {n % 5} after "
    f"redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379"
    for n, (day, hour, minute) in enumerate((d, h, m) for d in range(1, 13) for h in range(3) for m in range(6))
)

PROMPTS: list[str] = [
    "why is the webhook retry double charging?",
    "add a migration for the invoice table",
    "fix the flaky checkout test",
    "how do we configure redis for the cache?",
    "what's our convention for naming celery tasks?",
    "refactor the auth middleware to use jwt refresh tokens",
    "upgrade pydantic and fix the validation errors in settings",
    "The ledger reconciliation job is slow again, it takes minutes on a cold cache. Can you profile it and "
    "tell me whether the time goes into the postgres query or into the serializer?",
    "We decided a while ago how pagination should work for the timeline feed (cursor vs offset). Remind me "
    "what we chose and then implement it for the search endpoint too.",
    "Getting `sqlite3.OperationalError: database is locked` when two workers write to the queue at once. "
    "Is there a known fix in this repo?",
    "Write tests for the rate-limiter using pytest and hypothesis; follow the usual layout for tests/unit.",
    "Can you move the notification emails from sendgrid to a queue consumer? Keep the retry/backoff "
    "behaviour we agreed on for webhooks.",
    "kubernetes pods are in CrashLoopBackOff after the deploy, OOMKilled. what did we learn last time?",
    "set up opentelemetry tracing for the gateway and export spans to jaeger",
    "The typescript build fails with ERR_REQUIRE_ESM after bumping vite, how did we handle ESM before?",
    "Please review src/billing/payment_service.py for idempotency problems -- especially refund + payout.",
    "NEAR(stripe webhook) \"signature\" AND -test: what's this error: KeyError: 'user_id' in handler?",
    "Dokumentation für die Zahlungs-API aktualisieren: refund endpoint, idempotency keys, Stripe Webhooks.",
    "支付模块的 webhook 重试逻辑有问题 — check the retry logic in the payment webhook consumer (kafka).",
    "Summarize every decision we made about the tenant permission model and rbac roles; I need it for a "
    "design review tomorrow morning. Include anything about audit logging, and what changed when we moved "
    "from session cookies to jwt. If some decisions were superseded, only give me the current ones, and "
    "point me to the files where each is implemented so I can link them in the doc.",
    "terraform keeps failing with 'Error acquiring the state lock' in CI. How do we unlock it safely and "
    "what is the convention for running terraform in github-actions?",
    "Investigate this:\n" + _TRACE,
    "This started after the deploy last night, any idea?\n" + _TRACE + "\nIt only happens under load "
    "when the reconcile worker and the invoice finalizer run at the same time.",
    "Here are the worker logs from the reconcile job, find the root cause:\n" + _LOG,
    "what does the thumbnail upload handler do with files larger than the limit in storage?",
    "add dark mode to the dashboard using tailwind",
    "the graphql schema for orders is missing the discount field, add it with prisma",
    "Port the geocoding client from requests to httpx with asyncio and keep the timeouts we picked.",
    "Run the linter and the type checker and fix what they report in the pricing module (mypy, ruff).",
    "How did we fix the off-by-one in cursor pagination that dropped the last row? Same bug shows up in "
    "the inventory export now.",
]

assert len(PROMPTS) == 30, len(PROMPTS)
