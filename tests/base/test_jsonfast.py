"""``jsonfast`` reads and writes exactly what the ``json`` package does, without importing it."""

from __future__ import annotations

import json

import pytest

from agentctx import jsonfast
from tests.support.imports import heavy_modules_loaded

VALUES = [{"a": 1, "b": [1.5, None, True, False], "c": {"d": "é\n\t\"q\" \u2028 😀"}}, [], {}, "x", 0, -2.5e-7,
          10**40, {"k": float("inf")}, [{"nested": [[["deep"]]]}]]


@pytest.mark.parametrize("value", VALUES)
def test_same_text_as_json(value):
    assert jsonfast.dumps(value) == json.dumps(value)
    assert jsonfast.dumps(value, ensure_ascii=False) == json.dumps(value, ensure_ascii=False)
    assert jsonfast.loads(json.dumps(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize("text", ["", "  ", "{", '{"a": 1} x', "[1,]", "{'a': 1}", "nul"])
def test_what_is_not_json_is_a_value_error(text):
    with pytest.raises(ValueError):
        jsonfast.loads(text)


def test_surrounding_json_whitespace_is_allowed():
    assert jsonfast.loads(' \r\n\t{"a": [1]}\n ') == {"a": [1]}


def test_it_uses_the_accelerator_and_never_imports_json_or_re():
    assert jsonfast._CODEC is not None
    code = "from agentctx import jsonfast\nassert jsonfast.loads(jsonfast.dumps({'a': [1]})) == {'a': [1]}"
    assert heavy_modules_loaded(code, extra=frozenset({"json", "re"})) == []
