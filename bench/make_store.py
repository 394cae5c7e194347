"""Build a realistic agentctx store for benchmarks.

Usage (from the repository root)::

    uv run python bench/make_store.py --home /tmp/agentctx-bench/10k --records 10000

Layout of the store that ``build()`` writes:

* ``--records N`` is the TOTAL number of records in the store. About 80% belong to the
  target project (a fake git checkout created under ``<home>/repo`` with an ``origin``
  remote, so ``agentctx.project.detect`` gives the hooks the same project id); the rest is
  spread over 5 other projects. About 25 of the target project's preferences and 10 of the
  others' are developer-profile records (``scope = global``), as the digest reads them.
* All 7 record types, in the proportions a long-lived store accumulates (discoveries and
  bugfixes most, then decisions, handovers, conventions, preferences; a few dozen keyed
  profile records per project, several versions of each key).
* ~10% of the records are superseded (bi-temporal columns, ``superseded_by`` and a
  ``supersedes`` edge, exactly as ``records._retire`` writes them); a few per project are
  pinned; every session left a handover.
* Titles and bodies come from templates filled from word lists of libraries, modules,
  file paths, identifiers, error messages and commands, drawn with a Zipf-like skew, so
  the FTS5 index has a realistic long-tailed vocabulary (not one repeated sentence).
* Timestamps span the last two years, oldest first, so ``seq`` follows time as in a real
  store, and rows are committed in small batches ("sessions"), so the FTS5 index has the
  segment structure many small commits leave rather than one bulk load.

Rows go through the real schema (``agentctx.db.connect`` applies the migrations and the
triggers keep the FTS index and the generation counter in sync). ``--method import``
instead feeds the same records as JSONL through ``agentctx.sharing.transfer.import_jsonl``
(validation and redaction on every record; slower).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "lib") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "lib"))

from agentctx import ids  # noqa: E402

TARGET_SHARE = 0.8
TARGET_REMOTE = "git@github.com:acme/payments-platform.git"
OTHER_PROJECTS = [
    ("github.com/acme/web-dashboard", "web-dashboard"),
    ("github.com/acme/infra-terraform", "infra-terraform"),
    ("github.com/acme/mobile-app", "mobile-app"),
    ("github.com/me/dotfiles", "dotfiles"),
    ("gitlab.com/oss/fastq-parser", "fastq-parser"),
]
YEARS = 2.0

# ---------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------

LIBS = """django flask fastapi starlette sqlalchemy alembic pydantic pytest hypothesis tox nox celery
redis postgres postgresql mysql sqlite fts5 mongodb dynamodb cassandra kafka rabbitmq nats sqs sns
s3 lambda cloudfront cloudwatch ecs eks fargate kubernetes helm istio envoy nginx traefik caddy
docker compose podman terraform pulumi ansible vault consul grpc protobuf graphql apollo prisma
drizzle typeorm sequelize knex react redux zustand nextjs remix vite webpack esbuild rollup babel
typescript eslint prettier jest vitest playwright cypress storybook tailwind svelte vue angular
node deno bun npm pnpm yarn uv poetry pip ruff mypy pyright black isort numpy pandas polars arrow
duckdb spark airflow dagster dbt boto3 requests httpx aiohttp uvicorn gunicorn asyncio trio anyio
structlog loguru sentry datadog prometheus grafana opentelemetry jaeger stripe twilio sendgrid
auth0 keycloak oauth jwt openapi swagger tokio serde axum actix clap rayon anyhow thiserror cargo
gin cobra viper gorm zap chi sqlx pgx gradle maven spring hibernate kotlin jackson junit mockito
rails sidekiq rspec bundler phoenix ecto elixir github-actions circleci jenkins argocd flux
sops age cloudflare vercel netlify fly.io heroku elasticsearch opensearch meilisearch pgvector
faiss langchain openai anthropic tiktoken onnx pytorch tensorflow scikit-learn matplotlib plotly
click typer rich textual tqdm orjson msgpack zstd lz4 ffmpeg imagemagick pillow weasyprint
""".split()

COMPONENTS = """auth login signup session token refresh billing invoice payment payout refund ledger
checkout cart order inventory catalog pricing discount coupon subscription plan trial webhook
notification email sms push digest scheduler cron worker queue consumer producer retry backoff
rate-limiter circuit-breaker cache invalidation migration schema seed fixture api gateway router
middleware handler controller service repository model serializer validator parser tokenizer
renderer template exporter importer upload download storage thumbnail media search index ranking
feed timeline profile user account tenant organization team permission role rbac audit logging
metrics tracing alerting healthcheck config settings feature-flag experiment analytics report
dashboard admin onboarding localization i18n timezone currency tax shipping address geocoding
sync replication backup restore compaction archiver cleanup sandbox staging deploy release
rollback canary build pipeline lint typecheck formatter cli daemon socket websocket sse polling
pagination cursor batching deduplication idempotency locking transaction connection-pool
""".split()

DIRS = """src lib app services api internal pkg cmd web frontend backend core domain infra scripts
tests tests/unit tests/integration migrations config deploy charts docs tools workers jobs
""".split()
EXTS = ".py .py .py .ts .tsx .ts .go .rs .sql .yaml .toml .json .md .sh .js".split()

VERBS = """parse validate serialize normalize fetch load save persist sync retry refresh invalidate
compute render export import upload resolve enqueue dequeue schedule dispatch handle process
emit publish subscribe notify charge refund reconcile migrate backfill index rank paginate
batch merge split dedupe throttle debounce memoize encode decode encrypt decrypt sign verify
""".split()
NOUNS = """user account session token invoice payment order cart item price tax event message job
task batch record row query result response request payload header cursor page config setting
flag tenant team role permission webhook retry lock connection pool cache key value entry file
chunk stream buffer schema column index migration report metric span trace log alert
""".split()

ERRORS = [
    "TypeError: Cannot read properties of undefined (reading 'map')",
    "sqlite3.OperationalError: database is locked",
    "psycopg2.errors.UniqueViolation: duplicate key value violates unique constraint",
    "ECONNREFUSED 127.0.0.1:5432",
    "ModuleNotFoundError: No module named 'yaml'",
    "AttributeError: 'NoneType' object has no attribute 'id'",
    "KeyError: 'user_id'",
    "RecursionError: maximum recursion depth exceeded",
    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0",
    "OSError: [Errno 24] Too many open files",
    "ConnectionResetError: [Errno 104] Connection reset by peer",
    "asyncio.exceptions.TimeoutError",
    "RuntimeError: Event loop is closed",
    "panic: runtime error: index out of range [3] with length 3",
    "error[E0382]: borrow of moved value",
    "Error: Hydration failed because the initial UI does not match what was rendered on the server",
    "Error [ERR_REQUIRE_ESM]: require() of ES Module not supported",
    "Cannot find module '@/components/Button' or its corresponding type declarations",
    "Access to fetch has been blocked by CORS policy: No 'Access-Control-Allow-Origin' header",
    "HTTP 429 Too Many Requests",
    "HTTP 401 Unauthorized: token expired",
    "HTTP 502 Bad Gateway from the load balancer",
    "deadlock detected while waiting for ShareLock on transaction",
    "SSL: CERTIFICATE_VERIFY_FAILED certificate verify failed: unable to get local issuer certificate",
    "OOMKilled: container exceeded its memory limit",
    "CrashLoopBackOff: back-off restarting failed container",
    "Segmentation fault (core dumped)",
    "java.lang.NullPointerException at OrderService.java:142",
    "IntegrityError: FOREIGN KEY constraint failed",
    "pydantic_core.ValidationError: 1 validation error for Settings",
    "alembic.util.exc.CommandError: Multiple head revisions are present",
    "django.db.utils.ProgrammingError: relation does not exist",
    "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379",
    "kafka.errors.NoBrokersAvailable",
    "jest: Exceeded timeout of 5000 ms for a test",
    "flaky test: assertion failed only when run in parallel with -n auto",
    "mypy: Incompatible types in assignment (expression has type None)",
    "npm ERR! ERESOLVE unable to resolve dependency tree",
    "fatal: refusing to merge unrelated histories",
    "terraform: Error acquiring the state lock",
    "docker: no space left on device",
    "JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "ValueError: time data does not match format '%Y-%m-%d'",
    "ZeroDivisionError in the pricing rounding step",
    "off-by-one in cursor pagination drops the last row",
    "race condition: two workers claimed the same job",
]

COMMANDS = {
    "test_command": ["uv run pytest -q", "pytest -x --ff", "npm test", "pnpm vitest run", "go test ./...",
                     "cargo test", "make test", "tox -e py311", "bundle exec rspec"],
    "build_command": ["uv build", "npm run build", "pnpm build", "go build ./...", "cargo build --release",
                      "make", "docker build -t app ."],
    "lint_command": ["uv run ruff check .", "npm run lint", "golangci-lint run", "cargo clippy -- -D warnings",
                     "pre-commit run --all-files"],
    "format_command": ["uv run ruff format .", "prettier --write .", "gofmt -w .", "cargo fmt"],
    "typecheck_command": ["uv run mypy lib", "tsc --noEmit", "pyright", "uv run pyright src"],
    "run_command": ["uv run uvicorn app.main:app --reload", "npm run dev", "go run ./cmd/server",
                    "docker compose up", "flask --app app run"],
    "language": ["Python 3.12", "Python 3.11", "TypeScript 5.4", "Go 1.22", "Rust 1.78", "Kotlin 1.9"],
    "framework": ["FastAPI", "Django 5", "Next.js 14 app router", "Gin", "Axum", "Spring Boot 3"],
    "package_manager": ["uv", "poetry", "pnpm", "npm", "cargo", "go modules"],
    "database": ["PostgreSQL 16", "PostgreSQL 15 with pgvector", "SQLite (WAL)", "MySQL 8", "DynamoDB"],
    "ci": ["GitHub Actions (.github/workflows/ci.yml)", "CircleCI", "GitLab CI", "Jenkins"],
    "deploy": ["Fly.io via flyctl deploy", "Kubernetes via ArgoCD", "AWS ECS Fargate", "Vercel", "Heroku"],
    "entrypoint": ["app/main.py", "src/index.ts", "cmd/server/main.go", "src/main.rs"],
    "migrations": ["alembic upgrade head", "prisma migrate deploy", "django-admin migrate", "sqlx migrate run"],
    "python_version": ["3.12", "3.11", "3.10"],
    "node_version": ["20 LTS", "18 LTS", "22"],
}

REASONS = [
    "it keeps p95 latency under {n} ms at our traffic",
    "the team already knows it and the docs are good",
    "it removes a whole class of {error_short} errors",
    "the alternative needed a long-running daemon we do not want to operate",
    "it is what {lib2} expects and fighting that cost us a week",
    "benchmarks on staging showed {n}x fewer allocations",
    "it makes {component} testable without a network",
    "vendor lock-in with {lib2} was a concern raised in review",
    "it supports transactions across {component} and {component2}",
    "the migration path from {lib2} is incremental",
]
CONDITIONS = [
    "traffic grows past {n}k requests per minute",
    "{lib2} ships native support",
    "we split {component} into its own service",
    "the {component} team objects",
    "costs exceed ${n} a month",
]
OBSERVATIONS = [
    "{lib} silently drops {noun}s larger than {n} KB",
    "{func}() is called twice per request because of the {component} middleware",
    "the {component} job takes {n} s on a cold cache and {n2} ms warm",
    "{lib} reads {env} at import time, so setting it later has no effect",
    "ordering of {noun}s is not stable unless the query sorts by created_at, id",
    "{lib} retries {n} times by default with no jitter",
    "the staging {component} uses a different timezone than production",
    "connections are not returned to the pool when {func}() raises",
    "the {file} fixture leaks state between tests",
    "{lib} caches {noun}s per process, so workers disagree for up to {n} s",
]
CAUSES = [
    "{func}() swallowed the exception and returned None",
    "a missing index on {noun}s.{noun2}_id made the query scan",
    "the {component} worker used a stale {noun} after refresh",
    "timezone-naive datetimes compared with aware ones",
    "{lib} upgraded to a major version in the lockfile",
    "the retry loop had no upper bound",
    "two code paths wrote the same {noun} without a transaction",
    "an environment variable ({env}) was unset in CI",
]
FIXES = [
    "wrap {func}() in a transaction and add a unique constraint",
    "add an index and rewrite the query with a keyset cursor",
    "pin {lib} and add a regression test in {test_file}",
    "pass the {noun} explicitly instead of reading a global",
    "convert to UTC at the boundary in {file}",
    "bound retries at {n} with exponential backoff and jitter",
    "close the connection in a finally block in {file}",
    "set {env} in the CI workflow and fail fast when it is missing",
]
RULES = [
    "return typed results, never raw dicts",
    "log with structured fields ({noun}_id, tenant_id), never f-strings",
    "raise domain errors from {file} and map them to HTTP in the router",
    "take a connection from the pool via the context manager only",
    "be idempotent: every write carries an idempotency key",
    "have a test next to it under tests/ mirroring the path",
    "use {lib} for {noun} validation at the boundary",
    "keep functions under {n} lines; split helpers into {file}",
    "name async functions with a verb first, e.g. {func}",
    "never import from another component's internal package",
]
ENVS = ["DATABASE_URL", "REDIS_URL", "SENTRY_DSN", "STRIPE_API_BASE", "LOG_LEVEL", "TZ", "AWS_REGION",
        "FEATURE_FLAGS_PATH", "WORKER_CONCURRENCY", "OTEL_EXPORTER_OTLP_ENDPOINT", "NODE_ENV", "RUST_LOG"]
PROSE = """slow fast intermittent consistent unexpected surprising obvious subtle brittle robust noisy quiet
legacy modern temporary permanent manual automatic expensive cheap verbose terse blocking nonblocking
concurrent sequential eager lazy stale fresh partial complete optional mandatory deprecated experimental
upstream downstream regression improvement workaround hack shortcut tradeoff bottleneck hotspot outage
incident postmortem rollout rollback hotfix patch upgrade downgrade benchmark profiling flamegraph
allocation latency throughput memory cpu disk network bandwidth quota limit threshold budget deadline
customer tenant operator reviewer maintainer contributor oncall pager runbook playbook dashboard alert
weekend nightly hourly daily weekly monthly quarterly midnight morning production staging preview local
laptop container cluster region zone replica primary secondary leader follower shard partition topic
""".split()
TASKS = ["migration", "refactor", "endpoint", "backfill", "upgrade", "test coverage", "flaky test hunt",
         "performance work", "bug triage", "rollout", "cleanup", "schema change"]

TYPE_MIX = [  # (type, share of a project's non-profile records)
    ("discovery", 0.30), ("bugfix", 0.25), ("decision", 0.15), ("handover", 0.12),
    ("convention", 0.10), ("preference", 0.08),
]
# Probability that a new record of this type replaces an earlier active one of the same
# type (tuned so that ~10% of all records end up superseded, profile versions included).
SUPERSEDE_P = {"decision": 0.25, "convention": 0.18, "preference": 0.12, "discovery": 0.08, "bugfix": 0.05,
               "handover": 0.0}
SOURCES = ["llm_extraction"] * 6 + ["cli"] * 2 + ["mcp_tool", "hook_observation", "user_statement", "import"]


def _zipf_weights(n: int, s: float = 1.0) -> list[float]:
    return [1.0 / (rank + 1) ** s for rank in range(n)]


class Vocab:
    """Skewed draws from the word lists, plus generated identifiers and file paths."""

    def __init__(self, rng: random.Random, project_salt: int):
        self.rng = rng
        local = random.Random(project_salt)
        # Each project has its own favourite libraries and modules (shuffled rank order).
        self.libs = LIBS[:]
        local.shuffle(self.libs)
        self.components = COMPONENTS[:]
        local.shuffle(self.components)
        self.lib_cum = self._cum(_zipf_weights(len(self.libs), 1.05))
        self.comp_cum = self._cum(_zipf_weights(len(self.components), 0.9))
        # A long tail of identifiers and files, as a codebase has.
        self.funcs = []
        for _ in range(1500):
            verb, noun, noun2 = local.choice(VERBS), local.choice(NOUNS), local.choice(NOUNS)
            style = local.random()
            if style < 0.55:
                self.funcs.append(f"{verb}_{noun}" + (f"_{noun2}" if local.random() < 0.4 else ""))
            elif style < 0.85:
                self.funcs.append(verb + noun.capitalize() + (noun2.capitalize() if local.random() < 0.4 else ""))
            else:
                self.funcs.append(f"{noun.capitalize()}{noun2.capitalize()}{local.choice(['Service', 'Manager', 'Client', 'Repository', 'Handler', 'Factory'])}")
        self.files = []
        for _ in range(900):
            comp = local.choice(COMPONENTS).replace("-", "_")
            leaf = local.choice([comp, f"{comp}_{local.choice(NOUNS)}", local.choice(NOUNS), f"{local.choice(VERBS)}_{comp}"])
            ext = local.choice(EXTS)
            self.files.append(f"{local.choice(DIRS)}/{comp}/{leaf}{ext}")
        self.func_cum = self._cum(_zipf_weights(len(self.funcs), 0.8))
        self.file_cum = self._cum(_zipf_weights(len(self.files), 0.8))
        self.err_cum = self._cum(_zipf_weights(len(ERRORS), 0.7))

    @staticmethod
    def _cum(weights: list[float]) -> list[float]:
        out, total = [], 0.0
        for w in weights:
            total += w
            out.append(total)
        return out

    def _pick(self, items, cum):
        return self.rng.choices(items, cum_weights=cum, k=1)[0]

    def lib(self) -> str:
        return self._pick(self.libs, self.lib_cum)

    def component(self) -> str:
        return self._pick(self.components, self.comp_cum)

    def func(self) -> str:
        return self._pick(self.funcs, self.func_cum)

    def file(self) -> str:
        return self._pick(self.files, self.file_cum)

    def error(self) -> str:
        return self._pick(ERRORS, self.err_cum)

    def fill(self, template: str) -> str:
        r = self.rng
        err = self.error()
        values = {
            "lib": self.lib(), "lib2": self.lib(), "component": self.component(), "component2": self.component(),
            "func": self.func(), "file": self.file(), "test_file": "tests/test_" + self.func().lower() + ".py",
            "noun": r.choice(NOUNS), "noun2": r.choice(NOUNS), "n": r.choice([2, 3, 5, 8, 10, 20, 30, 50, 100, 250, 500]),
            "n2": r.randint(2, 900), "env": r.choice(ENVS), "error": err, "error_short": err.split(":")[0].split()[0],
            "verb": r.choice(VERBS), "line": r.randint(12, 880), "task": r.choice(TASKS),
            "sha": f"{r.getrandbits(28):07x}", "pr": r.randint(10, 9000),
            "ver": f"{r.randint(0, 9)}.{r.randint(0, 40)}.{r.randint(0, 20)}",
            "ticket": f"{r.choice(['PAY', 'OPS', 'WEB', 'INFRA', 'BUG'])}-{r.randint(10, 6000)}",
            "prose": r.choice(PROSE), "prose2": r.choice(PROSE), "prose3": r.choice(PROSE),
        }
        return template.format(**values)


# ---------------------------------------------------------------------------------------
# Record text per type
# ---------------------------------------------------------------------------------------

TITLES = {
    "decision": ["Use {lib} for {component}", "Adopt {lib} instead of {lib2} for {component}",
                 "Store {noun}s in {lib}", "{component}: {verb} {noun}s through {lib}",
                 "Run {component} jobs on {lib}", "Keep {component} behind the {component2} API",
                 "Move {component} to {lib} with {lib2} as fallback", "No {lib} in {component}"],
    "convention": ["{component} handlers {verb} {noun}s before returning", "Tests for {component} live in {file}",
                   "Name {component} modules after the {noun} they own", "Every {component} change needs a migration",
                   "Use {func}() for all {noun} access", "Configuration comes from {env} only",
                   "{lib} calls go through {file}"],
    "preference": ["Prefer {lib} over {lib2}", "Prefers small focused PRs touching one {component}",
                   "Likes {func}-style helpers over classes", "Wants {lib} output formatted with tables",
                   "Prefers explicit {noun} types over dicts", "No emojis in commit messages for {component}"],
    "discovery": ["{lib} {verb}s {noun}s lazily", "{component} latency comes from {func}()",
                  "{lib} reads {env} at import time", "{file} is imported by {component} at startup",
                  "Staging {component} differs from production", "{lib} default timeout is {n} s",
                  "{func}() is not thread-safe"],
    "bugfix": ["Fix {error_short} in {component}", "{component}: {error}", "Fix double {verb} in {component}",
               "Fix {noun} leak in {func}()", "{lib} upgrade broke {component}", "Fix flaky {component} test",
               "Fix {error_short} when {verb}ing {noun}s"],
    "handover": ["Handover: {component} {task} in progress", "Handover: {task} of {component} half done",
                 "Handover: {lib} upgrade for {component}", "Handover: investigating {error_short} in {component}"],
}
BODIES = {
    "decision": ["We chose {lib} over {lib2} for {component} because " + r + ". Revisit if " + c + "."
                 for r in REASONS for c in CONDITIONS[:2]] +
                ["{component} now calls {func}() in {file}; " + r + "." for r in REASONS],
    "convention": ["Every {component} module must " + rule + ". Example: {func}() in {file}." for rule in RULES],
    "preference": ["Stated by the developer: " + r + "." for r in REASONS[:5]] +
                  ["Asked twice to use {lib} for {noun} handling in {component}; keep it that way."],
    "discovery": ["Found that " + o + ". Seen in {file} while working on {component}." for o in OBSERVATIONS],
    "bugfix": ["Symptom: {error}. Cause: " + c + ". Fix: " + f + " ({file}:{line})."
               for c in CAUSES for f in FIXES[:4]] +
              ["Symptom: {error} in {component}. Cause: " + c + ". Fix: " + f + "." for c in CAUSES[:4] for f in FIXES[4:]],
    "handover": ["Done: {func}() and its tests in {test_file}. In progress: {component} {task}, see {file}. "
                 "Next: wire {lib} into {component2} and run the {task} on staging. "
                 "Open question: " + o + "?" for o in OBSERVATIONS[:5]],
}
EXTRA_SENTENCES = [
    "See {file} for the details.", "Related: {func}() and {lib}.", "Measured with {lib} on staging: {n2} ms p95.",
    "The {component} tests cover it ({test_file}).", "Discussed in the {component} review; {lib2} was rejected.",
    "Command to reproduce: `{func} --{noun} {n}`.", "Error seen before the fix: {error}.",
    "This also affects {component2}.", "Config lives in {env}.", "Touches {file} and {file}.",
    "Fixed in commit {sha} (PR #{pr}).", "Pinned {lib} to {ver} until {lib2} catches up.", "Tracked in {ticket}.",
    "It was {prose} and {prose2} on {prose3} runs.", "Note: the {prose} {component} path is {prose2}.",
    "Reviewer asked whether {func}() is {prose} under {prose2} load.",
]


def _ulid(ms: int, rng: random.Random) -> str:
    """A reproducible ULID (the store's own generator, fed a seeded random source)."""
    return ids.new_id(ms, rng.getrandbits(80))


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _text(rtype: str, vocab: Vocab, rng: random.Random) -> tuple[str, str]:
    title = vocab.fill(rng.choice(TITLES[rtype]))[:300]
    body = vocab.fill(rng.choice(BODIES[rtype]))
    # Log-normal-ish length: most records are a sentence or three, a few are long.
    extra = min(12, int(rng.lognormvariate(0.3, 0.9)))
    if rtype == "handover":
        extra += 3
    if extra:
        body += " " + " ".join(vocab.fill(rng.choice(EXTRA_SENTENCES)) for _ in range(extra))
    return title, body


def project_dir(home: str) -> str:
    return os.path.join(home, "repo", "payments-platform")


def make_repo(path: str) -> None:
    """A fake git checkout whose origin remote gives the target project id."""
    os.makedirs(os.path.join(path, ".git"), exist_ok=True)
    with open(os.path.join(path, ".git", "config"), "w", encoding="utf-8") as fh:
        fh.write('[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n'
                 f"\turl = {TARGET_REMOTE}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
    with open(os.path.join(path, ".git", "HEAD"), "w", encoding="utf-8") as fh:
        fh.write("ref: refs/heads/main\n")


def _generate(project_id: str, count: int, salt: int, rng: random.Random, start: datetime, end: datetime,
              n_global: int, n_pinned: int) -> list[dict]:
    """Records of one project, oldest first, with supersession already resolved."""
    vocab = Vocab(rng, salt)
    span = (end - start).total_seconds()
    n_profile_keys = min(len(COMMANDS), max(4, count // 400))
    keys = list(COMMANDS)[:n_profile_keys]
    n_profile = min(count // 10, n_profile_keys * 3)
    stamps = sorted(start + timedelta(seconds=rng.random() * span) for _ in range(count))
    # Which slots are profile records (spread over time), and which are global preferences.
    profile_slots = set(rng.sample(range(count), n_profile)) if n_profile else set()
    types_, weights = zip(*TYPE_MIX, strict=True)
    out: list[dict] = []
    active_by_type: dict[str, list[int]] = {t: [] for t in types_}
    active_key: dict[str, int] = {}
    globals_left = n_global
    session = None
    for i, stamp in enumerate(stamps):
        if session is None or rng.random() < 0.04:
            session = f"{project_id[:6]}-{i:06d}-{rng.getrandbits(32):08x}"
        ms = int(stamp.timestamp() * 1000)
        rid = _ulid(ms, rng)
        rec = {
            "id": rid, "project_id": project_id, "key": None, "scope": "project", "pinned": 0,
            "confidence": rng.choices(["explicit", "inferred", "reinforced"], [0.35, 0.55, 0.10])[0],
            "reinforce_count": 0, "valid_from": _iso(stamp), "valid_to": None, "recorded_at": _iso(stamp),
            "superseded_at": None, "superseded_by": None, "updated_at": None,
            "access_count": int(rng.expovariate(0.3)), "last_accessed": None, "score": 1.0,
            "source": rng.choice(SOURCES), "session_id": session,
        }
        if rec["access_count"]:
            rec["last_accessed"] = _iso(min(end, stamp + timedelta(days=rng.random() * 60)))
        if rng.random() < 0.15:  # back-dated facts: valid before the store learned them
            rec["valid_from"] = _iso(stamp - timedelta(days=rng.random() * 30))
        if i in profile_slots:
            key = rng.choice(keys)
            rec.update(type="profile", key=f"profile.{key}", title=key.replace("_", " ").capitalize(),
                       body=rng.choice(COMMANDS[key]), confidence="explicit")
            old = active_key.get(key)
            if old is not None:
                _supersede(out[old], rec)
            active_key[key] = len(out)
            out.append(rec)
            continue
        rtype = rng.choices(types_, weights)[0]
        if rtype == "preference" and globals_left > 0 and rng.random() < 0.5:
            rec["scope"] = "global"
            rec["confidence"] = rng.choice(["explicit", "reinforced"])
            rec["reinforce_count"] = rng.randint(0, 6)
            globals_left -= 1
        rec["type"] = rtype
        rec["title"], rec["body"] = _text(rtype, vocab, rng)
        pool = active_by_type[rtype]
        if pool and rng.random() < SUPERSEDE_P[rtype]:
            old_index = pool.pop(rng.randrange(len(pool)))
            _supersede(out[old_index], rec)
            if out[old_index]["scope"] == "global":
                rec["scope"], rec["confidence"] = "global", out[old_index]["confidence"]
        pool.append(len(out))
        out.append(rec)
    # A handful of pinned decisions and conventions, among those still in force.
    candidates = [r for r in out if r["type"] in ("decision", "convention") and not r["superseded_at"]]
    for rec in rng.sample(candidates, min(n_pinned, len(candidates))):
        rec["pinned"] = 1
    return out


def _supersede(old: dict, new: dict) -> None:
    old["superseded_at"] = new["recorded_at"]
    old["superseded_by"] = new["id"]
    old["valid_to"] = max(new["valid_from"], old["valid_from"])


INSERT_COLUMNS = ("id", "project_id", "type", "key", "title", "body", "scope", "pinned", "confidence",
                  "reinforce_count", "valid_from", "valid_to", "recorded_at", "superseded_at", "superseded_by",
                  "updated_at", "access_count", "last_accessed", "score", "source", "session_id")


def build(home: str, records: int, *, seed: int = 7, method: str = "insert", batch: int = 50,
          quiet: bool = False) -> dict:
    """Create ``home`` (which must not hold a store yet) and fill it; return a summary dict."""
    t0 = time.perf_counter()
    home = os.path.abspath(home)
    os.environ["AGENTCTX_HOME"] = home
    from agentctx import project
    from agentctx.store import db

    if os.path.exists(os.path.join(home, "agentctx.db")):
        raise SystemExit(f"{home} already holds a store; pick an empty directory")
    repo = project_dir(home)
    make_repo(repo)
    target = project.detect(repo)
    rng = random.Random(seed)
    end = datetime.now(timezone.utc) - timedelta(minutes=5)
    start = end - timedelta(days=365 * YEARS)

    n_target = int(round(records * TARGET_SHARE))
    rest = records - n_target
    per_other = [rest // len(OTHER_PROJECTS) + (1 if i < rest % len(OTHER_PROJECTS) else 0)
                 for i in range(len(OTHER_PROJECTS))]
    projects = [(target.id, target.name, target.root, target.remote, n_target, 25, 6)]
    for (remote, name), n in zip(OTHER_PROJECTS, per_other, strict=True):
        pid = project._hash(remote)
        projects.append((pid, name, f"/home/dev/src/{name}", remote, n, 2, 3))

    all_recs: list[dict] = []
    for salt, (pid, _name, _root, _remote, n, n_global, n_pinned) in enumerate(projects):
        if n:
            all_recs += _generate(pid, n, salt * 7919 + seed, rng, start, end, n_global, n_pinned)
    all_recs.sort(key=lambda r: r["recorded_at"])  # the store grows in time order
    t_gen = time.perf_counter()

    conn = db.connect()
    stamp = _iso(end)
    with db.transaction(conn):
        for pid, name, root, remote, _n, _g, _p in projects:
            conn.execute(
                "INSERT INTO projects (id, name, root, remote, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)",
                (pid, name, root, remote, _iso(start), stamp),
            )
    if method == "import":
        from agentctx.sharing import transfer

        by_project: dict[str, list[str]] = {}
        for rec in all_recs:
            by_project.setdefault(rec["project_id"], []).append(
                json.dumps({k: rec[k] for k in INSERT_COLUMNS if k != "project_id"}))
        for pid, lines in by_project.items():
            report = transfer.import_jsonl(conn, pid, lines)
            if report.errors:
                raise SystemExit(f"import errors: {report.errors[:3]}")
    else:
        from agentctx.redact import redact, stamp

        for rec in all_recs:  # as records.validate and records._insert_row write them: redacted, stamped
            rec["title"], rec["body"] = redact(rec["title"]), redact(rec["body"] or "")
            rec["redaction_stamp"] = stamp(rec["title"], rec["body"])
        columns = (*INSERT_COLUMNS, "redaction_stamp")
        sql = f"INSERT INTO records ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        rows = [tuple(rec[c] for c in columns) for rec in all_recs]
        for i in range(0, len(rows), batch):
            with db.transaction(conn):
                conn.executemany(sql, rows[i:i + batch])
    # What records._retire also writes: a 'supersedes' edge per replacement; and the sessions.
    edges = [(_ulid(int(datetime.strptime(r["superseded_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
                         .replace(tzinfo=timezone.utc).timestamp() * 1000), rng),
              r["superseded_by"], r["id"], r["superseded_at"]) for r in all_recs if r["superseded_at"]]
    sessions: dict[str, tuple] = {}
    for rec in all_recs:
        s = sessions.get(rec["session_id"])
        if s is None:
            sessions[rec["session_id"]] = (rec["session_id"], rec["project_id"], rec["recorded_at"], rec["recorded_at"])
        else:
            sessions[rec["session_id"]] = (s[0], s[1], s[2], rec["recorded_at"])
    with db.transaction(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, weight, created_at) "
            "VALUES (?, ?, ?, 'supersedes', 1.0, ?)", edges)
        conn.executemany(
            "INSERT OR IGNORE INTO sessions (session_id, project_id, cwd, source, started_at, ended_at, end_reason, "
            "tokens_injected, injections) VALUES (?, ?, NULL, 'startup', ?, ?, 'prompt_input_exit', ?, ?)",
            [(*s, rng.randint(300, 6000), rng.randint(1, 30)) for s in sessions.values()])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    t_end = time.perf_counter()

    summary = summarize(home, target)
    summary.update(
        records_requested=records, method=method, seed=seed, commit_batch=batch,
        generate_seconds=round(t_gen - t0, 3), insert_seconds=round(t_end - t_gen, 3),
        build_seconds=round(t_end - t0, 3), project_dir=repo,
    )
    if not quiet:
        print(json.dumps(summary, indent=2))
    return summary


def summarize(home: str, target=None) -> dict:
    """Counts and on-disk size (after a checkpoint) of the store at ``home``."""
    os.environ["AGENTCTX_HOME"] = os.path.abspath(home)
    from agentctx import project
    from agentctx.store import db

    target = target or project.detect(project_dir(home))
    conn = db.connect()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    q = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
    total = q("SELECT COUNT(*) FROM records")
    by_type = {r[0]: r[1] for r in conn.execute(
        "SELECT type, COUNT(*) FROM records WHERE project_id = ? GROUP BY 1 ORDER BY 2 DESC", (target.id,))}
    out = {
        "home": os.path.abspath(home),
        "project_id": target.id,
        "records_total": total,
        "records_target_project": q("SELECT COUNT(*) FROM records WHERE project_id = ?", target.id),
        "records_target_active": q("SELECT COUNT(*) FROM records WHERE project_id = ? AND superseded_at IS NULL",
                                   target.id),
        "projects": q("SELECT COUNT(DISTINCT project_id) FROM records"),
        "superseded": q("SELECT COUNT(*) FROM records WHERE superseded_at IS NOT NULL"),
        "pinned": q("SELECT COUNT(*) FROM records WHERE pinned = 1"),
        "global_preferences": q("SELECT COUNT(*) FROM records WHERE scope = 'global'"),
        "target_by_type": by_type,
        "fts_distinct_terms": None,
        "avg_body_chars": round(q("SELECT AVG(LENGTH(body)) FROM records") or 0, 1),
    }
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, records_fts, 'row')")
        out["fts_distinct_terms"] = q("SELECT COUNT(*) FROM temp.v")
    except Exception:  # noqa: BLE001 - informative only
        pass
    conn.close()
    path = os.path.join(os.path.abspath(home), "agentctx.db")
    size = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
    out["db_bytes"] = size
    out["db_bytes_per_10k_records"] = round(size / total * 10_000) if total else 0
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True, help="AGENTCTX_HOME to create (must not hold a store)")
    ap.add_argument("--records", type=int, default=10_000, help="total records in the store (default 10000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--method", choices=("insert", "import"), default="insert",
                    help="batched INSERTs through the real schema (default) or transfer.import_jsonl")
    ap.add_argument("--batch", type=int, default=50, help="records per commit for --method insert (default 50)")
    args = ap.parse_args(argv)
    build(args.home, args.records, seed=args.seed, method=args.method, batch=args.batch)


if __name__ == "__main__":
    main()
