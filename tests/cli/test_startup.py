"""The command line starts at once: building it (which typer does for every command, even ``--help``) imports
no engine, no model library and no database; each command imports what it calls when it runs. And the foreground
and ``--background`` run the same job kind, so a command's options are parameters of its kind.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import pytest
import typer

import explorer.cli
from explorer.jobs import kinds
from explorer.runtime import Runtime
from explorer.wander import service
from explorer.wander.config import SessionConfig

# What costs a command tenths of a second to import, and which commands that do not call it must not pay for.
HEAVY = {
    "numpy",
    "scipy",
    "duckdb",
    "pydantic",
    "litellm",
    "yake",
    "torch",
    "sentence_transformers",
    "sklearn",
    "umap",
    "hdbscan",
    "networkx",
    "streamlit",
    "fastapi",
    "uvicorn",
    "mcp",
}
ENGINE = ("explorer.runtime", "explorer.store", "explorer.records", "explorer.wander.service", "explorer.jobs")


def _run(code: str) -> tuple[str, list[str]]:
    """What a fresh interpreter prints running ``code``, and the modules it holds then."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    printed, _, modules = out.stdout.rstrip("\n").rpartition("\n")
    return printed, json.loads(modules)


def _modules_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    return _run(code)[1]


def test_building_the_command_line_imports_no_engine() -> None:
    # typer reads every command's options (their types and defaults) when the command starts, so this is what
    # `explorer --help` and every command pay before they do anything
    loaded = _modules_after("import typer, explorer.cli\ntyper.main.get_command(explorer.cli.app)")
    assert "explorer.cli.wander" in loaded and "explorer.cli.dream" in loaded  # the whole tree was built
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY) == []
    assert sorted(m for m in loaded if m.startswith(ENGINE)) == []


def test_a_command_imports_its_engine_when_it_runs(corpus_copy: Any) -> None:
    # the other half of the bargain: the engine is imported inside the command, and is there once it ran
    code = (
        "import sys\nfrom explorer.cli import app\n"
        f"app(['wander', 'list', '--json', '--db', {str(corpus_copy)!r}], standalone_mode=False)"
    )
    loaded = _modules_after(code)
    assert "duckdb" in loaded and "explorer.wander.service" in loaded


# What only a step or a model call needs (the walk, its corpus space and scipy under it; the prompts and their
# answer models; a model request's event loop; a local model counting cores): listing sessions imports none of it.
STEP_ONLY = (
    "explorer.wander.walk",
    "explorer.wander.space",
    "scipy",
    "sklearn",
    "explorer.prompts.",
    "asyncio",
    "psutil",
)


def test_listing_sessions_imports_only_what_it_reads(corpus_runtime: Runtime) -> None:
    session = service.create_session(corpus_runtime, SessionConfig(seed_concept="memory"))
    code = (
        "from explorer.cli import app\n"
        f"app(['wander', 'list', '--json', '--db', {str(corpus_runtime.settings.db_path)!r}], standalone_mode=False)"
    )
    printed, loaded = _run(code)
    assert [s["id"] for s in json.loads(printed)] == [session.id]
    assert sorted(m for m in loaded if m.startswith(STEP_ONLY)) == []


# Each command that can run in the background, and the job kind both of its ways run.
KIND_OF = {
    "ingest": kinds.INGEST,
    "enrich": kinds.INGEST,  # the ingest kind with retry_failed: every step pending
    "wander run": kinds.WANDER_RUN,
    "dream rem": kinds.DREAM_REM,
    "dream explore": kinds.DREAM_EXPLORE,
    "dream fuse": kinds.DREAM_FUSE,
    "dream cycle": kinds.DREAM_CYCLE,
    "consolidate run": kinds.CONSOLIDATE_RUN,
}
SURFACE = {"db", "as_json", "background", "watch"}  # where to run it, how to print it, whether to go on: no parameter


def _commands(command: Any, path: tuple[str, ...] = ()) -> dict[str, Any]:
    if not hasattr(command, "commands"):
        return {" ".join(path): command}
    return {k: v for name, sub in command.commands.items() for k, v in _commands(sub, (*path, name)).items()}


def test_every_command_with_a_background_has_its_kind() -> None:
    commands = _commands(typer.main.get_command(explorer.cli.app))
    backgrounded = {path for path, command in commands.items() if any(p.name == "background" for p in command.params)}
    assert backgrounded == set(KIND_OF)


@pytest.mark.parametrize("path", sorted(KIND_OF))
def test_a_commands_options_are_its_kinds_parameters(path: str) -> None:
    # so the foreground passes each of them to the kind's model, and an option added to the command and not to
    # the kind (or named differently) fails here rather than being refused by the job, or dropped
    command = _commands(typer.main.get_command(explorer.cli.app))[path]
    options = {p.name for p in command.params} - SURFACE
    assert options and options <= set(KIND_OF[path].params.model_fields)


def _range(option: Any) -> dict[str, float]:
    """The bounds an option holds its value to (typer's ``min`` and ``max``, both inclusive), in pydantic's words."""
    bounds = {"ge": getattr(option, "min", None), "le": getattr(option, "max", None)}
    return {name: bound for name, bound in bounds.items() if bound is not None}


@pytest.mark.parametrize("path", sorted(KIND_OF))
def test_a_commands_options_are_bounded_as_its_kinds_parameters(path: str) -> None:
    # the command line writes its ranges out (it cannot import the kinds when it starts); each must be the range
    # the kind holds the parameter to, so the option neither refuses what a job takes nor lets through what it
    # refuses with a less helpful message
    command = _commands(typer.main.get_command(explorer.cli.app))[path]
    fields = KIND_OF[path].params.model_fields
    for option in command.params:
        if option.name in fields:
            constraints = (dataclasses.asdict(c) for c in fields[option.name].metadata)
            held = {k: v for c in constraints for k, v in c.items() if k in ("ge", "gt", "le", "lt")}
            assert _range(option) == held, option.name
