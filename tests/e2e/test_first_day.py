"""A first week with one's own notes, in a real browser, as a new user meets it: ``explorer app`` on a database that
does not exist yet → add a folder of notes → create a walk → run it → the map framed on the walk → ask for a crystal
and review it → dream a night → export the session; then a note edited and the folder read again, a second night,
and the approved findings written back into the notes. Each step checks, by what the page shows, that nothing a
first user met comes back: words for the store's names, "None", a dead end. Its screenshots are the README's "A
first day" (``FIRST_DAY_SCREENSHOTS=assets/screenshots/first-day`` writes them there; otherwise they go to the test's
own folder).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import time
import zipfile
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import harness

from explorer import jobs
from explorer.records import SHORT_ID_DIGITS
from explorer.records.wander import ReviewState
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.views import corpus_overview
from explorer.wander import review
from explorer.wander import service as wander
from explorer.wording import counted

NOTES = Path(__file__).resolve().parents[1] / "data" / "notes"  # four notes on beekeeping, four on git
STEPS = 10
# Words people should never read: counts that hedge their number, and the store's own names.
UNWORDS = re.compile(r"\w\(s\)|\braw_chunk\b|\bdistance_band\b|\bentity_insight\b|\bADJACENT\b|\bNone\b")

# The map's axes and the walk's points, read from the figure Plotly drew.
MAP_FRAME = """() => {
    const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
    const walk = gd.data.filter(t => (t.name || '').startsWith('trace'));
    const corpus = gd.data.filter(t => !(t.name || '').startsWith('trace') && t.type === 'scattergl');
    return {
        x: gd._fullLayout.xaxis.range, y: gd._fullLayout.yaxis.range,
        walk: walk.flatMap(t => t.x.map((x, i) => [x, t.y[i]])),
        corpus: corpus.flatMap(t => Array.from(t.x).map((x, i) => [x, t.y[i]])),
    };
}"""


def linked_sessions(page) -> list[str]:
    """The sessions the page's URL names."""
    return parse_qs(urlparse(page.url).query).get("session", [])


def visible_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_a_first_week_with_ones_own_notes(tmp_path: Path) -> None:
    db = tmp_path / "mine.duckdb"
    shots = Path(os.environ.get("FIRST_DAY_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    with harness.explorer_app(db, env=harness.TEST_ENV) as url, harness.chromium(1400, 1100) as page:

        def shot(name: str, showing: str | None = None) -> None:
            if showing:
                page.get_by_text(showing).first.scroll_into_view_if_needed()
            page.wait_for_timeout(1000)  # WebGL points and fonts
            page.screenshot(path=str(shots / f"{name}.png"))

        # -- an empty database: the two ways in, and no dead end ---------------------------------
        harness.open_page(page, url, "sessions")
        page.get_by_text("add documents first").wait_for()
        harness.open_page(page, url, "corpus")
        said = visible_text(page)
        assert "Two ways in" in said and "add your notes" in said and "explorer demo" in said
        shot("1-empty")

        # -- add a folder of notes -------------------------------------------------------------------
        page.get_by_text("A folder", exact=True).click()
        harness.settle(page)
        page.locator('input[type="file"]').set_input_files(NOTES)
        page.get_by_text("notes/bees/varroa.md").wait_for()
        page.get_by_role("button", name="Ingest").click()
        page.get_by_text(f"{counted(8, 'document')} added").wait_for(timeout=300_000)
        harness.settle(page)
        runtime = open_runtime(replace(Settings(), db_path=db))
        overview = corpus_overview(runtime)
        assert overview.documents == 8 and set(overview.domains) == {"beekeeping", "software"}
        assert not UNWORDS.search(visible_text(page)), visible_text(page)
        shot("2-notes-added", f"{counted(8, 'document')} added")

        # -- create a walk from the app: the URL holds the session's id, never its label ----------------
        page.get_by_role("link", name="Walk through them: start a session").click()
        harness.settle(page)
        page.get_by_role("textbox", name="Seed concept").fill("how a colony decides where to live")
        page.get_by_role("spinbutton", name="Random seed").fill("7")
        page.get_by_role("button", name="Create session").click()
        harness.settle(page)
        (session,) = wander.list_sessions(runtime)
        page.get_by_text(f"Created “{session.name}”").wait_for()
        assert all(session.id.startswith(i) for i in linked_sessions(page)), page.url  # an id, never a label

        # -- run it: the choice's label follows the walk ----------------------------------------------
        page.get_by_role("button", name=f"Run {STEPS} steps").click()
        page.get_by_text(f"{counted(STEPS, 'step')} taken").wait_for(timeout=240_000)
        harness.settle(page)
        assert wander.get_session(runtime, session.id).step_count == STEPS
        chosen = page.get_by_role("combobox", name="Open session")
        assert counted(STEPS, "step") in chosen.input_value(), chosen.input_value()
        assert all(session.id.startswith(i) for i in linked_sessions(page)), page.url
        page.get_by_text("Steer the walk").click()
        page.get_by_role("button", name="Crystallize now").click()
        harness.settle(page)
        page.get_by_text("A crystal formed").wait_for()
        (crystal,) = wander.list_crystals(runtime, session_id=session.id)
        assert not UNWORDS.search(visible_text(page)), visible_text(page)
        shot("3-walked", "A crystal formed")

        # -- the map opens framed on the walk, three labels at most, the whole corpus a switch away ---------
        harness.open_page(page, url, "map")
        chart = page.locator('[data-testid="stPlotlyChart"]')
        chart.locator(".main-svg").first.wait_for()
        drawn = page.evaluate(MAP_FRAME)
        (x0, x1), (y0, y1) = drawn["x"], drawn["y"]
        assert drawn["walk"] and all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in drawn["walk"])
        labels = [t.strip() for t in chart.locator(".textpoint text").all_text_contents() if t.strip()]
        assert 1 <= len(labels) <= 3 and "start" in " ".join(labels), labels
        assert page.get_by_text("Whole corpus").count() == 1
        shot("4-map", "Whole corpus")

        # -- review the crystal by keyboard; the list then says what its filter hides -------------------
        harness.open_page(page, url, "crystals?view=Review")
        page.get_by_text(crystal.insight[:60]).first.wait_for()
        page.locator(".st-key-review_approve button:enabled").wait_for()
        harness.settle(page)
        shot("5-review")
        page.keyboard.press("a")
        page.get_by_text("Nothing awaits review in this filter.").wait_for(timeout=60_000)
        assert review.get_crystal(runtime, crystal.id).review_state is ReviewState.APPROVED
        harness.open_page(page, url, "crystals?view=List")
        said = visible_text(page)
        assert "this filter hides 1 crystal (1 approved)" in said and "Crystals form when" not in said, said

        # -- dream a night: what the run did, in words --------------------------------------------------
        harness.open_page(page, url, "dreams")
        page.get_by_text("All (one night)").click()
        page.get_by_role("button", name="Dream", exact=True).click()
        page.get_by_text("Last run: All (one night)").wait_for(timeout=300_000)
        harness.settle(page)
        said = visible_text(page)
        assert "failed" not in said.lower() and not UNWORDS.search(said), said
        assert page.locator('[data-testid="stAlertContentInfo"]').count() >= 1  # the run explained
        shot("6-dreamt", "Last run: All (one night)")

        # -- export the session: its archive holds the maps, the summary and the data ------------------
        harness.open_page(page, url, f"sessions?session={session.id[:SHORT_ID_DIGITS]}")
        with page.expect_download(timeout=120_000) as download:
            page.get_by_role("button", name="Download session archive (.zip)").click()
        with zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes())) as archive:
            names = archive.namelist()
        assert any(n.endswith("1024.png") for n in names) and any(n.endswith("512.png") for n in names), names
        assert any(n.endswith(".json") for n in names) and any(n.endswith(".md") for n in names), names

        # -- a step the walk never took says so, and the trace shows its last step --------------------------
        harness.open_page(page, url, f"trace?session={session.id[:SHORT_ID_DIGITS]}&step=99")
        assert page.get_by_text(f"The link names step 99, which is not here; showing {STEPS}.").count() == 1
        assert page.get_by_role("combobox", name="Step").input_value() == str(STEPS)

        # -- a note edited, the folder read again: what was read before is said, not read twice ----------------
        folder = tmp_path / "notes"
        shutil.copytree(NOTES, folder)
        varroa = folder / "bees" / "varroa.md"
        varroa.write_text(varroa.read_text(encoding="utf-8") + "\n\nA sugar roll counts the mites on 300 bees.\n")
        harness.open_page(page, url, "corpus")
        page.locator('[data-testid="stExpander"] summary').filter(has_text="Add documents").click()
        page.get_by_text("A folder", exact=True).click()
        harness.settle(page)
        page.locator('input[type="file"]').set_input_files(folder)
        page.get_by_text("notes/bees/varroa.md").wait_for()
        page.get_by_role("button", name="Ingest").click()
        page.get_by_text(re.compile(r"added, \d+ already present")).wait_for(timeout=300_000)
        harness.settle(page)
        assert not UNWORDS.search(visible_text(page)), visible_text(page)

        # -- a second night, over what the first one left ---------------------------------------------------
        harness.open_page(page, url, "dreams")
        page.get_by_text("All (one night)", exact=True).first.click()  # the first night's run is said below
        page.get_by_role("button", name="Dream", exact=True).click()

        def nights() -> list[str]:
            return [job.status for job in jobs.list_jobs(runtime, kind="dream.cycle")]

        deadline = time.monotonic() + 300
        while nights() != ["succeeded", "succeeded"] and time.monotonic() < deadline:
            page.wait_for_timeout(1000)
        assert nights() == ["succeeded", "succeeded"], nights()
        harness.settle(page)
        page.get_by_text("Last run: All (one night)").wait_for()
        harness.settle(page)
        said = visible_text(page)
        assert "failed" not in said.lower() and not UNWORDS.search(said), said

        # -- the approved crystal and the kept dreams back into the notes, once -----------------------------
        findings = tmp_path / "vault" / "findings"
        harness.open_page(page, url, "crystals?view=List")
        page.locator('[data-testid="stExpander"] summary').filter(has_text="Export to notes").click()
        page.get_by_role("textbox", name="Folder").fill(str(findings))
        page.get_by_role("textbox", name="Folder").press("Enter")
        harness.settle(page)
        page.get_by_role("button", name="Export to notes").click()
        page.get_by_text(re.compile(r"written, 0 unchanged, 0 removed")).wait_for(timeout=60_000)
        (note,) = [path for path in findings.glob("crystal-*.md")]
        text = note.read_text(encoding="utf-8")
        assert "generated_by: dream-explorer" in text and "status: approved" in text and "[[" in text, text
        written = {path.name: path.read_text(encoding="utf-8") for path in findings.glob("*.md")}
        page.get_by_role("button", name="Export to notes").click()
        page.get_by_text(f"0 notes written, {len(written)} unchanged, 0 removed").wait_for(timeout=60_000)
        assert {path.name: path.read_text(encoding="utf-8") for path in findings.glob("*.md")} == written
        assert not UNWORDS.search(visible_text(page)), visible_text(page)
