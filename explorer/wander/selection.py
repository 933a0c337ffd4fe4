"""Stages 3 and 4: score each candidate, then pick one by softmax sampling.

The composite (docs/wander.md#the-step): 0.3·interestingness + 0.3·novelty +
0.2·bridge potential + 0.2·uncertainty, plus the attractor's pull. What feeds
it is evidence, not distance: a candidate is interesting as far as there is
reason to think it is related to the current locus (:func:`relatedness`: their
cosine, a link the graph already holds between their sources, the entities
they share), and a bridge to another domain is worth as much as that evidence.
Sampling is seeded by the caller (from the session's seed and the step
number), so the same seed over the same database makes the same choice.
"""

from __future__ import annotations

import numpy as np

from explorer.records.wander import Adjacency, Session
from explorer.wander.adjacency import Surroundings
from explorer.wander.config import WanderTuning
from explorer.wander.scope import attractor_pull
from explorer.wander.space import CorpusSpace

UNVERIFIED_UNCERTAINTY = 0.6  # a locus that is no node (the seed, an injected concept) is unverified
NO_NODE_IMPORTANCE = 0.6
SAME_DOMAIN_BRIDGE = 0.2  # a step inside here's domain bridges nothing, however related
UNKNOWN_DOMAIN_BRIDGE = 0.3


def evidence(corpus: CorpusSpace, row: int, others: np.ndarray, tuning: WanderTuning) -> np.ndarray:
    """Evidence, in [0, 1], that the node at ``row`` is related to each of ``others`` (rows): the kinship of
    their sources (the cosine of a document's chunks together and the distinctive words both use, see
    :meth:`CorpusSpace.kinship`), how strongly a relation between their nodes links them (``link_weights``
    by type), and how many entities their sources share.
    """
    if len(corpus.sources):
        kin = corpus.kinship(np.full(len(others), corpus.sources[row]), corpus.sources[others], tuning.lexical_weight)
    else:
        kin = corpus.source_similarity(row, others)
    found = np.maximum(kin, 0.0)
    found += tuning.r_linked * corpus.linked(row, others, dict(tuning.link_weights))
    found += tuning.r_entities * np.minimum(1.0, corpus.shared_entities(row, others) / tuning.entities_for_full)
    return np.clip(found, 0.0, 1.0)


def pair_relatedness(corpus: CorpusSpace, a: str, b: str, tuning: WanderTuning) -> float:
    """The evidence that two stored nodes are related (0 when either is not in the space)."""
    row, other = corpus.row(a), corpus.row(b)
    if row is None or other is None:
        return 0.0
    return float(evidence(corpus, row, np.asarray([other]), tuning)[0])


def strong_bridge_line(corpus: CorpusSpace, tuning: WanderTuning) -> float:
    """The relatedness a step across domains needs: that of the strongest cross-domain pairs of this corpus by
    kinship alone, ``strong_bridges_per_note`` of them for each note (a link or shared entities lift a pair over it).
    """
    return corpus.bridge_line(tuning.strong_bridges_per_note, tuning.lexical_weight)


def relatedness(candidates: list[Adjacency], s: Surroundings, tuning: WanderTuning) -> None:
    """Fill in each candidate's evidence of being related to here (see :func:`evidence`); a candidate or a here
    that is no node (the seed, an injected concept) has only its cosine.
    """
    here_row = s.corpus.row(s.here.node_id) if s.here.node_id else None
    rows = [s.corpus.row(c.node_id) if c.node_id else None for c in candidates]
    for c in candidates:
        c.relatedness = float(np.clip(c.similarity, 0.0, 1.0))
    known = [(c, r) for c, r in zip(candidates, rows, strict=True) if r is not None]
    if here_row is None or not known:
        return
    others = np.asarray([r for _, r in known], dtype=np.int64)
    found = evidence(s.corpus, here_row, others, tuning)
    claims = [(i, parent) for i, row in enumerate(others) for parent in s.corpus.parent_rows.get(int(row), ())]
    if claims:  # a step onto a dream claims a link to each of its parents: weighed together, in one call
        through = evidence(s.corpus, here_row, np.asarray([parent for _, parent in claims], dtype=np.int64), tuning)
        np.minimum.at(found, [i for i, _ in claims], through)
    for parent in s.corpus.parent_rows.get(here_row, ()):  # and a step off one, from each of them
        found = np.minimum(found, evidence(s.corpus, parent, others, tuning))
    for (c, _), value in zip(known, found, strict=True):
        c.relatedness = float(value)


def score(
    candidates: list[Adjacency],
    s: Surroundings,
    session: Session,
    visited_domains: set[str],
    failed_paths: np.ndarray,
    tuning: WanderTuning,
) -> None:
    """Fill in each candidate's relatedness, four scores, attractor pull and composite score."""
    relatedness(candidates, s, tuning)
    visited = s.loci.visited.matrix
    here_row = s.loci.visited.row(s.here.id)
    if here_row is not None:  # novelty is newness to where the walk was before here, not distance from here
        visited = np.delete(visited, here_row, axis=0)
    here_domains = {d.lower() for d in s.here.domains}
    seen_domains = {d.lower() for d in visited_domains}
    for c in candidates:
        c.novelty = float(np.clip(1.0 - float(np.max(visited @ c.embedding)), 0.0, 1.0)) if len(visited) else 1.0
        existing = s.loci.loci.get(c.locus_id) if c.locus_id else None
        row = s.corpus.row(c.node_id) if c.node_id else None
        importance = float(s.corpus.importance[row]) if row is not None else NO_NODE_IMPORTANCE
        confidence = float(s.corpus.confidence[row]) if row is not None else 1.0 - UNVERIFIED_UNCERTAINTY
        c.interestingness = tuning.relatedness_share * c.relatedness + (1.0 - tuning.relatedness_share) * importance
        c.uncertainty = 1.0 - confidence
        if existing is not None and existing.visit_count > 0:
            # dwelling there rated it: that rating stands for its importance
            c.interestingness = (
                tuning.relatedness_share * c.relatedness + (1.0 - tuning.relatedness_share) * existing.interestingness
            )
            c.uncertainty = existing.uncertainty
        if len(failed_paths) and float(np.max(failed_paths @ c.embedding)) > 1.0 - tuning.failed_path_radius:
            c.interestingness *= tuning.failed_path_penalty
        domains = {d.lower() for d in c.domains}
        if not domains:
            c.bridge_potential = UNKNOWN_DOMAIN_BRIDGE * c.relatedness
        elif here_domains and not crosses(s.here.domains, c.domains):
            c.bridge_potential = SAME_DOMAIN_BRIDGE * c.relatedness
        else:
            c.bridge_potential = c.relatedness * (1.0 if domains - seen_domains else tuning.seen_domain_bridge)
        c.attractor_pull = attractor_pull(c.embedding, session)
        c.score = (
            tuning.w_interestingness * c.interestingness
            + tuning.w_novelty * c.novelty
            + tuning.w_bridge * c.bridge_potential
            + tuning.w_uncertainty * c.uncertainty
            + tuning.attractor_weight * c.attractor_pull
        )


def crosses(here_domains: list[str], domains: list[str]) -> bool:
    """Whether a step between loci of these domains crosses from one domain to another (unknown when either has
    none). A locus on a dream spans its parents' domains, and a step onto or off it claims a connection with each
    of them: it stays within a domain only between loci of the same domains.
    """
    mine = {d.lower() for d in here_domains}
    theirs = {d.lower() for d in domains}
    return bool(mine and theirs and mine != theirs)


def weak_bridge(c: Adjacency, here_domains: list[str], line: float) -> bool:
    """Whether a candidate in another domain has too little evidence of being related to here to cross to.

    Why drop it rather than score it low: a step across domains claims a connection, and one the evidence does
    not support is noise in front of a reviewer; within a domain, a weak step only moves the walk.
    """
    return crosses(here_domains, c.domains) and c.relatedness < line


def softmax_select(
    candidates: list[Adjacency], temperature: float, rng: np.random.Generator, sharpness: float = 1.0
) -> int:
    """Index of the chosen candidate, drawn with probability ∝ exp(sharpness · score / temperature); fills
    ``probability``.

    Why the sharpness: scores lie within a few tenths of each other, so at the default temperature 0.7 a
    plain softmax over a dozen candidates is nearly uniform and the ranking would hardly matter.
    """
    scores = np.asarray([c.score for c in candidates], dtype=np.float64)
    weights = np.exp(sharpness * (scores - scores.max()) / max(temperature, 1e-6))
    probabilities = weights / weights.sum()
    for c, p in zip(candidates, probabilities, strict=True):
        c.probability = float(p)
    return int(rng.choice(len(candidates), p=probabilities))
