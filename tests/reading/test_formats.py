"""Every format read, its markup read as structure: on real documents cut small (tests/data/documents/LICENSES.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from explorer.reading.formats.markdown import read_markdown
from explorer.reading.formats.sniff import text_kind
from explorer.reading.ingest import ingest_paths
from explorer.reading.loaders import LoadError, SourceText, load_file
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.testing.model_server import SERVED_MODEL

DOCUMENTS = Path(__file__).parents[1] / "data" / "documents"
# What markup looks like when it is left in prose: rules and delimiters, attribute lines, directives, roles, tags.
MARKUP = re.compile(
    r"^\s*(?:={3,}|-{3,}|\.{4,}|\*{3,})\s*$|\[verse\]|\[source|linkgit:|^\.\. |:(?:func|meth|class):`|<div|<p>|```",
    re.M,
)


def loaded(path: Path) -> list[SourceText]:
    found = list(load_file(path))
    assert not [f for f in found if isinstance(f, LoadError)], found
    return [f for f in found if isinstance(f, SourceText)]


def one(path: Path) -> SourceText:
    (source,) = loaded(path)
    return source


def failure(path: Path) -> str:
    (found,) = load_file(path)
    assert isinstance(found, LoadError)
    return found.message


def titles(source: SourceText) -> list[str | None]:
    return list(dict.fromkeys(s.title for s in source.sections))


def prose(source: SourceText) -> str:
    return "\n\n".join(s.text for s in source.sections if not s.code)


def code(source: SourceText) -> str:
    return "\n\n".join(s.text for s in source.sections if s.code)


def test_a_man_page_in_asciidoc_reads_as_its_sections() -> None:
    source = one(DOCUMENTS / "git" / "git-column.txt")  # a .txt, known for AsciiDoc by its markup
    assert source.title == "git-column(1)"
    assert titles(source) == ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES", "GIT"]
    assert not MARKUP.search(prose(source)), MARKUP.search(prose(source))
    assert "git-column - Display data in columns" in prose(source)
    assert "for option syntax in git-config." in " ".join(prose(source).split())  # linkgit:git-config[1]
    assert "--command=<name>\nLook up layout mode" in prose(source)  # a "term::" without its colons
    assert "include::" not in source.text
    synopsis = next(s for s in source.sections if s.title == "SYNOPSIS")
    assert synopsis.code and synopsis.text.startswith("'git column' [--command=<name>]")
    assert "$ seq 1 24 | git column --mode=column --padding=5" in code(source)
    assert "1      4      7      10" in code(source)  # laid out as written
    assert source.text.count("Format data by columns:") == 1  # text is the sections joined


def test_restructuredtext_in_a_txt_is_read_by_docutils() -> None:
    source = one(DOCUMENTS / "docutils" / "testing.txt")
    assert (source.title, source.year) == ("Docutils Testing", 2022)  # the docinfo's :Date:
    assert titles(source) == [None, "Running the Test Suite", "Testing across multiple Python versions"]
    assert not MARKUP.search(prose(source)), MARKUP.search(prose(source))
    assert "the test suite does not work with popular test frameworks\nlike pytest or nose." in prose(source)  # note
    assert "cd docutils/test\npython -u alltests.py" in code(source)  # a literal block after "::"
    assert "sourceforge.net/p/docutils/feature-requests" not in source.text  # comments are not text


def test_sphinx_roles_and_directives_read_as_their_text_or_code() -> None:
    source = one(DOCUMENTS / "python" / "sorting.rst")
    assert source.title == "Sorting HOW TO"
    assert titles(source) == [None, "Sorting Basics", "Key Functions"]
    assert "Python lists have a built-in `list.sort` method" in prose(source)  # :meth:`list.sort`: code
    assert not MARKUP.search(prose(source)), MARKUP.search(prose(source))
    assert ">>> sorted([5, 2, 3, 1, 4])" in code(source)  # .. doctest::, which docutils does not know


def test_restructuredtext_never_includes_a_file_nor_passes_raw_html(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret words\n")
    page = tmp_path / "page.rst"
    page.write_text(
        f"Title\n=====\n\nBefore.\n\n.. include:: {secret}\n\n.. raw:: html\n\n   <script>alert(1)</script>\n\n"
        ".. no-such-directive:: its argument\n\n   Its body, *read*.\n\nA :no-such-role:`role's text`.\n",
        encoding="utf-8",
    )
    source = one(page)
    assert "secret words" not in source.text and "alert" not in source.text
    assert "its argument" in source.text and "Its body, read." in source.text
    assert "A role's text." in source.text


def test_a_saved_web_page_keeps_its_text_headings_code_and_address() -> None:
    source = one(DOCUMENTS / "python" / "sorting.html")
    assert source.title == "Sorting HOW TO"
    assert source.source == "https://docs.python.org/3/howto/sorting.html"  # the canonical link
    assert titles(source) == ["Sorting HOW TO", "Sorting Basics", "Key Functions"]  # no "¶"
    assert ">>> sorted([5, 2, 3, 1, 4])\n[1, 2, 3, 4, 5]" in code(source)  # <pre> stays code
    assert "modifies the list\nin-place" in prose(source)
    assert "Navigation" not in source.text and "previous" not in source.text  # the page's navigation is dropped
    assert not MARKUP.search(prose(source)), MARKUP.search(prose(source))


def test_a_page_of_plain_divs_keeps_every_heading() -> None:
    source = one(DOCUMENTS / "git" / "git-column.html")  # Asciidoctor's page: no <main>, sections holding lists
    assert source.title == "git-column(1) Manual Page"
    assert titles(source) == ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES", "CONFIGURATION", "GIT"]
    assert "$ seq 1 24 | git column --mode=column --padding=5" in code(source)
    assert not MARKUP.search(prose(source)), MARKUP.search(prose(source))


def test_a_pdf_reads_by_its_outline() -> None:
    source = one(DOCUMENTS / "git" / "git-column.pdf")
    assert source.title == "git-column(1)"
    assert titles(source) == ["NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES", "GIT"]
    assert "git-column - Display data in columns" in source.text
    assert "SYNOPSIS" not in source.text  # a heading titles its section, it is not text


def test_a_pdf_without_an_outline_reads_by_pages(tmp_path: Path) -> None:
    writer = PdfWriter()
    for page in PdfReader(DOCUMENTS / "git" / "git-column.pdf").pages:
        writer.add_page(page)  # the pages alone, no outline
    writer.write(tmp_path / "pages.pdf")
    source = one(tmp_path / "pages.pdf")
    assert titles(source) == ["page 1", "page 2"][: len(titles(source))]
    assert "Display data in columns" in source.text


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.pdf"
    corrupt.write_bytes((DOCUMENTS / "git" / "git-column.pdf").read_bytes()[:2000])
    assert "not a PDF that can be read" in failure(corrupt)
    scanned = tmp_path / "scanned.pdf"
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.write(scanned)
    assert "no text layer" in failure(scanned)
    empty = tmp_path / "empty.html"
    empty.write_text("<html><head><title>Nothing</title></head><body></body></html>")
    assert "no main text" in failure(empty)
    blank = tmp_path / "blank.html"
    blank.write_text("")
    assert "empty file" in failure(blank)
    other = tmp_path / "settings.json"
    other.write_text(json.dumps({"theme": "dark"}))
    assert "not a chat export" in failure(other)


def test_markdown_headings_code_and_rules() -> None:
    text = (
        "Intro line.\n\nSetext title\n============\n\nSome *emphasis*, a [link](https://example.org), `code`, "
        "and a ~~strike~~.\n\n---\n\n    indented code\n\n"
        "## Fenced\n\n```python\nx = 1\n```\n"
    )
    reading = read_markdown(text)
    assert [(s.title, s.code) for s in reading.sections] == [
        (None, False),
        ("Setext title", False),
        ("Setext title", True),
        ("Fenced", True),
    ]
    assert reading.sections[1].text == "Some emphasis, a link, `code`, and a ~~strike~~."
    assert reading.sections[2].text == "indented code" and reading.sections[3].text == "x = 1"
    assert reading.title == "Setext title"


def test_a_markdown_note_keeps_its_front_matter_and_sections(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("---\ntitle: A note\nyear: 2020\n---\n# Heading\n\nText under it.\n\n***\n\nMore.\n")
    source = one(note)
    assert (source.title, source.year) == ("A note", 2020)
    assert [(s.title, s.text) for s in source.sections] == [("Heading", "Text under it.\n\nMore.")]
    assert source.text == "Text under it.\n\nMore."


def test_plain_text_is_one_section_without_its_rules(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("A plain note about caches.\n=====\nIt has no markup language.\n- - -\nThe end.\n")
    source = one(plain)
    assert source.sections == (
        source.sections[0].__class__("A plain note about caches.\nIt has no markup language.\nThe end."),
    )


def test_a_chatgpt_export_is_a_document_per_conversation() -> None:
    first, second = loaded(DOCUMENTS / "chats" / "chatgpt" / "conversations.json")
    assert (first.title, first.year, first.line) == ("Undo a pushed commit", 2024, 1)
    assert first.source == "https://chatgpt.com/c/6631f0a0-1c2d-8000-a3b4-5f6e7d8c9b0a"
    assert [s.title for s in first.sections] == ["user", "assistant", "assistant", "assistant"]
    assert "how do i undo a commit" not in first.text  # the branch the edited question left behind
    assert first.sections[0].text.startswith("I pushed a commit to a shared branch")
    assert [s.text for s in first.sections if s.code] == ["git revert 1a2b3c4\ngit push"]
    assert "Revert, do not reset" not in first.text  # a heading in an answer is structure
    assert (second.title, second.year, second.line) == ("Sorting by two keys", 2024, 2)


def test_a_claude_export_is_a_document_per_conversation() -> None:
    first, second = loaded(DOCUMENTS / "chats" / "claude" / "conversations.json")
    assert (first.title, first.year) == ("Reading git log output", 2024)
    assert [(s.title, s.code) for s in first.sections] == [("user", False), ("assistant", False), ("assistant", True)]
    assert second.title == "Docutils test suite"
    assert second.sections[0].text.startswith("Where do the docutils unit tests live")  # from its content blocks


def test_a_conversation_with_nothing_to_read_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    export = json.loads((DOCUMENTS / "chats" / "claude" / "conversations.json").read_text())
    export.insert(0, {"uuid": "x", "name": "Empty", "created_at": "2024-01-01T00:00:00Z", "chat_messages": []})
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    found = list(load_file(path))
    assert isinstance(found[0], LoadError) and found[0].line == 1 and "Empty" in found[0].message
    assert [f.title for f in found[1:] if isinstance(f, SourceText)] == [
        "Reading git log output",
        "Docutils test suite",
    ]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ((DOCUMENTS / "git" / "git-check-attr.txt").read_text(), "asciidoc"),
        ((DOCUMENTS / "docutils" / "testing.txt").read_text(), "rst"),
        ("Just a note.\n\nNothing marked up: a list - of things.\n", "plain"),
    ],
)
def test_a_txt_is_read_as_the_markup_it_is_written_in(text: str, kind: str) -> None:
    assert text_kind(text) == kind


def test_an_ingest_of_every_format_keeps_each_chunk_section(runtime: Runtime) -> None:
    report = ingest_paths(runtime, [DOCUMENTS])
    assert report.errors == []
    assert report.documents_added == 12  # 7 files, 4 conversations in 2 exports, the licence notes
    with runtime.db.connect() as con:
        documents = {d.id: d for d in corpus.list_documents(con)}
        chunks = corpus.list_nodes(con, types=["raw_chunk"])
    by_document: dict[str, list] = {}
    for chunk in sorted(chunks, key=lambda c: c.chunk_index or 0):
        by_document.setdefault(documents[str(chunk.document_id)].title, []).append(chunk)
    assert all(any(c.section for c in own) for own in by_document.values())
    man_page = by_document["git-column(1)"]  # the .txt and the PDF share the title: both are here
    assert ("SYNOPSIS", "```\n'git column' [--command=<name>]") in {(c.section, c.text[:35]) for c in man_page}
    conversation = by_document["Undo a pushed commit"]  # the short question is read with its answer
    assert [(c.section, c.text.startswith("```")) for c in conversation] == [("assistant", False), ("assistant", True)]
    assert documents[str(by_document["Sorting HOW TO"][0].document_id)].source is not None
    for chunk in chunks:
        if not chunk.text.startswith("```"):
            assert not MARKUP.search(chunk.text), (chunk.section, chunk.text)


def test_code_is_read_but_no_entity_is_asked_of_it(make_runtime, model_server, tmp_path: Path) -> None:
    server = model_server()
    runtime = make_runtime(db=tmp_path / "served.duckdb", local_model=SERVED_MODEL, api_base=server.url)
    report = ingest_paths(runtime, [DOCUMENTS / "git" / "git-column.txt"])
    with runtime.db.connect() as con:
        chunks = corpus.list_nodes(con, types=["raw_chunk"])
    code = [c for c in chunks if c.text.startswith("```")]
    assert report.errors == [] and code and len(code) < len(chunks)  # the code is stored, shown as code
    asked = [r.fields["passage"] for r in server.requests if r.kind == "entities" and r.fields]
    assert sorted(asked) == sorted(c.text for c in chunks if c not in code)
