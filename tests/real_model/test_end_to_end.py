"""Every mechanism through litellm to a real local model (SmolLM2-135M on llama.cpp's server): reading, ten steps of
a walk and a crystallization, a night of dreaming and a consolidation (:mod:`explorer.testing.full_run`).

A 135M model is not expected to answer well: the product must ask every prompt kind, accept or refuse each answer
with a recorded reason, write nothing half-done, and charge the budget for the tokens the server counted. One of
the documents read holds a Markdown link, an image and HTML: what the CLI and the export show of the run keeps such
text inert.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from explorer.export import session_summary
from explorer.prompts import load_prompts
from explorer.providers.embeddings import Embedder
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.store import corpus
from explorer.testing.full_run import FullRun, full_run, read_fortunes
from explorer.testing.llama_server import SERVED_MODEL, LlamaServer
from explorer.wander import service as wander

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(1800)]  # the run is one fixture: minutes on a loaded machine

DOCUMENTS = sorted((Path(__file__).parent / "documents").glob("*.md"))
EXPERIENCES = Path(__file__).parents[1] / "data" / "experiences_sample.jsonl"
# A kind asked only with what an earlier answer gave: a small model's refused answers can leave it unasked.
NEEDS = {
    "entity_synthesis": "entities",
    "wander_validate": "wander_crystallize",
    "consolidation_abstraction": "consolidation_pattern",
    "consolidation_relation": "consolidation_abstraction",
    "consolidation_contradiction": "consolidation_pattern",
}
HOSTILE = ("](http://127.0.0.1:9/trap", "<b>", "<a href")  # the forgetting-curve document's links and HTML
# Made-up prices, so that the budget's cents are the server's token counts, priced: dollars per million tokens.
PRICES = (1.0, 2.0)


@pytest.fixture(scope="module")
def runtime(
    llama_server: LlamaServer, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Runtime]:
    """Fortunes read offline to walk and dream over, then the real server as the model: one request at a time (the
    server computes one at a time on both cores) and no retries (each attempt is one answer to judge).
    """
    folder = tmp_path_factory.mktemp("real_model")
    offline = replace(Settings(), db_path=folder / "explorer.duckdb", embedding_model=embedder.name)
    read_fortunes(open_runtime(offline, embedder=embedder), folder)
    settings = replace(
        offline,
        local_model=SERVED_MODEL,
        api_base=llama_server.url,
        concurrency=1,
        retries=0,
        timeout_s=120.0,
        prices={SERVED_MODEL: PRICES},
    )
    with pytest.MonkeyPatch.context() as patch:
        for name, value in llama_server.env().items():
            patch.setenv(name, value)
        yield open_runtime(settings, embedder=embedder)


@pytest.fixture(scope="module")
def run(runtime: Runtime) -> FullRun:
    return full_run(runtime, DOCUMENTS, EXPERIENCES, steps=10, dreams=1)


def model_calls(run: FullRun) -> list:
    return [call for call in run.calls if call.tier == "local"]


def test_every_prompt_kind_is_asked_of_the_real_model(run: FullRun) -> None:
    """Each kind, unless the answers it is made from were refused (then those were asked, and the reasons kept)."""
    asked = {call.purpose for call in model_calls(run)}
    unasked = set(load_prompts()) - asked
    assert all(NEEDS.get(kind) in asked for kind in unasked), f"never asked: {sorted(unasked)}"
    assert {call.model for call in model_calls(run)} == {SERVED_MODEL}


def answers(run: FullRun) -> list:
    """The calls the model answered: all but the one llama.cpp refused for the OpenAI schema form (HTTP 500, the
    gateway asks again at once in llama.cpp's own form and keeps to it, logged as ``form_refused``).
    """
    calls = model_calls(run)
    refused_forms = [number for number, call in enumerate(calls) if call.outcome == "form_refused"]
    assert len(refused_forms) <= 1, [calls[number].error for number in refused_forms]
    for number in refused_forms:
        assert calls[number + 1].purpose == calls[number].purpose  # asked again at once
    return [call for call in calls if call.outcome != "form_refused"]


def test_each_answer_is_accepted_or_refused_with_a_reason(run: FullRun) -> None:
    for call in answers(run):
        assert call.outcome in ("ok", "parse_error"), (call.purpose, call.outcome, call.error)  # no timeout
        assert (call.outcome == "ok") == (call.error is None), (call.purpose, call.error)
        if call.error is not None:
            assert f"answer to {call.purpose} was refused: " in call.error


def test_the_budget_is_charged_for_the_tokens_the_server_counted(run: FullRun, runtime: Runtime) -> None:
    prices = runtime.gateway.token_prices(SERVED_MODEL)
    assert prices is not None
    for call in answers(run):
        assert call.prompt_tokens > 0 and call.completion_tokens > 0, call
        charged = (call.prompt_tokens * prices[0] + call.completion_tokens * prices[1]) * 100
        assert call.cost_cents == pytest.approx(charged), call.purpose
    outside_the_walk = sum(call.cost_cents for call in model_calls(run) if call.session_id is None)
    assert run.budget.spent_cents == pytest.approx(outside_the_walk)
    session = wander.get_session(runtime, run.session_id)
    in_the_walk = sum(call.cost_cents for call in model_calls(run) if call.session_id == run.session_id)
    assert session.cloud_spent_cents == pytest.approx(in_the_walk) and in_the_walk > 0


def test_every_run_is_whole_and_stored(run: FullRun, runtime: Runtime) -> None:
    assert run.ingest.documents_added == len(DOCUMENTS) and run.ingest.chunks_added >= len(DOCUMENTS)
    assert len(run.step_seconds) == 10 and run.crystallized
    assert wander.get_session(runtime, run.session_id).step_count == 10
    assert len(wander.session_view(runtime, run.session_id).trace) == 10
    rem = run.night.rem
    assert rem.dreams_stored + rem.dreams_dropped + rem.failures == rem.dreams_requested == 1
    assert run.consolidation.to_json()["status"] not in ("not_due", "skipped"), run.consolidation.brief()


def test_the_document_with_links_images_and_html_is_shown_inert(run: FullRun, runtime: Runtime) -> None:
    """Stored as its prose, without the links' targets or the HTML; the CLI prints what the model made of it as
    plain text (no terminal escape), the export's summary escapes it.
    """
    with runtime.db.connect() as con:
        texts = [node.text for node in corpus.list_nodes(con, types=["raw_chunk"])]
    hostile = [text for text in texts if "hippocampus replays the day" in text]
    assert hostile and "the forgetting curve." in hostile[0], texts
    assert not any(marker in text for marker in HOSTILE for text in texts), texts
    shown = subprocess.run(
        [sys.executable, "-m", "explorer", "wander", "show", run.session_id, "--db", str(runtime.settings.db_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "\x1b" not in shown
    summary = session_summary(wander.session_view(runtime, run.session_id))
    rendered = MarkdownIt("commonmark").render(summary)
    assert not re.search(r"<(a|img|b|script)\b", rendered), rendered
