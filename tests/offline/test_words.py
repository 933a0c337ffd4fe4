"""The offline provider's words read as English: themes name things, templates agree in number with
the themes in them, and every word is cased as its source writes it. Each answer is checked by the checker
``bench.prose`` uses (explorer/testing/prose.py) on the kind of text it once wrote badly (notes on bees and git).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.offline import OfflineProvider
from explorer.offline.kit import OfflineKit, join
from explorer.prompts import REGISTRY, format_passages, load_prompts
from explorer.providers.embeddings import Embedder
from explorer.testing.prose import label_faults, prose_faults, template_words
from explorer.text import keyphrases

NOTES = Path(__file__).parents[1] / "data" / "notes"


def _note(path: str) -> str:
    return (NOTES / path).read_text(encoding="utf-8").split("---", 2)[2].strip()


@pytest.fixture(scope="module")
def provider(embedder: Embedder) -> OfflineProvider:
    load_prompts()
    return OfflineProvider(OfflineKit(embedder, seed=0))


def test_a_keyphrase_names_a_thing_as_its_text_writes_it() -> None:
    text = (
        "Clear the cache before a build. The build takes long when the cache is cold, and it reads as long as "
        "the index is clear. Inside the index, Python modules are read. The index lists Python modules; "
        "the cache holds compiled modules for Python, as long as their sources are read only once."
    )
    found = keyphrases(text, 8)
    assert found, text
    assert not [(p, f) for p in found if (f := label_faults(p, text))], found
    assert not {"Clear", "clear", "long", "read", "Inside"} & set(found)
    assert all("python" not in p for p in found) and any("Python" in p for p in found), found


def test_a_dwelling_agrees_with_its_themes_and_cases_its_domains_as_the_notes_do(provider: OfflineProvider) -> None:
    here, there = _note("bees/the-queen.md"), _note("bees/winter-stores.md")
    fields = {
        "current_concept": here,
        "current_domains": "beekeeping",
        "current_abstraction": "0.5",
        "next_concept": there + " Colonies that keep Python scripts count their Bees.",
        "next_domains": "python",
        "next_abstraction": "0.5",
        "recent_themes": "(none yet)",
        "active_resonances": "(none yet)",
    }
    answer = json.loads(provider.answer(REGISTRY["wander_dwell"], fields))
    source = "\n\n".join(fields.values())
    assert "Python" in answer["bridge"], answer["bridge"]
    for name in ("connection", "tension", "bridge", "surprise", "possibility"):
        assert prose_faults(answer[name], 80, source) == [], (
            name,
            answer[name],
            prose_faults(answer[name], 80, source),
        )
    assert [(t, f) for t in answer["themes"] if (f := label_faults(t, source))] == []


def test_an_analogy_and_a_crystal_agree_with_a_plural_theme(provider: OfflineProvider) -> None:
    queen, stores, reflog = _note("bees/the-queen.md"), _note("bees/winter-stores.md"), _note("git/reflog.md")
    fields = {
        "concept": "Workers raise emergency queens from young larvae. Unfertilised eggs become drones.",
        "domains": "beekeeping",
        "elsewhere": format_passages([reflog], ["software"]),
        "count": 1,
    }
    analogies = json.loads(provider.answer(REGISTRY["wander_analogy"], fields))["analogies"]
    assert analogies and all(prose_faults(a["rationale"], 30) == [] for a in analogies), analogies
    evidence = format_passages([queen, stores, reflog], ["beekeeping", "beekeeping", "software"])
    draft = {"themes": "eggs", "locus": queen, "domains": "beekeeping", "evidence": evidence}
    insight = json.loads(provider.answer(REGISTRY["wander_crystallize"], draft))["insight"]
    assert "ggs recur" in insight and prose_faults(insight, 100) == [], insight


def test_a_piece_of_a_longer_name_is_no_keyphrase() -> None:
    text = (
        "Microsoft has given CIFS to the Internet Engineering Task Force as a draft. No product uses ACAP yet, "
        "because the Internet Engineering Task Force has not approved the final specification."
    )
    found = keyphrases(text, 6)
    assert found and not {"Task Force", "Engineering Task", "Internet Engineering"} & set(found), found


def test_a_pattern_is_named_in_words(provider: OfflineProvider) -> None:
    fields = {
        "experiences": format_passages(["Walked to a far note.", "Walked to a far note again."]),
        "strategies": "distance_band ×3; semantic_neighbor ×1",
    }
    answer = json.loads(provider.answer(REGISTRY["consolidation_pattern"], fields))
    assert answer["name"] == "Distance band" and answer["actions"][0] == "apply distance band", answer


def test_an_entity_is_cased_as_its_notes_write_it(provider: OfflineProvider) -> None:
    fields = {
        "entity": "god",
        "learning": "Every man thinks that God is on his side.",
        "previous": format_passages(["The alarm clock that is louder than God's own belongs to the roommate."]),
    }
    answer = provider.answer(REGISTRY["entity_synthesis"], fields)
    assert answer.startswith("On God, ") and prose_faults(answer, 80, "\n\n".join(fields.values())) == [], answer


def test_two_notes_saying_one_sentence_are_quoted_once(provider: OfflineProvider) -> None:
    fields = {
        "new_info": "For full details, see the changelog. Python 3.9 adds a new parser.",
        "existing_knowledge": format_passages(["For full details, see the changelog. Python 3.8 adds assignment."]),
    }
    answer = provider.answer(REGISTRY["implant"], fields)
    assert "both say “For full details, see the changelog”" in answer and prose_faults(answer, 110) == [], answer


def test_a_label_another_one_holds_is_said_once() -> None:
    assert join(["array-oriented language", "language"]) == "array-oriented language"
    assert join(["Python", "python", "parser"]) == "python and parser"
    assert join(["stack frames", "heap"]) == "stack frames and heap"


def test_an_implant_cases_its_labels_as_the_known_notes_write_them(provider: OfflineProvider) -> None:
    fields = {
        "new_info": "Python modules load lazily from the import path. Python modules cache their bytecode on disk.",
        "existing_knowledge": format_passages(
            ["Bytecode of modules in Python is cached on disk, so the import path of Python is read once."]
        ),
    }
    answer = provider.answer(REGISTRY["implant"], fields)
    source = "\n\n".join(fields.values())
    assert "python" not in template_words(answer) and prose_faults(answer, 110, source) == [], answer


def test_a_verb_and_its_object_is_no_keyphrase() -> None:
    text = "The circuit is used to produce signals at high speed. Each pulse reaches working memory."
    found = keyphrases(text, 6)
    assert found and "produce signals" not in found and "working memory" in found, found


def test_a_keyphrase_never_joins_two_paragraphs() -> None:
    text = "… Allman style <programming> Rules for formatting code so that the end of a block is easy to find."
    found = keyphrases(text, 6)
    assert found and not [p for p in found if "style rules" in p.lower()], found


def test_an_implant_quotes_no_answer_and_no_code(provider: OfflineProvider) -> None:
    earlier = 'This passage on God touches on an earlier one on comic book: “"Do you think there\'s a God?" -- …”.'
    code = 'Old: print x, print("There are <", 2**32, "> possibilities!", sep="")'
    for known in (earlier, code):
        fields = {
            "new_info": "Every man thinks God is on his side. The rich and powerful know that he is.",
            "existing_knowledge": format_passages([known]),
        }
        answer = provider.answer(REGISTRY["implant"], fields)
        assert answer == "NOTHING" or prose_faults(answer, 110) == [], answer


def test_a_dwelling_cases_a_theme_as_either_locus_writes_it(provider: OfflineProvider) -> None:
    fields = {
        "current_concept": "Python's development never stops between releases. Fixes for Python arrive weekly.",
        "current_domains": "python",
        "current_abstraction": "0.5",
        "next_concept": "Python developers review each patch. Python is written in C by volunteers.",
        "next_domains": "python",
        "next_abstraction": "0.5",
        "recent_themes": "(none yet)",
        "active_resonances": "(none yet)",
    }
    answer = json.loads(provider.answer(REGISTRY["wander_dwell"], fields))
    assert "python" not in " ".join(answer["themes"]) and "python" not in template_words(answer["bridge"]), answer
