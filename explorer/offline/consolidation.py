"""Offline answers for consolidation's prompts, each derived from the prompt's own input.

A pattern is named after the strategy its experiences used most (else their most shared keyphrase), described
by their most central sentence, conditioned on the keyphrases several of them share, and acts by the
strategies they applied. An abstraction is named after what its items share and states it with their most
central sentence. How two items relate and whether two patterns contradict each other are read from their
words: shared terms, one holding the other's, a negation on one side only.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from explorer.offline import answers
from explorer.offline.kit import OfflineKit, capitalise, join, topic
from explorer.prompts import split_passages
from explorer.text import keyphrases, shorten

# One "name ×n" per ";"-separated item, from the item's start: tried from every character, a name with no count
# after it was rescanned to its end from each (a 20 KB name took 12 s).
_STRATEGY = re.compile(r"(?:^|(?<=;))\s*+([^;]+?) ×(\d+)")
_WORD = re.compile(r"[a-z][a-z'-]{2,}")
_NEGATION = re.compile(r"\b(not|never|no|avoid|don't|do not|stop|without|instead of)\b", re.IGNORECASE)
_ORDER = re.compile(r"\b(before|first|prerequisite|requires?|then|after)\b", re.IGNORECASE)
STOP = frozenset(
    ["the", "and", "for", "with", "that", "this", "from", "into", "when", "what", "which", "their", "they", "them"]
    + ["have", "has", "are", "was", "were"]
)
NAME_WORDS = 6
SENTENCE_WORDS = 30


def _strategies(block: str) -> list[str]:
    """The strategies of the prompt's "a ×8; b ×2" line, most used first, in words ("distance_band" is the
    engine's name for the distance band).
    """
    return [name.strip().replace("_", " ") for name, _ in _STRATEGY.findall(block) if name.strip()]


def _shared(texts: list[str], top: int = 3) -> list[str]:
    """Keyphrases of the texts found in at least two of them (in one, when there is one text), most shared first."""
    lowered = [t.lower() for t in texts]
    counts: Counter[str] = Counter()
    spelled: dict[str, str] = {}
    for phrase in keyphrases(". ".join(texts), 12):
        key = phrase.lower()
        counts[key] = sum(key in t for t in lowered)
        spelled.setdefault(key, phrase)
    needed = 2 if len(texts) > 1 else 1
    return [spelled[k] for k, n in counts.most_common() if n >= needed][:top]


def _central(kit: OfflineKit, texts: list[str]) -> str:
    """The most central sentence of the texts, shortened, ended."""
    found = kit.central_sentences(texts, k=1) or [t for t in texts if t.strip()][:1]
    sentence = shorten(found[0].strip(), SENTENCE_WORDS) if found else ""
    return sentence if sentence.endswith((".", "…", "!", "?")) else sentence + "."


@answers("consolidation_pattern")
def pattern(fields: dict[str, Any], kit: OfflineKit) -> str:
    """The most used strategy as the name and action, shared keyphrases as conditions, the central sentence
    as the description.
    """
    passages = split_passages(str(fields["experiences"]))
    strategies = _strategies(str(fields["strategies"]))
    shared = _shared(passages)
    name = strategies[0] if strategies else (shared[0] if shared else topic(" ".join(passages)) or "recurring step")
    conditions = [s for s in shared if s.lower() not in name.lower()] or [topic(" ".join(passages)) or name]
    actions = [f"apply {s}" for s in strategies[:3]] or [_central(kit, passages[1:] or passages)]
    counts = Counter(m.group(1).strip() for m in _STRATEGY.finditer(str(fields["strategies"])))
    kind = "heuristic" if not strategies else "technique" if len(counts) == 1 else "strategy"
    return json.dumps(
        {
            "name": capitalise(shorten(name, NAME_WORDS)),
            "type": kind,
            "description": _central(kit, passages),
            "conditions": conditions[:3],
            "actions": actions,
        }
    )


@answers("consolidation_abstraction")
def abstraction(fields: dict[str, Any], kit: OfflineKit) -> str:
    """What the items share, named by the words all their names have (else the keyphrase their statements
    share) and stated by their central sentence; a single item keeps its name.
    """
    items = [i for i in split_passages(str(fields["items"])) if i.strip()]
    names = [i.split(": ", 1)[0] for i in items if ": " in i]
    statements = [i.split(": ", 1)[-1] for i in items]
    first = names[0].split() if names else []
    common = [w for w in first if all(w.lower() in n.lower().split() for n in names[1:])]
    if len(names) == 1 or common:
        name = " ".join(common) if common else names[0]
    else:
        shared = _shared(statements, 1)
        name = shared[0] if shared else join(names[:2]) or topic(" ".join(statements)) or "what these share"
    central = _central(kit, statements)
    if len(names) < 2:
        statement = central
    else:
        shown = [shorten(n, 4) for n in names[:3]] + ([f"{len(names) - 3} more"] if len(names) > 3 else [])
        statement = f"{capitalise(', '.join(shown[:-1]))} and {shown[-1]} share this: {central}"
    return json.dumps({"name": capitalise(shorten(name, NAME_WORDS)), "statement": statement})


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP}


@answers("consolidation_relation")
def relation(fields: dict[str, Any], kit: OfflineKit) -> str:
    """Refinement when A holds nearly all of B's words and more, alternative when they hold each other's,
    prerequisite when A speaks of order, complement otherwise; the reason names the shared terms.
    """
    first, second = str(fields["first"]), str(fields["second"])
    a, b = _words(first), _words(second)
    shared = sorted(a & b, key=lambda w: (-len(w), w))[:3]
    overlap = len(a & b) / max(1, min(len(a), len(b)))
    if overlap >= 0.8 and len(a) > len(b):
        kind = "refinement"
    elif overlap >= 0.8:
        kind = "alternative"
    elif _ORDER.search(first) and not _ORDER.search(second):
        kind = "prerequisite"
    else:
        kind = "complement"
    terms = join(shared) if shared else "no terms"
    return json.dumps({"relationship": kind, "reason": f"They share {terms}; {overlap:.0%} of the shorter's words."})


@answers("consolidation_contradiction")
def contradiction(fields: dict[str, Any], kit: OfflineKit) -> str:
    """A contradiction when they share terms and only one of them negates: one does what the other refuses."""
    first, second = str(fields["first"]), str(fields["second"])
    shared = sorted(_words(first) & _words(second), key=lambda w: (-len(w), w))[:2]
    negated = bool(_NEGATION.search(first)) != bool(_NEGATION.search(second))
    if shared and negated:
        reason = f"Both concern {join(shared)}, but only one of them says not to."
    elif shared:
        reason = f"Both concern {join(shared)} and neither refuses what the other does."
    else:
        reason = "They share no terms to disagree about."
    return json.dumps({"contradicts": bool(shared and negated), "reason": reason})
