"""Dreams over HTTP: the list (a kind, a page) and one dream by its id or short id, as the CLI's --json shows it,
and 404 in the API's error shape for an id that names no dream.
"""

from __future__ import annotations

import httpx

from .conftest import error_of

DREAM_KEYS = ["id", "kind", "title", "text", "confidence", "sources", "created"]


def test_dreams_a_run_stored_are_listed_and_read_by_their_short_id(api: httpx.Client) -> None:
    report = api.post("/dreams/rem", json={"dreams": 2, "seed": 3}).json()
    assert len(report["dream_ids"]) == report["dreams_stored"] > 0

    listed = api.get("/dreams", params={"kind": "rem", "limit": 100})
    assert listed.status_code == 200, listed.text
    dreams = {d["id"]: d for d in listed.json()}
    assert set(report["dream_ids"]) <= set(dreams)
    dream = dreams[report["dream_ids"][0]]
    assert list(dream) == DREAM_KEYS and dream["kind"] == "rem" and dream["sources"]
    assert all(list(source) == ["id", "title"] for source in dream["sources"])

    shown = api.get(f"/dreams/{dream['id'][:8]}")
    assert shown.status_code == 200, shown.text
    assert shown.json() == dream
    assert api.get(f"/dreams/{dream['id']}").json() == dream

    page = api.get("/dreams", params={"limit": 1, "offset": 1}).json()
    assert len(page) == 1 and page[0] == api.get("/dreams").json()[1]
    assert api.get("/dreams", params={"kind": "fusion"}).json() == []


def test_an_unknown_dream_is_404_and_bad_filters_are_422(api: httpx.Client) -> None:
    missing = error_of(api.get("/dreams/ffff0000"), 404)
    assert missing["code"] == "not_found" and "no dream 'ffff0000'" in missing["message"]
    assert "GET /api/v1/dreams lists the dreams" in str(missing)
    assert error_of(api.get("/dreams", params={"kind": "nightmare"}), 422)["code"] == "invalid_request"
    assert error_of(api.get("/dreams", params={"limit": 1_000_001}), 422)["code"] == "invalid_request"
    assert error_of(api.get("/dreams", params={"offset": -1}), 422)["code"] == "invalid_request"
