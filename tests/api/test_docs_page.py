"""`/docs` works with no network: Swagger UI's page, scripts and styles come from the server itself."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from .conftest import Server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
import harness  # noqa: E402  (the real Chromium, shared with the end-to-end tests)


def test_the_docs_page_draws_every_route_with_nothing_from_outside(server: Server) -> None:
    page_html = httpx.get(f"{server.url}/docs", timeout=30).text
    assert "/swagger/swagger-ui-bundle.js" in page_html and "cdn" not in page_html.lower()
    asked_outside: list[str] = []
    with harness.chromium() as page:

        def local_only(route) -> None:  # as on a machine with no network: nothing but the server answers
            if route.request.url.startswith(server.url):
                route.continue_()
            else:
                asked_outside.append(route.request.url)
                route.abort()

        page.route("**/*", local_only)
        page.goto(f"{server.url}/docs")
        page.locator(".opblock-summary-path", has_text="/api/v1/wander/sessions").first.wait_for(timeout=30_000)
        paths = set(page.locator(".opblock-summary-path").all_inner_texts())
    served = httpx.get(f"{server.url}/openapi.json", timeout=30).json()["paths"]
    assert {path.replace("\u200b", "") for path in paths} == set(served)
    assert asked_outside == []
