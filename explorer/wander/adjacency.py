"""Stage 1: where a step could go next, by the four strategies of docs/wander.md#the-step.

- distance-band sampling: random items at a moderate cosine distance (0.3–0.7 by default);
- cross-domain bridges: the nearest items in other domains;
- analogical reasoning: the model proposes analogous concepts, and each leads to the stored node
  (in another domain) nearest to it;
- tension seeking: items near the current locus that pull against where the walk was heading
  (or against their own neighbourhood), and nodes linked to it by an UPDATES relation.

Every candidate is a stored node (keeping ``node_id``): a walk goes from note to
note, so each step joins two things the knowledge base holds, never a phrase
the model made up. Loci that are no node (the seed, a person's injected
concept) are reached only when a person asks. Names are filled in by the
caller (:mod:`explorer.wander.naming`) for the few candidates that survive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from explorer.prompts import format_passages
from explorer.prompts.wander import ANALOGY, Analogy
from explorer.providers.gateway import Answer
from explorer.records.wander import Adjacency, Locus, SourceType, Strategy
from explorer.wander.config import WanderTuning
from explorer.wander.naming import described
from explorer.wander.space import NO_DOMAIN, CorpusSpace, LociSpace, cosines

SAME_POINT = 0.98  # cosine above which an item is the current locus itself
GROUNDING_POOL = 32  # nodes nearest an analogy looked through for one in another domain before a full search

Ask = Callable[..., Answer]
Embed = Callable[[Sequence[str]], np.ndarray]
NodeText = Callable[[list[str]], dict[str, dict]]  # node id → {text, type, domain, …}


@dataclass
class Surroundings:
    """The current locus and the space around it, with similarities computed once per step."""

    here: Locus
    corpus: CorpusSpace
    loci: LociSpace
    path: np.ndarray  # embeddings of the loci visited just before this one, oldest first
    tuning: WanderTuning
    failures: list[str] = field(default_factory=list)
    here_text: str | None = None  # the text of the node here stands on, for the prompts

    @cached_property
    def here_vector(self) -> np.ndarray:
        """The current locus's vector: every strategy measures from it, so a locus without one cannot be left."""
        if self.here.embedding is None:
            raise ValueError(f"locus {self.here.id} has no embedding, so nothing can be measured from it")
        return self.here.embedding

    @cached_property
    def node_sims(self) -> np.ndarray:
        """Cosine of every corpus node to here; here itself, its near-copies and what was derived from its source
        (its document's syntheses and insights: the same note, said again) at -inf, never a candidate.
        """
        sims = cosines(self.corpus.index.matrix, self.here_vector)
        row = self.corpus.row(self.here.node_id) if self.here.node_id else None
        sims[sims > SAME_POINT] = -np.inf
        if row is not None:
            sims[row] = -np.inf
            if len(self.corpus.sources):
                sims[(self.corpus.sources == self.corpus.sources[row]) & ~self.corpus.is_chunk] = -np.inf
        return sims

    @cached_property
    def here_codes(self) -> np.ndarray:
        """The codes of here's domains, so other domains can be masked in."""
        return self.corpus.codes_of(self.here.domains)

    @cached_property
    def other_domains(self) -> np.ndarray:
        """Rows of nodes in a known domain other than here's."""
        codes = self.corpus.domain_codes
        mask = codes != NO_DOMAIN
        for code in self.here_codes:  # a locus has a domain or two: comparisons beat np.isin
            mask &= codes != code
        return mask

    def from_node(self, row: int, strategy: Strategy, source_type: SourceType, note: str | None = None) -> Adjacency:
        """A candidate standing on a corpus node (its text is filled in later, for the few that survive)."""
        node_id = self.corpus.index.ids[row]
        existing = self.loci.locus_for_node(node_id)
        return Adjacency(
            concept=existing.concept if existing else "",
            embedding=self.corpus.index.matrix[row],
            strategy=strategy,
            source_type=source_type,
            domains=self.corpus.domains(row),
            node_id=node_id,
            locus_id=existing.id if existing else None,
            similarity=float(self.node_sims[row]),
            note=note,
            abstraction_level=existing.abstraction_level if existing else 0.5,
        )


def _top(sims: np.ndarray, k: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Rows of the ``k`` highest finite similarities (within ``mask``), best first."""
    if mask is not None:
        sims = np.where(mask, sims, -np.inf)
    k = min(k, int(np.isfinite(sims).sum()))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    best = np.argpartition(-sims, k - 1)[:k]
    return best[np.argsort(-sims[best], kind="stable")]


def distance_band(s: Surroundings, rng: np.random.Generator) -> list[Adjacency]:
    """Nodes sampled at random from the band of moderate distance; the nearest-to-band ones when it is empty."""
    t = s.tuning
    low, high = 1.0 - t.band_high, 1.0 - t.band_low  # the band as similarities
    nodes = np.flatnonzero((s.node_sims >= low) & (s.node_sims <= high))
    if len(nodes) == 0:
        middle = (low + high) / 2
        closeness = -np.abs(s.node_sims - middle)
        return [
            s.from_node(int(r), "distance_band", "ADJACENT", "nearest to the distance band")
            for r in _top(closeness, t.band_samples)
        ]
    picks = rng.choice(len(nodes), size=min(t.band_samples, len(nodes)), replace=False)
    return [s.from_node(int(nodes[p]), "distance_band", "ADJACENT") for p in picks]


def cross_domain(s: Surroundings) -> list[Adjacency]:
    """Notes in other domains the graph links to here (a relation that claims something, see
    ``link_weights``), then the nearest item of each other domain, best bridges first.
    """
    t = s.tuning
    mask = s.other_domains
    if not mask.any():
        return []
    here = ", ".join(s.here.domains) or "here"
    found = [
        s.from_node(row, "cross_domain", "BRIDGED", f"{here} → {s.corpus.domain(row)}, linked: {kinds}")
        for row, kinds in _linked_elsewhere(s, mask)
    ]
    seen: set[int] = set()
    taken = {c.node_id for c in found}
    for row in _top(s.node_sims, 32 * t.bridge_candidates, mask):
        code = int(s.corpus.domain_codes[row])
        if code not in seen and s.corpus.index.ids[row] not in taken:
            seen.add(code)
            found.append(s.from_node(int(row), "cross_domain", "BRIDGED", f"{here} → {s.corpus.domain_names[code]}"))
        if len(seen) == t.bridge_candidates:
            break
    return found


def nearest_at_home(s: Surroundings, avoid: set[int]) -> list[Adjacency]:
    """The nearest nodes in here's own domain (none of the sources in ``avoid``), for a step when every bridge
    out of here is too weak to cross: staying within a domain claims no connection.
    """
    home = ~s.other_domains & (s.corpus.domain_codes != NO_DOMAIN)
    if avoid and len(s.corpus.sources):
        home &= ~np.isin(s.corpus.sources, list(avoid))
    return [
        s.from_node(int(row), "distance_band", "ADJACENT", "the nearest note in its own domain: no bridge was strong")
        for row in _top(s.node_sims, s.tuning.bridge_candidates, home)
    ]


def _linked_elsewhere(s: Surroundings, mask: np.ndarray) -> list[tuple[int, str]]:
    """(row, relation types) of the nearest node of each source in another domain that a weighted relation
    links to here's source, strongest links first, at most ``bridge_candidates``.
    """
    row = s.corpus.row(s.here.node_id) if s.here.node_id else None
    if row is None or not len(s.corpus.sources):
        return []
    weights = dict(s.tuning.link_weights)
    near = s.corpus.links.get(int(s.corpus.sources[row]), {})
    strength = {source: max(weights.get(k, 0.0) for k in kinds) for source, kinds in near.items()}
    wanted = {source for source, weight in strength.items() if weight > 0}
    if not wanted:
        return []
    rows = np.flatnonzero(mask & np.isin(s.corpus.sources, list(wanted)) & np.isfinite(s.node_sims))
    best: dict[int, int] = {}
    for r in rows[np.argsort(-s.node_sims[rows], kind="stable")]:
        best.setdefault(int(s.corpus.sources[r]), int(r))
    ranked = sorted(best.items(), key=lambda item: (-strength[item[0]], -float(s.node_sims[item[1]])))
    return [(r, "/".join(sorted(near[source]))) for source, r in ranked[: s.tuning.bridge_candidates]]


def seek_tensions(s: Surroundings, updates: Sequence[str] = ()) -> list[Adjacency]:
    """Nodes linked to here by an UPDATES relation, then near items that pull against the recent path.

    The pull of item x is sim(here, x) − sim(heading, x), where the heading is the
    centroid of the path before here; at the start of a walk it is the
    neighbourhood's centroid, so the pull finds the odd one out near here.
    """
    t = s.tuning
    found = []
    for node_id in updates:
        row = s.corpus.row(node_id)
        if row is not None and np.isfinite(s.node_sims[row]):
            found.append(s.from_node(row, "tension", "ADJACENT", "an UPDATES relation: one revises the other"))
    rows = _top(s.node_sims, t.tension_pool, s.node_sims >= 1.0 - t.band_high)
    if len(rows) < 2:
        return found[: t.tension_candidates]
    pool = s.corpus.index.matrix[rows]
    if len(s.path):
        heading = s.path.mean(axis=0)
        against = "the recent path"
    else:
        heading = pool.mean(axis=0)
        against = "its neighbourhood"
    heading = heading / (np.linalg.norm(heading) or 1.0)
    pull = s.node_sims[rows] - pool @ heading
    taken = {a.node_id for a in found}
    for i in np.argsort(-pull, kind="stable"):
        if len(found) >= t.tension_candidates:
            break
        row = int(rows[i])
        if s.corpus.index.ids[row] not in taken and pull[i] > 0:
            found.append(
                s.from_node(
                    row,
                    "tension",
                    "ADJACENT",
                    f"near this locus yet pulling against {against} (pull {float(pull[i]):.2f})",
                )
            )
    return found


def analogical_reason(
    s: Surroundings, rng: np.random.Generator, ask: Ask, embed: Embed, node_text: NodeText
) -> list[Adjacency]:
    """Analogous concepts the model proposes, shown passages from other domains for inspiration."""
    t = s.tuning
    mask = s.other_domains
    low, high = 1.0 - t.band_high, 1.0 - t.band_low
    if not mask.any():  # a one-domain corpus: the far side of the band stands in for elsewhere
        mask = np.isfinite(s.node_sims)
    inspiring = np.flatnonzero(mask & (s.node_sims >= low) & (s.node_sims <= high))
    if len(inspiring) > t.analogy_sources:
        inspiring = rng.choice(inspiring, size=t.analogy_sources, replace=False)
    elif len(inspiring) == 0:
        inspiring = _top(s.node_sims, t.analogy_sources, mask)
    ids = [s.corpus.index.ids[int(r)] for r in inspiring]
    texts = node_text(ids)
    rows = [(texts[i]["text"], s.corpus.domain(int(r))) for i, r in zip(ids, inspiring, strict=True) if i in texts]
    answer = ask(
        ANALOGY,
        {
            "concept": described(s.here.concept, s.here_text),
            "domains": ", ".join(s.here.domains) or "unknown",
            "elsewhere": format_passages([text for text, _ in rows], [domain for _, domain in rows]),
            "count": t.analogies,
        },
        tier="local",
        purpose="wander_analogy",
    )
    analogies: list[Analogy] | None = answer.value
    if analogies is None or not answer.ok:
        s.failures.append(f"analogical reasoning failed: {answer.error}")
        return []
    proposals = [a for a in analogies if a.concept.strip().lower() != s.here.concept.strip().lower()]
    proposals = proposals[: t.analogies]
    if not proposals:
        return []
    return ground_analogies(s, proposals, embed([a.concept for a in proposals]))


def ground_analogies(s: Surroundings, proposals: Sequence[Analogy], vectors: np.ndarray) -> list[Adjacency]:
    """Each analogy the model proposed, led to the stored node nearest to it (in another domain when the
    corpus has one); one that no node is near enough to stays a thought, not a place to go.

    Why: the model's phrase is not in the knowledge base, and a step to it would join nothing a person can
    open; the node it points to is.
    """
    mask = s.other_domains if s.other_domains.any() else np.ones(len(s.node_sims), dtype=bool)
    mask = mask & np.isfinite(s.node_sims)  # never here itself
    if not mask.any():
        return []
    found: list[Adjacency] = []
    taken: set[int] = set()
    near_rows, near_sims = s.corpus.index.nearest(vectors, GROUNDING_POOL)
    for analogy, vector, rows, sims in zip(proposals, vectors, near_rows, near_sims, strict=True):
        ranked = [(int(r), float(v)) for r, v in zip(rows, sims, strict=True) if r >= 0 and mask[r]]
        if len(ranked) <= len(taken):  # the nodes nearest it are all at home or taken: search the whole corpus
            exact = np.where(mask, cosines(s.corpus.index.matrix, vector), -np.inf)
            ranked = [(int(r), float(exact[r])) for r in _top(exact, len(taken) + 1)]
        for row, similarity in ranked:
            if row in taken:
                continue
            if similarity >= s.tuning.analogy_grounding:
                taken.add(row)
                why = analogy.rationale or f"analogous to {analogy.concept}"
                found.append(s.from_node(row, "analogy", "SERENDIPITOUS", why))
            break
    return found


def merge(*groups: list[Adjacency]) -> list[Adjacency]:
    """All candidates once each (a node or locus proposed twice keeps its first, more specific, strategy)."""
    seen: set[str] = set()
    merged = []
    for group in groups:
        for candidate in group:
            key = candidate.locus_id or candidate.node_id or f"concept:{candidate.concept.lower()}"
            if key not in seen:
                seen.add(key)
                merged.append(candidate)
    return merged
