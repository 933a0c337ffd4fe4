"""Writing notes into a folder, idempotently, and never touching a file the export did not write.

Which files are the export's own is read from each note's front matter (``generated_by: dream-explorer``, with
the finding's ``kind`` and ``id``), not from a manifest file kept beside them: the mark travels with the note, so
ingest recognises an exported note wherever a person moves it in the vault (``explorer.reading.loaders``), a
folder holds no hidden state that can fall out of step with its notes or be lost in a sync, and a person who wants
to keep a note as their own deletes its ``generated_by`` line, after which the export never changes or removes it.
Only the folder's own ``.md`` files are looked at, never its subfolders, and never through a symbolic link.

A note is written only when its text differs from the file's (so an export repeated writes nothing and leaves
every file's modification time alone), through a temporary file renamed over it, so a note is never half written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from explorer.errors import ExplorerError
from explorer.records.notes import FINDING_KINDS, FRONT_MATTER_MAX_CHARS, NotesExport, front_matter, is_exported


class NotesExportError(ExplorerError):
    """The notes cannot go where they were asked to: a file in the way, a folder that cannot be made or written."""


class IntoVault(NotesExportError):
    """The folder lies inside one the knowledge base was read from: notes written there land in the vault itself,
    which the person must ask for.
    """


def own_note(path: Path) -> bool:
    """Whether ``path`` is a note the export wrote: a Markdown file (not a link) whose front matter carries the
    export's mark with a finding's kind and id.
    """
    if path.suffix != ".md" or path.is_symlink() or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as file:
            head = file.read(FRONT_MATTER_MAX_CHARS)
    except (OSError, UnicodeDecodeError):
        return False
    meta = front_matter(head)
    if meta is None or not is_exported(meta):
        return False
    return meta.get("kind") in FINDING_KINDS and isinstance(meta.get("id"), str)


VAULT_MARKS = (".obsidian", "logseq")  # the folders Obsidian and Logseq keep at a vault's root


def vault_folder(directory: Path, document_paths: list[str]) -> Path | None:
    """The vault ``directory`` is, or lies inside, or None: the folder of an ingested document, or a folder above one
    that Obsidian or Logseq marks as a vault's root (so ``vault/findings`` is in the vault ``vault/bees/*.md`` came
    from). The documents' paths are as ingest stored them (a relative one read from the current folder).
    """
    here = directory.expanduser().resolve()
    folders = {Path(p).expanduser().resolve().parent for p in document_paths if p}
    roots = {above for folder in folders for above in (folder, *folder.parents) if _marked(above)}
    for folder in sorted(folders | roots):
        if here == folder or folder in here.parents:
            return folder
    return None


def _marked(folder: Path) -> bool:
    return any((folder / mark).is_dir() for mark in VAULT_MARKS)


def write_notes(directory: Path, notes: Mapping[str, str]) -> NotesExport:
    """Make ``directory`` hold exactly ``notes`` (file name → text) among the notes the export wrote: write each one
    whose text differs, leave the others alone, and remove the export's notes that are no longer asked for.

    A file of the same name that the export did not write is refused before anything is written
    (:class:`NotesExportError`), as is a ``directory`` that is a file or cannot be made.

    Example: ``write_notes(Path("vault/findings"), {note_name(finding): note_text(finding)})`` returns the counts
    (``written``, ``unchanged``, ``removed``).
    """
    directory = directory.expanduser()
    if directory.exists() and not directory.is_dir():
        raise NotesExportError(f"cannot write notes into {directory}: it is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        present = list(directory.iterdir())
    except OSError as exc:
        raise NotesExportError(f"cannot make or read the folder {directory}: {_reason(exc)}") from exc
    owned = {path.name: path for path in present if own_note(path)}
    for name in notes:
        path = directory / name
        if (path.exists() or path.is_symlink()) and name not in owned:
            raise NotesExportError(
                f"{path} is in the way: a file the export did not write (no generated_by: dream-explorer); "
                "move it, or export into another folder",
                subject=str(path),
            )
    written = unchanged = removed = 0
    for name, text in notes.items():
        path = directory / name
        data = text.encode("utf-8")
        if name in owned and _read(path) == data:
            unchanged += 1
            continue
        _write(path, data)
        written += 1
    for name, path in owned.items():
        if name not in notes:
            try:
                path.unlink()
            except OSError as exc:
                raise NotesExportError(f"cannot remove {path}: {_reason(exc)}") from exc
            removed += 1
    return NotesExport(
        written=written,
        unchanged=unchanged,
        removed=removed,
        directory=str(directory.resolve()),
        notes=[str(directory.resolve() / name) for name in sorted(notes)],
    )


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _write(path: Path, data: bytes) -> None:
    """``data`` into ``path`` through a temporary file beside it, renamed over it."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise NotesExportError(f"cannot write {path}: {_reason(exc)}") from exc


def _reason(exc: OSError) -> str:
    """What the operating system said, without its error number and path (the message names the path)."""
    return exc.strerror or str(exc)
