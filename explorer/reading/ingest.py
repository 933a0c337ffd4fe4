"""Ingestion: files in, READING cycle, one transaction per batch of documents.

This is the orchestration the CLI and the app share, in the engine's one pattern
for model-calling flows (read → think → write): what is stored already is read
in short connections, each batch of documents is read by the pure
:func:`~explorer.reading.cycle.read_documents` with no connection held while the
model thinks, and the batch's rows are written together in one transaction (a
document's alone when one of them fails), so a failure leaves nothing
half-written and other processes get the file between batches.

A large read is placed and linked first and enriched later (``enrich``): its notes are searchable and walkable
at the embedding model's speed, and :func:`enrich_pending` asks the model's steps when there is time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal

from explorer.affinity import titled_texts
from explorer.inputs import storable
from explorer.providers.budget import Budget
from explorer.providers.embeddings import Embedder, EmbeddingError, load_model, text_hash
from explorer.providers.prefetch import Prefetcher
from explorer.reading.chunker import Chunk, chunk_sections, is_code
from explorer.reading.cycle import (
    DEFAULT_READING,
    DocumentText,
    KnownNodes,
    ReadingConfig,
    ReadingResult,
    alias_links,
    read_documents,
    read_pending,
)
from explorer.reading.discovery import EXPORTED, Discovered, Found, Skipped, expand_paths, walk_changes
from explorer.reading.domains import domain_of
from explorer.reading.domains_service import refresh_topics, settle_met_again
from explorer.reading.loaders import DEFAULT_MAX_MB, LoadError, Section, SourceText, exported_note, load_file
from explorer.reading.sync import FILE_STATUSES, FileOutcome, OpenedFile, Settled, file_key, settle
from explorer.reading.vault import wikilink_names
from explorer.records import Document, DomainOrigin, PendingReading, Progress, Relation, SourceFile, begin, in_phase
from explorer.runtime import Runtime
from explorer.store import StoreError, corpus, source_files
from explorer.store import reading as reading_store
from explorer.store.database import Connection

Enrich = Literal["auto", "now", "later"]
# New chunks an "auto" ingest enriches as it reads them; a larger read is placed and linked at the embedding
# model's speed and its enrichment left for `explorer enrich`. Offline, enriching a chunk costs about ten times
# embedding it (python -m bench.ingest); a note or a folder of them is enriched at once, a vault is not.
ENRICH_AT_ONCE = 1000


@dataclass
class IngestReport:
    """What an ingest did, file by file and document by document, and every error with the file (and line) it
    came from, so a person can fix the input and run it again.

    ``files`` has one entry per file (a JSON lines file of many documents is one; a hidden folder is one, its
    reason counting its files): see :mod:`explorer.reading.sync` for each status. Documents are counted apart:
    ``documents_added`` new texts from files not read before, ``documents_changed`` new texts of files read before
    (their old texts retired), ``documents_unchanged`` texts met again in the file that held them (not read again),
    ``documents_removed`` documents retired because their file is gone, and ``documents_skipped`` texts read
    already from another file or title (a copy, a move, a duplicate line: kept as an alias). Before sync a text
    read again from its own file was counted skipped; it is unchanged now.
    """

    documents_added: int = 0
    documents_skipped: int = 0
    documents_changed: int = 0
    documents_unchanged: int = 0
    documents_removed: int = 0
    chunks_added: int = 0
    syntheses_added: int = 0
    entity_insights_added: int = 0
    aliases_added: int = 0  # the same text found under another title: kept as a name of the document
    domains_set: int = 0  # documents met again that took the domain their source now gives (explorer.reading.domains)
    topics: list[str] = field(default_factory=list)  # the topics found again, when documents without a domain came
    items_failed: int = 0  # steps the model could not do (failed, or refused by the budget): kept pending
    items_deferred: int = 0  # steps left for later, never asked (a fast read: `explorer enrich` does them)
    items_completed: int = 0  # steps left pending by an earlier ingest, done by this one
    spent_cents: float = 0.0
    budget_exhausted: bool = False  # model calls were refused: the budget could not cover them
    errors: list[dict] = field(default_factory=list)
    files: list[FileOutcome] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Nothing could be ingested (skipped duplicates and unchanged files count as fine)."""
        done = (self.documents_added, self.documents_skipped, self.documents_changed, self.documents_unchanged)
        return bool(self.errors) and not any(done) and not self.documents_removed

    def to_json(self) -> dict:
        """The report as `explorer ingest --json` prints it: ``files`` as ``{"path", "status", "reason"}``."""
        shown = {f.name: getattr(self, f.name) for f in fields(self)}  # not asdict: its deep copy of every file's
        # outcome took 0.5 s for a vault of 10,000 notes, only to be replaced
        return {
            **shown,
            "topics": list(self.topics),
            "errors": [dict(error) for error in self.errors],
            "files": [outcome.to_json() for outcome in self.files],
        }

    def by_status(self) -> dict[str, list[FileOutcome]]:
        """The file entries by status, in :data:`~explorer.reading.sync.FILE_STATUSES` order (every status)."""
        return {status: [f for f in self.files if f.status == status] for status in FILE_STATUSES}

    def add_error(self, error: LoadError) -> None:
        """Record a file or document that could not be read, and go on with the rest (its path and message as a
        store can hold them: a file found in a folder may have a name that is not UTF-8).
        """
        self.errors.append({"path": storable(error.path), "line": error.line, "message": storable(error.message)})

    def count(self, result: ReadingResult, path: str, line: int | None) -> None:
        """Add what a document's stored result holds, its failures as errors of the file it came from."""
        self.chunks_added += result.chunks
        self.syntheses_added += result.syntheses
        self.entity_insights_added += result.entity_insights
        self.items_failed += len(result.pending)
        self.items_deferred += len(result.deferred)
        self.items_completed += len(result.completed)
        for failure in result.failures:
            self.add_error(LoadError(path, failure, line))


def content_hash(source: SourceText) -> str:
    """The text's identity, blind to whitespace, so the same document ingested twice is read once.

    Example::

        content_hash(source)  # SHA-256 hex of the text, whitespace collapsed: "a  b" and "a b" are one
    """
    return hashlib.sha256(" ".join(source.text.split()).encode("utf-8")).hexdigest()


def load_known(runtime: Runtime) -> KnownNodes:
    """Everything already in the knowledge base, for new chunks to be implanted among.

    Example::

        known = load_known(runtime)
        len(known.index)  # the nodes new chunks will be implanted among
    """
    return _load_stored(runtime)[0]


def _load_stored(runtime: Runtime) -> tuple[KnownNodes, dict[str, Document]]:
    """The known nodes (:func:`load_known`) and the documents stored by content hash, read at once."""
    known = KnownNodes(runtime.db.embedding_dim)
    with runtime.db.connect() as con:
        known.add(corpus.list_nodes(con, with_vectors=True))
        documents = corpus.list_documents(con)
    for document in documents:
        if document.retired_because is None:  # a retired note's names belong to its new version, if any
            known.add_names(document.id, document.names)
            known.add_wikilinks(document.id, wikilink_names(document.names, document.path), document.links)
    return known, {document.content_hash: document for document in documents}


def collect_sources(
    paths: Iterable[str | Path], *, year: int | None, domain: str | None, max_mb: float, report: IngestReport
) -> list[SourceText]:
    """The documents found under ``paths``, in order; what cannot be loaded goes into ``report``, not up.

    Example::

        report = IngestReport()
        sources = collect_sources(["notes/"], year=None, domain="systems", max_mb=20, report=report)
        report.errors  # the files (and lines) that could not be loaded
    """
    sources: list[SourceText] = []
    for item in expand_paths(paths):
        if isinstance(item, LoadError):
            report.add_error(item)
        elif isinstance(item, Found) and not exported_note(item.path):
            sources += _load(item, year, domain, max_mb, report)
    return sources


def _load(found: Found, year: int | None, domain: str | None, max_mb: float, report: IngestReport) -> list[SourceText]:
    """The texts of one file, each knowing the folder it was found under; what cannot be loaded goes to ``report``."""
    texts = []
    for loaded in load_file(found.path, year=year, domain=domain, max_mb=max_mb):
        if isinstance(loaded, LoadError):
            report.add_error(loaded)
        else:
            texts.append(loaded if found.root is None else replace(loaded, root=str(found.root)))
    return texts


@dataclass(frozen=True)
class ReadingOptions:
    """How an ingest reads what it finds: the year and domain of texts that name none, the size limit, the
    READING cycle's configuration, whether to ask again for every step left pending, and when to enrich what
    is read (``"auto"``: at once for at most :data:`ENRICH_AT_ONCE` new chunks, later for more).
    """

    year: int | None = None
    domain: str | None = None
    max_mb: float = DEFAULT_MAX_MB
    config: ReadingConfig = DEFAULT_READING
    retry_failed: bool = False
    enrich: Enrich = "auto"


def ingest_paths(
    runtime: Runtime,
    paths: Iterable[str | Path],
    *,
    year: int | None = None,
    domain: str | None = None,
    max_mb: float = DEFAULT_MAX_MB,
    config: ReadingConfig = DEFAULT_READING,
    progress: Progress | None = None,
    budget: Budget | None = None,
    retry_failed: bool = False,
    enrich: Enrich = "auto",
) -> IngestReport:
    """Bring the knowledge base in step with the files under ``paths``: new files are read, a changed file's new
    text is read and its old one retired, the documents of a file gone from a folder named here are retired, and
    a file whose size and modification time are as stored is not opened (:mod:`explorer.reading.sync`).
    ``retry_failed`` asks again for every step an earlier ingest left pending, not only those of the documents
    met again. A document with a stray NUL (or a lone surrogate, from a JSON escape) is read without it, not
    refused (:mod:`explorer.reading.loaders`). ``enrich`` says when the model's steps are asked
    (:class:`ReadingOptions`); those left for later are done by :func:`enrich_pending`.

    Example::

        report = ingest_paths(runtime, ["notes/", "paper.txt"], domain="systems", budget=Budget(50))
        report.documents_added, report.chunks_added, report.syntheses_added, report.errors
        [(f.path, f.status, f.reason) for f in report.files]  # ("notes/cat.png", "skipped", "not a document …")
        ingest_paths(runtime, [], retry_failed=True).items_completed  # the model is back: finish what failed
    """
    named = [Path(p).expanduser() for p in paths]
    options = ReadingOptions(year, domain, max_mb, config, retry_failed, enrich)
    folders = [file_key(p) for p in named if p.is_dir()]
    return _sync(runtime, list(expand_paths(named)), folders, options, progress, budget)


def sync_changes(
    runtime: Runtime,
    roots: Sequence[str | Path],
    changed: Iterable[str | Path],
    *,
    options: ReadingOptions = ReadingOptions(),
    progress: Progress | None = None,
    budget: Budget | None = None,
) -> IngestReport:
    """Bring the knowledge base in step with the paths that changed (were added, edited or deleted: what a watch
    of the folders ``roots`` saw) as a walk of their folder would: a deleted file's documents, or a deleted
    folder's, are retired; a change in a hidden folder is passed over.

    Example::

        for changes in watchfiles.watch("notes/"):
            report = sync_changes(runtime, ["notes/"], [path for _, path in changes])
    """
    folders = sorted((Path(root).expanduser() for root in roots), key=lambda p: -len(file_key(p)))
    by_root: dict[Path, list[Path]] = {}
    for path in map(Path, changed):
        root = next((f for f in folders if _under(file_key(path), [file_key(f)])), None)
        if root is not None:  # the innermost folder watched that holds it
            by_root.setdefault(root, []).append(path)
    found = [item for root, paths in by_root.items() for item in walk_changes(root, paths)]
    deleted = [file_key(path) for paths in by_root.values() for path in paths]
    return _sync(runtime, found, deleted, options, progress, budget)


def _sync(
    runtime: Runtime,
    discovered: Sequence[Discovered],
    gone_under: Sequence[str],
    options: ReadingOptions,
    progress: Progress | None,
    budget: Budget | None,
) -> IngestReport:
    """Read what changed among ``discovered`` and retire the documents of stored files under ``gone_under`` (the
    keys of folders named, or of paths deleted) that are no longer there.
    """
    report = IngestReport()
    with runtime.db.connect() as con:
        stored = source_files.list_source_files(con)
        before = {document.content_hash: document for document in corpus.list_documents(con)}
    slots: list[FileOutcome | None] = []  # None: a file opened, its outcome settled after the reading
    opened: list[OpenedFile] = []
    sources: list[SourceText] = []
    met: set[str] = set()  # documents of files not opened, whose steps left pending are asked again
    for item in discovered:
        if isinstance(item, LoadError):
            report.add_error(item)
            slots.append(FileOutcome(item.path, "failed", item.message, item.message))
        elif isinstance(item, Skipped):
            slots.append(FileOutcome(item.path, "skipped", item.reason, item.group, item.files))
        else:
            outcome = _open(item, stored, options, report, opened, sources)
            if outcome is not None and outcome.status == "unchanged":
                met.update(stored[file_key(item.path)].document_ids)
            slots.append(outcome)
    found = {file.key for file in opened} | {file_key(i.path) for i in discovered if isinstance(i, Found)}
    gone = [key for key in stored if _under(key, gone_under) and key not in found and not os.path.exists(key)]
    ingest_sources(
        runtime,
        sources,
        config=options.config,
        progress=progress,
        report=report,
        budget=budget,
        retry_failed=options.retry_failed,
        met_again=met,
        enrich=options.enrich,
    )
    if options.domain:  # a domain given now holds for the files found unchanged too, as for those read again
        report.domains_set += settle_met_again(runtime, dict.fromkeys(met, (options.domain, "given")))
    with runtime.db.connect() as con:
        after = {document.content_hash: document for document in corpus.list_documents(con)}
    opened = [replace(file, errors=_errors_of(report, file)) for file in opened]  # reading's own failures too
    done = settle(opened, gone, stored, before, after)
    with runtime.db.transaction() as con:
        source_files.keep_source_files(con, done.keep)
        source_files.forget_source_files(con, done.forget)
        corpus.retire_documents(con, done.retire_changed, "changed")
        corpus.retire_documents(con, done.retire_removed, "removed")
    _record_outcomes(report, done, slots)
    return report


def _errors_of(report: IngestReport, file: OpenedFile) -> tuple[str, ...]:
    """What went wrong with a file, loading it or reading its texts, as the report holds it."""
    return tuple(str(error["message"]) for error in report.errors if error["path"] == storable(file.shown))


def _record_outcomes(report: IngestReport, done: Settled, slots: list[FileOutcome | None]) -> None:
    """Each file's outcome into ``report.files`` in the order found (the files gone last), and the documents
    counted as sync sees them: a changed file's new texts are changed, not added; a text met again in the file
    that held it is unchanged, not skipped.
    """
    settled = iter(done.outcomes)
    report.files = [slot if slot is not None else next(settled) for slot in slots] + list(settled)
    report.documents_added -= done.changed
    report.documents_changed += done.changed
    report.documents_skipped -= done.unchanged
    report.documents_unchanged += done.unchanged
    report.documents_removed += len(done.retire_removed)


def _open(
    found: Found,
    stored: dict[str, SourceFile],
    options: ReadingOptions,
    report: IngestReport,
    opened: list[OpenedFile],
    sources: list[SourceText],
) -> FileOutcome | None:
    """A file found: ``unchanged`` when its size and modification time are as stored (it is not opened), else its
    texts added to ``sources`` and the file to ``opened`` (None: settled after the reading), or ``failed``.
    """
    key = file_key(found.path)
    try:
        status = found.path.stat()
    except OSError as exc:  # gone between the walk and now, or unreadable
        error = LoadError(str(found.path), exc.strerror or str(exc))
        report.add_error(error)
        return FileOutcome(error.path, "failed", error.message, error.message)
    row = stored.get(key)
    if row is not None and row.unchanged(status.st_size, status.st_mtime_ns):
        report.documents_unchanged += len(row.document_ids)
        return FileOutcome(str(found.path), "unchanged")
    if exported_note(found.path):  # told by its front matter, so only a file about to be read is asked
        return FileOutcome(str(found.path), "skipped", EXPORTED, EXPORTED)
    texts = _load(found, options.year, options.domain, options.max_mb, report)
    hashes = tuple(content_hash(text) for text in texts)
    opened.append(OpenedFile(key, str(found.path), status.st_size, status.st_mtime_ns, hashes))
    sources += texts
    return None


def _under(key: str, folders: Sequence[str]) -> bool:
    return any(key == folder or key.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders)


def ingest_sources(
    runtime: Runtime,
    sources: Sequence[SourceText],
    *,
    config: ReadingConfig = DEFAULT_READING,
    progress: Progress | None = None,
    report: IngestReport | None = None,
    budget: Budget | None = None,
    retry_failed: bool = False,
    met_again: Collection[str] = (),
    enrich: Enrich = "auto",
) -> IngestReport:
    """Read loaded documents in order, on one budget (default: the settings'); documents already present are
    skipped, save for the steps an earlier reading of them failed, which are asked again (those of ``met_again``
    too: documents of files found unchanged), and with ``retry_failed`` every step pending, failed or left for
    later. A text of a retired document is brought back (an edit undone, a file put back), not read again.
    ``enrich`` says when the model's steps of what is read are asked (:class:`ReadingOptions`).

    Documents are read in batches (``config.documents_together``), so the model calls of a batch's documents
    are in flight together; a batch's documents are written in one transaction (each in its own when one of
    them cannot be written, so only that one is lost).

    Example::

        report = IngestReport()
        sources = collect_sources(["notes/"], year=2008, domain=None, max_mb=20, report=report)
        ingest_sources(runtime, sources, report=report).documents_added
    """
    report = report or IngestReport()
    budget = budget or Budget(runtime.settings.cloud_budget_cents)
    before = budget.spent_cents
    read_before: set[str] = set(met_again)  # the stored documents met again, whose pending steps are asked again
    if sources:  # nothing to read (a folder read again unchanged): no model to load, nothing known to gather
        read_before |= _read_sources(runtime, sources, config, enrich, report, budget, progress)
    if retry_failed or read_before:
        _complete_pending(runtime, None if retry_failed else read_before, config, report, budget, progress)
    if report.documents_added and any(domain_of(source)[0] is None for source in sources):
        report.topics = refresh_topics(
            runtime, progress=progress, added=report.documents_added + report.documents_changed
        )
    report.spent_cents = round(report.spent_cents + budget.spent_cents - before, 6)
    report.budget_exhausted = report.budget_exhausted or budget.exhausted
    runtime.flush()
    if progress:
        progress(len(sources), len(sources), "done", "reading")
    return report


def _read_sources(
    runtime: Runtime,
    sources: Sequence[SourceText],
    config: ReadingConfig,
    enrich: Enrich,
    report: IngestReport,
    budget: Budget,
    progress: Progress | None,
) -> set[str]:
    """Read the texts not present yet, bring back the retired ones met again, keep a present text's new title
    as an alias; the ids of the stored documents met again.
    """
    load_model(runtime.embedder, progress)
    begin(progress, "loading the knowledge base")
    known, stored = _load_stored(runtime)
    begin(progress, "cutting documents into chunks")
    # Each text hashed once and cut only if new: a text read already is not read again (a vault moved meets
    # 10,000 of them, and cutting one takes 5 ms).
    hashed = [(source, content_hash(source)) for source in sources]
    chunked = [
        (s, digest, [] if digest in stored else chunk_sections(s.sections or [Section(s.text)], config.chunk_words))
        for s, digest in hashed
    ]
    new = [chunk.text for _, digest, chunks in chunked if digest not in stored for chunk in chunks]
    config = replace(config, enrich=enrich == "now" or (enrich == "auto" and len(new) <= ENRICH_AT_ONCE))
    with Prefetcher(runtime.embedder, new) as embedder:  # the model embeds ahead while batches are read
        return _read_chunked(runtime, chunked, stored, known, embedder, config, report, budget, progress)


def _read_chunked(
    runtime: Runtime,
    chunked: list[tuple[SourceText, str, list[Chunk]]],
    stored: dict[str, Document],
    known: KnownNodes,
    embedder: Embedder,
    config: ReadingConfig,
    report: IngestReport,
    budget: Budget,
    progress: Progress | None,
) -> set[str]:
    """:func:`_read_sources` once the texts are cut and hashed, each batch's chunks embedded by ``embedder``."""
    seen: set[str] = set()
    other_titles: dict[str, list[str]] = {}  # content hash → the titles a text read once was found under again
    read_before: set[str] = set()
    domains_met: dict[str, tuple[str | None, DomainOrigin | None]] = {}  # their domains as their sources give them
    batch: list[_Pending] = []
    reading = in_phase(progress, "reading")
    for position, (source, digest, chunks) in enumerate(chunked):
        if progress:
            progress(position, len(chunked), source.title, "reading")
        if digest in stored and stored[digest].retired_because is not None and digest not in seen:
            with runtime.db.transaction() as con:
                corpus.revive_documents(con, [stored[digest].id])
            report.documents_added += 1
            seen.add(digest)
            read_before.add(stored[digest].id)
            continue
        if digest in seen or digest in stored:
            report.documents_skipped += 1
            other_titles.setdefault(digest, []).append(source.title)
            if digest in stored:
                read_before.add(stored[digest].id)
                domains_met[stored[digest].id] = domain_of(source)
            continue
        seen.add(digest)
        batch.append(_Pending(source, chunks, _document(source, digest)))
        if len(batch) >= config.documents_together:
            known = _ingest_batch(runtime, embedder, batch, known, config, report, budget, reading)
            batch = []
    if batch:
        known = _ingest_batch(runtime, embedder, batch, known, config, report, budget, reading)
    begin(progress, "linking aliases")
    _add_aliases(runtime, other_titles, known, report)
    report.domains_set += settle_met_again(runtime, domains_met)
    return read_before


@dataclass(frozen=True)
class _Pending:
    source: SourceText
    chunks: list[Chunk]
    document: Document


def _document(source: SourceText, digest: str) -> Document:
    domain, origin = domain_of(source)
    return Document(
        title=source.title,
        content_hash=digest,
        source=source.source,
        path=source.path,
        year=source.year,
        domain=domain,
        domain_origin=origin,
        word_count=len(source.text.split()),
        aliases=tuple(alias for alias in source.aliases if alias != source.title),
        tags=source.tags,
        links=source.links,
    )


def _ingest_batch(
    runtime: Runtime,
    embedder: Embedder,
    batch: list[_Pending],
    known: KnownNodes,
    config: ReadingConfig,
    report: IngestReport,
    budget: Budget,
    progress: Progress | None = None,
) -> KnownNodes:
    """Read a batch with no connection held while the models think, then write each document in one transaction
    (all of them in one connection: opening the file costs about as much as writing a document); returns the
    (possibly reloaded) known nodes. When reading the batch fails outright, its documents are read one at a time,
    so only the one at fault is lost. ``progress`` hears the reading's own phases (:func:`read_documents`).
    """
    texts = [
        DocumentText(
            p.document.id,
            [c.text for c in p.chunks],
            p.document.year,
            p.document.domain,
            p.document.title,
            aliases=p.document.aliases,
            path=p.document.path,
            links=p.document.links,
            sections=[c.section for c in p.chunks],
        )
        for p in batch
    ]
    try:
        results = read_documents(
            texts,
            known=known,
            embedder=embedder,
            gateway=runtime.gateway,
            config=config,
            budget=budget,
            progress=progress,
        )
    except EmbeddingError:  # the model is down or gone: no document of this read can be placed, say it once
        raise
    except Exception as exc:  # one bad document must not stop the batch
        if len(batch) > 1:
            known = load_known(runtime)
            for pending in batch:
                known = _ingest_batch(runtime, embedder, [pending], known, config, report, budget, progress)
            return known
        pending = batch[0]
        report.add_error(LoadError(pending.source.path, f"could not ingest: {exc}", pending.source.line))
        return load_known(runtime)
    written = _write_batch(runtime, batch, results, report)
    if written == len(batch):
        return known
    # The rest of the batch was read beside rows that were not written: read it again without them.
    rest = batch[written + 1 :]
    known = load_known(runtime)
    return _ingest_batch(runtime, embedder, rest, known, config, report, budget, progress) if rest else known


def _write_batch(runtime: Runtime, batch: list[_Pending], results: list[ReadingResult], report: IngestReport) -> int:
    """The batch's documents in one transaction (a commit costs about what a document's rows do, and the next
    batch follows at once, so the write-ahead log is folded in later); when that fails, each document in its
    own, until the one at fault (reported, its rows rolled back). How many were written.
    """
    pairs = list(zip(batch, results, strict=True))
    with runtime.db.connect(checkpoint=False):
        try:
            with runtime.db.transaction() as con:
                for pending in batch:
                    corpus.insert_document(con, pending.document)
                _store_results(con, results)
        except StoreError:
            raise
        except Exception:  # one bad document must not stop the batch: find it, one at a time
            return _write_each(runtime, pairs, report)
    for pending, result in pairs:
        _written(report, pending, result)
    return len(batch)


def _write_each(runtime: Runtime, pairs: list[tuple[_Pending, ReadingResult]], report: IngestReport) -> int:
    """Each document in its own transaction, until one fails (reported); how many were written before it."""
    for index, (pending, result) in enumerate(pairs):
        try:
            with runtime.db.transaction() as con:
                corpus.insert_document(con, pending.document)
                _store_results(con, [result])
        except StoreError:
            raise
        except Exception as exc:
            report.add_error(LoadError(pending.source.path, f"could not ingest: {exc}", pending.source.line))
            return index
        _written(report, pending, result)
    return len(pairs)


def _written(report: IngestReport, pending: _Pending, result: ReadingResult) -> None:
    report.documents_added += 1
    report.count(result, pending.source.path, pending.source.line)


def _store_results(con: Connection, results: Sequence[ReadingResult]) -> list[ReadingResult]:
    """Documents' readings, in a few statements: their new nodes and relations, the steps still pending, and
    those now done; those stored. A result whose steps asked again were completed meanwhile by another process
    is left out, writing nothing (that work stands).
    """
    kept = [r for r in results if not r.retried or reading_store.count_pending(con, r.retried) == len(r.retried)]
    corpus.insert_nodes(con, [node for result in kept for node in result.nodes])
    corpus.insert_relations(con, [relation for result in kept for relation in result.relations])
    reading_store.keep_pending(con, [item for result in kept for item in result.pending + result.deferred])
    reading_store.remove_pending(con, [key for result in kept for key in result.completed])
    return kept


def _complete_pending(
    runtime: Runtime,
    document_ids: Collection[str] | None,
    config: ReadingConfig,
    report: IngestReport,
    budget: Budget,
    progress: Progress | None,
) -> None:
    """The pending steps of ``document_ids`` asked again, those that failed (a step left for later waits for
    :func:`enrich_pending`), or with None every pending step of every document; documents in batches as an
    ingest reads them, each document's outcome written in one transaction. A batch that cannot be read stays
    pending, reported.
    """
    with runtime.db.connect() as con:
        items = reading_store.list_pending(con, document_ids, failed_only=document_ids is not None)
        chunks = {node.id: node for node in corpus.get_nodes(con, {item.chunk_id for item in items})}
        documents = {document.id: document for document in corpus.list_documents(con)}
    by_document: dict[str, list[PendingReading]] = {}
    for item in items:
        if item.chunk_id in chunks:
            by_document.setdefault(str(chunks[item.chunk_id].document_id), []).append(item)
    if not by_document:
        return
    known = load_known(runtime)
    order = list(by_document)
    for start in range(0, len(order), config.documents_together):
        if progress:
            progress(start, len(order), "documents with steps left pending", "asking again")
        ids = order[start : start + config.documents_together]
        part = [item for document_id in ids for item in by_document[document_id]]
        try:
            results = read_pending(
                part,
                chunks,
                known=known,
                embedder=runtime.embedder,
                gateway=runtime.gateway,
                config=config,
                budget=budget,
            )
        except Exception as exc:  # one bad batch must not stop the rest: its steps stay pending
            for document_id in ids:
                report.add_error(LoadError(_where(documents, document_id), f"could not complete pending steps: {exc}"))
            known = load_known(runtime)
            continue
        with runtime.db.connect():
            for document_id, result in results.items():
                with runtime.db.transaction() as con:
                    stored = _store_results(con, [result])
                if stored:
                    report.count(result, _where(documents, document_id), None)


def enrich_pending(runtime: Runtime, *, budget: Budget | None = None, progress: Progress | None = None) -> IngestReport:
    """Do every step of the READING cycle still pending: those a fast read left for later and those that failed;
    what `explorer enrich` runs, in the foreground or as a worker's job.

    Example::

        ingest_paths(runtime, ["vault/"], enrich="later").items_deferred  # placed and linked, searchable now
        enrich_pending(runtime).items_completed  # the syntheses and entity insights, later
    """
    report = ingest_sources(runtime, [], budget=budget, progress=progress, retry_failed=True)
    embed_titled_chunks(runtime, progress)
    return report


TITLED_TOGETHER = 64  # chunks embedded with their titles at once before the count moves (the local model's batch)


def embed_titled_chunks(runtime: Runtime, progress: Progress | None = None) -> int:
    """Embed every current chunk (code aside) headed by its document's title, through the embedding cache, so
    dreaming weighs the titled meaning (:func:`explorer.affinity.titled_texts`) without embedding them first;
    how many were new. A fast read leaves them out, and a first dream on 10,000 notes would wait minutes for them.
    """
    with runtime.db.connect() as con:
        chunks = [n for n in corpus.list_nodes(con, types=["raw_chunk"], latest_only=True) if not is_code(n.text)]
        titles = {d.id: d.title for d in corpus.list_documents(con, current_only=True)}
        known = corpus.cached_hashes(con, runtime.embedder.name)
    texts = [t for t in titled_texts(chunks, titles) if text_hash(t) not in known]
    begin(progress, "embedding chunks with their titles", len(texts))
    for start in range(0, len(texts), TITLED_TOGETHER):
        runtime.embedder.embed(texts[start : start + TITLED_TOGETHER])
        if progress:
            progress(min(start + TITLED_TOGETHER, len(texts)), len(texts), "chunks embedded with their titles")
    runtime.flush()
    return len(texts)


def _where(documents: dict[str, Document], document_id: str) -> str:
    """What names a stored document in a report: its file, or its title when it came from no file."""
    document = documents.get(document_id)
    return (document.path or document.title) if document else document_id


def _add_aliases(runtime: Runtime, other_titles: dict[str, list[str]], known: KnownNodes, report: IngestReport) -> None:
    """Keep each new title of a text already read as an alias of its document, linked from every chunk that
    names it (all are known by now, so the backlinks are complete).
    """
    if not other_titles:
        return
    with runtime.db.connect() as con:
        by_hash = {d.content_hash: d for d in corpus.list_documents(con)}
    aliases: list[tuple[str, str]] = []
    relations: list[Relation] = []
    for digest, titles in other_titles.items():
        document = by_hash.get(digest)
        if document is None:
            continue  # its reading failed: reported already
        for alias in (t for t in dict.fromkeys(titles) if t not in document.names):
            relations += alias_links(known, document.id, alias, document.names)
            known.add_names(document.id, [alias])
            aliases.append((document.id, alias))
    if aliases:  # one transaction: a vault moved meets each of its notes again (a transaction each took 8 ms)
        with runtime.db.transaction() as con:
            for document_id, alias in aliases:
                corpus.add_alias(con, document_id, alias)
            corpus.insert_relations(con, relations)
    report.aliases_added += len(aliases)
