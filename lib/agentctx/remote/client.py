"""Every statement agentctx sends to the team's PostgreSQL server (psycopg 3, imported here on first use).

Credentials never pass through agentctx: the URL holds none (:func:`check_url` refuses a password),
and libpq finds it in ``PGPASSWORD``, ``PGPASSFILE`` or ``~/.pgpass`` (or uses a client certificate,
``sslcert``/``sslkey``). Every other URL parameter goes to libpq unchanged, ``sslmode`` included.

Every statement names the team whose copy it reads or writes (``team_of``: the remote's ``--team``, or the
role's only team): each team's copy of a project is its own (migration ``s004_team_copies``), so two teams
sharing one repository never meet. Writes to a team's change log happen under that team's transaction-scoped
advisory lock, and its change numbers come from one counter per team in commit order: a client that read up
to ``seq`` N never misses a change < N of its team that commits later. Pulls take no lock.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from agentctx import clock
from agentctx.remote import rules, schema

CHANGE_LOCK = 0x61676374  # pg_advisory_xact_lock(CHANGE_LOCK, hashtext(team)): one team's log at a time
CONNECT_TIMEOUT_S = 10
STATEMENT_TIMEOUT_S = 120
_COLUMNS = ", ".join(rules.WIRE)
_TIMES = ("valid_from", "valid_to", "recorded_at", "superseded_at", "updated_at")
_PG_TYPES = {"pinned": "boolean", **{k: "timestamptz" for k in _TIMES}}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}$")


class RemoteError(Exception):
    """The server refused or cannot be used as it is (the message says what to do)."""


class Unreachable(RemoteError):
    """The server could not be reached (offline, refused, timed out, TLS or authentication failed)."""


def check_name(name: str) -> str:
    if not _NAME.match(name or ""):
        raise ValueError(f"{name!r} is not a remote name (letters, digits, '.', '_', '-'; at most 40)")
    return name


def check_url(url: str) -> str:
    """A ``postgresql://`` URL without a password (credentials come from the environment or pgpass)."""
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or not (parts.netloc or parts.query):
        raise ValueError("the remote must be a postgresql:// URL, e.g. postgresql://alice@db.example.com/agentctx")
    if ":" in parts.netloc.rpartition("@")[0] or any(k.lower() == "password" for k, _ in parse_qsl(parts.query)):
        raise ValueError("the URL holds a password: agentctx never stores one. Put it in ~/.pgpass "
                         "(host:port:database:user:password, mode 0600) or PGPASSWORD, and give the URL without it")
    return url


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:  # the plugin's CLI and consolidation scripts declare it (PEP 723)
        raise RemoteError("psycopg is not installed here: use the plugin's `agentctx` (bin/agentctx), or "
                          "`uv run --group dev agentctx` from a clone") from exc
    return psycopg


def connect(url: str):
    """An autocommit connection (each operation below is its own transaction); Unreachable if not."""
    psycopg = _psycopg()
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(check_url(url))
    except psycopg.ProgrammingError as exc:
        raise ValueError(f"bad remote URL: {exc}") from None
    # Defaults the URL may override: a dead network or a stuck server ends a sync in about a minute.
    defaults = {"connect_timeout": CONNECT_TIMEOUT_S, "keepalives_idle": 30, "keepalives_interval": 10,
                "keepalives_count": 3, "options": f"-c statement_timeout={STATEMENT_TIMEOUT_S}s"}
    extra = {"application_name": "agentctx", **{k: v for k, v in defaults.items() if k not in params}}
    try:  # never prepared: a generic plan of a push's statements (the team a parameter) can cost seconds a batch
        return psycopg.connect(url, autocommit=True, prepare_threshold=None, **extra)
    except psycopg.OperationalError as exc:
        raise Unreachable(one_line(exc)) from None


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def check_schema(conn) -> None:
    missing = schema.missing(conn)
    if missing:
        raise RemoteError(f"the server's agentctx schema lacks {', '.join(missing)}: its admin runs "
                          "`agentctx remote admin migrate URL`")


def identity(conn) -> dict:
    """{role, teams}: who this connection is and the agentctx teams it belongs to."""
    role = conn.execute("SELECT current_user").fetchone()[0]
    teams = [r[0] for r in conn.execute("SELECT role FROM agentctx.teams ORDER BY role")]
    return {"role": role, "teams": teams}


def team_of(conn, configured: str | None) -> str:
    """The team whose copies this remote syncs: ``configured`` (``remote add --team``), or the role's only
    team. RemoteError when the role is in none, in several and none was named, or not in the one named
    (the same words whether that team exists or not)."""
    mine = identity(conn)
    if configured is not None:
        if configured not in mine["teams"]:
            raise RemoteError(f"role {mine['role']} is not in team {configured}: ask the server's admin, or "
                              "`agentctx remote add NAME URL --team TEAM` with one of yours")
        return configured
    if len(mine["teams"]) == 1:
        return mine["teams"][0]
    if not mine["teams"]:
        raise RemoteError(f"role {mine['role']} is in no agentctx team: the server's admin adds it "
                          "(`agentctx remote admin member URL ROLE --team TEAM`)")
    raise RemoteError(f"role {mine['role']} is in several teams ({', '.join(mine['teams'])}): name the one this "
                      "remote syncs with `agentctx remote add NAME URL --team TEAM`")


def _lock(conn, team: str) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(%s::int4, hashtext(%s))", (CHANGE_LOCK, team))


def _wire(row: dict) -> dict:
    out = {k: row[k] for k in rules.WIRE}
    for name in _TIMES:
        if out[name] is not None:
            out[name] = clock.to_iso(out[name])
    return out


# -- projects --------------------------------------------------------------------------------------


def visible_projects(conn, team: str, ids: list[str]) -> set[str]:
    """Which of these projects this team has on the server."""
    return {r[0] for r in conn.execute("SELECT id FROM agentctx.projects WHERE team = %s::name AND id = ANY(%s)",
                                       (team, ids))}


def ensure_projects(conn, team: str, wanted: dict[str, str]) -> set[str]:
    """Make sure this team has these projects ({id: name}) on the server; their ids. Another team's copy of
    the same project is another row: it neither blocks this one nor is told about."""
    if not wanted:
        return set()
    with conn.transaction():
        for pid in sorted(wanted):
            conn.execute("INSERT INTO agentctx.projects (id, name, team) VALUES (%s, %s, %s) "
                         "ON CONFLICT (team, id) DO NOTHING", (pid, wanted[pid] or "", team))
    return visible_projects(conn, team, sorted(wanted))


# -- push ------------------------------------------------------------------------------------------


_IN_PAIRS = "(project_id, id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"


def _pairs(items) -> tuple[list[str], list[str]]:
    """([project ids], [record ids]) of (project id, record id) pairs: the arguments of ``_IN_PAIRS``."""
    items = sorted(set(items))
    return [p for p, _ in items], [i for _, i in items]


def push(conn, team: str, rows: list[dict]) -> dict:
    """Push wire records (each with ``edited``: its content changed locally since the last sync) in one
    transaction, into ``team``'s copies. Idempotent: a record the server already holds as sent changes nothing
    and appends no change. Records are identified by (team, project, id) (migrations ``s003_record_identity``,
    ``s004_team_copies``): a row with the same id in another project or another team's copy is neither read
    nor touched. Returns
    {written: [ids], unchanged: n, purged: [ids the server purged], retired: {id: by}}.
    """
    from psycopg.rows import dict_row

    report: dict = {"written": [], "unchanged": 0, "purged": [], "retired": {}}
    if not rows:
        return report
    keys = _pairs((r["project_id"], r["id"]) for r in rows)
    with conn.transaction():
        _lock(conn, team)
        purged = {tuple(r) for r in conn.execute(
            f"SELECT project_id, id FROM agentctx.purged WHERE team = %s::name AND {_IN_PAIRS}", (team, *keys))}
        cur = conn.cursor(row_factory=dict_row)
        existing = {(r["project_id"], r["id"]): _wire(r) for r in cur.execute(
            f"SELECT {_COLUMNS} FROM agentctx.records WHERE team = %s::name AND {_IN_PAIRS} FOR UPDATE", (team, *keys))}
        inserts, updates = [], []
        for row in rows:
            key = (row["project_id"], row["id"])
            if key in purged:
                report["purged"].append(row["id"])
                continue
            old = existing.get(key)
            new = rules.combine(old, {k: row[k] for k in rules.WIRE}, row["edited"])
            if old is None:
                inserts.append(new)
            elif rules.differs(old, new):
                updates.append(new)
            else:
                report["unchanged"] += 1
        if inserts:
            cur.execute(f"INSERT INTO agentctx.records (team, {_COLUMNS}) SELECT %s::name, * FROM {_unnest(rules.WIRE)}",
                        [team, *_columns(inserts, rules.WIRE)])
        if updates:
            names = list(rules.WIRE)
            sets = ", ".join(f"{k} = u.{k}" for k in names if k not in ("id", "project_id"))
            cur.execute(f"UPDATE agentctx.records r SET {sets} FROM {_unnest(names)} AS u ({', '.join(names)}) "
                        "WHERE r.team = %s::name AND r.project_id = u.project_id AND r.id = u.id",
                        [*_columns(updates, names), team])
        changed = {(r["project_id"], r["id"]) for r in inserts + updates}
        retired = _newest_current(cur, team, inserts + updates)
        report["retired"] = {rid: r["superseded_by"] for (_, rid), r in retired.items()}
        changed |= set(retired)
        report["written"] = sorted({rid for _, rid in changed})
        _log(cur, team, changed)
    return report


def _unnest(names) -> str:
    """``unnest(%s::type[], …)``: many rows in one statement, one array parameter per column."""
    return "unnest(" + ", ".join(f"%s::text[]::{_PG_TYPES.get(k, 'text')}[]" for k in names) + ")"


def _columns(rows: list[dict], names) -> list[list]:
    """The arrays for :func:`_unnest`: each column's values as text (NULL stays NULL)."""
    out = []
    for k in names:
        if k == "pinned":
            out.append(["true" if r[k] else "false" for r in rows])
        else:
            out.append([None if r[k] is None else str(r[k]) for r in rows])
    return out


# For each predecessor (project, id): every record that superseded it, followed along ``superseded_by`` to the
# current head of its chain (two people's chains of edits from one record end in two heads). Within one
# project of one team (the first parameter; ``t`` below).
_HEADS = """
WITH RECURSIVE t (team) AS (SELECT %s::name),
walk (project_id, pred, succ, id, superseded_at, superseded_by, depth) AS (
  SELECT project_id, supersedes, id, id, superseded_at, superseded_by, 0 FROM agentctx.records
  WHERE team = (SELECT team FROM t) AND (project_id, supersedes) IN (SELECT * FROM unnest(%s::text[], %s::text[]))
  UNION ALL
  SELECT w.project_id, w.pred, w.succ, r.id, r.superseded_at, r.superseded_by, w.depth + 1
  FROM walk w JOIN agentctx.records r ON r.team = (SELECT team FROM t) AND r.project_id = w.project_id
    AND r.id = w.superseded_by
  WHERE w.superseded_at IS NOT NULL AND w.depth < 100)
SELECT w.pred, w.succ, s.recorded_at AS succ_recorded_at, s.valid_from AS succ_valid_from,
       h.id, h.project_id, h.key, h.recorded_at, h.valid_from
FROM walk w JOIN agentctx.records h ON h.team = (SELECT team FROM t) AND h.project_id = w.project_id AND h.id = w.id
JOIN agentctx.records s ON s.team = (SELECT team FROM t) AND s.project_id = w.project_id AND s.id = w.succ
WHERE w.superseded_at IS NULL"""


def _order(rec: dict) -> tuple[str, str]:
    return rec["recorded_at"], rec["id"]


def _newest_current(cur, team: str, touched: list[dict]) -> dict[tuple[str, str], dict]:
    """Apply the newer-current rule around the records just written; {(project, id): retirement} of those
    retired.

    Groups: the current heads of the chains that start from one record (two people superseded it, maybe
    several times each), and the current records holding one key in one project. A predecessor ends up
    superseded by the first record of the winning chain."""
    preds = sorted({(r["project_id"], r["supersedes"]) for r in touched if r["supersedes"]})
    keyed = {(r["project_id"], r["key"]) for r in touched if r["key"] and not r["superseded_at"]}
    heads: dict[tuple[str, str], dict[str, dict]] = {}  # (project, predecessor) -> {head id: head}
    first: dict[tuple, dict] = {}  # (project, predecessor, head id) -> the successor that chain starts with
    head_of: dict[tuple, str] = {}  # (project, predecessor, successor) -> its chain's head
    if preds:
        for row in cur.execute(_HEADS, (team, *_pairs(preds))).fetchall():
            row = _times(row)
            pid = row["project_id"]
            head = {k: row[k] for k in ("id", "project_id", "key", "recorded_at", "valid_from")}
            succ = {"id": row["succ"], "recorded_at": row["succ_recorded_at"], "valid_from": row["succ_valid_from"]}
            heads.setdefault((pid, row["pred"]), {})[head["id"]] = head
            head_of[(pid, row["pred"], succ["id"])] = head["id"]
            seen = first.get((pid, row["pred"], head["id"]))
            if seen is None or _order(succ) > _order(seen):
                first[(pid, row["pred"], head["id"])] = succ
    groups = [list(group.values()) for group in heads.values()]
    if keyed:
        by_key: dict[tuple[str, str], list[dict]] = {}
        for rec in cur.execute("SELECT id, project_id, key, recorded_at, valid_from FROM agentctx.records "
                               "WHERE team = %s::name AND superseded_at IS NULL AND project_id = ANY(%s) AND key = ANY(%s)",
                               (team, sorted({p for p, _ in keyed}), sorted({k for _, k in keyed}))).fetchall():
            rec = _times(rec)
            if (rec["project_id"], rec["key"]) in keyed:
                by_key.setdefault((rec["project_id"], rec["key"]), []).append(rec)
        groups += list(by_key.values())
    per_project: dict[str, list[list[dict]]] = {}
    for group in groups:  # every group lies within one project, where ids are unique
        per_project.setdefault(group[0]["project_id"], []).append(group)
    retired: dict[tuple[str, str], dict] = {}
    for pid, its_groups in per_project.items():
        retired.update({(pid, rid): r for rid, r in rules.newest_current(its_groups).items()})
    winners = {}
    for (pid, pred), group in heads.items():
        standing = [h for h in group.values() if (pid, h["id"]) not in retired]
        if standing:
            winners[(pid, pred)] = first[(pid, pred, max(standing, key=_order)["id"])]
    if winners:
        for pred in cur.execute("SELECT project_id, id, recorded_at, valid_from, superseded_at, superseded_by "
                                f"FROM agentctx.records WHERE team = %s::name AND {_IN_PAIRS}",
                                (team, *_pairs(winners))).fetchall():
            pred = _times(pred)
            pid = pred["project_id"]
            succ = winners[(pid, pred["id"])]
            if pred["superseded_at"] is None:  # still current here: its successor's author retires it
                retired[(pid, pred["id"])] = rules.retirement(pred, succ)
            elif head_of.get((pid, pred["id"], pred["superseded_by"])) != head_of[(pid, pred["id"], succ["id"])]:
                retired[(pid, pred["id"])] = {"superseded_at": pred["superseded_at"], "superseded_by": succ["id"],
                                              "valid_to": None}
    if retired:
        cur.executemany("UPDATE agentctx.records SET superseded_at = %s, superseded_by = %s, "
                        "valid_to = COALESCE(%s, valid_to) WHERE team = %s::name AND project_id = %s AND id = %s",
                        [(r["superseded_at"], r["superseded_by"], r["valid_to"], team, pid, rid)
                         for (pid, rid), r in retired.items()])
    return retired


def _times(row: dict) -> dict:
    return {k: (clock.to_iso(v) if k in _TIMES and v is not None else v) for k, v in row.items()}


def _log(cur, team: str, keys, op: str = "upsert") -> None:
    """Append one change per record ((project, id) pairs of ``team``, under its change lock) and stamp each
    record with it."""
    if keys:
        cur.execute("WITH c AS (INSERT INTO agentctx.changes (team, project_id, record_id, op) "
                    f"SELECT team, project_id, id, %s FROM agentctx.records WHERE team = %s::name AND {_IN_PAIRS} "
                    "RETURNING seq, project_id, record_id) "
                    "UPDATE agentctx.records r SET seq = c.seq FROM c "
                    "WHERE r.team = %s::name AND r.project_id = c.project_id AND r.id = c.record_id",
                    (op, team, *_pairs(keys), team))


def purge(conn, team: str, items: list[tuple[str, str]]) -> list[str]:
    """Purge records ({record id, project id} pairs) from ``team``'s copies on the server: the row is
    deleted, a tombstone and a ``purge`` change are written (ids only). A project this team does not have
    on the server is left alone. The ids purged."""
    done = []
    if not items:
        return done
    with conn.transaction():
        _lock(conn, team)
        for rid, pid in items:
            if conn.execute("SELECT 1 FROM agentctx.projects WHERE team = %s::name AND id = %s",
                            (team, pid)).fetchone() is None:
                continue
            row = conn.execute("DELETE FROM agentctx.records WHERE team = %s::name AND project_id = %s AND id = %s "
                               "RETURNING id", (team, pid, rid)).fetchone()
            new = conn.execute("INSERT INTO agentctx.purged (team, id, project_id) VALUES (%s, %s, %s) "
                               "ON CONFLICT DO NOTHING RETURNING id", (team, rid, pid)).fetchone()
            if row is None and new is None:
                continue  # purged before (another teammate relayed the same purge): nothing new to tell
            conn.execute("INSERT INTO agentctx.changes (team, project_id, record_id, op) VALUES (%s, %s, %s, 'purge')",
                         (team, pid, rid))
            done.append(rid)
    return done


# -- pull ------------------------------------------------------------------------------------------


def pull(conn, team: str, cursor: int, limit: int) -> tuple[list[dict], int]:
    """``team``'s changes after ``cursor`` (at most ``limit``), oldest first, each {seq, op, record_id, project_id,
    record}: ``record`` is the current wire record (a change superseded by a later one of the same
    record is left out). Returns (changes, the new cursor)."""
    from psycopg.rows import dict_row

    cur = conn.cursor(row_factory=dict_row)
    rows = cur.execute(
        f"SELECT c.seq, c.op, c.record_id, c.project_id AS change_project, r.id AS found, "
        f"{', '.join('r.' + k for k in rules.WIRE)} "
        "FROM agentctx.changes c LEFT JOIN agentctx.records r "
        "ON r.team = c.team AND r.project_id = c.project_id AND r.id = c.record_id AND r.seq = c.seq "
        "WHERE c.team = %s::name AND c.seq > %s ORDER BY c.seq LIMIT %s", (team, cursor, limit)).fetchall()
    out = []
    for row in rows:
        if row["op"] == "purge":
            out.append({"seq": row["seq"], "op": "purge", "record_id": row["record_id"],
                        "project_id": row["change_project"], "record": None})
        elif row["found"] is not None:
            out.append({"seq": row["seq"], "op": "upsert", "record_id": row["record_id"],
                        "project_id": row["change_project"], "record": _wire(row)})
    return out, (rows[-1]["seq"] if rows else cursor)


def waiting(conn, team: str, cursor: int) -> int:
    """How many of ``team``'s changes there are after ``cursor``."""
    return conn.execute("SELECT count(*) FROM agentctx.changes WHERE team = %s::name AND seq > %s",
                        (team, cursor)).fetchone()[0]
