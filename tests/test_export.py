"""Session archives: two PNG maps, a compressed summary, the full JSON; from the library and the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt
from PIL import Image

from explorer.export import (
    OFFLINE_NOTE,
    archive_zip,
    estimate_tokens,
    export_session,
    map_figure,
    session_record,
    session_summary,
)
from explorer.figures.palette import CRYSTAL_FILL, PATH_COLOUR
from explorer.projection import projection_status, update_projection
from explorer.records.wander import ReviewState
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

STEPS = 8


@pytest.fixture(scope="module")
def explored(corpus_template: Path, tmp_path_factory: pytest.TempPathFactory, embedder) -> tuple[Path, str]:
    """A copy of the small corpus with the map fitted and one session of a few steps holding a crystal."""
    path = tmp_path_factory.mktemp("export") / "export.duckdb"
    shutil.copy(corpus_template, path)
    runtime = open_runtime(replace(Settings(), db_path=path), embedder=embedder)
    update_projection(runtime)
    session = wander.create_session(
        runtime,
        SessionConfig(
            seed_concept="what changed in how Python handles text",
            name="Text in Python",
            random_seed=3,
            human_checkpoint_frequency=0,
            max_drift_distance=1.5,  # the hashing embedder puts a short seed far from every chunk
        ),
    )
    assert wander.run(runtime, session.id, STEPS).steps_completed == STEPS
    if not wander.list_crystals(runtime, session_id=session.id):
        assert wander.crystallize(runtime, session.id).crystal is not None
    runtime.calls.flush()
    return path, session.id


@pytest.fixture
def runtime(explored, embedder):
    return open_runtime(replace(Settings(), db_path=explored[0]), embedder=embedder)


def near(image: np.ndarray, colour: str, tolerance: int = 40) -> int:
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(image.astype(np.int16) - rgb).max(axis=2) <= tolerance).sum())


def test_export_writes_two_maps_a_summary_and_the_json(runtime, explored, tmp_path) -> None:
    _, session_id = explored
    archive = export_session(runtime, session_id, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        Path(p).name for p in archive.to_json().values()
    )
    for path, size in ((archive.png_1024, 1024), (archive.png_512, 512)):
        image = np.asarray(Image.open(path).convert("RGB"))
        assert image.shape == (size, size, 3)
        assert (image.min(axis=2) < 235).mean() > 0.01  # not blank
        assert near(image, PATH_COLOUR) > 100 * size // 512  # the path
        assert near(image, CRYSTAL_FILL) > 40 * size // 512  # the crystal's star
    record = json.loads(archive.json.read_text(encoding="utf-8"))
    view = wander.session_view(runtime, session_id)
    assert record["session"]["id"] == session_id and record["session"]["step_count"] == STEPS
    assert [t["step_number"] for t in record["trace"]] == list(range(1, STEPS + 1))
    assert {locus["id"] for locus in record["loci"]} == {locus.id for locus in view.loci}
    assert {c["id"] for c in record["crystals"]} == {c.id for c in view.crystals}
    assert all("embedding" not in json.dumps(part) for part in (record["loci"], record["crystals"]))
    assert any(e["subject"] == "wander.step.completed" for e in record["events"])
    assert archive.summary.read_text(encoding="utf-8") == session_summary(view)


def test_an_archive_fits_a_map_that_never_was(corpus_template, tmp_path, embedder) -> None:
    """Notes read from the command line have no map until something fits one: the archive fits it, not draws a
    blank.
    """
    path = tmp_path / "unfitted.duckdb"
    shutil.copy(corpus_template, path)
    runtime = open_runtime(replace(Settings(), db_path=path), embedder=embedder)
    session = wander.create_session(runtime, SessionConfig(seed_concept="text encodings", random_seed=1))
    wander.run(runtime, session.id, 3)
    assert not projection_status(runtime).fitted
    drawn = map_figure(runtime, session.id, 512)
    assert any(trace.name == "trace (path)" and len(trace.x) >= 2 for trace in drawn.data)
    assert projection_status(runtime).fitted


def section(summary: str, heading: str) -> list[str]:
    """The lines under the Markdown heading that starts with ``heading``, up to the next heading."""
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return [line for line in lines[start + 1 : end] if line]


def first_words(text: str, count: int) -> str:
    return " ".join(text.split()[:count])


def shown(markdown: str) -> str:
    """What a reader sees of the summary: backslash escapes resolved, the joiners that stop autolinks dropped."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def test_the_summary_says_what_the_session_is_where_it_went_and_what_it_concluded(runtime, explored) -> None:
    view = wander.session_view(runtime, explored[1])
    summary = session_summary(view)
    assert 500 <= estimate_tokens(summary) <= 2000  # the README's promise: a 500–2,000-token summary
    summary = shown(summary)
    head = section(summary, "# Wander session: Text in Python")
    assert head[0] == f"- id {view.session.id}; status {view.session.status}"
    assert head[1] == "- seed concept: what changed in how Python handles text"
    assert head[2].startswith(f"- {STEPS} steps of at most {view.session.max_steps}; {len(view.loci)} loci;")
    assert f"- note: {OFFLINE_NOTE}" in head
    crystals = section(summary, f"## Crystals ({len(view.crystals)})")
    assert len(crystals) == len(view.crystals) >= 1
    for crystal in view.crystals:
        (line,) = [line for line in crystals if first_words(crystal.insight, 20) in line]
        assert line.startswith(f"- [{crystal.review_state.value}, confidence {crystal.confidence:.2f}, ")
    steps = section(summary, f"## Path ({STEPS} steps)")
    loci = {locus.id: locus for locus in view.loci}
    trace = sorted(view.trace, key=lambda t: t.step_number)
    assert steps[0].startswith(f"0. {first_words(loci[trace[0].from_locus_id].concept, 5)}")
    for t, line in zip(trace, steps[1:], strict=True):
        assert line.startswith(f"{t.step_number}. ({t.strategy or '?'})")
        assert first_words(loci[t.to_locus_id].concept, 5) in line


def test_the_summary_shows_each_crystal_s_review_state(runtime, explored) -> None:
    view = wander.session_view(runtime, explored[1])
    crystal = view.crystals[0]
    assert crystal.review_state == ReviewState.PENDING and "- [pending, " in session_summary(view)
    for fields, state in (
        ({"human_approved": True}, "approved"),
        ({"status": "invalidated"}, "rejected"),
        ({"status": "archived"}, "archived"),
    ):
        reviewed = replace(view, crystals=[replace(crystal, **fields)])
        (line,) = section(shown(session_summary(reviewed)), "## Crystals (1)")
        assert line.startswith(f"- [{state}, ") and first_words(crystal.insight, 20) in line


def test_the_summary_sheds_detail_to_fit_its_budget(runtime, explored) -> None:
    view = wander.session_view(runtime, explored[1])
    full = session_summary(view, max_tokens=10_000)
    short = session_summary(view, max_tokens=400)
    assert estimate_tokens(short) <= 400 < estimate_tokens(full)
    assert "## Crystals" in short and f"## Path ({STEPS} steps)" in full


def test_the_json_record_is_the_whole_session_without_vectors(runtime, explored) -> None:
    record = session_record(runtime, explored[1])
    text = json.dumps(record)
    assert "seed_embedding" not in text and "themes_embedding" not in text
    assert record["format"] == "dream-explorer session archive, version 1"
    assert {"session", "loci", "trace", "residues", "resonances", "crystals", "warm_memory", "events"} <= set(record)


def test_the_zip_holds_the_same_four_files(runtime, explored) -> None:
    with zipfile.ZipFile(io.BytesIO(archive_zip(runtime, explored[1]))) as archive:
        names = sorted(archive.namelist())
        assert [n.rsplit("-", 1)[-1] for n in names] == ["1024.png", "512.png", "session.json", "summary.md"]
        assert Image.open(io.BytesIO(archive.read(names[0]))).size == (1024, 1024)


def test_cli_export_json_prints_the_written_paths(explored, tmp_path) -> None:
    db, session_id = explored
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "export",
            session_id,
            "--png",
            str(tmp_path / "a"),
            "--db",
            str(db),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "EXPLORER_DB": ""},
    )
    assert out.returncode == 0, out.stderr
    paths = json.loads(out.stdout)
    assert set(paths) == {"png_1024", "png_512", "summary", "json"}
    assert all(Path(p).is_file() and Path(p).parent == tmp_path / "a" for p in paths.values())
    missing = subprocess.run(
        [sys.executable, "-m", "explorer", "export", "no-such-session", "--png", str(tmp_path), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 1 and missing.stderr.startswith("error: no wander session")
    assert len(missing.stderr.strip().splitlines()) == 1


# A model's text as an attacker would write it: an image a viewer fetches, a link, raw HTML, an autolink, a bare URL
# and an address, a heading, emphasis, code and ANSI escapes that colour a terminal and retitle its window.
HOSTILE = (
    "![x](http://127.0.0.1:9/i.png) [a](http://127.0.0.1:9/l) <img src=http://127.0.0.1:9/h.png> "
    "<http://127.0.0.1:9/auto> www.example.com me@example.com # heading **bold** `code` \x1b[31mred\x1b[0m "
    "\x1b]0;title\x07"
)


def test_an_exported_summary_reads_as_plain_text(explored, embedder, tmp_path) -> None:
    """The archive's summary escapes only what would start Markdown markup: a reason's ``:`` and ``;`` read as
    written, for people and for a language model's context alike.
    """
    template, session_id = explored
    for suffix in ("", ".wal"):  # a copy of its own: the module's session stays as it is
        if Path(f"{template}{suffix}").exists():
            shutil.copy(f"{template}{suffix}", tmp_path / f"mine.duckdb{suffix}")
    mine = open_runtime(replace(Settings(), db_path=tmp_path / "mine.duckdb"), embedder=embedder)
    reason = "checkpoint: 50 steps taken; review (then resume) — 3.5% done, ok?"
    with mine.db.transaction() as con:
        con.execute("UPDATE wander_sessions SET status_reason = ? WHERE id = ?", [reason, session_id])
    summary = export_session(mine, session_id, tmp_path / "out").summary.read_text(encoding="utf-8")
    assert f"({reason})" in summary
    assert not re.search(r"\\[:;.,()?!%-]", summary), re.findall(r".{20}\\[:;.,()?!%-].{20}", summary)


def test_the_summary_keeps_model_text_inert(runtime, explored) -> None:
    view = wander.session_view(runtime, explored[1])
    hostile = replace(
        view,
        session=replace(view.session, name=HOSTILE, status_reason=HOSTILE, attractor=HOSTILE),
        crystals=[replace(c, insight=HOSTILE, domains=[HOSTILE]) for c in view.crystals],
        loci=[replace(locus, concept=HOSTILE) for locus in view.loci],
        residues=[replace(r, connection=HOSTILE, themes=[HOSTILE]) for r in view.residues],
    )
    summary = session_summary(hostile, max_tokens=10_000)
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(summary)
    inline = [child for token in tokens for child in token.children or []]
    kinds = {t.type for t in tokens} | {t.type for t in inline}
    assert not kinds & {"link_open", "image", "html_inline", "html_block", "em_open", "strong_open", "code_inline"}
    headings = [
        "".join(c.content for c in tokens[i + 1].children or [] if c.type == "text")
        for i, t in enumerate(tokens)
        if t.type == "heading_open"
    ]
    assert headings[0].startswith("Wander session: ![x](") and not any(h.startswith("heading") for h in headings)
    assert all(
        h.split(" (")[0] in {"Crystals", "Resonances", "Path", "Most interesting encounters"} for h in headings[1:]
    )
    assert not any(c in summary for c in "\x1b\x07")
    # a reader sees what the model wrote, its URLs and address as text that no autolinker finds (a joiner breaks them)
    seen = " ".join(t.content for t in inline if t.type == "text")
    assert "[a](http:/\u2060/127.0.0.1:9/l) <img src=http:/\u2060/127.0.0.1:9/h.png>" in seen
    assert "www\u2060.example.com me\u2060@example.com # heading **bold** `code` red" in seen
    assert "title" not in seen  # the sequence that retitles a terminal goes whole
