"""Every pattern that runs over document or model text takes time linear in its length: a
document or an answer is text no one here chose, and one pattern that backtracks can stall a whole ingest.

A pattern that tries every start position of a long run and rescans the run from each costs the square of its
length: one 80 KB "word" took 23 s to ingest. Each case feeds a pattern (or the sentence splitter) a long adversarial
input at n and 4n characters and requires the time to grow about four times, well under the sixteen of a square.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from explorer import text
from explorer.offline import consolidation as offline_consolidation
from explorer.prompts import answers, extract_json, split_passages
from explorer.reading import vault
from explorer.reading.chunker import chunk_text
from explorer.reading.formats import asciidoc, is_rule, rst, sniff

LINEAR_RATIO = 8  # 4n against n: about 4 when linear, 16 when quadratic
SLOW_S = 1.0  # n characters taking longer than this is already the fault (and 4n would take minutes)
FLOOR_S = 0.005  # below this the clock of a loaded machine says little: 4n may take 8 times this


def _run(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def _best_seconds(work: Callable[[str], object], subject: str, tries: int = 3) -> float:
    best = float("inf")
    for _ in range(tries):
        for remembered in (text._sentences, text.plain_text, text._ranked, text._keyphrases):
            remembered.cache_clear()  # each try does the whole work
        start = time.perf_counter()
        work(subject)
        best = min(best, time.perf_counter() - start)
    return best


# (what, the work, the repeated unit, n): n is as large as keeps a quadratic pattern's first run under a second.
CASES: list[tuple[str, Callable[[str], object], str, int]] = [
    ("e-mail over a word", text._EMAIL.findall, "a1.+-", 10_000),
    ("e-mail over hex", text._EMAIL.findall, "0123456789abcdef", 10_000),
    ("plain text over brackets", text.plain_text, "[", 10_000),  # markdown-it-py reads the links
    ("plain text over emphasis openers", text.plain_text, "*a ", 10_000),
    ("plain text over code openers", text.plain_text, "`a ", 10_000),
    ("plain text over fence openers", text.plain_text, "```a ", 10_000),
    ("credit over an unclosed parenthesis", lambda s: text._CREDIT.findall("(" + s), "written by ", 20_000),
    ("name pair over hyphens", text._PAIR.findall, "Ab-", 10_000),
    ("name pair over initials", text._PAIR.findall, "A.", 10_000),
    ("byline over initials", lambda s: text._BYLINE.findall("-- " + s + "x"), "A. ", 3_000),
    ("name separator over blanks", lambda s: text._NAME_SEPARATOR.split("Ab" + s + "Cd"), " ", 10_000),
    ("plain text of a word", text.plain_text, "a1.+-", 10_000),
    ("sentences of 'a. '", text.split_sentences, "a. ", 2_000),
    ("sentences of a word", text.split_sentences, "a1.+-", 10_000),
    ("sentences of dots", text.split_sentences, ".", 10_000),
    ("plain text of unclosed links", text.plain_text, "[a](", 10_000),
    ("prose of unclosed links", text.prose_sentences, "[a](", 10_000),
    ("keyphrases of unclosed links", text.keyphrases, "[a](", 10_000),
    ("chunks of unclosed links", chunk_text, "[a](", 10_000),
    # pysbd rewrites a whole line once for each abbreviation in it: 80 KB of "e.g. " took 24 s to ingest.
    ("sentences of 'e.g. '", text.split_sentences, "e.g. ", 5_000),
    ("sentences of 'Mr. A '", text.split_sentences, "Mr. A ", 5_000),
    ("prose of 'e.g. '", text.prose_sentences, "e.g. ", 5_000),
    ("chunks of 'e.g. '", chunk_text, "e.g. ", 5_000),
    ("chunks of 'Mr. A '", chunk_text, "Mr. A ", 5_000),
    ("keyphrases of a word", text.keyphrases, "0123456789abcdef", 10_000),
    ("a verb's uses", lambda s: text.used_as_verb("make money", s), "to make money ", 20_000),
    ("fenced JSON over blanks", lambda s: extract_json("```" + s), " ", 10_000),
    ("passages over unclosed labels", split_passages, "[1] (\n", 10_000),
    ("fence line over empty lines", answers._FENCE_LINE.search, "\n", 10_000),
    ("plain Markdown over entity openers", text.plain_markdown, "&a", 20_000),
    ("strategies over a name with no count", offline_consolidation._strategies, "a", 5_000),
    ("AsciiDoc inline over link openers", asciidoc._inline, "link:", 10_000),
    ("AsciiDoc inline over quotes and stars", asciidoc._inline, "'a *b ", 10_000),
    ("AsciiDoc label over colons", asciidoc._LABEL.fullmatch, ":: ", 10_000),
    ("AsciiDoc heading over equals", asciidoc._HEADING.fullmatch, "= a ==", 10_000),
    ("wikilinks over openers", lambda s: vault.read_note({}, s), "[[a|", 10_000),
    ("tags over hashes", lambda s: vault.read_note({}, s), " #a#", 10_000),
    ("rST roles over openers", lambda s: rst._ROLE.sub(rst._role, s), ":a:`", 10_000),
    ("a .txt's markup over a heading line", sniff.text_kind, "= a ", 10_000),
    ("rule over a spaced rule", is_rule, "- ", 10_000),
]


@pytest.mark.parametrize(("work", "unit", "n"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_time_grows_linearly(work: Callable[[str], object], unit: str, n: int) -> None:
    # Five attempts: another process taking the core can only slow one size down at random (the browser tests on
    # the other worker made three in a row of pysbd's 'a. ' 8.2 times slower at 4n), and a square never gets under
    # the ratio, whereas a linear pattern does at once on a quiet core.
    for _ in range(5):
        small = _best_seconds(work, _run(unit, n))
        assert small < SLOW_S, f"{n:,} characters took {small:.1f} s"
        large = _best_seconds(work, _run(unit, 4 * n))
        if large < LINEAR_RATIO * max(small, FLOOR_S):
            return
    raise AssertionError(f"{n:,} characters: {small:.4f} s; {4 * n:,}: {large:.4f} s")
