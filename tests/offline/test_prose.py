"""The offline provider's texts read as prose: checked on a sample of every kind (tests/offline/conftest.py).

The rules: concise, ended sentences that name what they connect; extractive; no template stutter
(no quotation nested in a quotation, no phrase of four words or more said twice, no two sentences opening
alike); no markup, code, address or link; no person, address, link or number taken as a theme or an entity.
The checker is shown to flag texts the provider used to write, so a rule that stops checking fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from explorer.testing.prose import (
    ENDED,
    MARKUP,
    MAX_WORDS,
    NESTED,
    draws_on,
    fixed_words,
    label_faults,
    prose_faults,
)

# Words of the people the sample credits or quotes: never a theme or an entity.
PEOPLE = frozenset(
    {"Hettinger", "Morehouse", "Kuchling", "Zadka", "Hastings", "Schneider-Kamp", "Chesterton", "Seneca", "Brandt"}
    | {"Wuellen", "Walker", "Skywalker", "Joy", "Metcalfe", "Gauguin", "Raymond", "Emily", "Larry", "Peter"}
)


# Texts the provider wrote before these rules (from a run over the same sample), one for each rule.
OLD = {
    "nested": "On note, the new passage echoes what is known: “In answer to the question, the passages converge: "
    "“Python 3.0 makes print a function.”” beside “First note on print: print is a function in 3.0”.",
    "stutter": "What links Matthew Brandt, seen as Power Mac: First note on Matthew Brandt: c68 A compiler by Matthew "
    "Brandt. Matthew Brandt, seen as Power Mac: First note on Matthew Brandt: c68 A compiler by Matthew Brandt.",
    "markup": "First note on CIFS: CIFS <protocol> (CIFS) An Internet file system protocol, based on Microsoft's SMB.",
    "code": "Perhaps: There is new syntax `:=` that assigns values to variables as part of a larger expression.",
    "link": "Supported by 2 of 9 passages: “CIFS version 1 (ftp://ietf.org/internet-drafts/draft-heizer-cifs-v1)”.",
    "unended": "Internet file, encrypted message recur across 9 encounters: Apple Computer, seen as Microsoft SMB",
    "openers": "Both turn on Power Mac. Both turn on Microsoft SMB.",
    "long": " ".join(["Python 3.0 makes print a function."] * 40),
}
OLD_LABELS = ["Luke Skywalker", "day Peter", "Peter Schneider-Kamp", "amk@amk.ca", "https://python.org", "3.8", "len()"]
OLD_LABELS += ["procedures quickly", "tracks sequentially", "typically", "designed"]


@pytest.mark.parametrize("rule", sorted(OLD))
def test_the_checker_flags_what_the_provider_used_to_write(rule: str) -> None:
    assert prose_faults(OLD[rule], MAX_WORDS["rem_synthesis"]), rule


@pytest.mark.parametrize("label", OLD_LABELS)
def test_the_checker_flags_names_addresses_and_numbers_as_themes(label: str) -> None:
    assert label_faults(label, people=PEOPLE), label


# What the provider once wrote badly, over notes on bees and git: the text, the source it was written from,
# and the fault the checker must name.
QUEEN = (Path(__file__).parents[1] / "data" / "notes" / "bees" / "the-queen.md").read_text(encoding="utf-8")
ISSUE_28 = {
    "quoted twice": (
        "This passage on PEP restates an earlier one on full details: “For full details, see the changelog” beside "
        "“For full details, see the changelog”.",
        "",
        "quotes the same words twice",
    ),
    "number": ("Within Python, years carries over as long.", "", "number: years carries"),
    "number, singular": ("Honey recur between queen and hive.", "", "number: Honey recur"),
    "case, lower": ("Within python, years carry over as code.", "Python changes. It is Python.", "case: 'python'"),
    "case, capital": (
        "What do these passages say about eggs, Clear and queen?",
        "The honey is clear.",
        "case: 'Clear'",
    ),
    "one label twice": (
        "A lead to follow on array-oriented language and language: “An array-oriented language for the CDC 6400”.",
        "",
        "one label twice: language and language",
    ),
}
ISSUE_28_LABELS = {
    "long": "a lone adjective",
    "Clear": "a lone adjective",
    "Inside": "a lone adjective",
    "underlying": "an adjective",
    "read": "a participle",
    "hundred bees": "a number phrase",
    "of bees": "a fragment",
    "enhances": "a verb",
    "loads instructions": "a verb phrase",  # YAKE's window cut these from longer phrases
    "programmable read-only": "an adjective",
    "FILO last-in": "an adjective",
}


@pytest.mark.parametrize("case", sorted(ISSUE_28))
def test_the_checker_flags_number_and_case_in_what_the_template_says(case: str) -> None:
    text, source, fault = ISSUE_28[case]
    assert any(f.startswith(fault) for f in prose_faults(text, 30, source)), prose_faults(text, 30, source)


@pytest.mark.parametrize("label", sorted(ISSUE_28_LABELS))
def test_the_checker_flags_labels_that_name_no_thing(label: str) -> None:
    assert any(f.startswith(ISSUE_28_LABELS[label]) for f in label_faults(label, QUEEN)), label_faults(label, QUEEN)


def test_the_templates_own_words_and_a_prepositions_object_are_not_judged() -> None:
    tensions = [f"They part ways where one says “{n} a”, and the other “{n} b”." for n in "WXYZ"]
    assert fixed_words(tensions) >= {"part", "ways", "where", "one", "says"}
    source = "Toasternet Part I and II were notes."
    assert prose_faults(tensions[0], 30, source) and prose_faults(tensions[0], 30, source, fixed_words(tensions)) == []
    assert prose_faults("This passage on keyword arguments restates an earlier one.", 30) == []


def test_agreement_and_case_are_read_outside_quotations_and_lists() -> None:
    assert prose_faults("Eggs and queen recur between hives: “The bees carries it”.", 30, QUEEN) == []
    assert prose_faults("Within Python, years carry over as code.", 30, "Python changes. It is Python.") == []
    assert label_faults("brood", "drone brood in worker cells") == []  # a noun where its text uses it as one
    assert label_faults("queen", QUEEN) == [] and label_faults("upright eggs", QUEEN) == []


def test_the_checker_passes_plain_prose_and_subjects() -> None:
    text = (
        "This passage on delay slot echoes an earlier one on SPARC processor: “A technique used on the SPARC "
        "processor to reduce the effect of pipeline breaks” beside “Annulled branches are indicated in SPARC "
        "assembler language”."
    )
    assert prose_faults(text) == []
    assert label_faults("delay slot") == [] and label_faults("Microsoft SMB") == []
    assert label_faults("power supply") == [] and label_faults("processor family") == []
    assert label_faults("speed") == [] and label_faults("family") == []
    assert label_faults("years") == [] and label_faults("eggs") == []


def test_the_checker_reads_quotation_marks_tags_and_qualifiers_as_a_reader_does() -> None:
    # Words on the two sides of a quotation mark are no phrase: not "pleasant surprises and Python" twice.
    text = "Pleasant surprises and Python meet: “There are still some pleasant surprises …”, and “Python 2.2 is out”."
    assert prose_faults(text) == []
    assert label_faults("Distance band (Python)", "Distance band (Python): walked far. Python is a language.") == []
    assert label_faults("len (x)") and label_faults("f(x)")
    # A word after a domain tag or opening a quoted title starts a line: its capital is no choice of case.
    assert label_faults("storing", "<programming> Storing the value of an expression in a variable.") == []
    assert label_faults("love", 'Love is a snowmobile. -- Matt Groening, "Love is Hell"') == []
    assert label_faults("python", "Code in Python is read. Python is a language.")
    # A verb and its object where the source only says them after "to" or a modal; a noun after "to" is one.
    assert label_faults("produce signals", "The circuit is used to produce signals at high speed.")
    assert label_faults("punk music", "She listens to punk music.") == []


def _by_kind(samples: list[Any]) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for sample in samples:
        found.setdefault(sample.kind, []).append(sample)
    return found


KINDS = ["implant", "entity_synthesis", "entity_learning", "rem_question", "rem_synthesis", "dream_relation"]
KINDS += ["locus", "analogy_rationale", "crystal", "validation_notes"]
KINDS += [f"residue_{name}" for name in ("connection", "tension", "bridge", "surprise", "possibility")]


def test_every_kind_of_text_is_sampled(prose_samples: list[Any]) -> None:
    kinds = _by_kind(prose_samples)
    missing = [k for k in [*KINDS, "fusion", "entity", "theme"] if not kinds.get(k)]
    assert not missing, f"no sample of {missing}"


@pytest.mark.parametrize("kind", KINDS)
def test_offline_texts_follow_the_rules_of_prose(prose_samples: list[Any], kind: str) -> None:
    fixed = fixed_words([sample.text for sample in _by_kind(prose_samples)[kind]])
    faults = [
        f"{fault}\n    in {sample.text}"
        for sample in _by_kind(prose_samples)[kind]
        for fault in prose_faults(sample.text, MAX_WORDS[kind], sample.context, fixed)
    ]
    assert not faults, f"{kind}:\n" + "\n".join(faults[:5])


def test_fusion_keeps_sentences_of_its_memories_and_no_markup(prose_samples: list[Any]) -> None:
    for sample in _by_kind(prose_samples)["fusion"]:
        assert not MARKUP.search(sample.text) and not NESTED.search(sample.text), sample.text
        assert ENDED.search(sample.text), sample.text
        assert sum(draws_on(sample.text, source) for source in sample.sources) >= 1, sample.text


@pytest.mark.parametrize("kind", ["entity", "theme"])
def test_themes_and_entities_name_subjects(prose_samples: list[Any], kind: str) -> None:
    faults = [
        f"{sample.text!r}: {found}"
        for sample in _by_kind(prose_samples)[kind]
        if (found := label_faults(sample.text, sample.context, PEOPLE))
    ]
    assert not faults, "\n".join(faults)


@pytest.mark.parametrize("kind", ["implant", "rem_synthesis", "residue_connection", "crystal"])
def test_a_text_that_connects_quotes_two_of_its_sources(prose_samples: list[Any], kind: str) -> None:
    for sample in _by_kind(prose_samples)[kind]:
        quoted = [source for source in sample.sources if draws_on(sample.text, source)]
        assert len(set(quoted)) >= 2 or len(set(sample.sources)) < 2, sample.text


def test_a_synthesis_never_quotes_another_answers_connectives(prose_samples: list[Any]) -> None:
    connectives = (
        "This passage on",
        "meet on this question",
        "recur between",
        "recurs between",
        "recur around",
        "recurs around",
        "A lead to follow",
        "They part ways",
    )
    connectives += ("It adds", "Related knowledge adds", "an earlier note", "Of what is known")
    for sample in prose_samples:
        for quotation in re.findall(r"“([^”]*)”", sample.text):
            assert not any(c.lower() in quotation.lower() for c in connectives), sample.text
