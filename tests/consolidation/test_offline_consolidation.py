"""The offline provider's consolidation answers come from their input: the strategies used, the experiences'
own sentences and shared phrases, the words two items share; and they read as prose (ended, no stutter).
"""

from __future__ import annotations

import json
import re
from collections import Counter

from explorer.consolidation.compression import pattern_fields
from explorer.consolidation.experiences import read_log
from explorer.consolidation.ladder import abstraction_fields
from explorer.offline import OfflineProvider
from explorer.offline.kit import OfflineKit
from explorer.prompts.consolidation import ABSTRACTION, CONTRADICTION, PATTERN, RELATION
from explorer.records.consolidation import LadderItem

from .conftest import SAMPLE_LOG, scored


def provider(embedder) -> OfflineProvider:
    return OfflineProvider(OfflineKit(embedder))


def stutters(text: str) -> list[str]:
    """Runs of four words said twice."""
    words = re.findall(r"[\w'-]+", text.lower())
    return [" ".join(g) for g, n in Counter(zip(*(words[i:] for i in range(4)), strict=False)).items() if n > 1]


def test_a_pattern_is_made_of_its_experiences(embedder) -> None:
    experiences = [e for e in read_log(SAMPLE_LOG.read_text(encoding="utf-8"), "s").experiences if e.strategy]
    naked = [e for e in experiences if e.strategy == "naked single"]
    answer = PATTERN.parse(provider(embedder).answer(PATTERN, pattern_fields(scored(naked))))
    assert answer is not None and answer.name == "Naked single" and answer.type == "technique"
    assert answer.actions == ("apply naked single",)
    assert any(answer.description.rstrip(".") in e.description for e in naked)  # one of their own sentences
    text = " ".join(e.description for e in naked).lower()
    assert all(c.lower() in text for c in answer.conditions)


def test_an_abstraction_states_what_its_items_share(embedder) -> None:
    items = [
        LadderItem(1, "Naked single", "A cell with a single candidate left takes that digit."),
        LadderItem(1, "Hidden single", "A digit with a single square left in a unit goes there."),
    ]
    answer = ABSTRACTION.parse(provider(embedder).answer(ABSTRACTION, abstraction_fields(items, 2)))
    assert answer is not None and answer.name
    assert answer.statement.startswith("Naked single and Hidden single share this: ")
    assert answer.statement.endswith(".") and not stutters(answer.statement)
    alone = ABSTRACTION.parse(provider(embedder).answer(ABSTRACTION, abstraction_fields(items[:1], 2)))
    assert alone is not None and alone.name == "Naked single"


def test_relationships_and_contradictions_are_read_from_the_words(embedder) -> None:
    def relation(first: str, second: str) -> str:
        return json.loads(provider(embedder).answer(RELATION, {"first": first, "second": second}))["relationship"]

    assert relation("place the digit in the cell with one candidate left", "place the digit in the cell") == (
        "refinement"
    )
    assert relation("place the digit in the cell", "the cell: place the digit") == "alternative"
    assert relation("first fill the pencil marks", "scan rows for hidden singles") == "prerequisite"
    assert relation("scan rows for hidden singles", "undo a wrong guess") == "complement"

    def contradicts(first: str, second: str) -> bool:
        answer = CONTRADICTION.parse(provider(embedder).answer(CONTRADICTION, {"first": first, "second": second}))
        assert answer is not None and answer.reason.endswith(".")
        return answer.contradicts

    assert contradicts("guess when stuck on a cell", "never guess when stuck on a cell")
    assert not contradicts("guess when stuck on a cell", "guess early when stuck on a cell")
    assert not contradicts("guess when stuck", "scan the boxes")
