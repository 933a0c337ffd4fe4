"""A change that must be made in several places fails here, naming the places it missed.

docs/ENGINEERING.md's change recipe says, for each common change, which files it touches; these tests are the
recipe's checks that run in ``make test-fast`` (no browser, no server): a record field that has no column or is
neither shown nor said to be hidden, a session setting that a surface does not take, a wander function the
facade lists for mypy and not for its callers (or the other way round), a default or choice the command line
writes out that is not the engine's, and a page of the app that the browser tests do not visit.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import pkgutil
import re
import sys
import typing
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import typer

import explorer.cli
from explorer.api.models import SessionCreate, SessionNumbers, SessionUpdate
from explorer.cli import choices
from explorer.records import consolidation, dreaming, jobs, wander
from explorer.records.json_form import Computed, JsonRecord
from explorer.runtime import Runtime
from explorer.store import wander as wander_store
from explorer.wander import service as wander_service
from explorer.wander.config import SESSION_LIMITS, SessionConfig
from explorer.wander.sessions import EDITABLE

RECIPE = "docs/ENGINEERING.md#change-recipes"
REPO = Path(__file__).resolve().parents[1]

sys.path.insert(0, str(REPO / "tests" / "e2e"))
import harness  # noqa: E402  (the browser tests' kit; importing it starts nothing)

# The fields a record keeps and never prints, each with why (a vector is never printed, so none is listed).
# A new field is shown (its record's ``json_form``) or listed here: the choice is made once, on purpose.
NOT_SHOWN: dict[type, dict[str, str]] = {
    wander.Session: {
        "pending_locus_id": "the step's own bookkeeping between its read and its write",
        "failure_streak": "the circuit breaker's counter; a pause says why it stopped",
        "fence_streak": "the circuit breaker's counter; a pause says why it stopped",
        "circuit_reset_step": "the circuit breaker's counter; a pause says why it stopped",
    },
    wander.Locus: {
        "session_id": "a locus is shown within its session",
        "abstraction_level": "the walk's own measure, not a person's",
        "first_encountered": "its visits say when",
        "last_visited": "its visits say when",
    },
    wander.Residue: {
        "session_id": "shown within its session",
        "from_locus_id": "shown beside its step",
        "created_at": "its step says when",
    },
    wander.Resonance: {"decay_rate": "one constant of the tuning", "created_at": "its strength says what matters"},
    wander.Trace: {
        "session_id": "shown within its session",
        "created_at": "its step says when",
        "id": "known by its step_number",
    },
    wander.StepResult: {
        "resonances": "shown as resonances_detected",
        "adjacencies": "the candidates weighed: the trace counts them",
    },
    jobs.Job: {
        "id": "shown as job_id",
        "done": "shown in progress (JobProgress)",
        "total": "shown in progress (JobProgress)",
        "current": "shown in progress (JobProgress)",
        "phase": "shown in progress (JobProgress)",
        "heartbeat_at": "the workers' liveness, not the job's",
    },
}


def told(missed: dict[str, str], change: str) -> str:
    """What a failure says: each place missed, one a line, and the recipe that lists them all."""
    return "\n".join([*(f"{where}: {what}" for where, what in missed.items()), f"(see {RECIPE}: {change})"])


def records_with_forms() -> list[type[JsonRecord]]:
    """Every record of the records package that declares a JSON form."""
    return [
        cls
        for module in (wander, dreaming, jobs, consolidation)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, JsonRecord) and cls is not JsonRecord and cls.__module__ == module.__name__
    ]


def unshown(cls: type[JsonRecord]) -> set[str]:
    """The record's fields its JSON form leaves out, vectors apart."""
    keys = {key.name if isinstance(key, Computed) else key for key in cls.json_form.keys}
    hints = typing.get_type_hints(cls)
    return {
        f.name
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.name not in keys and "ndarray" not in str(hints[f.name])
    }


def test_every_field_of_a_record_is_shown_or_said_why_not() -> None:
    forms = records_with_forms()
    assert wander.Session in forms and jobs.Job in forms  # the search finds the records
    undecided = {
        f"{cls.__name__}.{name}": "neither in its json_form nor in NOT_SHOWN here"
        for cls in forms
        for name in sorted(unshown(cls) - NOT_SHOWN.get(cls, {}).keys())
    }
    stale = {
        f"{cls.__name__}.{name}": "in NOT_SHOWN, but shown or gone"
        for cls, names in NOT_SHOWN.items()
        for name in sorted(names.keys() - unshown(cls))
    }
    assert not {**undecided, **stale}, told({**undecided, **stale}, "a record field")


def postgres_migrations_text() -> str:
    folder = resources.files("explorer.store.migrations.postgres")
    return "\n".join(f.read_text(encoding="utf-8") for f in folder.iterdir() if f.name.endswith(".sql"))


def test_every_field_of_a_stored_record_has_its_column_on_both_backends(runtime: Runtime) -> None:
    """A wander record is written field for field (``store/wander.py``), so a field needs a column: a migration
    on DuckDB, and its twin of the same name in ``migrations/postgres/``. The PostgreSQL schema itself is compared
    with a server (tests/store/test_postgres_schema.py, in ``make test``); here its migrations must name the column.
    """
    missing = {}
    postgres = postgres_migrations_text()
    with runtime.db.connect() as con:
        for cls, table in wander_store._TABLES.items():
            rows = con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table])
            columns = {row[0] for row in rows.fetchall()}
            for field in dataclasses.fields(cls):
                if field.name not in columns:
                    missing[f"{cls.__name__}.{field.name}"] = f"no column in {table}: add store/migrations/NNN_*.sql"
                elif not re.search(rf"\b{field.name}\b", postgres):
                    missing[f"{cls.__name__}.{field.name}"] = "no column in store/migrations/postgres/NNN_*.sql"
    assert len(wander_store._TABLES) >= 7
    assert not missing, told(missing, "a record field")


# The options of `explorer wander new` that name a setting in fewer words than the engine does.
CLI_NAMES = {
    "random_seed": "seed",
    "cloud_budget_cents": "budget_cents",
    "human_checkpoint_frequency": "checkpoint_every",
    "max_drift_distance": "max_drift",
}


def wander_new_options() -> set[str]:
    command = typer.main.get_command(explorer.cli.app).commands["wander"].commands["new"]  # type: ignore[attr-defined]
    return {parameter.name for parameter in command.params}


@pytest.mark.parametrize("setting", [f.name for f in dataclasses.fields(SessionConfig)])
def test_a_session_setting_is_kept_and_taken_by_every_surface(setting: str) -> None:
    """What a person chooses for a session (``SessionConfig``) is kept on the session, taken by the API and
    ``explorer wander new``, and, a number, bounded once (``SESSION_LIMITS``) for the engine and the API's schema.
    The app's form is held to it by tests/pages/test_sessions_page.py; the MCP tool takes a chosen few.
    """
    kept = setting in {f.name for f in dataclasses.fields(wander.Session)}
    assert kept, f"Session has no field {setting}: see {RECIPE}: a session setting"
    assert setting in SessionCreate.model_fields, f"the API's SessionCreate does not take {setting}"
    assert CLI_NAMES.get(setting, setting) in wander_new_options(), f"`explorer wander new` has no option {setting}"
    if typing.get_type_hints(SessionConfig)[setting] in (int, float, int | None, float | None):
        assert setting in SESSION_LIMITS, f"{setting} is a number with no bounds in wander/config.py SESSION_LIMITS"
        assert setting == "random_seed" or setting in SessionNumbers.model_fields, f"SessionNumbers lacks {setting}"


def test_what_may_change_in_a_session_is_what_the_api_takes_to_change() -> None:
    assert set(SessionUpdate.model_fields) == EDITABLE, "wander/sessions.py EDITABLE, api/models.py SessionUpdate"


def type_checking_imports(path: str) -> dict[str, str]:
    """What a module imports under ``if TYPE_CHECKING:``, each name with its module's last part."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    (block,) = (n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {
        alias.name: node.module.rpartition(".")[2]
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def test_the_wander_facade_lists_each_function_once_for_mypy_and_callers_alike() -> None:
    """A wander function is named twice in ``wander/service.py``: imported under TYPE_CHECKING (what mypy and
    readers see) and in ``_HOMES`` (what a caller is given, imported on first use; ``__all__`` is its names).
    """
    for_mypy = type_checking_imports(wander_service.__file__)
    for_callers = {name: module for module, names in wander_service._HOMES.items() for name in names}
    missed = {name: f"imported for mypy from {module}, not in _HOMES" for name, module in for_mypy.items()}
    missed |= {name: f"in _HOMES under {module}, not imported for mypy" for name, module in for_callers.items()}
    for name in for_mypy.keys() & for_callers.keys():
        if for_mypy[name] == for_callers[name]:
            del missed[name]
    assert len(for_callers) > 20 and sorted(for_callers) == wander_service.__all__
    assert not missed, told({f"service.{n}": what for n, what in missed.items()}, "a wander function")


def values(choice: Any) -> Any:
    """What a choice offers or a default is, alike for a Literal, an enum and a number."""
    if typing.get_args(choice):
        return typing.get_args(choice)
    if isinstance(choice, enum.EnumMeta):
        return [member.value for member in choice]
    return choice


def written_out() -> list[str]:
    """The names ``cli/choices.py`` assigns or defines at its top level, but its map of homes."""
    tree = ast.parse(Path(choices.__file__).read_text(encoding="utf-8"))
    assigned = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    defined = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    return [name for name in assigned + defined if name != "ENGINE"]


def test_every_default_the_command_line_writes_out_is_the_engines() -> None:
    names = written_out()
    assert "PAGE_MAX" in names and "ReviewState" in names  # the walk finds both kinds
    missed = {name: "has no home in choices.ENGINE" for name in names if name not in choices.ENGINE}
    missed |= {
        name: f"is {values(getattr(choices, name))!r}, the engine's {home} is {values(pkgutil.resolve_name(home))!r}"
        for name, home in choices.ENGINE.items()
        if values(getattr(choices, name)) != values(pkgutil.resolve_name(home))
    }
    assert not missed, told({f"cli/choices.py {n}": what for n, what in missed.items()}, "a CLI option")


def test_every_page_of_the_app_is_one_the_browser_tests_visit() -> None:
    """app.py's navigation is the list of pages; the browser tests (tests/e2e/harness.py ``PAGES``, which the
    hostile-text test walks) keep their own, as they cannot import the app.
    """
    navigated = re.findall(r'st\.Page\("pages/(\w+)\.py"', (REPO / "app.py").read_text(encoding="utf-8"))
    assert len(navigated) >= 9
    assert tuple(navigated) == harness.PAGES, f"tests/e2e/harness.py PAGES (see {RECIPE}: a page)"
