"""Purge means gone (issue 22): a record's distinctive words, copied by agentctx into a handover titled
with the session's first prompt, the anchors, the session's data, the daily log, the digest cache, the
neighbours' retrieval expansion, the team file, CLAUDE.md (``sync --yes``) and a store moved aside as
damaged, are found nowhere in the data directory or the repository after ``agentctx purge``, nor after
the next consolidation pass and the next session, all run as real processes."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

from agentctx import project
from agentctx.capture import handover as handovers
from agentctx.sharing import teamsync
from agentctx.store import db, projects, records, sessions
from tests.support.cli import agentctx
from tests.support.hooks import context_of, run_hook

WORDS = ("zanzibarquokka", "flamingoledger")
FOUND = re.compile("|".join(WORDS).encode(), re.IGNORECASE)


def traces(*folders: Path) -> list[str]:
    """Every file under these folders (and the hooks' fallback log) holding one of WORDS, in any case."""
    hits = []
    fallback = Path(os.environ["TMPDIR"]) / "agentctx-hooks.log"
    if fallback.exists() and FOUND.search(fallback.read_bytes()):
        hits.append(str(fallback))
    for folder in folders:
        for dirpath, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(dirpath, name)
                try:
                    with open(path, "rb") as fh:
                        if FOUND.search(fh.read()):
                            hits.append(path)
                except OSError:
                    continue
    return hits


def transcript(folder: Path, prompt: str) -> Path:
    path = folder / "s1.jsonl"
    lines = [{"type": "user", "sessionId": "s1", "uuid": "u1", "message": {"role": "user", "content": prompt}},
             {"type": "assistant", "sessionId": "s1", "uuid": "a1", "parentUuid": "u1",
              "message": {"role": "assistant", "content": [{"type": "text", "text":
                          "Done. Next: move the nightly job to the new runner."}]}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def hook(name: str, repo: Path, home: Path, **extra) -> subprocess.CompletedProcess:
    payload = {"session_id": extra.pop("session_id", "s2"), "cwd": str(repo), "hook_event_name": name,
               "transcript_path": extra.pop("transcript_path", "/nonexistent.jsonl"), **extra}
    out = run_hook({"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit"}[name], payload, home)
    assert out.returncode == 0, out.stderr
    return out


def test_a_purged_records_words_are_nowhere_after_purge_consolidation_and_the_next_session(home, repo, tmp_path,
                                                                                         monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    conn = db.connect()
    proj = project.detect(str(repo))
    projects.register(conn, proj)
    prompt = f"Move the ledger migrations to {WORDS[0]} and {WORDS[1]}, please"
    with db.transaction(conn):
        sessions.start(conn, "s1", proj.id, proj.root, "startup")
    before = records.add(conn, proj.id, type="discovery", title="The nightly job runs on the old runner",
                         body="It takes forty minutes.", session_id="s1")
    target = records.add(conn, proj.id, type="decision",
                         title=f"Ledger migrations run through {WORDS[0]}",
                         body=f"{WORDS[0].capitalize()} applies them; {WORDS[1]} keeps the audit trail.",
                         session_id="s1")
    after = records.add(conn, proj.id, type="convention", title="Migrations are reviewed by two people",
                        body="One of them owns the schema.", session_id="s1")
    keep = records.add(conn, proj.id, type="decision", title="Invoices are PDFs rendered with WeasyPrint")
    handovers.derive_handover(conn, proj, "s1", str(transcript(tmp_path, prompt)))
    head = records.current(conn, proj.id, types=["handover"], limit=1)[0]
    assert WORDS[0] in head["title"]  # the handover is titled with the session's first prompt
    teamsync.export(conn, proj, create=True)
    conn.close()
    # What agentctx derives, by real processes: expansion, digest, daily log (consolidation), CLAUDE.md.
    done = agentctx(home, "--project", str(repo), "consolidate", "--no-embeddings", "--json")
    assert done.returncode == 0, done.stderr
    synced = agentctx(home, "--project", str(repo), "sync", "--yes")
    assert synced.returncode == 0, synced.stderr
    assert f"<!-- agentctx {target['id']} -->" in (repo / "CLAUDE.md").read_text()
    start = hook("SessionStart", repo, home, source="startup")
    assert WORDS[0] in start.stdout.decode()
    side = home / "agentctx.db.corrupt-20260101T000000000000Z"  # a store moved aside as damaged, earlier
    src, dst = sqlite3.connect(home / "agentctx.db"), sqlite3.connect(side)
    src.backup(dst)
    src.close()
    dst.close()
    conn = db.connect()
    ctx = conn.execute("SELECT context FROM records WHERE id IN (?, ?)", (before["id"], after["id"])).fetchall()
    assert any(WORDS[0][:8] in (r[0] or "") for r in ctx), "the neighbours' expansion holds its stems"
    conn.close()
    found = traces(home, repo)
    for place in ("agentctx.db", "context.md", "CLAUDE.md", "corrupt", "logs"):
        assert any(place in p for p in found), (place, found)

    purged = agentctx(home, "--project", str(repo), "purge", target["id"], "--yes")
    assert purged.returncode == 0, purged.stderr
    said = purged.stdout
    for line in ("handovers: removed", "CLAUDE.md: removed the line agentctx wrote",
                 "moved-aside store: removed it from", "team file: removed its block"):
        assert line in said, (line, said)
    assert traces(home, repo) == []

    again = agentctx(home, "--project", str(repo), "consolidate", "--no-embeddings", "--json")
    assert again.returncode == 0, again.stderr
    assert traces(home, repo) == []
    start = hook("SessionStart", repo, home, source="startup", session_id="s3")
    prompt_out = hook("UserPromptSubmit", repo, home, session_id="s3",
                      prompt="how do the ledger migrations run and who keeps the audit trail?")
    assert not FOUND.search(start.stdout) and not FOUND.search(prompt_out.stdout)
    assert traces(home, repo) == []
    conn = db.connect()
    try:
        assert records.get(conn, keep["id"], proj.id) is not None
        handover = records.current(conn, proj.id, types=["handover"], limit=1)[0]
        assert handover["title"] and not FOUND.search(handover["title"].encode())
    finally:
        conn.close()
    assert context_of(prompt_out) is None or "Invoices" not in (context_of(prompt_out) or "x")
