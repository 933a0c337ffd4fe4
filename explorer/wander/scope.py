"""Stage 2: what a session may visit.

The fence is the region within ``max_drift_distance`` (cosine distance) of the
seed or of any *include* anchor, minus a ball of ``exclude_radius`` around each
*exclude* anchor; a convex hull is meaningless in 384 dimensions, a union of
balls is not. Domains are matched case-insensitively; a candidate with no known
domain passes an allow-list only when there is none.
"""

from __future__ import annotations

import numpy as np

from explorer.records.wander import Adjacency, Session
from explorer.wander.config import WanderTuning


def _centres(session: Session) -> np.ndarray:
    centres = [session.seed_embedding] + [a.embedding for a in session.fence if a.action == "include"]
    return np.vstack([c for c in centres if c is not None])


def drift(vector: np.ndarray, session: Session) -> float:
    """Cosine distance from the nearest centre of the fence (the seed or an include anchor)."""
    return float(1.0 - np.max(_centres(session) @ vector))


def exclusion(vector: np.ndarray, session: Session, tuning: WanderTuning) -> tuple[str, float] | None:
    """The exclude anchor ``vector`` is nearest to, with its distance, when there is one."""
    anchors = [a for a in session.fence if a.action == "exclude"]
    if not anchors:
        return None
    distances = 1.0 - np.vstack([a.embedding for a in anchors]) @ vector
    nearest = int(np.argmin(distances))
    return anchors[nearest].concept, float(distances[nearest])


def rejection(candidate: Adjacency, session: Session, tuning: WanderTuning) -> str | None:
    """Why the candidate is out of scope, or None when it may be visited."""
    domains = {d.lower() for d in candidate.domains}
    if session.forbidden_domains and domains & {d.lower() for d in session.forbidden_domains}:
        return "forbidden domain"
    if session.allowed_domains and not domains & {d.lower() for d in session.allowed_domains}:
        return "outside the allowed domains"
    excluded = exclusion(candidate.embedding, session, tuning)
    if excluded and excluded[1] < tuning.exclude_radius:
        return f"fenced out near {excluded[0]!r}"
    if drift(candidate.embedding, session) > session.max_drift_distance:
        return "past the drift limit"
    return None


def outside(vector: np.ndarray, session: Session, tuning: WanderTuning) -> bool:
    """Whether a point lies past the fence: beyond the drift limit or inside an excluded zone."""
    excluded = exclusion(vector, session, tuning)
    return drift(vector, session) > session.max_drift_distance or bool(excluded and excluded[1] < tuning.exclude_radius)


def approaching(vector: np.ndarray, session: Session, tuning: WanderTuning) -> str | None:
    """A warning when a visited point is near the edge of the fence, else None."""
    distance = drift(vector, session)
    if distance > tuning.fence_warning * session.max_drift_distance:
        return f"drift {distance:.2f} of at most {session.max_drift_distance:.2f}"
    excluded = exclusion(vector, session, tuning)
    if excluded and excluded[1] < tuning.exclude_radius / tuning.fence_warning:
        return f"{excluded[1]:.2f} from the excluded {excluded[0]!r}"
    return None


def attractor_pull(vector: np.ndarray, session: Session) -> float:
    """How much a candidate leans toward the session's attractor (0 without one), so the walk can drift there."""
    if session.attractor_embedding is None:
        return 0.0
    return max(0.0, float(session.attractor_embedding @ vector))
