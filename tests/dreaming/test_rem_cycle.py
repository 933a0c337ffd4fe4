"""The REM cycle: the current-year rule, the three prompts, parents and generation, dropped dreams."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.dreaming.rem_cycle import RemConfig, latest_year, rem_cycle
from explorer.dreaming.service import DreamingError, recent_dreams, run_rem
from explorer.prompts import split_passages
from explorer.store import corpus
from explorer.store import events as events_store

from .conftest import memory, store

PASSAGES = {
    2005: [
        "Python 2.5 adds the with statement for managing resources such as files and locks.",
        "Conditional expressions arrive in Python 2.5: x if condition else y.",
    ],
    2010: [
        "Python 2.7 backports set literals and dictionary comprehensions from the 3.x line.",
        "The argparse module replaces optparse for parsing command-line options.",
    ],
    2015: [
        "Python 3.5 introduces async and await for writing coroutines.",
        "Type hints arrive in Python 3.5 with the typing module.",
    ],
}


def corpus_nodes(embedder, **fields):
    nodes = [memory(text, year=year, domain="python", **fields) for year, texts in PASSAGES.items() for text in texts]
    for node, vector in zip(nodes, embedder.embed([n.text for n in nodes]), strict=True):
        node.embedding = vector
    return nodes


def echo_script(dream_text=None):
    """Answers that show what each prompt was given: the dream is the synthesis unless told otherwise."""

    def script(prompt, fields):
        if prompt.kind == "rem_question":
            return "What binds " + " / ".join(p[:20] for p in split_passages(fields["passages"])) + "?"
        if prompt.kind == "rem_synthesis":
            return "Synthesis of: " + fields["question"]
        return dream_text if dream_text is not None else "Dream: " + fields["synthesis"]

    return script


def test_latest_year() -> None:
    assert latest_year([memory(year=1999), memory(), memory(year=2004)]) == 2004
    assert latest_year([memory()]) is None


def test_each_dream_asks_question_synthesis_and_relation(scripted, embedder) -> None:
    nodes = corpus_nodes(embedder, generation=0)
    nodes[0].generation = 4  # a 2005 node deep in the ladder
    gateway = scripted(echo_script())
    result = rem_cycle(
        nodes,
        gateway,
        embedder,
        RemConfig(dreams=4, related=2, neighbours=2),
        current_year=2005,
        rng=np.random.default_rng(1),
    )
    assert gateway.kinds() == ["rem_question", "rem_synthesis", "dream_relation"] * 4
    texts = {n.id: n.text for n in nodes}
    assert len(result.nodes) == 4  # a dream each, or the loop below checks fewer than were asked
    for number, dream in enumerate(result.nodes):
        question_fields, synthesis_fields, relation_fields = (f for _, f in gateway.calls[3 * number : 3 * number + 3])
        parents = [texts[p] for p in dream.parent_ids]
        assert texts[dream.parent_ids[0]] in PASSAGES[2005] and len(set(dream.parent_ids)) == 3
        assert split_passages(question_fields["passages"]) == parents
        assert "(2005)" in question_fields["passages"]  # passages carry their year
        related = split_passages(synthesis_fields["related"])
        assert len(related) == 2 and not set(related) & set(parents)  # nearest the question, parents aside
        assert synthesis_fields["question"] == dream.metadata["question"]
        assert (
            relation_fields["synthesis"] == dream.metadata["synthesis"]
            and len(split_passages(relation_fields["related"])) == 2
        )
        assert dream.text == "Dream: " + dream.metadata["synthesis"]
        assert (dream.type, dream.year, dream.memory_type, dream.learned_from) == ("rem_dream", 2005, "derived", "rem")
        expected = 1 + max(4 if p == nodes[0].id else 0 for p in dream.parent_ids)
        assert dream.generation == expected
    derives = [r for r in result.relations if r.type == "DERIVES"]
    assert sorted((r.source_id, r.target_id) for r in derives) == sorted(
        (d.id, p) for d in result.nodes for p in d.parent_ids
    )


def test_a_prompt_quotes_only_the_related_passages_that_fit_its_words(scripted, embedder) -> None:
    """Eight passages of real documentation overran a 4,096-token context: the triad is quoted whole, and of the
    related and neighbouring passages only as many as fit ``prompt_words`` with it, nearest first; the dream's
    provenance names only those quoted.
    """
    nodes = corpus_nodes(embedder)
    triad_words = 3 * max(len(text.split()) for texts in PASSAGES.values() for text in texts)
    echo = echo_script()

    def script(prompt, fields):  # a synthesis of 40 words: room for one neighbour of 12-14 words beside it
        return "Synthesis: " + "word " * 39 if prompt.kind == "rem_synthesis" else echo(prompt, fields)

    gateway = scripted(script)
    config = RemConfig(dreams=2, related=3, neighbours=3, prompt_words=triad_words + 14)
    result = rem_cycle(nodes, gateway, embedder, config, current_year=2015, rng=np.random.default_rng(1))
    # the scripted syntheses are the same words, so the second dream is a near-duplicate of the first and dropped:
    # the loop checks the first dream's prompts, and must check at least those
    assert len(result.nodes) == 1 and result.duplicates == 1
    for number, dream in enumerate(result.nodes):
        synthesis_fields, relation_fields = (f for _, f in gateway.calls[3 * number + 1 : 3 * number + 3])
        quoted = split_passages(synthesis_fields["passages"]) + split_passages(synthesis_fields["related"])
        related = split_passages(synthesis_fields["related"])
        assert 1 <= len(related) < 3 and sum(len(text.split()) for text in quoted) <= config.prompt_words
        assert len(dream.metadata["related_ids"]) == len(related)
        neighbours = split_passages(relation_fields["related"])
        words = len(relation_fields["synthesis"].split()) + sum(len(text.split()) for text in neighbours)
        assert len(neighbours) == 1 and words <= config.prompt_words


def test_dreams_judged_empty_are_dropped(scripted, embedder) -> None:
    result = rem_cycle(
        corpus_nodes(embedder),
        scripted(echo_script("NOTHING")),
        embedder,
        RemConfig(dreams=3),
        current_year=2015,
        rng=np.random.default_rng(0),
    )
    assert (len(result.nodes), result.dropped, result.duplicates, result.failures) == (0, 3, 0, 0)
    assert result.relations == []


def test_near_duplicates_are_dropped_including_of_this_cycles_dreams(scripted, embedder) -> None:
    nodes = corpus_nodes(embedder)
    same = "Resource management and coroutines both tame the lifetimes of things in Python."
    result = rem_cycle(
        nodes,
        scripted(echo_script(same)),
        embedder,
        RemConfig(dreams=3),
        current_year=2015,
        rng=np.random.default_rng(0),
    )
    assert (len(result.nodes), result.dropped, result.duplicates) == (1, 2, 2)
    known = rem_cycle(
        nodes,
        scripted(echo_script(PASSAGES[2010][1])),
        embedder,
        RemConfig(dreams=2),
        current_year=2015,
        rng=np.random.default_rng(0),
    )
    assert (len(known.nodes), known.duplicates) == (0, 2)  # a dream that restates a known node adds nothing


def test_a_failed_dream_is_counted_and_the_cycle_goes_on(scripted, embedder) -> None:
    asked = []

    def script(prompt, fields):
        if prompt.kind == "rem_synthesis":
            asked.append(1)
            if len(asked) == 2:
                raise RuntimeError("rate limited")
        return echo_script()(prompt, fields)

    result = rem_cycle(
        corpus_nodes(embedder),
        scripted(script),
        embedder,
        RemConfig(dreams=3),
        current_year=2010,
        rng=np.random.default_rng(0),
    )
    assert (len(result.nodes), result.failures) == (2, 1) and "rate limited" in result.errors[0]
    unparsed = rem_cycle(
        corpus_nodes(embedder),
        scripted(lambda p, f: "?"),
        embedder,
        RemConfig(dreams=2),
        current_year=2010,
        rng=np.random.default_rng(0),
    )
    assert (len(unparsed.nodes), unparsed.failures, unparsed.usage.calls) == (0, 2, 2)  # stops at the question


def test_same_seed_same_dreams(scripted, embedder) -> None:
    nodes = corpus_nodes(embedder)
    runs = [
        [
            d.parent_ids
            for d in rem_cycle(
                nodes,
                scripted(echo_script()),
                embedder,
                RemConfig(dreams=3),
                current_year=2010,
                rng=np.random.default_rng(9),
            ).nodes
        ]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


# -- the service, on a real store, offline -----------------------------------------------


def test_run_rem_stores_dreams_with_question_parents_and_generation(runtime) -> None:
    nodes = corpus_nodes(runtime.embedder)
    store(runtime, nodes)
    report = run_rem(runtime, dreams=3, seed=4)
    assert report.current_year == 2015 and report.seed == 4  # the latest year present
    assert report.dreams_stored + report.dreams_dropped + report.failures == 3 and report.failures == 0
    assert report.dreams_stored >= 1 and report.model_calls == 9
    with runtime.db.connect() as con:
        dreams = corpus.list_nodes(con, types=["rem_dream"])
        (event,) = events_store.list_events(con, subject_prefix="dream.rem")
    assert len(dreams) == report.dreams_stored
    by_id = {n.id: n for n in nodes}
    for dream in dreams:
        # 2015 holds two memories, fewer than the three dreams: the period widened to 2010
        assert by_id[dream.parent_ids[0]].year in (2010, 2015) and dream.generation == 1
        assert len(set(dream.parent_ids)) == 3
        assert dream.metadata["question"].endswith("?") and dream.metadata["model"] == "offline/extractive"
    assert event.payload["seed"] == 4 and event.payload["dreams_stored"] == report.dreams_stored
    views = recent_dreams(runtime)
    assert {v.dream.id for v in views} == {d.id for d in dreams}
    assert all([s.id for s in v.sources] == v.dream.parent_ids and v.question for v in views)


def test_run_rem_honours_the_current_year_and_explains_a_missing_one(runtime) -> None:
    store(runtime, corpus_nodes(runtime.embedder))
    report = run_rem(runtime, dreams=1, current_year=2005, seed=1)
    assert report.current_year == 2005
    with pytest.raises(DreamingError, match=r"no nodes from 1999 .* 2005, 2010, 2015"):
        run_rem(runtime, dreams=1, current_year=1999)
    with pytest.raises(DreamingError, match="at least 1"):
        run_rem(runtime, dreams=0)


def test_run_rem_on_an_undated_corpus_dreams_over_any_three(runtime) -> None:
    store(runtime, [memory(t) for texts in PASSAGES.values() for t in texts])
    report = run_rem(runtime, dreams=1, seed=2)
    assert report.current_year is None and report.dreams_stored + report.dreams_dropped == 1


def test_run_rem_needs_three_nodes(runtime) -> None:
    with pytest.raises(DreamingError, match="holds 0 node"):
        run_rem(runtime)
    store(runtime, [memory("one", year=2000), memory("two", year=2000)])
    with pytest.raises(DreamingError, match="at least 3"):
        run_rem(runtime)


def test_a_night_on_an_empty_store_is_refused_before_it_begins(runtime) -> None:
    from explorer.dreaming.service import run_cycle

    with pytest.raises(DreamingError, match="holds 0 node"):
        run_cycle(runtime, dreams=1)
    with runtime.db.connect() as con:
        assert events_store.list_events(con, subject_prefix="dream.") == []  # neither exploration nor fusion ran


def test_a_base_mostly_new_to_its_titles_dreams_on_its_stored_vectors(runtime, tmp_path, monkeypatch) -> None:
    """Affinity embeds memories headed by their titles only while few of those texts are new to the cache: a fresh
    base of thousands would wait minutes for its first dream.
    """
    from explorer.dreaming import service
    from explorer.reading.ingest import ingest_paths

    for number, (year, texts) in enumerate(PASSAGES.items()):
        (tmp_path / f"note {number}.md").write_text(f"---\nyear: {year}\n---\n" + "\n\n".join(texts) + "\n")
    ingest_paths(runtime, [tmp_path])
    embedded: list[str] = []
    embed = runtime.embedder.embed

    def spy(texts):
        embedded.extend(texts)
        return embed(texts)

    monkeypatch.setattr(runtime.embedder, "embed", spy)
    monkeypatch.setattr(service, "TITLED_AT_ONCE", 0)
    assert run_rem(runtime, dreams=1, seed=1).dreams_requested == 1
    assert not any(text.startswith("note ") for text in embedded)  # no memory embedded under its title
    monkeypatch.setattr(service, "TITLED_AT_ONCE", 256)
    run_rem(runtime, dreams=1, seed=1)
    assert any(text.startswith("note 0: ") for text in embedded)
