"""Which projects go to the team's server: none unless opted in.

A project is shared when the user said so (``agentctx remote share PROJECT``; ``--off`` says no, and
the user's word wins), or else when its repository says so, committed, so a team opts a repository in
once: in ``.agentctx/config.toml`` (the project's settings file, see ``project_settings``) or
``.agentctx/config``, both TOML::

    [remote]
    share = true
"""

from __future__ import annotations

import os
import sqlite3

from agentctx.store import remote as store

FILES = (os.path.join(".agentctx", "config.toml"), os.path.join(".agentctx", "config"))


def file_setting(root: str | None) -> tuple[bool | None, str]:
    """(``remote.share`` from the first of ``FILES`` in ``root`` that sets it, that file); (None, "")
    when none does (a file that cannot be read or parsed counts as absent)."""
    if not root:
        return None, ""
    from agentctx import safefile
    from agentctx.project_settings import MAX_BYTES
    from agentctx.tomlfile import load_toml

    for name in FILES:
        path = os.path.join(root, name)
        try:
            text = safefile.read_text(path, MAX_BYTES, root)
            if text is None:
                continue
            value = load_toml(text).get("remote", {}).get("share")
        except safefile.Refused as exc:
            safefile.refuse(exc, "remote")
            continue
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, bool):
            return value, path
    return None, ""


def shared(conn: sqlite3.Connection) -> dict[str, dict]:
    """{project id: {name, via}} of the shared projects (``via``: "agentctx remote share" or the file)."""
    explicit = store.explicit_shares(conn)
    out: dict[str, dict] = {}
    for proj in store.known_projects(conn):
        choice, via = explicit.get(proj["id"]), "agentctx remote share"
        if choice is None:
            choice, via = file_setting(proj["root"])
        if choice:
            out[proj["id"]] = {"name": proj["name"] or "", "via": via}
    for pid, choice in explicit.items():
        if choice and pid not in out:
            out[pid] = {"name": "", "via": "agentctx remote share"}
    return out

