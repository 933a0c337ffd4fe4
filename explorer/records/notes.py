"""Records of the export to notes (``explorer export --notes``): a finding as a note is made of it, what an export
did, and the mark every exported note carries.

The mark lives here, in the bottom layer, because two areas that do not know each other read it: the export
(``explorer.notes``), to tell the notes it wrote from a person's own files in the same folder, and ingest
(``explorer.reading.loaders``), to never read an exported note back as a source note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import yaml

from explorer.records.json_form import JsonForm, JsonRecord

# Every exported note's front matter says ``generated_by: dream-explorer``.
MARK_FIELD = "generated_by"
GENERATED_BY = "dream-explorer"
FRONT_MATTER_MAX_CHARS = 65_536  # a front matter longer than this is not one the export wrote

FindingKind = Literal["crystal", "dream"]
FINDING_KINDS: tuple[FindingKind, ...] = ("crystal", "dream")


@dataclass(frozen=True)
class NoteFinding:
    """One finding as its note shows it: an approved crystal or a kept dream, with the names of its sources as
    the vault knows them (each becomes a ``[[wikilink]]``).

    ``title`` is a line to tell it by (a dream's own title, a crystal's first words); ``text`` is the model's, as
    it wrote it; ``session`` is a crystal's session (None for a dream); ``mechanism`` a dream's kind (``rem``,
    ``exploration``, ``fusion``; None for a crystal).
    """

    kind: FindingKind
    id: str
    title: str
    text: str
    status: str
    confidence: float
    sources: tuple[str, ...] = ()
    retired: tuple[tuple[str, str], ...] = ()  # (source name, "source changed" / "source removed"): a note gone
    reviewer: str | None = None
    model: str | None = None
    session: str | None = None
    created: str | None = None  # ISO 8601
    mechanism: str | None = None


@dataclass(frozen=True)
class NotesExport(JsonRecord):
    """What an export to notes did in its folder: notes written (new or changed), left as they were, and removed
    (notes it had written for findings no longer approved or kept); ``notes`` are the paths of every note that now
    stands for a finding.
    """

    written: int
    unchanged: int
    removed: int
    directory: str
    notes: list[str]

    json_form = JsonForm("NotesExportJson", "written", "unchanged", "removed", "directory", "notes")


NotesExportJson = Annotated[dict[str, Any], NotesExport.json_form]


def front_matter(text: str) -> dict[str, Any] | None:
    """The YAML front matter at the top of a note's ``text`` as a table, or None when it has none (or one that
    is not a table, or not YAML): read line by line, never past :data:`FRONT_MATTER_MAX_CHARS`.
    """
    text = text[:FRONT_MATTER_MAX_CHARS].removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for end, line in enumerate(lines[1:], 1):
        if line.rstrip() in ("---", "..."):
            try:
                table = yaml.safe_load("\n".join(lines[1:end]))
            except yaml.YAMLError:
                return None
            return table if isinstance(table, dict) else None
    return None


def is_exported(meta: dict[str, Any] | None) -> bool:
    """Whether a note's front matter carries the export's mark (``generated_by: dream-explorer``)."""
    return meta is not None and meta.get(MARK_FIELD) == GENERATED_BY
