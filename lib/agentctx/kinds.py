"""What a record can be: its types, scopes, confidences and sources, and every per-type property in
one table. Every surface and rule reads it (validation, the CLI's choices, the MCP tools' schema,
ranking, the team file, export, dedup, entity links, the digest, the dashboard's filters and colours);
``tests/test_kinds.py`` fails when a per-type table misses a type.

Adding a record type is one row in ``KINDS`` (and the recipe in ``docs/recipes.md``).
"""

from __future__ import annotations

DIGEST_SECTIONS = ("profile", "decisions", "handover", "developer")  # the SessionStart digest's, in order

# description: what the type is for (the MCP tool's schema and the CLI's help say it);
# weight: the ranking weight (``scoring``); daily_decay: the standing's decay per day (1.0 never decays:
# only supersession retires such a record); heading: the plural heading in the team file and exports;
# digest: the SessionStart section that shows it (None: only retrieval does); colour: the dashboard's;
# shared: goes to teammates (the team file, the team server), else stays on this machine;
# merged: near-duplicates are merged by the consolidation pass; linked: entity links are extracted for it;
# folded: the dashboard's graph draws its chain of versions as one node (each session rewrites a handover:
# its versions are a log, not facts replaced).
KINDS: dict[str, dict] = {
    "decision": {"description": "a choice made, with its rationale", "weight": 1.3, "daily_decay": 1.0,
                 "heading": "Decisions", "digest": "decisions", "colour": "#2f6fde",
                 "shared": True, "merged": True, "linked": True, "folded": False},
    "convention": {"description": "how things are done in this project", "weight": 1.25, "daily_decay": 1.0,
                   "heading": "Conventions", "digest": "decisions", "colour": "#7a4cc2",
                   "shared": True, "merged": True, "linked": True, "folded": False},
    "preference": {"description": "how the developer likes to work", "weight": 1.0, "daily_decay": 0.998,
                   "heading": "Preferences", "digest": "developer", "colour": "#c2410c",
                   "shared": True, "merged": True, "linked": True, "folded": False},
    "discovery": {"description": "something learned about the code or its tools", "weight": 1.0, "daily_decay": 0.95,
                  "heading": "Discoveries", "digest": None, "colour": "#0e8a6a",
                  "shared": True, "merged": True, "linked": True, "folded": False},
    "bugfix": {"description": "an error met and what fixed it", "weight": 1.1, "daily_decay": 0.95,
               "heading": "Bugfixes", "digest": None, "colour": "#b42318",
               "shared": True, "merged": True, "linked": True, "folded": False},
    "handover": {"description": "where the work stands and what is next", "weight": 0.8, "daily_decay": 0.8,
                 "heading": "Handovers", "digest": "handover", "colour": "#64748b",
                 "shared": False, "merged": False, "linked": False, "folded": True},
    "profile": {"description": "a detected fact about the project (stack, commands)", "weight": 0.9,
                "daily_decay": 1.0, "heading": "Project profile", "digest": "profile", "colour": "#a16207",
                "shared": False, "merged": False, "linked": False, "folded": False},
}
PROPERTIES = ("description", "weight", "daily_decay", "heading", "digest", "colour", "shared", "merged", "linked",
              "folded")

TYPES = tuple(KINDS)
TYPE_DESCRIPTIONS = {t: k["description"] for t, k in KINDS.items()}
TYPE_WEIGHT = {t: k["weight"] for t, k in KINDS.items()}
DAILY_DECAY = {t: k["daily_decay"] for t, k in KINDS.items()}
HEADINGS = {t: k["heading"] for t, k in KINDS.items()}
COLOURS = {t: k["colour"] for t, k in KINDS.items()}
SHARED_TYPES = tuple(t for t, k in KINDS.items() if k["shared"])
LOCAL_TYPES = tuple(t for t, k in KINDS.items() if not k["shared"])
MERGED_TYPES = tuple(t for t, k in KINDS.items() if k["merged"])
LINKED_TYPES = tuple(t for t, k in KINDS.items() if k["linked"])
FOLDED_TYPES = tuple(t for t, k in KINDS.items() if k["folded"])

CONFIDENCES = ("explicit", "inferred", "reinforced")
SCOPES = ("project", "global")
SOURCES = ("llm_extraction", "hook_observation", "mcp_tool", "cli", "import", "demo", "user_statement")


def in_digest_section(section: str) -> tuple[str, ...]:
    """The types the SessionStart digest section ``section`` shows."""
    return tuple(t for t, k in KINDS.items() if k["digest"] == section)
