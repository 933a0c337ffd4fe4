"""Keeping the knowledge base in step with the files it was read from: what each file became in one ingest.

Documents are known by content hash (a text is read once) and, through ``source_files``, by the file that held
them. Reading a folder again, each file is one of:

- ``unchanged``: its size and modification time are as stored (it is not opened), or its texts are those it held;
- ``changed``: its texts differ from those it held: the new ones are read, the old ones retired ("changed");
- ``added``: a file not read before with a text new to the knowledge base;
- ``removed``: gone from a folder named in this ingest: its documents are retired ("removed");
- ``skipped``: not read (a type Dream Explorer does not read, a hidden folder …), or every text of it was read
  already from another file (a copy, a move): that document stays, the name is kept as an alias;
- ``failed``: it could not be read or stored: what it held before stays as it was.

A document is retired only when no file still holds it, so a copy's text survives its original's deletion. These
are pure functions of what the store held before and after the reading; :mod:`explorer.reading.ingest` reads and
writes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from explorer.inputs import storable
from explorer.records import Document, SourceFile

FileStatus = Literal["added", "changed", "unchanged", "removed", "skipped", "failed"]
FILE_STATUSES: tuple[FileStatus, ...] = ("added", "changed", "unchanged", "removed", "skipped", "failed")
READ_ALREADY = "the same text as a document read already"
SHOWN_DETAILS = 4  # particulars listed in a summary's group (suffixes, paths), the rest an ellipsis


@dataclass(frozen=True)
class FileOutcome:
    """What one ingest did with one file (or one skipped folder of ``files`` files); ``group`` is the reason
    without its particulars (which suffix, how many files), so a summary can count alike reasons together.
    """

    path: str
    status: FileStatus
    reason: str | None = None
    group: str | None = None
    files: int = 1

    def to_json(self) -> dict[str, str | None]:
        """The entry of ``files`` in ``explorer ingest --json``."""
        return {"path": storable(self.path), "status": self.status, "reason": self.reason and storable(self.reason)}


@dataclass(frozen=True)
class OpenedFile:
    """A file opened in this ingest: its stored key (absolute path), the path as named, what ``stat`` said before
    it was read, the content hashes of its texts in order, and the errors reading it gave.
    """

    key: str
    shown: str
    size: int
    mtime_ns: int
    hashes: tuple[str, ...]
    errors: tuple[str, ...] = ()


@dataclass
class Settled:
    """What the store must do after a reading, and how the report's counts move: documents of changed files
    are ``changed`` rather than ``added``; texts a file already held are ``unchanged`` rather than ``skipped``.
    """

    outcomes: list[FileOutcome] = field(default_factory=list)
    keep: list[SourceFile] = field(default_factory=list)
    forget: list[str] = field(default_factory=list)
    retire_changed: set[str] = field(default_factory=set)
    retire_removed: set[str] = field(default_factory=set)
    changed: int = 0  # new documents read from files read before
    unchanged: int = 0  # texts met again in the file that held them


def file_key(path: str | os.PathLike[str]) -> str:
    """The key a file is stored under: its absolute path, so a folder named from anywhere finds it (as a store can
    hold it: a byte of a name that is not UTF-8 becomes U+FFFD).
    """
    return storable(os.path.abspath(os.path.expanduser(path)))


def settle(
    opened: Sequence[OpenedFile],
    gone: Sequence[str],
    stored: Mapping[str, SourceFile],
    before: Mapping[str, Document],
    after: Mapping[str, Document],
) -> Settled:
    """The outcome of each file ``opened`` and each ``gone`` (keys of ``stored``), given the documents by content
    hash ``before`` and ``after`` the reading.

    Example::

        done = settle([OpenedFile("/n/a.txt", "n/a.txt", 10, 1, ("h2",))], [], {"/n/a.txt": a_was_h1}, before, after)
        done.outcomes[0].status  # 'changed'; done.retire_changed == {id of h1's document}
    """
    done = Settled()
    claimed: dict[str, str] = {}  # content hash → the file (as named) this ingest found it new in
    for file in opened:
        _settle_opened(file, stored.get(file.key), before, after, claimed, done)
    done.forget = list(gone)
    kept = {row.path for row in done.keep}
    untouched = [row for key, row in stored.items() if key not in kept and key not in gone]
    held = {i for row in [*done.keep, *untouched] for i in row.document_ids}  # what some file still holds
    done.retire_changed -= held
    for key in gone:
        row = stored[key]
        retired = set(row.document_ids) - held - done.retire_changed
        done.retire_removed |= retired
        done.outcomes.append(FileOutcome(key, "removed"))
    return done


def _settle_opened(
    file: OpenedFile,
    row: SourceFile | None,
    before: Mapping[str, Document],
    after: Mapping[str, Document],
    claimed: dict[str, str],
    done: Settled,
) -> None:
    """Settle one file opened: what it holds now (``keep``), what it held and no longer does (retired if no other
    file holds it), its outcome and how its texts are counted; ``claimed`` tells a text new to this ingest from its
    copies in later files.
    """
    stored = [after[h] for h in file.hashes if h in after and after[h].retired_because is None]
    if not file.hashes or len(stored) < len(file.hashes):  # a bad line of many is an error, the file is read
        reason = "; ".join(file.errors) or "could not be stored"
        done.outcomes.append(FileOutcome(file.shown, "failed", reason, reason))
        return
    ids = tuple(dict.fromkeys(document.id for document in stored))
    own = set(row.document_ids) if row else {d.id for d in stored if d.path and file_key(d.path) == file.key}
    new = []
    for digest in dict.fromkeys(file.hashes):
        was = before.get(digest)
        if (was is None or was.retired_because is not None) and digest not in claimed:
            claimed[digest] = file.shown
            new.append(digest)
        elif was is not None and was.id in own:
            done.unchanged += 1
    done.keep.append(SourceFile(file.key, file.size, file.mtime_ns, ids))
    if row is not None:
        done.retire_changed |= set(row.document_ids) - set(ids)
        if set(ids) == set(row.document_ids):
            done.outcomes.append(FileOutcome(file.shown, "unchanged"))
        else:
            done.changed += len(new)
            done.outcomes.append(FileOutcome(file.shown, "changed"))
    elif new:
        done.outcomes.append(FileOutcome(file.shown, "added"))
    elif own >= set(ids):
        done.outcomes.append(FileOutcome(file.shown, "unchanged"))
    else:
        first = next(d for d in stored if d.id not in own)
        where = claimed.get(first.content_hash) or first.path or first.title
        done.outcomes.append(FileOutcome(file.shown, "skipped", f"{READ_ALREADY} ({where})", READ_ALREADY))


def describe_files(outcomes: Sequence[FileOutcome]) -> list[str]:
    """The files of a report as summary lines: how many had each outcome, then the skipped and the failed with
    their reasons counted together.

    Example::

        describe_files(report.files)
        # ['files: 2 added, 1 changed, 40 unchanged, 1 removed',
        #  '3 skipped: 2 not a document type Dream Explorer reads (.png), 1 in .obsidian/']
    """
    counts = {status: sum(o.files for o in outcomes if o.status == status) for status in FILE_STATUSES}
    done = [f"{counts[s]} {s}" for s in ("added", "changed", "unchanged", "removed") if counts[s]]
    lines = [f"files: {', '.join(done)}" if done else "files: none read"]
    for status in ("skipped", "failed"):
        if counts[status]:
            groups = _grouped([o for o in outcomes if o.status == status])
            lines.append(f"{counts[status]} {status}: {', '.join(groups)}")
    return lines


def _grouped(outcomes: Sequence[FileOutcome]) -> list[str]:
    """Each reason's count, with its particulars (a suffix) when they are one file's each, a few of them at most:
    "2 not a document type Dream Explorer reads (.png, .zip)".
    """
    groups: dict[str, tuple[int, list[str]]] = {}
    for outcome in outcomes:
        group = outcome.group or outcome.reason or outcome.status
        count, details = groups.get(group, (0, []))
        detail = (outcome.reason or "").removeprefix(group).strip().removeprefix("(").removesuffix(")")
        if detail and not outcome.path.endswith(os.sep) and detail not in details:  # a folder's is its count
            details.append(detail)
        groups[group] = (count + outcome.files, details)
    return [
        f"{count} {group}"
        + (f" ({', '.join(details[:SHOWN_DETAILS])}{', …' if len(details) > SHOWN_DETAILS else ''})" if details else "")
        for group, (count, details) in groups.items()
    ]
