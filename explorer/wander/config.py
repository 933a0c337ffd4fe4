"""Defaults of Wander, in one place.

:class:`SessionConfig` is what a person chooses for a session (docs/wander.md#sessions);
:class:`WanderTuning` holds the algorithm's constants, which sessions share (docs/wander.md#tuning). Both are
frozen: override field by field with ``dataclasses.replace``. :data:`SESSION_LIMITS` says what each number of a
session may be, as :class:`Bounds` (plain numbers, which the API's schema shows too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from explorer.wander.errors import InvalidRequest

MAX_SEED = 2**32 - 1  # the walk's random generators take a 32-bit seed; a larger one would repeat a smaller one's walk
STEPS_PER_RUN = 10_000  # the most steps one run of a walk takes (a wander.run job); more is another run


@dataclass(frozen=True)
class Bounds:
    """The range a number may take: from ``low`` (above it, when ``open_low``) to ``high``.

    Plain numbers, so the engine's check, the API's schema (which shows them to a generated client) and the words
    of a refusal all read the same two.
    """

    low: float
    high: float
    open_low: bool = False  # above low, not at it
    low_means: str = ""  # what the lowest value means, said beside it ("never")
    unit: str = ""  # what the number is, said after the range ("a cosine distance")

    def admits(self, value: float) -> bool:
        """Whether ``value`` is within the bounds (NaN never is: every comparison with it is false)."""
        above = value > self.low if self.open_low else value >= self.low
        return above and value <= self.high

    @property
    def rule(self) -> str:
        """The bounds as a person reads them: "from 1 to 1000000", "above 0 and at most 2 (a cosine distance)"."""
        low = f"{self.low} ({self.low_means})" if self.low_means else f"{self.low}"
        words = f"above {low} and at most {self.high}" if self.open_low else f"from {low} to {self.high}"
        return f"{words} ({self.unit})" if self.unit else words


# What each number of a session may be. Checked when a session is configured and when one is edited, so every
# surface refuses the same values with the same words; the API's schema states them.
SESSION_LIMITS: dict[str, Bounds] = {
    "max_drift_distance": Bounds(0, 2, open_low=True, unit="a cosine distance"),
    "max_steps": Bounds(1, 1_000_000),
    "cloud_budget_cents": Bounds(0, 10_000_000),
    "temperature": Bounds(0, 10, open_low=True),
    "human_checkpoint_frequency": Bounds(0, 1_000_000, low_means="never"),
    "random_seed": Bounds(0, MAX_SEED),
}


def check_session_numbers(values: Mapping[str, Any]) -> None:
    """Refuse, as :class:`InvalidRequest`, any number of a session outside :data:`SESSION_LIMITS` (None is unset).

    NaN and infinities are refused too: a comparison with NaN is false, and no limit above is infinite.
    """
    for name, bounds in SESSION_LIMITS.items():
        value = values.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not bounds.admits(value):
            raise InvalidRequest(f"{name.replace('_', ' ')} must be {bounds.rule}, not {value}")


@dataclass(frozen=True)
class SessionConfig:
    """What a new session is made of. ``random_seed`` None draws one (and stores it, so the run can be replayed)."""

    seed_concept: str
    name: str | None = None
    attractor: str | None = None
    allowed_domains: tuple[str, ...] | None = None
    forbidden_domains: tuple[str, ...] | None = None
    max_drift_distance: float = 0.8
    max_steps: int = 1000
    cloud_budget_cents: int = 500
    temperature: float = 0.7
    human_checkpoint_frequency: int = 50  # 0: never pause for review
    random_seed: int | None = None

    def __post_init__(self) -> None:
        check_session_numbers({f.name: getattr(self, f.name) for f in fields(self)})


@dataclass(frozen=True)
class WanderTuning:
    """Constants of the step (docs/wander.md#tuning) and of the guard rails."""

    # 1. adjacencies
    band_low: float = 0.3  # cosine distance band of distance-band sampling
    band_high: float = 0.7
    band_samples: int = 6
    bridge_candidates: int = 3
    analogies: int = 3
    analogy_sources: int = 4  # passages from other domains shown to the analogy prompt
    analogy_grounding: float = 0.5  # cosine an analogy needs to the stored node it leads to
    tension_candidates: int = 2
    tension_pool: int = 64  # nearest items among which tensions are sought
    path_memory: int = 5  # recent loci that define "where we were heading"
    remember_candidates: int = 5  # best candidates kept as loci each step (the chosen one included)
    failed_path_penalty: float = 0.5  # interestingness factor near a path that led nowhere
    failed_path_radius: float = 0.1  # cosine distance counted as "near"
    # 2. scope
    exclude_radius: float = 0.35  # cosine distance around an exclude anchor that is cut out
    fence_warning: float = 0.95  # share of the drift limit at which the fence is "approached"
    attractor_weight: float = 0.15
    # 3. composite score, fed by evidence of relatedness
    # relatedness = kinship of the sources, (cosine + lexical_weight·shared words) / (1 + lexical_weight),
    # + r_linked·(how strongly a relation links them) + r_entities·(shared entities), at most 1
    lexical_weight: float = 1.0  # distinctive words count as much as meaning (as explorer.affinity weighs them)
    r_linked: float = 0.05
    r_entities: float = 0.025
    # What a relation between two sources says about them: MENTIONS (one names the other) and UPDATES (one
    # revises the other) are claims; EXTENDS is mostly reading's "close to what was known", which the cosine
    # already counts; DERIVES is provenance (a synthesis and what it was read against), no claim at all. LINKS (a
    # vault's [[wikilink]]) is the person's own claim.
    link_weights: tuple[tuple[str, float], ...] = (
        ("MENTIONS", 1.0),
        ("LINKS", 1.0),
        ("UPDATES", 1.0),
        ("EXTENDS", 0.2),
    )
    entities_for_full: float = 2.0  # shared entities that count fully
    relatedness_share: float = 0.7  # of interestingness; the rest is the node's importance (or a visit's rating)
    seen_domain_bridge: float = 0.8  # a bridge to a domain the walk has seen counts this much of a new one
    strong_bridges_per_note: float = 0.42  # a step to another domain needs the relatedness of the corpus's
    # strongest cross-domain pairs, this many per note (see selection.strong_bridge_line), else it is dropped
    score_sharpness: float = 8.0  # softmax over sharpness·score/temperature (see selection.softmax_select)
    w_interestingness: float = 0.3
    w_novelty: float = 0.3
    w_bridge: float = 0.2
    w_uncertainty: float = 0.2
    # 5. dwelling and model choice
    recent_themes: int = 10
    active_resonances: int = 5
    cloud_share: float = 0.2  # target share of dwelling calls that go to the cloud (~80% local)
    cloud_min_score: float = 0.6  # only high-value encounters earn a cloud call
    budget_low_share: float = 0.8
    exhausted_action: str = "offline"  # with no local model once the budget is spent: "offline" or "pause"
    # 6. resonance
    resonance_match: float = 0.72  # cosine between residue themes and a resonance
    resonance_max_matches: int = 3
    reinforce_gain: float = 1.0
    max_strength: float = 10.0
    decay_rate: float = 0.1  # 10% a day
    confirm_occurrences: int = 3
    confirm_strength: float = 2.5
    invalidate_strength: float = 0.2
    # 7. crystallization
    crystal_min_interest: float = 0.5
    crystal_evidence: int = 6
    crystal_every: int = 15  # at most one crystal per this many steps of a walk
    crystal_across_domains: bool = True  # a crystal connects notes of two domains (what a search would not join)

    duplicate_crystal: float = 0.9  # cosine to any crystal at which a new insight is a duplicate
    crystal_new_support: int = 3  # residues a resonance must gather before it crystallizes again
    # 9. memory
    hot_memory_limit: int = 20
    hot_memory_keep: int = 5
    failed_path_interest: float = 0.3
    warm_ttl_days: float = 30.0
    # guard rails
    failure_trip: int = 3  # consecutive steps with a failed dwelling
    loop_window: int = 12
    loop_distinct: int = 3  # fewer distinct loci than this in the window is a loop
    loop_max_period: int = 4  # a cycle of up to this many loci gone round ...
    loop_repeats: int = 2  # ... this many times in a row is a loop (A-B-A-B: period 2, twice)
    fence_trip: int = 3  # consecutive steps past the fence (nowhere inside it to go)
