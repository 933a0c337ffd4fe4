"""Ids the store looks up: text that names no UUID is simply not found, on any backend, without asking it."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from explorer.records.wander import Session
from explorer.store import Database, corpus, jobs, reviews, wander
from explorer.store.ids import AmbiguousId, is_uuid, uuids

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


def test_a_short_id_names_the_one_record_it_begins_and_an_ambiguous_one_names_the_candidates(tmp_path: Path) -> None:
    """The pages show an id's first 8 digits: every lookup by id takes them (from 4 digits, with or without the
    first hyphen), and a prefix that begins several ids of a kind is an error naming them, never a guess.
    """
    db = Database(tmp_path / "short.duckdb", embedding_model="test-model", embedding_dim=4)
    ids = ["6871fedc-0000-4000-8000-000000000001", "6871fedc-0000-4000-8000-000000000002", ONE]
    with db.transaction() as con:
        for session_id in ids:
            wander.insert_session(con, Session(name=session_id[-1], seed_concept="x", id=session_id))
    with db.connect() as con:
        for given in (ONE[:8], ONE[:4], ONE[:8].upper(), ONE[:13], ONE):
            found = wander.get_session(con, given)
            assert found is not None and found.id == ONE, given
        assert wander.session_id_of(con, ONE[:8]) == ONE
        with pytest.raises(AmbiguousId, match="'6871fedc' is the start of more than one session id") as raised:
            wander.get_session(con, "6871fedc")
        assert ids[0] in str(raised.value) and ids[1] in str(raised.value)
        with pytest.raises(AmbiguousId):  # 35 of 36 characters: still the start of both
            wander.get_session(con, ids[0][:-1])
        assert wander.get_session(con, ids[1]).id == ids[1]  # type: ignore[union-attr]
        assert wander.get_session(con, ONE[:3]) is None  # too short to be taken as an id
        assert wander.get_session(con, "6871%") is None  # no pattern reaches the database
        assert wander.get_crystal(con, ONE[:8]) is None  # a session's id is no crystal's
        assert wander.session_id_of(con, "nope") == "nope"
