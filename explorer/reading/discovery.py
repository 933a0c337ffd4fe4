"""Finding the files to read under the paths a person names, and saying why every other file is not read.

A folder is walked whole: each file of a type :data:`~explorer.reading.loaders.SUFFIXES` names is
:class:`Found` with the folder it was found under (its ``root``, the folder named); every other file is
:class:`Skipped` with a reason, so a report can account for each file. A hidden folder (``.obsidian/``,
``.git/``, ``.trash/`` …) and Logseq's backups are an editor's own files, not notes: each is one skip with the
number of files it holds, not hundreds of lines. A walk opens no file: a note Dream Explorer exported (the
engine's own finding, not a source) is told by its front matter, when a file is about to be read
(:func:`~explorer.reading.loaders.exported_note`); a file named itself is checked at once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from explorer.reading.loaders import SUFFIXES, LoadError, exported_note

NOT_READ = "not a document type Dream Explorer reads"
EXPORTED = "a note Dream Explorer exported (generated_by: dream-explorer), not a source"
# Folders of an editor's own copies of notes that are not hidden: Logseq keeps page backups and old versions here.
EDITOR_COPIES = {("logseq", "bak"), ("logseq", "version-files")}


@dataclass(frozen=True)
class Found:
    """A file to read, and the folder named that it was found under (None: the file was named itself)."""

    path: Path
    root: Path | None = None


@dataclass(frozen=True)
class Skipped:
    """A file (or a whole folder of ``files`` files) not read, and why: ``group`` is the reason without the
    particulars (a suffix, a folder's count), for a summary that groups them.
    """

    path: str
    reason: str
    group: str
    files: int = 1


Discovered = Found | Skipped | LoadError


def expand_paths(paths: Iterable[str | Path]) -> Iterator[Discovered]:
    """Every file under ``paths``: each to read, each passed over with its reason, and an error for a path that
    is not there or a folder with nothing to read.

    Example::

        for item in expand_paths(["notes/"]):
            match item:
                case Found(path, root): ...  # notes/a.txt under notes/
                case Skipped(path, reason): ...  # notes/cat.png: not a document type Dream Explorer reads (.png)
    """
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found = list(_walk(path))
            if not any(isinstance(item, Found) for item in found):
                yield LoadError(str(path), f"no {', '.join(SUFFIXES)} files in this folder")
            yield from found
        elif path.is_file():
            yield _named(path)
        else:
            yield LoadError(str(path), "no such file or folder")


def _named(path: Path) -> Found | LoadError:
    """A file named itself: read, or refused (a named file not read is a mistake to report, not a skip)."""
    if path.suffix.lower() not in SUFFIXES:
        return LoadError(str(path), f"unsupported file type {path.suffix or '(none)'}; use {', '.join(SUFFIXES)}")
    if exported_note(path):
        return LoadError(str(path), EXPORTED)
    return Found(path)


def walk_changes(root: Path, changed: Iterable[Path]) -> Iterator[Found | Skipped]:
    """What a watch of the folder ``root`` saw change, as a walk of it would find it: each changed file still there
    read or skipped, the files of a folder that appeared; a deleted path, or one in a hidden folder, gives nothing.

    Example::

        list(walk_changes(Path("notes"), [Path("notes/new.txt"), Path("notes/.obsidian/workspace.json")]))
        # [Found(Path("notes/new.txt"), Path("notes"))]
    """
    for path in sorted(set(changed)):
        if hidden_under(path, root):
            continue
        if path.is_dir():
            yield from _walk(path, root)
        elif path.is_file():
            yield classify(path, root)


def _walk(top: Path, root: Path | None = None) -> Iterator[Found | Skipped]:
    """The files under ``top`` (of the folder ``root``, by default ``top``) in a stable order, hidden folders and
    editors' copies passed over as one skip each.
    """
    root = root or top
    for folder, subfolders, files in os.walk(top):
        here = Path(folder)
        subfolders.sort()
        for name in list(subfolders):
            if _not_notes(here, name):
                subfolders.remove(name)
                yield _folder_skipped(here / name)
        for name in sorted(files):
            yield classify(here / name, root)


def _not_notes(parent: Path, name: str) -> bool:
    return name.startswith(".") or (parent.name, name) in EDITOR_COPIES


def _folder_skipped(folder: Path) -> Skipped:
    inside = f"in {folder.parent.name}/{folder.name}/" if not folder.name.startswith(".") else f"in {folder.name}/"
    count = sum(len(files) for _, _, files in os.walk(folder))
    return Skipped(f"{folder}{os.sep}", f"{inside} ({count} {'file' if count == 1 else 'files'})", inside, count)


def classify(path: Path, root: Path) -> Found | Skipped:
    """A file found in the folder ``root``: to read, or skipped with its reason."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        return Skipped(str(path), f"{NOT_READ} ({suffix or 'no suffix'})", NOT_READ)
    return Found(path, root)


def in_notes(path: Path, roots: Sequence[Path]) -> bool:
    """Whether a change at ``path`` is one a walk of the folders ``roots`` would see: what a watch of them acts on
    (an editor saves its workspace in its hidden folder all the time).
    """
    return any(not hidden_under(path, root) for root in roots)


def hidden_under(path: Path, root: Path) -> bool:
    """Whether ``path`` lies in a folder a walk of ``root`` passes over (a hidden folder, an editor's copies), or
    outside ``root``.
    """
    try:
        parts = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).parts
    except ValueError:
        return True
    return any(_not_notes(Path(*parts[:i]) if i else Path(root.name), part) for i, part in enumerate(parts[:-1]))
