"""The ADR-009 extraction reply: one declarative spec that both renders the shape the prompt asks
for (:func:`prompt_shape`) and validates the reply strictly (:func:`validate`).

:func:`parse` returns the reply as a dict or raises :class:`SchemaError` naming the first problem;
a reply that is not exactly the schema is rejected whole (nothing is written, the watermark stays).
Field rules: "text" a non-empty string, "str" any string, "id" null or a record id, a tuple one of
its values; every string at most ``MAX_TEXT`` characters.
"""

from __future__ import annotations

import json
import re

CONFIDENCE = ("explicit", "inferred")
PREF_CATEGORIES = ("style", "tooling", "process", "naming")
PREF_SCOPES = ("project", "global")
CONV_SCOPES = ("file", "module", "project")
MAX_ITEMS = 30
MAX_TEXT = 2_000

_FIELDS = {
    "decisions": {"what": "text", "rationale": "str", "supersedes": "id", "confidence": CONFIDENCE},
    "preferences": {"category": PREF_CATEGORIES, "rule": "text", "confidence": CONFIDENCE, "scope": PREF_SCOPES},
    "conventions": {"scope": CONV_SCOPES, "convention": "text", "confidence": CONFIDENCE},
    "gotchas": {"pattern": "text", "why_it_matters": "str"},
}
# Optional per item: what the entry is about (files, symbols, packages, commands), linked in the graph
# (``capture.entities``). Shown in the prompt's shape; a reply without it is still valid.
_OPTIONAL = {name: {"entities": "strs"} for name in ("decisions", "conventions", "gotchas")}
MAX_ENTITIES, MAX_ENTITY_CHARS = 10, 200
_WORK = ("current_task", "blockers", "next_steps", "open_questions")  # a string, then arrays of strings
_ORDER = ("decisions", "preferences", "conventions", "active_work", "gotchas", "flush_ok")
TOP_KEYS = frozenset(_ORDER)
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


class SchemaError(ValueError):
    """The model's reply is not valid JSON of the extraction schema."""


def _check_value(where: str, rule, value) -> None:
    if isinstance(rule, tuple):
        if value not in rule:
            raise SchemaError(f"{where} is {value!r}; expected one of {', '.join(rule)}")
    elif rule == "strs":
        if (not isinstance(value, list) or len(value) > MAX_ENTITIES
                or not all(isinstance(v, str) and 0 < len(v) <= MAX_ENTITY_CHARS for v in value)):
            raise SchemaError(f"{where} must be an array of at most {MAX_ENTITIES} short strings")
    elif rule == "id":
        if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > 64):
            raise SchemaError(f"{where} must be null or a record id")
    else:
        if not isinstance(value, str):
            raise SchemaError(f"{where} must be a string")
        if rule == "text" and not value.strip():
            raise SchemaError(f"{where} must not be empty")
        if len(value) > MAX_TEXT:
            raise SchemaError(f"{where} is longer than {MAX_TEXT} characters")


def _check_strings(where: str, value) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) and len(v) <= MAX_TEXT for v in value):
        raise SchemaError(f"{where} must be an array of strings")
    if len(value) > MAX_ITEMS:
        raise SchemaError(f"{where} has more than {MAX_ITEMS} items")


def validate(data) -> dict:
    """Return ``data`` if it is exactly the extraction schema, else raise SchemaError."""
    if not isinstance(data, dict):
        raise SchemaError("the reply is not a JSON object")
    keys = set(data)
    if keys != TOP_KEYS:
        missing, extra = sorted(TOP_KEYS - keys), sorted(keys - TOP_KEYS)
        raise SchemaError(f"wrong keys (missing {missing}, unexpected {extra})")
    if not isinstance(data["flush_ok"], bool):
        raise SchemaError("flush_ok must be true or false")
    for name, fields in _FIELDS.items():
        items = data[name]
        if not isinstance(items, list):
            raise SchemaError(f"{name} must be an array")
        if len(items) > MAX_ITEMS:
            raise SchemaError(f"{name} has more than {MAX_ITEMS} items")
        optional = _OPTIONAL.get(name, {})
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not set(fields) <= set(item) <= set(fields) | set(optional):
                raise SchemaError(f"{name}[{i}] must have exactly the keys {', '.join(fields)}"
                                  + (f" (and optionally {', '.join(optional)})" if optional else ""))
            for field, rule in {**fields, **optional}.items():
                if field in item:
                    _check_value(f"{name}[{i}].{field}", rule, item[field])
    work = data["active_work"]
    if work is not None:
        if not isinstance(work, dict) or set(work) != set(_WORK):
            raise SchemaError(f"active_work must be null or have exactly the keys {', '.join(_WORK)}")
        _check_value("active_work.current_task", "str", work["current_task"])
        for field in _WORK[1:]:
            _check_strings(f"active_work.{field}", work[field])
    if data["flush_ok"] and (any(data[n] for n in _FIELDS) or _has_work(work)):
        raise SchemaError("flush_ok is true but entries were returned")
    return data


def _shape_of(rule) -> str:
    if isinstance(rule, tuple):
        return '"' + "|".join(rule) + '"'
    if rule == "strs":
        return "[]"
    return "null" if rule == "id" else '"..."'


def prompt_shape() -> str:
    """The reply's shape as the prompt shows it: one line per top-level key, enums as ``a|b``."""
    lines = []
    for name in _ORDER:
        if name in _FIELDS:
            shape = {**_FIELDS[name], **_OPTIONAL.get(name, {})}
            fields = ", ".join(f'"{f}": {_shape_of(rule)}' for f, rule in shape.items())
            value = f"[{{{fields}}}]"
        elif name == "active_work":
            value = "{" + ", ".join([f'"{_WORK[0]}": "..."', *(f'"{w}": []' for w in _WORK[1:])]) + "}"
        else:
            value = "false"
        lines.append(f'"{name}": {value}')
    return "{" + ",\n ".join(lines) + "}"


def _has_work(work: dict | None) -> bool:
    return bool(work) and any(work[k] for k in _WORK)


def parse(text: str) -> dict:
    """The reply text as a validated dict (a single ```json fence around it is tolerated)."""
    if not isinstance(text, str) or not text.strip():
        raise SchemaError("empty reply")
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise SchemaError(f"not JSON: {exc}") from None
    return validate(data)


def has_work(data: dict) -> bool:
    """True when the reply's active_work says anything."""
    return _has_work(data.get("active_work"))
