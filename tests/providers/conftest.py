"""The providers' tests keep what a server was learnt to take in their own temporary folders: beside each test's
database file, and (a PostgreSQL store's) in a cache folder of the test's.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def forms_learnt_in_a_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
