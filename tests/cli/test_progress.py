"""The CLI's progress bar: its note (a document's or a dream's title) is cut between words, never mid-word."""

from __future__ import annotations

import time

import pytest

from explorer.cli import common
from explorer.cli.common import progress_callback


def test_a_long_note_is_cut_between_words(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    note = "1999: what would it mean for memory to be curious about itself"
    assert note[:40].endswith(" b")  # cut at 40 characters, "be" would break
    monkeypatch.setattr(common, "QUIET_S", 0.0)
    with progress_callback("dreaming", "dream") as progress:
        progress(1, 3, note)
    drawn = capsys.readouterr().err
    assert "1999: what would it mean for memory to …" in drawn
    assert "memory to b]" not in drawn


def test_on_a_terminal_a_phase_is_drawn_as_it_starts(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich draws its live line as on a terminal
    monkeypatch.setenv("COLUMNS", "120")
    with progress_callback("reading", "doc") as progress:
        progress(0, 0, "", "loading the embedding model")
        assert "reading: loading the embedding model" in capsys.readouterr().err  # before the model loads
        progress(3, 8, "What's New in Python 2.0", "embedding")
        assert "reading: embedding" in capsys.readouterr().err
    assert "3/8" in capsys.readouterr().err  # the last state stays on screen


def test_in_a_log_a_run_over_at_once_says_nothing_and_a_longer_one_each_phase(
    capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    """A user error found at once stays the one line on stderr; a run past the quiet time writes the phases it went
    through meanwhile, then goes on as they come.
    """
    with progress_callback("reading", "document") as progress:
        progress(0, 0, "", "loading the knowledge base")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(common, "QUIET_S", 0.3)
    with progress_callback("reading", "document") as progress:
        progress(0, 0, "", "loading the knowledge base")
        progress(0, 4, "", "embedding")
        progress(2, 4, "", "embedding")
        time.sleep(0.6)
        assert capsys.readouterr().err.splitlines() == [
            "reading: loading the knowledge base…",
            "reading: embedding · 2/4",
        ]
        progress(0, 2, "", "relating")
    assert capsys.readouterr().err.splitlines() == ["reading: relating · 0/2"]
