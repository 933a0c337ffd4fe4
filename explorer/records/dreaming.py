"""Records of dreaming (docs/dreaming.md): what each run reports, and the views of dreams, links and verdicts the
surfaces show.

A report's JSON form is every field as it stands (the CLI's ``--json``, the run's event, the API's answer, whose
schema pydantic reads from the dataclass itself); a night's adds the totals a person checks first. The engine,
the store's readers and the surfaces share them, so they live in the bottom layer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Annotated, Any, Literal

from explorer.records import Node, Relation, Verdict
from explorer.records.json_form import Computed, JsonForm, JsonRecord
from explorer.wording import counted

# How often the chronological loop dreams: at the end of each year, or of each month.
Every = Literal["year", "month"]


# Said when a mechanism found no fading memory: it starts from memories whose prominence has decayed (a fresh
# one is at 1.0), so on a knowledge base read today there is none until time passes, or a run is dated later.
NOTHING_FADING = (
    "no memory is fading yet: it starts from memories whose prominence has decayed since they were last read "
    "(a fresh one is at full prominence); dream as of a later date, or after some days"
)
BUDGET = "the budget ran out before the rest could be asked"


def _failed(failures: int) -> list[str]:
    return [f"the model failed on {counted(failures, 'item')} (see the errors)"] if failures else []


@dataclass
class JsonReport:
    """A report's counts as one JSON object (what ``--json`` prints)."""

    def to_json(self) -> dict[str, Any]:
        """Every field, as ``--json`` prints it and the run's event records it."""
        return asdict(self)


@dataclass
class ExplorationReport(JsonReport):
    """What a REM exploration did: its seed (to repeat it), the links it discovered and what failed."""

    seed: int | None = None
    eligible_memories: int = 0
    seeds_explored: int = 0
    candidates_judged: int = 0
    candidates_kept: int = 0  # the judge's keep rate is this of those judged
    discoveries: int = 0  # links made: a pair a judge kept twice is one
    dream_ids: list[str] = field(default_factory=list)  # the links it stored (``explorer dream show ID``)
    failures: int = 0
    model_calls: int = 0
    spent_cents: float = 0.0
    budget_exhausted: bool = False  # calls were refused: the budget could not cover them
    errors: list[str] = field(default_factory=list)

    def explain(self) -> list[str]:
        """Why it found nothing, or less than it could, in plain words (empty when there is nothing to say)."""
        if not self.eligible_memories:
            return [f"Exploration found no link: {NOTHING_FADING}."]
        why = _failed(self.failures) + ([BUDGET] if self.budget_exhausted else [])
        if not self.discoveries and self.candidates_judged:
            why.insert(0, f"the judge kept none of the {counted(self.candidates_judged, 'candidate')} it weighed")
        return [f"Exploration found {counted(self.discoveries, 'link')}: " + "; ".join(why) + "."] if why else []


@dataclass
class FusionReport(JsonReport):
    """What a fusion did: clusters found, fused or refused, and how many fading memories were superseded."""

    eligible_memories: int = 0
    clusters_found: int = 0
    clusters_fused: int = 0
    clusters_rejected: int = 0  # the model's summary was not shorter than its sources
    memories_superseded: int = 0
    dream_ids: list[str] = field(default_factory=list)  # the fused memories it stored (``explorer dream show ID``)
    failures: int = 0
    model_calls: int = 0
    spent_cents: float = 0.0
    budget_exhausted: bool = False  # calls were refused: the budget could not cover them
    errors: list[str] = field(default_factory=list)

    def explain(self) -> list[str]:
        """Why it fused nothing, or less than it found, in plain words (empty when there is nothing to say)."""
        if not self.eligible_memories:
            return [f"Fusion merged nothing: {NOTHING_FADING}."]
        if not self.clusters_found:
            fading = counted(self.eligible_memories, "fading memory", "fading memories")
            return [f"Fusion merged nothing: none of the {fading} is related to another of its category."]
        why = _failed(self.failures) + ([BUDGET] if self.budget_exhausted else [])
        if self.clusters_rejected:
            why.insert(
                0, f"{counted(self.clusters_rejected, 'summary', 'summaries')} came out no shorter than their sources"
            )
        done = f"Fusion merged {self.clusters_fused} of {counted(self.clusters_found, 'cluster')}: "
        return [done + "; ".join(why) + "."] if why else []


@dataclass
class RemReport(JsonReport):
    """What a REM cycle did: its seed and current year (to repeat it), dreams kept, dropped and failed."""

    seed: int | None = None
    current_year: int | None = None
    dreams_requested: int = 0
    dreams_stored: int = 0
    dreams_dropped: int = 0  # near-duplicates of known nodes, or judged to add nothing
    duplicates: int = 0  # of the dropped, the near-duplicates
    dream_ids: list[str] = field(default_factory=list)  # the dreams it stored (``explorer dream show ID``)
    failures: int = 0
    model_calls: int = 0
    spent_cents: float = 0.0
    budget_exhausted: bool = False  # calls were refused: the budget could not cover them
    errors: list[str] = field(default_factory=list)

    def explain(self) -> list[str]:
        """Why it stored fewer dreams than asked, in plain words (empty when it stored them all)."""
        if self.dreams_stored >= self.dreams_requested:
            return []
        why = []
        if self.duplicates:
            why.append(
                f"{counted(self.duplicates, 'dream')} repeated what the knowledge base holds already (a night over the "
                "same memories dreams the same; read new documents, or dream as of another date)"
            )
        if self.dreams_dropped > self.duplicates:
            empty = self.dreams_dropped - self.duplicates
            why.append(f"{counted(empty, 'dream')} added nothing to {'its' if empty == 1 else 'their'} sources")
        why += _failed(self.failures) + ([BUDGET] if self.budget_exhausted else [])
        unaccounted = self.dreams_requested - self.dreams_stored - self.dreams_dropped - self.failures
        if unaccounted > 0 and not self.budget_exhausted:
            why.append(f"no further set of distant memories was found for {counted(unaccounted, 'dream')}")
        asked = f"The REM cycle stored {self.dreams_stored} of {counted(self.dreams_requested, 'dream')} asked: "
        return [asked + "; ".join(why) + "."]


@dataclass
class CycleReport(JsonRecord):
    """One night's three reports, with the totals a person checks first."""

    exploration: ExplorationReport
    fusion: FusionReport
    rem: RemReport

    def explain(self) -> list[str]:
        """Why each mechanism of the night did less than it could, in plain words."""
        return self.exploration.explain() + self.fusion.explain() + self.rem.explain()

    @property
    def model_calls(self) -> int:
        """The night's model calls, all three mechanisms together (what it cost)."""
        return self.exploration.model_calls + self.fusion.model_calls + self.rem.model_calls

    @property
    def failures(self) -> int:
        """The night's failures, all three mechanisms together (whether to look at the errors)."""
        return self.exploration.failures + self.fusion.failures + self.rem.failures

    @property
    def spent_cents(self) -> float:
        """The night's spending, all three mechanisms together."""
        return round(self.exploration.spent_cents + self.fusion.spent_cents + self.rem.spent_cents, 6)

    # as ``explorer dream cycle --json`` prints it: each mechanism's report, then the totals; the budget ran out
    # if it did by the last of the three
    json_form = JsonForm(
        "CycleJson",
        "exploration",
        "fusion",
        "rem",
        "model_calls",
        "failures",
        "spent_cents",
        Computed("budget_exhausted", bool, attrgetter("rem.budget_exhausted")),
    )


CycleJson = Annotated[dict[str, Any], CycleReport.json_form]


@dataclass
class PeriodReport:
    """What the chronological loop read in one period, and what the dream at its end kept."""

    period: str  # "2008", "2008-03" or "undated"
    documents_added: int = 0
    documents_skipped: int = 0
    dreamt: bool = False  # False: nothing new was read, the period is undated, or too little to dream over
    dreams_stored: int = 0
    dreams_dropped: int = 0
    failures: int = 0


@dataclass
class ChronoReport(JsonReport):
    """The whole chronological run: documents read, dreams kept, and each period's own report."""

    every: Every = "year"
    documents_added: int = 0
    documents_skipped: int = 0
    chunks_added: int = 0
    dreams_stored: int = 0
    dreams_dropped: int = 0
    failures: int = 0
    model_calls: int = 0  # the dreams' calls; the READING cycle's are in the call log
    spent_cents: float = 0.0  # reading and dreaming together
    budget_exhausted: bool = False
    periods: list[PeriodReport] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)


# What a dream is, by the mechanism that made it: a REM cycle's dream node, a link REM exploration discovered
# (an EXTENDS relation), or a fused memory.
DreamKind = Literal["rem", "exploration", "fusion"]
DREAM_KINDS: tuple[DreamKind, ...] = ("rem", "exploration", "fusion")


@dataclass(frozen=True)
class DreamSource(JsonRecord):
    """A memory a dream came from: its node's id, and its document's title when it is a document's passage."""

    id: str
    title: str | None

    json_form = JsonForm("DreamSourceJson", "id", "title")


@dataclass(frozen=True)
class Dream(JsonRecord):
    """A dream as every surface reads it, whatever made it: a REM cycle's dream (``rem``), a link REM exploration
    discovered (``exploration``: its text is the judge's connection) or a fused memory (``fusion``), with the
    memories it came from.
    """

    id: str
    kind: DreamKind
    title: str  # a line to tell it by: a REM dream's question, a link's two ends, a fused memory's first words
    text: str
    confidence: float
    sources: list[DreamSource]
    created: datetime | None

    json_form = JsonForm(
        "DreamJson",
        "id",
        "kind",
        "title",
        "text",
        Computed("confidence", float, lambda dream: round(dream.confidence, 4)),
        "sources",
        "created",
        note="`id` is a node's id for rem and fusion, a relation's for exploration; `dream show` takes either, or "
        "its first digits (from 4).",
    )


DreamJson = Annotated[dict[str, Any], Dream.json_form]


@dataclass(frozen=True)
class DreamView:
    """A stored dream with the nodes it was dreamt from."""

    dream: Node
    question: str | None
    sources: list[Node]


@dataclass(frozen=True)
class DiscoveryView:
    """An EXTENDS relation found by REM exploration, with both endpoints."""

    relation: Relation
    seed: Node
    neighbor: Node
    created_at: datetime | None = None


@dataclass
class VerdictView:
    """A judge's verdict with the two memories it weighed."""

    verdict: Verdict
    seed: Node
    candidate: Node
