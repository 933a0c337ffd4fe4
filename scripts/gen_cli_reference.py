"""Write the option tables of ``docs/cli.md`` from the ``explorer`` command itself.

Why: the options of a command were written twice, in its code and in the README, and only a test said when the two
parted. Here the code is the one place: each command's usage, help and options are read from the typer app (as
``explorer COMMAND --help`` shows them) and written between the page's markers::

    <!-- cli: wander run -->
    (generated)
    <!-- /cli -->

What is around the markers is written by hand: what a command is for beyond its help, and its ``--json`` fields
(``tests/test_readme.py`` checks those against the real output). A command the page has no markers for is added at
its end, under "Not yet described", to be moved where it belongs; markers naming a command that is gone are an
error.

    python scripts/gen_cli_reference.py          # rewrite docs/cli.md
    python scripts/gen_cli_reference.py --check  # exit 1 if docs/cli.md is not what the CLI says (CI's test does this)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from typer._click.core import Context

import explorer.cli

PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
BLOCK = re.compile(r"<!-- cli: (?P<name>[a-z -]+?) -->\n.*?<!-- /cli -->", re.DOTALL)
SHARED = {"--db"}  # every command that opens a database takes it; the page says so once, above the commands
UNDESCRIBED = "## Not yet described"


def commands() -> Iterator[tuple[str, Any, Context]]:
    """Every command of the CLI, as ``("wander run", command, context)``, in the order ``--help`` lists them."""

    def walk(command: Any, context: Context, path: tuple[str, ...]) -> Iterator[tuple[str, Any, Context]]:
        if hasattr(command, "commands"):
            for name in command.list_commands(context):
                sub = command.commands[name]
                yield from walk(sub, Context(sub, info_name=name, parent=context), (*path, name))
        else:
            yield " ".join(path), command, context

    root = typer.main.get_command(explorer.cli.app)
    yield from walk(root, Context(root, info_name="explorer"), ())


def cell(text: str) -> str:
    """A help text as one table cell: on one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def render(name: str, command: Any, context: Context) -> str:
    """A command's generated block: its usage, its help, and a table of its arguments and options."""
    usage = " ".join(["explorer", name, *(spelled(p) for p in command.params if p.param_type_name == "argument")])
    usage += " [OPTIONS]" if any(p.param_type_name == "option" for p in command.params) else ""
    lines = [f"`{usage}`", ""]
    for paragraph in (command.help or "").strip().split("\n\n"):
        if paragraph.strip():
            lines += [" ".join(paragraph.split()), ""]
    rows = []
    for param in command.params:
        if param.param_type_name == "argument":
            required = "required" if param.required else "optional"
            many = ", one or more" if param.nargs == -1 else ""
            rows.append((param.name.upper(), f"{cell(param.help or '')} ({required}{many})".strip()))
        elif not SHARED & {*param.opts, *param.secondary_opts} and not param.hidden:
            record = param.get_help_record(context)
            if record:
                rows.append((record[0], cell(record[1])))
    if rows:
        lines += ["| argument or option | what it does |", "| --- | --- |"]
        lines += [f"| `{cell(spelled)}` | {said} |" for spelled, said in rows]
    return "\n".join(lines)


def spelled(argument: Any) -> str:
    """An argument as usage lines write it: ``SESSION``, ``[PATHS]...``."""
    word = argument.name.upper()
    word = word if argument.required else f"[{word}]"
    return f"{word}..." if argument.nargs == -1 else word


def block(name: str, body: str) -> str:
    return f"<!-- cli: {name} -->\n{body}\n<!-- /cli -->"


def stub(name: str, generated: str, prints_json: bool) -> str:
    """The section of a command the page does not describe yet: its block, and a line for its ``--json`` fields."""
    text = f"### `explorer {name}`\n\n{block(name, generated)}"
    return text + "\n\n`--json` fields: (to write)" if prints_json else text


def regenerate(page: str) -> str:
    """``page`` with every block rewritten from the CLI, and a stub for each command it does not describe yet."""
    found = list(commands())
    rendered = {name: render(name, command, context) for name, command, context in found}
    with_json = {name for name, command, _ in found if any("--json" in p.opts for p in command.params)}
    named = [m["name"] for m in BLOCK.finditer(page)]
    gone = sorted(set(named) - set(rendered))
    twice = sorted({n for n in named if named.count(n) > 1})
    if gone or twice:
        raise SystemExit(f"docs/cli.md: no such command {gone}" if gone else f"docs/cli.md: described twice {twice}")
    page = BLOCK.sub(lambda m: block(m["name"], rendered[m["name"]]), page)
    new = [name for name in rendered if name not in named]
    if new:
        if UNDESCRIBED not in page:
            page = page.rstrip("\n") + f"\n\n{UNDESCRIBED}\n"
        stubs = [stub(name, rendered[name], name in with_json) for name in new]
        page = page.rstrip("\n") + "\n\n" + "\n\n".join(stubs) + "\n"
    return page


def main(argv: list[str]) -> int:
    current = PAGE.read_text(encoding="utf-8")
    fresh = regenerate(current)
    if "--check" in argv:
        if fresh != current:
            print("docs/cli.md is stale: run python scripts/gen_cli_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
