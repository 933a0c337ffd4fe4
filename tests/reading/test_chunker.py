from explorer.reading.chunker import chunk_sections, chunk_text
from explorer.reading.formats import Section
from explorer.text import keyphrases


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


def test_chunks_keep_to_their_sections_and_carry_their_titles() -> None:
    sentence = "The quick brown fox jumps over the lazy dog near the river bank today."  # 14 words
    sections = [Section(" ".join([sentence] * 10), "First"), Section(" ".join([sentence] * 10), "Second")]
    chunks = chunk_sections(sections, max_words=300)  # 280 words would fit in one chunk: the titles part them
    assert [(c.section, words(c.text)) for c in chunks] == [("First", 140), ("Second", 140)]


def test_tiny_sections_are_read_together_under_the_largest() -> None:
    sections = [
        Section("git-column - Display data in columns", "NAME"),
        Section("'git column' [--command=<name>]", "SYNOPSIS", code=True),
        Section("This command formats the lines of its standard input into a table. " * 3, "DESCRIPTION"),
        Section("Part of the git suite", "GIT"),
    ]
    chunks = chunk_sections(sections, max_words=300)
    assert [(c.section, c.code) for c in chunks] == [("DESCRIPTION", False), ("SYNOPSIS", True)]
    assert chunks[0].text.startswith("git-column - Display data in columns This command formats")
    assert chunks[0].text.endswith("Part of the git suite")


def test_code_is_never_glued_to_prose_and_stays_as_written() -> None:
    code = "$ seq 1 24 | git column --mode=column\n1      4      7\n2      5      8"
    chunks = chunk_sections([Section("Format data by columns:", "EXAMPLES"), Section(code, "EXAMPLES", code=True)])
    assert [(c.text, c.code) for c in chunks] == [("Format data by columns:", False), (f"```\n{code}\n```", True)]
    assert keyphrases(chunks[1].text) == []  # code is never a theme


def test_long_code_is_cut_between_lines() -> None:
    code = "\n".join(f"line {i} of the listing" for i in range(100))  # 500 words
    chunks = chunk_sections([Section(code, "Listing", code=True)], max_words=120)
    listed = [c.text.removeprefix("```\n").removesuffix("\n```") for c in chunks]  # each fenced
    assert len(chunks) == 5 and all(c.code and c.section == "Listing" for c in chunks)
    assert all(words(text) <= 120 for text in listed) and "\n".join(listed) == code


def test_one_untitled_section_chunks_as_plain_text() -> None:
    text = "Dr. Smith released version 2.0 on Jan. 5 of that year. It was e.g. faster.\n\n" * 40
    assert [c.text for c in chunk_sections([Section(text)], max_words=50)] == chunk_text(text, max_words=50)
