"""Plain-text utilities the whole engine shares: sentences, keyphrases, excerpts.

They are rule-based and deterministic (pysbd for sentences, YAKE for keyphrases),
so the reading cycle, the offline provider and the surfaces cut text the same way.
Texts arrive as Markdown, FOLDOC entries or quotations: :func:`plain_text` and
:func:`prose_sentences` keep what reads as prose (no code, markup, links or
attributions), and :func:`keyphrases` never offers a person's name, an address or
a number as a theme, because readers take them for what the text is about.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import takewhile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pysbd
    import yake
    from markdown_it import MarkdownIt

# pysbd, YAKE (networkx under it) and LemmInflect are imported on first use: a command that opens a runtime but cuts
# no text (`explorer wander list`) spent about a third of its start importing them.

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+-]*")
# A text with a character besides whitespace: the engine strips a concept, a query or a name and refuses what is
# left empty, and the surfaces' schemas (the API's, the MCP tools') state it as this pattern. Python's str.strip()
# also takes the four separators U+001C-U+001F for whitespace, which a schema's \s (Unicode White_Space) does not.
NOT_BLANK = r"[^\s\x1c-\x1f]"


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


# The offline provider reads the same chunk many times over (an implant, its entities, excerpts, a topic) and a
# walk names the same nodes again: these pure functions remember their last few thousand texts. Ingesting the
# sample's Python documents split 5,790 texts for 131 chunks, 17 s of 62.
TEXT_CACHE = 4096


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (rule-based, handles abbreviations and version numbers)."""
    return list(_sentences(text.strip()))


# pysbd rewrites a whole line once for each abbreviation in it, so a line is quadratic in its abbreviations ("e.g. "
# repeated with no sentence end: 80 KB took 24 s to ingest, 160 KB 98 s). It is handed a piece of at most this many
# characters at a time, cut at a space: ordinary paragraphs are shorter and are cut exactly as before, and so is a
# longer text wherever pysbd's rules look no further than a piece.
SENTENCE_PIECE = 2000
_TO_LAST_SPACE = re.compile(r"(?s:.*)\s")
_SPACE = re.compile(r"\s")


@lru_cache(maxsize=TEXT_CACHE)
def _sentences(text: str) -> tuple[str, ...]:
    """Sentences of ``text``, a piece at a time. The last sentences of a piece, up to half of it, start the next
    piece, as what follows them may move where they end (a parenthesis closed past the cut); a sentence longer than
    that is not read again but followed through the pieces after it until it ends, so each piece moves on by half
    a piece at least and a long sentence is still one.
    """
    found: list[str] = []
    start = 0  # where the next piece starts
    begun: int | None = None  # where a sentence running on through the pieces began
    while start < len(text):
        end = _piece_end(text, start)
        piece = text[start:end].rstrip()
        sentences = list(_segmented(piece))
        final = end == len(text) or text[end - 1] in "\r\n"  # pysbd ends a sentence at every line end
        if begun is not None:
            head = piece.lstrip()
            found_again = bool(sentences) and head.startswith(sentences[0])
            if found_again and len(sentences) == 1 and not final:
                start = end  # it runs on through this piece too
                continue
            if found_again:
                sentences[0] = text[begun : start + len(piece) - len(head) + len(sentences[0])]
            else:  # pysbd rewrote it: where it ends is not known
                found.append(text[begun:start].strip())
            begun = None
        starts = [] if final else _starts(piece, sentences)
        again = [at for at in starts[: len(sentences) - 1] if at >= len(piece) // 2]
        if again:
            found.extend(sentences[: len(sentences) - len(again)])
            start += again[-1]
            continue
        if starts:
            found.extend(sentences[:-1])
            begun = start + starts[0]
        else:  # the text ends here, or pysbd rewrote the last sentence: the piece is taken whole
            found.extend(sentences)
        start = end
    return tuple(found)


def _starts(piece: str, sentences: Sequence[str]) -> list[int]:
    """Where the sentences of ``piece`` start in it, the last first, back to the first one pysbd rewrote."""
    starts: list[int] = []
    at = len(piece)
    for sentence in reversed(sentences):
        while at and piece[at - 1].isspace():
            at -= 1
        if not piece.endswith(sentence, 0, at):
            break
        at -= len(sentence)
        starts.append(at)
    return starts


def _piece_end(text: str, start: int) -> int:
    """Where the piece of ``text`` from ``start`` ends: after the last space within a piece's length, or after the
    first one past it (a word longer than a piece is not cut).
    """
    if len(text) - start <= SENTENCE_PIECE:
        return len(text)
    space = _TO_LAST_SPACE.match(text, start, start + SENTENCE_PIECE) or _SPACE.search(text, start + SENTENCE_PIECE)
    return space.end() if space else len(text)


def _segmented(text: str) -> tuple[str, ...]:
    if not text:
        return ()
    # Segmenter.segment goes on to find each sentence again in the whole text, from its start, for the character
    # spans we do not use: quadratic in the sentences ("a. " repeated: 8 KB took 5 s). Its processor alone cuts the
    # same sentences (identical on every paragraph of the tests' data, the docs and the README) in linear time.
    return tuple(s.strip() for s in _segmenter().processor(text).process() if s.strip())


# -- plain text: what reads as prose --------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?")  # code that is a plain name: `len()`, `os.path`
_FENCE = "```"  # a code span opened by three backticks or more is a fenced block (chunks are flattened to a line)

# What follows is not Markdown, so no Markdown parser reads it; each pattern is bounded or atomic, so it takes time
# linear in the text (tests/test_patterns_linear.py).
_URL = re.compile(r"\(?\b(?:https?|ftp)://[^\s)]+\)?|\bwww\.[^\s)]+")  # a bare address: CommonMark links none
# An address starts where its run of address characters starts: tried from every character of a long run, the
# pattern rescanned the run each time (a 20 KB hex string took 9 s, growing with the square of its length).
_EMAIL = re.compile(r"[<(]?(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+[>)]?")
DOMAIN_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,60}>(?:\s*\([^()\n]{1,40}\))?")  # FOLDOC: <domain> (ABBR)
_CITATION = re.compile(r"\[[^\]\n]{0,80}\]")  # FOLDOC's [Jargon File], [Date?]
# Atomic: each way a credit can read ends at the same closing parenthesis, so once one is found the others need not
# be tried (a parenthesis holding "written by" a thousand times and never closed was rescanned for each of them).
_CREDIT = re.compile(
    r"\((?>[^()]*\b(?:contributed|patch(?:ed)?|written|suggested|reported|fixed)\s+by\b|[^()]*\b(?:bpo|issue)[- ]#?\d+"
    r"|\s*\d{4}(?:-\d\d){0,2}\s*)[^()]*\)",
    re.IGNORECASE,
)
# A heading inside a chunk stands mid-line (chunks are flattened), where no Markdown parser takes it for one.
_HEADING = re.compile(r"(?:^|\s)#{1,6}\s")


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


@lru_cache(maxsize=TEXT_CACHE)
def plain_text(text: str) -> str:
    """``text`` without code blocks, markup, links, addresses, citations and credits: what a reader can quote.

    Inline code that is a plain name (``len()``) keeps its name; other inline code is left marked, so the
    sentence holding it is not taken for prose. A Markdown heading glued to the sentence after it (chunks are
    flattened) ends that sentence's claim to be prose too: the heading and the sentence it runs into are dropped.
    """
    text = _EMAIL.sub(" ", _URL.sub(" ", _inline_words(text or "")))
    text = _CREDIT.sub(" ", _CITATION.sub(" ", text))
    text = _BYLINE.sub(" ", text)
    text = DOMAIN_TAG.sub("\n\n", text)  # FOLDOC's <domain> tag ends its list of names
    parts = _HEADING.split(text)
    kept = [parts[0]] + [_after_first_sentence(p) for p in parts[1:]]
    paragraphs = (" ".join(p.split()) for part in kept for p in part.split("\n\n"))
    return "\n\n".join(p for p in paragraphs if p)


def _inline_words(text: str) -> str:
    """``text`` with its Markdown read by markdown-it-py's inline parser (chunks are flattened to a line, where no
    block starts): emphasis, links and images give way to their words, HTML is kept as written (FOLDOC's
    ``<domain>`` tags are read after), line ends are kept, and a code span is code: a fenced block goes (a paragraph
    break in its place; one never closed, to the end, as CommonMark reads it), a plain name keeps its name, other
    code keeps its backticks.
    """
    words: list[str] = []
    for token in _markdown().parseInline(text)[0].children or []:
        if token.type == "code_inline" and token.markup.startswith(_FENCE):
            words.append("\n\n")
        elif token.type == "code_inline":
            code = token.content
            words.append(code if _IDENTIFIER.fullmatch(code) else f"{token.markup}{code}{token.markup}")
        elif token.type == "text" and _FENCE in token.content:  # a fence never closed runs to the text's end
            words.append(token.content.partition(_FENCE)[0] + "\n\n")
            break
        elif token.type in ("text", "html_inline", "image"):  # an image's content is its description
            words.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            words.append("\n")
    return "".join(words)


def _after_first_sentence(text: str) -> str:
    first, _, rest = text.partition("\n\n")
    return "\n\n".join([" ".join(split_sentences(" ".join(first.split()))[1:]), rest])


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _words(
    "a an the is are was were be been being has have had of to in on for with by from as at that which who this "
    "these those it its can may will would not or and but if when than then so such into one"
)
_CODE_CHARS = re.compile(r"[`{}<>|\\#=*~^$]|__|://|@|->|::|&&")
_OPENING = re.compile(r"^[\"“'(]?[A-Z0-9]")
_ENDING = re.compile(r"[.!?][\"”')]?$")


def has_code(text: str) -> bool:
    """Whether ``text`` holds a character or a pair of them that prose does not use: markup, code, an address."""
    return bool(_CODE_CHARS.search(text))


def is_prose(sentence: str, max_words: int = 40) -> bool:
    """Whether ``sentence`` reads as a sentence a person wrote: capitalised, ended, made of words, no code."""
    words = sentence.split()
    if not 4 <= len(words) <= max_words or has_code(sentence):
        return False
    if not _OPENING.match(sentence) or not _ENDING.search(sentence):
        return False
    alphabetic = sum(bool(_WORD.fullmatch(w.strip("\"“”'(),.;:!?"))) for w in words)
    stops = sum(w.lower().strip("\"“”'(),.;:!?") in _STOPWORDS for w in words)
    return alphabetic >= 0.7 * len(words) and stops >= 2


def prose_sentences(text: str, max_words: int = 40) -> list[str]:
    """The sentences of ``text`` that read as prose (:func:`is_prose`), in order, from its :func:`plain_text`."""
    return [s for p in plain_text(text).split("\n\n") for s in split_sentences(p) if is_prose(s, max_words)]


# -- keyphrases: what a text is about ---------------------------------------------------

# Common given names: a capitalised pair that starts with one is a person, not a subject ("Peter Schneider-Kamp").
_GIVEN_NAMES = _words(
    """Aaron Adam Alan Albert Alex Alexander Alfred Alice Andrew Andy Ann Anna Anne Anthony Antoine Armin Arthur Barry
    Ben Benjamin Bernard Bill Bob Brett Brian Bruce Carl Carol Charles Charlie Chris Christian Christoph Christopher
    Claude Colin Dan Daniel Dave David Dennis Denis Donald Doug Douglas Ed Edward Emily Eric Erik Frank Fred Frederick
    Gary George Georg Gerhard Greg Gregory Guido Guy Hans Harry Henry Ian Jack Jacob James Jan Jane Jason Jeff Jeffrey
    Jennifer Jeremy Jim Joe John Jon Jonathan Joseph Josh Julia Julian Karl Keith Ken Kenneth Kevin Larry Laura Linda
    Lisa Lucius Luke Marc Marie Mark Marlo Martin Mary Matt Matthew Michael Mike Moshe Neil Nick Nicholas Oliver Pablo
    Pat Patrick Paul Peter Phil Philip Ralph Raymond Richard Rick Rob Robert Roger Ron Ronald Russ Sam Samuel Sarah
    Scott Sean Serhiy Simon Stefan Stephen Steve Steven Susan Terry Thomas Tim Timothy Tom Tony Victor Vinay Walter
    Will William Yury Zachary"""
)
# A name is bounded (a word of at most 42 characters, at most five initials): a pattern tried at every hyphen of
# "Ab-Ab-…" or every capital of "A.A.…" rescanned the rest of the run, and a byline's initials could be parted
# between its names in ever more ways.
_NAME = r"(?:[A-Z][a-z][\w'’-]{0,40}|[A-Z]\.(?:\s?[A-Z]\.){0,4})"
_FULL_NAME = rf"{_NAME}(?:\s+(?:(?:van|von|de|der|da|del|di|le|la)\s+)?{_NAME}){{0,3}}"
_CREDITED = re.compile(
    rf"(?:\b(?:[Aa]uthors?|[Ee]ditors?|[Bb]y|[Tt]hanks to)\s*:?\s+|(?:^|(?<=[.!?\"”])\s+)(?:--|—)\s*)"
    rf"({_FULL_NAME}(?:\s*(?:,|\band\b)\s*{_FULL_NAME})*)"
)
_BYLINE = re.compile(rf"(?:^|(?<=[.!?\"”])\s+)(?:--|—)\s*{_FULL_NAME}(?:,[^\n]{{0,80}})?\s*$", re.MULTILINE)
_NAME_SEPARATOR = re.compile(r"(?<!\s)\s*(?:,|\band\b)\s*")  # from a run of blanks' start only: tried once per run
_POSSESSIVE = re.compile(r"['’]s?$")
_PAIR = re.compile(rf"\b({_NAME})\s+({_NAME})")


def person_names(text: str) -> set[str]:
    """Words of the people ``text`` names: credited (by, author, editor, a quotation's ``--`` line) or a
    capitalised pair opening with a common given name. Rule-based, so it misses some and that is safe: it is
    used only to keep names out of themes.
    """
    found: set[str] = set()
    for match in _CREDITED.finditer(text or ""):
        names = _NAME_SEPARATOR.split(match[1])
        for name in names:
            words = list(takewhile(lambda w: w.lower() not in _STOPWORDS, name.split()))
            if len(words) >= 2 or len(names) >= 2 or not match[0].lstrip().lower().startswith("by"):
                found.update(_POSSESSIVE.sub("", w) for w in words if w[0].isupper())
    for first, last in _PAIR.findall(text or ""):
        if first in _GIVEN_NAMES:
            found.update((first, _POSSESSIVE.sub("", last)))
    return found


RANKED = 60  # YAKE's phrases kept per text: every caller's ``top * 3`` fits (its ranking of the first n does not
# depend on how many it was asked for, so one extraction serves every ``top``)


@lru_cache(maxsize=1)
def _extractor() -> yake.KeywordExtractor:
    import yake

    return yake.KeywordExtractor(lan="en", n=2, top=RANKED, dedupLim=0.6)


@lru_cache(maxsize=TEXT_CACHE)
def _ranked(clean: str) -> tuple[str, ...]:
    """YAKE's phrases of a plain text, best first: one extraction per text, whichever ``top`` is asked (the
    offline provider asks for a chunk's keyphrases three times, each with its own ``top``).
    """
    return tuple(phrase for phrase, _ in _extractor().extract_keywords(clean))


_NOT_A_THEME = re.compile(r"[@/\\:()\[\]{}<>=_`#|*~^$&]|\d|\.\w|[.,;!?'\"]$")


def is_theme(phrase: str, names: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether ``phrase`` can name what a text is about: words, not a number, code, an address or a person."""
    words = phrase.split()
    if not words or len(phrase) <= 2 or _NOT_A_THEME.search(phrase):
        return False
    if all(w.lower() in _STOPWORDS for w in words):
        return False
    if len({w.lower() for w in words}) < len(words) or phrase in _GIVEN_NAMES:  # YAKE's "branch branch"; "Ben"
        return False
    if not_a_thing(words) is not None:
        return False  # "typically", "held", "procedures quickly", "support virtual": not a thing the text is about
    return not any(_POSSESSIVE.sub("", w) in names for w in words)


# Cardinal numbers in words: a closed class the lexicon tags as nouns or adjectives ("hundred bees").
_NUMBER_WORDS = _words(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion dozen "
    "hundreds thousands millions billions dozens"
)


@lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    """YAKE's English stopwords: the determiners, prepositions, pronouns and auxiliaries no subject starts or ends
    with ("Inside", "of bees").
    """
    from pathlib import Path

    import yake

    path = Path(yake.__file__).parent / "core" / "StopwordsList" / "stopwords_en.txt"
    return frozenset(w.strip().lower() for w in path.read_text(encoding="utf-8").splitlines() if w.strip())


def not_a_thing(words: Sequence[str]) -> str | None:
    """Why one or two words name no thing, None when they can: the last must be able to be a noun (in
    LemmInflect's English lexicon, or a gerund, or unknown to it: a name, an acronym, jargon) and a first one
    modify it (a noun, an adjective, a participle); neither a number nor a function word leads or ends it; a lone
    word is no verb's past form ("read", "held"). A lone word that can be an adjective or an adverb too ("long",
    "clear", "binary") is judged in its text by :func:`used_as_noun`.
    """
    *modifiers, head = words
    if words[0].lower() in _NUMBER_WORDS:
        return "a number phrase: how many, not what"
    if words[0].lower() in function_words() or head.lower() in function_words() or head.lower() in _STOPWORDS:
        return "a fragment led or ended by a function word"
    kinds = word_kinds(head) or _compound_kinds(head)
    if kinds is not None and "NOUN" not in kinds and not (head.endswith("ing") and not kinds & {"ADJ", "ADV"}):
        if "ADV" in kinds or (head.endswith("ly") and kinds != {"ADJ"}):  # "read-only" is an adjective
            return "an adverb: how something is done, not a subject"
        return "an adjective: a quality, not a thing" if "ADJ" in kinds else "a verb: what is done, not a subject"
    if modifiers and is_plural(modifiers[-1]) and kinds is not None and "VERB" in kinds:
        return "a clause, not a name: a plural and its verb"  # "branches change", "years long"
    if not modifiers and kinds is not None and _is_past_form(head):
        return "a participle: what was done, not a subject"
    if modifiers and _finite_verb(modifiers[0]):
        return "a verb phrase: a verb and its object"  # "loads instructions", "took place"
    if any(
        not (kinds is None or kinds & {"NOUN", "ADJ"} or word.endswith(("ing", "ed", "en")))
        for word, kinds in ((w, word_kinds(w)) for w in modifiers)
    ):
        return "a modifier that modifies nothing"
    return None


def _compound_kinds(word: str) -> frozenset[str] | None:
    """What a hyphenated word the lexicon does not know can be, by its last part: "read-only" is an adjective, as
    its last part is no noun, and so is "last-in" (an adjective and a particle, as in "last-in first-out"), while
    "plug-in" (a verb and a particle) and "run-time" can be nouns; None when it can be a noun or its parts are not
    known either.
    """
    *firsts, last = word.lower().split("-")
    if not firsts or not firsts[-1] or not last:
        return None
    if last in _PARTICLES:
        return frozenset({"ADJ"}) if "ADJ" in (word_kinds(firsts[-1]) or ()) else None
    kinds = word_kinds(last)
    return frozenset({"ADJ"}) if kinds is not None and "NOUN" not in kinds else None  # "hard-coded" too


# The particles of phrasal verbs: after a verb they make a noun ("plug-in", "set-up"), after an adjective an adjective
# ("last-in").
_PARTICLES = _words("in on out up off down over back away by")


@lru_cache(maxsize=TEXT_CACHE)
def _finite_verb(word: str) -> bool:
    """Whether ``word`` is a verb's third-person form or a simple past that is no participle ("loads", "took"; not
    "distributed", which LemmInflect files as a past and which modifies a noun as "distributed systems" does):
    before a noun, it makes a clause.
    """
    from lemminflect import getAllInflections, getAllLemmas

    for lemma in getAllLemmas(word.lower()).get("VERB", ()):
        forms = getAllInflections(lemma, "VERB")
        if word.lower() in forms.get("VBZ", ()):
            return True
        if "VBN" in forms and word.lower() in forms.get("VBD", ()) and word.lower() not in forms["VBN"]:
            return True
    return False


def _uses(phrase: str, text: str, ignore_case: bool = True) -> Iterator[re.Match[str]]:
    """Where ``text`` says ``phrase`` as whole words: not inside a longer word or a hyphenated one."""
    return re.finditer(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text, re.IGNORECASE if ignore_case else 0)


# Words after which a verb's plain form is a verb ("to produce signals", "can store data").
_INFINITIVE_MARKERS = _words("to can could may might must shall should will would do does did cannot")
_OBJECT_LEADS = _words("a an the this that these those its their his her our your my it them me us him you")


def used_as_verb(phrase: str, text: str) -> bool:
    """Whether ``text`` only ever uses ``phrase`` as a verb (and its object): its first word is a verb's plain form
    and stands after "to" or a modal wherever the text says it ("to produce signals", "can store"; not "to punk
    music" nor "the store data").
    """
    words = phrase.split()
    if not words or not _plain_verb(words[0].lower()):
        return False
    uses = [  # the word before and after each use, read in a window: never the whole text again for each use
        (
            (text[max(0, m.start() - 40) : m.start()].split() or [""])[-1].lower(),
            (text[m.end() : m.end() + 40].split() or [""])[0].lower(),
        )
        for m in _uses(phrase, text)
    ]
    # A lone word after "to" is a verb only before its object ("to make a", "to find them"): "go to school." is not.
    alone = len(words) == 1
    return bool(uses) and all(
        before in _INFINITIVE_MARKERS and not (alone and before == "to" and after not in _OBJECT_LEADS)
        for before, after in uses
    )


@lru_cache(maxsize=TEXT_CACHE)
def _plain_verb(word: str) -> bool:
    from lemminflect import getAllLemmas

    return word in getAllLemmas(word).get("VERB", ())


def ambiguous(word: str) -> bool:
    """Whether a word alone could as well be a quality as a thing: an adjective or adverb that is also a noun."""
    kinds = word_kinds(word)
    return kinds is not None and bool(kinds & {"ADJ", "ADV"}) and not is_plural(word)


@lru_cache(maxsize=TEXT_CACHE)
def _is_past_form(word: str) -> bool:
    from lemminflect import getAllInflections, getAllLemmas

    lemmas = getAllLemmas(word.lower()).get("VERB", ())
    return any(
        word.lower() in getAllInflections(lemma, "VERB").get(tag, ()) for lemma in lemmas for tag in ("VBD", "VBN")
    )


@lru_cache(maxsize=TEXT_CACHE)
def word_kinds(word: str) -> frozenset[str] | None:
    """The parts of speech ``word`` can be (None for a word the lexicon does not know, or a name or an acronym:
    "IBM", "iPhone"; a capitalised word is looked up as the word it is at the start of a sentence).
    """
    from lemminflect import getAllLemmas

    if any(c.isupper() for c in word[1:]):
        return None
    kinds = getAllLemmas(word.lower())
    return frozenset(kinds) or None


def is_plural(phrase: str) -> bool:
    """Whether a noun phrase is plural, by its last word: a noun form that is not its own lemma ("years", "bees";
    not "data", "series", "news"), or an acronym's plural ("APIs").
    """
    words = phrase.split()
    if not words:
        return False
    head = words[-1]
    if len(head) > 2 and head.endswith("s") and head[:-1].isupper():
        return True
    from lemminflect import getAllLemmas

    nouns = getAllLemmas(head.lower()).get("NOUN", ())
    return bool(nouns) and head.lower() not in nouns


_DETERMINERS = _words("a an the this that these those its their his her our your my each every no any some")


def used_as_noun(word: str, text: str) -> bool:
    """Whether ``text`` uses ``word`` as a noun somewhere: after a determiner or a singular noun ("the binary",
    "drone brood") and before no noun it would modify (at a clause's end, or before a function word or a verb).
    "As long as", "is clear" and "the long run" are not such uses.
    """
    tokens = re.findall(r"[\w'’-]+|[^\w\s]", text)
    for k, token in enumerate(tokens):
        if token.lower() != word.lower() or k == 0:
            continue
        before, after = tokens[k - 1].lower(), tokens[k + 1].lower() if k + 1 < len(tokens) else "."
        led = before in _DETERMINERS or (
            before.isalpha()
            and before not in function_words()
            and not is_plural(before)
            and "NOUN" in (word_kinds(before) or ())
        )
        if not after[0].isalnum():
            ends = True
        elif after in function_words():
            ends = after not in ("as", "than", "enough")
        else:
            ends = word_kinds(after) == frozenset({"VERB"})
        if led and ends:
            return True
    return False


def mid_sentence_forms(word: str, text: str) -> Counter[str]:
    """How ``text`` writes ``word`` where its case is a choice: not at a sentence's or a list item's start."""
    found: Counter[str] = Counter()
    for match in re.finditer(rf"(?<![\w'’-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE):  # "Apple's" too
        if match.start() > 0 and not OPENS.search(text[max(0, match.start() - 6) : match.start()]):
            found[match[0]] += 1
    return found


def as_written(phrase: str, text: str) -> str:
    """``phrase`` cased as ``text`` writes it mid-sentence: whole when it is there ("Data Encryption Standard"),
    else word by word ("python development" → "Python development"); a first word the text writes only at a
    sentence's start loses its capital when it is an English word and the rest is in lower case ("Clear" →
    "clear"), and keeps it in a name ("Apple Computer").
    """
    if not phrase.split():
        return phrase
    forms = mid_sentence_forms(phrase, text)
    if forms:
        return forms.most_common(1)[0][0]
    words = [_word_as_written(w, text) for w in phrase.split()]
    first, rest = words[0], " ".join(words[1:])
    if first[:1].isupper() and first[1:].islower() and (not rest or rest.islower()) and word_kinds(first) is not None:
        first = first.lower() if not mid_sentence_forms(first, text) else first
    return " ".join([first, rest]).strip()


def _word_as_written(word: str, text: str) -> str:
    """One word as ``text`` mostly writes it mid-sentence ("Python" in "Python's development"), else as given."""
    forms = mid_sentence_forms(word, text)
    return forms.most_common(1)[0][0] if forms else word


# What precedes a sentence's, a list item's or a quotation's first word (a title, "Love is Hell", is cased as one).
OPENS = re.compile(r"(?:(?:^|[.!?:;]\s+|\n\s*(?:[-*]\s+)?)[“\"(]?|\s[“\"])$")


def keyphrases(text: str, top: int = 5) -> list[str]:
    """The most salient one- and two-word phrases of ``text``, best first: themes (:func:`is_theme`) only,
    found in its plain text (:func:`plain_text`), so no code, markup, address or credited name is one.
    """
    if top * 3 > RANKED:
        raise ValueError(f"keyphrases ranks {RANKED // 3} at most, not {top}")
    return list(_keyphrases(text or "", top))


@lru_cache(maxsize=TEXT_CACHE)
def _keyphrases(text: str, top: int) -> tuple[str, ...]:
    clean = plain_text(text)
    if not _WORD.search(clean):
        return ()
    names = person_names(text)
    found = _ranked(clean)[: top * 3]
    unique: list[str] = []
    for phrase in found:
        if (
            not _said(phrase, clean)
            or not is_theme(phrase, names)
            or _cut_off(phrase, clean)
            or _inside_a_name(phrase, clean)
            or used_as_verb(phrase, clean)
        ):
            continue
        if " " not in phrase and ambiguous(phrase) and not used_as_noun(phrase, clean):
            continue  # "long", "clear": a quality here, not a thing
        phrase = as_written(phrase, clean)
        if not any(phrase.lower() in u.lower() or u.lower() in phrase.lower() for u in unique):
            unique.append(phrase)
    return tuple(unique[:top])


_NAME_WORD = re.compile(r"[A-Z][\w-]*")


def _said(phrase: str, text: str) -> bool:
    """Whether ``text`` says ``phrase`` with its words in a row: YAKE joins the last word of a paragraph to the
    first of the next ("style Rules" of "Allman style" and "Rules for formatting code").
    """
    return next(_uses(phrase, text), None) is not None


def _inside_a_name(phrase: str, text: str) -> bool:
    """Whether ``phrase`` is only ever a piece of a longer capitalised name in ``text``: a capitalised word goes on
    or leads into it wherever it stands ("Task Force" of "Internet Engineering Task Force", "Toasternet Part" of
    "Toasternet Part I"), so it names nothing alone.
    """
    if not any(w[:1].isupper() for w in phrase.split()):
        return False
    found = False
    for match in _uses(phrase, text, ignore_case=False):
        found = True
        after = _NAME_WORD.match(text, match.end() + 1) if text[match.end() : match.end() + 1] == " " else None
        window = text[max(0, match.start() - 60) : match.start()]  # a word back, never the whole text again
        before = (window.split() or [""])[-1]
        led = bool(_NAME_WORD.fullmatch(before)) and before.lower() not in function_words()
        if not after and not (led and not OPENS.search(window[-6:])):
            return False
    return found


_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.)")


def _cut_off(phrase: str, text: str) -> bool:
    """Whether an ellipsis follows ``phrase`` wherever ``text`` says it: the words that ended it were left out
    ("removable hard …"), so it is the start of a name, not one.
    """
    ends = [m.end() for m in _uses(phrase, text)]
    return bool(ends) and all(_ELLIPSIS.match(text, end) for end in ends)


# -- untrusted text in Markdown --------------------------------------------------------

# ANSI sequences whole (CSI: colours, cursor moves; OSC: titles, hyperlinks), then every other control character but
# the tab and the line end, C1 included: a terminal printing the file obeys them.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Every ASCII punctuation character: CommonMark lets a backslash escape any of them, and together they start every
# inline construct (emphasis, code, links, images, HTML, entities, autolinks, GFM strikethrough, math, directives)
# and every block one (headings, lists, quotes, tables, rules).
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# GFM and linkify find bare URLs and e-mail addresses in the text after escapes are resolved, so no backslash stops
# them: an invisible word joiner between a scheme's slashes, after ``www`` and before ``@`` does.
_AUTOLINK = re.compile(r"(?<=/)(?=/)|(?i:(?<=www)(?=\.))|(?=@)")
JOINER = "\u2060"


def inert_markdown(text: str) -> str:
    """``text`` (a model's or a document's) as literal text inside Markdown: no link, image, HTML, heading or
    emphasis a viewer would act on, and no control character a terminal would; line ends and tabs are kept.
    A reader sees the text itself: ``![x](http://host/i.png)`` reads as written, fetching nothing.
    """
    return _PUNCTUATION.sub(r"\\\1", _AUTOLINK.sub(JOINER, _CONTROL.sub("", text)))


# What starts inline markup in a Markdown file (GFM): code, emphasis, strikethrough, links and images (their
# brackets), HTML and autolinks, table cells, math, and an entity (only an ``&`` that begins one).
_INLINE_MARKUP = re.compile(r"([\\`*_~\[\]<|$])|&(?=#?\w+;)")


def plain_markdown(text: str) -> str:
    """``text`` (a model's or a document's) inert inside a line of a Markdown file that people and models read as
    it stands: no link, image, HTML, code or emphasis a viewer would act on, no control character a terminal
    would, and only the characters that would start those escaped, so ``checkpoint: 50 steps; review`` reads as
    written. For text placed after something of the line's own (a list marker, a label): at a line's start a
    ``#`` or ``>`` would still begin a block. Streamlit, which reads ``:`` as its own markup, takes
    :func:`inert_markdown`.
    """
    return _INLINE_MARKUP.sub(lambda m: "\\" + (m.group(1) or "&"), _AUTOLINK.sub(JOINER, _CONTROL.sub("", text)))


def shorten(text: str, words: int = 40, *, chars: int | None = None) -> str:
    """The first ``words`` words of ``text``, with an ellipsis when something was cut.

    With ``chars``, also on one line and at most ``chars`` characters long, ellipsis included: cut at the last
    word that fits, never inside a word (unless the first word alone is longer).

    Example::

        shorten("the cat sat on the mat", 3)  # 'the cat sat …'
        shorten("what it means to be curious", chars=20)  # 'what it means to …'
    """
    tokens = text.split()
    if chars is None:
        return text.strip() if len(tokens) <= words else " ".join(tokens[:words]) + " …"
    line = " ".join(tokens[:words])
    if len(tokens) <= words and len(line) <= chars:
        return line
    room = max(chars - 2, 1)  # the ellipsis and the space before it
    if len(line) > room:
        head = line[: room + 1]  # one more: a word ending exactly at the limit is kept whole
        line = head.rsplit(" ", 1)[0] if " " in head else line[:room]
    return line.rstrip(" ,;:-–—") + " …"
