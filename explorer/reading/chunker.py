"""Sentence-aware chunking into pieces of about 300 words.

Chunks end at sentence boundaries so each one reads as a unit; a sentence longer
than the limit on its own (a table, a list without full stops) is cut by words.
"""

from __future__ import annotations

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
