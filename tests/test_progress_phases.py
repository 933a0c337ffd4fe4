"""Every long run says what it does over its whole length: the engine names each phase before its work starts
(a recording callback hears them in order), a job stores the phase it is in, and the command line prints the
phases on stderr while the run goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from explorer import jobs
from explorer.dreaming import service as dreaming
from explorer.jobs import worker
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime
from explorer.store import corpus

Report = tuple[int, int, str, str]


def recorder() -> tuple[list[Report], object]:
    heard: list[Report] = []

    def progress(done: int, total: int, note: str, phase: str = "") -> None:
        heard.append((done, total, note, phase))

    return heard, progress


def phases(heard: list[Report]) -> list[str]:
    """The phases in the order they were first heard."""
    return list(dict.fromkeys(phase for *_, phase in heard))


def test_a_rem_cycle_names_its_preparation_and_each_dream_before_it_starts(corpus_runtime: Runtime) -> None:
    with corpus_runtime.db.connect() as con:
        before = corpus.count_nodes(con, latest_only=True)
    heard, progress = recorder()
    stored_when_dreaming_began: list[int] = []

    def watching(done: int, total: int, note: str, phase: str = "") -> None:
        if phase == "dreaming" and not stored_when_dreaming_began:
            with corpus_runtime.db.connect() as con:
                stored_when_dreaming_began.append(corpus.count_nodes(con, latest_only=True))
        progress(done, total, note, phase)  # type: ignore[operator]

    report = dreaming.run_rem(corpus_runtime, dreams=3, seed=7, progress=watching)
    assert phases(heard) == [
        "loading memories",
        "measuring affinities",
        "choosing what each dream binds",
        "dreaming",
        "storing dreams",
    ]
    first_dream = next(report for report in heard if report[3] == "dreaming")
    assert first_dream[:2] == (0, 3)  # said before the first dream is drafted, with how many will be
    assert stored_when_dreaming_began == [before]  # no dream written yet when the phase was told
    assert report.dreams_stored > 0


def test_a_night_names_its_three_parts_and_their_phases(corpus_runtime: Runtime) -> None:
    heard, progress = recorder()
    dreaming.run_cycle(corpus_runtime, dreams=2, seed=7, progress=progress)  # type: ignore[arg-type]
    said = phases(heard)
    parts = [phase.split(":")[0] for phase in said]
    assert list(dict.fromkeys(parts)) == ["exploration", "fusion", "REM"]
    assert "exploration: choosing seeds and candidates" in said and "REM: dreaming" in said, said


def test_an_ingest_names_its_phases_and_counts_the_documents_read(runtime: Runtime, small_corpus: Path) -> None:
    heard, progress = recorder()
    ingest_paths(runtime, [small_corpus], progress=progress)  # type: ignore[arg-type]
    said = phases(heard)
    assert said.index("loading the knowledge base") < said.index("cutting documents into chunks")
    assert said.index("cutting documents into chunks") < said.index("reading")  # the model embeds ahead of it
    assert "reading: implants and entities" in said
    reading = [report for report in heard if report[3] == "reading"]
    assert reading[0][0] == 0 and reading[-1][0] == reading[-1][1] > 0  # told at 0, then counted to the end


def test_a_job_stores_the_phase_its_run_is_in(corpus_runtime: Runtime) -> None:
    job = jobs.submit(corpus_runtime, "dream.rem", {"dreams": 2, "seed": 7}, start_worker=False)
    assert job.progress.phase == ""
    worker.work(corpus_runtime, max_jobs=1, idle_exit_s=0)
    ended = jobs.get(corpus_runtime, job.id)
    assert ended.status == "succeeded"
    assert ended.phase == "storing dreams"  # the run's last phase, as the engine named it
    assert ended.to_json()["progress"]["phase"] == "storing dreams"
    assert "storing dreams" in ended.summary


def test_the_apps_upload_names_the_map_fit_after_the_reading(runtime: Runtime, small_corpus: Path) -> None:
    """The app's first documents are read, then the map is fitted: an ingest job says both, in order."""
    heard, progress = recorder()
    paths = [str(next(small_corpus.glob("*.md")))]
    jobs.run(runtime, "ingest", {"paths": paths, "fit_map": True}, progress=progress)  # type: ignore[arg-type]
    said = phases(heard)
    assert said.index("cutting documents into chunks") < said.index("reading") < said.index("fitting the map")
    assert said[-1] == "placing new points on the map"


def _phases_on_stderr(args: list[str], env: dict[str, str]) -> tuple[list[str], list[str]]:
    """The lines a real ``explorer`` prints on stderr, those heard while it still ran and all of them."""
    process = subprocess.Popen(
        [sys.executable, "-m", "explorer", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **env},
    )
    assert process.stderr is not None
    lines, while_running = [], []
    for line in process.stderr:
        lines.append(line.rstrip())
        if process.poll() is None:
            while_running.append(line.rstrip())
    assert process.wait(timeout=300) == 0, "\n".join(lines)
    return while_running, lines


def test_the_command_line_prints_the_phases_of_an_ingest_and_a_rem_cycle_as_they_start(
    tmp_path: Path, small_corpus: Path
) -> None:
    env = {"EXPLORER_DB": str(tmp_path / "kb.duckdb")}
    started = time.monotonic()
    while_running, lines = _phases_on_stderr(["ingest", str(small_corpus)], env)
    assert time.monotonic() - started < 300
    for phase in ("reading: loading the knowledge base", "reading: cutting", "reading · ", "reading: implants"):
        assert any(line.startswith(phase) for line in while_running), (phase, lines)
    while_running, lines = _phases_on_stderr(["dream", "rem", "--dreams", "2", "--seed", "7"], env)
    for phase in ("dreaming: loading memories", "dreaming: measuring affinities", "dreaming · 0/2"):
        assert any(line.startswith(phase) for line in while_running), (phase, lines)
