"""Sentence-aware chunking into pieces of about 300 words, within a document's sections.

Chunks end at sentence boundaries so each one reads as a unit; a sentence longer
than the limit on its own (a table, a list without full stops) is cut by words.
A document read with its structure is chunked section by section
(:func:`chunk_sections`): each chunk carries its section's title, and code stays
code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

from explorer.reading.formats import Section
from explorer.text import split_sentences

DEFAULT_CHUNK_WORDS = 300


def chunk_text(text: str, max_words: int = DEFAULT_CHUNK_WORDS) -> list[str]:
    """Split ``text`` into chunks of at most ``max_words`` words at sentence ends.

    Paragraphs are segmented separately so a heading never glues onto the next
    sentence; a chunk under a fifth of the limit is merged into its predecessor
    rather than left as a fragment.
    """
    if max_words < 1:
        raise ValueError("max_words must be positive")
    pieces: list[str] = []
    for paragraph in (p for p in text.split("\n\n") if p.strip()):
        for sentence in split_sentences(" ".join(paragraph.split())):
            words = sentence.split()
            pieces.extend(" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words))
    chunks: list[list[str]] = []
    count = 0
    for piece in pieces:
        size = len(piece.split())
        if chunks and count + size <= max_words:
            chunks[-1].append(piece)
            count += size
        else:
            chunks.append([piece])
            count = size
    if len(chunks) > 1 and sum(len(p.split()) for p in chunks[-1]) < max_words // 5:
        tail = chunks.pop()
        chunks[-1].extend(tail)
    return [" ".join(c) for c in chunks]


@dataclass(frozen=True)
class Chunk:
    """A chunk and where in its document it stands: the section title it carries, and whether it is code."""

    text: str
    section: str | None = None
    code: bool = False


def chunk_sections(sections: Sequence[Section], max_words: int = DEFAULT_CHUNK_WORDS) -> list[Chunk]:
    """Chunks of at most ``max_words`` words that keep to the document's sections, each carrying its section title.

    A section's prose resumed after a code block is the same section. A chunk never runs from one section into
    the next, save that a tiny section (under a fifth of the limit, a man page's NAME) takes the sections after
    it in until the group is no longer tiny (within the limit), and a tiny last section joins the one before,
    rather than each making a chunk of a few words; a group is titled by the section most of its words come
    from. Code is never glued to prose: its lines are kept as written, in chunks of their own marked ``code``
    and fenced (so every keyphrase extractor, which reads a text's :func:`~explorer.text.plain_text`, passes it
    by), after the prose group it interrupts; prose on either side of it groups as if it were not there. One
    untitled prose section chunks exactly as :func:`chunk_text` does.

    Example::

        chunk_sections([Section("git-log - Show commit logs", "NAME"), Section("Shows the commit logs. ...",
        "DESCRIPTION")])  # one chunk titled "DESCRIPTION": NAME is too small to stand alone
    """
    if max_words < 1:
        raise ValueError("max_words must be positive")
    tiny = max_words // 5
    groups: list[list[Section]] = []  # prose sections read together, in order
    code: list[tuple[int, Section]] = []  # each code section, with the prose group it follows (-1: none)
    for section in sections:
        if section.code:
            code.append((len(groups) - 1, section))
        elif groups and (
            groups[-1][-1].title == section.title  # the same section, resumed after a code block
            or (_words(groups[-1]) < tiny and _words(groups[-1]) + _size(section) <= max_words)
        ):
            groups[-1].append(section)
        else:
            groups.append([section])
    if len(groups) > 1 and _words(groups[-1]) < tiny and _words(groups[-2]) + _words(groups[-1]) <= max_words:
        tail = groups.pop()  # a tiny last section (a man page's GIT) joins the one before
        groups[-1] += tail
    last = len(groups) - 1  # a code section after a group that joined the one before follows that one
    placed = [(min(at, last), section) for at, section in code]
    chunks = _code_chunks([section for at, section in placed if at < 0], max_words)
    for index, group in enumerate(groups):
        chunks += _prose_chunks(group, max_words)
        chunks += _code_chunks([section for at, section in placed if at == index], max_words)
    return chunks


def is_code(chunk: str) -> bool:
    """Whether a chunk's text is code: :func:`chunk_sections` fences each code chunk, and only those."""
    return chunk.startswith("```") and chunk.rstrip().endswith("```")


def _size(section: Section) -> int:
    return len(section.text.split())


def _words(group: Sequence[Section]) -> int:
    return sum(_size(section) for section in group)


def _prose_chunks(group: Sequence[Section], max_words: int) -> list[Chunk]:
    if not group:
        return []
    words: dict[str | None, int] = {}
    for section in group:
        words[section.title] = words.get(section.title, 0) + _size(section)
    title = max(words, key=lambda t: words[t])  # max keeps the first of equals
    return [Chunk(text, title) for text in chunk_text("\n\n".join(s.text for s in group), max_words)]


def _code_chunks(sections: Sequence[Section], max_words: int) -> list[Chunk]:
    """Code sections in chunks of whole lines, at most ``max_words`` words each (a longer line is one chunk); the
    blocks of one section that follow one another are listed together, a blank line between them, rather than
    each making a chunk of a few words.
    """
    chunks: list[Chunk] = []
    for title, blocks in groupby(sections, key=lambda section: section.title):
        pieces: list[list[str]] = [[]]
        count = 0
        for line in "\n\n".join(block.text for block in blocks).splitlines():
            size = len(line.split())
            if pieces[-1] and count + size > max_words:
                pieces.append([])
                count = 0
            pieces[-1].append(line)
            count += size
        chunks += [_fenced(text, title) for lines in pieces if (text := "\n".join(lines).strip("\n")).strip()]
    return chunks


def _fenced(code: str, title: str | None) -> Chunk:
    fence = "````" if "```" in code else "```"
    return Chunk(f"{fence}\n{code}\n{fence}", title, code=True)
