"""One sync with a remote: push what changed here, then pull what is new there from the cursor.

Everything goes to and comes from one team's copies on the server (``client.team_of``: the remote's
``--team``, or the role's only team). Push, in order: purges waiting here; the shared projects (created in
that team's copy when new); the first full push of a project newly shared (resumable: its position is kept); then the
outbox (records whose synced columns changed). Each batch is one server transaction, and its outbox
entries are dropped only after it committed, so a failure at any point loses nothing: the next sync
sends it again and the server, idempotent by record id, changes nothing twice. Pull: pages of
changes after the cursor; purges first (``agentctx purge``'s removal), then the records in local
transactions sized to hold the write lock about 80 ms each (hooks write to this store too), each together
with the cursor it reached; records new here are inserted many to a statement. At least one
batch and one page per sync, so a short time box still makes progress.

A failure (offline, refused, timed out) leaves a one-line status on the remote and a time before
which the consolidation pass will not try again (1 min, doubling to 1 h); ``agentctx remote sync``
tries at once. With nothing to send, the pass pulls at most every ``PULL_EVERY_S`` (2 min), and in
between does not import psycopg at all. Runs in the detached consolidation process (``in_consolidation``) or the CLI, one at
a time (lock ``remote-sync``); never in a hook.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from datetime import datetime, timedelta

from agentctx import clock, flight
from agentctx.logs import log
from agentctx.remote import client, optin, rules
from agentctx.store import records
from agentctx.store import remote as store
from agentctx.store.db import transaction

PUSH_BATCH = 1000
PULL_PAGE = 5000
APPLY_CHUNK = 200  # pulled records in the first local transaction; later ones sized to APPLY_TARGET_S
APPLY_MIN, APPLY_MAX = 20, 5000
APPLY_TARGET_S = 0.08  # how long one local transaction of a pull holds the store's write lock, about
PULL_EVERY_S = 120  # with nothing to send, the consolidation pass asks the server at most this often
BACKOFF_FIRST_S = 60
BACKOFF_MAX_S = 3600
LOCK = "remote-sync"
_RESTORED = ("id", "type", "key", "title", "body", "pinned", "confidence", "valid_from", "valid_to", "recorded_at",
             "superseded_at", "superseded_by", "updated_at", "source")


def backoff_seconds(failures: int) -> int:
    """How long the consolidation pass waits after ``failures`` failed attempts in a row."""
    return min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** max(0, failures - 1))


class Sync:
    """One sync of one remote over an open local store."""

    def __init__(self, conn: sqlite3.Connection, remote: dict, *, deadline: float | None = None):
        self.conn, self.remote, self.name = conn, remote, remote["name"]
        self.deadline = deadline
        self.shares = optin.shared(conn)
        self.accepted: set[str] = set()
        self.team: str | None = None
        self._counted: set[str] = set()
        # Known here but not shared with this remote: a pull never writes into them.
        self.unshared = {p["id"] for p in store.known_projects(conn)} - set(self.shares)
        self.report: dict = {
            "remote": self.name, "status": "ok", "pushed": 0, "unchanged": 0, "pulled": 0, "conflicts_resolved": 0,
            "purged_on_server": 0, "purged_here": 0, "withheld": {}, "redacted": 0,
            "skipped": 0, "refused": 0, "refused_why": {}, "rejected": {}, "complete": True,
            "shared_projects": sorted(self.shares)}

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.report["complete"] = False
            return True
        return False

    # -- what would go out -----------------------------------------------------------------------------

    def _full_push_pages(self, projects):
        """(project, [entries], position after them) for the first full push of these projects."""
        for pid in sorted(projects):
            pos = store.full_push_position(self.conn, self.name, pid)
            while pos is not None:
                page = store.project_page(self.conn, pid, pos, PUSH_BATCH)
                if not page:
                    yield pid, [], None
                    break
                pos = page[-1][0]
                yield pid, [{"record_id": rid, "edited": 0, "version": None} for _, rid in page], pos

    def _outbox_pages(self):
        after = ""
        while True:
            entries = store.outbox(self.conn, self.name, after=after, limit=PUSH_BATCH)
            if not entries:
                return
            after = entries[-1]["record_id"]
            yield entries

    def _sort(self, entries: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
        """(wire records to send, entries done with, entries kept queued), counting what stays local."""
        recs = store.for_push(self.conn, [e["record_id"] for e in entries])
        send, done, keep = [], [], []
        for entry in entries:
            rec = recs.get(entry["record_id"])
            if rec is None:  # deleted, purged or archived here since it was queued
                done.append(entry)
                continue
            reason = rules.withheld(rec) or (None if rec["project_id"] in self.shares else "project not shared")
            wire, redacted = (None, False) if reason else rules.outgoing(rec, rec["supersedes"])
            if not reason and wire is None:
                reason = "private"
            if reason:
                if rec["id"] not in self._counted:  # the full push and the outbox may both name it
                    self._counted.add(rec["id"])
                    self.report["withheld"][reason] = self.report["withheld"].get(reason, 0) + 1
                done.append(entry)
                continue
            if rec["project_id"] not in self.accepted:
                keep.append(entry)  # not on the server for this team (an admin removed it): kept queued
                continue
            if redacted and rec["id"] not in self._counted:
                self._counted.add(rec["id"])
                self.report["redacted"] += 1
            send.append(dict(wire, edited=bool(entry["edited"]), _entry=entry))
        return send, done, keep

    # -- push ------------------------------------------------------------------------------------------

    def resolve_team(self, server) -> str:
        if self.team is None:
            self.team = client.team_of(server, self.remote["team"])
            self.report["team"] = self.team
        return self.team

    def push(self, server) -> None:
        team = self.resolve_team(server)
        waiting = store.purges(self.conn, self.name)
        if waiting:
            self.report["purged_on_server"] = len(client.purge(server, team, waiting))
            with transaction(self.conn):
                store.purges_done(self.conn, self.name, [rid for rid, _ in waiting])
        names = {pid: info["name"] for pid, info in self.shares.items()}
        self.accepted = client.ensure_projects(server, team, names)
        for pid, entries, pos in self._full_push_pages(self.accepted):
            if entries:
                self._send(server, entries)
            with transaction(self.conn):
                store.set_full_push_position(self.conn, self.name, pid, pos or 0, pos is None)
            if self.out_of_time():
                return
        for entries in self._outbox_pages():
            self._send(server, entries)
            if self.out_of_time():
                return

    def _send(self, server, entries: list[dict]) -> None:
        send, done, _ = self._sort(entries)
        result = self._push(server, [{k: v for k, v in row.items() if k != "_entry"} for row in send])
        written = set(result["written"])
        self.report["pushed"] += sum(1 for r in send if r["id"] in written)
        self.report["unchanged"] += result["unchanged"]
        self.report["conflicts_resolved"] += len(result["retired"])
        for row in send:
            if row["id"] in result["purged"]:  # purged on the server while this copy was here: it goes here too
                self.report["purged_here"] += bool(purge_here(self.conn, row["id"], row["project_id"], self.name))
        with transaction(self.conn):
            store.outbox_done(self.conn, self.name, [(e["record_id"], e["version"]) for e in
                                                     done + [r["_entry"] for r in send] if e["version"] is not None])

    def _push(self, server, rows: list[dict]) -> dict:
        """``client.push``; when the server refuses the batch for what is in it (not for being offline),
        the rows are pushed one at a time and each refused one is reported once (``rejected``, the log)
        and left out, so the rest of the sync goes on."""
        try:
            return client.push(server, self.resolve_team(server), rows)
        except Exception as exc:
            if _failure_kind(exc) != "error" or isinstance(exc, client.RemoteError):
                raise
            if len(rows) == 1:
                rid = rows[0]["id"]
                if rid in self.report["rejected"]:  # the full push and the outbox may both carry it
                    return {"written": [], "unchanged": 0, "purged": [], "retired": {}}
                self.report["rejected"][rid] = client.one_line(exc)
                log("remote", f"{self.name}: record {rid} of project {rows[0]['project_id']} was refused by the "
                    f"server and is left out of this sync: {client.one_line(exc)}")
                return {"written": [], "unchanged": 0, "purged": [], "retired": {}}
        out: dict = {"written": [], "unchanged": 0, "purged": [], "retired": {}}
        for row in rows:
            one = self._push(server, [row])
            out["written"] += one["written"]
            out["unchanged"] += one["unchanged"]
            out["purged"] += one["purged"]
            out["retired"].update(one["retired"])
        return out

    # -- pull ------------------------------------------------------------------------------------------

    def pull(self, server) -> None:
        cursor = self.remote["cursor"] or 0
        team = self.resolve_team(server)
        first = True
        while first or not self.out_of_time():  # at least one page: a long push never starves the pull
            first = False
            changes, new_cursor = client.pull(server, team, cursor, PULL_PAGE)
            if new_cursor == cursor:
                return
            purges = [c for c in changes if c["op"] == "purge"]
            owners = store.owners(self.conn, [c["record_id"] for c in purges])
            for change in purges:  # first, each in its own transaction (a crash repeats them harmlessly)
                if self._foreign(change, owners.get(change["record_id"])):
                    continue
                self.report["purged_here"] += bool(purge_here(self.conn, change["record_id"],
                                                              change["project_id"], self.name))
            upserts = [c for c in changes if c["op"] == "upsert"]
            # Local transactions sized to hold the write lock ~APPLY_TARGET_S (hooks write to this store
            # too), each with the cursor it reached; at least one, so the cursor moves past purges.
            start, chunk = 0, APPLY_CHUNK
            while True:
                part = upserts[start:start + chunk]
                start += len(part)
                reached = new_cursor if start >= len(upserts) else part[-1]["seq"]
                t0 = time.monotonic()
                with transaction(self.conn), store.muted(self.conn):
                    self._apply(part)
                    store.set_state(self.conn, self.name, cursor=reached)
                took = time.monotonic() - t0
                if start >= len(upserts):
                    break
                chunk = max(APPLY_MIN, min(APPLY_MAX, int(len(part) * APPLY_TARGET_S / max(took, 1e-3))))
            cursor = self.remote["cursor"] = new_cursor

    def _foreign(self, change: dict, owner: str | None) -> bool:
        """True (counted, logged with both project ids) when applying this change would write outside
        its project: the id belongs to another project here, or its project is not shared with this
        remote, or the record names another project than its change."""
        rid, pid = change["record_id"], change["project_id"]
        srv = change.get("record") or {}
        if srv and srv.get("project_id") != pid:
            kind, why = "mismatched project", f"its record names project {srv.get('project_id')}"
        elif owner is not None and owner != pid:
            kind, why = "id of another project", f"that id belongs to project {owner} here"
        elif pid in self.unshared:
            kind, why = "project not shared", "that project is not shared with this remote here"
        else:
            return False
        self.report["refused"] += 1
        self.report["refused_why"][kind] = self.report["refused_why"].get(kind, 0) + 1
        log("remote", f"{self.name}: refused a pulled {change['op']} of record {rid} for project {pid}: {why}")
        return True

    def _apply(self, changes: list[dict]) -> None:
        ids = [c["record_id"] for c in changes]
        owners = store.owners(self.conn, ids)
        changes = [c for c in changes if not self._foreign(c, owners.get(c["record_id"]))]
        ids = [c["record_id"] for c in changes]
        local = store.local_versions(self.conn, ids)
        edited = store.edited_flags(self.conn, self.name, ids)
        fresh = []
        for change in changes:
            rid, srv = change["record_id"], change["record"]
            if rid in local and local[rid] is None:
                continue  # in this store's cold partition: history, left as it is
            if rules.withheld(srv):  # nothing agentctx would push (written on the server by hand)
                self.report["skipped"] += 1
                continue
            if rid not in local and not (srv["key"] and not srv["superseded_at"]):
                fresh.append(change)  # new here and holding no key: inserted together below
                continue
            self._apply_each(change, local.get(rid), bool(edited.get(rid)))
        if fresh:
            self._apply_fresh(fresh)

    def _apply_fresh(self, changes: list[dict]) -> None:
        """Records new to this store, in one statement; if one is refused, each alone (only it is skipped)."""
        self.conn.execute("SAVEPOINT pulled_new")
        try:
            added = records.restore_new(self.conn, [(c["record"]["project_id"], {k: c["record"][k] for k in _RESTORED})
                                                    for c in changes])
            self.conn.execute("RELEASE pulled_new")
            self.report["pulled"] += added
            return
        except (records.RecordError, sqlite3.IntegrityError, ValueError):
            self.conn.execute("ROLLBACK TO pulled_new")
            self.conn.execute("RELEASE pulled_new")
        for change in changes:
            self._apply_each(change, None, False)

    def _apply_each(self, change: dict, mine: dict | None, edited: bool) -> None:
        rid = change["record_id"]
        self.conn.execute("SAVEPOINT pulled")
        try:
            changed = self._apply_one(change["record"], mine, edited)
            self.conn.execute("RELEASE pulled")
        except (records.RecordError, sqlite3.IntegrityError, ValueError) as exc:
            self.conn.execute("ROLLBACK TO pulled")
            self.conn.execute("RELEASE pulled")
            self.report["skipped"] += 1
            log("remote", f"{self.name}: record {rid} not applied: {exc}")
            return
        self.report["pulled"] += changed

    def _apply_one(self, srv: dict, mine: dict | None, edited: bool) -> bool:
        pid = srv["project_id"]
        if mine is None:
            data = {k: srv[k] for k in _RESTORED}
            if srv["key"] and not srv["superseded_at"]:
                holder = records.by_key(self.conn, pid, srv["key"])
                if holder and (holder["recorded_at"], holder["id"]) > (srv["recorded_at"], srv["id"]):
                    data.update(rules.retirement(srv, holder))  # a newer local holder keeps the key
            return records.restore(self.conn, pid, data) == "added"
        local = dict(mine, pinned=bool(mine["pinned"]), supersedes=None)
        merged = rules.combine(srv, local, edited)
        fields = {k: merged[k] for k in rules.CONTENT + rules.RETIREMENT if merged[k] != local[k]}
        if not fields:
            return False
        if set(fields) & {"title", "body", "type", "key", "confidence", "source"}:  # checked and redacted as any write
            fields["title"], fields["body"] = records.validate(
                type=merged["type"], title=merged["title"], body=merged["body"] or "", scope=mine["scope"],
                confidence=merged["confidence"], key=merged["key"], source=merged["source"])
        if "pinned" in fields:
            fields["pinned"] = int(fields["pinned"])
        store.update_synced(self.conn, mine["id"], fields)
        return True

    # -- dry run ---------------------------------------------------------------------------------------

    def plan(self, server=None) -> dict:
        """What a sync would do, changing nothing (the server is only read, when reachable)."""
        self.accepted = set(self.shares)
        would: set[str] = set()
        pages = [entries for _, entries, _ in self._full_push_pages(self.shares) if entries]
        for entries in pages + list(self._outbox_pages()):
            would |= {row["id"] for row in self._sort(entries)[0]}
        self.report.update(status="dry run", would_push=len(would),
                           purges_waiting=len(store.purges(self.conn, self.name)))
        if server is not None:
            team = self.resolve_team(server)
            self.report["would_pull"] = client.waiting(server, team, self.remote["cursor"] or 0)
            self.report["new_on_server"] = sorted(set(self.shares) - client.visible_projects(server, team,
                                                                                              sorted(self.shares)))
        return self.report


# -- entry points --------------------------------------------------------------------------------------


def _failure_kind(exc: BaseException) -> str | None:
    """"offline" or "error" for what a sync may meet; None for a bug (re-raised)."""
    if isinstance(exc, client.Unreachable):
        return "offline"
    if isinstance(exc, client.RemoteError):
        return "error"
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        return "offline"
    if psycopg is not None and isinstance(exc, psycopg.Error):
        return "error"
    return None


def sync_remote(conn: sqlite3.Connection, name: str, *, dry_run: bool = False,
                deadline: float | None = None) -> dict:
    """Sync one remote now; the report (``status``: ok, offline, error or dry run)."""
    remote = store.get(conn, name)
    if remote is None:
        raise ValueError(f"no remote {name}: `agentctx remote add {name} postgresql://…`")
    work = Sync(conn, remote, deadline=deadline)
    started = clock.now()
    server = None
    try:
        server = client.connect(remote["url"])
        client.check_schema(server)
        with store.lenient_text(conn):  # one row with invalid UTF-8 never blocks the rest
            if dry_run:
                return work.plan(server)
            work.push(server)
            work.pull(server)
    except Exception as exc:
        kind = _failure_kind(exc)
        if kind is None:
            raise
        if dry_run:
            return work.plan(None) | {"server": f"{kind}: {client.one_line(exc)}"}
        return _failed(conn, remote, work.report, kind, exc, started)
    finally:
        if server is not None:
            server.close()
    report = work.report
    parts = [f"pushed {report['pushed']}", f"pulled {report['pulled']}"]
    if report["conflicts_resolved"]:
        parts.append(f"{report['conflicts_resolved']} superseded by a newer version")
    if report["purged_here"] or report["purged_on_server"]:
        parts.append(f"purged {report['purged_on_server']} there, {report['purged_here']} here")
    if report["refused"]:
        parts.append(f"{report['refused']} pulled change(s) refused (outside their project here: see the log)")
    if report["rejected"]:
        parts.append(f"{len(report['rejected'])} record(s) refused by the server (see the log)")
    if not report["complete"]:
        parts.append("time box reached: the rest next time")
    line = f"ok at {started[:19]}Z: " + ", ".join(parts)
    with transaction(conn):
        store.set_state(conn, name, last_attempt_at=started, last_ok_at=started, status=line, failures=0,
                        next_attempt_at=None, report=json.dumps(report))
    log("remote", f"{name}: {line}")
    return report


def _failed(conn: sqlite3.Connection, remote: dict, report: dict, kind: str, exc: BaseException, started: str) -> dict:
    failures = (remote["failures"] or 0) + 1
    retry = clock.to_iso(clock.to_datetime(started) + timedelta(seconds=backoff_seconds(failures)))
    since = (f"the last sync at {remote['last_ok_at'][:19]}Z" if remote["last_ok_at"] else
             f"the remote was added at {remote['added_at'][:19]}Z")
    line = (f"{kind} at {started[:19]}Z: {client.one_line(exc)} ({failures} failed attempt{'s' * (failures > 1)} "
            f"since {since}; next automatic try after {retry[:19]}Z; nothing local is lost)")
    report = dict(report, status=kind, error=client.one_line(exc), next_attempt_at=retry)
    with transaction(conn):
        store.set_state(conn, remote["name"], last_attempt_at=started, status=line, failures=failures,
                        next_attempt_at=retry, report=json.dumps(report))
    log("remote", f"{remote['name']}: {line}")
    return report


def sync_all(conn: sqlite3.Connection, names: list[str] | None = None, *, dry_run: bool = False,
             deadline: float | None = None, respect_backoff: bool = False) -> dict:
    """Sync these remotes (default: all), one sync at a time on this machine. {name: report}."""
    remotes = [r for r in store.every(conn) if names is None or r["name"] in names]
    for name in names or []:
        if store.get(conn, name) is None:
            raise ValueError(f"no remote {name}: see `agentctx remote status`")
    lock = flight.Lock(LOCK, stale_s=3600)
    if not dry_run and not lock.acquire():
        return {r["name"]: {"remote": r["name"], "status": "busy", "note": "another sync is running"} for r in remotes}
    try:
        out = {}
        now = clock.now()
        for remote in remotes:
            if respect_backoff and remote["next_attempt_at"] and remote["next_attempt_at"] > now:
                out[remote["name"]] = {"remote": remote["name"], "status": "waiting",
                                       "note": f"retrying after {remote['next_attempt_at']}"}
                continue
            out[remote["name"]] = sync_remote(conn, remote["name"], dry_run=dry_run, deadline=deadline)
        return out
    finally:
        lock.release()


def nothing_to_send(conn: sqlite3.Connection, name: str, shares: dict) -> bool:
    """True when a sync of this remote would push nothing: no queued change or purge, and the first full
    push of every shared project done. Local queries only (no psycopg)."""
    return (store.outbox_count(conn, name) == 0 and not store.purges(conn, name)
            and all(store.full_push_position(conn, name, pid) is None for pid in shares))


def _quiet(conn: sqlite3.Connection, remote: dict, shares: dict, now: datetime) -> str | None:
    """Why the consolidation pass can leave this remote alone now (nothing to send, and its last good
    sync less than PULL_EVERY_S ago), or None."""
    last = clock.to_datetime(remote["last_ok_at"]) if remote["last_ok_at"] else None
    if last is None or remote["failures"] or not 0 <= (now - last).total_seconds() < PULL_EVERY_S:
        return None
    if not nothing_to_send(conn, remote["name"], shares):
        return None
    return f"nothing to send; last pulled {int((now - last).total_seconds())} s ago (every {PULL_EVERY_S} s at most)"


def in_consolidation(conn: sqlite3.Connection, *, deadline: float | None = None) -> dict:
    """The consolidation pass's step: sync every remote whose backoff has passed, within the pass's
    time box. A store without remotes costs one query; a remote with nothing to send that was synced
    less than PULL_EVERY_S ago costs a few local queries (psycopg is not even imported)."""
    if not store.any_configured(conn):
        return {"skipped": "no remote configured"}
    shares = optin.shared(conn)
    now = clock.to_datetime(clock.now())
    out: dict = {}
    due = []
    for remote in store.every(conn):
        why = _quiet(conn, remote, shares, now)
        if why:
            out[remote["name"]] = {"status": "quiet", "pushed": 0, "pulled": 0, "note": why}
        else:
            due.append(remote["name"])
    if not due:
        return out
    import importlib.util

    if importlib.util.find_spec("psycopg") is None:
        return {"skipped": "psycopg is not installed in this environment"}
    reports = sync_all(conn, due, deadline=deadline, respect_backoff=True)
    return out | {name: {k: r[k] for k in ("status", "pushed", "pulled", "error", "note") if k in r}
                  for name, r in reports.items()}


def purge_here(conn: sqlite3.Connection, record_id: str, project_id: str, remote: str) -> dict:
    """A purge that came from ``remote``: remove the record from every place on disk as ``agentctx purge``
    does (``forgetting.purge``), without sending the purge back to that remote. The purge report, or {}
    when the record was not here."""
    from agentctx.maintenance import forgetting

    try:
        report = forgetting.purge(conn, project_id, record_id)
    except records.RecordError:
        return {}
    with transaction(conn):
        store.purges_done(conn, remote, [record_id])
    log("remote", f"{remote}: purged {record_id} here, as the team's server asked")
    return report


def status(conn: sqlite3.Connection) -> dict:
    """Every remote with its state, what waits to be pushed, and the shared projects."""
    shares = optin.shared(conn)
    out = []
    for remote in store.every(conn):
        report = json.loads(remote["report"]) if remote["report"] else None
        out.append({
            "name": remote["name"], "url": remote["url"], "team": remote["team"], "cursor": remote["cursor"],
            "status": remote["status"] or "never synced", "last_ok_at": remote["last_ok_at"],
            "last_attempt_at": remote["last_attempt_at"], "failures": remote["failures"],
            "next_attempt_at": remote["next_attempt_at"], "queued": store.outbox_count(conn, remote["name"]),
            "purges_waiting": len(store.purges(conn, remote["name"])), "last_report": report,
        })
    return {"remotes": out, "shared_projects": shares}
