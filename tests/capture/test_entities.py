"""The entity graph: records linked to the files, symbols, packages and commands they mention, matched against
the project's own files and manifests (and the extraction model's entities, through the real SDK against the
fake Messages API), so ctx_related and the dashboard graph show what a decision is about."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import llm, project
from agentctx.capture import entities, extract
from agentctx.store import db, graph, records
from agentctx.surfaces.mcp_tools import Service
from tests.capture.test_extract import SID, Transcript, decision, reply

PYPROJECT = """[project]
name = "shop"
dependencies = ["fastapi>=0.110", "sqlalchemy>=2", "weasyprint>=60", "pydantic-settings>=2"]
[dependency-groups]
dev = ["pytest>=8", "ruff>=0.5"]
[tool.pytest.ini_options]
testpaths = ["tests"]
"""
MAKEFILE = "test:\n\tuv run pytest -q\nseed-db:\n\tpython -m shop.seed\n"


@pytest.fixture
def shop(repo: Path) -> Path:
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "Makefile").write_text(MAKEFILE)
    (repo / "uv.lock").write_text("")
    for rel, text in {
        "shop/__init__.py": "",
        "shop/invoices/pdf.py": "class InvoiceRenderer:\n    def render(self): ...\n\ndef render_invoice(order):\n    ...\n",
        "shop/settings.py": "from pydantic_settings import BaseSettings\n\nclass Settings(BaseSettings):\n    ...\n"
                            "MAX_RETRIES = 3\n",
        "shop/tasks.py": "async def send_receipt(order_id):\n    ...\n",
        "tests/test_pdf.py": "def test_render_invoice():\n    ...\n",
        "node_modules/junk/index.js": "function shouldNotBeIndexed() {}\n",
        "secrets/keys.py": "def rotate_keys(): ...\n",
    }.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "config.toml").write_text('[capture]\nexclude = ["secrets/**"]\n')
    return repo


def test_the_vocabulary_is_read_from_the_project(shop, home):
    vocab = entities.build_vocabulary(str(shop))
    assert "shop/invoices/pdf.py" in vocab.files and "pyproject.toml" in vocab.files
    assert not any(f.startswith(("node_modules/", "secrets/", ".git/")) for f in vocab.files)
    assert {"InvoiceRenderer", "render_invoice", "Settings", "MAX_RETRIES", "send_receipt"} <= vocab.symbols
    assert "rotate_keys" not in vocab.symbols and "shouldNotBeIndexed" not in vocab.symbols
    assert {"fastapi", "sqlalchemy", "weasyprint", "pydantic-settings", "pytest", "ruff"} <= set(vocab.packages.values())
    assert {"make test", "make seed-db", "uv run ruff check ."} <= set(vocab.commands)


def test_what_a_record_mentions(shop, home):
    vocab = entities.build_vocabulary(str(shop))
    found = entities.mentions(
        "Invoices are rendered by InvoiceRenderer in pdf.py with WeasyPrint; settings.py reads them once "
        "(`Settings`), run `make seed-db` before the tests, see docs/rendering.md and `render_invoice()`.", vocab)
    assert ("file", "shop/invoices/pdf.py") in found and ("file", "shop/settings.py") in found
    assert ("file", "docs/rendering.md") in found  # named as a file, not in the tree (yet)
    assert ("symbol", "InvoiceRenderer") in found and ("symbol", "render_invoice") in found
    assert ("package", "weasyprint") in found and ("command", "make seed-db") in found
    assert not any(kind == "symbol" and name == "Invoices" for kind, name in found)
    assert entities.mentions("Nothing to see here, just prose about the weather.", vocab) == []


def test_folders_aliases_and_product_names(tmp_path, home):
    root = tmp_path / "ledger"
    for rel, text in {"go.mod": "module github.com/acme/ledger\n\ngo 1.22\n\nrequire (\n"
                                "\tgithub.com/jackc/pgx/v5 v5.5.5\n\tgithub.com/segmentio/kafka-go v0.4.47\n)\n",
                      "package.json": '{"dependencies": {"next": "14.2.0", "@next/mdx": "14.2.0"}}',
                      "docs/v1/index.mdx": "", "i18n/fr/index.mdx": "", "main.go": "package main\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    vocab = entities.build_vocabulary(str(root))
    found = entities.mentions("Events go to Kafka through pgx; docs live in docs/v1 and i18n/<locale>/; the site "
                              "is a Next.js export built from MDX files.", vocab)
    assert ("package", "kafka-go") in found and ("package", "pgx") in found
    assert ("module", "docs/v1") in found and ("module", "i18n") in found and ("package", "next") in found
    assert not any(kind == "file" for kind, _ in found)  # "Next.js" is a product, not a file
    assert ("package", "@next/mdx") not in found  # a scope's last part ("mdx") is too common a word
    assert entities.resolve(["Kafka", "docs/v1", "main.go"], vocab) == [
        ("package", "kafka-go"), ("module", "docs/v1"), ("file", "main.go")]


def test_link_project_then_ctx_related_and_the_graph_show_what_a_decision_is_about(shop, home):
    conn = db.connect()
    proj = project.detect(str(shop))
    dec = records.add(conn, proj.id, type="decision", title="Invoices are PDFs rendered by WeasyPrint",
                      body="render_invoice in shop/invoices/pdf.py; no headless browser on the servers.")
    conv = records.add(conn, proj.id, type="convention", title="Settings are read once in settings.py",
                       body="pydantic-settings; no os.environ lookups anywhere else.")
    other = records.add(conn, proj.id, type="decision", title="Releases are tagged by hand", body="")
    report = entities.link_project(conn, proj.id, str(shop))
    assert report["records"] == 3 and report["linked"] == 2
    assert entities.link_project(conn, proj.id, str(shop))["records"] == 0  # only new records next time
    about = {(e["kind"], e["name"]) for e in graph.entities_of(conn, dec["id"])}
    assert {("file", "shop/invoices/pdf.py"), ("symbol", "render_invoice"), ("package", "weasyprint")} <= about
    assert graph.linked_share(conn, proj.id, ("decision",)) == (1, 2)
    snap = graph.snapshot(conn, proj.id, 600)
    labels = {n["label"] for n in snap["nodes"] if n["kind"] != "record"}
    assert {"shop/invoices/pdf.py", "weasyprint", "shop/settings.py"} <= labels
    conn.close()
    service = Service(str(shop))
    try:
        related = service.related("shop/invoices/pdf.py")
        assert dec["id"] in related and other["id"] not in related
        assert conv["id"] in service.related("pydantic-settings")  # a package name works too
        full = service.get([dec["id"]])
        assert "files: shop/invoices/pdf.py" in full and "package weasyprint" in full
        written = service.record("convention", "Receipts are sent by send_receipt in shop/tasks.py",
                                 "Retries come from MAX_RETRIES.")
        assert "about " in written and "symbol send_receipt" in written
    finally:
        service.close()


def test_the_extraction_models_entities_are_linked(api, shop, home):
    conn = db.connect()
    tx = Transcript(shop / "session.jsonl").turn("Let's go with FastAPI background tasks for receipts.")
    item = {**decision("Receipts are sent from FastAPI background tasks"),
            "entities": ["shop/tasks.py", "send_receipt", "fastapi", "BackgroundTasks"]}
    api.enqueue(reply(decisions=[item]))
    result = extract.run_once(SID, str(tx.path), str(shop), client=llm.Client(timeout=10, max_retries=0))
    assert result.status == "written"
    proj = project.detect(str(shop))
    rec = next(r for r in records.current(conn, proj.id, types=["decision"]))
    about = {(e["kind"], e["name"]) for e in graph.entities_of(conn, rec["id"])}
    assert {("file", "shop/tasks.py"), ("symbol", "send_receipt"), ("package", "fastapi"),
            ("symbol", "BackgroundTasks")} <= about
    request = "\n".join(api.message_requests[0].body["system"][0]["text"].splitlines())
    assert '"entities": []' in request  # the prompt asks for them
    conn.close()
