"""Write every ``agentctx`` command's ``--help`` into docs/usage.md, between the generated-part markers.

The command tree is walked from the click group itself, so a new command or option appears here without
anyone listing it; tests/architecture/test_docs.py fails while the generated part is out of date. Run after changing a
command, an option or its help text::

    uv run python scripts/gen_cli_docs.py          # rewrite the part in docs/usage.md
    uv run python scripts/gen_cli_docs.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USAGE = os.path.join(ROOT, "docs", "usage.md")
BEGIN = "<!-- BEGIN GENERATED: cli (scripts/gen_cli_docs.py) -->"
END = "<!-- END GENERATED: cli -->"
WIDTH = 100  # fixed, so the text does not depend on the terminal it is generated in

sys.path.insert(0, os.path.join(ROOT, "lib"))


def group():
    """The top-level click group (the ``agentctx`` entry point of pyproject.toml)."""
    from agentctx.surfaces.cli import cli

    return cli


def walk(command, path: tuple[str, ...] = ("agentctx",), parent=None) -> Iterator[tuple[tuple[str, ...], object]]:
    """(command path, click context) for the group and every command under it, depth first, sorted by name."""
    import click

    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=path[-1], parent=parent, **settings)
    yield path, ctx
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from walk(sub, (*path, name), ctx)


def command_paths() -> list[str]:
    """Every command as typed, without the program name: ``record``, ``remote admin migrate`` ..."""
    return [" ".join(path[1:]) for path, _ in walk(group()) if len(path) > 1]


def render() -> str:
    """The generated part: one section per command with its help text."""
    out = [BEGIN, ""]
    for path, ctx in walk(group()):
        out += [f"### `{' '.join(path)}`", "", "```text", ctx.command.get_help(ctx).rstrip(), "```", ""]
    out.append(END)
    return "\n".join(out)


def splice(text: str, part: str) -> str:
    """``text`` with what lies between the markers (markers included) replaced by ``part``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{USAGE}: the markers {BEGIN!r} ... {END!r} are missing")
    return text[:start] + part + text[end + len(END):]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/usage.md is out of date")
    args = parser.parse_args(argv)
    with open(USAGE, encoding="utf-8") as fh:
        text = fh.read()
    new = splice(text, render())
    if args.check:
        if new != text:
            print("docs/usage.md is out of date: run uv run python scripts/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        with open(USAGE, "w", encoding="utf-8") as fh:
            fh.write(new)
        print(f"wrote {os.path.relpath(USAGE, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
