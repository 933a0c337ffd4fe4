"""Stage 7: crystallize where a confirmed resonance meets an interesting locus.

A crystal connects two stored sources. Among the encounters where the
resonance recurred, the one joining two different source documents with the
most evidence of being related (:func:`bridge`) is the crystal's subject; the
model states the insight from those two sources and the reflections the
resonance gathered, a second prompt validates it before it is kept. A crystal is
refused, before any model is asked, when no encounter joins two sources
(ungrounded), when every encounter joins two sources a crystal already connects
or a note already links by name (a crystal is a connection the notes do not
make yet), or when the walk formed one fewer than ``crystal_every`` steps ago;
after the model answers, when its insight is within ``duplicate_crystal``
cosine of any crystal (of any session).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from explorer.prompts import format_passages
from explorer.prompts.wander import CRYSTALLIZE, VALIDATE
from explorer.records.wander import Crystal, Locus, Residue, Resonance
from explorer.text import shorten
from explorer.wander.config import WanderTuning
from explorer.wander.guards import Spending

Embed = Callable[[Sequence[str]], np.ndarray]
Related = Callable[[str, str], float]  # evidence that two nodes are related, in [0, 1]
# Reasons a crystal is not formed that are the rules working, not a step failing.
DECLINED = ("near-duplicate", "known link", "ungrounded", "weak bridge")


@dataclass
class Evidence:
    """What supports a resonance: its residues (newest last), the loci they went from and to, the nodes behind
    those loci, and the stored raw chunks behind each node (itself, or the chunks it was derived from).
    """

    residues: list[Residue]
    loci: dict[str, Locus]
    nodes: dict[str, dict[str, Any]]
    chunks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # node id → [{id, document_id, …}]

    def reflections(self, limit: int) -> tuple[list[str], list[str | None]]:
        """The newest reflections as (text, domain) passages for the prompts."""
        texts: list[str] = []
        labels: list[str | None] = []
        for residue in self.residues[-limit:]:
            locus = self.loci.get(residue.to_locus_id)
            label = ", ".join(locus.domains) if locus and locus.domains else None
            reflection = " ".join(x for x in (residue.connection, residue.possibility) if x)
            if reflection:
                texts.append(reflection)
                labels.append(label)
        return texts, labels


@dataclass(frozen=True)
class End:
    """One of the two sources a crystal connects: the locus, its node, and the document behind it."""

    locus_id: str
    node_id: str
    name: str
    document_id: str
    title: str | None
    domain: str | None
    chunks: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        """The end as the crystal stores it (its ``connects``)."""
        return {
            "locus_id": self.locus_id,
            "node_id": self.node_id,
            "name": self.name,
            "document_id": self.document_id,
            "title": self.title,
            "domain": self.domain,
        }


@dataclass(frozen=True)
class Bridge:
    """The encounter a crystal is about: two sources and the residue left where the walk went between them."""

    ends: tuple[End, End]
    residue: Residue
    relatedness: float

    @property
    def documents(self) -> frozenset[str]:
        """The two source documents, unordered: a crystal connecting the same two is a duplicate."""
        return frozenset(end.document_id for end in self.ends)

    def named(self) -> str:
        """What the crystal connects, as a person reads it."""
        a, b = self.ends
        return f"{a.name} ({a.domain or 'no domain'}) and {b.name} ({b.domain or 'no domain'})"


@dataclass(frozen=True)
class KnownCrystals:
    """What a new crystal must not repeat: every crystal's insight vector and the pairs of documents each
    connects, of every session and in every review state; and the pairs of documents the notes link already
    (one names the other), which a crystal would only restate.
    """

    vectors: np.ndarray
    pairs: frozenset[frozenset[str]] = frozenset()
    linked: frozenset[frozenset[str]] = frozenset()


def _end(evidence: Evidence, locus_id: str | None) -> End | None:
    locus = evidence.loci.get(locus_id or "")
    if locus is None or not locus.node_id:
        return None
    chunks = tuple(evidence.chunks.get(locus.node_id, ()))
    documents = [c["document_id"] for c in chunks if c.get("document_id")]
    if not documents:
        return None
    node = evidence.nodes.get(locus.node_id, {})
    return End(
        locus.id,
        locus.node_id,
        locus.concept,
        documents[0],
        chunks[0].get("title"),
        node.get("domain") or (locus.domains[0] if locus.domains else None),
        chunks,
    )


def bridge(
    evidence: Evidence,
    related: Related,
    min_relatedness: float = 0.0,
    across: bool = False,
    avoid: frozenset[frozenset[str]] = frozenset(),
) -> Bridge | None:
    """The encounter among the resonance's that joins two different source documents with the most evidence
    of being related (a bridge across domains first, among those related at least ``min_relatedness``; only
    those with ``across``), leaving out the pairs of documents in ``avoid``; None when none joins two stored
    sources.
    """
    best: tuple[tuple[bool, float], Bridge] | None = None
    for residue in evidence.residues:
        a, b = _end(evidence, residue.from_locus_id), _end(evidence, residue.to_locus_id)
        if a is None or b is None or a.document_id == b.document_id:
            continue
        if frozenset((a.document_id, b.document_id)) in avoid:
            continue
        crosses = bool(a.domain and b.domain and a.domain != b.domain)
        if across and not crosses:
            continue
        strength = related(a.node_id, b.node_id)
        key = (strength >= min_relatedness and crosses, strength)
        if best is None or key > best[0]:
            best = (key, Bridge((a, b), residue, strength))
    return None if best is None else best[1]


def crystal_allowed(step_number: int, crystal_steps: Sequence[int], tuning: WanderTuning) -> bool:
    """Whether a walk may form a crystal at this step: at most one per ``crystal_every`` steps, counted both
    from the last one and over the whole walk, so a reviewer gets few and a burst never comes.
    """
    every = tuning.crystal_every
    if crystal_steps and step_number - max(crystal_steps) < every:
        return False
    return (len(crystal_steps) + 1) * every <= step_number


@dataclass
class CrystalAttempt:
    """A crystal, or why none was kept."""

    crystal: Crystal | None
    reason: str
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    asked_model: bool = False  # a model was asked; when not, the rules declined it and the step may try another


def ready_resonances(
    touched: Sequence[Resonance],
    locus_interest: float | None,
    last_attempt: Callable[[str], int | None],
    tuning: WanderTuning,
) -> list[Resonance]:
    """The confirmed resonances this step touched, strongest first, if the locus is interesting enough: those that
    recurred ``crystal_new_support`` more times since they last crystallized (or tried to).
    """
    if locus_interest is None or locus_interest < tuning.crystal_min_interest:
        return []

    def ready(r: Resonance) -> bool:
        if r.status != "confirmed":
            return False
        last = last_attempt(r.id)
        return last is None or r.occurrences - last >= tuning.crystal_new_support

    return sorted((r for r in touched if ready(r)), key=lambda r: -r.strength)


def first_crystal(
    resonances: Sequence[Resonance], attempt: Callable[[Resonance], CrystalAttempt]
) -> CrystalAttempt | None:
    """Try the resonances in order until one forms a crystal or asks a model (one model-backed attempt a step):
    a resonance the rules decline before any model is asked (its encounters are ungrounded or known pairs) gives
    way to the next, so one that keeps recurring without a new pair does not starve the others. The attempt
    returned carries the events of every try; None when there was no resonance to try.
    """
    events: list[tuple[str, dict[str, Any]]] = []
    last = None
    for resonance in resonances:
        last = attempt(resonance)
        events += last.events
        if last.crystal is not None or last.asked_model:
            break
    return None if last is None else replace(last, events=events)


def _supporting(chosen: Bridge) -> list[dict[str, Any]]:
    """``[{type, id, summary}]``: the residue of the encounter, its two loci and the raw chunks behind them,
    so the evidence of a crystal is exactly the two sources it connects.
    """
    residue = chosen.residue
    items: list[dict[str, Any]] = [
        {
            "type": "residue",
            "id": residue.id,
            "summary": shorten(residue.possibility or residue.connection or ", ".join(residue.themes), 30),
        }
    ]
    items += [{"type": "locus", "id": end.locus_id, "summary": shorten(end.name, 30)} for end in chosen.ends]
    items += [
        {
            "type": "node",
            "id": chunk["id"],
            "summary": shorten(str(chunk.get("text") or ""), 30),
            "document_id": chunk.get("document_id"),
        }
        for end in chosen.ends
        for chunk in end.chunks
    ]
    return items


def crystallize(
    resonance: Resonance,
    locus: Locus,
    evidence: Evidence,
    *,
    session_id: str | None,
    spending: Spending,
    embed: Embed,
    existing: KnownCrystals,
    related: Related,
    tuning: WanderTuning,
    min_relatedness: float = 0.0,
) -> CrystalAttempt:
    """State the insight the resonance points to between the two sources it best bridges, validate it, and keep
    it unless it repeats a crystal already formed; every way it can fail is a reason, never an exception.
    """
    attempt = {"resonance_id": resonance.id, "occurrences": resonance.occurrences, "locus_id": locus.id}

    def rejected(reason: str, asked_model: bool = False) -> CrystalAttempt:
        return CrystalAttempt(None, reason, [("wander.crystal.rejected", {**attempt, "reason": reason})], asked_model)

    across = tuning.crystal_across_domains
    chosen = bridge(evidence, related, min_relatedness, across, avoid=existing.pairs | existing.linked)
    if chosen is None:
        known = bridge(evidence, related, min_relatedness, across)
        if known is None:
            where = " in different domains" if across else ""
            return rejected(f"ungrounded: none of the resonance's encounters joins two stored source documents{where}")
        if known.documents in existing.pairs:
            return rejected(f"near-duplicate: a crystal already connects {known.named()}")
        return rejected(f"known link: the notes already link {known.named()}")
    if chosen.relatedness < min_relatedness:
        return rejected(f"weak bridge: {chosen.named()} are too little related (relatedness {chosen.relatedness:.2f})")
    texts = [str(c.get("text") or "") for end in chosen.ends for c in end.chunks[:1]]
    labels: list[str | None] = [end.domain for end in chosen.ends]
    reflections, reflection_labels = evidence.reflections(tuning.crystal_evidence)
    block = format_passages([*texts, *reflections], [*labels, *reflection_labels])
    draft = spending.ask(
        CRYSTALLIZE,
        {
            "themes": ", ".join(resonance.themes),
            "locus": locus.concept,
            "domains": ", ".join(locus.domains) or "unknown",
            "connects": chosen.named(),
            "evidence": block,
        },
        tier="cloud",
        purpose="wander_crystallize",
    )
    proposal = draft.value
    if proposal is None or not draft.ok:
        return rejected(f"crystallization failed: {draft.error}", asked_model=True)
    vector = embed([proposal.insight])[0]
    if len(existing.vectors):
        closest = float(np.max(existing.vectors @ vector))
        if closest >= tuning.duplicate_crystal:
            return rejected(f"near-duplicate of an existing crystal (similarity {closest:.2f})", asked_model=True)
    verdict = spending.ask(
        VALIDATE, {"insight": proposal.insight, "evidence": block}, tier="cloud", purpose="wander_validate"
    )
    judgement = verdict.value
    if judgement is None or not verdict.ok:
        return rejected(f"validation failed: {verdict.error}", asked_model=True)
    if not judgement.valid:
        return rejected(f"rejected by validation: {judgement.notes}", asked_model=True)
    end_domains = [end.domain for end in chosen.ends if end.domain]
    domains = list(dict.fromkeys([*end_domains, *proposal.domains, *locus.domains]))
    crystal = Crystal(
        insight=proposal.insight,
        embedding=vector,
        confidence=round((proposal.confidence + judgement.confidence) / 2, 4),
        actionability=proposal.actionability,
        domains=domains,
        session_id=session_id,
        source_resonance_id=resonance.id,
        source_locus_id=locus.id,
        supporting_evidence=_supporting(chosen),
        connects=[end.to_json() for end in chosen.ends],
        validated_by=verdict.model,
        validation_notes=judgement.notes,
    )
    payload = {
        **attempt,
        "crystal_id": crystal.id,
        "insight": crystal.insight,
        "confidence": crystal.confidence,
        "connects": [end.name for end in chosen.ends],
    }
    return CrystalAttempt(
        crystal,
        "formed",
        [
            ("wander.crystal.formed", payload),
            (
                "wander.crystal.validated",
                {**payload, "validated_by": verdict.model, "decision": "valid", "notes": judgement.notes},
            ),
        ],
        asked_model=True,
    )
