"""Wander's grounding rules: loci stand on stored nodes and are named after them, the ranking rewards evidence
of relatedness, the breaker catches short cycles, and crystals are few, grounded, unique and say what they connect.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest

from explorer.reading.ingest import ingest_paths
from explorer.records import Node
from explorer.records.wander import Adjacency, Locus, Residue, Session
from explorer.store import corpus as corpus_store
from explorer.store import events as events_store
from explorer.wander import adjacency, caches, selection, service
from explorer.wander.config import WanderTuning
from explorer.wander.crystal import (
    Evidence,
    KnownCrystals,
    bridge,
    crystal_allowed,
    crystallize,
    first_crystal,
)
from explorer.wander.evidence import known_crystals
from explorer.wander.guards import Spending
from explorer.wander.naming import locus_name
from explorer.wander.space import CorpusSpace, LociSpace

from .conftest import new_session

TUNING = WanderTuning()


# -- names ---------------------------------------------------------------------------


def test_loci_are_named_after_their_nodes() -> None:
    chunk = {
        "type": "raw_chunk",
        "title": ".plan",
        "text": '<operating system> On Unix systems, the ".plan" file in a home directory is displayed when the '
        "user is fingered. It is used for humour.",
    }
    assert locus_name(chunk) == '.plan: On Unix systems, the ".plan" file in a home directory is displayed …'
    repeated = {"type": "raw_chunk", "title": "1tbs", "text": "1TBS Allman style <programming> Rules for code."}
    assert locus_name(repeated) == "1tbs: Allman style Rules for code"
    insight = {"type": "entity_insight", "title": "tcp/ip", "entity": "TCP", "text": "First note on TCP: …"}
    assert locus_name(insight) == "TCP, in tcp/ip"
    synthesis = {"type": "synthesis", "title": "app", "text": "On note, the new passage echoes what is known: …"}
    assert locus_name(synthesis) == "app (synthesis)"
    cut = {
        "type": "raw_chunk",
        "title": "A book is the work of a mind,...",
        "text": "A book is the work of a mind, but paper is cheap.",
    }
    assert locus_name(cut) == "A book is the work of a mind,...: but paper is cheap"
    # a dictionary entry opens with its abbreviation or a sense number: the definition names it
    acap = {"type": "raw_chunk", "title": "acap", "text": "<protocol> (ACAP) A protocol which enhances IMAP."}
    assert locus_name(acap) == "acap: A protocol which enhances IMAP"
    senses = {"type": "raw_chunk", "title": "display", "text": "1. monitor. 2. A vector of pointers to records."}
    assert locus_name(senses) == "display: A vector of pointers to records"
    app = {"type": "raw_chunk", "title": "app", "text": "application (Or app) A complete, self-contained program."}
    assert locus_name(app).startswith("app: application")  # a title that opens a longer word stays in it
    dream = {"type": "rem_dream", "title": None, "text": "```python\nx = 1\n``` What do **caches** and memory share?"}
    assert locus_name(dream) == "What do caches and memory share?"
    for name in map(locus_name, (chunk, repeated, insight, synthesis, dream)):
        assert not any(stutter in name for stutter in ("seen as", "First note", "<", "```", "**"))


def test_a_walk_stands_only_on_stored_nodes_or_on_what_a_person_gave(corpus_runtime) -> None:
    rt = corpus_runtime
    s = new_session(rt)
    service.run(rt, s.id, 8)
    service.inject(rt, s.id, "tail call elimination")
    service.run(rt, s.id, 4)
    view = service.session_view(rt, s.id)
    loci = {locus.id: locus for locus in view.loci}
    visited = [loci[t.to_locus_id] for t in view.trace]
    assert all(locus.node_id or locus.strategy in ("seed", "injected") for locus in visited)
    assert sum(locus.strategy == "injected" for locus in visited) == 1
    with rt.db.connect() as con:
        from explorer.store.wander import node_summaries

        nodes = node_summaries(con, [locus.node_id for locus in view.loci if locus.node_id])
    assert all(locus.concept == locus_name(nodes[locus.node_id]) for locus in view.loci if locus.node_id)
    # and it never went straight back to where it had just been
    targets = [t.to_locus_id for t in view.trace]
    assert all(targets[i] != targets[i - 2] for i in range(2, len(targets)) if view.trace[i].strategy != "injected")


def test_a_seed_naming_a_note_starts_on_that_note(corpus_runtime) -> None:
    rt = corpus_runtime
    with rt.db.connect() as con:
        document = corpus_store.list_documents(con)[0]
        chunks = [
            n
            for n in corpus_store.list_nodes(con, with_vectors=True)
            if n.document_id == document.id and n.type == "raw_chunk"
        ]
    s = new_session(rt, seed_concept=f"  {document.title.upper()} ")
    (seed,) = service.session_view(rt, s.id).loci
    assert seed.source_type == "SEED" and seed.node_id in {c.id for c in chunks}
    node = next(c for c in chunks if c.id == seed.node_id)
    assert seed.domains == [node.domain] and np.allclose(s.seed_embedding, node.embedding, atol=1e-5)
    first = service.step(rt, s.id)
    assert first.from_locus.node_id == node.id and first.to_locus.node_id
    # a title the note is also known by (a duplicate read under it) starts there too
    with rt.db.transaction() as con:
        corpus_store.add_alias(con, document.id, "The Same Note, Read Again")
    (seed,) = service.session_view(rt, new_session(rt, seed_concept="the same note, read again").id).loci
    assert seed.node_id in {c.id for c in chunks}


def test_a_ping_pong_trips_the_breaker(mock_runtime) -> None:
    s = new_session(mock_runtime)
    steps = []
    for concept in ("tail call elimination", "the walrus operator") * 2:
        service.inject(mock_runtime, s.id, concept)
        steps.append(service.step(mock_runtime, s.id))
    assert [r.status for r in steps] == ["active", "active", "active", "paused"]
    assert steps[-1].status_reason == "circuit breaker: loop, the last 4 steps went round the same 2 loci 2 times"


# -- ranking -------------------------------------------------------------------------


def tiny_space(relations: list[tuple[str, str, str]], entities: list[str | None] | None = None) -> CorpusSpace:
    """Four one-chunk notes: here (a) and three others as close to it as each other, b and c in another
    domain, d in here's.
    """
    here = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    other = np.array([0.6, 0.8, 0.0], dtype=np.float32)
    return CorpusSpace.build(
        3,
        ["a", "b", "c", "d"],
        np.vstack([here, other, other, other]),
        ["os", "hardware", "hardware", "os"],
        np.full(4, 0.5),
        np.ones(4),
        types=["raw_chunk"] * 4,
        titles=["A", "B", "C", "D"],
        entities=entities,
        documents=["da", "db", "dc", "dd"],
        relations=relations,
    )


def candidates_in(corpus: CorpusSpace) -> tuple[list[Adjacency], adjacency.Surroundings]:
    here = Locus("s", "A", corpus.index.vector("a"), "ADJACENT", node_id="a", domains=["os"], visit_count=1)
    s = adjacency.Surroundings(here, corpus, LociSpace.build(3, [here]), np.zeros((0, 3), np.float32), TUNING)
    found = [s.from_node(corpus.row(i), "cross_domain" if i != "d" else "distance_band", "ADJACENT") for i in "bcd"]
    return found, s


def test_ranking_rewards_evidence_of_relatedness_not_distance() -> None:
    corpus = tiny_space([("a", "b", "MENTIONS"), ("c", "a", "DERIVES")], entities=[None, None, None, None])
    found, s = candidates_in(corpus)
    selection.score(found, s, Session(name="s", seed_concept="A"), {"os"}, np.zeros((0, 3), np.float32), TUNING)
    b, c, d = found
    assert {round(x.similarity, 4) for x in found} == {0.6}  # equally far: only the evidence tells them apart
    kin = 0.6 / (1 + TUNING.lexical_weight)  # the notes have no words: their kinship is their meaning alone
    assert b.relatedness == pytest.approx(kin + TUNING.r_linked)  # a note that names another is linked to it
    assert c.relatedness == pytest.approx(kin)  # provenance (DERIVES) claims nothing about relatedness
    assert b.score > c.score and b.bridge_potential > c.bridge_potential > d.bridge_potential
    # a bridge across domains needs evidence: over the line it stays, under it it goes
    line = b.relatedness - 0.01
    assert not selection.weak_bridge(b, ["os"], line) and selection.weak_bridge(c, ["os"], line)
    assert not selection.weak_bridge(d, ["os"], 1.0)  # a step inside the domain claims no bridge
    # with every bridge too weak, the walk stays home: the nearest notes of here's own domain
    assert [c.node_id for c in adjacency.nearest_at_home(s, set())] == ["d"]
    assert adjacency.nearest_at_home(s, {int(corpus.sources[corpus.row("d")])}) == []
    # the graph's claims are candidates of their own: b comes first among the bridges, saying why
    bridges = adjacency.cross_domain(s)
    assert bridges[0].node_id == "b" and "MENTIONS" in (bridges[0].note or "")


def test_a_dream_spans_its_parents_domains_and_stepping_onto_it_is_a_bridge() -> None:
    """A dream has no domain or document of its own: it belongs to the domains of the notes it binds, so a walk
    cannot cross from one domain to another through it unseen (when dreams had domains of their own, 46 of 52 such steps
    joined unrelated notes on the bridges bench).
    """
    here, other = np.array([1.0, 0.0, 0.0], np.float32), np.array([0.6, 0.8, 0.0], np.float32)
    apart, near = np.array([0.0, 0.0, 1.0], np.float32), np.array([0.8, 0.6, 0.0], np.float32)
    corpus = CorpusSpace.build(
        3,
        ["a", "b", "c", "dream", "dream of dreams", "orphan"],
        np.vstack([here, apart, other, near, other, other]),
        ["os", "hardware", "os", None, None, None],
        np.full(6, 0.5),
        np.ones(6),
        types=["raw_chunk"] * 3 + ["rem_dream"] * 3,
        documents=["da", "db", "dc", None, None, None],
        parents=[None, None, None, ["b", "c", "gone"], ["dream", "a"], ["gone"]],
    )
    assert corpus.domains(corpus.row("dream")) == ["hardware", "os"]  # its parents', in their order
    assert corpus.domains(corpus.row("dream of dreams")) == ["hardware", "os"]  # through the dream it binds
    assert corpus.domains(corpus.row("orphan")) == [] and corpus.domains(corpus.row("a")) == ["os"]
    here_locus = Locus("s", "A", here, "ADJACENT", node_id="a", domains=["os"], visit_count=1)
    s = adjacency.Surroundings(here_locus, corpus, LociSpace.build(3, [here_locus]), np.zeros((0, 3)), TUNING)
    onto = s.from_node(corpus.row("dream"), "distance_band", "ADJACENT")
    assert onto.domains == ["hardware", "os"]
    # it shares here's domain, yet stepping onto it claims a link to its hardware parent: weak, it is dropped
    assert selection.weak_bridge(onto, ["os"], line=1.0) and not selection.weak_bridge(onto, ["os"], line=0.0)
    # and off it: everything but a locus of the same domains is a bridge
    assert selection.weak_bridge(s.from_node(corpus.row("c"), "distance_band", "ADJACENT"), onto.domains, 1.0)
    assert not selection.weak_bridge(
        s.from_node(corpus.row("dream of dreams"), "distance_band", "ADJACENT"), onto.domains, 1.0
    )
    # it is scored as the bridge it is, not as a step at home, and on the evidence for its weakest parent: close
    # to here as its own words are, it binds b, which has nothing to do with here
    home = s.from_node(corpus.row("c"), "distance_band", "ADJACENT")
    selection.score([onto, home], s, Session(name="s", seed_concept="A"), {"os"}, np.zeros((0, 3)), TUNING)
    assert selection.pair_relatedness(corpus, "a", "dream", TUNING) > 0.3
    assert onto.relatedness == pytest.approx(selection.pair_relatedness(corpus, "a", "b", TUNING)) == 0.0
    assert onto.bridge_potential == pytest.approx(onto.relatedness)  # hardware is new to the walk
    assert home.bridge_potential == pytest.approx(selection.SAME_DOMAIN_BRIDGE * home.relatedness)
    # off the dream, each parent must bear on where the walk goes: c is far from b
    off = adjacency.Surroundings(
        replace(here_locus, node_id="dream", domains=onto.domains), corpus, s.loci, np.zeros((0, 3)), TUNING
    )
    onward = off.from_node(corpus.row("c"), "distance_band", "ADJACENT")
    selection.relatedness([onward], off, TUNING)
    assert onward.relatedness == pytest.approx(selection.pair_relatedness(corpus, "b", "c", TUNING))


def test_the_store_gives_a_dream_its_parents_domains(corpus_runtime) -> None:
    rt = corpus_runtime
    with rt.db.transaction() as con:
        space = caches.corpus_space(rt, con)
        chunks = [n for n in corpus_store.list_nodes(con, with_vectors=True) if n.type == "raw_chunk"]
        rows = {n.id: row for n in chunks if (row := space.row(n.id)) is not None}  # code blocks are no place to go
        first_of = {d: n for n in reversed(chunks) if n.id in rows and (d := space.domain(rows[n.id]))}
        a, b = sorted(first_of.items())[:2]  # the small corpus holds notes of several domains
        dream = Node(type="rem_dream", text="What binds them?", embedding=a[1].embedding, parent_ids=[a[1].id, b[1].id])
        corpus_store.insert_nodes(con, [dream])
    with rt.db.connect() as con:
        space = caches.corpus_space(rt, con)  # rebuilt: the store changed
    assert space.domains(space.row(dream.id)) == [a[0], b[0]]


def test_shared_words_and_entities_count_as_evidence() -> None:
    plain = tiny_space([], entities=[None, None, None, None])
    named = tiny_space([], entities=["unix", "unix", None, None])
    meaning = 0.6 / (1 + TUNING.lexical_weight)
    assert selection.pair_relatedness(plain, "a", "b", TUNING) == pytest.approx(meaning)
    assert selection.pair_relatedness(named, "a", "b", TUNING) == pytest.approx(
        meaning + TUNING.r_entities / TUNING.entities_for_full
    )
    here, other = np.array([1.0, 0.0], np.float32), np.array([0.6, 0.8], np.float32)
    worded = CorpusSpace.build(
        2,
        ["a", "b", "c"],
        np.vstack([here, other, other]),
        ["os", "hardware", "hardware"],
        np.full(3, 0.5),
        np.ones(3),
        texts=["the finger daemon answers", "finger a user to see the plan", "a bus carries data"],
        types=["raw_chunk"] * 3,
        titles=["finger", "plan", "bus"],
        documents=["da", "db", "dc"],
    )
    # as close in meaning, but b uses a's distinctive word: it is the more related
    assert selection.pair_relatedness(worded, "a", "b", TUNING) > selection.pair_relatedness(worded, "a", "c", TUNING)


# -- crystals --------------------------------------------------------------------------


def test_crystals_come_at_most_once_every_so_many_steps() -> None:
    every = TUNING.crystal_every
    assert [n for n in range(1, 50) if crystal_allowed(n, [], TUNING)][0] == every
    assert not crystal_allowed(every + 3, [every], TUNING) and crystal_allowed(2 * every, [every], TUNING)
    assert not crystal_allowed(100, [98], TUNING)
    # however long the drought, never more than one per `every` steps over the walk
    assert not crystal_allowed(3 * every, [every, 2 * every, 2 * every + 1], TUNING)


def locus(node_id: str | None, domain: str) -> Locus:
    return Locus("s", f"note {node_id}", None, "ADJACENT", node_id=node_id, domains=[domain])


def evidence_of(encounters: list[tuple[Locus, Locus]], documents: dict[str, str]) -> Evidence:
    residues = [
        Residue("s", "t", to_locus_id=b.id, from_locus_id=a.id, connection=f"{a.concept} meets {b.concept}")
        for a, b in encounters
    ]
    loci = {x.id: x for pair in encounters for x in pair}
    nodes = {x.node_id: {"domain": x.domains[0], "text": x.concept} for x in loci.values() if x.node_id}
    chunks = {
        n: [{"id": f"chunk-{n}", "document_id": documents[n], "title": n.upper(), "text": f"text of {n}"}]
        for n in nodes
    }
    return Evidence(residues, loci, nodes, chunks)


def test_a_crystal_bridges_two_sources_and_is_refused_when_it_cannot(runtime) -> None:
    a, b, c, d = locus("a", "os"), locus("b", "hardware"), locus("c", "os"), locus("d", "os")
    seed = locus(None, "os")
    strength = {frozenset("ab"): 0.7, frozenset("ac"): 0.9, frozenset("cd"): 0.95}

    def related(x: str, y: str) -> float:
        return strength.get(frozenset((x, y)), 0.0)

    ev = evidence_of([(seed, a), (a, b), (a, c), (c, d)], {"a": "d1", "b": "d2", "c": "d3", "d": "d3"})
    chosen = bridge(ev, related, 0.5)
    # across domains first (a-b), though a-c is more related; c-d share a document; the seed is no source
    assert chosen is not None and {e.node_id for e in chosen.ends} == {"a", "b"}
    assert bridge(ev, related, 0.8).ends[1].node_id == "c"  # a weak bridge gives way to a strong pair within
    assert bridge(ev, related, 0.8, across=True).ends[1].node_id == "b"  # unless it must cross domains
    assert bridge(evidence_of([(a, c)], {"a": "d1", "c": "d3"}), related, across=True) is None
    session = Session(name="s", seed_concept="x")
    spending = Spending(runtime.gateway, session, TUNING)

    def attempt(evidence: Evidence, known: KnownCrystals, line: float = 0.5, resonance=None):
        return crystallize(
            resonance or replace_resonance(),
            a,
            evidence,
            session_id=session.id,
            spending=spending,
            embed=runtime.embedder.embed,
            existing=known,
            related=related,
            tuning=TUNING,
            min_relatedness=line,
        )

    empty = KnownCrystals(np.zeros((0, 0), np.float32))
    alone = evidence_of([(seed, c), (c, d)], {"c": "d3", "d": "d3"})
    assert attempt(alone, empty).reason.startswith("ungrounded")
    none = np.zeros((0, 0), np.float32)
    crossing = evidence_of([(seed, a), (a, b)], {"a": "d1", "b": "d2"})
    assert attempt(crossing, KnownCrystals(none, frozenset({frozenset({"d1", "d2"})}))).reason == (
        "near-duplicate: a crystal already connects note a (os) and note b (hardware)"
    )
    assert attempt(crossing, KnownCrystals(none, linked=frozenset({frozenset({"d1", "d2"})}))).reason == (
        "known link: the notes already link note a (os) and note b (hardware)"
    )
    # a pair a crystal or a note already connects gives way to the resonance's next encounter
    avoided = bridge(ev, related, 0.5, avoid=frozenset({frozenset({"d1", "d2"})}))
    assert avoided is not None and {e.node_id for e in avoided.ends} == {"a", "c"}
    assert attempt(evidence_of([(a, b)], {"a": "d1", "b": "d2"}), empty, 0.75).reason.startswith("weak bridge")
    assert spending.usage.tokens == 0 and not spending.models  # refused before any model was asked
    formed = attempt(ev, empty)
    assert formed.crystal is not None, formed.reason
    crystal = formed.crystal
    assert [e["node_id"] for e in crystal.connects] == ["a", "b"]
    assert {e["document_id"] for e in crystal.connects} == {"d1", "d2"}
    chunks = [e for e in crystal.supporting_evidence if e["type"] == "node"]
    assert {e["id"] for e in chunks} == {"chunk-a", "chunk-b"}  # the evidence is the two sources, nothing else
    again = attempt(ev, KnownCrystals(crystal.embedding[None, :]))
    assert again.crystal is None and again.reason.startswith("near-duplicate of an existing crystal")
    # a resonance the rules decline unasked gives way to the next; one a model answered ends the step's tries
    known = KnownCrystals(none, linked=frozenset({frozenset({"d1", "d2"})}))
    assert again.asked_model and not attempt(crossing, known).asked_model
    stale, fresh = replace_resonance(), replace_resonance()
    evidence_for = {stale.id: crossing, fresh.id: evidence_of([(c, b)], {"c": "d3", "b": "d2"})}
    strength[frozenset("bc")] = 0.8
    tried = []

    def first(resonance):
        tried.append(resonance.id)
        return attempt(evidence_for[resonance.id], known, resonance=resonance)

    found = first_crystal([stale, fresh], first)
    assert tried == [stale.id, fresh.id] and found is not None and found.crystal is not None
    assert [e["node_id"] for e in found.crystal.connects] == ["c", "b"]
    assert [name for name, _ in found.events][0] == "wander.crystal.rejected"  # the stale one's refusal is kept
    assert first_crystal([], first) is None


def replace_resonance():
    from explorer.records.wander import Resonance

    return Resonance(["notes"], None, status="confirmed", occurrences=3)


def test_a_walk_forms_few_grounded_crystals_that_name_what_they_connect(corpus_runtime) -> None:
    rt = corpus_runtime
    tuning = replace(  # the hashing embedder's themes match little: let resonances form and crystallize sooner
        TUNING,
        crystal_every=4,
        strong_bridges_per_note=1e9,
        confirm_occurrences=2,
        confirm_strength=1.5,
        crystal_new_support=1,
        resonance_match=0.3,
        crystal_min_interest=0.0,
    )
    s = new_session(rt, random_seed=5)
    service.run(rt, s.id, 24, tuning=tuning)
    crystals = service.list_crystals(rt, session_id=s.id)
    with rt.db.connect() as con:
        steps = [
            e.payload["step_number"]
            for e in events_store.list_events(con, session_id=s.id, subject_prefix="wander.step.completed")
            if e.payload.get("crystal_id")
        ]
    assert crystals, "24 steps formed no crystal"
    assert len(steps) == len(crystals) <= 24 // tuning.crystal_every
    assert all(later - earlier >= tuning.crystal_every for earlier, later in itertools.pairwise(steps))
    pairs = set()
    for crystal in crystals:
        assert len(crystal.connects) == 2 and all(e["name"] and e["node_id"] for e in crystal.connects)
        documents = frozenset(e["document_id"] for e in crystal.connects)
        assert len(documents) == 2 and documents not in pairs
        pairs.add(documents)
        chunks = service.crystal_evidence(rt, crystal.id).chunks
        assert {c.document_id for c in chunks} == set(documents) and all(c.type == "raw_chunk" for c in chunks)
    vectors = np.vstack([c.embedding for c in service.session_view(rt, s.id).crystals])
    sims = np.triu(vectors @ vectors.T, 1)
    assert (sims < TUNING.duplicate_crystal).all()


def test_the_pairs_the_notes_link_by_name_are_known_to_crystals(runtime, tmp_path) -> None:
    records = [
        {"title": "Kernel", "text": "The kernel schedules every process and hands out memory to each of them."},
        {"title": "Scheduler", "text": "A scheduler inside the kernel picks which process runs next on a CPU."},
        {"title": "Lawn", "text": "Grass grows slowly in spring and needs water through the dry summer."},
    ]
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records))
    ingest_paths(runtime, [path])
    with runtime.db.connect() as con:
        document = {d.title: d.id for d in corpus_store.list_documents(con)}
        known = known_crystals(con)
    assert known.linked == {frozenset((document["Kernel"], document["Scheduler"]))}


def test_a_walk_goes_somewhere_new_while_it_can(corpus_runtime) -> None:
    """A walk does not step back onto a locus it stood on while somewhere new is in reach: when every way on
    leads back, it jumps to a branch it saw and never took.
    """
    s = new_session(corpus_runtime)
    service.run(corpus_runtime, s.id, 40)
    trace = sorted(service.session_view(corpus_runtime, s.id).trace, key=lambda t: t.step_number)
    targets = [t.to_locus_id for t in trace]
    again = [t for i, t in enumerate(trace) if t.to_locus_id in targets[:i]]
    assert len(trace) == 40 and not again, [t.selection_reason for t in again]


def test_a_strong_bridge_is_as_rare_per_note_in_a_small_corpus_as_in_a_large_one() -> None:
    rng = np.random.default_rng(7)

    def strong_per_note(n: int) -> float:
        vectors = rng.normal(size=(n, 16)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        domains = [f"d{i % 5}" for i in range(n)]
        ids = [f"n{i}" for i in range(n)]
        space = CorpusSpace.build(
            16, ids, vectors, domains, np.full(n, 0.5), np.ones(n), types=["raw_chunk"] * n, titles=ids, documents=ids
        )
        line = space.bridge_line(TUNING.strong_bridges_per_note, 0.0, samples=200_000)
        a, b = np.triu_indices(n, 1)
        across = np.array([domains[i] != domains[j] for i, j in zip(a, b, strict=True)])
        kin = space.kinship(a[across], b[across], 0.0)
        return float(np.sum(kin >= line)) / n

    small, large = strong_per_note(60), strong_per_note(300)
    assert 0.2 < small < 0.8 and 0.2 < large < 0.8, (small, large)  # about 0.42 a note in both
