"""What a record can be: its types, scopes, confidences and sources. The one list every surface
reads (validation, the CLI's choices, the MCP tools' schema, the dashboard's filters)."""

from __future__ import annotations

TYPE_DESCRIPTIONS = {
    "decision": "a choice made, with its rationale",
    "convention": "how things are done in this project",
    "preference": "how the developer likes to work",
    "discovery": "something learned about the code or its tools",
    "bugfix": "an error met and what fixed it",
    "handover": "where the work stands and what is next",
    "profile": "a detected fact about the project (stack, commands)",
}
TYPES = tuple(TYPE_DESCRIPTIONS)
CONFIDENCES = ("explicit", "inferred", "reinforced")
SCOPES = ("project", "global")
SOURCES = ("llm_extraction", "hook_observation", "mcp_tool", "cli", "import", "demo", "user_statement")
