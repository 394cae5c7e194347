"""Rules with one home: the extraction schema (prompt text and validation), record kinds, token
clipping, atomic writes."""

from __future__ import annotations

import json
import re

import pytest

from agentctx import budgets, fsio, kinds
from agentctx.capture import prompts, schema


def test_the_prompt_shows_the_shape_the_validator_accepts():
    shape = schema.prompt_shape()
    assert shape in prompts.SYSTEM
    # Fill the shape the way a model would: placeholders with text, each enum with its first value.
    filled = re.sub(r'"([a-z_]+(?:\|[a-z_]+)+)"', lambda m: json.dumps(m.group(1).split("|")[0]), shape)
    reply = json.loads(filled.replace('"..."', '"a plain sentence"'))
    assert schema.validate(reply) is reply
    reply["decisions"][0]["confidence"] = "certain"  # not one of the enum values the prompt lists
    with pytest.raises(schema.SchemaError, match="confidence"):
        schema.validate(reply)


def test_every_enum_of_the_spec_is_in_the_prompt():
    for fields in schema._FIELDS.values():
        for rule in fields.values():
            if isinstance(rule, tuple):
                assert "|".join(rule) in prompts.SYSTEM


def test_the_mcp_schema_and_the_dashboard_take_their_types_from_kinds(tmp_path, monkeypatch):
    from agentctx.surfaces import mcp_schema

    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path))
    kinds_of = {(t.name, p.name): p.kind for t in mcp_schema.TOOLS for p in t.params}
    assert kinds_of[("ctx_record", "type")] == kinds_of[("ctx_search", "type")] == kinds.TYPES
    assert kinds_of[("ctx_record", "scope")] == kinds.SCOPES
    assert all(t in mcp_schema.TYPE_HELP for t in kinds.TYPES)
    pytest.importorskip("starlette")
    from agentctx.surfaces.ui import app

    page = app.index_page("tok", None)
    assert json.dumps(list(kinds.TYPES)).replace('"', "&quot;") in page


@pytest.mark.parametrize("text", ["", "short", "x" * 400, "日本語のテキスト" * 30, "mixed ascii と 日本語 " * 40])
@pytest.mark.parametrize("cap", [1, 5, 20, 100])
def test_clip_tokens_keeps_the_longest_prefix_that_fits(text, cap):
    clipped = budgets.clip_tokens(text, cap)
    assert budgets.estimate_tokens(clipped) <= max(cap, budgets.estimate_tokens("…")) or clipped == text
    if clipped != text:
        body = clipped[: -len("…")]
        assert text.startswith(body)
        nxt = len(body)
        while nxt < len(text) and text[nxt].isspace():
            nxt += 1
        # the prefix through the next visible character would not have fitted
        assert budgets.estimate_tokens(text[: nxt + 1]) > cap - budgets.estimate_tokens("…")


def test_atomic_write_replaces_whole_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "sub" / "f.json"
    fsio.write_json(str(target), {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    fsio.write_atomic(str(target), "new")
    assert target.read_text() == "new"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError):
        fsio.write_atomic(str(blocker / "inside.txt"), "never")
    assert sorted(p.name for p in tmp_path.rglob("*") if "tmp" in p.name) == []
