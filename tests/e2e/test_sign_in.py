"""The sign-in of a deployment that names its people, in a real browser: a page's own address, as the first
request a freshly started server receives, shows only the sign-in screen (no navigation to the pages); a wrong
token is refused; the right one, sent with Enter, opens that page with the name in the sidebar.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import harness
import pytest

TOKEN = "ana-token-0123456789abcdef"


@pytest.fixture
def named_app(corpus_template: Path, tmp_path: Path) -> Iterator[str]:
    """The app on a copy of the small corpus, with one named token; the server embeds as the tests do."""
    db = tmp_path / "app.duckdb"
    shutil.copy(corpus_template, db)
    with harness.streamlit_server(db, log=tmp_path / "streamlit.log", env={"EXPLORER_TOKENS": f"ana={TOKEN}"}) as url:
        yield url


def test_a_page_address_asks_for_a_token_first(named_app: str) -> None:
    with harness.chromium() as page:
        page.goto(f"{named_app}/settings")
        page.wait_for_selector("h1", timeout=120_000)
        harness.settle(page)
        assert page.locator("h1").all_inner_texts() == ["Dream Explorer"]
        assert page.locator('[data-testid="stSidebarNav"]').count() == 0
        field = page.get_by_label("Token")
        assert field.get_attribute("type") == "password"

        field.fill("not-a-token-of-anyones")
        field.press("Enter")
        harness.settle(page)
        assert "That token is not one of this app's" in page.locator('[data-testid="stAlert"]').inner_text()
        assert page.locator("h1").all_inner_texts() == ["Dream Explorer"]

        page.get_by_label("Token").fill(TOKEN)
        page.get_by_label("Token").press("Enter")
        page.wait_for_selector("h1:has-text('Settings')", timeout=120_000)
        harness.settle(page)
        assert "Signed in as ana" in page.locator('[data-testid="stSidebar"]').inner_text()
        assert page.url.endswith("/settings")
