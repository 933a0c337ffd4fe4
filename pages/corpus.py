"""Corpus: what the knowledge base holds, every node with its provenance, and adding documents."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import pandas as pd
import streamlit as st

from explorer import demo, jobs
from explorer.errors import ExplorerError
from explorer.figures.charts import count_bars, year_bars
from explorer.reading.domains_service import list_domains, merge_domains
from explorer.reading.loaders import SUFFIXES
from explorer.records import NODE_TYPES
from explorer.text import shorten
from explorer.views import corpus_overview, corpus_tags, find_nodes, node_provenance
from explorer.wording import SOURCE_RETIRED, counted, node_kind, note_link
from pages import common, untrusted

PAGE_SIZE = 25
READING = "ingest_job"  # the ingest job this page follows: it goes on if the page is left or reloaded
ANY = "any"


def stored_name(uploaded: str) -> Path:
    """Where an upload is kept in its folder: its path inside the folder a person chose (two notes of one name in
    two subfolders stay two), never outside it (no "..", no root).
    """
    parts = [part for part in PurePosixPath(uploaded.replace("\\", "/")).parts if part not in ("", "/", ".", "..")]
    return Path(*parts) if parts else Path("upload")


rt = common.runtime()
st.title("Corpus")
overview = corpus_overview(rt)

if overview.nodes == 0 and jobs.list_jobs(rt, status="active", kind=demo.JOB_KIND):
    st.info(
        "The demo's corpus is on its way: the notice above says how far reading it got.",
        icon=":material/hourglass_top:",
    )
elif overview.nodes == 0:
    st.info(
        "The knowledge base is empty. Two ways in: **add your notes** below, a few files or a whole folder (or "
        "`explorer ingest PATH`), or **try the demo**, on a database of its own: `explorer demo` (this one stays "
        "as it is).",
        icon=":material/waving_hand:",
    )
else:
    a, b, c, d = st.columns(4)
    a.metric("Documents", overview.documents)
    b.metric("Nodes", overview.nodes)
    c.metric("Domains", len(overview.domains))
    d.metric("Years", f"{overview.years[0]}–{overview.years[-1]}" if overview.years else "—")
    left, middle, right = st.columns(3)
    by_kind = {node_kind(kind): count for kind, count in overview.by_type.items()}
    left.plotly_chart(count_bars(by_kind, "Nodes by type"), key="by_type")
    middle.plotly_chart(count_bars(overview.by_domain, "Nodes by domain", colour_by_name=True), key="by_domain")
    if overview.years:
        right.plotly_chart(year_bars(overview.by_year), key="by_year")
    else:  # an axis over no year would span made-up ones
        right.caption(f"Nodes by year: none has a year ({counted(overview.by_year.get(None, 0), 'undated node')}).")


def ask_for_pending_steps(message: str, icon: str, label: str, key: str, warn: bool = False) -> None:
    """A box saying why reading steps are pending, with the button that asks the model for every one of them."""
    with st.container(border=True):
        (st.warning if warn else st.info)(message, icon=icon)
        if st.button(label, key=key, icon=":material/refresh:" if warn else ":material/auto_awesome:"):
            common.start_job(rt, "ingest", {"retry_failed": True}, READING)
            st.rerun()


if overview.deferred and READING not in st.session_state:
    ask_for_pending_steps(
        f"{counted(overview.deferred, 'reading step')} {'is' if overview.deferred == 1 else 'are'} left for later: "
        "a large read places and links its notes at the embedding model's speed, so they are searchable and "
        "walkable at once; their syntheses and entity insights wait for the model.",
        ":material/schedule:",
        "Enrich now",
        "enrich",
    )

if overview.pending and READING not in st.session_state:
    ask_for_pending_steps(
        f"{counted(overview.pending, 'reading step')} {'is' if overview.pending == 1 else 'are'} pending: "
        "the model could not do them when their documents "
        "were read (it failed, timed out, or the budget ran out). The chunks are stored; their syntheses and "
        "entity insights are not yet.",
        ":material/pending:",
        "Ask the model again",
        "retry_failed",
        warn=True,
    )

# -- adding documents ------------------------------------------------------------------

with st.expander("Add documents", icon=":material/upload_file:", expanded=overview.nodes == 0):
    st.caption(
        "Markdown with optional front matter (.md), reStructuredText (.rst), AsciiDoc (.adoc), web pages "
        "(.html), PDF, plain text (.txt), a ChatGPT or Claude export (conversations.json), or JSON lines (.jsonl, "
        "one record per line with `text` and optional `title`, `year`, `domain`). Headings become sections and "
        "code stays code. Each document is read by the READING cycle: chunked, embedded, related to what is known."
    )
    whole_folder = (
        st.segmented_control(
            "Add", ["Files", "A folder"], default="Files", key="ingest_how", help="A folder: every such file in it."
        )
        == "A folder"
    )
    with st.form("ingest", clear_on_submit=True):
        files = st.file_uploader(
            "Folder" if whole_folder else "Files",
            type=[suffix.lstrip(".") for suffix in SUFFIXES],
            accept_multiple_files="directory" if whole_folder else True,
        )
        col1, col2 = st.columns(2)
        domain = col1.text_input(
            "Domain", key="ingest_domain", help="For documents that do not name one (front matter or JSONL field)."
        )
        year = col2.number_input(
            "Year",
            key="ingest_year",
            min_value=0,
            max_value=3000,
            value=None,
            step=1,
            help="For documents that do not name one. Leave empty for undated documents.",
        )
        submitted = st.form_submit_button("Ingest", type="primary", icon=":material/play_arrow:")
    if submitted:
        if not files:
            st.warning("Choose at least one file first.")
        else:  # kept beside the database: the worker reads them after this page's run, and provenance names them
            folder = Path(f"{rt.db.path.resolve()}.uploads") / datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
            folder.mkdir(parents=True)
            paths = []
            for upload in files:
                path = folder / stored_name(upload.name)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(upload.getvalue())
                paths.append(str(path))
            if whole_folder:  # the folder itself is read, so its subfolders name domains as on the command line
                paths = list(dict.fromkeys(str(folder / Path(p).relative_to(folder).parts[0]) for p in paths))
            params = {"paths": paths, "domain": domain.strip() or None, "year": int(year) if year else None}
            common.start_job(rt, "ingest", {**params, "fit_map": True}, READING)

# How reading goes, and how it went, below the form: the form folds away once the knowledge base holds something.
read = common.follow_job(rt, READING, "Reading")
if read is not None:
    report = read.result or {}
    placed = report.get("map") or {}
    common.job_outcome(
        read,
        f"{counted(report.get('documents_added', 0), 'document')} added, "
        f"{report.get('documents_skipped', 0)} already present: {counted(report.get('chunks_added', 0), 'chunk')}, "
        f"{counted(report.get('syntheses_added', 0), 'synthesis', 'syntheses')}, "
        f"{counted(report.get('entity_insights_added', 0), 'entity insight')}"
        + (
            f"; {counted(report['items_deferred'], 'step')} of enrichment left for later"
            if report.get("items_deferred")
            else ""
        )
        + (
            f"; {counted(report.get('items_completed', 0), 'pending step')} completed, "
            f"{report['items_failed']} failed "
            "and kept pending"
            if report.get("items_failed") or report.get("items_completed")
            else ""
        )
        + ". Map: "
        + (
            f"fitted to {counted(placed['fitted'], 'node')}."
            if placed.get("fitted")
            else f"{counted((placed.get('placed') or {}).get('node', 0), 'node')} placed."
        ),
    )
    if report.get("errors"):
        st.error(f"{counted(len(report['errors']), 'problem')}:")
        st.dataframe(pd.DataFrame(report["errors"]), hide_index=True)
    if report.get("files"):  # each file's outcome; its path and reason shown as data, never as Markdown
        synced = ", ".join(
            f"{report.get(f'documents_{what}', 0)} {what}" for what in ("changed", "unchanged", "removed")
        )
        st.caption(f"{counted(len(report['files']), 'file')}: documents {synced}")
        st.dataframe(pd.DataFrame(report["files"], columns=["path", "status", "reason"]), hide_index=True)
    if report.get("documents_added"):
        st.page_link("pages/sessions.py", label="Walk through them: start a session", icon=":material/explore:")

# -- renaming and merging domains ---------------------------------------------------

if overview.nodes:
    domains = {domain.name: domain for domain in list_domains(rt)}
    if said := st.session_state.pop("domains_changed", None):
        st.success(untrusted.md(said), icon=":material/label:")
    with st.expander("Rename or merge domains", icon=":material/label:"):
        st.caption(
            "A domain comes from the document (front matter, the Domain given when adding it), the folder it was "
            "in, its first tag, or a topic found from the notes themselves. Renaming or merging changes the "
            "stored documents and their nodes at once, nothing is read again, and the new name stays: topics "
            "found later never overwrite it."
        )
        with st.form("domains_form", border=False, clear_on_submit=True):
            chosen_domains = st.multiselect(
                "Domains",
                list(domains),
                key="domains_chosen",
                format_func=lambda name: (
                    f"{name} · {domains[name].origin or '—'} · {counted(domains[name].documents, 'document')}"
                ),
            )
            new_name = st.text_input("New name", key="domains_new_name", help="An existing domain's name merges them.")
            if st.form_submit_button("Rename or merge", icon=":material/merge:"):
                try:
                    change = merge_domains(rt, chosen_domains, new_name) if chosen_domains else None
                except ExplorerError as exc:
                    st.error(common.error_text(exc))
                else:
                    if change is None:
                        st.warning("Choose the domains to rename or merge first.")
                    else:
                        st.session_state["domains_changed"] = (
                            f"{', '.join(change.merged)} → {change.into}: "
                            f"{counted(change.documents, 'document')}, {counted(change.nodes, 'node')}"
                        )
                        st.rerun()

# -- the nodes -------------------------------------------------------------------------

st.subheader("Nodes")
f1, f2, f3, f4, f5 = st.columns([3, 2, 2, 1, 2])
search = f1.text_input("Search", placeholder="words in the text, source text or entity", key="node_search")
types = f2.multiselect("Type", list(NODE_TYPES), key="node_types", format_func=node_kind)
domain_filter = f3.selectbox("Domain", [ANY, *overview.domains], key="node_domain")
year_filter = f4.selectbox("Year", [ANY, *overview.years], key="node_year")
tag_filter = f5.selectbox(
    "Tag",
    [ANY, *corpus_tags(rt)],
    key="node_tag",
    format_func=lambda tag: tag if tag == ANY else f"#{tag}",
    help="A vault's tag (front matter or #tag in the text); a tag also finds the tags nested under it.",
)
filters = dict(
    types=types or None,
    search=search.strip() or None,
    domain=None if domain_filter == ANY else domain_filter,
    year=None if year_filter == ANY else int(year_filter),
    tag=None if tag_filter == ANY else tag_filter,
)
total, _ = find_nodes(rt, **filters, limit=0)
pages_count = max(1, math.ceil(total / PAGE_SIZE))
page_number = 1
if pages_count > 1:
    page_number = st.pagination(pages_count, key=f"node_page_{hash(tuple(map(str, filters.values())))}")
_, rows = find_nodes(rt, **filters, limit=PAGE_SIZE, offset=(page_number - 1) * PAGE_SIZE)
st.caption(f"{counted(total, 'node')} found · page {page_number} of {pages_count}")
if rows:
    table = pd.DataFrame(
        {
            "type": [node_kind(n.type) for n in rows],
            "domain": [n.domain or "—" for n in rows],  # a cell says "—" where nothing is known, never "None"
            "year": [str(n.year) if n.year else "—" for n in rows],
            "generation": [n.generation for n in rows],
            "text": [shorten(n.text, chars=160) for n in rows],
            "id": [n.id for n in rows],
        }
    )
    event = st.dataframe(
        table,
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="node_table",
        column_config={"text": st.column_config.TextColumn(width="large")},
    )
    selected_rows = event.selection.rows if event and event.selection else []
    by_id = {n.id: n for n in rows}
    linked = st.query_params.get("node")
    if linked and linked not in by_id and (shared := node_provenance(rt, linked)) is not None:
        by_id = {shared.node.id: shared.node, **by_id}  # a link to a node on another page of the list
    chosen = common.linked_selectbox(
        "Provenance of",
        list(by_id),
        key=f"node_pick_{page_number}",
        param="node",
        what="node",
        clicked=rows[selected_rows[0]].id if selected_rows else None,
        format_func=lambda i: f"{node_kind(by_id[i].type)} · {' '.join(by_id[i].text.split())[:90]}",
    )
    found = node_provenance(rt, chosen)
    if found is not None:
        node = found.node
        with st.container(border=True):
            st.markdown(
                f"**{node_kind(node.type)}** · generation {node.generation} · "
                f"domain {untrusted.md(node.domain or '—')} · year {node.year or '—'} · "
                f"importance {node.importance:.2f} · prominence {node.prominence:.2f}"
            )
            if found.document is not None:
                document = found.document
                retired = f" · {SOURCE_RETIRED[document.retired_because]}" if document.retired_because else ""
                st.caption(
                    untrusted.md(f"Document: {document.title} ({document.source or document.path or 'uploaded'})")
                    + (f" · section “{untrusted.md(node.section)}”" if node.section else "")
                    + retired
                )
                if document.tags or document.aliases:
                    named = "Tags: " + (" ".join(f"#{tag}" for tag in document.tags) or "—")
                    st.caption(
                        untrusted.md(
                            named + (f" · also called {', '.join(document.aliases)}" if document.aliases else "")
                        )
                    )
            model = (node.metadata or {}).get("model")
            if node.learned_from or model:
                st.caption(
                    untrusted.md(f"Made by: {node.learned_from or '—'}" + (f" · model {model}" if model else ""))
                )
            untrusted.text(None, node.text)
            left, right = st.columns(2)
            with left:
                st.markdown(f"**Parents** ({len(found.parents)})")
                for parent in found.parents:
                    untrusted.text(f"{node_kind(parent.type)} · {parent.id[:8]}", shorten(parent.text, chars=400))
            with right:
                st.markdown(f"**Children** ({len(found.children)})")
                for child in found.children:
                    untrusted.text(f"{node_kind(child.type)} · {child.id[:8]}", shorten(child.text, chars=400))
            if found.links:
                st.markdown(f"**Linked notes** ({len(found.links)})")
                for link in found.links:
                    st.caption(untrusted.md(f"{note_link(link.kind, link.outgoing)} {link.title} · {link.node_id[:8]}"))
