"""The tool list the stdlib server sends is what the MCP SDK would build from the same tools (one source).

``mcp_schema.TOOLS`` is declared to the SDK's ``MCPServer`` as annotated Python functions (the way a
server written with the SDK declares them); its ``tools/list`` must equal ``mcp_schema.tool_list()``.
The argument checks are held to the SDK's verdicts too.
"""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Literal

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from agentctx.surfaces import mcp_schema


def _annotation(param: mcp_schema.Param):
    kind = {mcp_schema.STRING: str, mcp_schema.STRINGS: list[str]}.get(param.kind) if isinstance(param.kind, str) \
        else Literal[param.kind]
    base = kind if param.required else kind | None
    return Annotated[base, Field(description=param.description)]


def _function(tool: mcp_schema.Tool):
    def fn(**kwargs) -> str:
        return json.dumps(kwargs)

    fn.__name__ = tool.name
    fn.__doc__ = tool.description
    params = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=_annotation(p),
                                default=inspect.Parameter.empty if p.required else None) for p in tool.params]
    fn.__signature__ = inspect.Signature(params, return_annotation=str)
    fn.__annotations__ = {p.name: _annotation(p) for p in tool.params} | {"return": str}
    return fn


@pytest.fixture(scope="module")
def sdk() -> MCPServer:
    server = MCPServer("agentctx")
    for tool in mcp_schema.TOOLS:
        server.tool(annotations=ToolAnnotations.model_validate(tool.annotations), structured_output=False)(
            _function(tool))
    return server


def test_tool_list_is_what_the_sdk_builds(sdk):
    listed = anyio.run(sdk.list_tools)
    theirs = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed]
    assert theirs == mcp_schema.tool_list()


def test_tool_list_is_valid_json_and_small():
    text = json.dumps(mcp_schema.tool_list())
    assert json.loads(text) == mcp_schema.tool_list()
    assert len(text.encode()) < 12_000  # every session carries it


CASES = [
    ("ctx_search", {"query": "redis"}, True),
    ("ctx_search", {"query": "redis", "type": "decision", "scope": "all", "file": None}, True),
    ("ctx_search", {}, False),
    ("ctx_search", {"query": 3}, False),
    ("ctx_search", {"query": None}, False),
    ("ctx_search", {"query": "x", "type": "nonsense"}, False),
    ("ctx_search", {"query": "x", "scope": "elsewhere"}, False),
    ("ctx_search", {"query": "x", "unknown": 1}, True),
    ("ctx_get", {"ids": ["a", "b"]}, True),
    ("ctx_get", {"ids": '["a", "b"]'}, True),  # a JSON array sent as a string
    ("ctx_get", {"ids": "x"}, False),
    ("ctx_get", {"ids": [1]}, False),
    ("ctx_record", {"type": "decision", "title": "t", "body": "b", "files": ["a.py"], "scope": "global"}, True),
    ("ctx_record", {"type": "decision", "title": "t"}, False),
    ("ctx_record", {"type": "decision", "title": "t", "body": "b", "scope": "all"}, False),
    ("ctx_project", {}, True),
    ("ctx_project", {"anything": "ignored"}, True),
]


@pytest.mark.parametrize(("name", "given", "valid"), CASES)
def test_argument_checks_agree_with_the_sdk(sdk, name, given, valid):
    tool = mcp_schema.BY_NAME[name]
    try:
        args = mcp_schema.arguments(tool, given)
        ours = True
    except ValueError:
        ours = False
    try:
        result = anyio.run(sdk.call_tool, name, given)
    except ToolError:
        theirs = None
    else:
        blocks = result.content if hasattr(result, "content") else result
        theirs = json.loads(blocks[0].text)
    assert ours == valid and (theirs is not None) == valid, (ours, theirs)
    if valid:
        assert dict(zip([p.name for p in tool.params], args, strict=True)) == theirs
