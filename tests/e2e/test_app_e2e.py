"""A person in a real browser: creates a session, runs steps, sees the map with its path, approves a
crystal and exports the map as PNG. Assertions are on what the page shows (and what the database then holds).
"""

from __future__ import annotations

import io
from dataclasses import replace

import harness
import numpy as np
from PIL import Image

from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.wander import service as wander

STEPS = 4


def test_a_person_wanders_reviews_and_exports(page, app_url, e2e_db, real_embedder, tmp_path) -> None:
    runtime = open_runtime(replace(Settings(), db_path=e2e_db), embedder=real_embedder)

    # -- create a session ------------------------------------------------------------
    harness.open_page(page, app_url, "sessions")
    page.get_by_role("textbox", name="Seed concept").fill("unicode strings and text encodings")
    page.get_by_role("textbox", name="Name", exact=True).fill("Browser walk")
    page.get_by_role("spinbutton", name="Random seed").fill("0")
    page.get_by_role("button", name="Create session").click()
    harness.settle(page)
    page.get_by_text("Created “Browser walk”").wait_for()
    (session,) = wander.list_sessions(runtime)
    assert session.name == "Browser walk" and session.random_seed == 0 and session.step_count == 0

    # -- run steps: a progress bar, then the counts and the map ---------------------------
    steps = page.get_by_role("spinbutton", name="Steps", exact=True)
    steps.fill(str(STEPS))
    steps.press("Enter")
    harness.settle(page)
    page.get_by_role("button", name=f"Run {STEPS} steps").click()
    harness.settle(page, timeout_ms=240_000)
    page.get_by_text(f"{STEPS} step(s) taken").wait_for()
    metric = page.locator('[data-testid="stMetric"]', has_text="Steps")
    assert metric.locator('[data-testid="stMetricValue"]').inner_text() == str(STEPS)
    assert wander.get_session(runtime, session.id).step_count == STEPS

    # -- ask for a crystal at the current locus -----------------------------------------
    page.get_by_text("Steer the walk").click()
    page.get_by_role("button", name="Crystallize now").click()
    harness.settle(page)
    page.get_by_text("A crystal formed").wait_for()
    (crystal,) = wander.list_crystals(runtime, session_id=session.id, status="active")

    # -- the map: the walk drawn as a path with arrows and step numbers, the crystal a star ---
    harness.open_page(page, app_url, "map")
    chart = page.locator('[data-testid="stPlotlyChart"]')
    chart.locator(".main-svg").first.wait_for()
    assert chart.locator(".legendtext", has_text="trace (path)").count() == 1
    assert chart.locator(".legendtext", has_text="crystal").count() == 1
    labels = chart.locator(".textpoint text").all_text_contents()
    assert "start" in " ".join(labels) and str(STEPS) in " ".join(labels).replace("·", " ").split()
    path_points = chart.locator(".scatterlayer .trace").filter(has=page.locator("path.point"))
    assert path_points.count() >= 2  # the path's arrows and the crystal's star are SVG markers
    assert "Browser walk" in chart.locator(".gtitle").first.text_content()  # the session chosen for us
    # clicking the star selects the crystal and shows what it holds
    uid = page.evaluate("""() => document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot')
                                   ._fullData.find(trace => trace.name === 'crystal').uid""")
    star = chart.locator(f".trace{uid} path.point").first.bounding_box()
    page.mouse.click(star["x"] + star["width"] / 2, star["y"] + star["height"] / 2)
    harness.settle(page)
    page.get_by_role("heading", name="Selected (1)").wait_for()
    # The star, its locus (which shows the crystal formed there) or, when the layout puts one
    # within a marker's width, a neighbouring locus takes the click; each shows its details.
    details = page.get_by_text(crystal.insight[:60]).or_(page.get_by_text("Locus (", exact=False))
    details.first.wait_for(timeout=60_000)

    # -- approve the crystal with a note ---------------------------------------------------
    harness.open_page(page, app_url, "crystals")
    page.get_by_role("textbox", name="Reviewer").fill("E2E tester")
    page.get_by_role("textbox", name="Reviewer").press("Enter")
    harness.settle(page)
    card = page.locator(f'[class*="st-key-crystal_{crystal.id}"]')
    card.get_by_role("textbox", name="Notes").fill("checked in the browser")
    card.get_by_role("textbox", name="Notes").press("Enter")
    harness.settle(page)
    card.get_by_role("button", name="Approve").click()
    harness.settle(page)
    approved = next(c for c in wander.list_crystals(runtime) if c.id == crystal.id)
    assert approved.human_approved and approved.human_approved_by == "E2E tester"
    assert approved.validation_notes == "checked in the browser"
    card.wait_for(state="detached", timeout=30_000)  # it left the review queue

    # -- export the map as PNG ---------------------------------------------------------------
    harness.open_page(page, app_url, "sessions")
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Download map (PNG, 1024 px)").click()
    target = tmp_path / download.value.suggested_filename
    download.value.save_as(target)
    image = np.asarray(Image.open(io.BytesIO(target.read_bytes())).convert("RGB"))
    assert target.suffix == ".png" and image.shape == (1024, 1024, 3)
    assert (image.min(axis=2) < 235).mean() > 0.01
