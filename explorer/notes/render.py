"""A finding as a Markdown note (pure: no store, no files): its file name and its text.

The file name is derived from the finding alone, so it is the same at every export: its kind, the first eight
digits of its id (the short id the pages show) and a slug of its title, e.g. ``crystal-1a2b3c4d-hashing-and-bees.md``.

The text is YAML front matter (written by ``yaml.safe_dump``, so no model text can end it or add a field), the
finding's text as the model wrote it (nothing escaped: a note is Markdown the person reads, and the front matter is
the only structure it could break), then a "Sources" list with a ``[[wikilink]]`` to each source note.

Example::

    finding = NoteFinding("crystal", crystal.id, "Hashing and bees", crystal.insight, "approved", 0.8, ("Bees",))
    note_name(finding)  # the name above
    note_text(finding).splitlines()[:3]  # ['---', 'generated_by: dream-explorer', 'kind: crystal']
"""

from __future__ import annotations

import unicodedata
from typing import Any

import yaml

from explorer.records.notes import GENERATED_BY, MARK_FIELD, NoteFinding

SHORT_ID = 8  # the digits of an id the pages show
SLUG_WORDS = 6
SLUG_MAX_CHARS = 48
# What a wikilink's target may not hold: Obsidian reads these as the link's end, its alias, a heading or a block.
LINK_BREAKERS = frozenset("[]|#^")


def slug(text: str) -> str:
    """``text`` as a file name's words: ASCII letters and digits in lower case, joined by hyphens, its first
    :data:`SLUG_WORDS` words and at most :data:`SLUG_MAX_CHARS` characters ("" when it has no such letters).
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words = "".join(c if c.isalnum() else " " for c in ascii_text).split()[:SLUG_WORDS]
    kept: list[str] = []
    for word in words:
        if len("-".join([*kept, word])) > SLUG_MAX_CHARS:
            break
        kept.append(word)
    return "-".join(kept) or (words[0][:SLUG_MAX_CHARS] if words else "")


def note_name(finding: NoteFinding, digits: int = SHORT_ID) -> str:
    """The note's file name: kind, the first ``digits`` of its id and a slug of its title."""
    words = slug(finding.title or finding.text)
    return "-".join(part for part in (finding.kind, finding.id[:digits], words) if part) + ".md"


def note_names(findings: list[NoteFinding]) -> list[str]:
    """Each finding's :func:`note_name`; two that would share one (the same kind, first digits and words) are
    named by their whole ids instead, so neither note overwrites the other.
    """
    names = [note_name(f) for f in findings]
    shared = {name for name in names if names.count(name) > 1}
    return [note_name(f, len(f.id)) if name in shared else name for f, name in zip(findings, names, strict=True)]


def wikilink(name: str) -> str | None:
    """``[[name]]`` with what would end or redirect the link taken out, on one line; None for a name left empty."""
    target = " ".join("".join(" " if c in LINK_BREAKERS else c for c in name).split())
    return f"[[{target}]]" if target else None


def front_matter_fields(finding: NoteFinding) -> dict[str, Any]:
    """The note's front matter: the export's mark, then what the finding is and who stands behind it."""
    fields: dict[str, Any] = {
        MARK_FIELD: GENERATED_BY,
        "kind": finding.kind,
        "id": finding.id,
        "title": finding.title,
        "status": finding.status,
        "reviewer": finding.reviewer,
        "model": finding.model,
    }
    if finding.kind == "crystal":
        fields["session"] = finding.session
    else:
        fields["mechanism"] = finding.mechanism
    fields["created"] = finding.created
    fields["confidence"] = round(float(finding.confidence), 4)
    return fields


def note_text(finding: NoteFinding) -> str:
    """The whole note: front matter, the finding's text, and its sources as wikilinks."""
    head = yaml.safe_dump(
        front_matter_fields(finding), sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000
    )
    body = "\n".join(line.rstrip() for line in finding.text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    marks = dict(finding.retired)
    links: dict[str, str | None] = {}
    for name in finding.sources:
        if (link := wikilink(name)) is not None and link not in links:
            links[link] = marks.get(name)
    sources = "\n".join(f"- {link}" + (f" ({mark})" if mark else "") for link, mark in links.items())
    sources = sources or "- (none recorded)"
    return f"---\n{head}---\n\n{body.strip()}\n\n## Sources\n\n{sources}\n"
