"""Text tools the offline provider derives its answers from.

Nothing here invents content: every phrase it returns is a keyphrase found in
the input (YAKE), a sentence of the input (chosen by embedding similarity), or a
fixed connective that says how the pieces relate.

Its inputs are often its own earlier answers (a synthesis becomes a node, a node
becomes a locus, a residue becomes evidence). Those quote their sources “like
this” inside a connective, so :func:`source_sentences` reads back only what they
quote: an answer never quotes another answer's connectives, and nothing nests.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

import numpy as np

from explorer.providers.embeddings import Embedder
from explorer.text import (
    has_code,
    is_plural,
    is_prose,
    keyphrases,
    plain_text,
    prose_sentences,
    shorten,
    split_sentences,
)

_QUOTED = re.compile(r"“([^“”]{12,})”")
_QUOTES = re.compile("[“”]")
QUOTE_WORDS = 30  # a quoted sentence is cut after this many words


def quoted(text: str) -> list[str]:
    """What an extractive answer quotes, as sentences: a quotation drops its full stop, which comes back, and
    one that was cut keeps its ellipsis, so it is never quoted again as if whole.
    """
    found = []
    for q in _QUOTED.findall(text):
        whole = q.strip().removesuffix("…").strip().rstrip(".;:,!?")
        if is_prose(whole + ".", 60):
            found.append(whole + (" …" if q.strip().endswith("…") else "."))
    return found


def source_sentences(text: str, max_words: int = 40) -> list[str]:
    """The source sentences ``text`` holds: what it quotes when it is an extractive answer, else its prose that
    holds no quotation (an answer whose quotations are no prose, "“"Do you think there's a God?" …”", leaves only
    its connectives, which would nest one quotation in another).
    """
    return quoted(text) or [s for s in prose_sentences(text, max_words) if not _QUOTES.search(s)]


def content(text: str) -> str:
    """The source material of ``text`` as one text, for keyphrases: its quotations, or its plain text."""
    found = quoted(text)
    return ". ".join(found) + "." if found else plain_text(text)


def quote(sentence: str, words: int = QUOTE_WORDS) -> str:
    """A sentence between quotation marks, cut after ``words`` words, without its closing full stop."""
    return f"“{shorten(sentence.strip().rstrip('.;:,'), words)}”"


SAME_RUN = 8  # two sentences sharing this many words in a row are one (quoted, cut, or behind a heading)


def same(a: str, b: str) -> bool:
    """Whether two sentences are one: as quoted, cut or not, or one inside the other behind a heading — they
    share a run of :data:`SAME_RUN` words (all the words of the shorter, when it is shorter than that).
    """
    x, y = (re.findall(r"\w+", t.lower()) for t in (a, b))
    if not x or not y:
        return False
    run = min(SAME_RUN, len(x), len(y))
    runs = {tuple(x[i : i + run]) for i in range(len(x) - run + 1)}
    return any(tuple(y[i : i + run]) in runs for i in range(len(y) - run + 1))


def join(phrases: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``; a phrase another one holds is said once, in the longer ("array-oriented
    language", not "array-oriented language and language").
    """
    phrases = [p for p in phrases if not any(_holds(q, p) for q in phrases if q.lower() != p.lower())]
    phrases = list({p.lower(): p for p in phrases}.values())
    if len(phrases) <= 1:
        return "".join(phrases)
    return ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _holds(longer: str, phrase: str) -> bool:
    """Whether ``longer`` has the words of ``phrase`` in a row."""
    return f" {phrase.lower()} " in f" {longer.lower()} "


def agreeing(subject: str, one: str, many: str) -> str:
    """The verb form that agrees with ``subject``: ``one`` for "queen", ``many`` for "years" or "eggs"."""
    return many if is_plural(subject) else one


def capitalise(text: str) -> str:
    """The first letter in capitals, the rest as it is (``cPython`` keeps its case elsewhere)."""
    return text[:1].upper() + text[1:]


def topic(text: str, avoid: Sequence[str] = ()) -> str:
    """What ``text`` is about, as its best keyphrase not in ``avoid``; "" when it has none."""
    taken = {a.lower() for a in avoid}
    return next((p for p in keyphrases(content(text), 4) if p.lower() not in taken), "")


def excerpt(text: str, words: int = 25) -> list[str]:
    """The text's source sentences, or the start of its plain text when it has no sentence to quote, no code and
    no quotation (code, or an answer whose quotations are no prose, has nothing to quote).
    """
    found = source_sentences(text)
    if found:
        return found
    plain = " ".join(plain_text(text).split())
    return [shorten(plain, words)] if plain and not has_code(plain) and not _QUOTES.search(plain) else []


class OfflineKit:
    """Embedding-backed helpers, seeded so that answers are reproducible."""

    def __init__(self, embedder: Embedder, seed: int = 0):
        self.embedder = embedder
        self.seed = seed

    def rng(self, *salt: object) -> random.Random:
        """A generator seeded by the provider seed and the content being answered."""
        return random.Random(f"{self.seed}|" + "|".join(map(str, salt)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors from the product's own embedder, so offline answers rank by the meaning the map shows."""
        return self.embedder.embed(list(texts))

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix between two lists of texts."""
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        return self.embed(a) @ self.embed(b).T

    def central_sentences(self, texts: Sequence[str], k: int = 2, focus: str | None = None) -> list[str]:
        """The ``k`` sentences of ``texts`` closest to their centroid (or to ``focus``), in reading order."""
        sentences = [s for t in texts for s in split_sentences(t) if len(s.split()) >= 4]
        return self.central(sentences, k, focus)

    def central(self, sentences: Sequence[str], k: int = 2, focus: str | None = None) -> list[str]:
        """The ``k`` of ``sentences`` closest to their centroid (or to ``focus``), in their order, once each."""
        sentences = list(dict.fromkeys(sentences))
        if len(sentences) <= k:
            return sentences
        vectors = self.embed(sentences)
        target = self.embed([focus])[0] if focus else vectors.mean(axis=0)
        best = sorted(np.argsort(-(vectors @ target))[:k])
        return [sentences[i] for i in best]

    def closest_pair(self, left: Sequence[str], right: Sequence[str]) -> tuple[int, int, float]:
        """Indices and similarity of the most similar (left, right) pair."""
        sims = self.similarity(left, right)
        i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
        return int(i), int(j), float(sims[i, j])
