"""What the app says of an engine error or a job's reason never shows the database's password, though a driver's
message may quote what it could not read of the URL (``EXPLORER_DB``, as the app is started with it).
"""

from __future__ import annotations

import pytest

from explorer.store import StoreError
from pages.common import error_text, masked

URL = "postgresql://ana@db.lan/kb?sslmode=require&password=Pw%zzS3cret"


@pytest.fixture(autouse=True)
def served_on_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLORER_DB", URL)


def test_an_engine_error_quoting_the_url_or_its_password_is_masked() -> None:
    said = error_text(StoreError(f'cannot open database {URL}: invalid percent-encoded token: "Pw%zzS3cret"'))
    assert "S3cret" not in said and said.count(r"\*\*\*") == 2  # the URL's and the quoted one, escaped


def test_a_jobs_reason_is_masked_as_an_error_is() -> None:
    assert masked('the database refused this: token "Pw%zzS3cret"') == 'the database refused this: token "***"'
    assert masked("nothing secret here") == "nothing secret here"
