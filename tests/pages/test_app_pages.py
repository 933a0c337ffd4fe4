"""Across the app: navigation, the offline notice, Settings (keys present, never shown), Dreams,
model text shown as text, a busy database as one line, and an unexpected error as one line (its traceback logged).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from explorer import jobs
from explorer.dreaming import service as dreaming
from explorer.records import Node, Verdict
from explorer.store import corpus
from explorer.store import dreaming as dreaming_store
from explorer.testing.dreams import dream_node
from explorer.text import shorten
from explorer.wording import node_kind
from pages.common import UNEXPECTED

MODEL_PAGES = ("sessions", "map", "crystals", "resonances", "trace", "dreams", "consolidation")


def test_navigation_lists_every_page_and_each_renders(open_app, page_text) -> None:
    at = open_app("corpus")
    # the session paused at its checkpoint is announced in the shared sidebar
    assert any("Unicode walk** waits for review at step 3" in w.value for w in at.sidebar.warning)
    for name in ("corpus", "sessions", "map", "crystals", "resonances", "trace", "dreams", "consolidation", "settings"):
        at.switch_page(f"pages/{name}.py").run()
        assert not at.exception, (name, [e.value for e in at.exception])
        assert at.title[0].value == name.capitalize()


@pytest.mark.parametrize("name", MODEL_PAGES)
def test_pages_with_model_output_say_plainly_when_it_is_the_offline_provider(open_app, page_text, name) -> None:
    assert "It is extractive, not a language model" in page_text(open_app(name))


def test_the_settings_page_does_not_send_people_to_itself(open_app, page_text) -> None:
    assert "for real reflection (see Settings)" in page_text(open_app("trace"))
    shown = page_text(open_app("settings"))
    assert "It is extractive, not a language model" in shown and "see Settings" not in shown


def test_with_a_model_configured_the_offline_notice_goes(open_app, page_text, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LOCAL_MODEL", "ollama/llama3.1")
    at = open_app("trace")
    assert "not a language model" not in page_text(at)
    at.switch_page("pages/settings.py").run()
    assert "ollama/llama3.1" in at.dataframe[0].value["model"].tolist()


def test_settings_say_whether_a_key_is_set_and_never_show_it(open_app, page_text, monkeypatch, app_db) -> None:
    secret = "sk-ant-secret-value-123"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("EXPLORER_CLOUD_MODEL", "anthropic/claude-sonnet-4-5")
    at = open_app("settings")
    keys = at.dataframe[1].value.set_index("variable")
    assert keys.loc["ANTHROPIC_API_KEY", "set"] == "yes" and keys.loc["OPENAI_API_KEY", "set"] == "no"
    assert keys.loc["ANTHROPIC_API_KEY", "needed by the configured models"] == "yes"
    everything = page_text(at) + "".join(df.value.to_csv() for df in at.dataframe)
    assert secret not in everything and str(app_db) in everything


def test_dreaming_from_the_page_reports_and_lists_the_dreams(
    open_app, app_runtime, page_text, shown, after_jobs
) -> None:
    assert dreaming.recent_dreams(app_runtime) == []  # the prepared database has not dreamt yet
    at = open_app("dreams")
    assert "No dream yet." in [c.value for c in at.caption]
    at.radio[0].set_value("REM cycle")
    at.number_input[0].set_value(2)
    at.form_submit_button[0].click().run()
    after_jobs(at)  # dreaming is a background job, which the page follows
    assert not at.exception, [e.value for e in at.exception]
    stored = dreaming.recent_dreams(app_runtime, limit=50)
    assert "Last run: REM cycle" in page_text(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["dreams requested"] == "2" and metrics["dreams stored"] == str(len(stored))
    assert int(metrics["dreams stored"]) + int(metrics["dreams dropped"]) <= 2  # the rest failed
    assert [shown(e.label) for e in dream_cards(at)] == [shorten(d.dream.text, chars=110) for d in stored]
    again = open_app("dreams")  # a reload: the last run stands, with why it did less than asked
    assert "Last run: REM cycle" in page_text(again)
    if len(stored) < 2:
        assert "The REM cycle stored" in page_text(again)


def test_the_last_night_s_report_reads_as_lines_not_a_json_widget(open_app, app_runtime, page_text, after_jobs) -> None:
    at = open_app("dreams")
    at.radio[0].set_value("All (one night)")
    at.number_input[0].set_value(1)
    at.form_submit_button[0].click().run()
    after_jobs(at)
    assert not at.exception, [e.value for e in at.exception]
    assert "Last run: All (one night)" in page_text(at)
    assert not at.json  # a collapsed {...} says nothing to a person
    (night,) = [j for j in jobs.list_jobs(app_runtime) if j.kind == "dream.cycle"]
    texts = [t.value for t in at.text]
    for name, title in (("exploration", "REM exploration"), ("fusion", "Fusion"), ("rem", "REM cycle")):
        assert f"**{title}**" in [m.value for m in at.markdown]
        reports = [t for t in texts if f"model calls: {night.result[name]['model_calls']}" in t.splitlines()]
        assert reports and not any("{" in t for t in reports)  # lines, not a dict (dream text may hold braces)


def test_a_night_with_nothing_fading_says_why_in_plain_words(open_app, page_text, after_jobs) -> None:
    at = open_app("dreams")
    at.radio[0].set_value("REM exploration")
    at.form_submit_button[0].click().run()
    after_jobs(at)
    assert "Exploration found no link: no memory is fading yet" in page_text(at)


def dream_cards(at: AppTest) -> list:
    """The Dreams page's one expander per dream (the "Last run" report draws no expander)."""
    return [e for e in at.expander if e.label]


def test_the_dreams_page_shows_each_dream_with_its_question_and_what_it_was_dreamt_from(
    open_app, app_runtime, shown
) -> None:
    with app_runtime.db.connect() as con:
        chunks = corpus.list_nodes(con, types=["raw_chunk"], latest_only=True)
    by_year = sorted(chunks, key=lambda n: (n.year or 0, n.id))
    written = [
        (
            "Unicode became the default string type, and the bytes type carries what used to be text.",
            "What did Python give up when text and bytes parted ways?",
            [by_year[-1], by_year[0], by_year[len(by_year) // 2]],
        ),
        (
            "Each release tidied the standard library a little, and the tidying itself became a habit.",
            "Why does every release remove something?",
            [by_year[-2], by_year[1], by_year[3]],
        ),
    ]
    dreams = [dream_node(app_runtime.embedder, text, question, parents) for text, question, parents in written]
    for dream in dreams:  # one transaction each, so the second is the newer
        with app_runtime.db.transaction() as con:
            corpus.insert_nodes(con, [dream])

    at = open_app("dreams")
    cards = dream_cards(at)
    assert [shown(c.label) for c in cards] == [text for text, _, _ in reversed(written)]  # newest first
    for card, (text, question, parents), dream in zip(cards, reversed(written), reversed(dreams), strict=True):
        texts = [t.value for t in card.text]
        captions = [shown(c.value) for c in card.caption]
        assert texts[:2] == [question, text]
        assert captions[:2] == ["question", "dream"]
        assert f"year {dream.year} · confidence 0.70 · model offline-extractive" in captions
        assert f"**Dreamt from** ({len(parents)})" in [m.value for m in card.markdown]
        assert texts[2:] == [shorten(p.text, chars=400) for p in parents]
        assert captions[3:] == [f"{node_kind(p.type)} · {p.domain or '—'} · {p.year or '—'}" for p in parents]


def test_a_long_dream_s_title_is_cut_between_words(open_app, app_runtime, shown) -> None:
    """A dream too long for its card's title ends at a whole word and an ellipsis, never "…to be c"."""
    with app_runtime.db.connect() as con:
        chunks = corpus.list_nodes(con, types=["raw_chunk"], latest_only=True)[:3]
    text = (
        "Reading the old release notes, one finds that every change was argued for as if it had to be "
        "considered permanent, and each was later revised."
    )
    assert text[:110].split()[-1] not in text.split()  # cut at 110 characters, a word would break
    with app_runtime.db.transaction() as con:
        corpus.insert_nodes(con, [dream_node(app_runtime.embedder, text, "What lasts?", chunks)])
    (card,) = dream_cards(open_app("dreams"))
    title = shown(card.label)
    assert title.endswith(" …") and len(title) <= 110
    assert text.startswith(title.removesuffix(" …")) and text[len(title) - 2] == " "


def test_model_and_corpus_text_is_shown_as_text_never_html(open_app, app_runtime) -> None:
    hostile = "<img src=x onerror=alert(1)> **not bold** <script>alert(2)</script>"
    vector = app_runtime.embedder.embed([hostile])[0]
    with app_runtime.db.transaction() as con:
        corpus.insert_nodes(con, [Node(type="synthesis", text=hostile, embedding=vector, domain="zzz")])
    at = open_app("corpus")
    at.selectbox(key="node_domain").select("zzz").run()
    assert hostile in [t.value for t in at.text]
    assert not any(m.allow_html for m in at.markdown)
    assert not at.get("html")


def test_a_busy_database_is_one_line_not_a_traceback(open_app, app_db, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LOCK_WAIT", "0.5")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ("import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)"),
            str(app_db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        at = _run_app()
        assert not at.exception, [e.value for e in at.exception]
        assert len(at.error) == 1 and "is busy" in at.error[0].value and "\n" not in at.error[0].value
    finally:
        holder.kill()
        holder.wait()


def _run_app():
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60)
    started = time.monotonic()
    at.run()
    assert time.monotonic() - started < 30
    return at


def test_an_unexpected_error_is_one_line_for_the_viewer_and_its_traceback_goes_to_the_log(
    open_app, app_db, page_text, caplog
) -> None:
    with duckdb.connect(str(app_db)) as con:  # a damaged file: the documents' table is gone
        con.execute("DROP TABLE documents")
    with caplog.at_level(logging.ERROR, logger="explorer.app"):
        at = open_app("corpus")  # the first page: AppTest runs a page it switches to without app.py
    assert [e.value for e in at.error] == [UNEXPECTED] and "\n" not in UNEXPECTED
    assert "documents" not in page_text(at) and not at.exception
    (record,) = [r for r in caplog.records if r.name == "explorer.app"]
    assert record.exc_info and "Table with name documents does not exist" in str(record.exc_info[1])
    assert "Traceback" in caplog.text and "pages/corpus.py" in caplog.text


def test_the_dreams_page_lists_every_verdict_with_its_reason(open_app, app_runtime) -> None:
    with app_runtime.db.connect() as con:
        seed, kept_to, refused_to = corpus.list_nodes(con, types=["raw_chunk"])[:3]
    verdicts = [
        Verdict(seed.id, kept_to.id, 4, 4, 3, True, "Kept: stronger than 99.8% of pairs here.", "Both concern X."),
        Verdict(seed.id, refused_to.id, 3, 1, 1, False, "Not kept: only stronger than 90.0% of pairs here."),
    ]
    with app_runtime.db.transaction() as con:
        dreaming_store.insert_verdicts(con, verdicts)
    at = open_app("dreams")
    assert "1 of 2 candidate links kept; every verdict with its scores and reason." in [c.value for c in at.caption]
    (table,) = [df.value for df in at.dataframe if "reason" in df.value.columns]
    assert sorted(table["reason"]) == sorted(v.reason for v in verdicts)
    assert sorted(table["kept"]) == [False, True] and sorted(table["plausibility"]) == [1, 4]
