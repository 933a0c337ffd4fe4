"""The README and the reference in ``docs/`` are checked against the product (as sqlite-utils tests its docs).

What is checked:
- ``docs/cli.md`` describes every command of the CLI and no other (its option tables are generated from the
  commands: ``tests/test_cli_reference.py`` checks they are current), and every ``--json`` field it names is in the
  real output of the command, run on a small database;
- the README's table of the settings a first day needs names each by its environment variable and its
  ``explorer.toml`` key (every setting is in ``docs/reference/settings.md``, generated from the settings and checked
  by ``tests/test_settings.py``);
- the REST API table of ``docs/api.md`` lists every route the API serves, its MCP table every tool, and its Events
  table every subject the engine stores events under; in each, nothing is listed that the product lacks.

The conventions read here: in ``docs/cli.md``, each ``###`` section holds the generated block of one command (or of
a few that share a description, as ``wander pause``, ``resume`` and ``stop`` do), and may go on with
"`--json` fields: `a`, `b.c`" up to the end of that paragraph (``b.c``: field ``c`` of object ``b``; a list's fields
are those of each of its items). In the tables, each row names its item in backticks in its first cells:
`VARIABLE` | `key`, `METHOD` | `/path`, `tool`, `subject`.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import explorer.cli
from explorer.api import create_app
from explorer.api.app import PREFIX
from explorer.jobs import KINDS
from explorer.mcp_server import TOOLS
from explorer.settings import Settings

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CLI = REPO / "docs" / "cli.md"
API = REPO / "docs" / "api.md"
EXPERIENCES = Path(__file__).resolve().parent / "data" / "experiences_sample.jsonl"
SHARED = {"--db"}  # every command takes it; the page's first section says so once
NAMES_ITS_DATABASES = {"db copy"}  # its arguments are its two databases (the page says so too)
BLOCK = re.compile(r"<!-- cli: (?P<name>[a-z -]+?) -->\n.*?<!-- /cli -->", re.DOTALL)


def cli_commands() -> dict[str, set[str]]:
    """Every command of the real CLI (``"wander review"``) with its options, walked through the groups."""

    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, set[str]]]:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))
        else:
            options = {o for p in command.params if p.param_type_name == "option" for o in (*p.opts, *p.secondary_opts)}
            yield " ".join(path), options

    return dict(walk(typer.main.get_command(explorer.cli.app), ()))


def section(title: str, text: str) -> str:
    """``text``'s section under ``## title``, up to the next one."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : None if end == -1 else end]


def documented_commands(text: str | None = None) -> dict[str, list[str]]:
    """Each command ``docs/cli.md`` (or ``text``) describes, with the ``--json`` fields it names."""
    text = CLI.read_text(encoding="utf-8") if text is None else text
    documented: dict[str, list[str]] = {}
    for part in re.split(r"^(?=### )", text, flags=re.MULTILINE)[1:]:
        names = [m["name"] for m in BLOCK.finditer(part)]
        prose = BLOCK.sub("", part)
        _, said, rest = prose.partition("`--json` fields")
        fields = re.findall(r"`([a-z_][a-z0-9_.]*)`", rest.split("\n\n")[0]) if said else []
        for name in names:
            assert name not in documented, f"docs/cli.md describes `explorer {name}` twice"
            documented[name] = fields
    return documented


def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    assert set(documented_commands()) == set(cli_commands())


def test_every_command_takes_the_database_the_page_says_it_takes() -> None:
    text = CLI.read_text(encoding="utf-8")
    assert "Every command takes `--db PATH`" in text
    assert "`db copy` names both of its databases instead" in text
    for path, options in cli_commands().items():
        if path not in NAMES_ITS_DATABASES:
            assert options >= SHARED, f"`explorer {path}` has no --db, but docs/cli.md says every command takes it"


def test_every_command_with_json_output_lists_its_fields() -> None:
    documented = documented_commands()
    for path, options in cli_commands().items():
        assert ("--json" in options) == bool(documented[path]), path


def test_a_field_list_is_read_only_from_its_own_paragraph() -> None:
    text = (
        "### `explorer stats`\n\n<!-- cli: stats -->\n`--json` fields: `nope`\n<!-- /cli -->\n\nCounts.\n"
        "`--json` fields: `documents`,\n`nodes`.\n\nAlso `relations`.\n"
    )
    assert documented_commands(text) == {"stats": ["documents", "nodes"]}


def present(value: Any, dotted: str) -> bool:
    """Whether ``dotted`` (``a.b``) is in ``value``; in a list it must be in every item, and there must be items."""
    if isinstance(value, list):
        return bool(value) and all(present(item, dotted) for item in value)
    name, _, rest = dotted.partition(".")
    if not isinstance(value, dict) or name not in value:
        return False
    return present(value[name], rest) if rest else True


@pytest.fixture
def outputs(corpus_copy: Path, tmp_path: Path) -> dict[str, Any]:
    """The ``--json`` output of every command that has one, run on a copy of the small corpus."""
    runner = CliRunner()
    db = str(corpus_copy)

    def run(*args: str) -> Any:
        result = runner.invoke(explorer.cli.app, [*args, "--db", db, "--json"], catch_exceptions=False)
        assert result.exit_code in (0, 1), result.output  # ingest exits 1 only when nothing could be read
        return json.loads(result.stdout)

    reading = tmp_path / "reading"
    reading.mkdir()
    (reading / "note.txt").write_text("Dictionaries keep their insertion order from Python 3.7 on.", encoding="utf-8")
    (reading / "bad.jsonl").write_text('{"text": "a fine record about parsers"}\n{oops\n', encoding="utf-8")
    dated = tmp_path / "dated"
    dated.mkdir()
    for year, text in ((2001, "Nested scopes arrive in Python."), (2003, "Python gains the bool type and sets.")):
        (dated / f"{year}.md").write_text(f"---\nyear: {year}\n---\n{text}\n", encoding="utf-8")

    out: dict[str, Any] = {"ingest": run("ingest", str(reading)), "stats": run("stats"), "map": run("map")}
    out["documents"] = run("documents")
    out["enrich"] = run("enrich")  # nothing left for later in so small a read: its report says so
    out["wander new"] = run(
        "wander", "new", "--seed-concept", "unicode strings and text", "--seed", "2", "--checkpoint-every", "0"
    )
    session = out["wander new"]["session_id"]
    out["wander run"] = run("wander", "run", session, "--steps", "4")
    out["wander step"] = run("wander", "step", session)
    out["wander crystallize"] = run("wander", "crystallize", session)
    out["wander crystals"] = run("wander", "crystals", "--session", session)
    crystal = out["wander crystals"][0]["id"]
    out["wander show"] = run("wander", "show", session)
    out["wander list"] = run("wander", "list")
    out["wander search"] = run("wander", "search", "unicode text")
    out["wander evidence"] = run("wander", "evidence", crystal)
    out["wander review"] = run("wander", "review", crystal, "--approve", "--by", "a reader", "--notes", "fine")
    out["wander history"] = run("wander", "history", crystal)
    out["wander revert"] = run("wander", "revert", out["wander history"][-1]["id"])
    out["wander review-bulk"] = run("wander", "review-bulk", "--approve", "--dry-run")
    out["wander inject"] = run("wander", "inject", session, "bytes and encodings")
    out["wander fence"] = run("wander", "fence", session, "politics", "--exclude")
    out["wander pause"] = run("wander", "pause", session)
    out["wander resume"] = run("wander", "resume", session)
    out["wander stop"] = run("wander", "stop", session)
    out["export"] = run("export", session, "--png", str(tmp_path / "archive"))
    out["wander delete"] = run("wander", "delete", session)
    out["dream rem"] = run("dream", "rem", "--dreams", "1", "--seed", "1")
    out["dream explore"] = run("dream", "explore", "--seed", "1")
    out["dream fuse"] = run("dream", "fuse")
    out["dream cycle"] = run("dream", "cycle", "--dreams", "1", "--seed", "1")
    out["dream chrono"] = run("dream", "chrono", str(dated), "--dreams", "1", "--seed", "1")
    out["dream list"] = run("dream", "list")
    out["dream show"] = run("dream", "show", out["dream list"][0]["id"][:8])
    log = tmp_path / "experiences.jsonl"
    log.write_text(EXPERIENCES.read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")
    out["consolidate import"] = run("consolidate", "import", str(log))
    out["consolidate schedule"] = run("consolidate", "schedule", "--source", "imported", "--checks", "1")
    out["consolidate run"] = run("consolidate", "run", "--source", "imported")
    out["consolidate query"] = run("consolidate", "query", "a cell with a single candidate left")
    queued = run("dream", "fuse", "--background")  # a worker process starts; it takes seconds to claim a job
    out["jobs cancel"] = run("jobs", "cancel", queued["job_id"])
    dreaming = run("dream", "rem", "--dreams", "1", "--seed", "1", "--background")
    out["jobs show"] = run("jobs", "show", dreaming["job_id"], "--wait")
    out["jobs list"] = run("jobs", "list")
    out["domains list"] = run("domains", "list")
    named = out["domains list"][0]["name"]
    out["domains rename"] = run("domains", "rename", named, "renamed")
    out["domains merge"] = run("domains", "merge", "renamed", "--into", named)
    copied = runner.invoke(explorer.cli.app, ["db", "copy", db, str(tmp_path / "copy.duckdb"), "--json"])
    assert copied.exit_code == 0, copied.output
    out["db copy"] = json.loads(copied.stdout)
    shutil.rmtree(tmp_path / "archive")
    return out


def test_every_json_field_the_reference_names_is_in_the_output(outputs) -> None:
    documented = {path: fields for path, fields in documented_commands().items() if fields}
    assert set(documented) == set(outputs)  # every command with --json output was run
    missing = {path: [f for f in fields if not present(outputs[path], f)] for path, fields in documented.items()}
    assert not any(missing.values()), {path: fields for path, fields in missing.items() if fields}


def code_cells(text: str) -> list[list[list[str]]]:
    """Each table row of ``text`` as the backticked spans of each of its cells; rows whose first cell has none (the
    header and the rule) are left out.
    """
    rows = []
    for line in text.splitlines():
        if line.startswith("| "):
            cells = [re.findall(r"`([^`]+)`", cell) for cell in line.strip(" |").split(" | ")]
            if cells[0]:
                rows.append(cells)
    return rows


def documented_settings(text: str | None = None) -> dict[str, str]:
    """The README's table of the settings a first day needs: each environment variable and its ``explorer.toml`` key."""
    text = README.read_text(encoding="utf-8") if text is None else text
    return {row[0][0]: row[1][0] for row in code_cells(section("Configuration at a glance", text))}


def documented_routes(text: str | None = None) -> set[tuple[str, str]]:
    """The REST API table of ``docs/api.md``: each method and full path."""
    text = API.read_text(encoding="utf-8") if text is None else text
    return {(row[0][0], PREFIX + row[1][0]) for row in code_cells(section("REST API", text))}


def documented_tools(text: str | None = None) -> set[str]:
    """The MCP table's tools, in ``docs/api.md`` (a row may name two that share their arguments)."""
    text = API.read_text(encoding="utf-8") if text is None else text
    return {name for row in code_cells(section("MCP", text)) for name in row[0]}


def documented_subjects(text: str | None = None) -> set[str]:
    """The Events table's subjects, in ``docs/api.md``."""
    text = API.read_text(encoding="utf-8") if text is None else text
    return {row[0][0] for row in code_cells(section("Events", text))}


def setting_variables() -> dict[str, str]:
    """Each environment variable the settings read, and the field it sets (which is also its ``explorer.toml`` key).

    The one place this file reads how the settings name their variables.
    """
    from explorer.settings import VARIABLES

    return {variable: attr for attr, variable in VARIABLES.items()}


def served_routes(db: Path) -> set[tuple[str, str]]:
    """Each method and path of the API's OpenAPI document, as a server on ``db`` serves it."""
    app = create_app(replace(Settings(), db_path=db, embedding_model="hashing"))
    return {(method.upper(), path) for path, operations in app.openapi()["paths"].items() for method in operations}


SUBJECT = re.compile(r"(wander|dream|consolidation|projection)(\.[a-z_]+)+")  # an event's area, then what happened


def stored_subjects() -> set[str]:
    """The subjects the engine stores events under: its string literals shaped like one, less the job kinds
    (``wander.run``), which share the shape. Each event's subject is written where the event is made, across the
    engine's modules and sometimes passed on before it is stored, so the literals are where to read them all.
    """
    literals = {
        node.value
        for path in (REPO / "explorer").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SUBJECT.fullmatch(node.value)
    }
    return literals - set(KINDS)


def test_the_readme_names_each_setting_it_lists_by_its_variable_and_key() -> None:
    assert documented_settings()
    assert documented_settings().items() <= setting_variables().items()


def test_the_rest_api_table_lists_every_route(tmp_path: Path) -> None:
    assert documented_routes() == served_routes(tmp_path / "api.duckdb")


def test_the_mcp_table_lists_every_tool() -> None:
    assert documented_tools() == {tool.__name__ for tool, _ in TOOLS}


def test_the_events_table_lists_every_subject() -> None:
    assert documented_subjects() == stored_subjects()


@pytest.mark.parametrize(
    ("page", "row", "read"),
    [
        (README, "| `EXPLORER_TOKENS` |", documented_settings),
        (API, "| `POST` | `/jobs/{job_id}/cancel` |", documented_routes),
        (API, "| `projection.fitted` |", documented_subjects),
        (API, "| `dream_show` |", documented_tools),
    ],
)
def test_a_row_missing_from_a_table_is_missed_by_its_check(page: Path, row: str, read: Callable[[str], Any]) -> None:
    text = page.read_text(encoding="utf-8")
    tampered = "\n".join(line for line in text.splitlines() if not line.startswith(row))
    assert len(read(tampered)) == len(read(text)) - 1
