from explorer.reading.chunker import chunk_text


def words(text: str) -> int:
    return len(text.split())


def test_chunks_end_at_sentence_boundaries_near_the_limit() -> None:
    sentence = "The quick brown fox jumps over the lazy dog near the river bank today."  # 14 words
    text = " ".join([sentence] * 60)  # 840 words
    chunks = chunk_text(text, max_words=300)
    assert len(chunks) == 3
    assert all(c.endswith("today.") for c in chunks)
    assert all(words(c) <= 300 for c in chunks)
    assert sum(words(c) for c in chunks) == 840


def test_abbreviations_and_versions_do_not_split_sentences() -> None:
    text = "Dr. Smith released version 2.0 on Jan. 5 of that year. It was e.g. faster. " * 40
    chunks = chunk_text(text, max_words=50)
    assert all(not c.startswith(("Smith", "0 on", "5 of", "faster")) for c in chunks)


def test_overlong_sentence_is_cut_by_words() -> None:
    text = " ".join(f"w{i}" for i in range(700))
    chunks = chunk_text(text, max_words=300)
    assert [words(c) for c in chunks] == [300, 300, 100]


def test_small_tail_is_merged_and_paragraphs_are_respected() -> None:
    body = " ".join(["Alpha beta gamma delta epsilon zeta."] * 50)  # 300 words
    chunks = chunk_text(body + "\n\nTail end.", max_words=300)
    assert len(chunks) == 1 and chunks[0].endswith("Tail end.")
    assert chunk_text("Heading\n\nFirst sentence here.", 300) == ["Heading First sentence here."]
    assert chunk_text("   \n\n ", 300) == []
