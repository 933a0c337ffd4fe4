"""Wander's engine API, shared by the CLI and the app.

Every function takes the :class:`~explorer.runtime.Runtime` first. Reads and
model calls happen inside one ``db.connect()`` unit; each change is written in
one transaction, with its events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from explorer.runtime import Runtime
from explorer.wander.config import SessionConfig, WanderTuning
from explorer.wander.records import (
    Crystal, CrystalEvidence, Resonance, RunResult, SearchHit, Session, SessionView, StepResult,
)

Progress = Callable[[int, int, str], None]
TUNING = WanderTuning()


def create_session(runtime: Runtime, config: SessionConfig, tuning: WanderTuning = TUNING) -> Session:
    """A new active session standing at its seed locus."""
    raise NotImplementedError


def get_session(runtime: Runtime, session_id: str) -> Session:
    """The session, or :class:`SessionNotFound`."""
    raise NotImplementedError


def list_sessions(runtime: Runtime, status: str | None = None, limit: int = 50, offset: int = 0) -> list[Session]:
    raise NotImplementedError


def update_session(runtime: Runtime, session_id: str, **fields: Any) -> Session:
    """Change name, constraints, budget, temperature, checkpoint frequency or max steps (status via pause/resume/stop)."""
    raise NotImplementedError


def delete_session(runtime: Runtime, session_id: str) -> None:
    """The session and all it owns; its crystals stay with session_id NULL."""
    raise NotImplementedError


def pause(runtime: Runtime, session_id: str, reason: str | None = None) -> Session:
    raise NotImplementedError


def resume(runtime: Runtime, session_id: str) -> Session:
    raise NotImplementedError


def stop(runtime: Runtime, session_id: str) -> Session:
    """Marks the session completed."""
    raise NotImplementedError


def step(runtime: Runtime, session_id: str, tuning: WanderTuning = TUNING) -> StepResult:
    raise NotImplementedError


def run(runtime: Runtime, session_id: str, steps: int, progress: Progress | None = None,
        tuning: WanderTuning = TUNING) -> RunResult:
    raise NotImplementedError


def inject(runtime: Runtime, session_id: str, concept: str, force_visit: bool = True) -> "Locus":
    raise NotImplementedError


def fence(runtime: Runtime, session_id: str, concept: str, action: str) -> Session:
    raise NotImplementedError


def crystallize(runtime: Runtime, session_id: str, tuning: WanderTuning = TUNING) -> Crystal | None:
    raise NotImplementedError


def review_crystal(runtime: Runtime, crystal_id: str, decision: str, notes: str | None = None,
                   reviewer: str | None = None) -> Crystal:
    raise NotImplementedError


def invalidate_resonance(runtime: Runtime, resonance_id: str) -> Resonance:
    raise NotImplementedError


def search(runtime: Runtime, query: str, types: Sequence[str] = ("locus", "crystal", "resonance"),
           limit: int = 10) -> list[SearchHit]:
    raise NotImplementedError


def session_view(runtime: Runtime, session_id: str) -> SessionView:
    raise NotImplementedError


def list_crystals(runtime: Runtime, status: str | None = None, min_confidence: float | None = None,
                  session_id: str | None = None) -> list[Crystal]:
    raise NotImplementedError


def list_resonances(runtime: Runtime, session_id: str | None = None, status: str | None = None) -> list[tuple[Resonance, float]]:
    raise NotImplementedError


def crystal_evidence(runtime: Runtime, crystal_id: str) -> CrystalEvidence:
    raise NotImplementedError
