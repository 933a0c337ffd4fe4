"""The Crystals page's "Export to notes": a folder typed in, the engine's export run, its counts shown."""

from __future__ import annotations

from pathlib import Path

import yaml

from explorer.wander import review as reviewing
from explorer.wander import service as wander


def test_export_to_notes_writes_the_approved_crystal_and_shows_the_counts(
    open_app, app_runtime, page_text, tmp_path: Path
) -> None:
    (crystal, *_) = wander.list_crystals(app_runtime, status="active")
    reviewing.review_crystal(app_runtime, crystal.id, "approve", reviewer="Ada")
    at = open_app("crystals?view=List")
    folder = tmp_path / "findings"
    at.text_input(key="notes_folder").input(str(folder)).run()
    at.button(key="notes_export").click().run()
    assert not at.exception, [e.value for e in at.exception]
    notes = sorted(folder.glob("crystal-*.md"))
    assert len(notes) == 1 and notes[0].name.startswith(f"crystal-{crystal.id[:8]}-")
    meta = yaml.safe_load(notes[0].read_text(encoding="utf-8").split("---\n")[1])
    assert (meta["id"], meta["status"], meta["reviewer"]) == (crystal.id, "approved", "Ada")
    written = len(list(folder.glob("*.md")))
    assert f"{written} note{'s' if written != 1 else ''} written, 0 unchanged, 0 removed" in page_text(at)

    at.button(key="notes_export").click().run()
    assert f"0 notes written, {written} unchanged, 0 removed" in page_text(at)
