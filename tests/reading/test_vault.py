"""A vault's own structure: tags, aliases, dates and wikilinks read from notes, and the links between notes stored."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from explorer.reading.ingest import ingest_paths
from explorer.reading.loaders import SourceText, load_file
from explorer.reading.mentions import LinkIndex
from explorer.reading.vault import is_attachment, link_key, normal_tag, read_note, tag_matches, wikilink_names
from explorer.runtime import Runtime
from explorer.store import corpus

VAULT = Path(__file__).resolve().parents[1] / "data" / "vault"


# -- reading one note -------------------------------------------------------------------------------------------


def test_wikilinks_are_read_as_their_words_and_kept_as_links() -> None:
    note = read_note(
        {},
        "By [[Reference counting|counting references]], see [[Weak references#Caches]] and [[Pools#^block1]]; "
        "![[Allocator]] ![[diagram.png]] [[paper.pdf]] [[#Own heading]]",
    )
    assert note.text == (
        "By counting references, see Weak references › Caches and Pools; Allocator  paper.pdf Own heading"
    )
    assert note.links == ("Reference counting", "Weak references", "Pools", "Allocator")  # no attachment, no self


def test_tags_come_from_front_matter_and_text_but_not_from_code_headings_or_urls() -> None:
    body = (
        "# A heading\n"
        "Text with #idea and #project/alpha, `#in-code` and issue#7, #42, https://x.org/page#part.\n"
        "\n"
        "```\n"
        "#in-a-fence [[Not a link]]\n"
        "```\n"
        "\n"
        "    #indented-code\n"
        "\n"
        "- a list\n"
        "  ~~~\n"
        "  #fenced-in-a-list\n"
        "  ~~~\n"
        "## Another #Idea\n"
    )
    note = read_note({"tags": "Memory, #python  gc"}, body)
    assert note.tags == ("memory", "python", "gc", "idea", "project/alpha")
    assert note.links == ()
    assert "#in-a-fence [[Not a link]]" in note.text  # code is kept as written


def test_front_matter_tags_and_aliases_as_lists_or_text() -> None:
    assert read_note({"tags": ["A", "#b/C", None, ""]}, "x").tags == ("a", "b/c")
    assert read_note({"tag": "solo"}, "x").tags == ("solo",)
    assert read_note({"aliases": ["GC", "Cycle collector"]}, "x").aliases == ("GC", "Cycle collector")
    assert read_note({"alias": "GC, Cycle collector"}, "x").aliases == ("GC", "Cycle collector")
    assert read_note({"Aliases": "Cycle collector"}, "x").aliases == ("Cycle collector",)  # keys in any case


def test_a_created_or_date_field_gives_the_year_and_a_vague_one_none() -> None:
    assert read_note({"created": dt.date(2021, 3, 4)}, "x").year == 2021
    assert read_note({"date": "2022-01-10T09:30"}, "x").year == 2022
    assert read_note({"created": "someday"}, "x").year is None
    assert read_note({}, "x").year is None


def test_callouts_and_logseq_properties_are_prose_not_markup() -> None:
    note = read_note({}, "status:: draft\n- id:: 64a1\n> [!warning]- Mind the cycles\n> Lists hold themselves.\n")
    assert note.text == "> Mind the cycles\n> Lists hold themselves."


def test_names_are_matched_as_obsidian_resolves_links() -> None:
    assert link_key("notes/Garbage  Collection.md") == link_key("garbage collection") == "garbage collection"
    assert wikilink_names(("Memory allocator", "Pools"), "vault/notes/Allocator.md") == (
        "Memory allocator",
        "Pools",
        "Allocator.md",
    )
    assert is_attachment("image.png") and is_attachment("paper.PDF")
    assert not is_attachment("Python 3.12 notes") and not is_attachment("Note.md")
    assert normal_tag("#Project/Alpha/") == "project/alpha"
    assert tag_matches("project/alpha", "#Project") and not tag_matches("projects", "project")


def test_a_link_index_resolves_both_ways() -> None:
    index = LinkIndex()
    index.add_links("a", ["Later note", "Nowhere"])
    index.add_names("b", ["Earlier", "B alias"])
    assert index.resolve("c", ["b ALIAS", "Nowhere"]) == {"b": "b ALIAS"}
    assert index.linking("d", ["later note"]) == {"a": "Later note"}
    assert index.linking("a", ["later note"]) == {}  # a note never links itself


def test_the_loader_fills_the_source_text_from_the_vault() -> None:
    [source] = list(load_file(VAULT / "Generational hypothesis.md", year=1999))
    assert isinstance(source, SourceText)
    assert source.year == 2019  # the front matter's year comes before its created date, which comes before --year
    assert source.tags == ("memory", "theory")
    assert source.links == ("garbage collection",)
    assert "the collector looks" in source.text and "[[" not in source.text
    [weak] = list(load_file(VAULT / "Weak references.md", year=1999))
    assert isinstance(weak, SourceText) and weak.year == 2022  # date: comes before --year


# -- a vault ingested --------------------------------------------------------------------------------------------


def _links(runtime: Runtime) -> set[tuple[str, str, str]]:
    """(from, to, as written) for each LINKS relation, by document title."""
    with runtime.db.connect() as con:
        titles = {d.id: d.title for d in corpus.list_documents(con)}
        chunks = {n.id: titles[str(n.document_id)] for n in corpus.list_nodes(con, types=["raw_chunk"])}
        relations = corpus.list_relations(con)
    return {
        (chunks[r.source_id], chunks[r.target_id], str(r.description))
        for r in relations
        if r.type == "LINKS" and r.created_by == "vault"
    }


def test_an_ingested_vault_keeps_its_links_tags_aliases_and_years(runtime: Runtime) -> None:
    report = ingest_paths(runtime, [VAULT])
    assert (report.documents_added, report.errors) == (5, [])
    assert _links(runtime) == {
        ("Garbage collection", "Reference counting", "Reference counting"),  # resolved when it came, later
        ("Garbage collection", "Weak references", "Weak references"),
        ("Reference counting", "Garbage collection", "GC"),  # by an alias
        ("Weak references", "Reference counting", "Reference counting"),  # a note embedded
        ("Weak references", "Memory allocator", "Allocator"),  # by its file's name
        ("Generational hypothesis", "Garbage collection", "garbage collection"),  # in any case
        ("Memory allocator", "Garbage collection", "Cycle collector"),
    }  # and "A note not written yet" is no link, and no error
    with runtime.db.connect() as con:
        documents = {d.title: d for d in corpus.list_documents(con)}
        tagged = {d.title for d in corpus.list_documents(con, tag="memory")}
        nested = {d.title for d in corpus.list_documents(con, tag="memory/cycles")}
        tagged_nodes = {n.document_id for n in corpus.list_nodes(con, tag="cpython")}
        counts = dict(corpus.all_tags(con))
    gc = documents["Garbage collection"]
    assert (gc.year, gc.tags, gc.aliases) == (2021, ("memory", "python", "memory/cycles"), ("GC", "Cycle collector"))
    assert documents["Weak references"].links == ("Reference counting", "Allocator", "A note not written yet")
    assert (documents["Generational hypothesis"].year, documents["Reference counting"].year) == (2019, None)
    assert tagged == set(documents) - {"Weak references"}  # memory, and the tags nested under it
    assert nested == {"Garbage collection"}
    assert tagged_nodes == {documents["Reference counting"].id}
    assert counts["memory"] == 3 and counts["memory/allocation"] == 1
    with runtime.db.connect() as con:
        [first] = [
            n for n in corpus.list_nodes(con, types=["raw_chunk"]) if n.document_id == gc.id and n.chunk_index == 0
        ]
        shown = {(link.kind, link.outgoing, link.title) for link in corpus.note_links(con, first.id)}
    assert ("MENTIONS", False, "Reference counting") in shown  # "the GC" in its words: a front-matter alias names it
    assert {link for link in shown if link[0] == "LINKS"} == {
        ("LINKS", True, "Reference counting"),
        ("LINKS", True, "Weak references"),
        ("LINKS", False, "Reference counting"),
        ("LINKS", False, "Generational hypothesis"),
        ("LINKS", False, "Memory allocator"),
    }


def test_a_link_waits_for_a_note_ingested_later(runtime: Runtime, tmp_path: Path) -> None:
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    shutil.copy(VAULT / "Weak references.md", first)
    shutil.copy(VAULT / "Reference counting.md", later)
    ingest_paths(runtime, [first])
    assert _links(runtime) == set()
    ingest_paths(runtime, [later])
    assert _links(runtime) == {("Weak references", "Reference counting", "Reference counting")}


@pytest.mark.parametrize("body", ["[[Self]] and [[self#Part]]", "![[Self]]"])
def test_a_note_that_links_itself_makes_no_relation(runtime: Runtime, tmp_path: Path, body: str) -> None:
    (tmp_path / "Self.md").write_text(f"A note about itself, long enough to read. {body}\n")
    assert ingest_paths(runtime, [tmp_path]).errors == []
    assert _links(runtime) == set()
