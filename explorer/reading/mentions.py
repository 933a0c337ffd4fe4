"""Backlinks: a note that names another note's subject is linked to it, as every notes tool does.

A document's title is the name of its subject. When a chunk's text names the
title of another document (whole words, any case, a plural ``s`` allowed), the
chunk MENTIONS that document (its first chunk stands for it). Both ways round:
a new chunk links to the documents it names, and a new document's title is
looked for in the chunks read before it. Where names overlap in the text
("utility program" over "utility" and "program"), the longest wins, so a phrase
links to what it names and not to its parts.

Matching is on tokens, and the exact span is checked in each chunk that may
name a title. Which chunks may is found by a scan of the texts for the title's
words while few titles have been looked for (a note edited in a vault of
thousands: building the index would cost seconds for one title), and by a
posting list per token once many have (a folder read: one scan per title would
cost minutes).

A vault's wikilinks are links the person wrote (:class:`LinkIndex`): ``[[Title]]`` LINKS the note that goes by
that title, alias or file name, kept apart from the MENTIONS found by reading, and resolved both ways as mentions
are: a new note links to the notes it names, and the notes read before it that name it link to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from explorer.reading.vault import link_key

# A word (keeping a trailing ++ or #, as in C++ and C#) or any single mark.
_TOKEN = re.compile(r"\w+(?:\+\+|#)?|[^\w\s]")
MIN_TITLE_CHARS = 2  # a one-letter title names nothing reliably
SCANS_BEFORE_INDEXING = 32  # titles looked for by scanning every text before the postings are built


def tokens(text: str) -> list[tuple[str, int, int]]:
    """Lower-case tokens with their spans in ``text``."""
    return [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _words(text: str) -> list[str]:
    """The lower-case tokens of ``text``, as :func:`tokens` gives them without spans, in a third of the time (the
    10,000 titles of a vault). Only ASCII is lowered before it is cut: "İ" lowered is two characters, not one word.
    """
    if text.isascii():
        return _TOKEN.findall(text.lower())
    return [token.lower() for token in _TOKEN.findall(text)]


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class Mention:
    """A span of a text that names a document's title."""

    document_id: str
    title: str
    start: int
    end: int


class MentionIndex:
    """The titles of known documents, and which known chunks contain which tokens."""

    def __init__(self) -> None:
        self._titles: dict[str, list[tuple[list[str], str, str]]] = {}  # first token → (tokens, title, document)
        self._postings: dict[str, set[str]] = {}  # token → chunk ids, once built (SCANS_BEFORE_INDEXING)
        self._texts: dict[str, str] = {}
        self._documents: dict[str, str | None] = {}
        self._unindexed: list[str] = []  # chunks not in the postings yet
        self._scans = 0

    def add_title(self, document_id: str, title: str) -> None:
        """Make a document's title linkable from the texts read after it."""
        words = _words(title)
        if len(_squash(title)) < MIN_TITLE_CHARS or not words:
            return
        self._titles.setdefault(words[0], []).append((words, title, document_id))

    def add_text(self, chunk_id: str, text: str, document_id: str | None = None) -> None:
        """Make a chunk (of ``document_id``) findable by the titles of documents read after it."""
        self._texts[chunk_id] = text
        self._documents[chunk_id] = document_id
        self._unindexed.append(chunk_id)

    def find(self, text: str, exclude: str | None = None) -> list[Mention]:
        """The known titles ``text`` names (longest match wins where they overlap), ``exclude``'s own left out."""
        words = tokens(text)
        found: list[Mention] = []
        for i, (word, start, _) in enumerate(words):
            for candidate in (word, _singular(word)):
                for title_words, title, document_id in self._titles.get(candidate, ()):
                    end = _match(words, i, title_words, text, title)
                    if end is not None and document_id != exclude:
                        found.append(Mention(document_id, title, start, end))
        return _longest(found)

    def document_of(self, chunk_id: str) -> str | None:
        """The document a known chunk belongs to."""
        return self._documents.get(chunk_id)

    def naming(self, document_id: str, title: str) -> list[str]:
        """The known chunks whose text names ``title`` (found through the postings, then checked exactly)."""
        words = _words(title)
        if len(_squash(title)) < MIN_TITLE_CHARS or not words:
            return []
        probe = MentionIndex()
        probe.add_title(document_id, title)
        return sorted(c for c in self._candidates(words) if probe.find(self._texts[c]))

    def _candidates(self, words: list[str]) -> set[str]:
        """The chunks whose text holds every one of a title's words (a word of the text is the title's, or its
        plural: either way the title's word is part of it), by scanning the texts or by the postings.
        """
        self._scans += 1
        if self._scans <= SCANS_BEFORE_INDEXING:
            return {c for c, text in self._texts.items() if _holds_all(text.lower(), words)}
        for chunk_id in self._unindexed:
            for token in set(_words(self._texts[chunk_id])):
                self._postings.setdefault(token, set()).add(chunk_id)
                self._postings.setdefault(_singular(token), set()).add(chunk_id)
        self._unindexed = []
        return set.intersection(*(self._postings.get(w, set()) for w in words))


def _holds_all(text: str, words: list[str]) -> bool:
    return all(word in text for word in words)


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 2 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _match(words: list[tuple[str, int, int]], i: int, title_words: list[str], text: str, title: str) -> int | None:
    """Where a title found at token ``i`` ends in ``text``, or None when the tokens or the spacing differ."""
    n = len(title_words)
    if i + n > len(words):
        return None
    span = words[i : i + n]
    last_ok = span[-1][0] == title_words[-1] or _singular(span[-1][0]) == title_words[-1]
    if not last_ok or any(w != t for (w, _, _), t in zip(span[:-1], title_words[:-1], strict=True)):
        return None
    start, end = span[0][1], span[-1][2]
    named = _squash(text[start:end])
    wanted = _squash(title)
    if named != wanted and _singular(named) != wanted and not named.startswith(wanted):
        return None  # same tokens, other spacing: "file. Plan" does not name ".plan"
    return end


def _longest(mentions: Iterable[Mention]) -> list[Mention]:
    """Mentions that no longer mention covers, one per document, in text order."""
    ordered = sorted(mentions, key=lambda m: (-(m.end - m.start), m.start))
    kept: list[Mention] = []
    for mention in ordered:
        if any(k.start <= mention.start and mention.end <= k.end for k in kept):
            continue
        kept.append(mention)
    by_document: dict[str, Mention] = {}
    for mention in sorted(kept, key=lambda m: m.start):
        by_document.setdefault(mention.document_id, mention)
    return list(by_document.values())


class LinkIndex:
    """What a vault's wikilinks resolve to: every known note's names (its title, aliases and file name, matched as
    Obsidian matches them, :func:`~explorer.reading.vault.link_key`), and every known note's wikilinks, resolved
    or not, so a note read later is linked from the notes that named it before it came. Exact names, not words in
    prose: a wikilink says which note it means.
    """

    def __init__(self) -> None:
        self._named: dict[str, str] = {}  # link key → the document it names (the first one known by it)
        self._linking: dict[str, dict[str, str]] = {}  # link key → documents whose wikilinks name it → as written

    def add_names(self, document_id: str, names: Iterable[str]) -> None:
        """Make a note resolvable by each of its names."""
        for name in names:
            if key := link_key(name):
                self._named.setdefault(key, document_id)

    def add_links(self, document_id: str, targets: Iterable[str]) -> None:
        """Remember a note's wikilinks, for the notes they name that are read later."""
        for target in targets:
            if key := link_key(target):
                self._linking.setdefault(key, {}).setdefault(document_id, target)

    def resolve(self, document_id: str, targets: Iterable[str]) -> dict[str, str]:
        """The known notes ``document_id``'s wikilinks name, other than itself: document → the target as written."""
        found: dict[str, str] = {}
        for target in targets:
            other = self._named.get(link_key(target))
            if other is not None and other != document_id:
                found.setdefault(other, target)
        return found

    def linking(self, document_id: str, names: Iterable[str]) -> dict[str, str]:
        """The known notes whose wikilinks name one of ``names``, other than ``document_id`` itself: document →
        the target as written.
        """
        found: dict[str, str] = {}
        for name in names:
            for other, target in self._linking.get(link_key(name), {}).items():
                if other != document_id:
                    found.setdefault(other, target)
        return found
