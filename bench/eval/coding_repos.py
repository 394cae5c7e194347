"""Repository skeletons for the four projects of the coding set, for measuring entity links (bench/entities_eval.py).

The coding set (coding_set.json) has records but no code: its projects live at /nonexistent/<name>. These
skeletons give each one what a repository of that stack has: a manifest with its dependencies, the files
and folders its records name or imply, and a few definitions in them. They were written for this
measurement AFTER reading the records (by the engineer who wrote the linker), so numbers measured with them
are an optimistic bound for matching against a real checkout, not an unbiased evaluation; the number
without them (no repository at all) is reported next to it.
"""

from __future__ import annotations

import os

REPOS: dict[str, dict[str, str]] = {
    "tidepool": {
        "pyproject.toml": """[project]
name = "tidepool"
requires-python = ">=3.11"
dependencies = ["fastapi>=0.110", "strawberry-graphql>=0.220", "sqlalchemy>=2.0", "alembic>=1.13",
                "geoalchemy2>=0.14", "psycopg>=3.1", "pydantic-settings>=2.2", "firebase-admin>=6.4"]
[dependency-groups]
dev = ["pytest>=8", "ruff>=0.4"]
[tool.ruff]
line-length = 100
""",
        "uv.lock": "",
        "tidepool/__init__.py": "",
        "tidepool/settings.py": "from pydantic_settings import BaseSettings\n\nclass Settings(BaseSettings):\n"
                                "    database_url: str\n",
        "tidepool/models.py": "class Species:\n    labels = None\n\nclass Sighting:\n    ...\n\nclass Device:\n    ...\n",
        "tidepool/schema.py": "import strawberry\n\n@strawberry.type\nclass Query:\n    ...\n\ndef error_code(exc):\n    ...\n",
        "tidepool/sync.py": "def merge_fields(local, remote):\n    ...\n\ndef conflict_log(entry):\n    ...\n",
        "tidepool/push.py": "def send_push(device_token, message):\n    ...\n",
        "tidepool/uploads.py": "def resumable_upload(request):\n    ...\n",
        "alembic.ini": "[alembic]\nscript_location = alembic\n",
        "alembic/env.py": "import geoalchemy2\n\ndef include_object(obj, name, type_, reflected, compare_to):\n    ...\n",
        "tests/test_sync.py": "def test_merge_fields():\n    ...\n",
        "docker-compose.yml": "services:\n  api:\n    build: .\n",
        "fly.toml": "app = 'tidepool'\n",
        "deploy/nginx.conf": "client_max_body_size 25m;\n",
        "mobile/ios/CameraScreen.swift": "func presentCapture() {}\n",
        "mobile/android/app/src/main/java/SyncWorker.kt": "class SyncWorker\n",
    },
    "ledgerly": {
        "go.mod": """module github.com/acme/ledgerly

go 1.22

require (
\tgithub.com/jackc/pgx/v5 v5.5.5
\tgithub.com/segmentio/kafka-go v0.4.47
\tgithub.com/oklog/ulid/v2 v2.1.0
\tgithub.com/pressly/goose/v3 v3.19.2
)
""",
        "sqlc.yaml": "version: '2'\n",
        "queries/postings.sql": "-- name: InsertPosting :exec\n",
        "internal/ledger/errors.go": "package ledger\n\nvar ErrUnbalanced = errors.New(\"unbalanced\")\n",
        "internal/ledger/postings.go": "package ledger\n\nfunc WritePostings(ctx context.Context) error { return nil }\n",
        "internal/ledger/balance.go": "package ledger\n\nfunc Balance(ctx context.Context) error { return nil }\n",
        "internal/ledger/balance_test.go": "package ledger\n\nfunc TestBalanceAfterReversal(t *testing.T) {}\n",
        "internal/transfers/transfers_test.go": "package transfers\n\nfunc TestTransferConcurrent(t *testing.T) {}\n",
        "internal/outbox/relay.go": "package outbox\n\nfunc Relay(ctx context.Context) error { return nil }\n",
        "internal/ids/ids.go": "package ids\n\nfunc Parse(s string) (string, error) { return s, nil }\n",
        "internal/flags/flags.go": "package flags\n\nfunc Enabled(ctx context.Context, name string) bool { return false }\n",
        "internal/testdb/testdb.go": "package testdb\n\nfunc New(t *testing.T) *DB { return nil }\n",
        "internal/webhooks/sign.go": "package webhooks\n\nfunc Sign(body []byte) string { return \"\" }\n",
        "internal/recon/nightly.go": "package recon\n\nfunc Nightly(ctx context.Context) error { return nil }\n",
        "migrations/00001_init.sql": "-- +goose Up\n",
        "docs/rounding.md": "# Rounding\n",
        "deploy/charts/ledger/Chart.yaml": "name: ledger\n",
        ".github/workflows/build.yml": "on: push\n",
        "cmd/ledgerd/main.go": "package main\n\nfunc main() {}\n",
    },
    "docsite": {
        "package.json": """{"name": "docsite", "packageManager": "pnpm@9.1.0",
 "scripts": {"dev": "next dev", "build": "next build", "lint": "next lint", "gen-api": "tsx scripts/gen-api.ts",
             "optimize-images": "tsx scripts/optimize-images.ts", "check-links": "tsx scripts/check-links.ts",
             "build-search": "tsx scripts/build-search.ts"},
 "dependencies": {"next": "14.2.3", "react": "18.3.1", "@next/mdx": "14.2.3", "rehype-pretty-code": "0.13.2",
                  "meilisearch": "0.40.0"},
 "devDependencies": {"typescript": "5.4.5", "tsx": "4.10.0", "sharp": "0.33.3"}}
""",
        "pnpm-lock.yaml": "",
        "next.config.mjs": "export default { output: 'export' };\n",
        "mdx-components.tsx": "export function useMDXComponents(components) { return components; }\n",
        "pages/_document.tsx": "export default function Document() {}\n",
        "scripts/gen-api.ts": "export function generateApiPages() {}\n",
        "scripts/build-search.ts": "export function buildSearchIndex() {}\n",
        "scripts/check-links.ts": "export function checkLinks() {}\n",
        "openapi.yaml": "openapi: 3.1.0\n",
        "algolia.json": "{}\n",
        "_redirects": "/old /new 301\n",
        "docs/v1/index.mdx": "---\ntitle: v1\n---\n",
        "docs/v2/index.mdx": "---\ntitle: v2\n---\n",
        "i18n/fr/index.mdx": "---\ntitle: Accueil\n---\n",
        "i18n/ja/index.mdx": "---\ntitle: ホーム\n---\n",
        "components/Sidebar.tsx": "export function Sidebar() {}\n",
    },
    "seqpipe": {
        "Cargo.toml": """[package]
name = "seqpipe"
edition = "2021"
rust-version = "1.80"

[dependencies]
clap = { version = "4", features = ["derive"] }
rayon = "1.10"
thiserror = "1"
anyhow = "1"
flate2 = { version = "1", features = ["zlib-ng"], default-features = false }
mimalloc = "0.1"
serde_json = "1"

[dev-dependencies]
criterion = "0.5"
""",
        "src/main.rs": "fn main() {}\n",
        "src/lib.rs": "pub mod trim;\npub mod filter;\npub mod stats;\n",
        "src/reader.rs": "pub struct ChunkReader;\npub fn read_chunks() {}\n",
        "src/reorder.rs": "pub struct ReorderBuffer;\n",
        "src/trim.rs": "pub fn find_adapter() {}\n",
        "src/filter.rs": "pub fn quality_filter() {}\n",
        "src/stats.rs": "pub fn write_json_lines() {}\n",
        "src/pairs.rs": "pub fn match_pairs() {}\n",
        "src/quality.rs": "pub enum PhredOffset { Phred33, Phred64 }\n",
        "benches/throughput.rs": "fn bench_trim() {}\n",
        "tests/data/small.fastq": "@r1\nACGT\n+\nIIII\n",
        "tests/cli.rs": "#[test]\nfn trims_fixture() {}\n",
        "xtask/src/main.rs": "fn fixtures() {}\n",
        "dist-workspace.toml": "[dist]\n",
        ".github/workflows/ci.yml": "on: push\n",
    },
}


def write(base: str, name: str) -> str:
    """Create the skeleton of project ``name`` under ``base``; its root."""
    root = os.path.join(base, name)
    for rel, text in REPOS[name].items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return root
