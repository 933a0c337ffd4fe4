"""Shared fixtures: real DuckDB files in temp folders, a small real corpus (a slice of
sample_data) ingested once per test run, and two embedders.

Tests embed with the hashing embedder (word n-grams: fast, deterministic, no torch), and so do
the CLI commands and pages they start, through ``EXPLORER_EMBEDDING_MODEL``. A test that needs
what the real MiniLM model knows (that a kitten is like a cat) is marked ``@pytest.mark.minilm``:
its runtimes, corpus copies and commands then use the real model. Asking for ``real_embedder``
or ``minilm_corpus_template`` marks a test too; ``pytest -m "not minilm"`` skips them all.

``EXPLORER_TEST_BACKEND=postgres`` (opt-in; the default is ``duckdb``) runs the same tests on PostgreSQL: the
fresh databases of ``make_runtime``/``runtime`` and the corpus copy of ``corpus_copy`` are then fresh databases on
the test run's PostgreSQL server (``corpus_copy`` a URL, not a path). A test about the file itself (its turns,
its write-ahead log, its locks) is marked ``@pytest.mark.duckdb_only("why")`` and skipped there.

``make test-fast`` leaves out what is slow to start: a browser, MiniLM, a real local model, a PostgreSQL server.
Each test is classified by what it asks for (:func:`pytest_collection_modifyitems`), so a new test needs no mark.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from explorer.providers.embeddings import HASHING, Embedder, HashingEmbedder, LocalEmbedder
from explorer.runtime import Runtime, open_runtime
from explorer.settings import DEFAULT_EMBEDDING_MODEL, Settings
from explorer.testing.model_server import SERVED_MODEL, ModelServer
from explorer.testing.postgres_server import PostgresServer

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
SMALL_CORPUS_DOCS = ("whatsnew-2.0.md", "whatsnew-3.0.md", "whatsnew-3.8.md")
FORTUNES_PER_DOMAIN = 6


MINILM_FIXTURES = {"real_embedder", "minilm_corpus_template"}
REAL_MODEL_FIXTURES = {"llama_server"}
E2E = REPO / "tests" / "e2e"
ON_POSTGRES = os.environ.get("EXPLORER_TEST_BACKEND", "duckdb") == "postgres"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "duckdb_only(reason): about the DuckDB file; skipped on the postgres backend")


def calls(item: pytest.Item, name: str) -> bool:
    """Whether the test, or a fixture it asks for (at any depth), names ``name`` in its code: how a test that
    starts a browser or a server is found without a mark of its own.
    """
    functions = [getattr(item, "function", None)]
    fixture_info = getattr(item, "_fixtureinfo", None)
    if fixture_info is not None:
        functions += [d.func for defs in fixture_info.name2fixturedefs.values() for d in defs]
    return any(name in getattr(getattr(f, "__code__", None), "co_names", ()) for f in functions)


def opens_a_browser(item: pytest.Item) -> bool:
    """An end-to-end test, or one that opens Chromium (``harness.chromium``, the one way to it)."""
    return Path(str(item.path)).is_relative_to(E2E) or calls(item, "chromium")


def needs_postgres(item: pytest.Item) -> bool:
    """A test that starts a PostgreSQL server (``postgres_server``'s, or one of its own), or the ``postgres`` case
    of a parametrization (whose fixture asks for the server only in that case, by name).
    """
    callspec = getattr(item, "callspec", None)
    return calls(item, "PostgresServer") or (callspec is not None and "postgres" in callspec.params.values())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked by what it needs that is slow to start (``make test-fast`` leaves those out):
    ``minilm`` and ``real_model`` by the fixtures it asks for, ``browser`` and ``postgres`` by
    :func:`opens_a_browser` and :func:`needs_postgres`. On the postgres backend a ``duckdb_only`` test is skipped,
    with its reason.
    """
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if MINILM_FIXTURES & fixtures:
            item.add_marker(pytest.mark.minilm)
        if REAL_MODEL_FIXTURES & fixtures:
            item.add_marker(pytest.mark.real_model)
        if opens_a_browser(item):
            item.add_marker(pytest.mark.browser)
        if needs_postgres(item):
            item.add_marker(pytest.mark.postgres)
        file_only = item.get_closest_marker("duckdb_only")
        if ON_POSTGRES and file_only is not None:
            item.add_marker(pytest.mark.skip(reason=f"needs a DuckDB file: {file_only.args[0]}"))
    items[:] = slow_files_first(items)


def slow_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The files with a browser's tests, then those with a server's, then the rest, each file's tests in their order.

    ``--dist loadfile --no-loadscope-reorder`` (the Makefile's) hands files out in this order, one to each worker
    that is free: a long file dealt last keeps one worker busy while the other has nothing left, so the long ones
    are dealt while there is work beside. (xdist's own reorder, most tests first, dealt the browser's files last.)
    """
    rank: dict[Path, int] = {}
    for item in items:
        slow = 0 if item.get_closest_marker("browser") else 1 if item.get_closest_marker("postgres") else 2
        rank[item.path] = min(rank.get(item.path, slow), slow)
    return sorted(items, key=lambda item: rank[item.path])  # stable: a file's tests keep their order


@pytest.fixture(scope="session", autouse=True)
def hashing_for_what_tests_start() -> Iterator[None]:
    """CLI commands (in process or not) and app pages read their embedder from the environment:
    the hashing one, like the fixtures' databases, so a subprocess never imports torch.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPLORER_EMBEDDING_MODEL", HASHING)
        yield


def needs_minilm(request: pytest.FixtureRequest) -> bool:
    """Whether the test asking is marked to run on the real model."""
    return request.node.get_closest_marker("minilm") is not None


@pytest.fixture
def on_minilm(request: pytest.FixtureRequest) -> bool:
    """Whether this test runs on the real model (for fixtures that keep a template of each kind)."""
    return needs_minilm(request)


@pytest.fixture(autouse=True)
def real_model_for_what_minilm_tests_start(on_minilm: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``minilm`` test's commands and pages open its databases with the model that built them."""
    if on_minilm:
        monkeypatch.setenv("EXPLORER_EMBEDDING_MODEL", DEFAULT_EMBEDDING_MODEL)


@pytest.fixture(scope="session")
def embedder() -> HashingEmbedder:
    """The tests' embedder: shared words make texts near, and nothing else does."""
    return HashingEmbedder()


@pytest.fixture(scope="session")
def real_embedder() -> LocalEmbedder:
    """The default embedding model (on ONNX Runtime, under a second to load), loaded once, for tests that need its
    meaning.

    On one thread: the suite runs two workers on two cores, where a second thread only contends (measured: the
    small corpus embeds in 18 s on one thread, 39 s on two).
    """
    model = LocalEmbedder(threads=1)
    model.embed(["warm up"])
    return model


RuntimeFactory = Callable[..., Runtime]


@pytest.fixture
def make_runtime(tmp_path: Path, embedder: Embedder, request: pytest.FixtureRequest) -> Iterator[RuntimeFactory]:
    """``make_runtime(db=None, completion_kwargs=None, **settings)`` → a Runtime on a fresh database (the same one
    each call), embedding with the hashing embedder, or the real model for a ``minilm`` test.
    """
    if needs_minilm(request):
        embedder = request.getfixturevalue("real_embedder")
    new_database = request.getfixturevalue("new_postgres_database") if ON_POSTGRES else None  # dropped after us
    fresh: list[Path | str] = []
    made: list[Runtime] = []

    def make(
        db: Path | str | None = None, completion_kwargs: dict[str, Any] | None = None, **overrides: Any
    ) -> Runtime:
        if db is None and not fresh:
            fresh.append(new_database() if new_database else tmp_path / "explorer.duckdb")
        overrides = {"embedding_model": embedder.name, **overrides}
        settings = replace(Settings(), db_path=db or fresh[0], **overrides)
        made.append(open_runtime(settings, embedder=embedder, completion_kwargs=completion_kwargs))
        return made[-1]

    yield make
    if ON_POSTGRES:  # what the buffers hold written, and the pools closed, before their databases are dropped
        for runtime in made:
            runtime.flush()
            runtime.db.close()


@pytest.fixture
def runtime(make_runtime: RuntimeFactory) -> Runtime:
    """A Runtime on a fresh, empty database."""
    return make_runtime()


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three What's New documents (three years) and a few fortunes from each domain."""
    folder = tmp_path_factory.mktemp("small_corpus")
    for name in SMALL_CORPUS_DOCS:
        shutil.copy(SAMPLE / "python-whatsnew" / name, folder / name)
    taken: dict[str, int] = {}
    lines = []
    for line in (SAMPLE / "fortunes" / "fortunes.jsonl").read_text(encoding="utf-8").splitlines():
        domain = json.loads(line)["domain"]
        if taken.get(domain, 0) < FORTUNES_PER_DOMAIN:
            taken[domain] = taken.get(domain, 0) + 1
            lines.append(line)
    (folder / "fortunes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _ingested(corpus: Path, path: Path, embedder: Embedder) -> Path:
    from explorer.reading.ingest import ingest_paths

    runtime = open_runtime(replace(Settings(), db_path=path, embedding_model=embedder.name), embedder=embedder)
    report = ingest_paths(runtime, [corpus])
    assert report.documents_added > 0 and not report.errors, report.errors
    runtime.flush()
    return path


BuiltOnce = Callable[[str, Callable[[Path], object]], Path]


@pytest.fixture(scope="session")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> BuiltOnce:
    """``built_once(name, build)`` → a file the whole run shares: the first worker to ask builds it (``build(path)``,
    under a file lock), the others wait and reuse it. ``make test`` runs two pytest-xdist workers, and the
    templates cost seconds (the real model's corpus about 30 s) that each would otherwise spend again.
    """
    root = tmp_path_factory.getbasetemp()
    shared = (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / "built-once"
    shared.mkdir(exist_ok=True)

    def get(name: str, build: Callable[[Path], object]) -> Path:
        path = shared / name
        with FileLock(f"{path}.lock"):
            if not path.exists():
                partial = shared / f"partial-{name}"
                build(partial)
                partial.rename(path)
        return path

    return get


@pytest.fixture(scope="session")
def corpus_template(small_corpus: Path, built_once: BuiltOnce, embedder: Embedder) -> Path:
    """A database with the small corpus ingested offline, made once and copied per test."""
    return built_once("corpus.duckdb", lambda path: _ingested(small_corpus, path, embedder))


@pytest.fixture(scope="session")
def minilm_corpus_template(small_corpus: Path, built_once: BuiltOnce, real_embedder: LocalEmbedder) -> Path:
    """The same corpus embedded by the real model, for tests that need its meaning."""
    return built_once("minilm-corpus.duckdb", lambda path: _ingested(small_corpus, path, real_embedder))


@pytest.fixture
def corpus_copy(tmp_path: Path, request: pytest.FixtureRequest) -> Path | str:
    """A private copy of the ingested small corpus, embedded as the test's runtimes embed: a file, or on the
    postgres backend a fresh database the template is copied into (``explorer db copy``'s way).
    """
    template = request.getfixturevalue("minilm_corpus_template" if needs_minilm(request) else "corpus_template")
    if ON_POSTGRES:
        from explorer.store.copying import copy_database

        url: str = request.getfixturevalue("new_postgres_database")()
        copy_database(template, url)
        return url
    target = tmp_path / "corpus.duckdb"
    shutil.copy(template, target)
    return target


@pytest.fixture
def corpus_runtime(corpus_copy: Path | str, make_runtime: RuntimeFactory) -> Runtime:
    """A Runtime over a private copy of the ingested small corpus."""
    return make_runtime(db=corpus_copy)


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., ModelServer]]:
    """``model_server(latency_s=0, script=None)`` → a started OpenAI-compatible server on 127.0.0.1, and the
    environment pointing at it (``EXPLORER_LOCAL_MODEL``, ``EXPLORER_API_BASE``), for commands and pages;
    pass ``local_model=SERVED_MODEL, api_base=server.url`` to ``make_runtime`` for the engine.
    """
    started: list[ModelServer] = []

    def start(latency_s: float = 0.0, script: Any = None) -> ModelServer:
        server = ModelServer(latency_s=latency_s, script=script).start()
        started.append(server)
        for name, value in server.env(SERVED_MODEL).items():
            monkeypatch.setenv(name, value)
        return server

    yield start
    for server in started:
        server.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL 18 with pgvector for the test run (each xdist worker starts its own, in a second)."""
    with PostgresServer() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty PostgreSQL database of the test's own, dropped after it."""
    url = postgres_server.new_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture(scope="session")
def on_postgres() -> bool:
    """Whether this run's fresh databases are on PostgreSQL (``EXPLORER_TEST_BACKEND=postgres``)."""
    return ON_POSTGRES


@pytest.fixture
def new_postgres_database(postgres_server: PostgresServer) -> Iterator[Callable[[], str]]:
    """``new_postgres_database()`` → the URL of another fresh database, all dropped after the test."""
    made: list[str] = []

    def new() -> str:
        made.append(postgres_server.new_database())
        return made[-1]

    yield new
    for url in made:
        postgres_server.drop_database(url)
