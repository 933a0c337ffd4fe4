"""A database prepared for the app's pages: the small corpus, the map fitted, and one
session that walked to a human checkpoint and holds a crystal. Made once per run
(it costs a few UMAP and wander seconds) and copied for each test.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.projection import update_projection
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

APP = Path(__file__).resolve().parents[2] / "app.py"
CHECKPOINT = 3


@pytest.fixture(scope="session")
def app_template(corpus_template: Path, tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    path = tmp_path_factory.mktemp("app") / "app.duckdb"
    shutil.copy(corpus_template, path)
    runtime = open_runtime(replace(Settings(), db_path=path), embedder=embedder)
    update_projection(runtime)
    session = wander.create_session(
        runtime,
        SessionConfig(
            seed_concept="unicode strings and text encodings",
            name="Unicode walk",
            random_seed=0,
            human_checkpoint_frequency=CHECKPOINT,
        ),
    )
    result = wander.run(runtime, session.id, CHECKPOINT + 2)
    assert result.steps_completed == CHECKPOINT and (result.stopped_reason or "").startswith("paused: checkpoint")
    if not wander.list_crystals(runtime, session_id=session.id):
        assert wander.crystallize(runtime, session.id).crystal is not None
    runtime.calls.flush()
    return path


@pytest.fixture
def app_db(app_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the prepared database, selected for the app through EXPLORER_DB."""
    path = tmp_path / "app.duckdb"
    shutil.copy(app_template, path)
    monkeypatch.setenv("EXPLORER_DB", str(path))
    for name in ("EXPLORER_LOCAL_MODEL", "EXPLORER_CLOUD_MODEL", "EXPLORER_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no explorer.toml from the working tree
    return path


@pytest.fixture
def app_runtime(app_db: Path, embedder) -> Runtime:
    """The test's own view of the app's database (to check what the pages wrote)."""
    return open_runtime(replace(Settings(), db_path=app_db), embedder=embedder)


@pytest.fixture
def open_app(app_db: Path) -> Callable[[str], AppTest]:
    """``open_app("sessions")`` → an AppTest on the test's database that has run app.py and switched to that page."""

    def open_page(name: str = "corpus") -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=180)
        at.run()
        if name != "corpus":
            at.switch_page(f"pages/{name}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return open_page


def _texts(at: AppTest) -> str:
    parts = []
    for kind in (
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "text",
        "info",
        "warning",
        "error",
        "success",
        "metric",
    ):
        for element in getattr(at, kind):
            parts.append(str(getattr(element, "value", "")))
            if kind == "metric":
                parts.append(str(element.label))
    return "\n".join(parts)


@pytest.fixture
def page_text() -> Callable[[AppTest], str]:
    """Everything a page says, as one string (to look for text wherever it is drawn)."""
    return _texts
