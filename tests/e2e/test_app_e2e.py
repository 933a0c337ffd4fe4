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
from explorer.wording import counted

STEPS = 4

# Where to click so that plotly picks this crystal's star: the page position of a point on the star, found from the
# figure's data through plotly's own axes (l2p). Plotly gives a click to the hoverable point at the smallest
# distance, max(|click - centre| - radius, 1 - 3 / radius), so a smaller locus marker under the star (its own
# locus sits at the same place) wins at the star's centre; a point on the star's rim, clear of every other marker,
# is the star's alone. Returns [x, y] in viewport pixels.
STAR_CLICK = """crystalId => {
    const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
    const box = gd.getBoundingClientRect();
    const px = (x, y) => [xa._offset + xa.l2p(x), ya._offset + ya.l2p(y)];
    const points = [];
    for (const cd of gd.calcdata) {
        const trace = cd[0].trace;
        if (trace.visible !== true || trace.hoverinfo === 'skip') continue;
        if (trace.type === 'scattergl') {  // WebGL points are measured to their centre
            trace.x.forEach((x, i) => points.push({xy: px(x, trace.y[i]), rad: 0}));
            continue;
        }
        cd.forEach((di, i) => {
            const id = trace.customdata?.[i];
            const star = id?.[0] === 'crystal' && id?.[1] === crystalId;
            points.push({xy: px(di.x, di.y), rad: Math.max(3, di.mrc || 0), star});
        });
    }
    const star = points.find(p => p.star);
    if (!star) throw new Error('no star for crystal ' + crystalId);
    const distance = (p, c) => {
        const d = Math.hypot(p.xy[0] - c[0], p.xy[1] - c[1]);
        return p.rad ? Math.max(d - p.rad, 1 - 3 / p.rad) : d;
    };
    let best = null;
    for (let r = 0; r < star.rad; r += 1) {
        for (let a = 0; a < 360; a += 10) {
            const c = [star.xy[0] + r * Math.cos(a * Math.PI / 180), star.xy[1] + r * Math.sin(a * Math.PI / 180)];
            const margin = Math.min(...points.filter(p => !p.star).map(p => distance(p, c))) - distance(star, c);
            if (!best || margin > best.margin) best = {c, margin};
        }
    }
    if (!(best.margin >= 0.5)) throw new Error('no point of the star is clear of the other markers');
    return [box.left + best.c[0], box.top + best.c[1]];
}"""


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
    # the run may start after settle looked (the status widget appears late): wait for its outcome itself
    page.get_by_text(f"{counted(STEPS, 'step')} taken").wait_for(timeout=240_000)
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
    # clicking the star selects the crystal and shows what it holds (and not a locus). A resonance halo centred on
    # the star and not larger than it would take every click on it (plotly prefers the smaller marker), so the
    # halos are switched off first, as a person would when they hide what they are after.
    page.get_by_role("button", name="Resonance halos").click()
    harness.settle(page)
    chart.locator(".legendtext", has_text="resonance halo").wait_for(state="detached", timeout=30_000)
    chart.scroll_into_view_if_needed()
    x, y = page.evaluate(STAR_CLICK, crystal.id)
    page.mouse.click(x, y)
    page.mouse.move(0, 0)  # no hover label over the star to read instead of the details
    harness.settle(page)
    page.get_by_role("heading", name="Selected (1)").wait_for()
    review = page.get_by_role("link", name="Review it, with its evidence")
    review.wait_for(timeout=60_000)
    page.get_by_text(crystal.insight[:60]).first.wait_for()
    assert page.get_by_text(f"**Crystal** · pending · confidence {crystal.confidence:.2f}").count() == 0  # drawn
    assert page.get_by_text(f"Crystal · pending · confidence {crystal.confidence:.2f}").count() == 1
    assert page.get_by_text("Crystal formed here").count() == 0  # the crystal, not the locus it formed at
    review.click()  # to the crystal in the Crystals page's review, by a link that names it
    page.wait_for_url(f"**/crystals?*crystal={crystal.id}*")
    harness.settle(page)
    page.get_by_text(crystal.insight[:60]).first.wait_for()

    # -- approve the crystal with a note ---------------------------------------------------
    harness.open_page(page, app_url, "crystals?view=List")
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
