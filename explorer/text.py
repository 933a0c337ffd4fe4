"""Plain-text utilities the whole engine shares: sentences, keyphrases, excerpts.

They are rule-based and deterministic (pysbd for sentences, YAKE for keyphrases),
so the reading cycle, the offline provider and the surfaces cut text the same way.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pysbd
import yake

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+-]*")


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (rule-based, handles abbreviations and version numbers)."""
    text = text.strip()
    if not text:
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]


@lru_cache(maxsize=8)
def _extractor(top: int) -> yake.KeywordExtractor:
    return yake.KeywordExtractor(lan="en", n=2, top=top, dedupLim=0.6)


def keyphrases(text: str, top: int = 5) -> list[str]:
    """The most salient one- and two-word phrases of ``text``, best first."""
    if not _WORD.search(text or ""):
        return []
    found = [phrase for phrase, _ in _extractor(top * 2).extract_keywords(text)]
    unique: list[str] = []
    for phrase in found:
        if len(phrase) > 2 and not any(phrase.lower() in u.lower() or u.lower() in phrase.lower() for u in unique):
            unique.append(phrase)
    return unique[:top]


def shorten(text: str, words: int = 40) -> str:
    """The first ``words`` words of ``text``, with an ellipsis when something was cut."""
    tokens = text.split()
    return text.strip() if len(tokens) <= words else " ".join(tokens[:words]) + " …"
