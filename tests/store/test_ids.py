"""Ids the store looks up: text that names no UUID is simply not found, on any backend, without asking it."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from explorer.store import Database, corpus, jobs, reviews, wander
from explorer.store.ids import is_uuid, uuids

ONE = "9b22cb0e-a78c-4db1-a084-f13e50c36f26"  # fixed: parallel test workers must collect the same ids


@pytest.mark.parametrize("text", [ONE, ONE.upper(), ONE.replace("-", ""), "{" + ONE + "}"])
def test_the_spellings_both_databases_read_are_uuids(text: str) -> None:
    assert is_uuid(text)


@pytest.mark.parametrize("text", ["", "nope", ONE[:-1], ONE + "0", "urn:uuid:" + ONE, "{" + ONE, ONE[:8] + ONE[9:]])
def test_other_text_is_not(text: str) -> None:
    assert not is_uuid(text)


def test_uuids_keeps_the_ids_once_in_order() -> None:
    other = str(uuid.uuid4())
    assert uuids([other, "nope", ONE, other]) == [other, ONE]


def test_a_mistyped_id_is_simply_not_found(tmp_path: Path) -> None:
    db = Database(tmp_path / "ids.duckdb", embedding_model="test-model", embedding_dim=4)
    with db.connect() as con:
        assert wander.get_session(con, "nope") is None
        assert wander.get_crystal(con, "nope'") is None
        assert wander.get_resonance(con, ONE[:-1]) is None
        assert jobs.get_job(con, "nope") is None
        assert reviews.get_review(con, "nope") is None
        assert reviews.crystal_reviews(con, "nope") == []
        assert corpus.get_nodes(con, ["nope", ONE]) == []
