"""A server's password never leaves the store in what it says: not in the location it names, not in a driver's
message that quotes what it could not read of the URL (libpq's ``invalid percent-encoded token: "..."``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.store import StoreError, open_database

SECRET = "Pw%zzSecret"  # not valid percent-encoding: libpq refuses the URL and quotes it


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://ana:{SECRET}@/kb?host={{socket}}",
        f"postgres://ana@/kb?host={{socket}}&password={SECRET}",
        "postgresql://ana@/kb?host={socket}&sslmode=disable&password=s3cret-pw",
        "postgresql://ana:s3cret-pw@/kb?host={socket}",
    ],
)
def test_a_database_that_cannot_be_opened_is_said_without_its_password(url: str, tmp_path: Path) -> None:
    url = url.format(socket=tmp_path / "no-server")  # a socket folder nobody listens in: refused at once
    db = open_database(url, embedding_model="test-model", embedding_dim=4, lock_wait_s=1)
    assert "Pw" not in db.location and "s3cret" not in db.location
    with pytest.raises(StoreError) as refused:
        db.schema_version()
    said = str(refused.value)
    assert said.startswith(f"cannot open database {db.location}: ")
    assert "Pw" not in said and "zz" not in said and "s3cret" not in said
