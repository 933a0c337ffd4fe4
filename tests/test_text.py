"""What names a subject: themes are the things a text is about, not how or what was done, nor a phrase cut short."""

from __future__ import annotations

import pytest

from explorer.text import is_theme, keyphrases

SUBJECTS = ["delay slot", "Microsoft SMB", "power supply", "processor family", "speed", "networking"]
SUBJECTS += ["operating system", "distributed systems", "IBM", "binary", "ALU"]
# How or what was done, a verb, a phrase that stops before its noun: words a reader would not call a subject.
NOT_SUBJECTS = ["typically", "designed", "held", "procedures quickly", "versions developed", "support virtual"]
NOT_SUBJECTS += ["perform complex", "enhances IMAP", "removable hard", "interaction faster", "executed."]


@pytest.mark.parametrize("phrase", SUBJECTS)
def test_a_noun_or_a_name_is_a_theme(phrase: str) -> None:
    assert is_theme(phrase)


@pytest.mark.parametrize("phrase", NOT_SUBJECTS)
def test_an_adverb_a_verb_or_a_modifier_alone_is_not(phrase: str) -> None:
    assert not is_theme(phrase)


def test_a_phrase_an_ellipsis_cuts_short_is_no_theme() -> None:
    text = "Enhancements included virtual memory and improved main … The improved main … came in 1979."
    found = keyphrases(text, 5)
    assert "virtual memory" in found
    assert not any(p.lower().startswith("improved main") for p in found)
    assert "improved main" in keyphrases(text.replace("…", "memory"), 5)  # what only the ellipsis took away
