"""Model answers are validated before the engine uses them: hostile answers are refused with a reason, the
tolerance real models need (fences, chatter, string numbers, keys in any case) is kept.
"""

from __future__ import annotations

import json

import pytest

from explorer.prompts import REGISTRY, AnswerRejected, answer_caps, check_answer_caps, load_prompts
from explorer.prompts.answers import prose
from explorer.prompts.dreaming import FUSION, REM_JUDGE, REM_QUESTION
from explorer.prompts.reading import ENTITIES, ENTITY_SYNTHESIS, IMPLANT
from explorer.prompts.wander import ANALOGY, CRYSTALLIZE, DWELLING, VALIDATE

DWELL = {
    "connection": "Both decide when something is no longer needed.",
    "tension": "One reclaims at once, the other waits.",
    "bridge": "Lifetimes of objects become lifetimes of ideas.",
    "surprise": "Forgetting is a feature.",
    "possibility": "Treat stale knowledge as unreachable.",
    "themes": ["memory", "garbage collection"],
    "interestingness": 0.8,
    "actionability": 0.6,
}
CRYSTAL = {"insight": "What nothing refers to any more can be reclaimed.", "confidence": 0.8, "actionability": 0.5}
JUDGEMENT = {
    "candidate": 1,
    "novelty": 4,
    "plausibility": 3,
    "usefulness": 4,
    "connection": "both cache",
    "confidence": 0.7,
}
HUGE = "word " * 40_960  # 200 KB
PARAGRAPH = "The new passage extends what we know: print becomes a function, as the future import foretold."


def dumps(base: dict, **changes: object) -> str:
    return json.dumps({**base, **changes})


def judge(**changes: object) -> str:
    return json.dumps({"judgements": [{**JUDGEMENT, **changes}]})


# (prompt, answer, words the reason must contain)
REFUSED = [
    # a 0–1 score: booleans, words, other scales, null
    (DWELLING, dumps(DWELL, interestingness=True), "interestingness: a number is needed, not a boolean"),
    (DWELLING, dumps(DWELL, interestingness="high"), "interestingness: a number is needed, not the text 'high'"),
    (DWELLING, dumps(DWELL, actionability=7), "actionability: 7 is far outside the 0–1 scale"),
    (DWELLING, dumps(DWELL, actionability=70), "far outside"),
    (DWELLING, dumps(DWELL, actionability=-3), "far outside"),
    (DWELLING, dumps(DWELL, interestingness=None), "interestingness: a number is needed, not null"),
    (DWELLING, dumps(DWELL, interestingness=[0.5]), "interestingness: a number is needed, not a list"),
    (DWELLING, dumps(DWELL, interestingness=float("nan")), "a finite number"),  # Python's json reads NaN
    (DWELLING, dumps(DWELL, interestingness="nan"), "a finite number"),
    # labels: a list or an object is never a theme, nor a sentence
    (DWELLING, dumps(DWELL, themes=[["memory", "gc"]]), "themes: item 0: a short name is needed, not a list"),
    (DWELLING, dumps(DWELL, themes={"a": 1}), "themes: a list of short names is needed, not an object"),
    (DWELLING, dumps(DWELL, themes=["x" * 200]), "themes: item 0: a short name is needed, not 200 characters"),
    (DWELLING, dumps(DWELL, themes=[True]), "a boolean"),
    (DWELLING, dumps(DWELL, themes=[]), "themes: none given"),
    # text: a reflection is a string, of sentences
    (DWELLING, dumps(DWELL, connection={"a": "b"}), "connection: text is needed, not an object"),
    (DWELLING, dumps(DWELL, connection="x" * 1200), "connection: 1200 characters, over the 400-character limit"),
    (DWELLING, dumps(DWELL, connection="", tension="", bridge=""), "only 2 of the five reflections"),
    # junk where JSON was asked
    (DWELLING, "# Reflection\n\n**Connection**: both manage memory.", "no JSON in the answer (it begins '# Reflection"),
    (DWELLING, "<html><body><p>Both manage memory.</p></body></html>", "no JSON in the answer (it begins '<html>"),
    (DWELLING, "[1, 2]", "a JSON object is needed, not a list"),
    (DWELLING, "", "empty answer"),
    (DWELLING, HUGE, "answer of 204800 characters is over the 5400-character cap for wander_dwell"),
    (DWELLING, "[" * 3000, "no JSON"),  # deeper than Python recurses: still just refused
    # analogies: a list domain is no domain
    (ANALOGY, '{"analogies": [{"concept": "forgetting", "domain": ["a", "b"]}]}', "analogies.0: domain: a short"),
    (ANALOGY, '{"analogies": [{"concept": "forgetting", "domain": {"x": 1}}]}', "not an object"),
    (ANALOGY, '{"analogies": [{"concept": ["forgetting"]}]}', "analogies.0: concept: text is needed, not a list"),
    (ANALOGY, '{"analogies": [1, 2]}', "analogies.0: an object is needed, not 1 (and 1 more)"),
    (ANALOGY, '{"analogies": "forgetting"}', "analogies: a list is needed"),
    (ANALOGY, "Sure! Forgetting is like garbage collection.", "no JSON"),
    # crystallization
    (CRYSTALLIZE, dumps(CRYSTAL, confidence=True), "confidence: a number is needed, not a boolean"),
    (CRYSTALLIZE, dumps(CRYSTAL, confidence=8), "confidence: 8 is far outside"),
    (CRYSTALLIZE, dumps(CRYSTAL, domains=[["python", "psychology"]]), "domains: item 0: a short name"),
    (CRYSTALLIZE, dumps(CRYSTAL, insight="short"), "insight: 5 characters, under the 10 needed"),
    (CRYSTALLIZE, dumps(CRYSTAL, insight=42), "insight: text is needed, not 42"),
    (CRYSTALLIZE, json.dumps({"insight": CRYSTAL["insight"]}), "confidence: missing (and 1 more)"),
    # validation: a verdict is a real boolean
    (VALIDATE, '{"valid": "yes", "confidence": 0.9}', "valid: input should be a valid boolean, not 'yes'"),
    (VALIDATE, '{"valid": 1}', "valid: input should be a valid boolean, not 1"),
    (VALIDATE, '{"valid": true, "confidence": "very"}', "confidence: a number is needed, not the text 'very'"),
    (VALIDATE, '{"confidence": 0.9}', "valid: missing"),
    # the judge: 1–5 scores
    (REM_JUDGE, judge(novelty=True), "judgements.0: novelty: a number is needed, not a boolean"),
    (REM_JUDGE, judge(novelty="high"), "novelty: a number is needed, not the text 'high'"),
    (REM_JUDGE, judge(novelty=80), "novelty: 80 is far outside the 1–5 scale"),
    (REM_JUDGE, judge(confidence=True), "confidence: a number is needed, not a boolean"),
    (REM_JUDGE, judge(candidate=True), "candidate: a number is needed, not a boolean"),
    (REM_JUDGE, judge(candidate=1.5), "candidate: a whole number from 1 is needed"),
    (REM_JUDGE, judge(connection=["a", "b"]), "connection: text is needed, not a list"),
    (REM_JUDGE, '{"judgements": []}', "judgements: none given"),
    (REM_JUDGE, "```html\n<table><tr><td>4</td></tr></table>\n```", "no JSON"),
    # fusion
    (FUSION, '{"summary": ["Lives in Dublin."]}', "summary: text is needed, not a list"),
    (FUSION, '{"summary": ""}', "summary: empty"),
    (FUSION, '{"text": "Lives in Dublin."}', "summary: missing"),
    (FUSION, "Lives in Dublin.", "no JSON in the answer"),
    # prose: JSON, code, HTML, nothing at all, or far too much
    (IMPLANT, HUGE, "answer of 204800 characters is over the 1500-character cap for implant"),
    (IMPLANT, '{"synthesis": "print is a function"}', "JSON where a paragraph was asked"),
    (IMPLANT, '```json\n{"synthesis": "print is a function"}\n```', "a code block where a paragraph was asked"),
    (IMPLANT, "Here it is:\n```python\nprint('x')\n```", "a code block"),
    (IMPLANT, '{"broken', "JSON where a paragraph was asked"),
    (IMPLANT, "<div>The new passage extends it.</div>", "HTML where a paragraph was asked"),
    (IMPLANT, "   ", "empty answer"),
    (IMPLANT, '""', "empty answer"),
    (IMPLANT, "Sure!", "'Sure!' is too short to be a paragraph"),
    (ENTITY_SYNTHESIS, '["print", "function"]', "JSON where an answer of 1-3 sentences was asked"),
    (ENTITY_SYNTHESIS, "x" * 1300, "over the 1200-character cap for entity_synthesis"),
    (REM_QUESTION, '{"question": "What links them?"}', "JSON where a question was asked"),
    (REM_QUESTION, "Why?\nHow?", "too short to be a question"),
    (REM_QUESTION, "Q " * 400, "over the 600-character cap"),
    (REGISTRY["rem_synthesis"], "<html><body>The passages converge.</body></html>", "HTML where a synthesis"),
    (REGISTRY["dream_relation"], '{"relation": "confirms"}', "JSON where a paragraph was asked"),
    # entities: JSON, as asked; the example's placeholder echoed is no entity
    (ENTITIES, "- Python: a readable language", "no JSON in the answer (it begins '- Python: a readable"),
    (ENTITIES, '{"entities": "Python"}', "entities: a list is needed"),
    (ENTITIES, '{"entities": [{"entity": "Entity", "learning": "x"}]}', "entities.0: entity: a name is needed"),
    (ENTITIES, '{"entities": [{"entity": "Python"}]}', "entities.0: learning: missing"),
    (ENTITIES, json.dumps({"entities": [{"entity": "Python", "learning": "x" * 301}]}), "over the 300-character"),
]


@pytest.mark.parametrize("prompt,text,reason", REFUSED, ids=[f"{p.kind}-{i}" for i, (p, _, _) in enumerate(REFUSED)])
def test_a_hostile_answer_is_refused_with_its_reason(prompt, text, reason) -> None:
    value, why = prompt.read(text)
    assert value is None and why is not None
    assert reason in why
    assert prompt.parse(text) is None  # the lenient face agrees


@pytest.mark.parametrize(
    "prompt,text,check",
    [
        (
            DWELLING,
            "Here you go:\n```json\n" + dumps(DWELL) + "\n```\nHope it helps!",
            lambda d: d.themes[0] == "memory",
        ),
        (DWELLING, dumps(DWELL, interestingness="0.7", actionability=" 1 "), lambda d: d.interestingness == 0.7),
        (DWELLING, json.dumps({k.upper(): v for k, v in DWELL.items()}), lambda d: d.actionability == 0.6),
        (
            DWELLING,
            dumps(DWELL, interestingness=1.02, actionability=-0.05),
            lambda d: (d.interestingness, d.actionability) == (1.0, 0.0),
        ),
        (DWELLING, dumps(DWELL, themes="memory, Memory, gc."), lambda d: d.themes == ("memory", "gc")),
        (
            DWELLING,
            dumps(DWELL, themes=["a", 2008, "", "b", "c", "d", "e"]),
            lambda d: d.themes == ("a", "2008", "b", "c", "d"),
        ),
        (DWELLING, dumps(DWELL, surprise=None, extra={"ignored": True}), lambda d: d.surprise == ""),
        (
            ANALOGY,
            '{"Analogies": [{"Concept": "forgetting", "Domain": "psychology"}]}',
            lambda a: a[0].domain == "psychology",
        ),
        (ANALOGY, '[{"concept": "forgetting", "domain": null}]', lambda a: a[0].domain is None),
        (ANALOGY, '{"analogies": [{"concept": "forgetting", "domain": 1984}]}', lambda a: a[0].domain == "1984"),
        (
            ANALOGY,
            '{"analogies": [{"concept": "ok concept"}, {"concept": "x", "domain": ["a"]}]}',
            lambda a: len(a) == 1,
        ),
        (ANALOGY, '{"analogies": []}', lambda a: a == []),
        (
            CRYSTALLIZE,
            dumps(CRYSTAL, confidence="0.65", domains=["python", "Python", "psychology"]),
            lambda c: c.domains == ("python", "psychology") and c.confidence == 0.65,
        ),
        (
            VALIDATE,
            '```json\n{"VALID": false, "Notes": "thin evidence"}\n```',
            lambda v: (v.valid, v.confidence, v.notes) == (False, 0.5, "thin evidence"),
        ),
        (
            REM_JUDGE,
            judge(novelty="4", confidence="0.7", candidate="2"),
            lambda j: (j.judgements[0].novelty, j.judgements[0].candidate) == (4.0, 2),
        ),
        (
            REM_JUDGE,
            judge(novelty=0, usefulness=9),
            lambda j: (j.judgements[0].novelty, j.judgements[0].usefulness) == (1.0, 5.0),
        ),
        (REM_JUDGE, "NO_CONNECTION", lambda j: j.no_connection),
        (FUSION, 'Here is the memory: {"Summary": " Lives in Dublin. "}', lambda s: s == "Lives in Dublin."),
        # a line break written as it is inside a string, as llama-cpp-python's grammar lets a model write it
        (FUSION, '{"summary": "Lives in Dublin.\n\tWorks there."}', lambda s: s == "Lives in Dublin.\n\tWorks there."),
        (IMPLANT, PARAGRAPH, lambda s: s == PARAGRAPH),
        (IMPLANT, "[1] and [2] agree: print is a function now.", lambda s: s.startswith("[1]")),
        (IMPLANT, "Nothing in the new passage contradicts what we know.", lambda s: s.startswith("Nothing in")),
        (IMPLANT, "It quotes the docs: “Old: print x ``` New: print(x)” beside the known one.", lambda s: "```" in s),
        (
            ENTITIES,
            'Here:\n```json\n{"Entities": [{"entity": " Python ", "learning": "a readable language"}, '
            '{"entity": "Guido", "learning": "created it"}, {"entity": "", "learning": "nameless"}]}\n```',
            lambda e: (
                [(x.entity, x.learning) for x in e] == [("Python", "a readable language"), ("Guido", "created it")]
            ),
        ),
        (ENTITIES, '{"entities": []}', lambda e: e == []),
        (
            ENTITIES,
            json.dumps([{"entity": f"E{n}", "learning": "named"} for n in range(7)]),
            lambda e: [x.entity for x in e] == ["E0", "E1", "E2", "E3"],
        ),
        (
            REM_QUESTION,
            "**Question:** What links memory and forgetting?",
            lambda q: q == "What links memory and forgetting?",
        ),
    ],
)
def test_a_good_answer_is_accepted(prompt, text, check) -> None:
    value, why = prompt.read(text)
    assert why is None and value is not None
    assert check(value)


@pytest.mark.parametrize(
    "text",
    [
        "NOTHING",
        "nothing.",
        "  NOTHING  ",
        "**NOTHING**",
        '"NOTHING"',
        "NOTHING.",
        "NOTHING - the new passage repeats the known one.",
        "The new passage restates the second known one.\n\nNOTHING",
        "Nothing new.",
    ],
)
def test_nothing_in_its_many_spellings_is_nothing(text) -> None:
    assert IMPLANT.read(text) == ("", None)
    assert REGISTRY["dream_relation"].read(text) == ("", None)


def test_answer_caps_default_from_max_tokens_and_can_be_set() -> None:
    assert IMPLANT.answer_cap == IMPLANT.max_tokens * 6
    caps = {"implant": 200}
    check_answer_caps(caps)
    assert answer_caps(caps)["implant"] == 200 and answer_caps(caps)["fusion"] == FUSION.max_tokens * 6
    value, why = IMPLANT.read(PARAGRAPH * 3, cap=200)
    assert (
        value is None and why == f"answer of {len(PARAGRAPH * 3)} characters is over the 200-character cap for implant"
    )
    assert IMPLANT.read(PARAGRAPH * 3)[0]  # the default cap


@pytest.mark.parametrize(
    "caps,message",
    [
        ({"implnt": 100}, "no prompt kind 'implnt' to cap"),
        ({"implant": 0}, "must be a positive number of characters, not 0"),
        ({"implant": True}, "not True"),
        ({"implant": "100"}, "not '100'"),
    ],
)
def test_bad_answer_caps_are_refused_and_change_nothing(caps, message) -> None:
    with pytest.raises(ValueError, match=message):
        check_answer_caps(caps)


def test_every_prompt_reads_through_a_reason_giving_reader() -> None:
    for kind, prompt in load_prompts().items():
        value, why = prompt.read("")
        assert value is None and why == "empty answer", kind
        assert prompt.read("x" * (prompt.answer_cap + 1))[1].startswith("answer of"), kind


def test_prose_raises_the_reason() -> None:
    with pytest.raises(AnswerRejected) as caught:
        prose('{"a": 1}')
    assert caught.value.reason.startswith("JSON where a paragraph was asked")
