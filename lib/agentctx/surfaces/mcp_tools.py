"""What the MCP tools do, without the MCP SDK: one long-lived store connection and plain text out.

``Service`` holds the connection, the detected project and the last profile refresh; each
public method is one tool and returns the text the model reads, or raises ``ToolInputError``
whose message names the problem. Nothing is written when a call is refused: every check
runs before the first write. ``mcp/server.py`` wraps these methods as MCP tools; the tests
and the benchmark call them directly too.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Sequence

from agentctx import budgets, paths, project
from agentctx.capture import stack
from agentctx.kinds import SCOPES, TYPES
from agentctx.store import db, graph, projects, records, search, sessions

SEARCH_RESULTS = budgets.SEARCH_RESULTS_BROAD  # the most ctx_search lists (budgets.search_depth: the default)
RESULT_TOKENS = 60  # hard cap per index line (the aim is ~50)
SEARCH_TOKENS = 1000  # hard cap for a whole ctx_search answer
MAX_QUERY_CHARS = 4000
MAX_IDS = 20
MAX_FILES = 20
MAX_PATH_CHARS = 1000
GET_CHARS = 40_000  # ~10k tokens: Claude Code warns above 10,000 tokens of tool output
RELATED_RESULTS = 20
VECTOR_RECHECK_S = 300

log = logging.getLogger("agentctx.mcp")


class ToolInputError(ValueError):
    """A call the tool refuses; the message says what was wrong and what to do instead."""


def status(rec: dict) -> str:
    """``current``, ``pinned`` or ``superseded``, plus ``global`` / ``inferred`` when they apply."""
    parts = ["superseded" if rec.get("superseded_at") else "pinned" if rec.get("pinned") else "current"]
    if rec.get("scope") == "global":
        parts.append("global")
    if rec.get("confidence") == "inferred":
        parts.append("inferred")
    return "/".join(parts)


def index_line(rec: dict, extra: str = "") -> str:
    """One record as a compact index line (≤ RESULT_TOKENS): id, type, date, status, title, a preview."""
    date = (rec.get("valid_from") or rec.get("recorded_at") or "")[:10]
    head = f"- {rec['id']} | {rec['type']} | {date} | {status(rec)}{extra} | "
    room = RESULT_TOKENS - budgets.estimate_tokens(head)
    title = budgets.clip_tokens(" ".join(rec["title"].split()), min(room, 32))
    line = head + title
    body = " ".join((rec.get("body") or "").split())
    left = RESULT_TOKENS - budgets.estimate_tokens(line + " -- ")
    if body and left >= 6:
        line += " -- " + budgets.clip_tokens(body, min(left, 14))
    return line


class Service:
    """The state behind the tools: one connection, the project, warm caches. Thread-safe."""

    def __init__(self, project_dir: str | None = None):
        self.project_dir = project.working_dir(project_dir)
        self.from_env = bool(project_dir or os.environ.get("CLAUDE_PROJECT_DIR"))
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._inode: tuple[int, int] | None = None
        self._project: project.Project | None = None
        self._registered_for: str | None = None
        self._notes: list[str] = []
        from agentctx.consolidation.hybrid import Loader

        self._vectors = Loader()  # (store, embedder) for hybrid ctx_search, loaded once

    # -- state

    def set_project_dir(self, folder: str) -> None:
        """Use another project directory (e.g. the client's first root)."""
        with self._lock:
            folder = os.path.realpath(folder)
            if folder != os.path.realpath(self.project_dir):
                self.project_dir, self._project = folder, None

    def close(self) -> None:
        with self._lock:
            self._vectors.close()
            if self._conn is not None:
                self._conn.close()
            self._conn = self._inode = self._registered_for = None

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(paths.db_path())
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def conn(self) -> sqlite3.Connection:
        """The store connection, reopened if the file was moved aside or migrated by a newer agentctx."""
        if self._conn is not None:
            try:
                same = self._stat() == self._inode
                version = self._conn.execute("PRAGMA user_version").fetchone()[0] if same else None
            except sqlite3.Error:
                same, version = False, None
            if same and version == _latest():
                return self._conn
            self.close()
        try:
            self._conn = db.connect()
        except sqlite3.DatabaseError as exc:
            if not db.is_corruption(exc):
                raise
            moved = db.quarantine(reason=str(exc))
            self._notes.append(f"Note: the store was damaged; it was moved to {moved} and a fresh store was started.")
            self._conn = db.connect()
        self._inode = self._stat()
        return self._conn

    def project(self) -> project.Project:
        """The project the tools answer for: the folder the session is in now (it follows ``cd``: see
        capture/cwd_changed.py), else the server's own project directory."""
        conn = self.conn()
        folder = self._session_folder(conn)
        if folder:
            self.set_project_dir(folder)
        if self._project is None:
            self._project = project.detect(self.project_dir)
        if self._registered_for != self._project.id:
            try:
                projects.register(conn, self._project)
            except sqlite3.OperationalError:  # a read-only store can still be searched
                pass
            self._registered_for = self._project.id
        return self._project

    def _session_folder(self, conn: sqlite3.Connection) -> str | None:
        """The session's current folder from its row (one indexed read per call); None when unknown."""
        sid = os.environ.get("CLAUDE_CODE_SESSION_ID")
        if not sid:
            return None
        try:
            folder = sessions.current_folder(conn, sid)
        except sqlite3.Error:
            return None
        return folder if folder and os.path.isdir(folder) else None

    def warm(self, detect: bool = True) -> None:
        """Open the store; with ``detect``, also detect the project and refresh its profile (run once at start)."""
        with self._lock:
            try:
                conn = self.conn()
                if not detect:
                    return
                proj = self.project()
                stack.refresh(conn, proj.id, proj.root)
                search.search(conn, proj.id, "warm cache", limit=1)
                from agentctx.capture import entities

                entities.vocabulary(proj.root)  # ctx_record links what a record mentions: read the tree now
            except Exception as exc:  # noqa: BLE001 - the first tool call reports the problem
                log.warning("warm-up: %s", exc)

    def vectors(self) -> tuple | None:
        """(vector store, embedder) when vectors of the configured model exist, else None (FTS5 only).

        The model is loaded once (the server is long-lived); never downloaded here. Checked again
        at most every VECTOR_RECHECK_S while missing (a consolidation pass may create them).
        """
        return self._vectors.get(recheck_s=VECTOR_RECHECK_S)

    def _run(self, fn, *args, **kwargs) -> str:
        """Run one tool under the lock; turn store and record errors into ToolInputError."""
        with self._lock:
            try:
                text = self._repairing_index(fn, *args, **kwargs)
            except ToolInputError:
                raise
            except db.NewerSchemaError as exc:
                raise ToolInputError(f"{exc}. Nothing was read or written.") from None
            except (records.RecordError, db.StoreError) as exc:
                raise ToolInputError(str(exc)) from None
            except sqlite3.OperationalError as exc:
                self.close()
                if "locked" in str(exc) or "busy" in str(exc):
                    raise ToolInputError("the store is busy (another agentctx process holds a lock); try again") from None
                if "readonly" in str(exc):
                    raise ToolInputError(f"the store at {paths.db_path()} is read-only; nothing was written") from None
                raise ToolInputError(f"store error: {db.describe(exc)}") from None
            except sqlite3.Error as exc:
                self.close()
                raise ToolInputError(f"store error: {db.describe(exc)}") from None
            notes, self._notes = self._notes, []
            return "\n".join([*notes, text]) if notes else text

    def _repairing_index(self, fn, *args, **kwargs) -> str:
        """``fn``; if the full-text index turns out damaged, rebuild it from the records and call it again."""
        try:
            return fn(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            from agentctx.store import integrity

            if not integrity.index_suspect(exc):
                raise
            self.close()
            done = integrity.repair_index(paths.db_path())
            if not done:
                raise
            self._notes.append(f"Note: {done}; nothing was lost.")
            return fn(*args, **kwargs)

    # -- the tools

    def search(self, query: str, type: str | None = None, file: str | None = None, scope: str | None = None) -> str:
        return self._run(self._search, query, type, file, scope)

    def get(self, ids: Sequence[str]) -> str:
        return self._run(self._get, ids)

    def record(self, type: str, title: str, body: str, supersedes: str | None = None, scope: str | None = None,
               files: Sequence[str] | None = None) -> str:
        return self._run(self._record, type, title, body, supersedes, scope, files)

    def supersede(self, old_id: str, new_body: str, rationale: str, new_title: str | None = None) -> str:
        return self._run(self._supersede, old_id, new_body, rationale, new_title)

    def project_profile(self) -> str:
        return self._run(self._project_profile)

    def related(self, file: str) -> str:
        return self._run(self._related, file)

    def sync_claudemd(self) -> str:
        return self._run(self._sync_claudemd)

    # -- implementations

    def _search(self, query, rtype, file, scope) -> str:
        query = _text_arg("query", query)
        if not query.strip():
            raise ToolInputError("query is empty: give a few distinctive words (a name, an error message, a topic). "
                                 "For everything about one file use ctx_related(file).")
        if len(query) > MAX_QUERY_CHARS:
            raise ToolInputError(f"query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}. Search with "
                                 "a few distinctive words (an error message, a function or file name), not a document.")
        if not search.terms(query):
            raise ToolInputError(f"query {budgets.clip_tokens(query, 20)!r} has no searchable words (only punctuation or "
                                 "very common words); use distinctive words.")
        types = [_choice("type", rtype, TYPES)] if rtype else []
        scope = _choice("scope", scope, (*SCOPES, "all")) if scope else "all"
        file = _path_arg("file", file) if file else None
        conn, proj = self.conn(), self.project()
        if file:
            recs = self._search_file(conn, proj, query, types, scope, file)
            where = f" linked to {file}"
        else:
            from agentctx.consolidation import hybrid

            pid = "" if scope == "global" else proj.id  # no project has id "": only global records remain
            vec = self.vectors() if scope != "global" else None  # the dashboard's search ranks the same way
            recs = hybrid.search_records(conn, pid, query, store=vec[0] if vec else None,
                                         embedder=vec[1] if vec else None, types=types,
                                         limit=40 if scope == "project" else SEARCH_RESULTS)
            recs = [r for r in recs if scope != "project" or r["scope"] == "project"]
            where = ""
        shown = budgets.clip_tokens(" ".join(query.split()), 20)
        if not recs:
            return (f"No current records match {shown!r}{where} in project {proj.name}. Try other words"
                    + (", drop the type filter" if types else "") + ", or ctx_related(file) for a file's records.")
        def head(n: int) -> str:  # never str.format: the query, a path or the project name may hold braces
            return (f"{n} current records for {shown!r}{where} in project {proj.name}, best first "
                    "(id | type | date | status | title -- preview). Full text: ctx_get(ids).")

        depth = budgets.search_depth(query)  # a narrow query lists fewer results than a broad one
        lines, _ = budgets.fit_blocks((index_line(r) for r in recs[:depth]),
                                      SEARCH_TOKENS - budgets.estimate_tokens(head(SEARCH_RESULTS)) - 2,
                                      max_chars=1_000_000)
        return "\n".join([head(len(lines)), *lines])

    def _search_file(self, conn, proj, query, types, scope, file) -> list[dict]:
        linked = graph.related(conn, proj.id, file, root=proj.root, depth=2, limit=500)
        linked = [r for r in linked if (not types or r["type"] in types) and scope in ("all", r["scope"])]
        if not linked:
            return []
        by_id = {r["id"]: r for r in linked}
        return [by_id[rid] for rid in search.rank_among(conn, query, by_id, SEARCH_RESULTS)]

    def _get(self, ids) -> str:
        if not isinstance(ids, (list, tuple)) or any(not isinstance(i, str) for i in ids):
            raise ToolInputError('ids must be a list of record ids (strings), e.g. ["01JD3K5M8Z"]')
        refs = list(dict.fromkeys(i.strip().upper() for i in ids))
        if not refs:
            raise ToolInputError("ids is empty: pass the ids ctx_search listed (up to 20)")
        if len(refs) > MAX_IDS:
            raise ToolInputError(f"{len(refs)} ids; at most {MAX_IDS} per call")
        conn, proj = self.conn(), self.project()
        found, bad = [], []
        for ref in refs:
            try:
                found.append(records.resolve(conn, ref, proj.id))
            except records.RecordError as exc:
                bad.append(f"{exc} in this project" if str(exc).startswith("no record") else str(exc))
        if bad:
            ok = f" The other {len(found)} id(s) are fine." if found else ""
            raise ToolInputError(f"{'; '.join(bad)}.{ok} Ids come from ctx_search or ctx_related.")
        blocks, used = [], 0
        for i, rec in enumerate(found):
            before, after = records.lineage(conn, rec["id"], project_id=proj.id)
            room = max(600, (GET_CHARS - used) // (len(found) - i))
            linked = graph.entities_of(conn, rec["id"], limit=40)
            files = [e["name"] for e in linked if e["kind"] == "file"][:20]
            about = [f"{e['kind']} {e['name']}" for e in linked if e["kind"] != "file"][:20]
            block = _full(rec, before, after, files, room, about)
            blocks.append(block)
            used += len(block)
        try:
            records.touch(conn, [r["id"] for r in found], project_id=proj.id)
        except sqlite3.Error:  # a read-only store still answers
            pass
        return "\n\n".join(blocks)

    def _record(self, rtype, title, body, supersedes, scope, files) -> str:
        rtype = _choice("type", rtype, TYPES)
        title, body = _text_arg("title", title), _text_arg("body", body)
        scope = _choice("scope", scope, SCOPES) if scope else "project"
        if supersedes is not None:
            supersedes = _text_arg("supersedes", supersedes).strip() or None
        names = self._file_names(files)
        conn, proj = self.conn(), self.project()
        records.validate(type=rtype, title=title, body=body, scope=scope, source="mcp_tool")
        if supersedes:
            old = records.resolve(conn, supersedes, proj.id)
            if old["superseded_at"]:
                raise ToolInputError(f"record {old['id']} is already superseded by {old['superseded_by']}; "
                                     "supersede that one (ctx_get shows the chain)")
        rec = records.add(conn, proj.id, type=rtype, title=title, body=body, scope=scope, supersedes=supersedes,
                          source="mcp_tool", session_id=os.environ.get("CLAUDE_CODE_SESSION_ID"))
        if names:
            with db.transaction(conn):
                for name in names:
                    graph.link(conn, rec["id"], graph.entity(conn, proj.id, "file", name))
        about = [(k, n) for k, n in self._link_entities(conn, proj, rec) if (k, n) not in {("file", x) for x in names}]
        extra = [f"supersedes {supersedes.upper()}"] if supersedes else []
        if names:
            extra.append("linked to " + ", ".join(names))
        if about:
            extra.append("about " + ", ".join(f"{k} {n}" for k, n in about[:8]))
        if rec.get("reinforced"):  # an exact restatement of a current record: reinforced, not stored twice
            return (f"Already recorded: {rec['id']} · {rec['type']} · {rec['title']} says exactly this; it was "
                    f"reinforced (stated {rec['reinforce_count'] + 1} times) instead of stored twice"
                    + (f" ({'; '.join(extra)})" if extra else "") + ".")
        return (f"Recorded {rec['id']} · {rec['type']} · {rec['scope']} · {rec['title']}"
                + (f" ({'; '.join(extra)})" if extra else "") + ".")

    def _link_entities(self, conn: sqlite3.Connection, proj: project.Project, rec: dict) -> list[tuple[str, str]]:
        """Link a new project record to the files, symbols, packages and commands it mentions
        (``capture.entities``); what was linked. A failure costs the links, never the record."""
        if rec["scope"] != "project":
            return []
        from agentctx.capture import entities

        try:
            vocab = entities.vocabulary(proj.root)
            with db.transaction(conn):
                return entities.link_record(conn, proj.id, rec, vocab)
        except (OSError, ValueError, sqlite3.Error) as exc:
            log.warning("entity links skipped: %s", exc)
            return []

    def _file_names(self, files) -> list[str]:
        if files is None:
            return []
        if isinstance(files, str) or not isinstance(files, (list, tuple)):
            raise ToolInputError("files must be a list of paths, e.g. [\"src/app/models.py\"]")
        if len(files) > MAX_FILES:
            raise ToolInputError(f"{len(files)} files; at most {MAX_FILES}")
        root = self.project().root
        return list(dict.fromkeys(graph.normalize_path(_path_arg("files", f), root) for f in files))

    def _supersede(self, old_id, new_body, rationale, new_title) -> str:
        old_id = _text_arg("old_id", old_id).strip()
        new_body, rationale = _text_arg("new_body", new_body), _text_arg("rationale", rationale)
        if not old_id:
            raise ToolInputError("old_id is empty: give the id of the record that is no longer true")
        if not new_body.strip():
            raise ToolInputError("new_body is empty: say what is true now")
        if not rationale.strip():
            raise ToolInputError("rationale is empty: say why it changed (it is kept with the new record)")
        if new_title is not None:
            new_title = _text_arg("new_title", new_title).strip() or None
        conn, proj = self.conn(), self.project()
        old = records.resolve(conn, old_id, proj.id)
        if old["superseded_at"]:
            raise ToolInputError(f"record {old['id']} is already superseded by {old['superseded_by']}; "
                                 "supersede that one (ctx_get shows the chain)")
        rec = records.supersede(conn, proj.id, old["id"], body=new_body, title=new_title, rationale=rationale,
                                source="mcp_tool", session_id=os.environ.get("CLAUDE_CODE_SESSION_ID"))
        derived = "" if new_title else " (title from new_body's first sentence; pass new_title to choose another)"
        return (f"Recorded {rec['id']} · {rec['type']} · {rec['title']}{derived}; it supersedes {old['id']} "
                f"({old['title']}), which stays in history.")

    def _project_profile(self) -> str:
        conn, proj = self.conn(), self.project()
        unstored = ""
        try:
            report = stack.refresh(conn, proj.id, proj.root)
        except sqlite3.OperationalError as exc:  # e.g. a read-only store: show what was detected
            report, unstored = stack.Refresh(), str(exc)
            report.facts = stack.detect(proj.root)
        lines = [f"Project {proj.name} | {proj.root}" + (f" | {proj.remote}" if proj.remote else "")]
        profile = sorted(records.active(conn, proj.id, ["profile"], limit=100),
                         key=lambda r: (r["key"] or "~", r["title"]))
        for rec in profile:
            note = f" [stated; the repository suggests: {report.kept[rec['key']]}]" if rec["key"] in report.kept else ""
            lines.append(f"- {rec['title']}: {' '.join(rec['body'].split())}{note} (id {rec['id']})")
        if unstored:
            lines.append(f"Detected but not stored ({unstored}):")
            lines += [f"- {f.title}: {f.body}" for f in report.facts]
        elif not profile:
            lines.append("No profile yet: no pyproject.toml, package.json, Cargo.toml, go.mod, Makefile or similar "
                         "was found at the project root.")
        changes = [f"{len(report.added)} new"] if report.added else []
        if report.changed:
            changes.append(f"{len(report.changed)} changed (old values kept in history)")
        if changes:
            lines.append(f"Profile refreshed from the repository: {', '.join(changes)}.")
        return "\n".join(lines)

    def _sync_claudemd(self) -> str:
        from agentctx.sharing import drift

        conn, proj = self.conn(), self.project()
        try:
            prop = drift.proposal(conn, proj)
        except drift.DriftError as exc:
            raise ToolInputError(f"{exc}. CLAUDE.md was not compared or changed.") from None
        if not prop["candidates"]:
            return f"CLAUDE.md ({prop['path']}) reflects the store's decisions and conventions: nothing to propose."
        lines = [f"{len(prop['candidates'])} drift candidate(s) for {prop['path']}"
                 + ("" if prop["exists"] else " (the file does not exist yet)") + ":", *prop["lines"],
                 *(f"(by hand) {x}" for x in prop["not_applied"])]
        if prop["diff"]:
            lines += ["", "Proposed change (unified diff):", budgets.clip_tokens(prop["diff"], 6000)]
        lines += ["", "Nothing was written. Show this to the user; apply only after they confirm, with "
                      "`agentctx sync --yes` (Bash). They may also edit CLAUDE.md by hand."]
        return "\n".join(lines)

    def _related(self, file) -> str:
        name = _path_arg("file", file)
        conn, proj = self.conn(), self.project()
        recs = graph.related(conn, proj.id, name, root=proj.root, depth=2, limit=RELATED_RESULTS)
        shown = graph.normalize_path(name, proj.root)
        if not recs:
            return (f"No current records are linked to {shown} in project {proj.name}. Links come from "
                    "ctx_record(files=[...]), from what records mention (linked after each session) and from edits "
                    "agentctx observed; try ctx_search with the file's topic.")
        lines = [index_line(r, "" if r["hops"] <= 1 else f" | {r['hops']} hops") for r in recs]
        head = f"{len(lines)} current records linked to {shown} (direct links first). Full text: ctx_get(ids)."
        return "\n".join([head, *lines])


def _latest() -> int:
    from agentctx.store import migrations

    return migrations.LATEST


def _text_arg(name: str, value) -> str:
    if not isinstance(value, str):
        raise ToolInputError(f"{name} must be text, not {type(value).__name__}")
    if "\x00" in value:
        raise ToolInputError(f"{name} contains a NUL byte")
    return value


def _choice(name: str, value, allowed: Sequence[str]) -> str:
    text = _text_arg(name, value).strip().lower()
    if text not in allowed:
        raise ToolInputError(f"unknown {name} {value!r}; use one of: {', '.join(allowed)}")
    return text


def _path_arg(name: str, value) -> str:
    text = _text_arg(name, value).strip()
    if not text:
        raise ToolInputError(f"{name} is empty: give a path such as src/app/models.py")
    if len(text) > MAX_PATH_CHARS:
        raise ToolInputError(f"{name} is {len(text):,} characters long; that is not a file path")
    return text


def _full(rec: dict, before: list[dict], after: list[dict], files: list[str], max_chars: int,
          about: Sequence[str] = ()) -> str:
    meta = [rec["type"], rec["scope"], rec["confidence"], f"source {rec['source']}"]
    if rec["pinned"]:
        meta.append("pinned")
    if rec["key"]:
        meta.append(f"key {rec['key']}")
    lines = [
        f"## {rec['title']}",
        f"id {rec['id']} · " + " · ".join(meta),
        f"valid {rec['valid_from'][:10]} → {(rec['valid_to'] or 'now')[:10]} · recorded {rec['recorded_at'][:16]}Z",
    ]
    if rec["superseded_at"]:
        lines.append(f"SUPERSEDED on {rec['superseded_at'][:10]} by {rec['superseded_by']}: history, not current."
                     if rec["superseded_by"] else
                     f"RETIRED on {rec['superseded_at'][:10]} with no successor (forgotten): history, not current.")
    if files:
        lines.append("files: " + ", ".join(files))
    if about:
        lines.append("about: " + ", ".join(about))
    if before:
        lines.append("supersedes (older versions, newest first):")
        lines += [f"  - {r['id']} · {r['valid_from'][:10]} → {(r['valid_to'] or '')[:10]} · {r['title']}"
                  for r in before[:10]]
    if after:
        lines.append("superseded by (newer versions, in order):")
        lines += [f"  - {r['id']} · {r['valid_from'][:10]} · {status(r)} · {r['title']}" for r in after[:10]]
    head = "\n".join(lines)
    body = rec["body"] or "(no body)"
    room = max(200, max_chars - len(head) - 2)
    if len(body) > room:
        body = body[:room].rstrip() + (f"\n[body clipped at {room:,} of {len(rec['body']):,} characters; "
                                       "ctx_get this id alone for all of it]")
    return f"{head}\n\n{body}"
