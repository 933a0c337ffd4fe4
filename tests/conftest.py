"""Shared fixtures: real DuckDB files in temp folders, the real local embedder,
and a small real corpus (a slice of sample_data) ingested once per test run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from explorer.providers.embeddings import LocalEmbedder
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
SMALL_CORPUS_DOCS = ("whatsnew-2.0.md", "whatsnew-3.0.md", "whatsnew-3.8.md")
FORTUNES_PER_DOMAIN = 6


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """The default embedding model, loaded once (about 7 s)."""
    model = LocalEmbedder()
    model.embed(["warm up"])
    return model


RuntimeFactory = Callable[..., Runtime]


@pytest.fixture
def make_runtime(tmp_path: Path, embedder: LocalEmbedder) -> RuntimeFactory:
    """``make_runtime(db=None, completion_kwargs=None, **settings)`` → a Runtime on a fresh file."""

    def make(db: Path | None = None, completion_kwargs: dict[str, Any] | None = None, **overrides: Any) -> Runtime:
        settings = replace(Settings(), db_path=db or tmp_path / "explorer.duckdb", **overrides)
        return open_runtime(settings, embedder=embedder, completion_kwargs=completion_kwargs)

    return make


@pytest.fixture
def runtime(make_runtime: RuntimeFactory) -> Runtime:
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


@pytest.fixture(scope="session")
def corpus_template(small_corpus: Path, tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder) -> Path:
    """A database with the small corpus ingested offline, made once and copied per test."""
    from explorer.reading.ingest import ingest_paths

    path = tmp_path_factory.mktemp("template") / "corpus.duckdb"
    runtime = open_runtime(replace(Settings(), db_path=path), embedder=embedder)
    report = ingest_paths(runtime, [small_corpus])
    assert report.documents_added > 0 and not report.errors, report.errors
    return path


@pytest.fixture
def corpus_runtime(corpus_template: Path, tmp_path: Path, make_runtime: RuntimeFactory) -> Runtime:
    """A Runtime over a private copy of the ingested small corpus."""
    target = tmp_path / "corpus.duckdb"
    shutil.copy(corpus_template, target)
    return make_runtime(db=target)
