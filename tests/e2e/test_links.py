"""Links that work: every page opened by its own URL, as the first request a freshly started app receives (a
bookmark, a refresh after a restart), has the app's navigation; a selection named in the URL (a session, a step,
a point of the map, a dream, a node) is shown, survives a refresh, and a chosen one is written back to the URL;
the browser's back button returns to the page before with the same navigation.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import harness
import pytest

from explorer.dreaming import service as dreaming
from explorer.records.wander import Session
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import corpus
from explorer.testing.dreams import dream_node
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

TITLES = {
    "corpus": "Corpus",
    "sessions": "Sessions",
    "map": "Map",
    "crystals": "Crystals",
    "resonances": "Resonances",
    "trace": "Trace",
    "dreams": "Dreams",
    "consolidation": "Consolidation",
    "settings": "Settings",
}


@pytest.fixture(scope="module")
def linked(e2e_db: Path, real_embedder) -> tuple[Session, str, str]:
    """The e2e corpus with a walked session and a dream in it: the session, the dream's id, step 1's locus."""
    runtime = open_runtime(replace(Settings(), db_path=e2e_db), embedder=real_embedder)
    session = wander.create_session(runtime, SessionConfig(seed_concept="memory and forgetting", random_seed=3))
    wander.run(runtime, session.id, 4)
    with runtime.db.connect() as con:
        parents = corpus.list_nodes(con, types=["raw_chunk"], latest_only=True)[:3]
    text = "What a release gives up and what it keeps are told in the same notes."
    dream = dream_node(runtime.embedder, text, "What does each release give up?", parents)
    with runtime.db.transaction() as con:
        corpus.insert_nodes(con, [dream])
    assert dreaming.recent_dreams(runtime, limit=1)[0].dream.id == dream.id
    first = min(wander.session_view(runtime, session.id).trace, key=lambda t: t.step_number).to_locus_id
    runtime.flush()
    return wander.get_session(runtime, session.id), dream.id, first


def navigation(page) -> list[str]:
    """The sidebar's page links as they read (the icon's ligature name dropped)."""
    links = page.locator('[data-testid="stSidebarNav"] a')
    return [links.nth(i).inner_text().split("\n")[-1] for i in range(links.count())]


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def selectbox_text(page, label: str) -> str:
    """What the selectbox ``label`` shows as chosen."""
    return page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first.locator("input").input_value()


@pytest.mark.parametrize("name", list(TITLES))
def test_a_page_opened_first_by_its_url_has_the_apps_navigation(name, linked, e2e_db, tmp_path) -> None:
    server = harness.streamlit_server(e2e_db, log=tmp_path / "streamlit.log", env=harness.TEST_ENV)
    with server as url, harness.chromium() as page:
        harness.open_page(page, url, name)
        assert page.locator("h1").first.inner_text() == TITLES[name]
        assert navigation(page) == list(TITLES.values())
        assert urlparse(page.url).path.strip("/") == ("" if name == "corpus" else name)


@pytest.fixture(scope="module")
def app(linked, app_url: str) -> str:
    """The module's app, once the session and the dream are in its database."""
    return app_url


def test_a_linked_session_and_step_are_shown_and_survive_a_refresh(app, linked, page) -> None:
    session, _, _ = linked
    # a link may name a session by the first characters the pages show of its id
    harness.open_page(page, app, f"trace?session={session.id[:8]}&step=2")
    assert session.id[:8] in selectbox_text(page, "Session")
    assert selectbox_text(page, "Step") == "2"
    assert page.get_by_text("Step 2", exact=False).count()
    page.reload()
    page.wait_for_selector("h1")
    harness.settle(page)
    assert selectbox_text(page, "Step") == "2" and query(page)["step"] == ["2"]
    assert session.id[:8] in selectbox_text(page, "Session")


def test_a_choice_made_on_the_page_is_written_to_the_url(app, linked, page) -> None:
    session, _, _ = linked
    harness.open_page(page, app, f"trace?session={session.id}")
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Step").locator("input").click()
    page.get_by_role("option", name="3", exact=True).click()
    harness.settle(page)
    assert query(page)["step"] == ["3"]


def test_a_linked_point_and_step_of_the_map_are_selected(app, linked, page) -> None:
    session, _, locus = linked
    harness.open_page(page, app, f"map?session={session.id}&point=locus:{locus}")
    assert page.get_by_text("Selected (1)").count()
    harness.open_page(page, app, f"map?session={session.id}&step=1")
    assert page.get_by_text("Selected (1)").count()
    assert "step 1" in selectbox_text(page, "inspect a step")


def test_a_linked_dream_is_open_and_a_link_to_nothing_says_so(app, linked, page) -> None:
    _, dream, _ = linked
    harness.open_page(page, app, f"dreams?dream={dream}")
    opened = page.locator('[data-testid="stExpander"] details[open]')
    assert opened.count() == 1 and "question" in opened.inner_text()
    harness.open_page(page, app, "dreams?dream=nothing-like-it")
    assert page.get_by_text("which is not here").count()
    harness.open_page(page, app, "trace?session=0000000000")
    assert page.get_by_text("which is not here").count()


def test_back_returns_to_the_page_before_with_the_same_navigation(app, page) -> None:
    harness.open_page(page, app, "corpus")
    for name in ("map", "trace"):
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text=TITLES[name]).click()
        page.wait_for_url(f"**/{name}*")
        harness.settle(page)
    page.go_back()
    page.wait_for_url("**/map*")
    harness.settle(page)
    assert page.locator("h1").first.inner_text() == "Map"
    assert navigation(page) == list(TITLES.values())
    page.go_back()  # a page does not write what it chose by itself to the URL: no step of history to get stuck on
    page.wait_for_url(lambda url: urlparse(url).path.strip("/") == "")
    harness.settle(page)
    assert page.locator("h1").first.inner_text() == "Corpus"
