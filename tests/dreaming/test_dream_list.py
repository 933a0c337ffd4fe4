"""Reading dreams back: ``explorer dream list`` and ``dream show`` (their --json fields, the short id, an unknown
id), and the one engine function under them, over every kind of dream, newest first.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from explorer.cli import app
from explorer.dreaming import service as dreaming
from explorer.dreaming.exploration import CREATED_BY as EXPLORATION
from explorer.records import Node
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store import dreaming as dreaming_store

from .conftest import link, store

DREAM_KEYS = ["id", "kind", "title", "text", "confidence", "sources", "created"]


def explorer(*args: str) -> Result:
    return CliRunner().invoke(app, ["dream", *args])


def test_a_nights_dreams_are_listed_and_shown_by_their_short_id(corpus_copy: Path) -> None:
    db = str(corpus_copy)
    rem = explorer("rem", "--dreams", "3", "--seed", "7", "--json", "--db", db)
    assert rem.exit_code == 0, rem.output
    report = json.loads(rem.stdout)
    assert len(report["dream_ids"]) == report["dreams_stored"] > 0

    listed = explorer("list", "--json", "--db", db)
    assert listed.exit_code == 0, listed.output
    dreams = json.loads(listed.stdout)
    assert sorted(d["id"] for d in dreams) == sorted(report["dream_ids"])
    assert [d["created"] for d in dreams] == sorted((d["created"] for d in dreams), reverse=True)
    for dream in dreams:
        assert list(dream) == DREAM_KEYS and dream["kind"] == "rem"
        assert dream["title"] and dream["text"] and 0 <= dream["confidence"] <= 1
        assert len(dream["sources"]) == 3 and all(list(s) == ["id", "title"] for s in dream["sources"])
        assert any(s["title"] for s in dream["sources"])  # its memories are passages of titled documents

    text = explorer("list", "--db", db)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [[d["id"][:8], "rem"] for d in dreams]
    assert lines[0].endswith(dreams[0]["title"])

    first = dreams[0]
    shown = explorer("show", first["id"][:8], "--json", "--db", db)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == first
    whole = explorer("show", first["id"][:8], "--db", db)
    assert whole.exit_code == 0 and first["text"] in whole.stdout and first["sources"][0]["id"][:8] in whole.stdout

    assert json.loads(explorer("list", "--kind", "fusion", "--json", "--db", db).stdout) == []
    assert len(json.loads(explorer("list", "--limit", "1", "--json", "--db", db).stdout)) == 1


def test_an_unknown_dream_is_one_line_on_stderr(corpus_copy: Path, corpus_runtime: Runtime) -> None:
    with corpus_runtime.db.connect() as con:
        a_chunk = corpus.list_nodes(con)[0].id
    unknown = explorer("show", "ffff0000", "--db", str(corpus_copy))
    assert unknown.exit_code == 1
    assert unknown.stdout == "" and unknown.stderr.count("\n") == 1 and "no dream 'ffff0000'" in unknown.stderr
    assert "list dreams with: explorer dream list" in unknown.stderr
    chunk = explorer("show", a_chunk, "--db", str(corpus_copy))
    assert chunk.exit_code == 1 and "no dream" in chunk.stderr  # a node, but not a dream
    assert explorer("list", "--db", str(corpus_copy)).stdout.startswith("no dreams yet")


def test_every_kind_is_read_newest_first_with_its_sources(corpus_runtime: Runtime) -> None:
    with corpus_runtime.db.connect() as con:
        seed, neighbour, other = corpus.list_nodes(con)[:3]
    now = datetime.now(UTC)
    fused = Node(type="fused", text="Two fading memories, merged.", parent_ids=[seed.id, other.id], confidence=0.6)
    fused.created_at = now - timedelta(days=2)
    found = link(seed, neighbour, confidence=0.8, created_by=EXPLORATION, description="Both manage resources.")
    store(corpus_runtime, [fused], [found])

    dreams = dreaming.list_dreams(corpus_runtime)
    assert [(d.kind, d.id) for d in dreams] == [("exploration", found.id), ("fusion", fused.id)]
    discovered = dreams[0]
    assert (discovered.text, discovered.confidence) == ("Both manage resources.", 0.8)
    assert [s.id for s in discovered.sources] == [seed.id, neighbour.id] and " ↔ " in discovered.title
    assert [s.id for s in dreams[1].sources] == [seed.id, other.id]
    assert [d.id for d in dreaming.list_dreams(corpus_runtime, kind="fusion")] == [fused.id]
    assert [d.id for d in dreaming.list_dreams(corpus_runtime, limit=1, offset=1)] == [fused.id]
    assert dreaming.dream(corpus_runtime, found.id[:6]) == discovered
    with pytest.raises(dreaming.DreamNotFound):
        dreaming.dream(corpus_runtime, seed.id)


def test_the_store_names_exploration_as_exploration_does() -> None:
    assert dreaming_store.DISCOVERED_BY == EXPLORATION
