"""A deployment that names its people (``EXPLORER_TOKENS``) asks for a token before any page, remembers who signed
in for the browser session, and logs every review made in the app under that name, never a typed one.
"""

from __future__ import annotations

import urllib.parse

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from explorer.records.wander import ReviewState
from explorer.wander import review as reviewing
from explorer.wander import service as wander

from .conftest import APP

ANA, BEN, SHARED = "ana-token-0123456789abcdef", "ben-token-0123456789abcdef", "the-shared-one-0123456789"


@pytest.fixture(autouse=True)
def every_run_through_app_py(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every AppTest run goes through app.py, as every run of a served app does once its first has called
    ``st.navigation``. AppTest forgets that call before each run, so from its second run on it would run the page's
    file alone (the mode ``pages/__init__.py`` turns off in a served app), and the sign-in, which is app.py's, with it.
    """
    created = PagesManager.__init__

    def without_the_pages_folder_mode(self: PagesManager, *args, **kwargs) -> None:
        created(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", without_the_pages_folder_mode)


@pytest.fixture
def named(app_db, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's app names two people; the API's single unnamed token is set beside them."""
    monkeypatch.setenv("EXPLORER_TOKENS", f"ana={ANA},ben={BEN}")
    monkeypatch.setenv("EXPLORER_API_TOKEN", SHARED)


def arrive(link: str = "") -> AppTest:
    """A browser arriving at the app (``link``: a page's query parameters, as a shared address carries them)."""
    at = AppTest.from_file(str(APP), default_timeout=180)
    at.query_params.update(urllib.parse.parse_qsl(link))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def sign_in(at: AppTest, token: str) -> AppTest:
    at.text_input(key="sign_in_token").input(token)
    at.button(key="sign_in").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def only_the_sign_in_screen(at: AppTest, page_text) -> None:
    """Nothing of the app but the sign-in form: no page, no sidebar, no navigation."""
    assert [w.key for w in at.text_input] == ["sign_in_token"]
    assert at.text_input(key="sign_in_token").proto.type == at.text_input(key="sign_in_token").proto.PASSWORD
    assert not at.sidebar.children or not any(at.sidebar.children.values())
    assert "Database:" not in page_text(at) and "Crystals" not in [t.value for t in at.title]


def test_the_app_asks_for_a_token_before_any_page(named, page_text) -> None:
    at = arrive("view=List")
    only_the_sign_in_screen(at, page_text)
    at.switch_page("pages/crystals.py").run()  # a page's own address leads to the same screen
    only_the_sign_in_screen(at, page_text)


def test_a_wrong_token_is_refused_and_shows_nothing_else(named, page_text) -> None:
    at = arrive()
    for wrong in ("not-a-token-of-anyones", ANA[:-1], SHARED):  # the API's unnamed token names nobody: not here
        sign_in(at, wrong)
        assert [e.value for e in at.error] == ["That token is not one of this app's. Check it and try again."]
        only_the_sign_in_screen(at, page_text)


def test_a_right_token_opens_the_pages_with_the_name_in_the_sidebar(named, page_text) -> None:
    at = sign_in(arrive(), f" {ANA} ")  # pasted with spaces around it
    assert not at.error
    assert "Signed in as ana" in [c.value for c in at.sidebar.caption]
    assert [t.value for t in at.title] == ["Corpus"]
    at.switch_page("pages/settings.py").run()  # the sign-in lasts the browser session, page to page
    assert "Signed in as ana" in [c.value for c in at.sidebar.caption]
    assert ANA not in page_text(at)
    at.sidebar.button(key="sign_out").click().run()
    only_the_sign_in_screen(at, page_text)


def test_reviews_in_the_app_are_logged_under_the_signed_in_name(named, app_runtime) -> None:
    (crystal, *_) = wander.list_crystals(app_runtime, status="active")

    def crystals_page(token: str, **link: str) -> AppTest:
        at = sign_in(arrive(), token)
        at.switch_page("pages/crystals.py")
        at.query_params.update(link)
        return at.run()

    ben = crystals_page(BEN, view="List")  # the list's buttons decide in the page's script
    reviewer = ben.text_input(key="crystal_reviewer")
    assert reviewer.value == "ben" and reviewer.disabled  # shown, not typed
    ben.button(key=f"approve_{crystal.id}").click().run()
    assert not ben.exception, [e.value for e in ben.exception]
    (approval,) = reviewing.review_history(app_runtime, crystal.id)
    ana = crystals_page(ANA, view="Review", crystal=crystal.id)  # another browser; its history's buttons call back
    ana.button(key=f"revert_{approval.id}").click().run()  # before the page's script (and app.py's) runs
    assert not ana.exception, [e.value for e in ana.exception]
    ana.button(key="review_approve").click().run()
    log = reviewing.review_history(app_runtime, crystal.id)
    assert [(e.decision, e.reviewer) for e in log] == [("approve", "ben"), ("revert", "ana"), ("approve", "ana")]
    stored = next(c for c in wander.list_crystals(app_runtime) if c.id == crystal.id)
    assert stored.review_state is ReviewState.APPROVED and stored.human_approved_by == "ana"


def test_without_named_tokens_the_reviewer_is_typed_as_before(app_db, monkeypatch, app_runtime) -> None:
    monkeypatch.setenv("EXPLORER_API_TOKEN", SHARED)  # the API's single token changes nothing here
    (crystal, *_) = wander.list_crystals(app_runtime, status="active")
    at = arrive("view=List")
    assert not at.sidebar.button or "sign_out" not in [b.key for b in at.sidebar.button]
    at.switch_page("pages/crystals.py").run()
    at.text_input(key="crystal_reviewer").input("Ada")
    at.button(key=f"approve_{crystal.id}").click().run()
    assert [e.reviewer for e in reviewing.review_history(app_runtime, crystal.id)] == ["Ada"]
