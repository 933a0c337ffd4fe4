"""The demo: the sample corpus in a database, the map fitted, a seeded walk to a human checkpoint (resonances
formed, crystals waiting for review), a few dreams and a consolidation, so a first-time visitor sees every page
with something on it.

Each part is done once: a later preparation finds it in the database and skips it. ``explorer demo`` runs
:func:`prepare` as a background job while the app is already open; ``explorer demo --no-app`` runs it in the
foreground.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explorer.consolidation import service as consolidation
from explorer.dreaming import service as dreaming
from explorer.dreaming.service import DreamingError
from explorer.projection import place_new, update_projection
from explorer.reading.ingest import ingest_paths
from explorer.records import Progress, in_phase
from explorer.records.wander import ReviewState
from explorer.runtime import Runtime
from explorer.views import latest_consolidation
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig
from explorer.wording import counted

SAMPLE_DATA = Path(__file__).resolve().parents[1] / "sample_data"
# The corpus is the sample's folders; the licences and the README beside them (sample_data/LICENSES.md) say
# where it comes from and are not part of it (read with it, the licence text filled the Corpus table's first rows
# and one of the demo's dreams).
CORPUS = tuple(sorted(folder for folder in SAMPLE_DATA.iterdir() if folder.is_dir()))
SESSION = SessionConfig(
    name="Demo: a language that changes and stays itself",
    seed_concept="how a programming language changes over the years while keeping its character",
    random_seed=7,
    human_checkpoint_frequency=18,  # the walk stops at step 18 and waits for a person
)
DREAMS = 3
JOB_KIND = "demo.prepare"  # the background job of the preparation (explorer.jobs.kinds)
# The parts in order, as progress names them; the first reports per document, the others per item of their own.
PHASES = ("reading the sample corpus", "fitting the map", "walking", "dreaming", "consolidating")


def demo_session(runtime: Runtime) -> str | None:
    """The demo session's id, once it exists."""
    found = [s for s in wander.list_sessions(runtime, limit=500) if s.name == SESSION.name]
    return found[0].id if found else None


def is_ready(runtime: Runtime) -> bool:
    """Whether every part is there (consolidation, the last part, needs the others' output)."""
    return demo_session(runtime) is not None and latest_consolidation(runtime) is not None


def prepare(
    runtime: Runtime, progress: Progress | None = None, say: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """Whatever of the demo is missing, in order; ``progress`` hears each part's phases under the part's name
    ("1/5 reading: embedding") and ``say`` one line per finished part. Returns the demo session's id and the
    seconds it took.
    """
    started = time.perf_counter()

    def phase(number: int) -> Progress | None:
        return in_phase(progress, f"{number + 1}/{len(PHASES)} {PHASES[number]}")

    reading = phase(0)
    report = ingest_paths(runtime, CORPUS, progress=reading)
    if report.documents_added:
        say(f"ingested {report.documents_added} documents, {report.chunks_added} chunks")
    update_projection(runtime, progress=phase(1))
    session_id = demo_session(runtime) or _walk(runtime, phase(2), say)
    if not dreaming.recent_dreams(runtime, limit=1):
        try:
            dreamt = dreaming.run_rem(runtime, dreams=DREAMS, seed=7, progress=phase(3))
            say(f"dreamt {counted(dreamt.dreams_stored, 'dream')}")
        except DreamingError as exc:
            say(f"no dreams: {exc}")
    if latest_consolidation(runtime) is None:
        ran = consolidation.run_consolidation(runtime, "all", progress=phase(4)).to_json()
        say(f"consolidated: {ran['status']}, {counted(len(ran.get('patterns', [])), 'pattern')}")
    place_new(runtime)
    runtime.calls.flush()
    return {"session_id": session_id, "seconds": round(time.perf_counter() - started, 1)}


def _walk(runtime: Runtime, progress: Progress | None, say: Callable[[str], None]) -> str:
    """The demo session, walked to its checkpoint with a crystal waiting for review."""
    session = wander.create_session(runtime, SESSION)
    result = wander.run(runtime, session.id, SESSION.human_checkpoint_frequency, progress=progress)
    say(
        f"walked {counted(result.steps_completed, 'step')}, {counted(result.crystals_formed, 'crystal')} formed"
        + (f"; {result.stopped_reason}" if result.stopped_reason else "")
    )
    crystals = wander.list_crystals(runtime, session_id=session.id)
    if not any(c.review_state is ReviewState.PENDING for c in crystals):
        attempt = wander.crystallize(runtime, session.id)
        say("crystallized at the last locus" if attempt.crystal else f"no crystal yet: {attempt.reason}")
    return session.id
