"""CLAUDE.md drift (ADR-013): settled decisions and conventions that CLAUDE.md lacks or contradicts.

Heuristic. CLAUDE.md (the project root's, and ``.claude/CLAUDE.md`` when present) is cut into
paragraphs (blank lines, headings and list items start a new one) and put in an in-memory FTS5
table (stdlib ``sqlite3``, porter stemming). Each current, high-confidence (explicit or
reinforced) project decision or convention is matched by the distinctive words of its title (its
body's when the title has fewer than 2): BM25 ranks the paragraphs, and the best of the top 5 by
*coverage* (the share of the record's words that paragraph contains, stemmed) is its match.
Raw BM25 is not comparable across files, coverage is (0..1).

- covered: coverage ≥ ``COVERED`` (0.6), and when the record superseded an older one, the match
  also holds at least half of the words only the new version has;
- ``missing``: not covered; score = 1 − coverage;
- ``contradicted``: not covered, and a paragraph matches the superseded version (≥ 0.6 of its words,
  with its own distinctive words): CLAUDE.md still says the old thing; score 1.0;
- ``superseded_in_claudemd``: covered, but another paragraph still states the superseded version;
  score 0.8.

Candidates (score ≥ ``THRESHOLD``) are stored in the ``drift`` table; SessionStart reads only
that table. ``proposal`` turns them into a CLAUDE.md diff that is applied only on request.
"""

from __future__ import annotations

import os
import re
import sqlite3

from agentctx import clock
from agentctx.store import drift as drift_table
from agentctx.store import projects, records

MAX_BYTES = 4 * 1024 * 1024
COVERED = 0.6
THRESHOLD = 0.4
TOP_PARAGRAPHS = 5
MAX_RECORDS = 400
TERMS_PER_RECORD = 12
FILES = ("CLAUDE.md", os.path.join(".claude", "CLAUDE.md"))
KINDS = ("missing", "contradicted", "superseded_in_claudemd")
SECTION = "## Decisions and conventions (from agentctx)"
_STRUCK = re.compile(r"~~.*?~~")
_BLOCK_START = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s)")


class DriftError(ValueError):
    """A CLAUDE.md that cannot be compared (too large, binary); the message says which and why."""


class Paragraph:
    __slots__ = ("path", "line", "text")

    def __init__(self, path: str, line: int, text: str):
        self.path, self.line, self.text = path, line, text


class Unreadable(DriftError):
    """A CLAUDE.md agentctx does not read (``safefile``: a device, FIFO, symlink out of the repository,
    huge, binary); reported once in the log, and no drift is computed while it stays so."""


def read_claudemd(root: str) -> list[tuple[str, str]]:
    """[(path, text)] of the CLAUDE.md files that exist; Unreadable for one that cannot be compared."""
    from agentctx import safefile

    out, refused = [], []
    for rel in FILES:  # every file is checked (and a refused one reported) before anything is refused
        path = os.path.join(root, rel)
        try:
            raw = safefile.read_bytes(path, MAX_BYTES, root)
            if raw is not None and b"\x00" in raw:
                raise safefile.Refused(path, "binary (it contains NUL bytes), not Markdown")
            text = raw.decode("utf-8-sig") if raw is not None else None
        except safefile.Refused as exc:
            reason = exc.reason
            if reason.startswith("larger than"):
                reason += " (a CLAUDE.md that large is loaded into every session: split it)"
            refused.append((path, reason))
            continue
        except UnicodeDecodeError as exc:
            refused.append((path, f"not UTF-8 text (byte {exc.start})"))
            continue
        if text is not None:
            out.append((path, text))
    for path, reason in refused:
        safefile.report(path, reason, "drift")
    if refused:
        path, reason = refused[0]
        raise Unreadable(f"{path}: {reason}; nothing was compared")
    return out


def paragraphs(path: str, text: str) -> list[Paragraph]:
    """Blank-line separated blocks; a heading or list item starts a new one; code fences are skipped."""
    out: list[Paragraph] = []
    buf: list[str] = []
    start = 0
    fenced = False

    def flush():
        text = _STRUCK.sub(" ", " ".join(s.strip() for s in buf)).strip()  # struck-through text is retracted
        if text:
            out.append(Paragraph(path, start, text))
        if buf:
            buf.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not line.strip() or _BLOCK_START.match(line):
            flush()
        if line.strip():
            if not buf:
                start = number
            buf.append(line)
    flush()
    return out


def _words(rec: dict) -> list[str]:
    from agentctx.store import search

    words = search.terms(rec["title"])
    if len(words) < 2:
        words += [w for w in search.terms(rec.get("body") or "") if w not in words]
    return words[:TERMS_PER_RECORD]


class _Index:
    """The paragraphs in an in-memory FTS5 table, with per-word hit sets."""

    def __init__(self, paras: list[Paragraph]):
        self.paras = paras
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE p USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
        self.db.executemany("INSERT INTO p(rowid, text) VALUES (?, ?)", [(i, p.text) for i, p in enumerate(paras)])
        self._hits: dict[str, set[int]] = {}

    def hits(self, word: str) -> set[int]:
        if word not in self._hits:
            from agentctx.store import search  # not at import: SessionStart reads FILES, nothing else here

            rows = self.db.execute("SELECT rowid FROM p WHERE p MATCH ?", (search.phrase(word),))
            self._hits[word] = {r[0] for r in rows}
        return self._hits[word]

    def coverage(self, words: list[str], row: int) -> float:
        return sum(row in self.hits(w) for w in words) / len(words) if words else 0.0

    def best(self, words: list[str]) -> tuple[float, int | None]:
        """(coverage, paragraph index) of the best match: BM25's top paragraphs, then coverage."""
        if not words or not self.paras:
            return 0.0, None
        from agentctx.store import search

        query = search.any_of(words)
        rows = [r[0] for r in self.db.execute("SELECT rowid FROM p WHERE p MATCH ? ORDER BY bm25(p) LIMIT ?",
                                              (query, TOP_PARAGRAPHS))]
        scored = [(self.coverage(words, r), -rank, r) for rank, r in enumerate(rows)]
        if not scored:
            return 0.0, None
        cov, _, row = max(scored)
        return cov, row

    def close(self) -> None:
        self.db.close()


def _candidates(conn: sqlite3.Connection, project_id: str) -> list[dict]:
    """The project's settled decisions and conventions: current, project-scoped, stated or reinforced."""
    return records.current(conn, project_id, types=("decision", "convention"), scope="project",
                           confidences=("explicit", "reinforced"), limit=MAX_RECORDS)


def assess(conn: sqlite3.Connection, project_id: str, root: str) -> list[dict]:
    """The drift candidates for a project, best first, without storing them (DriftError: see read_claudemd)."""
    paras = [p for path, text in read_claudemd(root) for p in paragraphs(path, text)]
    index = _Index(paras)
    out = []
    try:
        for rec in _candidates(conn, project_id):
            words = _words(rec)
            if not words:
                continue
            cov, row = index.best(words)
            old = records.predecessor(conn, rec["id"], project_id)
            stale = None
            covered = cov >= COVERED
            if old:
                old_words = _words(old)
                new_only = [w for w in words if w not in old_words]
                old_only = [w for w in old_words if w not in words]
                if covered and new_only and row is not None and index.coverage(new_only, row) < 0.5:
                    covered = False
                if old_only:
                    for i in range(len(paras)):
                        if i != row or not covered:
                            if index.coverage(old_words, i) >= COVERED and index.coverage(old_only, i) >= 0.5:
                                stale = i
                                break
            if covered and stale is None:
                continue
            kind, score = ("superseded_in_claudemd", 0.8) if covered else \
                ("contradicted", 1.0) if stale is not None else ("missing", round(1.0 - cov, 3))
            if score < THRESHOLD:
                continue
            para = paras[stale] if stale is not None else None
            detail = {
                "missing": f"no CLAUDE.md paragraph holds ≥ {COVERED:.0%} of its words (best {cov:.0%})",
                "contradicted": "CLAUDE.md still states the superseded version",
                "superseded_in_claudemd": "CLAUDE.md states it, and still states the superseded version too",
            }[kind]
            if para is not None:
                detail += f" at {os.path.relpath(para.path, root)}:{para.line}"
            out.append({
                "record_id": rec["id"], "project_id": project_id, "score": score, "kind": kind, "detail": detail,
                "type": rec["type"], "title": rec["title"], "body": rec["body"],
                "stale": None if para is None else {"path": para.path, "line": para.line, "text": para.text,
                                                     "record_id": old["id"] if old else None},
            })
    finally:
        index.close()
    out.sort(key=lambda c: (-c["score"], c["record_id"]))
    return out


def project_root(conn: sqlite3.Connection, project) -> tuple[str, str]:
    """(project id, root folder) from a Project or a project id registered in ``projects``."""
    if isinstance(project, str):
        root = projects.root(conn, project)
        if root is None:
            raise DriftError(f"project {project} has no known folder")
        return project, root
    return project.id, project.root


def scan(conn: sqlite3.Connection, project) -> list[dict]:
    """Recompute the project's drift candidates and store them in ``drift`` (replacing the old ones).

    ``project``: a ``project.Project`` or a registered project id. Bumps the store generation when
    the candidate set changed, so a cached SessionStart digest picks the note up.
    """
    project_id, root = project_root(conn, project)
    found = assess(conn, project_id, root)
    drift_table.replace(conn, project_id, found, clock.now())
    return found


def stored(conn: sqlite3.Connection, project_id: str) -> list[dict]:
    """The stored candidates (what the last scan found), best first."""
    return drift_table.stored(conn, project_id)


def _line(cand: dict) -> str:
    body = " ".join((cand.get("body") or "").strip().split("\n\n")[0].split())  # its first paragraph
    if len(body) > 200:
        body = body[:199].rstrip() + "…"
    return f"- {cand['title']}" + (f": {body}" if body and body.lower() != cand["title"].lower() else "") + \
        f" <!-- agentctx {cand['record_id']} -->"


def proposal(conn: sqlite3.Connection, project) -> dict:
    """The proposed CLAUDE.md change, from a fresh scan: one line per candidate, and a unified diff.

    ``lines``: ``+ …`` additions and ``~~…~~`` strikethroughs; ``diff``: the unified diff of
    the root CLAUDE.md; ``new_text``: what ``apply`` would write; ``exists``: whether that CLAUDE.md
    exists; ``compared``: how many settled decisions and conventions were checked. Nothing is written here.
    """
    project_id, root = project_root(conn, project)
    cands = scan(conn, project)
    path = os.path.join(root, "CLAUDE.md")
    files = dict(read_claudemd(root))
    old_text = files.get(path, "")
    lines_out, strike, additions = [], {}, []
    for c in cands:
        stale = c["stale"]
        if stale is not None:
            shown = re.sub(r"^(?:[-*+]|\d+[.)]|#{1,6})\s+", "", stale["text"])
            lines_out.append(f"~~{shown}~~ ({os.path.relpath(stale['path'], root)}:{stale['line']}, "
                             f"superseded by {c['record_id']})")
            strike.setdefault(stale["path"], set()).add(stale["line"])
        if c["kind"] != "superseded_in_claudemd":
            additions.append(_line(c))
            lines_out.append(f"+ {c['type']}: {c['title']} ({c['record_id']}, {c['kind']}, score {c['score']:.2f})")
    import difflib

    new_text = _rewrite(old_text, strike.get(path, set()), additions)
    diff = "".join(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True),
                                        "a/CLAUDE.md", "b/CLAUDE.md")) if new_text != old_text else ""
    other = [p for p in strike if p != path]
    return {"project_id": project_id, "path": path, "exists": path in files,
            "compared": len(_candidates(conn, project_id)),  # settled decisions and conventions checked
            "candidates": [
        {k: c[k] for k in ("record_id", "score", "kind", "detail", "type", "title")} for c in cands],
        "lines": lines_out, "diff": diff, "new_text": new_text,
        "not_applied": [f"{os.path.relpath(p, root)}: strike line(s) {sorted(strike[p])} by hand" for p in other]}


def _rewrite(text: str, strike_lines: set[int], additions: list[str]) -> str:
    newline = "\r\n" if "\r\n" in text else "\n"  # keep the file's line endings
    lines = text.splitlines()
    for n in sorted(strike_lines):
        line = lines[n - 1]
        m = re.match(r"^(\s*(?:[-*+]|\d+[.)]|#{1,6})\s+)(.*)$", line)
        lead, rest = (m.group(1), m.group(2)) if m else ("", line)
        if rest.strip() and not rest.startswith("~~"):
            lines[n - 1] = f"{lead}~~{rest.rstrip()}~~"
    if additions:
        if SECTION in lines:
            at = lines.index(SECTION) + 1
            while at < len(lines) and lines[at].startswith("- "):
                at += 1
            lines[at:at] = additions
        else:
            if lines and lines[-1].strip():
                lines.append("")
            lines += [SECTION, "", *additions]
    return newline.join(lines) + newline if lines else ""


def apply(conn: sqlite3.Connection, project, expected_diff: str | None = None) -> dict:
    """Write the proposal to the root CLAUDE.md (only ever called after the user confirmed).

    With ``expected_diff``, refuses when the proposal changed since it was shown.
    """
    prop = proposal(conn, project)
    if not prop["diff"]:
        return {**prop, "applied": False}
    if expected_diff is not None and expected_diff != prop["diff"]:
        raise DriftError("the proposal changed since it was reviewed; run `agentctx sync` again")
    from agentctx import safefile
    from agentctx.fsio import write_atomic

    try:
        safefile.writable(prop["path"], project_root(conn, project)[1])
    except safefile.Refused as exc:
        raise DriftError(f"{exc}; CLAUDE.md was not changed") from None
    write_atomic(prop["path"], prop["new_text"])
    scan(conn, project)
    return {**prop, "applied": True}


def note(conn: sqlite3.Connection, project_id: str) -> str | None:
    """The SessionStart line when ≥ 2 candidates are stored (one indexed count; never reads CLAUDE.md)."""
    try:
        total = sum(drift_table.counts(conn, project_id).values())
    except sqlite3.Error:
        return None
    if total < 2:
        return None
    return (f"{total} decisions/conventions in the context store are not reflected in CLAUDE.md "
            "(missing or contradicted there); the user can run `agentctx sync` (or /agentctx:ctx-sync) to review.")
