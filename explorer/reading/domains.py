"""Where a document's domain comes from when nobody names one: the folder it sits in, or its first tag.

People file notes in folders (``notes/git/``, ``notes/python/``) and tag them, and rarely write a ``domain:`` key;
the folder a note was put in is the subject its author gave it, so the top folder under the folder ingested is
its domain. A note in the ingested folder itself has no such folder; where notes use tags, the first tag stands
for it. What neither gives is left to topics found from the notes themselves (:mod:`explorer.reading.topics`).

Each domain keeps its origin (:data:`~explorer.records.DomainOrigin`): what a person or the file said is never
overwritten by what was guessed (:func:`stronger`).
"""

from __future__ import annotations

import os
from pathlib import PurePath

from explorer.reading.loaders import DOMAIN_MAX_CHARS, SourceText
from explorer.records import DOMAIN_ORIGINS, DomainOrigin


def folder_domain(path: str, root: str | None) -> str | None:
    """The top folder of ``path`` under ``root``, the folder named when ingesting; None for a file directly in
    ``root``, one not under it, or no root (a file named by itself).

    Example::

        folder_domain("notes/git/log.txt", "notes")  # "git"
        folder_domain("notes/git/howto/a.txt", "notes/")  # "git"
        folder_domain("notes/readme.txt", "notes")  # None
    """
    if not root:
        return None
    try:
        parts = PurePath(os.path.normpath(path)).relative_to(os.path.normpath(root)).parts
    except ValueError:
        return None
    return _name(parts[0]) if len(parts) > 1 else None


def tag_domain(tags: tuple[str, ...]) -> str | None:
    """The first tag, as a domain: ``#git`` and ``git`` are one."""
    return next((name for tag in tags if (name := _name(tag.lstrip("#")))), None)


def domain_of(source: SourceText) -> tuple[str | None, DomainOrigin | None]:
    """A source's domain and where it came from: given (front matter, ``--domain``, a JSON line's field), else its
    folder (:func:`folder_domain`), else its first tag; ``(None, None)`` when none says, for topics to find.

    Example::

        domain_of(SourceText("…", "log", "notes/git/log.txt", root="notes"))  # ("git", "folder")
    """
    if source.domain:
        return source.domain, "given"
    if folder := folder_domain(source.path, source.root):
        return folder, "folder"
    if tag := tag_domain(source.tags):
        return tag, "tag"
    return None, None


def stronger(origin: DomainOrigin | None, than: DomainOrigin | None) -> bool:
    """Whether a domain of ``origin`` replaces one of ``than``: given, folder, tag, topic, in that order; nothing
    replaces a given domain (a person chose it, or the file says it).
    """
    if origin is None:
        return False
    return than is None or DOMAIN_ORIGINS.index(origin) < DOMAIN_ORIGINS.index(than)


def _name(text: str) -> str | None:
    """A folder's or tag's name as a domain: blank is none, and a long one is cut to a domain's length."""
    name = " ".join(text.split())[:DOMAIN_MAX_CHARS].strip()
    return name or None
