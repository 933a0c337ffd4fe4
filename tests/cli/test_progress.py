"""The CLI's progress bar: its note (a document's or a dream's title) is cut between words, never mid-word."""

from __future__ import annotations

import pytest

from explorer.cli.common import progress_callback


def test_a_long_note_is_cut_between_words(capsys: pytest.CaptureFixture[str]) -> None:
    note = "1999: what would it mean for memory to be curious about itself"
    assert note[:40].endswith(" b")  # cut at 40 characters, "be" would break
    with progress_callback("dreaming", "dream") as progress:
        progress(1, 3, note)
    drawn = capsys.readouterr().err
    assert "1999: what would it mean for memory to …" in drawn
    assert "memory to b]" not in drawn
