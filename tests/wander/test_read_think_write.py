"""A step reads, thinks with the database file free, then writes: another process can use the file while the
model thinks, and a session that changed meanwhile does not get a stale step written into it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from explorer.prompts import Prompt
from explorer.runtime import Runtime
from explorer.store import corpus as corpus_store
from explorer.store import leases
from explorer.store.database import Database, DatabaseUnavailable
from explorer.wander import service
from explorer.wander.errors import SessionStateError

from .conftest import new_session

# Another process opens the file read-write and writes: DuckDB refuses at once while this process holds it.
OTHER_PROCESS = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE IF NOT EXISTS probe (x INTEGER)")
con.execute("INSERT INTO probe VALUES (1)")
print(con.execute("SELECT count(*) FROM probe").fetchone()[0])
"""


class ThinkingProbe:
    """Stands in front of the offline answerer: records, at every model call, whether the file was held, and
    lets a second process write to the file during the first call (and, optionally, runs ``meanwhile``).
    """

    def __init__(self, runtime: Runtime, meanwhile: Any = None):
        self.runtime = runtime
        self.inner = runtime.gateway.offline
        self.meanwhile = meanwhile
        self.held: list[bool] = []
        self.other_process: list[subprocess.CompletedProcess[str]] = []

    def answer(self, prompt: Prompt[Any], fields: dict[str, Any]) -> str:
        self.held.append(self.runtime.db.held)
        if len(self.held) == 1:
            if isinstance(self.runtime.db, Database):  # a server has no file for another process to open
                self.other_process.append(
                    subprocess.run(
                        [sys.executable, "-c", OTHER_PROCESS, str(self.runtime.db.path)],
                        capture_output=True,
                        text=True,
                        timeout=60,
                    )
                )
            if self.meanwhile is not None:
                self.meanwhile()
        return self.inner.answer(prompt, fields)


@pytest.fixture
def offline_runtime(corpus_copy: Path, make_runtime: Any) -> Runtime:
    return make_runtime(db=corpus_copy)


@pytest.mark.duckdb_only("another process writes to the file while the model thinks")
def test_no_connection_is_held_while_the_model_thinks(offline_runtime: Runtime) -> None:
    s = new_session(offline_runtime)
    probe = ThinkingProbe(offline_runtime)
    offline_runtime.gateway.offline = probe
    result = service.run(offline_runtime, s.id, 3)
    assert result.steps_completed == 3
    assert probe.held and not any(probe.held), "a model call ran while this process held the database file"
    (other,) = probe.other_process
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == "1"
    assert service.get_session(offline_runtime, s.id).step_count == 3


def test_a_session_paused_while_the_model_thinks_gets_no_stale_step(offline_runtime: Runtime) -> None:
    s = new_session(offline_runtime)
    probe = ThinkingProbe(offline_runtime, meanwhile=lambda: service.pause(offline_runtime, s.id, "a person paused"))
    offline_runtime.gateway.offline = probe
    with pytest.raises(SessionStateError, match="became paused while this step was thinking"):
        service.step(offline_runtime, s.id)
    after = service.session_view(offline_runtime, s.id)
    assert after.session.step_count == 0 and after.trace == [] and after.session.status == "paused"
    service.resume(offline_runtime, s.id)
    offline_runtime.gateway.offline = probe.inner
    assert service.step(offline_runtime, s.id).step_number == 1


@pytest.mark.duckdb_only("counts how often the file is attached")
def test_a_walk_opens_the_file_once_a_step(offline_runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the file is most of a step's cost at scale: a walk writes one step and reads the next in one
    opening, and reads node texts from memory while it thinks.
    """
    s = new_session(offline_runtime)
    service.step(offline_runtime, s.id)  # the corpus and the session's loci are in memory from here on
    offline_runtime.flush()
    for buffer in (offline_runtime.calls, offline_runtime.vectors):  # written at the end, not when 2 s old
        buffer.max_age_s = 3600
    db = offline_runtime.db
    opened = 0
    attach = db._attach

    def counting() -> str:
        nonlocal opened
        opened += 1
        return attach()

    monkeypatch.setattr(db, "_attach", counting)
    # The embedding cache reads the file for a text it has not seen (flushing the vectors it holds first): a
    # walk over stored nodes meets new sentences, and that is the embedder's reading, not the walk's.
    misses = 0
    cached = corpus_store.cached_embeddings

    def counted_misses(*args: Any, **kwargs: Any) -> Any:
        nonlocal misses
        misses += 1
        return cached(*args, **kwargs)

    monkeypatch.setattr(corpus_store, "cached_embeddings", counted_misses)
    result = service.run(offline_runtime, s.id, 6)
    assert result.steps_completed == 6
    # the session check, the first read, one opening a step, and the buffered call log, vectors and log
    # checkpoint at the end
    assert opened - 2 * misses <= 1 + 1 + 6 + 3, (opened, misses)
    assert not Path(f"{db.path}.wal").exists()  # the walk ends with the file complete on its own


def test_a_crystallization_is_not_kept_when_the_session_was_paused_while_it_thought(
    offline_runtime: Runtime, make_runtime: Any
) -> None:
    """A forced crystallization re-checks the session before it writes, as a step does: a person pausing the
    walk while the model states the insight leaves nothing of the attempt but what its calls cost, which the
    session is charged (they were made).
    """
    s = new_session(offline_runtime)
    service.run(offline_runtime, s.id, 2)  # resonances to crystallize
    other = make_runtime(db=offline_runtime.settings.db_path)
    before = service.get_session(other, s.id)
    probe = ThinkingProbe(offline_runtime, meanwhile=lambda: service.pause(other, s.id, "a person paused"))
    offline_runtime.gateway.offline = probe
    with pytest.raises(SessionStateError, match="became paused while this crystallization was thinking"):
        service.crystallize(offline_runtime, s.id)
    assert probe.held and not any(probe.held), "a model call ran while this process held the database file"
    after = service.get_session(offline_runtime, s.id)
    assert after.offline_calls == before.offline_calls + len(probe.held), "the attempt's calls were not charged"
    assert service.list_crystals(offline_runtime, session_id=s.id) == []
    assert [e.subject for e in service.session_events(offline_runtime, s.id) if e.payload.get("forced")] == []


def test_a_second_stepper_is_refused_before_it_asks_a_model(offline_runtime: Runtime, make_runtime: Any) -> None:
    """While one process thinks on a session's step, another's step or crystallization is refused at once,
    having asked no model and spent nothing; the first one's step is kept, and its lease goes with its write.
    """
    s = new_session(offline_runtime)
    service.run(offline_runtime, s.id, 2)
    other = make_runtime(db=offline_runtime.settings.db_path)
    other_probe = ThinkingProbe(other)
    other.gateway.offline = other_probe
    refusals: list[str] = []

    def meanwhile() -> None:
        for attempt in (lambda: service.step(other, s.id), lambda: service.crystallize(other, s.id)):
            with pytest.raises(SessionStateError, match="is taking a step in another process") as refused:
                attempt()
            refusals.append(str(refused.value))

    offline_runtime.gateway.offline = ThinkingProbe(offline_runtime, meanwhile=meanwhile)
    assert service.step(offline_runtime, s.id).step_number == 3
    assert len(refusals) == 2 and other_probe.held == [], "the refused stepper asked a model"
    other.gateway.offline = other_probe.inner
    assert service.step(other, s.id).step_number == 4


def test_a_database_failing_while_the_step_thinks_fails_the_step_whole(
    offline_runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database failing under the step while it thinks (the call log written as a call ends, the embedder's
    cache read) is the step's failure, not one item's: nothing of the step is written (not a step without its
    reflection), and the next step goes on.
    """
    s = new_session(offline_runtime)
    service.step(offline_runtime, s.id)

    def away(*args: Any) -> Any:
        raise DatabaseUnavailable("the database server cannot be reached now (test); nothing was kept")

    for target, name in ((offline_runtime.calls, "write"), (offline_runtime.embedder, "embed")):
        monkeypatch.setattr(offline_runtime.calls, "size", 1)  # every call logged as it ends
        monkeypatch.setattr(target, name, away)
        with pytest.raises(DatabaseUnavailable, match="cannot be reached now"):
            service.step(offline_runtime, s.id)
        view = service.session_view(offline_runtime, s.id)
        assert view.session.step_count == 1 and len(view.trace) == 1, name
        monkeypatch.undo()
    offline_runtime.calls.flush()
    assert service.step(offline_runtime, s.id).step_number == 2


def test_a_walk_waits_out_a_server_away_for_one_step_and_takes_them_all(
    offline_runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step that meets the database away (a statement in flight as the server restarts) is not kept, nor can its
    lease be given back then; the walk takes the step again once the server answers, freeing that lease itself.
    """
    s = new_session(offline_runtime)
    monkeypatch.setattr(offline_runtime.calls, "size", 1)  # every call logged as it ends
    write, release = offline_runtime.calls.write, leases.release
    failed: list[str] = []

    def once(real: Any, what: str) -> Any:
        def maybe(*args: Any) -> Any:
            if what not in failed:
                failed.append(what)
                raise DatabaseUnavailable("the database server cannot be reached now (test); nothing was kept")
            return real(*args)

        return maybe

    monkeypatch.setattr(offline_runtime.calls, "write", once(write, "call log"))
    monkeypatch.setattr(leases, "release", once(release, "lease"))
    result = service.run(offline_runtime, s.id, 3)
    assert failed == ["call log", "lease"]  # the step failed, and so did giving its lease back
    view = service.session_view(offline_runtime, s.id)
    assert result.steps_completed == view.session.step_count == len(view.trace) == 3
