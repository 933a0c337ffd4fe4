"""A database prepared for the app's pages: the small corpus, the map fitted, and one
session that walked to a human checkpoint (the first with a crystal) and holds a crystal. Made once per run
(it costs a few UMAP and wander seconds) and copied for each test: on the hashing embedder,
or on the real model for a ``minilm`` test, whose walk follows meaning into the corpus.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer import jobs
from explorer.projection import update_projection
from explorer.providers.embeddings import Embedder
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
import harness  # noqa: E402  (the real app and Chromium, shared with the end-to-end tests)

APP = Path(__file__).resolve().parents[2] / "app.py"
CHECKPOINT = 3


def _prepared(corpus: Path, path: Path, embedder: Embedder) -> Path:
    shutil.copy(corpus, path)
    runtime = open_runtime(replace(Settings(), db_path=path, embedding_model=embedder.name), embedder=embedder)
    update_projection(runtime)
    session = wander.create_session(
        runtime,
        SessionConfig(
            seed_concept="unicode strings and text encodings",
            name="Unicode walk",
            random_seed=0,
            human_checkpoint_frequency=CHECKPOINT,
            max_drift_distance=1.5,  # the hashing embedder puts a short seed far from every chunk
        ),
    )
    reasons = []
    for _ in range(4):  # a crystal must be grounded and validated: walk on, checkpoint by checkpoint, until one is
        result = wander.run(runtime, session.id, CHECKPOINT + 2)
        assert result.steps_completed == CHECKPOINT and (result.stopped_reason or "").startswith("paused: checkpoint")
        if wander.list_crystals(runtime, session_id=session.id):
            break
        attempt = wander.crystallize(runtime, session.id)
        if attempt.crystal is not None:
            break
        reasons.append(attempt.reason)
        wander.resume(runtime, session.id)
    assert wander.list_crystals(runtime, session_id=session.id), reasons
    runtime.flush()
    return path


@pytest.fixture(scope="session")
def app_template(corpus_template: Path, built_once, embedder: Embedder) -> Path:
    """The prepared database, embedded by the hashing embedder like the pages' own runtimes."""
    return built_once("app.duckdb", lambda path: _prepared(corpus_template, path, embedder))


@pytest.fixture(scope="session")
def minilm_app_template(minilm_corpus_template: Path, built_once, real_embedder: Embedder) -> Path:
    """The prepared database on the real model, whose walk reaches the corpus's chunks."""
    return built_once("minilm-app.duckdb", lambda path: _prepared(minilm_corpus_template, path, real_embedder))


@pytest.fixture
def app_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, on_minilm: bool) -> Path:
    """A private copy of the prepared database (on the real model for a ``minilm`` test), selected
    for the app through EXPLORER_DB.
    """
    template = request.getfixturevalue("minilm_app_template" if on_minilm else "app_template")
    path = tmp_path / "app.duckdb"
    shutil.copy(template, path)
    monkeypatch.setenv("EXPLORER_DB", str(path))
    for name in ("EXPLORER_LOCAL_MODEL", "EXPLORER_CLOUD_MODEL", "EXPLORER_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no explorer.toml from the working tree
    return path


@pytest.fixture
def app_runtime(app_db: Path, request: pytest.FixtureRequest, on_minilm: bool) -> Runtime:
    """The test's own view of the app's database (to check what the pages wrote)."""
    embedder = request.getfixturevalue("real_embedder" if on_minilm else "embedder")
    return open_runtime(replace(Settings(), db_path=app_db, embedding_model=embedder.name), embedder=embedder)


@pytest.fixture
def open_app(app_db: Path) -> Callable[[str], AppTest]:
    """``open_app("sessions")`` → an AppTest on the test's database that has run app.py and switched to that page;
    ``open_app("crystals?view=List")`` with those query parameters, as a link would open it.
    """

    def open_page(name: str = "corpus") -> AppTest:
        name, _, query = name.partition("?")
        at = AppTest.from_file(str(APP), default_timeout=180)
        at.query_params.update(urllib.parse.parse_qsl(query))
        at.run()
        if name != "corpus":
            at.switch_page(f"pages/{name}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return open_page


_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def literal(markdown: str) -> str:
    """What a reader sees of Markdown that holds no formatting of its own, only escaped text (``untrusted.md``):
    CommonMark's backslash escapes resolved and the invisible word joiners that stop autolinks dropped.
    """
    return _ESCAPE.sub(r"\1", markdown).replace("\u2060", "")


@pytest.fixture
def shown() -> Callable[[str], str]:
    """``shown(markdown)`` → the text a reader sees of an escaped label, caption or message."""
    return literal


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
            value = str(getattr(element, "value", ""))
            parts.append(value if kind == "text" else literal(value))
            if kind == "metric":
                parts.append(str(element.label))
    return "\n".join(parts)


@pytest.fixture
def page_text() -> Callable[[AppTest], str]:
    """Everything a page says, as one string, as a reader sees it (to look for text wherever it is drawn)."""
    return _texts


@pytest.fixture
def after_jobs(app_runtime: Runtime) -> Callable[[AppTest], AppTest]:
    """``after_jobs(at)`` → the page run again once every job it started (a worker process carries them out) has
    ended, as a person would see it when the live progress gives way to the outcome.
    """

    def wait(at: AppTest) -> AppTest:
        deadline = time.monotonic() + 180
        while jobs.list_jobs(app_runtime, status="active"):
            assert time.monotonic() < deadline, [j.to_json() for j in jobs.list_jobs(app_runtime)]
            time.sleep(0.2)
        return at.run()

    return wait


@dataclass(frozen=True)
class Browser:
    """The real app (``streamlit run``) on the test's database, and a Chromium page on it."""

    url: str
    page: Any


@pytest.fixture
def browser(app_db: Path, tmp_path: Path) -> Iterator[Browser]:
    """The app served on the test's database, for what only a browser shows (a fragment that polls, live)."""
    with harness.streamlit_server(app_db, log=tmp_path / "streamlit.log") as url, harness.chromium() as page:
        yield Browser(url, page)
