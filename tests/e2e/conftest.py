"""One real app per module: ``streamlit run app.py`` on a prepared copy of the small corpus, and
Debian's Chromium through Playwright. The server is always stopped, even when a test fails.

The browser test is the product as a person meets it, so it runs on the real MiniLM model: the
corpus is embedded by it and the app is started with the default embedding model.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import harness  # noqa: E402

from explorer.projection import update_projection  # noqa: E402
from explorer.runtime import open_runtime  # noqa: E402
from explorer.settings import Settings  # noqa: E402


@pytest.fixture(scope="module")
def e2e_db(minilm_corpus_template: Path, tmp_path_factory: pytest.TempPathFactory, real_embedder) -> Path:
    """The small corpus with its map fitted (the app never fits on its own)."""
    path = tmp_path_factory.mktemp("e2e") / "e2e.duckdb"
    shutil.copy(minilm_corpus_template, path)
    update_projection(open_runtime(replace(Settings(), db_path=path), embedder=real_embedder))
    return path


@pytest.fixture(scope="module")
def app_url(e2e_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app's address; its server embeds with the default model, whatever the other tests use."""
    log = tmp_path_factory.mktemp("e2e-log") / "streamlit.log"
    with harness.streamlit_server(e2e_db, log=log, env=harness.TEST_ENV) as url:
        yield url


@pytest.fixture(scope="module")
def page(app_url: str) -> Iterator:
    with harness.chromium(1400, 1400) as page:
        yield page
