"""The README is the product's reference, checked against the product (as sqlite-utils tests its docs).

What is checked:
- the command reference is the CLI's: every command and option is documented, nothing documented is missing from
  the CLI, and every ``--json`` field it names is in the real output of the command, run on a small database;
- the Configuration table lists every setting, by its environment variable and its ``explorer.toml`` key;
- the REST API table lists every route the API serves, and the Events table every subject the engine stores
  events under; in each, nothing is listed that the product lacks.

The conventions read here: in the "Command line" section, each command is a list item holding
``explorer COMMAND ... [--option]`` in backticks, and may go on with "`--json` fields: `a`, `b.c`" (``b.c``:
field ``c`` of object ``b``; a list's fields are those of each of its items). In the other three sections, each
table row names its item in backticks in its first cells: `VARIABLE` | `key`, `METHOD` | `/path`, `subject`.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import explorer.cli
from explorer.api import create_app
from explorer.api.app import PREFIX
from explorer.jobs import KINDS
from explorer.settings import _ENV, Settings

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
EXPERIENCES = Path(__file__).resolve().parent / "data" / "experiences_sample.jsonl"
SHARED = {"--db"}  # every command takes it; the section's first sentence says so once
NAMES_ITS_DATABASES = {"db copy"}  # its arguments are its two databases (the section says so too)


@dataclass
class Documented:
    """One command as the README lists it."""

    options: set[str]
    fields: list[str] = field(default_factory=list)


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


def section(title: str, text: str | None = None) -> str:
    """The README's (or ``text``'s) section under ``## title``, up to the next one."""
    text = README.read_text(encoding="utf-8") if text is None else text
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : None if end == -1 else end]


def command_section() -> str:
    return section("Command line")


def readme_commands() -> dict[str, Documented]:
    documented: dict[str, Documented] = {}
    items = re.split(r"\n(?=- `explorer )", command_section())[1:]
    for item in items:
        item = item.split("\n\n")[0]  # the list item ends at a blank line
        usage, _, fields = item.partition("`--json` fields")
        names = []
        for span in re.findall(r"`(explorer [^`]+)`", usage):
            words = span.split()[1:]
            path = " ".join(word for word in words[: next(i for i, w in enumerate([*words, "-"]) if not _word(w))])
            assert path not in documented, f"README documents `explorer {path}` twice"
            documented[path] = Documented(set(re.findall(r"--[a-z][a-z0-9-]*", span)))
            names.append(path)
        for path in names:
            documented[path].fields = re.findall(r"`([a-z_][a-z0-9_.]*)`", fields)
    return documented


def _word(token: str) -> bool:
    """A command or group name (lower-case words); ``PATH``, ``[--json]`` and ``--steps`` end the command."""
    return re.fullmatch(r"[a-z][a-z-]*", token) is not None


def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    assert set(readme_commands()) == set(cli_commands())


def test_every_option_is_documented_and_every_documented_option_exists() -> None:
    documented = readme_commands()
    assert "Every command takes `--db PATH`" in command_section()
    assert "`db copy` names both of its databases instead" in command_section()
    for path, options in cli_commands().items():
        if path not in NAMES_ITS_DATABASES:
            assert options >= SHARED, f"`explorer {path}` has no --db, but the README says every command takes it"
        readme = documented[path].options
        assert options - SHARED <= readme, f"`explorer {path}`: {sorted(options - SHARED - readme)} not in README.md"
        assert readme <= options, f"README.md documents {sorted(readme - options)} for `explorer {path}`"


def test_every_command_with_json_output_lists_its_fields() -> None:
    documented = readme_commands()
    for path, options in cli_commands().items():
        assert ("--json" in options) == bool(documented[path].fields), path


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


def test_every_json_field_the_readme_names_is_in_the_output(outputs) -> None:
    documented = {path: entry.fields for path, entry in readme_commands().items() if entry.fields}
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
    """The Configuration table: each environment variable and its ``explorer.toml`` key."""
    return {row[0][0]: row[1][0] for row in code_cells(section("Configuration", text))}


def documented_routes(text: str | None = None) -> set[tuple[str, str]]:
    """The REST API table: each method and full path."""
    return {(row[0][0], PREFIX + row[1][0]) for row in code_cells(section("REST API", text))}


def documented_subjects(text: str | None = None) -> set[str]:
    """The Events table's subjects."""
    return {row[0][0] for row in code_cells(section("Events", text))}


def setting_variables() -> dict[str, str]:
    """Each environment variable the settings read, and the field it sets (which is also its ``explorer.toml`` key)."""
    return {variable: attr for variable, (attr, _) in _ENV.items()}


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


def test_every_setting_is_read_from_a_variable() -> None:
    assert set(setting_variables().values()) == {f.name for f in fields(Settings)}


def test_the_configuration_table_lists_every_setting_with_its_toml_key() -> None:
    assert documented_settings() == setting_variables()


def test_the_rest_api_table_lists_every_route(tmp_path: Path) -> None:
    assert documented_routes() == served_routes(tmp_path / "api.duckdb")


def test_the_events_table_lists_every_subject() -> None:
    assert documented_subjects() == stored_subjects()


@pytest.mark.parametrize(
    ("row", "read"),
    [
        ("| `NATS_URL` |", documented_settings),
        ("| `POST` | `/jobs/{job_id}/cancel` |", documented_routes),
        ("| `projection.fitted` |", documented_subjects),
    ],
)
def test_a_row_missing_from_the_readme_is_missed_by_its_check(row: str, read: Callable[[str], Any]) -> None:
    text = README.read_text(encoding="utf-8")
    tampered = "\n".join(line for line in text.splitlines() if not line.startswith(row))
    assert len(read(tampered)) == len(read(text)) - 1
