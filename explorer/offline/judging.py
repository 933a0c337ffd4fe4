"""The offline judge of REM exploration: scores a seed's candidates from their content."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from explorer.offline import answers
from explorer.offline.kit import OfflineKit
from explorer.prompts import split_passages
from explorer.prompts.dreaming import NO_CONNECTION
from explorer.text import keyphrases, shorten, split_sentences


def _score(value: float) -> int:
    """A 1–5 score from a value in [0, 1]."""
    return int(1 + 4 * float(np.clip(value, 0.0, 1.0)) + 0.5)


def shared_phrases(text: str, others: list[str], top: int = 8) -> list[str]:
    """The keyphrases of ``text`` that the other texts also contain."""
    pool = " ".join(others).lower()
    return [p for p in keyphrases(text, top) if p.lower() in pool]


def _sentences(text: str) -> list[str]:
    return [s for s in split_sentences(text) if len(s.split()) >= 4] or [text]


@answers("rem_judge")
def rem_judge(fields: dict[str, Any], kit: OfflineKit) -> str:
    """Scores from embedding similarity: plausible when close, novel when not too close,
    useful when the two share keyphrases.
    """
    seed = str(fields["seed"])
    candidates = split_passages(str(fields["candidates"]))
    if not candidates:
        return NO_CONNECTION
    min_score = float(fields.get("min_score", 3.0))
    similarities = kit.similarity([seed], candidates)[0]
    judgements = []
    for number, (text, sim) in enumerate(zip(candidates, similarities, strict=True), 1):
        sim = float(sim)
        shared = shared_phrases(seed, [text])
        entry: dict[str, Any] = {
            "candidate": number,
            "novelty": _score((0.9 - sim) / 0.6),
            "plausibility": _score((sim - 0.05) / 0.55),
            "usefulness": _score(min(1.0, 0.35 * len(shared) + 0.5 * max(sim, 0.0))),
        }
        if (entry["novelty"] + entry["plausibility"] + entry["usefulness"]) / 3 >= min_score:
            i, j, _ = kit.closest_pair(_sentences(seed), _sentences(text))
            topic = ", ".join(shared[:3]) or ", ".join(keyphrases(text, 2)) or "a common theme"
            entry["connection"] = (
                f"Both bear on {topic}: “{shorten(_sentences(seed)[i], 20)}” "
                f"meets “{shorten(_sentences(text)[j], 20)}”."
            )
            entry["confidence"] = round(float(np.clip(sim, 0.0, 1.0)), 3)
        else:
            entry["connection"] = NO_CONNECTION
        judgements.append(entry)
    return json.dumps({"judgements": judgements})
