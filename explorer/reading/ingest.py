"""Ingestion: files in, READING cycle, one transaction per document.

This is the orchestration the CLI and the app share, in the engine's one pattern
for model-calling flows (read → think → write): what is stored already is read
in short connections, each batch of documents is read by the pure
:func:`~explorer.reading.cycle.read_documents` with no connection held while the
model thinks, and each document's rows are written together in one transaction,
so a failure leaves nothing half-written and other processes get the file
between batches.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from explorer.inputs import storable
from explorer.providers.budget import Budget
from explorer.providers.embeddings import load_model
from explorer.reading.chunker import Chunk, chunk_sections
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
from explorer.reading.loaders import DEFAULT_MAX_MB, LoadError, Section, SourceText, expand_paths, load_file
from explorer.records import Document, PendingReading, Progress, begin, in_phase
from explorer.runtime import Runtime
from explorer.store import StoreError, corpus
from explorer.store import reading as reading_store
from explorer.store.database import Connection


@dataclass
class IngestReport:
    """What an ingest did, document by document: added, skipped as already read, and every error with the
    file (and line) it came from, so a person can fix the input and run it again.
    """

    documents_added: int = 0
    documents_skipped: int = 0
    chunks_added: int = 0
    syntheses_added: int = 0
    entity_insights_added: int = 0
    aliases_added: int = 0  # the same text found under another title: kept as a name of the document
    items_failed: int = 0  # steps the model could not do (failed, or refused by the budget): kept pending
    items_completed: int = 0  # steps left pending by an earlier ingest, done by this one
    spent_cents: float = 0.0
    budget_exhausted: bool = False  # model calls were refused: the budget could not cover them
    errors: list[dict] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Nothing could be ingested (skipped duplicates count as fine)."""
        return bool(self.errors) and self.documents_added == 0 and self.documents_skipped == 0

    def to_json(self) -> dict:
        """The report as `explorer ingest --json` prints it."""
        return asdict(self)

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


def _load_stored(runtime: Runtime) -> tuple[KnownNodes, dict[str, str]]:
    """The known nodes (:func:`load_known`) and the documents stored (content hash → id), read at once."""
    known = KnownNodes(runtime.db.embedding_dim)
    with runtime.db.connect() as con:
        known.add(corpus.list_nodes(con, with_vectors=True))
        documents = corpus.list_documents(con)
    for document in documents:
        known.add_names(document.id, document.names)
    return known, {document.content_hash: document.id for document in documents}


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
            continue
        for loaded in load_file(item, year=year, domain=domain, max_mb=max_mb):
            if isinstance(loaded, LoadError):
                report.add_error(loaded)
            else:
                sources.append(loaded)
    return sources


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
) -> IngestReport:
    """Load every file under ``paths`` and read each document into the knowledge base; ``retry_failed`` asks
    again for every step an earlier ingest left pending, not only those of the documents met again. A document
    with a stray NUL (or a lone surrogate, from a JSON escape) is read without it, not refused
    (:mod:`explorer.reading.loaders`).

    Example::

        report = ingest_paths(runtime, ["notes/", "paper.txt"], domain="systems", budget=Budget(50))
        report.documents_added, report.chunks_added, report.syntheses_added, report.errors
        ingest_paths(runtime, [], retry_failed=True).items_completed  # the model is back: finish what failed
    """
    report = IngestReport()
    sources = collect_sources(paths, year=year, domain=domain, max_mb=max_mb, report=report)
    return ingest_sources(
        runtime, sources, config=config, progress=progress, report=report, budget=budget, retry_failed=retry_failed
    )


def ingest_sources(
    runtime: Runtime,
    sources: Sequence[SourceText],
    *,
    config: ReadingConfig = DEFAULT_READING,
    progress: Progress | None = None,
    report: IngestReport | None = None,
    budget: Budget | None = None,
    retry_failed: bool = False,
) -> IngestReport:
    """Read loaded documents in order, on one budget (default: the settings'); documents already present are
    skipped, save for the steps an earlier reading of them left pending, which are asked again (those of every
    document with ``retry_failed``).

    Documents are read in batches (``config.documents_together``), so the model calls of a batch's documents
    are in flight together; each document is still written in its own transaction.

    Example::

        report = IngestReport()
        sources = collect_sources(["notes/"], year=2008, domain=None, max_mb=20, report=report)
        ingest_sources(runtime, sources, report=report).documents_added
    """
    report = report or IngestReport()
    budget = budget or Budget(runtime.settings.cloud_budget_cents)
    before = budget.spent_cents
    load_model(runtime.embedder, progress)
    begin(progress, "loading the knowledge base")
    known, stored = _load_stored(runtime)
    begin(progress, "cutting documents into chunks")
    chunked = [(s, chunk_sections(s.sections or [Section(s.text)], config.chunk_words)) for s in sources]  # cut once
    _embed_in_batches(runtime, [chunk.text for _, chunks in chunked for chunk in chunks], progress)
    seen: set[str] = set()
    other_titles: dict[str, list[str]] = {}  # content hash → the titles a text read once was found under again
    read_before: set[str] = set()  # the stored documents met again, whose pending steps are asked again
    batch: list[_Pending] = []
    reading = in_phase(progress, "reading")
    for position, (source, chunks) in enumerate(chunked):
        if progress:
            progress(position, len(sources), source.title, "reading")
        digest = content_hash(source)
        if digest in seen or digest in stored:
            report.documents_skipped += 1
            other_titles.setdefault(digest, []).append(source.title)
            if digest in stored:
                read_before.add(stored[digest])
            continue
        seen.add(digest)
        batch.append(_Pending(source, chunks, _document(source, digest)))
        if len(batch) >= config.documents_together:
            known = _ingest_batch(runtime, batch, known, config, report, budget, reading)
            batch = []
    if batch:
        known = _ingest_batch(runtime, batch, known, config, report, budget, reading)
    begin(progress, "linking aliases")
    _add_aliases(runtime, other_titles, known, report)
    if retry_failed or read_before:
        _complete_pending(runtime, None if retry_failed else read_before, config, report, budget, progress)
    report.spent_cents = round(report.spent_cents + budget.spent_cents - before, 6)
    report.budget_exhausted = report.budget_exhausted or budget.exhausted
    runtime.flush()
    if progress:
        progress(len(sources), len(sources), "done", "reading")
    return report


@dataclass(frozen=True)
class _Pending:
    source: SourceText
    chunks: list[Chunk]
    document: Document


def _document(source: SourceText, digest: str) -> Document:
    return Document(
        title=source.title,
        content_hash=digest,
        source=source.source,
        path=source.path,
        year=source.year,
        domain=source.domain,
        word_count=len(source.text.split()),
    )


def _ingest_batch(
    runtime: Runtime,
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
            sections=[c.section for c in p.chunks],
        )
        for p in batch
    ]
    try:
        results = read_documents(
            texts,
            known=known,
            embedder=runtime.embedder,
            gateway=runtime.gateway,
            config=config,
            budget=budget,
            progress=progress,
        )
    except Exception as exc:  # one bad document must not stop the batch
        if len(batch) > 1:
            known = load_known(runtime)
            for pending in batch:
                known = _ingest_batch(runtime, [pending], known, config, report, budget, progress)
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
    return _ingest_batch(runtime, rest, known, config, report, budget, progress) if rest else known


def _write_batch(runtime: Runtime, batch: list[_Pending], results: list[ReadingResult], report: IngestReport) -> int:
    """Each document of the batch in its own transaction, until one fails (reported, its rows rolled back);
    how many were written before it.
    """
    with runtime.db.connect():
        for index, (pending, result) in enumerate(zip(batch, results, strict=True)):
            try:
                with runtime.db.transaction() as con:
                    corpus.insert_document(con, pending.document)
                    _store_result(con, result)
            except StoreError:
                raise
            except Exception as exc:  # one bad document must not stop the batch
                report.add_error(LoadError(pending.source.path, f"could not ingest: {exc}", pending.source.line))
                return index
            report.documents_added += 1
            report.count(result, pending.source.path, pending.source.line)
    return len(batch)


def _store_result(con: Connection, result: ReadingResult) -> bool:
    """A document's reading: its new nodes and relations, the steps still pending, and those now done; false,
    writing nothing, when steps it asked again were completed meanwhile by another process (its work stands).
    """
    if result.retried and reading_store.count_pending(con, result.retried) < len(result.retried):
        return False
    corpus.insert_nodes(con, result.nodes)
    corpus.insert_relations(con, result.relations)
    reading_store.keep_pending(con, result.pending)
    reading_store.remove_pending(con, result.completed)
    return True


def _complete_pending(
    runtime: Runtime,
    document_ids: Collection[str] | None,
    config: ReadingConfig,
    report: IngestReport,
    budget: Budget,
    progress: Progress | None,
) -> None:
    """The pending steps of ``document_ids`` (None: of every document) asked again, documents in batches as an
    ingest reads them; each document's outcome written in one transaction. A batch that cannot be read stays
    pending, reported.
    """
    with runtime.db.connect() as con:
        items = reading_store.list_pending(con, document_ids)
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
                    stored = _store_result(con, result)
                if stored:
                    report.count(result, _where(documents, document_id), None)


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
    for digest, titles in other_titles.items():
        document = by_hash.get(digest)
        if document is None:
            continue  # its reading failed: reported already
        new = [t for t in dict.fromkeys(titles) if t not in document.names]
        relations = []
        for alias in new:
            relations += alias_links(known, document.id, alias, document.names)
            known.add_names(document.id, [alias])
        with runtime.db.transaction() as con:
            for alias in new:
                corpus.add_alias(con, document.id, alias)
            corpus.insert_relations(con, relations)
        report.aliases_added += len(new)


EMBED_TOGETHER = 64  # chunks embedded at once before the count moves


def _embed_in_batches(runtime: Runtime, texts: list[str], progress: Progress | None = None) -> None:
    """Embed every chunk up front in batches (the cache then serves the cycle): one text at a time costs several
    times more per text on a CPU, while a batch of :data:`EMBED_TOGETHER` costs no more per text than a larger one
    (the local model encodes 64 at a time) and lets the count move every few seconds.
    """
    begin(progress, "embedding", len(texts))
    for start in range(0, len(texts), EMBED_TOGETHER):
        runtime.embedder.embed(texts[start : start + EMBED_TOGETHER])
        if progress:
            done = min(start + EMBED_TOGETHER, len(texts))
            progress(done, len(texts), f"{done} of {len(texts)} chunks", "embedding")
