"""Does a text the offline provider wrote read as English? The checker the tests and ``bench.prose`` share.

Two checks, each returning the faults it finds (an empty list is a pass):

- :func:`prose_faults` for a sentence or a paragraph: no markup or code, no quotation inside a quotation, no phrase
  of four words said twice, no two sentences opening alike, every sentence ended, under the kind's length; and in
  the words the template put around its quotations, a verb that agrees with its subject ("years carries" does not),
  no label joined to one it holds ("language and language") and each word cased as the source writes it ("Within
  python" when the source says "Python" is not).
- :func:`label_faults` for a theme, an entity or a locus: it names a thing. Not a person, an address, a link, code
  or a number; not a lone adjective, adverb, verb or participle ("long", "Clear", "typically", "read",
  "underlying"), not a phrase led by a number ("hundred bees") or a function word ("Inside", "of bees"), not a verb
  and its object ("loads instructions") nor an adjective phrase with no noun ("programmable read-only"), and cased
  as the source writes it.

The parts of speech come from LemmInflect's English lexicon, the function words from YAKE's English stopword list:
the checker judges words as English does, not by lists of the provider's own past mistakes.
"""

from __future__ import annotations

import re
from collections import Counter

from explorer.text import (
    DOMAIN_TAG,
    OPENS,
    ambiguous,
    function_words,
    is_plural,
    mid_sentence_forms,
    not_a_thing,
    split_sentences,
    used_as_noun,
    used_as_verb,
    word_kinds,
)

MARKUP = re.compile(
    r"`|<[A-Za-z/][^<>]*>|[{}]|\b(?:https?|ftp)://|\bwww\.|\[[^\]]*\]\(|\*\*|(?:^|\s)#{1,6}\s|\S+@\S+\.\w+"
)
NESTED = re.compile(r"“[^”]*“")  # a quotation opened inside another
ENDED = re.compile(r"[.!?…][”\")]*$")
WORD = re.compile(r"[\w'’-]+")
_QUOTATION = re.compile(r"“[^“”]*”")
_TEMPLATE_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_PREPOSITIONS = frozenset(
    [
        "about",
        "at",
        "beside",
        "between",
        "by",
        "for",
        "from",
        "in",
        "into",
        "of",
        "on",
        "over",
        "through",
        "to",
        "under",
        "with",
        "within",
    ]
)
_QUALIFIED = re.compile(r"([^()]+) \(([A-Za-z][^()]*)\)")
_PASSAGE_MARK = re.compile(r"^\[\d+\] (?:\([^()\n]*\) )?", re.MULTILINE)  # format_passages' "[1] (label) "

# The most words each kind may have: the prompts ask 50-100 words, 1-3 sentences, a question, 150 words...
MAX_WORDS = {
    "implant": 110,
    "entity_synthesis": 80,
    "entity_learning": 40,
    "rem_question": 30,
    "rem_synthesis": 150,
    "dream_relation": 150,
    "locus": 40,
    "analogy_rationale": 30,
    "residue_connection": 70,
    "residue_tension": 70,
    "residue_bridge": 30,
    "residue_surprise": 50,
    "residue_possibility": 50,
    "crystal": 100,
    "validation_notes": 60,
}


def template_words(text: str, source: str = "") -> str:
    """What the template wrote: ``text`` with its quotations blanked, and any run of four words or more it takes
    from ``source`` unquoted (an entity's learning, a fusion's sentences): their words are the source's, not ours.
    """
    text = _QUOTATION.sub(" “…” ", text)
    taken = {tuple(g) for g in _grams([w.lower() for w in WORD.findall(source)])}
    words = list(WORD.finditer(text))
    blank = [False] * len(words)
    for i, gram in enumerate(_grams([w[0].lower() for w in words])):
        if tuple(gram) in taken:
            blank[i : i + 4] = [True] * 4
    for match, gone in reversed(list(zip(words, blank, strict=True))):
        if gone:
            text = text[: match.start()] + "…" + text[match.end() :]
    return text


def _grams(words: list[str]) -> list[list[str]]:
    return [words[i : i + 4] for i in range(len(words) - 3)]


def prose_faults(text: str, max_words: int = 150, source: str = "", fixed: frozenset[str] = frozenset()) -> list[str]:
    """What breaks the rules in one text of prose; ``source`` (the texts it was written from) lets the casing of
    its words be checked, but for the template's own words, ``fixed`` (see :func:`fixed_words`).
    """
    faults = []
    if MARKUP.search(text):
        faults.append(f"markup or code: {MARKUP.search(text)[0]!r}")  # type: ignore[index]
    if NESTED.search(text):
        faults.append("a quotation nested in a quotation")
    quotations = [" ".join(WORD.findall(q.lower())) for q in _QUOTATION.findall(text)]
    if len(set(quotations)) < len(quotations):
        faults.append("quotes the same words twice")
    # Counted within each stretch between quotation marks: a quotation's last words and the template's next
    # ones ("… pleasant surprises …”, and “Python …") are no phrase anyone said.
    grams = Counter(
        tuple(g) for part in re.split("[“”]", text) for g in _grams([w.lower() for w in WORD.findall(part)])
    )
    ours = template_words(text, source)
    said = " ".join(w.lower() for w in WORD.findall(ours))
    # Said twice by the template: two quotations that name the same thing are their sources agreeing.
    repeated = [" ".join(g) for g, n in grams.items() if n > 1 and " ".join(g) in said]
    if repeated:
        faults.append(f"says twice: {repeated[0]!r}")
    sentences = split_sentences(text)
    for sentence in sentences:
        if not ENDED.search(sentence):
            faults.append(f"unended sentence: {sentence[-40:]!r}")
    openers = Counter(" ".join(WORD.findall(s)[:2]).lower() for s in sentences if len(WORD.findall(s)) > 2)
    if any(n > 1 for n in openers.values()):
        faults.append(f"sentences open alike: {openers.most_common(1)[0][0]!r}")
    if len(text.split()) > max_words:
        faults.append(f"{len(text.split())} words, over {max_words}")
    faults += agreement_faults(ours) + doubled_faults(ours)
    if source:
        faults += casing_faults(ours, source, fixed=fixed)
    return faults


def fixed_words(texts: list[str], share: float = 0.5) -> frozenset[str]:
    """The template's own words: those at least ``share`` of several texts of one kind all use ("part" in "They
    part ways where one says …" is the template's, however a source capitalises it).
    """
    if len(texts) < 4:
        return frozenset()
    counts = Counter(w for t in texts for w in {m.lower() for m in _TEMPLATE_WORD.findall(template_words(t))})
    return frozenset(w for w, n in counts.items() if n >= share * len(texts))


def agreement_faults(text: str) -> list[str]:
    """Verbs that do not agree with the noun before them: a plural noun with a verb's -s form ("years carries"),
    a singular noun with its plain form ("queen recur"), unless the noun ends a list ("eggs and queen recur").
    """
    faults = []
    for clause in re.split(r"[.!?:;,“”]", text):
        tokens = _TEMPLATE_WORD.findall(clause)
        for k in range(1, len(tokens)):
            noun, verb = tokens[k - 1], tokens[k]
            if not _is_noun(noun):
                continue
            form = _verb_form(verb)
            listed = "and" in (t.lower() for t in tokens[: k - 1])
            if _PREPOSITIONS & {t.lower() for t in tokens[max(0, k - 3) : k - 1]}:
                continue  # "this passage on keyword arguments restates": the noun is not the subject
            if (form == "VBZ" and is_plural(noun)) or (form == "VBP" and not is_plural(noun) and not listed):
                faults.append(f"number: {noun} {verb}")
    return faults


def doubled_faults(text: str) -> list[str]:
    """Two labels joined where one holds the other: a noun on both sides of "and" ("array-oriented language and
    language", "stack and stack frames") names one thing twice.
    """
    tokens = _TEMPLATE_WORD.findall(text)
    return [
        f"one label twice: {before} and {after}"
        for before, joint, after in zip(tokens, tokens[1:], tokens[2:], strict=False)
        if joint.lower() == "and" and before.lower() == after.lower() and _is_noun(before)
    ]


def _is_noun(word: str) -> bool:
    kinds = word_kinds(word)
    return kinds is not None and "NOUN" in kinds and word.lower() not in function_words()


def _verb_form(word: str) -> str | None:
    """The form, "VBZ" or "VBP", when ``word`` can only be a verb (not a noun too) in that form; else None."""
    from lemminflect import getAllInflections, getAllLemmas

    lemmas = getAllLemmas(word.lower())
    if set(lemmas) != {"VERB"}:
        return None
    forms = {tag for lemma in lemmas["VERB"] for tag, said in getAllInflections(lemma, "VERB").items() if word in said}
    return "VBZ" if "VBZ" in forms else "VBP" if forms & {"VBP"} and not forms & {"VBD", "VBN"} else None


def casing_faults(text: str, source: str, opens: bool = True, fixed: frozenset[str] = frozenset()) -> list[str]:
    """Words of ``text`` cased against the source: capitalised mid-sentence where the source writes them in
    lower case only ("eggs, Clear and queen"), or in lower case where the source always capitalises them ("Within
    python" beside "Python"). A label (``opens`` false) is cased as it stands inside a sentence.
    """
    faults = []
    source = DOMAIN_TAG.sub("\n", _PASSAGE_MARK.sub("", source))  # "<programming> Storing": a tag ends a line
    for match in _TEMPLATE_WORD.finditer(text):
        word = match[0]
        if word.lower() in function_words() or len(word) < 3 or word.lower() in fixed:
            continue
        at_start = (opens and match.start() == 0) or bool(OPENS.search(text[max(0, match.start() - 6) : match.start()]))
        forms = mid_sentence_forms(word, source)
        lower = sum(n for f, n in forms.items() if f.islower())
        capital = sum(n for f, n in forms.items() if f[:1].isupper())
        if word[:1].isupper() and not at_start and lower and not capital and word[1:].islower():
            faults.append(f"case: {word!r} where the source writes {word.lower()!r}")
        elif word.islower() and capital and not lower:
            faults.append(f"case: {word!r} where the source writes {forms.most_common(1)[0][0]!r}")
    return faults


def label_faults(label: str, source: str = "", people: frozenset[str] = frozenset()) -> list[str]:
    """What keeps a theme, an entity or a locus from naming a thing; ``people`` are words of names the source
    credits (never a subject), ``source`` lets its casing be checked.
    """
    qualified = _QUALIFIED.fullmatch(label)  # "Distance band (Python)": a name told from its twin by a condition
    if qualified:
        return label_faults(qualified[1], source, people) + label_faults(qualified[2], source, people)
    faults = []
    if re.search(r"@|://|www\.|[`<>{}()=_/\\]", label):
        faults.append("address, link or code")
    if not re.search(r"[A-Za-z]{3}", label) or re.search(r"\d", label):
        faults.append("a number")
    words = label.split()
    if {w.strip("'’s") for w in words} & people:
        faults.append("a person")
    if words and not faults:
        reason = not_a_thing(words)
        if reason is None and len(words) == 1 and ambiguous(label) and not used_as_noun(label, source):
            reason = "a lone adjective or adverb: a quality, not a thing"
        faults += [reason] if reason else []
    if source and not faults and used_as_verb(label, source):
        faults.append("a verb phrase: the source says it after “to” or a modal")
    if source and not faults:
        faults += casing_faults(label, source, opens=False)
    return faults


def draws_on(text: str, source: str) -> bool:
    """Whether ``text`` quotes ``source``: four words in a row of it."""
    theirs = {tuple(g) for g in _grams([w.lower() for w in WORD.findall(source)])}
    return any(tuple(g) in theirs for g in _grams([w.lower() for w in WORD.findall(text)]))
