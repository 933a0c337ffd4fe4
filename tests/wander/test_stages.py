"""Each stage of the step on its own, over real embeddings and a real store."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from explorer.prompts.wander import (
    ANALOGY,
    DWELLING,
    DWELLING_PROMPT,
    Analogy,
    parse_crystal,
    parse_dwelling,
    parse_validation,
)
from explorer.records import Relation, new_id
from explorer.records.wander import (
    REVIEW_OUTCOMES,
    Adjacency,
    Crystal,
    FenceAnchor,
    Locus,
    Residue,
    ReviewState,
    Session,
    utcnow,
)
from explorer.store.corpus import insert_relations
from explorer.store.wander import updates_of
from explorer.wander import adjacency, memory, scope, selection
from explorer.wander.caches import corpus_space
from explorer.wander.config import WanderTuning
from explorer.wander.dwell import themes_vector
from explorer.wander.errors import InvalidRequest, SessionStateError
from explorer.wander.guards import (
    TRANSITIONS,
    Spending,
    checkpoint_due,
    circuit_reason,
    require_review,
    require_transition,
)
from explorer.wander.resonance import check_resonances
from explorer.wander.space import LociSpace

from .conftest import MOCK_ANSWER, SEED, mock_json

TUNING = WanderTuning()


def unit(runtime, text: str) -> np.ndarray:
    return runtime.embedder.embed([text])[0]


# -- prompts -------------------------------------------------------------------


def test_dwelling_prompt_is_the_designs_and_describes_its_json_without_values_to_copy() -> None:
    assert DWELLING.fields == {
        "current_concept",
        "current_domains",
        "current_abstraction",
        "next_concept",
        "next_domains",
        "next_abstraction",
        "recent_themes",
        "active_resonances",
    }
    rendered = DWELLING.render({name: "{" + name + "}" for name in DWELLING.fields})
    assert rendered == DWELLING_PROMPT
    assert rendered.startswith(
        "You are dwelling at a point in idea space, reflecting on an encounter between two concepts."
    )
    assert '"..."' not in rendered and "0.X" not in rendered and rendered.endswith("are your two ratings.")
    assert "5. POSSIBILITY: What new concept or insight might emerge from this encounter?" in rendered


def test_parsers_return_typed_results_or_none() -> None:
    dwelling = parse_dwelling("Here you go:\n```json\n" + mock_json(interestingness=1.7, themes="a, b, a") + "\n```")
    assert dwelling.interestingness == 1.0 and dwelling.themes == ("a", "b") and dwelling.connection.startswith("Both")
    assert parse_dwelling("not json") is None
    assert parse_dwelling(mock_json(themes=[])) is None
    assert parse_dwelling(mock_json(connection="...", tension="…", bridge=" . ")) is None  # dots copied: nothing
    assert parse_dwelling(json.dumps({"themes": ["x"], "interestingness": 0.5, "actionability": 0.1})) is None
    assert parse_crystal(mock_json()).domains == ("python", "psychology")
    assert parse_crystal(json.dumps({"insight": "short"})) is None
    assert parse_validation(mock_json()).valid is True
    assert parse_validation(json.dumps({"valid": "yes"})) is None
    assert ANALOGY.parse(mock_json())[0].domain == "psychology"
    assert ANALOGY.parse('{"analogies": []}') == [] and ANALOGY.parse("nothing") is None


def test_offline_dwelling_answers_from_its_input(runtime) -> None:
    here = "Reference counting frees an object as soon as nothing refers to it. Cycles need the garbage collector."
    there = "The gc module finds unreachable reference cycles and collects them. It runs in generations."
    fields = {
        "current_concept": here,
        "current_domains": "python",
        "current_abstraction": "0.3",
        "next_concept": there,
        "next_domains": "python",
        "next_abstraction": "0.3",
        "recent_themes": "(none yet)",
        "active_resonances": "(none yet)",
    }
    first = runtime.gateway.ask(DWELLING, fields)
    again = runtime.gateway.ask(DWELLING, fields)
    assert first.ok and first.tier == "offline" and first.text == again.text
    text = (here + " " + there).lower()
    assert all(theme.lower() in text for theme in first.value.themes)
    assert 0 <= first.value.interestingness <= 1 and 0 <= first.value.actionability <= 1


# -- scope ---------------------------------------------------------------------


def session_at(runtime, seed: str = SEED, **fields) -> Session:
    return Session(name="s", seed_concept=seed, seed_embedding=unit(runtime, seed), **fields)


def candidate(runtime, text: str, domains: list[str]) -> Adjacency:
    return Adjacency(
        concept=text, embedding=unit(runtime, text), strategy="distance_band", source_type="ADJACENT", domains=domains
    )


@pytest.mark.minilm
def test_scope_domains_fence_and_drift(runtime) -> None:
    near = candidate(runtime, "the cycle-detecting garbage collector frees memory", ["Python"])
    far = candidate(runtime, "a recipe for lemon cake with buttercream", ["food"])
    session = session_at(runtime)
    assert scope.rejection(near, session, TUNING) is None
    assert scope.rejection(far, session, TUNING) == "past the drift limit"
    assert scope.rejection(near, replace(session, forbidden_domains=["python"]), TUNING) == "forbidden domain"
    assert scope.rejection(near, replace(session, allowed_domains=["art"]), TUNING) == "outside the allowed domains"
    fenced = replace(session, fence=[FenceAnchor("garbage collector", "exclude", unit(runtime, "garbage collector"))])
    assert scope.rejection(near, fenced, TUNING).startswith("fenced out near")
    assert scope.outside(near.embedding, fenced, TUNING) and not scope.outside(near.embedding, session, TUNING)
    widened = replace(session, fence=[FenceAnchor("baking cakes", "include", unit(runtime, "baking a lemon cake"))])
    assert scope.rejection(far, widened, TUNING) is None
    assert scope.drift(far.embedding, widened) < scope.drift(far.embedding, session)
    tight = replace(session, max_drift_distance=scope.drift(near.embedding, session) + 0.01)
    assert (
        scope.approaching(near.embedding, tight, TUNING) and scope.approaching(near.embedding, session, TUNING) is None
    )


# -- adjacencies, score, choice -----------------------------------------------------


@pytest.fixture
def surroundings(corpus_runtime):
    with corpus_runtime.db.connect() as con:
        corpus = corpus_space(corpus_runtime, con)
    # stand where a walk from the seed would: at the corpus node nearest to it
    ((node_id, _),) = corpus.index.top_k(unit(corpus_runtime, SEED), 1)
    here = Locus(
        session_id="s",
        concept="(node)",
        embedding=corpus.index.vector(node_id),
        source_type="ADJACENT",
        node_id=node_id,
        domains=[corpus.domain(corpus.row(node_id))],
        visit_count=1,
    )
    loci = LociSpace.build(corpus_runtime.db.embedding_dim, [here])
    return adjacency.Surroundings(here, corpus, loci, np.zeros((0, corpus.index.dim), np.float32), TUNING)


def test_four_strategies_on_the_corpus(surroundings, corpus_runtime) -> None:
    s = surroundings
    band = adjacency.distance_band(s, np.random.default_rng(1))
    assert len(band) == TUNING.band_samples
    assert all(TUNING.band_low <= c.distance <= TUNING.band_high and c.node_id for c in band)
    assert s.here.node_id not in {c.node_id for c in band}
    assert [c.node_id for c in band] == [c.node_id for c in adjacency.distance_band(s, np.random.default_rng(1))]
    # far from everything, the band is empty: the items nearest to it stand in
    lonely = replace(s.here, node_id=None, embedding=unit(corpus_runtime, "quantum chromodynamics of gluon plasma"))
    stand_ins = adjacency.distance_band(
        adjacency.Surroundings(lonely, s.corpus, s.loci, s.path, TUNING), np.random.default_rng(1)
    )
    assert stand_ins and all(c.note == "nearest to the distance band" for c in stand_ins)
    bridges = adjacency.cross_domain(s)
    assert len(bridges) == TUNING.bridge_candidates
    assert len({c.domains[0] for c in bridges}) == len(bridges) and all(c.domains[0] != "python" for c in bridges)
    assert all(c.source_type == "BRIDGED" for c in bridges)
    # (what was derived from here's own note is no candidate, and near here, as the hashing embedder sees it, the
    # other notes are less alike to here than to each other: a walk that came from elsewhere finds the tension)
    path = unit(corpus_runtime, "jokes about marriage, cats and lawyers")[None, :]
    tensions = adjacency.seek_tensions(adjacency.Surroundings(s.here, s.corpus, s.loci, path, TUNING))
    assert tensions and all(c.similarity >= 1 - TUNING.band_high and "pulling against" in c.note for c in tensions)
    # a node that revises here (an UPDATES relation) is a tension first
    revised = band[0].node_id
    with corpus_runtime.db.transaction() as con:
        insert_relations(con, [Relation(revised, s.here.node_id, "UPDATES", created_by="test")])
    with corpus_runtime.db.connect() as con:
        assert updates_of(con, s.here.node_id) == [revised]
    first = adjacency.seek_tensions(s, [revised])[0]
    assert first.node_id == revised and "UPDATES" in first.note
    nodes = {}

    def node_text(ids):
        from explorer.store.wander import node_summaries

        with corpus_runtime.db.connect() as con:
            nodes.update(node_summaries(con, ids))
        return {i: nodes[i] for i in ids if i in nodes}

    asked = []

    def ask(prompt, fields, **kw):
        asked.append(fields)
        return corpus_runtime.gateway.ask(prompt, fields, **kw)

    analogies = adjacency.analogical_reason(s, np.random.default_rng(2), ask, corpus_runtime.embedder.embed, node_text)
    # every analogy leads to a stored node in another domain, never to the model's own phrase
    assert analogies and all(c.source_type == "SERENDIPITOUS" and c.node_id for c in analogies)
    assert all(c.domains and c.domains[0] not in s.here.domains for c in analogies)
    assert all(abs(float(np.linalg.norm(c.embedding)) - 1) < 1e-4 for c in analogies)
    assert asked[0]["elsewhere"] != "(none)"  # it was shown passages from other domains
    merged = adjacency.merge(bridges, tensions, band, band, analogies)
    keys = [c.node_id or c.concept for c in merged]
    assert len(keys) == len(set(keys))


def test_an_analogy_leads_to_the_nearest_node_elsewhere_however_few_near_ones_are_looked_at(
    surroundings, corpus_runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = replace(surroundings, tuning=replace(TUNING, analogy_grounding=-1.0))  # every analogy grounds somewhere
    concepts = ["a queue of people at a bakery", "tides and the moon", "a library catalogue", "reference counting"]
    proposals = [Analogy(concept=c, domain=None, rationale="") for c in concepts]
    vectors = corpus_runtime.embedder.embed(concepts)
    elsewhere = s.other_domains & np.isfinite(s.node_sims)

    def nearest_elsewhere(found: list[Adjacency]) -> None:
        """Each analogy stands on a node of another domain, as near to it as any not taken by an earlier one."""
        assert len(found) == len(concepts)
        taken: set[int] = set()
        for candidate, vector in zip(found, vectors, strict=True):
            row = s.corpus.row(candidate.node_id)
            assert row is not None and elsewhere[row] and row not in taken
            sims = np.where(elsewhere, s.corpus.index.matrix @ vector, -np.inf)
            sims[list(taken)] = -np.inf
            assert sims[row] == pytest.approx(sims.max(), abs=1e-5)
            taken.add(row)

    nearest_elsewhere(adjacency.ground_analogies(s, proposals, vectors))
    monkeypatch.setattr(adjacency, "GROUNDING_POOL", 1)  # the one nearest node is often at home: a full search
    nearest_elsewhere(adjacency.ground_analogies(s, proposals, vectors))


def test_composite_score_and_seeded_softmax(surroundings, runtime) -> None:
    s = surroundings
    found = adjacency.merge(adjacency.cross_domain(s), adjacency.distance_band(s, np.random.default_rng(3)))
    session = session_at(runtime, attractor_embedding=unit(runtime, "humour and jokes"))
    selection.score(found, s, session, {"python"}, np.zeros((0, s.corpus.index.dim), np.float32), TUNING)
    assert any(c.strategy == "cross_domain" for c in found)  # else the loops below check little or nothing
    for c in found:
        expected = (
            0.3 * c.interestingness
            + 0.3 * c.novelty
            + 0.2 * c.bridge_potential
            + 0.2 * c.uncertainty
            + TUNING.attractor_weight * c.attractor_pull
        )
        assert c.score == pytest.approx(expected)
        assert all(0 <= x <= 1 for x in (c.interestingness, c.novelty, c.bridge_potential, c.uncertainty))
    for c in found:  # a bridge is worth the evidence behind it; a step inside here's domain bridges little
        crosses = {d.lower() for d in c.domains} != {d.lower() for d in s.here.domains}
        assert crosses or c.strategy != "cross_domain"
        assert c.bridge_potential == pytest.approx(c.relatedness * (1.0 if crosses else selection.SAME_DOMAIN_BRIDGE))
    picks = [selection.softmax_select(found, 0.7, np.random.default_rng([9, step])) for step in range(20)]
    assert picks == [selection.softmax_select(found, 0.7, np.random.default_rng([9, step])) for step in range(20)]
    assert sum(c.probability for c in found) == pytest.approx(1.0)
    best = max(range(len(found)), key=lambda i: found[i].score)
    assert {selection.softmax_select(found, 1e-4, np.random.default_rng(i)) for i in range(10)} == {best}


# -- resonance -------------------------------------------------------------------


def residue(runtime, themes: list[str], session_id: str = "s") -> Residue:
    return Residue(
        session_id=session_id,
        trace_id=new_id(),
        to_locus_id=new_id(),
        themes=themes,
        themes_embedding=themes_vector(themes, runtime.embedder.embed),
        interestingness=0.7,
    )


@pytest.mark.minilm
def test_resonance_detected_strengthened_confirmed_and_decayed(runtime) -> None:
    now = utcnow()
    first = check_resonances(
        residue(runtime, ["garbage collection", "reference cycles", "memory"]), [], "s", now, TUNING
    )
    assert [e[0] for e in first.events] == ["wander.resonance.detected"] and first.created[0].status == "candidate"
    reach = first.created
    subjects = []
    for themes in (["garbage collector", "reference cycle", "memory management"], ["memory", "garbage collection"]):
        out = check_resonances(residue(runtime, themes), reach, "s", now, TUNING)
        assert not out.created and len(out.touched) == 1
        subjects += [e[0] for e in out.events]
        reach = out.updated
    (confirmed,) = reach
    assert subjects == ["wander.resonance.strengthened", "wander.resonance.strengthened", "wander.resonance.confirmed"]
    assert (
        confirmed.status == "confirmed"
        and confirmed.occurrences == 3
        and confirmed.strength == pytest.approx(3.0, abs=1e-3)
    )
    assert len(confirmed.supporting_residue_ids) == 3
    other = check_resonances(residue(runtime, ["lemon cake", "baking", "butter"]), reach, "s", now, TUNING)
    assert other.created and other.created[0].id != confirmed.id
    # 10% a day from the last reinforcement; decayed away → invalidated
    month_old = replace(confirmed, last_reinforced_at=now - timedelta(days=30))
    assert month_old.current_strength(now) == pytest.approx(3.0 * 0.9**30, rel=1e-3)
    gone = check_resonances(None, [month_old], "s", now, TUNING)
    assert [r.status for r in gone.updated] == ["invalidated"]
    # another session's confirmed resonance becomes cross-session when this one meets it
    promoted = check_resonances(residue(runtime, ["memory", "garbage collection"], "t"), [confirmed], "t", now, TUNING)
    assert promoted.updated[0].session_id is None and promoted.events[-1][1]["promoted"]


# -- memory --------------------------------------------------------------------


def test_hot_memory_compresses_to_warm(runtime) -> None:
    loci = {}
    hot = []
    vectors = runtime.embedder.embed([f"locus {step}" for step in range(TUNING.hot_memory_limit + 2)])
    kinds = [residue(runtime, ["garbage collection", "memory"]), residue(runtime, ["lemon cake", "baking"])]
    for step in range(1, TUNING.hot_memory_limit + 2):
        r = replace(kinds[step % 2], id=new_id(), to_locus_id=new_id(), interestingness=0.1 if step in (3, 4) else 0.7)
        loci[r.to_locus_id] = Locus("s", f"locus {step}", vectors[step], "ADJACENT")
        hot.append((step, r))
    assert memory.compress(hot[:-1], loci, runtime.embedder.embed, session_id="s", now=utcnow(), tuning=TUNING) == []
    warm = memory.compress(hot, loci, runtime.embedder.embed, session_id="s", now=utcnow(), tuning=TUNING)
    by_type = {}
    for row in warm:
        by_type.setdefault(row.cluster_type, []).append(row)
    (summary,) = by_type["summary"]
    assert summary.content["through_step"] == len(hot) - TUNING.hot_memory_keep
    (failed,) = by_type["failed_path"]
    assert failed.content["steps"] == [3, 4] and failed.embedding is not None
    clusters = [set(c.content["themes"]) for c in by_type["theme_cluster"]]
    assert any({"garbage collection"} <= c for c in clusters) and any({"lemon cake"} <= c for c in clusters)
    assert all(c.content["count"] >= 2 for c in by_type["theme_cluster"])
    assert all(w.expires_at > utcnow() for w in warm)


def test_theme_clusters_are_dense_and_leave_one_off_themes_out(runtime) -> None:
    # Each mention is a point: two themes named again and again are two dense clusters, never one, and a theme
    # named once, near none of the others, is noise.
    recurring = ["garbage collection"] * 4 + ["lemon cake"] * 4
    one_off = ["the jazz rhythm section", "statute of limitations", "orbital photon lens"]
    mentions = recurring + one_off
    groups = memory.theme_clusters(runtime.embedder.embed(mentions))
    named = [{mentions[m] for m in group} for group in groups]
    assert sorted(map(sorted, named)) == [["garbage collection"], ["lemon cake"]]
    assert memory.theme_clusters(runtime.embedder.embed(["alone"])) == []


# -- guard rails -------------------------------------------------------------------


def test_status_machine_allows_only_valid_transitions() -> None:
    for status, targets in TRANSITIONS.items():
        for target in TRANSITIONS:
            session = Session(name="s", seed_concept="x", status=status)
            if target in targets:
                require_transition(session, target)
            else:
                with pytest.raises(SessionStateError):
                    require_transition(session, target)
    assert TRANSITIONS["completed"] == TRANSITIONS["abandoned"] == frozenset()


def test_cost_estimate_bounds_the_charge_and_spending_downgrades(make_runtime) -> None:
    prices = {"gpt-4o-mini": (10.0, 100.0)}  # dollars per million tokens; the local model is free
    rt = make_runtime(
        local_model="ollama/llama3",
        cloud_model="gpt-4o-mini",
        prices=prices,
        completion_kwargs={"mock_response": mock_json()},
    )
    fields = {name: "a concept" for name in DWELLING.fields}
    estimate = rt.gateway.worst_case_cents(DWELLING, fields, "gpt-4o-mini")
    answer = rt.gateway.ask(DWELLING, fields, tier="cloud")
    assert answer.tier == "cloud" and 0 < answer.cost_cents <= estimate
    rich = Spending(rt.gateway, Session(name="s", seed_concept="x", cloud_budget_cents=500), TUNING)
    assert rich.ask(DWELLING, fields, tier="cloud").tier == "cloud" and rich.cloud_cents > 0
    poor = Spending(rt.gateway, Session(name="s", seed_concept="x", cloud_budget_cents=1), TUNING)
    assert poor.ask(DWELLING, fields, tier="cloud").tier == "local" and poor.downgraded == 1 and poor.cloud_cents == 0
    cloud_only = make_runtime(
        cloud_model="gpt-4o-mini", prices=prices, completion_kwargs={"mock_response": mock_json()}
    )
    broke = Spending(cloud_only.gateway, Session(name="s", seed_concept="x", cloud_budget_cents=0), TUNING)
    assert broke.ask(DWELLING, fields).tier == "offline"


def test_circuit_breaker_reasons_and_checkpoints() -> None:
    base = Session(name="s", seed_concept="x")
    assert circuit_reason(base, ["a", "b", "c"], TUNING) is None
    assert "failed to dwell" in circuit_reason(replace(base, failure_streak=3), [], TUNING, "bad json")
    assert "loop" in circuit_reason(base, ["a", "b"] * (TUNING.loop_window // 2), TUNING)
    assert circuit_reason(base, ["a", "b", "c", "a", "d", "b"], TUNING) is None  # revisits, but no cycle
    assert "same 2 loci 2 times" in circuit_reason(base, ["x", "a", "b", "a", "b"], TUNING)  # ping-pong
    assert "same 3 loci" in circuit_reason(base, ["a", "b", "c", "a", "b", "c"], TUNING)
    assert "all went to the same locus" in circuit_reason(base, ["a", "b", "b"], TUNING)
    assert circuit_reason(base, ["a", "b", "a"], TUNING) is None  # once back is not yet a cycle
    assert "past the fence" in circuit_reason(replace(base, fence_streak=TUNING.fence_trip), [], TUNING)
    assert checkpoint_due(replace(base, step_count=50)) and not checkpoint_due(replace(base, step_count=49))
    assert not checkpoint_due(replace(base, step_count=50, human_checkpoint_frequency=0))


def test_mock_answer_satisfies_every_wander_prompt() -> None:
    from explorer.prompts import REGISTRY

    kinds = [k for k in REGISTRY if k.startswith("wander_")]
    assert sorted(kinds) == ["wander_analogy", "wander_crystallize", "wander_dwell", "wander_validate"]
    assert all(REGISTRY[k].parse(json.dumps(MOCK_ANSWER)) is not None for k in kinds)


def test_review_state_machine_allows_first_decisions_and_refuses_silent_reversals() -> None:
    def crystal(status: str = "active", approved: bool = False) -> Crystal:
        return Crystal("insight", None, 0.5, 0.5, [], status=status, human_approved=approved)

    pending, approved = crystal(), crystal(approved=True)
    rejected, archived = crystal("invalidated"), crystal("archived", approved=True)
    assert [c.review_state for c in (pending, approved, rejected, archived)] == list(ReviewState)
    for decision in REVIEW_OUTCOMES:
        assert require_review(pending, decision) is REVIEW_OUTCOMES[decision]
    assert require_review(approved, "archive") is ReviewState.ARCHIVED
    for reviewed, decision in [
        (approved, "approve"),
        (approved, "reject"),
        (rejected, "approve"),
        (archived, "reject"),
    ]:
        with pytest.raises(SessionStateError, match=f"already {reviewed.review_state}"):
            require_review(reviewed, decision)
        assert require_review(reviewed, decision, force=True) is REVIEW_OUTCOMES[decision]
    with pytest.raises(InvalidRequest, match="approve, reject, archive"):
        require_review(pending, "maybe")
