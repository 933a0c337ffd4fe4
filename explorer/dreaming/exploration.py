"""REM exploration (docs/dreaming.md#rem-exploration): find new links between distant memories.

Seeds are drawn from memories in the prominence window, weighted by importance
× prominence × (1 + noise) and — where an :class:`~explorer.affinity.Affinity`
is given — by the strength of the seed's best bridge not yet in the graph, at
most a few per category. From each seed, spreading activation with high noise
wanders the relation graph; memories it reaches that are not already linked to
the seed are candidates, with the seed's strongest unlinked bridges by affinity,
ranked by affinity (a path in the graph counts for a little more), those that
stand out among this knowledge base's pairs (``candidate_percentile``). One judge
call per seed scores them all (novelty, plausibility, usefulness, 1–5) on the
evidence measured for each (affinity, its percentile here, shared distinctive
terms). A candidate whose average reaches ``min_judge_score`` becomes a
discovery: an EXTENDS relation that keeps the judge's description and scores.
Every verdict, kept or not, is returned with its scores and reason.

A seed's failure (the model, an unparseable answer, anything) is counted and the
other seeds go on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from explorer.affinity import Affinity
from explorer.dreaming.activation import ActivationConfig, gaussian_noise, spread_activation
from explorer.dreaming.graph import GetRelations, bridges_from, category_of, other_end, several_categories
from explorer.prompts import format_passages
from explorer.prompts.dreaming import REM_JUDGE, JudgeAnswer, Judgement
from explorer.providers.budget import Budget
from explorer.providers.gateway import Answer, Gateway, Usage
from explorer.records import Node, Progress, Relation, Verdict, begin, in_phase

CREATED_BY = "rem_exploration"


@dataclass(frozen=True)
class ExplorationConfig:
    """REM exploration's knobs (docs/dreaming.md#rem-exploration): how seeds are drawn, how far and how noisily
    activation wanders from each, and what score a link needs to be kept.
    """

    noise_sigma: float = 0.6
    max_seeds: int = 6
    max_seeds_per_category: int = 2
    max_candidates_per_seed: int = 8
    seed_noise_sigma: float = 0.3
    max_steps: int = 4
    decay: float = 0.4
    result_threshold: float = 0.02
    activation_threshold: float = 0.005
    min_judge_score: float = 3.0
    min_prominence: float = 0.05
    max_prominence: float = 0.8
    relations_shown: int = 3  # known relations listed per memory in the judge prompt
    snippet_words: int = 25  # how much of a related memory's text the prompt quotes
    seed_pool: int = 200  # memories whose best bridge is measured, heaviest first, before seeds are drawn
    bridge_temperature: float = 0.3  # how sharply a stronger best bridge makes a seed likelier
    path_bonus: float = 0.05  # affinity added to a candidate the activation reached through the graph
    # Share (in %) of the knowledge base's random pairs a candidate's affinity must beat to be put before a judge:
    # its top 2%, where people linked 1.3% of the bridges benchmark's pairs. Related pairs are a share of a base's
    # pairs whatever its size, so a memory of a base half the size has half as many related partners, and a pool of
    # a fixed count reached twice as deep into the rest: on random halves of the benchmark, eight candidates a seed
    # went down to the 86th percentile and the judge kept 6-17% of them, 27-54% on the whole.
    candidate_percentile: float = 98.0

    @property
    def activation(self) -> ActivationConfig:
        """The spreading activation this exploration wanders with: its own steps, decay and noise."""
        # No cap on results here: the cap applies after memories already linked
        # to the seed are set aside, so that they do not crowd out the rest.
        return ActivationConfig(
            max_steps=self.max_steps,
            decay=self.decay,
            activation_threshold=self.activation_threshold,
            noise_sigma=self.noise_sigma,
            result_threshold=self.result_threshold,
            max_results=None,
        )


DEFAULT_EXPLORATION = ExplorationConfig()


@dataclass(frozen=True)
class Discovery:
    """A link between two distant memories that the judge found worth keeping, with its description and scores."""

    seed_id: str
    neighbor_id: str
    connection: str
    confidence: float
    novelty: float
    plausibility: float
    usefulness: float

    def relation(self) -> Relation:
        """The discovery as it is stored: an EXTENDS relation from the seed that keeps the judge's words."""
        return Relation(
            self.seed_id,
            self.neighbor_id,
            "EXTENDS",
            created_by=CREATED_BY,
            confidence=self.confidence,
            description=self.connection,
            scores={"novelty": self.novelty, "plausibility": self.plausibility, "usefulness": self.usefulness},
        )


@dataclass
class ExplorationResult:
    """What one exploration found and what it cost, for the service to store and report."""

    eligible: int = 0
    seeds_explored: int = 0
    candidates_judged: int = 0
    discoveries: list[Discovery] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    failures: int = 0
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)


def in_window(memories: Sequence[Node], config: ExplorationConfig = DEFAULT_EXPLORATION) -> list[Node]:
    """Current memories whose prominence lies in the exploration window (inclusive)."""
    return [
        m
        for m in memories
        if m.is_latest
        and m.memory_type != "superseded"
        and config.min_prominence <= m.prominence <= config.max_prominence
    ]


def sample_seeds(
    memories: Sequence[Node],
    config: ExplorationConfig,
    rng: np.random.Generator,
    strengths: dict[str, float] | None = None,
) -> list[Node]:
    """Up to ``max_seeds`` memories, heaviest first, at most ``max_seeds_per_category`` from one category.

    Weight: importance × prominence × (1 + N(0, seed_noise_sigma)); with ``strengths`` (the affinity of each
    memory's best unlinked bridge), × exp((strength − strongest) / bridge_temperature), and only memories
    with a strength are drawn.
    """
    if strengths is not None:
        memories = [m for m in memories if m.id in strengths]
    if not memories:
        return []
    noise = gaussian_noise(config.seed_noise_sigma, len(memories), rng)
    weights = [m.importance * m.prominence * (1.0 + n) for m, n in zip(memories, noise, strict=True)]
    if strengths:
        strongest = max(strengths.values())
        weights = [
            w * float(np.exp((strengths[m.id] - strongest) / config.bridge_temperature))
            for m, w in zip(memories, weights, strict=True)
        ]
    order = sorted(range(len(memories)), key=lambda i: (-weights[i], memories[i].id))
    seeds: list[Node] = []
    per_category: dict[str, int] = {}
    for i in order:
        category = category_of(memories[i])
        if per_category.get(category, 0) >= config.max_seeds_per_category:
            continue
        per_category[category] = per_category.get(category, 0) + 1
        seeds.append(memories[i])
        if len(seeds) == config.max_seeds:
            break
    return seeds


def bridge_filter(
    seed: Node, by_id: dict[str, Node], get_relations: GetRelations, several: bool
) -> Callable[[str], bool]:
    """Which memories may become the seed's new link: a bridge (:func:`~explorer.dreaming.graph.bridges_from`,
    across categories when the knowledge base has ``several``) not already linked to it.
    """
    bridge = bridges_from(seed, by_id, other_category=several)
    return lambda other_id: bridge(other_id) and not directly_related(seed.id, other_id, get_relations)


def bridge_strengths(
    memories: Sequence[Node],
    by_id: dict[str, Node],
    get_relations: GetRelations,
    affinity: Affinity,
    config: ExplorationConfig,
) -> dict[str, float]:
    """The affinity of each memory's best bridge not yet in the graph, for the ``seed_pool`` heaviest
    (importance × prominence) memories ``affinity`` knows: what makes a memory worth exploring from.
    """
    several = several_categories(by_id.values())
    pool = sorted((m for m in memories if m.id in affinity), key=lambda m: (-m.importance * m.prominence, m.id))
    strengths = {}
    for memory in pool[: config.seed_pool]:
        best = affinity.partners(memory.id, 1, bridge_filter(memory, by_id, get_relations, several))
        if best:
            strengths[memory.id] = best[0][1]
    return strengths


def directly_related(a: str, b: str, get_relations: GetRelations) -> bool:
    """Whether two memories are already linked (either way), so a link between them would discover nothing."""
    return any(other_end(r, a) == b for r in get_relations(a)) or any(other_end(r, b) == a for r in get_relations(b))


def _relations_block(
    node_id: str, get_relations: GetRelations, texts: dict[str, str], config: ExplorationConfig
) -> str:
    lines = []
    for relation in get_relations(node_id)[: config.relations_shown]:
        other = other_end(relation, node_id)
        arrow = f"{relation.type} →" if relation.source_id == node_id else f"← {relation.type}"
        snippet = " ".join(texts.get(other, "(a memory not in view)").split()[: config.snippet_words])
        lines.append(f"- {arrow} {snippet}")
    return "\n".join(lines) or "(none)"


def judge_fields(
    seed: Node,
    candidates: Sequence[Node],
    get_relations: GetRelations,
    texts: dict[str, str],
    config: ExplorationConfig = DEFAULT_EXPLORATION,
    evidence: Sequence[str] | None = None,
) -> dict[str, object]:
    """The judge prompt's fields: the seed and every candidate in full, with the relations each already has
    and the evidence measured for each (``evidence``, in candidate order; none when not measured).
    """
    candidate_relations = "\n".join(
        f"[{i}]\n{_relations_block(c.id, get_relations, texts, config)}" for i, c in enumerate(candidates, 1)
    )
    measured = "\n".join(f"[{i}] {line}" for i, line in enumerate(evidence or [], 1)) or "(not measured)"
    return {
        "seed": " ".join(seed.text.split()),
        "seed_category": category_of(seed),
        "seed_relations": _relations_block(seed.id, get_relations, texts, config),
        "candidates": format_passages([c.text for c in candidates], [category_of(c) for c in candidates]),
        "candidate_relations": candidate_relations,
        "candidate_evidence": measured,
        "min_score": config.min_judge_score,
    }


def accepted(answer: JudgeAnswer, seed: Node, candidates: Sequence[Node], config: ExplorationConfig) -> list[Discovery]:
    """Discoveries from a judge answer: a described connection whose average score reaches the minimum."""
    found = []
    for judgement in answer.judgements:
        if not _kept(judgement, candidates, config):
            continue
        assert judgement.connection is not None  # _kept checked it
        confidence = judgement.confidence if judgement.confidence is not None else round(judgement.average / 5, 3)
        found.append(
            Discovery(
                seed.id,
                candidates[judgement.candidate - 1].id,
                judgement.connection,
                confidence,
                judgement.novelty,
                judgement.plausibility,
                judgement.usefulness,
            )
        )
    return found


def _kept(judgement: Judgement, candidates: Sequence[Node], config: ExplorationConfig) -> bool:
    return (
        1 <= judgement.candidate <= len(candidates)
        and judgement.connection is not None
        and judgement.average >= config.min_judge_score
    )


def verdicts(
    answer: JudgeAnswer,
    seed: Node,
    candidates: Sequence[Node],
    evidence: Sequence[str] | None,
    config: ExplorationConfig,
) -> list[Verdict]:
    """Every judgement of a seed's candidates as a verdict, kept or not; a judge that gave no reason gets its
    scores as one.
    """
    found = []
    for judgement in answer.judgements:
        if not 1 <= judgement.candidate <= len(candidates):
            continue
        kept = _kept(judgement, candidates, config)
        reason = judgement.reason or (
            f"average score {judgement.average:.1f} of 5, {'reaching' if kept else 'below'} the "
            f"{config.min_judge_score:g} a link needs"
        )
        found.append(
            Verdict(
                seed.id,
                candidates[judgement.candidate - 1].id,
                judgement.novelty,
                judgement.plausibility,
                judgement.usefulness,
                kept,
                reason,
                judgement.connection if kept else None,
                evidence[judgement.candidate - 1] if evidence else None,
            )
        )
    return found


def candidate_bar(affinity: Affinity, config: ExplorationConfig) -> float:
    """The percentile a candidate's affinity must reach: ``candidate_percentile``, or on a base too small for its
    top pairs to fill one seed's pool (fewer than ``max_candidates_per_seed`` pairs in that share: under about 30
    memories), the percentile of its ``max_candidates_per_seed``-th strongest pair, so a small base is explored
    as before rather than not at all.
    """
    if not affinity.pairs:
        return 0.0
    filled = 100.0 * max(0.0, 1 - config.max_candidates_per_seed / affinity.pairs)
    return min(config.candidate_percentile, round(filled, 2))  # rounded as percentiles are


def candidates_for(
    seed: Node,
    memories: dict[str, Node],
    get_relations: GetRelations,
    config: ExplorationConfig,
    rng: np.random.Generator,
    affinity: Affinity | None = None,
    judged: Collection[str] = (),
) -> list[Node]:
    """Memories the noisy activation reaches from ``seed`` that are current and not yet linked to it; with an
    ``affinity``, joined by the seed's strongest unlinked bridges and ranked by affinity (a path in the graph
    adding ``path_bonus``), other sources and categories only, those whose affinity reaches the
    :func:`candidate_bar` only: the first alone when none does, as a seed was drawn for its best bridge, and a
    judge that reads meaning may see more in it than the numbers. Memories in ``judged`` (already put before a
    judge with this seed tonight, as seeds themselves) are left out, so the next ones take their places.
    """
    scores = spread_activation(seed.id, get_relations, config.activation, rng)
    if affinity is None or seed.id not in affinity:
        found = []
        for node_id in scores:
            node = memories.get(node_id)
            if node is None or not node.is_latest or node_id in judged:
                continue
            if directly_related(seed.id, node_id, get_relations):
                continue
            found.append(node)
            if len(found) == config.max_candidates_per_seed:
                break
        return found
    several = several_categories(memories.values())
    unjudged = bridge_filter(seed, memories, get_relations, several)

    def allowed(node_id: str) -> bool:
        return node_id not in judged and unjudged(node_id)

    reached = {node_id for node_id in scores if node_id in affinity and allowed(node_id)}
    bridges = {p for p, _ in affinity.partners(seed.id, config.max_candidates_per_seed, allowed)}
    ranked = sorted(
        reached | bridges,
        key=lambda c: (-(affinity.score(seed.id, c) + (config.path_bonus if c in reached else 0.0)), c),
    )
    bar = candidate_bar(affinity, config)
    standing_out = [c for c in ranked if affinity.percentile(affinity.score(seed.id, c)) >= bar] or ranked[:1]
    return [memories[c] for c in standing_out[: config.max_candidates_per_seed]]


def explore(
    memories: Sequence[Node],
    get_relations: GetRelations,
    gateway: Gateway,
    config: ExplorationConfig = DEFAULT_EXPLORATION,
    *,
    rng: np.random.Generator,
    budget: Budget | None = None,
    progress: Progress | None = None,
    affinity: Affinity | None = None,
) -> ExplorationResult:
    """REM exploration over ``memories`` (every current memory: seeds come from the window, candidates from all);
    ``affinity`` (over the memories that may be linked) steers seeds and candidates and gives the judge evidence.

    The activation of every seed is spread first (it draws on ``rng``), each pair is put before a judge once (a
    later seed does not ask again about an earlier seed that had it among its candidates), the seeds are judged
    with up to ``gateway.concurrency`` judges at once, and their discoveries kept in seed order, a pair a judge
    kept twice once: so a run is the same for a seed whatever the concurrency.
    """
    result = ExplorationResult()
    eligible = in_window(memories, config)
    result.eligible = len(eligible)
    by_id = {m.id: m for m in memories}
    texts = {m.id: m.text for m in memories}
    begin(progress, "choosing seeds and candidates")
    strengths = None if affinity is None else bridge_strengths(eligible, by_id, get_relations, affinity, config)
    seeds = sample_seeds(eligible, config, rng, strengths)
    result.seeds_explored = len(seeds)
    to_judge: list[tuple[Node, list[Node], list[str] | None]] = []
    judged: dict[str, set[str]] = {}  # who each memory is put before a judge with: a pair is judged once a night
    for seed in seeds:
        try:
            candidates = candidates_for(seed, by_id, get_relations, config, rng, affinity, judged.get(seed.id, set()))
        except Exception as exc:  # one seed's trouble must not end the night
            result.failures += 1
            result.errors.append(f"seed {seed.id}: {type(exc).__name__}: {exc}")
            continue
        for candidate in candidates:
            judged.setdefault(candidate.id, set()).add(seed.id)
        if candidates:  # nothing new within reach: no model call
            evidence = None if affinity is None else [affinity.evidence(seed.id, c.id).line() for c in candidates]
            to_judge.append((seed, candidates, evidence))

    def judge(item: tuple[Node, list[Node], list[str] | None]) -> Answer[JudgeAnswer] | Exception:
        seed, candidates, evidence = item
        try:
            fields = judge_fields(seed, candidates, get_relations, texts, config, evidence)
            return gateway.ask(REM_JUDGE, fields, purpose="rem_judge", budget=budget)
        except Exception as exc:  # one seed's trouble must not end the night
            return exc

    seen_pairs: set[frozenset[str]] = set()
    answers = gateway.map(judge, to_judge, in_phase(progress, "judging links"))
    for (seed, candidates, evidence), answer in zip(to_judge, answers, strict=True):
        if isinstance(answer, Exception):
            result.failures += 1
            result.errors.append(f"seed {seed.id}: {type(answer).__name__}: {answer}")
            continue
        result.usage.add(answer)
        if answer.value is None or not answer.ok:
            result.failures += 1
            result.errors.append(f"seed {seed.id}: judge failed ({answer.error})")
            continue
        result.candidates_judged += len(candidates)
        result.verdicts += verdicts(answer.value, seed, candidates, evidence, config)
        for discovery in accepted(answer.value, seed, candidates, config):
            pair = frozenset((discovery.seed_id, discovery.neighbor_id))
            if pair not in seen_pairs:
                seen_pairs.add(pair)
                result.discoveries.append(discovery)
    return result
