"""Hostile text in a real browser: documents full of Markdown images, links, raw HTML and bare URLs pointing at a
local HTTP server, read by the engine and answered by the (extractive) offline provider, so that residues,
crystals, dreams, a session's name and consolidated experiences carry them too. Every page, with its expanders
open and a session, crystal, step and dream selected, must show that text literally: no live link to the server,
no image from it, and not a single request reaching it. And the app the tests start (like ``explorer demo``)
serves this machine only.
"""

from __future__ import annotations

import http.server
import json
import random
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import harness
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from explorer.consolidation.service import import_log, run_consolidation
from explorer.dreaming import service as dreaming
from explorer.projection import update_projection
from explorer.providers.embeddings import HashingEmbedder
from explorer.reading.ingest import ingest_paths
from explorer.records import Node
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import corpus
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

# every attribute through which a page could load or link to an address
FIND_ADDRESS = """base => [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
    .filter(a => ['href', 'xlink:href', 'src', 'srcset', 'poster', 'data', 'action', 'style'].includes(a.name)
                 && a.value.includes(base))
    .map(a => `${e.tagName} ${a.name}=${a.value}`))"""


class Trap(http.server.ThreadingHTTPServer):
    """An HTTP server on 127.0.0.1 that records every request it receives."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        trap = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
                trap.requests.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture(scope="module")
def trap() -> Iterator[Trap]:
    server = Trap()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def hostile(base: str, tag: str) -> str:
    """Sentences each carrying a way Markdown or HTML could reach ``base``."""
    return (
        f"The {tag} garden keeps ![a picture]({base}/{tag}/image.png) beside every path it remembers.\n\n"
        f"Gardeners of the {tag} garden read [the full story]({base}/{tag}/link) before they plant anything.\n\n"
        f'A raw <img src="{base}/{tag}/raw.png"> tag hides in the soil of the {tag} garden path.\n\n'
        f"Visitors type {base}/{tag}/bare at the {tag} garden gate and see :red[red flowers] with $x^2$ petals.\n\n"
        f'The **bold** gardener writes <a href="{base}/{tag}/anchor">a note</a> on every {tag} garden leaf.\n'
    )


@pytest.fixture(scope="module")
def hostile_db(trap: Trap, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = f"http://127.0.0.1:{trap.server_port}"
    folder = tmp_path_factory.mktemp("hostile")
    for year, tag in ((2001, "rose"), (2005, "fern"), (2010, "moss"), (2012, "pine")):
        (folder / f"{tag}.md").write_text(
            f"---\ntitle: '{tag} ![title]({base}/{tag}/title.png) [title]({base}/{tag}/title)'\nyear: {year}\n"
            f"domain: '{tag} <a href=\"{base}/{tag}/domain\">domain</a>'\n---\n" + hostile(base, tag),
            encoding="utf-8",
        )
    embedder = HashingEmbedder()
    path = folder / "hostile.duckdb"
    runtime = open_runtime(replace(Settings(), db_path=path, embedding_model=embedder.name), embedder=embedder)
    report = ingest_paths(runtime, [folder])
    assert report.documents_added == 4 and not report.errors, report.errors
    update_projection(runtime)
    session = wander.create_session(
        runtime,
        SessionConfig(
            seed_concept=f"garden path picture ![seed]({base}/seed.png)",
            name=f"Garden ![walk]({base}/name.png) [walk]({base}/name) {base}/name",
            random_seed=0,
            human_checkpoint_frequency=3,
        ),
    )
    wander.run(runtime, session.id, 5)
    if not wander.list_crystals(runtime, session_id=session.id):
        assert wander.crystallize(runtime, session.id).crystal is not None
    dreaming.run_rem(runtime, dreams=2, seed=7)
    text = f"A dream of ![dream]({base}/dream.png) and [a door]({base}/dream) at {base}/dream"
    with runtime.db.transaction() as con:  # one dream whose question and model name are hostile too
        corpus.insert_nodes(
            con,
            [
                Node(
                    type="rem_dream",
                    text=text,
                    year=2012,
                    generation=1,
                    confidence=0.5,
                    metadata={"question": f"Why ![q]({base}/question.png)?", "model": f"[m]({base}/model)"},
                    embedding=embedder.embed([text])[0],
                )
            ],
        )
    import_log(runtime, garden_log(base, folder / "garden.jsonl"))
    assert run_consolidation(runtime, "imported").to_json()["patterns"]
    runtime.flush()
    return path


def garden_log(base: str, path: Path) -> Path:
    """An experience log of three gardening strategies, four alike moves each, every one carrying an image."""
    words = {
        "pruning": ["prune", "rose", "stem", "cut", "bud", "shear", "thorn", "branch", "blade", "spring"],
        "watering": ["water", "fern", "soak", "root", "can", "morning", "hose", "drip", "puddle", "thirst"],
        "mulching": ["mulch", "moss", "bark", "layer", "soil", "cover", "straw", "compost", "chips", "warmth"],
    }
    rng = random.Random(0)
    lines = [
        {
            "kind": "move",
            "outcome": "success",
            "strategy": name,
            "session_id": f"garden-{step}",
            "description": f"{' '.join(rng.sample(pool, 5))} step{step}{name[:3]} ![p]({base}/{name}.png)",
        }
        for step in range(4)
        for name, pool in words.items()
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def hostile_app(hostile_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with harness.streamlit_server(hostile_db, log=tmp_path_factory.mktemp("hostile-log") / "streamlit.log") as url:
        yield url


def open_every_expander(page) -> None:
    """Open every expander, tab by tab: a tab's expanders cannot be clicked until the tab is chosen."""
    tabs = page.get_by_role("tab")
    for index in range(tabs.count() or 1):
        if tabs.count():
            tabs.nth(index).click()
        open_visible_expanders(page)


def open_visible_expanders(page) -> None:
    closed = '[data-testid="stExpander"] details:not([open]) > summary'
    count = f"() => document.querySelectorAll('{closed}').length"
    visible = page.locator(f"{closed}:visible")
    for _ in range(50):
        if not visible.count():
            return
        left = page.evaluate(count)
        visible.first.click()
        try:
            page.wait_for_function(f"n => ({count})() < n", arg=left, timeout=10_000)
        except PlaywrightTimeout:  # seen on a loaded machine, with fragments polling: the click was lost; again
            continue
    raise AssertionError("expanders keep closing")


def choose(page, label: str, option_text: str) -> None:
    """Pick the first option of the selectbox ``label`` whose text holds ``option_text``."""
    page.locator('[data-testid="stSelectbox"]').filter(has_text=label).locator("input").click()
    page.keyboard.type(option_text)
    page.keyboard.press("Enter")
    harness.settle(page)


def test_hostile_model_and_document_text_is_never_a_link_an_image_or_a_request(hostile_app, trap) -> None:
    base = f"http://127.0.0.1:{trap.server_port}"
    shown_on = {}
    with harness.chromium(1400, 1400) as page:
        for name in harness.PAGES:
            harness.open_page(page, hostile_app, name)
            if name == "map":
                choose(page, "Or inspect a step of the path", "step")
            open_every_expander(page)
            page.wait_for_timeout(500)  # time for any image to be fetched
            assert page.evaluate(FIND_ADDRESS, base) == [], name
            assert not page.locator('[data-testid="stException"]').count(), name
            shown_on[name] = f"127.0.0.1:{trap.server_port}/" in page.inner_text("body")
    assert trap.requests == []
    # the hostile text was there to be shown, literally, on every page that shows model or document text
    assert {name for name, shown in shown_on.items() if shown} >= {
        "corpus",
        "sessions",
        "map",
        "crystals",
        "trace",
        "dreams",
        "consolidation",
    }, shown_on


def test_the_app_serves_this_machine_only(hostile_app) -> None:
    port = int(hostile_app.rsplit(":", 1)[1])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:  # this machine's address towards a network
        try:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
    if address.startswith("127."):
        pytest.skip("this machine has no address but loopback")
    with pytest.raises(OSError), socket.create_connection((address, port), timeout=2):
        pass
