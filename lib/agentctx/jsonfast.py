"""JSON for the hot path without importing the ``json`` package.

``import json`` costs ~7 ms per hook run on a 2-vCPU machine, almost all of it the ``re`` module that
``json.decoder`` and ``json.encoder`` compile patterns with at import, though neither pattern is used when
CPython's C accelerator ``_json`` is present. This module drives ``_json`` directly, with the same
arguments ``json.loads`` and ``json.dumps`` give it, and checks itself once on import; on another
interpreter, or if the accelerator's interface ever changes, it is the ``json`` package.
"""

from __future__ import annotations

_JSON_SPACE = " \t\n\r"


class _Context:
    """What the C scanner reads from a ``json.JSONDecoder``: the defaults of ``json.loads``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def _c_codec():
    """(scan, encode, encode_ascii) from ``_json``, or None when it is missing or answers differently."""
    try:
        from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner

        scan = make_scanner(_Context())
        plain = make_encoder(None, None, encode_basestring, None, ": ", ", ", False, False, True)
        ascii_ = make_encoder(None, None, encode_basestring_ascii, None, ": ", ", ", False, False, True)
        sample = {"a": [1, 2.5, None, True, "é\n\"x\""], "b": {}}
        read = '{"a": [1, 2.5, null, true, "\\u00e9"], "b": {}}'
        if ("".join(plain(sample, 0)) != '{"a": [1, 2.5, null, true, "é\\n\\"x\\""], "b": {}}'
                or "".join(ascii_(sample, 0)) != '{"a": [1, 2.5, null, true, "\\u00e9\\n\\"x\\""], "b": {}}'
                or scan(read, 0) != ({"a": [1, 2.5, None, True, "é"], "b": {}}, len(read))):
            return None
        return scan, plain, ascii_
    except Exception:  # noqa: BLE001 - any surprise: the json package
        return None


_CODEC = _c_codec()


def loads(text: str) -> object:
    """``json.loads(text)``; raises ValueError on anything that is not one JSON value."""
    if _CODEC is None:
        import json

        return json.loads(text)
    body = text.strip(_JSON_SPACE)
    try:
        value, end = _CODEC[0](body, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(body):
        raise ValueError("extra data after the JSON value")
    return value


def dumps(value: object, *, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=...)`` for dicts, lists, strings, numbers, booleans and None."""
    if _CODEC is None:
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii)
    return "".join((_CODEC[2] if ensure_ascii else _CODEC[1])(value, 0))
