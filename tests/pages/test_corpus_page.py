"""The Corpus page: counts, search and filters, provenance, upload and ingest."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from explorer import demo, jobs, projection
from explorer.reading.cycle import DEFERRED
from explorer.reading.domains_service import list_domains
from explorer.reading.ingest import ingest_paths
from explorer.records import PendingReading
from explorer.runtime import open_runtime
from explorer.settings import Settings
from explorer.store import corpus
from explorer.store import reading as reading_store
from explorer.views import corpus_overview
from explorer.wording import counted, node_kind

VAULT = Path(__file__).resolve().parents[1] / "data" / "vault"


def charts(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_counts_and_charts_match_the_database(open_app, app_runtime, page_text) -> None:
    at = open_app("corpus")
    overview = corpus_overview(app_runtime)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Documents"] == str(overview.documents) and metrics["Nodes"] == str(overview.nodes)
    assert metrics["Domains"] == str(len(overview.domains))
    figures = charts(at)
    assert [f["layout"]["title"]["text"] for f in figures][:2] == ["Nodes by type", "Nodes by domain"]
    by_type = dict(zip(figures[0]["data"][0]["y"], figures[0]["data"][0]["x"], strict=True))
    assert by_type == {node_kind(kind): count for kind, count in overview.by_type.items()}
    assert "chunk" in by_type and "raw_chunk" not in by_type  # people read words, not the store's names
    assert f"{counted(overview.nodes, 'node')} found" in page_text(at)


def test_search_and_filters_narrow_the_table_and_open_provenance(open_app, app_runtime, page_text) -> None:
    at = open_app("corpus")
    at.text_input(key="node_search").input("unicode").run()
    with app_runtime.db.connect() as con:
        expected = corpus.count_nodes(con, search="unicode")
    assert 0 < expected < corpus_overview(app_runtime).nodes
    assert f"{counted(expected, 'node')} found" in page_text(at)
    assert len(at.dataframe[0].value) == min(expected, 25)
    at.multiselect(key="node_types").set_value(["synthesis"]).run()
    with app_runtime.db.connect() as con:
        syntheses = corpus.count_nodes(con, search="unicode", types=["synthesis"])
        first = corpus.list_nodes(con, search="unicode", types=["synthesis"], limit=1)[0]
    assert f"{counted(syntheses, 'node')} found" in page_text(at)
    assert set(at.dataframe[0].value["type"]) == {"synthesis"}
    # the first row's provenance: a synthesis has parents, and its text is shown as plain text
    said = page_text(at)
    assert f"**Parents** ({len(first.parent_ids)})" in said and len(first.parent_ids) > 0
    assert first.text in [t.value for t in at.text]


def test_a_chunk_s_provenance_names_its_section(open_app, app_runtime, page_text) -> None:
    at = open_app("corpus")
    at.text_input(key="node_search").input("unicode").run()
    at.multiselect(key="node_types").set_value(["raw_chunk"]).run()
    with app_runtime.db.connect() as con:
        first = corpus.list_nodes(con, search="unicode", types=["raw_chunk"], limit=1)[0]
    assert first.section  # the sample's Markdown is read by its headings
    assert f"section “{first.section}”" in page_text(at)
    assert first.text in [t.value for t in at.text]


def test_domain_and_year_filters(open_app, app_runtime, page_text) -> None:
    at = open_app("corpus")
    overview = corpus_overview(app_runtime)
    at.selectbox(key="node_domain").select("python").run()
    at.selectbox(key="node_year").select(overview.years[0]).run()
    with app_runtime.db.connect() as con:
        expected = corpus.count_nodes(con, domain="python", year=overview.years[0])
    assert expected > 0 and f"{counted(expected, 'node')} found" in page_text(at)
    assert set(at.dataframe[0].value["year"]) == {str(overview.years[0])}


def test_upload_ingests_with_progress_and_places_new_nodes_on_the_map(
    open_app, app_runtime, page_text, after_jobs
) -> None:
    before = corpus_overview(app_runtime)
    at = open_app("corpus")
    note = (
        "---\ntitle: Tea notes\nyear: 2021\n---\n\nGreen tea is steamed or pan-fired soon after picking, which "
        "stops oxidation. Black tea is fully oxidised before drying, and oolong sits between the two.\n"
    )
    at.file_uploader[0].set_value(("tea.md", note.encode(), "text/markdown"))
    at.text_input(key="ingest_domain").input("tea")
    at.form_submit_button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    (job,) = jobs.list_jobs(app_runtime)  # reading is a background job, which the page follows
    assert job.kind == "ingest" and job.params["domain"] == "tea" and Path(job.params["paths"][0]).name == "tea.md"
    after_jobs(at)
    assert "1 document added" in at.get("progress")[0].proto.text  # the reading's outcome, on its progress bar
    (files,) = [t.value for t in at.dataframe if list(t.value.columns) == ["path", "status", "reason"]]
    assert [(Path(p).name, s) for p, s in zip(files["path"], files["status"], strict=True)] == [("tea.md", "added")]
    after = corpus_overview(app_runtime)
    assert after.documents == before.documents + 1 and after.by_domain.get("tea", 0) > 0
    status = projection.projection_status(app_runtime)
    assert status.missing["node"] == 0 and status.placed_nodes == after.nodes - before.nodes


def test_pending_reading_steps_are_shown_and_asked_again(open_app, app_runtime, page_text, after_jobs) -> None:
    with app_runtime.db.connect() as con:
        chunk = corpus.list_nodes(con, types=["raw_chunk"], limit=1)[0]
    step = PendingReading(chunk.id, "insight", "model answered 500", "unicode", "Strings became unicode.", ())
    with app_runtime.db.transaction() as con:
        reading_store.keep_pending(con, [step])
    before = corpus_overview(app_runtime)
    at = open_app("corpus")
    assert before.pending == 1 and "1 reading step is pending" in page_text(at)
    at.button(key="retry_failed").click().run()
    (job,) = jobs.list_jobs(app_runtime)
    assert job.kind == "ingest" and job.params["retry_failed"] and job.params["paths"] == []
    after_jobs(at)
    assert "1 pending step completed, 0 failed" in at.get("progress")[0].proto.text
    after = corpus_overview(app_runtime)
    assert after.pending == 0 and after.by_type["entity_insight"] == before.by_type["entity_insight"] + 1
    assert "pending: the model could not do them" not in page_text(at)


def test_a_cell_with_nothing_known_says_so_not_none(open_app, page_text) -> None:
    at = open_app("corpus")
    table = at.dataframe[0].value
    assert "None" not in set(table["year"]) | set(table["domain"])
    assert all(isinstance(year, str) for year in table["year"])


def test_a_folder_is_added_whole_and_kept_as_it_was(open_app, app_runtime, after_jobs) -> None:
    at = open_app("corpus")
    at.segmented_control(key="ingest_how").set_value("A folder").run()
    bees = b"Bees keep the hive at 35 degrees through the winter by clustering and shivering their flight muscles."
    git = b"A commit records a snapshot of the tree, and a branch is a movable name for one commit."
    at.file_uploader[0].set_value(
        [("notes/bees/index.md", bees, "text/markdown"), ("notes/git/index.md", git, "text/markdown"),
         ("../../escape.md", b"Kept inside the upload folder, whatever its name says.", "text/markdown")]
    )  # fmt: skip
    at.form_submit_button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    (job,) = jobs.list_jobs(app_runtime)
    named = [Path(p) for p in job.params["paths"]]
    assert [p.name for p in named] == ["notes", "escape.md"]  # the folder itself is read, as on the command line
    assert [(named[0] / subject / "index.md").read_bytes() for subject in ("bees", "git")] == [bees, git]
    upload_folder = Path(f"{app_runtime.db.path.resolve()}.uploads")
    assert all(upload_folder in p.resolve().parents for p in named)  # none written outside it
    after_jobs(at)
    found = {(d.name, d.origin) for d in list_domains(app_runtime)}
    assert {("bees", "folder"), ("git", "folder")} <= found  # its subfolders name the domains


def test_an_empty_database_offers_both_ways_in(open_app, page_text, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_DB", str(tmp_path / "empty.duckdb"))
    shown = page_text(open_app("corpus"))
    assert "**add your notes** below, a few files or a whole folder" in shown and "`explorer demo`" in shown


def test_while_the_demo_is_prepared_the_corpus_is_said_to_be_on_its_way(
    open_app, page_text, tmp_path, monkeypatch, embedder
) -> None:
    db = tmp_path / "demo.duckdb"
    monkeypatch.setenv("EXPLORER_DB", str(db))
    runtime = open_runtime(replace(Settings(), db_path=db, embedding_model=embedder.name), embedder=embedder)
    jobs.submit(runtime, demo.JOB_KIND, {}, start_worker=False)
    at = open_app("corpus")
    shown = page_text(at)
    assert "The demo's corpus is on its way" in shown and "Two ways in" not in shown
    bars = [bar.proto.text.replace("\\", "") for bar in at.get("progress")]  # Markdown-escaped
    assert "demo: waiting for a worker" in bars, bars


def test_a_corpus_without_years_draws_no_year_axis(open_app, app_runtime, page_text) -> None:
    """With no dated node the year chart gives way to a caption (an empty axis ran from -1 to 4); with years, the
    chart's axis is those years.
    """
    at = open_app("corpus")
    years = corpus_overview(app_runtime).years
    (by_year,) = [f for f in charts(at) if f["layout"]["title"]["text"].startswith("Nodes by year")]
    assert by_year["data"][0]["x"] == list(range(years[0], years[-1] + 1))
    with app_runtime.db.transaction() as con:
        con.execute("UPDATE nodes SET year = NULL")
    nodes = corpus_overview(app_runtime).nodes
    at = open_app("corpus")
    assert not [f for f in charts(at) if f["layout"]["title"]["text"].startswith("Nodes by year")]
    assert f"Nodes by year: none has a year ({counted(nodes, 'undated node')})." in page_text(at)


def test_a_vaults_tags_filter_and_its_wikilinks_show_as_such(open_app, app_runtime, page_text) -> None:
    assert ingest_paths(app_runtime, [VAULT]).errors == []
    at = open_app("corpus")
    at.selectbox(key="node_tag").select("memory/cycles").run()
    at.multiselect(key="node_types").set_value(["raw_chunk"]).run()
    with app_runtime.db.connect() as con:
        expected = corpus.count_nodes(con, types=["raw_chunk"], tag="memory/cycles")
    said = page_text(at)
    assert expected == 2 and f"{counted(expected, 'node')} found" in said  # its prose and its code block
    assert "Tags: #memory #python #memory/cycles · also called GC, Cycle collector" in said
    assert "**Linked notes** (" in said
    assert "links in the vault to Reference counting" in said  # a wikilink the person wrote
    assert "linked in the vault from Memory allocator" in said  # by an alias, from a note read after it


def test_renaming_a_domain_renames_it_everywhere_the_app_shows_domains(open_app, app_runtime, page_text) -> None:
    before = corpus_overview(app_runtime)
    assert "python" in before.domains
    at = open_app("corpus")
    at.multiselect(key="domains_chosen").set_value(["python"])
    at.text_input(key="domains_new_name").input("Python language")
    next(b for b in at.button if b.label == "Rename or merge").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "python → Python language" in page_text(at)
    after = corpus_overview(app_runtime)
    assert "python" not in after.domains and "Python language" in after.domains
    assert after.by_domain["Python language"] == before.by_domain["python"]
    assert "Python language" in at.selectbox(key="node_domain").options  # the node filter
    sessions = open_app("sessions")
    assert "Python language" in sessions.multiselect(key="new_allowed").options  # the walk's scope
    assert "python" not in sessions.multiselect(key="new_allowed").options


def test_an_unknown_or_blank_name_is_said_on_the_page(open_app, app_runtime, page_text) -> None:
    at = open_app("corpus")
    at.multiselect(key="domains_chosen").set_value(["python"])
    at.text_input(key="domains_new_name").input(" ")
    next(b for b in at.button if b.label == "Rename or merge").click().run()
    assert "a domain's new name must not be blank" in page_text(at)
    assert "python" in corpus_overview(app_runtime).domains


def test_steps_left_for_later_are_shown_apart_and_enriched_on_request(
    open_app, app_runtime, page_text, after_jobs
) -> None:
    with app_runtime.db.connect() as con:
        chunk = corpus.list_nodes(con, types=["raw_chunk"], limit=1)[0]
    step = PendingReading(chunk.id, "entities", DEFERRED, attempts=0)
    with app_runtime.db.transaction() as con:
        reading_store.remove_pending(con, [step.key])  # the prepared database may hold it failed: start afresh
        reading_store.keep_pending(con, [step])
    before = corpus_overview(app_runtime)
    at = open_app("corpus")
    assert before.deferred == 1 and before.pending == 0
    assert "1 reading step is left for later" in page_text(at) and "the model could not do" not in page_text(at)
    at.button(key="enrich").click().run()
    (job,) = jobs.list_jobs(app_runtime)
    assert job.kind == "ingest" and job.params["retry_failed"] and job.params["paths"] == []
    after_jobs(at)
    after = corpus_overview(app_runtime)
    assert after.deferred == 0 and after.by_type.get("entity_insight", 0) > before.by_type.get("entity_insight", 0)
    assert "left for later" not in page_text(at)
