"""Every user error of the command line ends in one line on stderr and a non-zero exit, never a traceback:
2 for a command line that does not parse (each bad number names its allowed range, each bad choice lists the
valid ones), 1 for what the engine refuses or cannot do (the disk, the database). The table runs in process
through typer's CliRunner, which goes through the same root command as the console script; two real processes
prove the console script and ``python -m explorer`` get there too.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from explorer.cli import DEBUG_ENV, app, failure, run_guarded
from explorer.errors import ExplorerError
from explorer.providers.embeddings import Embedder
from explorer.records import Node, new_id
from explorer.records.wander import Crystal
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import corpus
from explorer.store import wander as wander_store
from explorer.store.database import DatabaseFailure
from explorer.wander import service
from explorer.wander.config import SessionConfig

MISSING = new_id()
SEE = "; see: explorer {} --help"


PASSAGES = (
    "Reference cycles are collected by the garbage collector of the gc module.",
    "The walrus operator assigns a value inside an expression.",
    "Unicode strings became the default text type in Python 3.",
)


@pytest.fixture(scope="module")
def world(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What the cases name: a database with a few passages from 2010, an active session and an approved
    crystal, a regular file (where a folder is needed) and a folder of documents.
    """
    tmp = tmp_path_factory.mktemp("cli_errors")
    db = tmp / "explorer.duckdb"
    runtime = open_runtime(replace(Settings(), db_path=db, embedding_model=embedder.name), embedder=embedder)
    nodes = [Node(type="raw_chunk", text=text, year=2010, domain="python") for text in PASSAGES]
    for node, vector in zip(nodes, embedder.embed(list(PASSAGES)), strict=True):
        node.embedding = vector
    crystal = Crystal(
        insight="Cycles need a collector.",
        embedding=embedder.embed(["Cycles need a collector."])[0],
        confidence=0.7,
        actionability=0.4,
        domains=["python"],
    )
    with runtime.db.transaction() as con:
        corpus.insert_nodes(con, nodes)
        wander_store.insert_crystal(con, crystal)
    session = service.create_session(runtime, SessionConfig(seed_concept="garbage collection", random_seed=1))
    service.review_crystal(runtime, crystal.id, "approve")
    (tmp / "notes.txt").write_text("a regular file, not a folder\n", encoding="utf-8")
    (tmp / "docs").mkdir()
    (tmp / "docs" / "a.txt").write_text("Reference cycles are collected by the gc module.", encoding="utf-8")
    return {"db": str(db), "sid": session.id, "crystal": crystal.id, "tmp": str(tmp), "missing": MISSING}


# (arguments, exit status, the one line on stderr); {names} are filled from ``world``; a line ending in "…" is
# the start of the line (the rest is DuckDB's own words).
CASES: list[tuple[str, int, str]] = [
    # the command line itself
    ("bogus", 2, "error: no such command 'bogus'; see: explorer --help"),
    ("wandr", 2, "error: no such command 'wandr'. Did you mean 'wander'?"),
    ("stats extra", 2, "error: got unexpected extra argument(s) (extra)" + SEE.format("stats")),
    ("wander list --foo", 2, "error: no such option: --foo" + SEE.format("wander list")),
    ("wander new", 2, "error: missing option '--seed-concept'" + SEE.format("wander new")),
    ("wander run {sid} --steps", 2, "error: option '--steps' requires an argument"),
    # numbers that do not parse, or fall outside their range
    ("wander run {sid} --steps abc", 2, "error: --steps must be a whole number, not 'abc'" + SEE.format("wander run")),
    ("wander run {sid} --steps 0", 2, "error: --steps must be from 1 to 10000, not 0" + SEE.format("wander run")),
    ("wander list --limit -1", 2, "error: --limit must be from 0 to 1000000, not -1" + SEE.format("wander list")),
    (
        "wander list --offset 99999999999999999999",
        2,
        "error: --offset must be from 0 to 1000000, not 99999999999999999999" + SEE.format("wander list"),
    ),
    ("wander search gc --limit 0", 2, "error: --limit must be from 1 to 1000000, not 0" + SEE.format("wander search")),
    (
        "wander crystals --min-confidence 1.5",
        2,
        "error: --min-confidence must be from 0.0 to 1.0, not 1.5" + SEE.format("wander crystals"),
    ),
    ("jobs worker --nice 20", 2, "error: --nice must be from 0 to 19, not 20" + SEE.format("jobs worker")),
    ("dream rem --dreams 0", 2, "error: --dreams must be from 1 to 10000, not 0" + SEE.format("dream rem")),
    ("dream cycle --dreams 2.5", 2, "error: --dreams must be a whole number, not '2.5'" + SEE.format("dream cycle")),
    ("dream rem --seed -1", 2, "error: --seed must be from 0 to 4294967295, not -1" + SEE.format("dream rem")),
    (
        "dream explore --seed 99999999999999999999",
        2,
        "error: --seed must be from 0 to 4294967295, not 99999999999999999999" + SEE.format("dream explore"),
    ),
    (
        "dream explore --result-threshold nan",
        2,
        "error: --result-threshold must be from 0.0 to 1.0, not nan" + SEE.format("dream explore"),
    ),
    ("dream rem --year 0", 2, "error: --year must be from 1 to 2999, not 0" + SEE.format("dream rem")),
    ("ingest {tmp}/docs --year 3000", 2, "error: --year must be from 1 to 2999, not 3000" + SEE.format("ingest")),
    ("ingest {tmp}/docs --max-mb -1", 2, "error: --max-mb must be at least 0.0, not -1" + SEE.format("ingest")),
    ("ingest {tmp}/docs --max-mb x", 2, "error: --max-mb must be a number, not 'x'" + SEE.format("ingest")),
    ("demo --port abc", 2, "error: --port must be a whole number, not 'abc'" + SEE.format("demo")),
    # a session's numbers are the engine's to refuse (the app refuses the same values in the same words)
    (
        "wander new --seed-concept gc --seed 99999999999999999999",
        1,
        "error: random seed must be from 0 to 4294967295, not 99999999999999999999",
    ),
    ("wander new --seed-concept gc --temperature inf", 1, "error: temperature must be above 0 and at most 10, not inf"),
    ("wander new --seed-concept gc --temperature 0", 1, "error: temperature must be above 0 and at most 10, not 0.0"),
    (
        "wander new --seed-concept gc --max-drift nan",
        1,
        "error: max drift distance must be above 0 and at most 2 (a cosine distance), not nan",
    ),
    ("wander new --seed-concept gc --max-steps 0", 1, "error: max steps must be from 1 to 1000000, not 0"),
    (
        "wander new --seed-concept gc --budget-cents -1",
        1,
        "error: cloud budget cents must be from 0 to 10000000, not -1",
    ),
    (
        "wander new --seed-concept gc --checkpoint-every -1",
        1,
        "error: human checkpoint frequency must be from 0 (never) to 1000000, not -1",
    ),
    ("wander new --seed-concept ' '", 1, "error: a session needs a seed concept"),
    # arguments no store can hold: bytes that are not UTF-8 (Python reads each as a lone surrogate) or a NUL,
    # refused before any command runs, naming the option or argument (the app's CliRunner passes them as given)
    (
        "wander new --seed-concept \udcff",
        2,
        "error: --seed-concept is not UTF-8 text: position 0 holds a lone surrogate (\\udcff, the byte 0xFF undecoded)",
    ),
    (
        "wander new --seed-concept=ab\udce9",
        2,
        "error: --seed-concept is not UTF-8 text: position 2 holds a lone surrogate (\\udce9, the byte 0xE9 undecoded)",
    ),
    (
        "wander inject {sid} --json 'a\x00b'",
        2,
        "error: concept contains a NUL character (\\x00) at position 1, which stored text cannot hold",
    ),
    (
        "ingest --json {tmp}/\udcff.md",
        2,
        "error: paths is not UTF-8 text: position …",
    ),
    ("wander \udcff", 2, "error: argument 2 is not UTF-8 text: position 0 holds a lone surrogate (\\udcff, …"),
    # choices: the valid ones are listed
    (
        "wander list --status bogus",
        2,
        "error: --status must be one of active, paused, completed, abandoned, not 'bogus'" + SEE.format("wander list"),
    ),
    (
        "wander crystals --status bogus",
        2,
        "error: --status must be one of active, acted_upon, invalidated, archived, not 'bogus'"
        + SEE.format("wander crystals"),
    ),
    (
        "wander fence {sid} jokes --action maybe",
        2,
        "error: --action must be one of include, exclude, not 'maybe'" + SEE.format("wander fence"),
    ),
    ("wander fence {sid} jokes", 1, "error: say exactly one of --include, --exclude (or --action include|exclude)"),
    (
        "wander search gc --type bogus",
        1,
        "error: unknown search types ['bogus']; use locus, crystal, resonance",
    ),
    (
        "dream chrono {tmp}/docs --every week",
        2,
        "error: --every must be one of year, month, not 'week'" + SEE.format("dream chrono"),
    ),
    # what the engine refuses
    ("wander step {missing}", 1, "error: no wander session '{missing}'; list sessions with: explorer wander list"),
    ("wander inject {sid} ''", 1, "error: inject needs a concept"),
    ("wander resume {sid}", 1, "error: cannot resume session {sid}: it is active; it is already running"),
    ("wander review {missing}", 1, "error: say exactly one of --approve, --reject, --archive"),
    (
        "wander review {missing} --approve",
        1,
        "error: no crystal '{missing}'; list crystals with: explorer wander crystals",
    ),
    (
        "wander review {crystal} --reject",
        1,
        "error: crystal {crystal} is already approved; a review cannot make it rejected unless forced; "
        "add --force to change the decision",
    ),
    ("dream rem --year 1999", 1, "error: no nodes from 1999 to dream from; years in the knowledge base: 2010"),
    ("ingest {tmp}/missing.md", 1, "error: {tmp}/missing.md: no such file or folder"),
    (
        "dream rem --db {tmp}/empty.duckdb",
        1,
        "error: the knowledge base holds 0 nodes to dream over; dreaming needs at least 3; "
        "read documents first: explorer ingest PATH",
    ),
    # the disk and the database
    ("stats --db {tmp}/notes.txt", 1, "error: {tmp}/notes.txt is not a Dream Explorer database (nor any DuckDB file)"),
    (
        "ingest {tmp}/docs --db {tmp}/notes.txt/x.duckdb",
        1,
        "error: cannot open database {tmp}/notes.txt/x.duckdb: {tmp}/notes.txt is a file, not a folder",
    ),
    (
        "export {sid} --png {tmp}/notes.txt/archive",
        1,
        "error: cannot make the folder {tmp}/notes.txt/archive: Not a directory",
    ),
    (
        "export {sid} --png {tmp}/notes.txt",
        1,
        "error: cannot write the archive into {tmp}/notes.txt: it is a file, not a folder",
    ),
    (
        "export {missing} --png {tmp}/out",
        1,
        "error: no wander session '{missing}'; list sessions with: explorer wander list",
    ),
]


@pytest.mark.parametrize(("command", "status", "line"), CASES, ids=[c[0] for c in CASES])
def test_a_user_error_is_one_line(world: dict[str, str], command: str, status: int, line: str) -> None:
    args = shlex.split(command.format(**world))
    result = CliRunner().invoke(app, args, env={"EXPLORER_DB": world["db"]})
    line, lines = line.format(**world), result.stderr.splitlines()
    if line.endswith("…") and lines:
        lines[0] = lines[0][: len(line) - 1] + "…"
    assert (result.exit_code, lines) == (status, [line]), result.output
    assert "Traceback" not in result.output


def test_the_ranges_and_choices_are_in_the_help() -> None:
    """The help says what the table's errors say: the range of a number, the values of a choice."""
    runner = CliRunner(env={"COLUMNS": "200"})
    listing = runner.invoke(app, ["wander", "list", "--help"]).stdout
    assert "[0<=x<=1000000]" in listing and "<active|paused|completed|abandoned>" in listing
    assert "[1<=x<=10000]" in runner.invoke(app, ["dream", "rem", "--help"]).stdout


def test_a_bare_group_prints_its_help_and_exits_2() -> None:
    result = CliRunner().invoke(app, ["wander"])
    assert result.exit_code == 2 and "Usage: explorer wander" in result.stdout and result.stderr == ""


def test_the_last_resort_is_one_line_and_debug_shows_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What is not the person's doing (a bug, the disk, the database) still ends in one line, which says how to
    see the traceback; EXPLORER_DEBUG=1 shows it. The person's own errors never need it.
    """
    debug = " (run with EXPLORER_DEBUG=1 for the traceback)"

    def boom() -> None:
        raise KeyError("session")

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    assert run_guarded(boom) == 1
    assert capsys.readouterr().err == f"internal error: KeyError: 'session'{debug}\n"
    assert failure(PermissionError(13, "Permission denied", "/srv/x")) == (
        f"error: /srv/x: Permission denied{debug}",
        1,
    )
    assert failure(DatabaseFailure("the database refused this: Conversion Error: out of range\nLINE 1: …")) == (
        f"error: the database refused this: Conversion Error: out of range{debug}",
        1,
    )
    assert failure(KeyboardInterrupt()) == ("interrupted", 130)
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(KeyError):
        run_guarded(boom)
    assert failure(ExplorerError("no such thing")) == ("error: no such thing", 1)


def real(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, DEBUG_ENV: ""})


def test_the_console_script_prints_help_without_a_traceback() -> None:
    """``explorer`` alone (the console script's entry point, explorer.cli:main) shows the help, exit status 2."""
    out = real(str(Path(sys.executable).with_name("explorer")))
    assert out.returncode == 2 and out.stdout.lstrip().startswith("Usage: explorer") and out.stderr == ""


def test_python_m_explorer_says_a_bad_number_in_one_line(tmp_path: Path) -> None:
    out = real(sys.executable, "-m", "explorer", "wander", "run", MISSING, "--steps", "abc")
    assert out.returncode == 2
    assert out.stderr.splitlines() == ["error: --steps must be a whole number, not 'abc'" + SEE.format("wander run")]


def test_a_byte_that_is_not_utf8_on_a_real_command_line_is_one_line(tmp_path: Path) -> None:
    """The bytes themselves (café written in Latin-1), as a shell passes them to the console script: one line."""
    out = subprocess.run(
        [
            Path(sys.executable).with_name("explorer"),
            "wander",
            "new",
            "--seed-concept",
            b"caf\xe9",
            "--db",
            tmp_path / "x",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, DEBUG_ENV: ""},
    )
    assert out.returncode == 2 and out.stdout == "" and not (tmp_path / "x").exists()
    assert out.stderr.splitlines() == [
        "error: --seed-concept is not UTF-8 text: position 3 holds a lone surrogate (\\udce9, the byte 0xE9 undecoded)"
    ]
