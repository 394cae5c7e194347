"""The query rules every statement on the records shares, in one place: the column list, what
"current" means and how a read or write stays inside one project.

Every store module builds its SQL with these; nothing else spells them out.
"""

from __future__ import annotations

COLUMNS = (
    "id, project_id, type, key, title, body, scope, pinned, confidence, reinforce_count, "
    "valid_from, valid_to, recorded_at, superseded_at, superseded_by, updated_at, access_count, "
    "last_accessed, score, source, session_id"
)


def columns(alias: str = "") -> str:
    """The column list, each column prefixed with ``alias.`` when given."""
    return ", ".join(f"{alias}.{c.strip()}" for c in COLUMNS.split(",")) if alias else COLUMNS


def current_sql(alias: str = "") -> str:
    """The one definition of a current record: not superseded, not archived (rolled up)."""
    a = f"{alias}." if alias else ""
    return f"{a}superseded_at IS NULL AND {a}archived_at IS NULL"


def scope_sql(project_id: str | None, all_projects: bool = False, *, alias: str = "",
              include_global: bool = True) -> tuple[str, tuple]:
    """(WHERE clause, parameters) keeping a read or write inside one project (plus global records).

    ``all_projects=True`` is the explicit way to reach every project; without it a project id is
    required (TypeError otherwise), so no call site can forget the scope.
    """
    if all_projects:
        return "1", ()
    if not isinstance(project_id, str):
        raise TypeError("a read or write by id needs project_id (or all_projects=True)")
    a = f"{alias}." if alias else ""
    if include_global:
        return f"({a}project_id = ? OR {a}scope = 'global')", (project_id,)
    return f"{a}project_id = ?", (project_id,)
