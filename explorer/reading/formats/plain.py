"""Plain text that is no markup language: one untitled section, its rule lines (``=====``, ``-----``) dropped."""

from __future__ import annotations

from explorer.reading.formats import Reading, Section, is_rule, readable


def read_plain(text: str) -> Reading:
    """``text`` as one untitled section, without the lines that are only a rule (structure, not words)."""
    kept = "\n".join(line for line in text.splitlines() if not is_rule(line)).strip()
    return Reading(readable((Section(kept),), "the file"))
