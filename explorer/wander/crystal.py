"""Stage 7: crystallize where a confirmed resonance meets an interesting locus.

The model states the insight from the resonance's evidence (its residues, the
loci they were left at and the corpus nodes behind those loci); a second prompt
validates it before it is kept, and an insight too close to an existing
crystal (cosine above ``duplicate_crystal``) is not kept twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.prompts import format_passages
from explorer.prompts.wander import CRYSTALLIZE, VALIDATE
from explorer.records.wander import Crystal, Locus, Residue, Resonance
from explorer.text import shorten
from explorer.wander.config import WanderTuning
from explorer.wander.guards import Spending

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass
class Evidence:
    """What supports a resonance: its residues (newest last), their loci, and the nodes behind those loci."""

    residues: list[Residue]
    loci: dict[str, Locus]
    nodes: dict[str, dict[str, Any]]

    def passages(self, limit: int) -> tuple[list[str], list[str | None]]:
        """The evidence as (text, domain) passages for the prompts: the newest reflections, then node excerpts."""
        texts: list[str] = []
        labels: list[str | None] = []
        for residue in self.residues[-limit:]:
            locus = self.loci.get(residue.to_locus_id)
            label = ", ".join(locus.domains) if locus and locus.domains else None
            reflection = " ".join(x for x in (residue.connection, residue.possibility) if x)
            if reflection:
                texts.append(reflection)
                labels.append(label)
        for node in list(self.nodes.values())[: max(1, limit // 2)]:
            texts.append(shorten(node["text"], 80))
            labels.append(node.get("domain"))
        return texts, labels

    def supporting(self, limit: int) -> list[dict[str, Any]]:
        """``[{type, id, summary}]`` for every residue, locus and node that exists."""
        items: list[dict[str, Any]] = []
        for residue in self.residues[-limit:]:
            items.append(
                {
                    "type": "residue",
                    "id": residue.id,
                    "summary": shorten(residue.possibility or residue.connection or ", ".join(residue.themes), 30),
                }
            )
        seen: set[str] = set()
        for residue in self.residues[-limit:]:
            locus = self.loci.get(residue.to_locus_id)
            if locus and locus.id not in seen:
                seen.add(locus.id)
                items.append({"type": "locus", "id": locus.id, "summary": shorten(locus.concept, 30)})
        for node_id, node in self.nodes.items():
            items.append({"type": "node", "id": node_id, "summary": shorten(node["text"], 30)})
        return items


@dataclass
class CrystalAttempt:
    """A crystal, or why none was kept."""

    crystal: Crystal | None
    reason: str
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def pick_resonance(
    touched: Sequence[Resonance],
    locus_interest: float | None,
    last_attempt: Callable[[str], int | None],
    tuning: WanderTuning,
) -> Resonance | None:
    """The strongest confirmed resonance this step touched, if the locus is interesting enough and the
    resonance recurred ``crystal_new_support`` more times since it last crystallized (or tried to).
    """
    if locus_interest is None or locus_interest < tuning.crystal_min_interest:
        return None

    def ready(r: Resonance) -> bool:
        if r.status != "confirmed":
            return False
        last = last_attempt(r.id)
        return last is None or r.occurrences - last >= tuning.crystal_new_support

    return max((r for r in touched if ready(r)), key=lambda r: r.strength, default=None)


def crystallize(
    resonance: Resonance,
    locus: Locus,
    evidence: Evidence,
    *,
    session_id: str | None,
    spending: Spending,
    embed: Embed,
    existing: np.ndarray,
    tuning: WanderTuning,
) -> CrystalAttempt:
    """State the insight the resonance points to at this locus, validate it, and keep it unless it repeats a
    crystal already formed; every way it can fail is a reason, never an exception.
    """
    attempt = {"resonance_id": resonance.id, "occurrences": resonance.occurrences, "locus_id": locus.id}

    def rejected(reason: str) -> CrystalAttempt:
        return CrystalAttempt(None, reason, [("wander.crystal.rejected", {**attempt, "reason": reason})])

    texts, labels = evidence.passages(tuning.crystal_evidence)
    block = format_passages(texts, labels)
    draft = spending.ask(
        CRYSTALLIZE,
        {
            "themes": ", ".join(resonance.themes),
            "locus": locus.concept,
            "domains": ", ".join(locus.domains) or "unknown",
            "evidence": block,
        },
        tier="cloud",
        purpose="wander_crystallize",
    )
    proposal = draft.value
    if proposal is None or not draft.ok:
        return rejected(f"crystallization failed: {draft.error}")
    vector = embed([proposal.insight])[0]
    if len(existing):
        closest = float(np.max(existing @ vector))
        if closest > tuning.duplicate_crystal:
            return rejected(f"near-duplicate of an existing crystal (similarity {closest:.2f})")
    verdict = spending.ask(
        VALIDATE, {"insight": proposal.insight, "evidence": block}, tier="cloud", purpose="wander_validate"
    )
    judgement = verdict.value
    if judgement is None or not verdict.ok:
        return rejected(f"validation failed: {verdict.error}")
    if not judgement.valid:
        return rejected(f"rejected by validation: {judgement.notes}")
    evidence_domains = (d for other in evidence.loci.values() for d in other.domains)
    domains = list(dict.fromkeys([*proposal.domains, *locus.domains, *evidence_domains]))
    crystal = Crystal(
        insight=proposal.insight,
        embedding=vector,
        confidence=round((proposal.confidence + judgement.confidence) / 2, 4),
        actionability=proposal.actionability,
        domains=domains,
        session_id=session_id,
        source_resonance_id=resonance.id,
        source_locus_id=locus.id,
        supporting_evidence=evidence.supporting(tuning.crystal_evidence),
        validated_by=verdict.model,
        validation_notes=judgement.notes,
    )
    payload = {**attempt, "crystal_id": crystal.id, "insight": crystal.insight, "confidence": crystal.confidence}
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
    )
