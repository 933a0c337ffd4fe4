"""What a locus standing on a stored node is called.

A locus is named from its node, not from the model's words: the node's document
title, then a short extract of its own text for a chunk, the entity for an
entity insight, the kind of node for a synthesis. A person reading a trace then
sees which note the walk stood on; the full text stays with the node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from explorer.text import shorten, split_sentences

EXTRACT_WORDS = 12  # words of a chunk's own text after its title
UNTITLED_WORDS = 16  # words of a node with no document (a dream, a fused memory)
SENTENCE_SCAN_WORDS = 64  # words read for a first sentence: a longer one is cut to a name's length anyway

_TAG = re.compile(r"<[^<>\n]{1,40}>")  # a domain tag such as "<operating system>"
_FENCE = re.compile(r"```.*?(```|$)", re.DOTALL)
_MARKUP = re.compile(r"[`*_#>|]+")
_SPACE = re.compile(r"\s+")
_ASIDE = re.compile(r"\([^()]*\)|…|\b\d+\.")
_SENSE = re.compile(r"^\d+\.\s+(?=\S)")  # a dictionary entry's sense number, "2. A vector of …"
_KIND = {
    "synthesis": "synthesis",
    "rem_dream": "dream",
    "fused": "fused memory",
    "pattern": "pattern",
    "abstraction": "abstraction",
}


def plain(text: str) -> str:
    """The text without code fences, markup characters and tags, on one line."""
    text = _FENCE.sub(" ", text)
    text = _TAG.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    return _SPACE.sub(" ", text).strip()


def _says_something(sentence: str) -> bool:
    """Whether a sentence has three words outside parentheses, blanks and numbering: "(ACAP)" or "1. …" opening a
    dictionary entry names nothing, the definition after it does.
    """
    return len(_ASIDE.sub(" ", sentence).split()) >= 3


@lru_cache(maxsize=8192)
def extract(text: str, words: int) -> str:
    """The first sentence of ``text`` that says something (:func:`_says_something`), in plain words, without a
    sense number, cut to ``words`` words.

    Only the first words are split into sentences, and names are remembered: a step names a dozen candidates,
    and splitting a whole chunk costs a millisecond or more each time.
    """
    cleaned = " ".join(plain(text).split()[: SENTENCE_SCAN_WORDS + words])
    sentences = split_sentences(cleaned) if cleaned else []
    first = next((s for s in sentences if _says_something(s)), sentences[0] if sentences else cleaned)
    return shorten(_SENSE.sub("", first).rstrip(" ."), words)


def _without_title(text: str, title: str) -> str:
    """A chunk's text after its title when it starts with it, so the name does not say the title twice."""
    stripped = plain(text)
    head = title.rstrip(" .…")  # a title cut from the text's first words ends in an ellipsis
    after = stripped[len(head) : len(head) + 1]
    if head and stripped.lower().startswith(head.lower()) and not after.isalnum():  # "app", not "app|lication"
        rest = stripped[len(head) :].lstrip(" :.-–—,…")
        return rest or stripped
    return stripped


def locus_name(node: Mapping[str, Any]) -> str:
    """The name of a locus on this node (a summary with ``text``, ``type`` and, when known, ``title`` and
    ``entity``): "Title: first words" for a chunk, "entity, in Title" for an entity insight, "Title (synthesis)"
    for a synthesis; a node without a document is named by its first words.
    """
    text = str(node.get("text") or "")
    title = plain(str(node.get("title") or ""))
    kind = str(node.get("type") or "")
    entity = plain(str(node.get("entity") or ""))
    if not title:
        return extract(text, UNTITLED_WORDS) or "(an empty node)"
    if kind == "entity_insight" and entity:
        return title if entity.lower() == title.lower() else f"{entity}, in {title}"
    if kind in _KIND:
        return f"{title} ({_KIND[kind]})"
    words = extract(_without_title(text, title), EXTRACT_WORDS)
    return f"{title}: {words}" if words else title


def described(concept: str, text: str | None) -> str:
    """A locus as a prompt shows it: the text of the node it stands on (its name is a label for people, too
    little to reflect on), or its concept when it stands on none (the seed, an injected concept).
    """
    text = (text or "").strip()
    return text or concept
