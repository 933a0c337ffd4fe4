"""What names a subject: themes are the things a text is about, not how or what was done, nor a phrase cut short."""

from __future__ import annotations

from typing import Annotated

import pytest
from markdown_it import MarkdownIt
from pydantic import Field, TypeAdapter, ValidationError

from explorer.text import (
    NOT_BLANK,
    SENTENCE_PIECE,
    inert_markdown,
    is_theme,
    keyphrases,
    plain_text,
    prose_sentences,
    shorten,
    split_sentences,
)

SUBJECTS = ["delay slot", "Microsoft SMB", "power supply", "processor family", "speed", "networking"]
SUBJECTS += ["operating system", "distributed systems", "IBM", "binary", "ALU"]
SUBJECTS += ["plug-in", "run-time", "read-only memory", "linked list"]
# How or what was done, a verb, a phrase that stops before its noun: words a reader would not call a subject.
NOT_SUBJECTS = ["typically", "designed", "held", "procedures quickly", "versions developed", "support virtual"]
NOT_SUBJECTS += ["perform complex", "enhances IMAP", "removable hard", "interaction faster", "executed."]
NOT_SUBJECTS += ["loads instructions", "wrote code", "programmable read-only", "FILO last-in"]


@pytest.mark.parametrize("phrase", SUBJECTS)
def test_a_noun_or_a_name_is_a_theme(phrase: str) -> None:
    assert is_theme(phrase)


@pytest.mark.parametrize("phrase", NOT_SUBJECTS)
def test_an_adverb_a_verb_or_a_modifier_alone_is_not(phrase: str) -> None:
    assert not is_theme(phrase)


def test_a_phrase_an_ellipsis_cuts_short_is_no_theme() -> None:
    text = "Enhancements included virtual memory and improved main … The improved main … came in 1979."
    found = keyphrases(text, 5)
    assert "virtual memory" in found
    assert not any(p.lower().startswith("improved main") for p in found)
    assert "improved main" in keyphrases(text.replace("…", "memory"), 5)  # what only the ellipsis took away


def test_inert_markdown_keeps_line_ends_and_tabs_and_drops_every_other_control() -> None:
    written = "a\tb\nc\r\x00\x07\x7f\x9b31m\x1b[1;31mred\x1b[0m\x1b]8;;http://x.example\x1b\\link\x1b]8;;\x1b\\ d"
    assert inert_markdown(written) == "a\tb\nc31mredlink d"


def test_inert_markdown_renders_as_the_text_itself() -> None:
    written = "# title\n1. ![x](http://h/i.png) <b>bold</b> *em* `code` <http://h/a> https://h/b www.h.org me@h.org"
    tokens = MarkdownIt("commonmark").parse(inert_markdown(written))
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    (inline,) = [t for t in tokens if t.type == "inline"]
    assert {c.type for c in inline.children or []} <= {"text", "softbreak"}
    assert "".join(c.content if c.type == "text" else "\n" for c in inline.children or []) == written.replace(
        "//", "/\u2060/"
    ).replace("www.", "www\u2060.").replace("@", "\u2060@")


SENTENCES = ["Dr. Smith released version 2.0 on Jan. 5 of that year.", "It was e.g. faster than Mr. Jones's."]


def test_a_text_longer_than_a_piece_keeps_its_sentences() -> None:
    # pysbd reads a piece at a time (it is quadratic in a line's abbreviations): the cuts fall where they did
    written = " ".join(SENTENCES * 200)
    assert len(written) > 5 * SENTENCE_PIECE
    assert split_sentences(written) == SENTENCES * 200


@pytest.mark.parametrize("unit", ["w ", "e.g. ", "Mr. A "])
def test_a_sentence_running_on_past_pieces_is_still_one(unit: str) -> None:
    run_on = (unit * (3 * SENTENCE_PIECE // len(unit))).strip()
    assert split_sentences(f"{SENTENCES[0]} {run_on} {SENTENCES[1]}") == [SENTENCES[0], f"{run_on} {SENTENCES[1]}"]


def test_a_line_end_ends_a_sentence_in_any_piece() -> None:
    lines = [f"line {i} has no full stop" for i in range(300)]
    assert split_sentences("\n".join(lines)) == lines


def test_shorten_to_a_length_cuts_between_words() -> None:
    assert shorten("what it means to be curious", chars=20) == "what it means to …"
    assert shorten("  short\n text ", chars=20) == "short text"  # on one line, whole when it fits
    assert shorten("what it means to be", chars=19) == "what it means to be"
    assert shorten("one two three four", 2, chars=50) == "one two …"
    assert shorten("considered, and then more", chars=14) == "considered …"  # no comma before the ellipsis
    assert shorten("a" * 30, chars=20) == "a" * 18 + " …"  # one word longer than the room: cut, it is all there is
    for text in ("Why would a memory need to be curious about itself", "x " * 100):
        for chars in range(3, 60):
            cut = shorten(text, chars=chars)
            assert len(cut) <= chars
            assert cut.endswith(" …") or cut == " ".join(text.split())


# What plain_text keeps of each kind of markup: its words, or nothing (code, addresses, citations, credits).
PLAIN = [
    ("Call `len()` on it, then `x = y + 1` on that.", "Call len() on it, then `x = y + 1` on that."),
    ("It is *very* **bold**, _quite_ __so__.", "It is very bold, quite so."),
    ("See [the docs](https://docs.python.org/3/) and ![a cat](cat.png).", "See the docs and a cat."),
    ("Before. ```python\nprint(1)\n``` After.", "Before.\n\nAfter."),
    ("Before. ```\nnever closed, so code to the end", "Before."),
    ("Mail me@example.org or visit www.example.org today.", "Mail or visit today."),
    ("<language, programming> (PL) A language for people [Jargon File].", "A language for people ."),
    ("Faster dicts (contributed by Ana Lima). More.", "Faster dicts . More."),
    ("## Usage Run it twice. It works.", "It works."),
    ("Escaped \\*stars\\* stay, &amp; entities read.", "Escaped *stars* stay, & entities read."),
    # code is read before emphasis, as CommonMark reads it (the patterns before took `__init__` for bold: "init")
    ("Define `__init__` there.", "Define __init__ there."),
]


@pytest.mark.parametrize(("written", "plain"), PLAIN)
def test_plain_text_keeps_the_words_markup_marks(written: str, plain: str) -> None:
    assert plain_text(written) == plain


def test_a_fenced_chunk_has_no_prose() -> None:
    # chunk_sections fences each code chunk, so no keyphrase or quotation is ever taken from code
    chunk = "```\ndef walk(self):\n    return self.next_locus()  # The walker moves on.\n```"
    assert plain_text(chunk) == "" and prose_sentences(chunk) == []


def test_the_schemas_blank_is_what_the_engine_strips() -> None:
    """A surface's schema refuses exactly what the engine would strip to nothing (a fuzzer found U+001C let through
    by a bare not-space pattern and refused by the engine with a 422 the schema never promised).
    """
    pattern = TypeAdapter(Annotated[str, Field(pattern=NOT_BLANK)])  # pydantic-core's regex, as the API runs it
    for code in range(0x3001):
        text = chr(code)
        try:
            pattern.validate_python(text)
            taken = True
        except ValidationError:
            taken = False
        assert taken == bool(text.strip()), f"U+{code:04X}"
