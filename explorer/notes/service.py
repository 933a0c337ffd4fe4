"""The export to notes as every surface runs it: read the findings and the names of their sources from the
store in one short connection, render them (:mod:`explorer.notes.render`) and bring the folder in step
(:mod:`explorer.notes.folder`).

Which findings: each crystal a person approved (its review state, :class:`~explorer.records.wander.ReviewState`),
and each stored dream. Dreams have no review of their own: a REM dream or a fused memory is stored only when the
mechanism kept it, and a discovered link only when the judge kept it, so every stored dream is one that was kept;
a fused memory or dream that a later fusion superseded is left out (the memory that replaced it is exported).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from explorer.dreaming import service as dreaming
from explorer.notes.folder import IntoVault, vault_folder, write_notes
from explorer.notes.render import note_name, note_names, note_text
from explorer.records import PAGE_MAX, Document
from explorer.records.dreaming import Dream
from explorer.records.notes import NoteFinding, NotesExport
from explorer.records.wander import Crystal, ReviewState
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store import wander as wander_store
from explorer.text import shorten
from explorer.wander.sessions import require_session
from explorer.wording import SOURCE_RETIRED

TITLE_WORDS = 12  # a crystal's title: the first words of its insight
DREAM_STATUS = "kept"


def export_notes(
    runtime: Runtime, directory: str | Path, *, session_id: str | None = None, into_vault: bool = False
) -> NotesExport:
    """Write each approved crystal (of ``session_id`` only, when given) and each kept dream as a Markdown note in
    ``directory``; an export repeated changes nothing, and a note for a finding no longer approved is removed.
    A ``directory`` inside a folder the knowledge base was read from is refused (:class:`IntoVault`) unless
    ``into_vault``.

    Example::

        done = export_notes(runtime, "~/vault/findings")
        done.written, done.unchanged, done.removed, done.notes
    """
    directory = Path(directory).expanduser()
    findings, document_paths = read_findings(runtime, session_id)
    folder = vault_folder(directory, document_paths)
    if folder is not None and not into_vault:
        raise IntoVault(
            f"{directory} lies inside {folder}, a folder the knowledge base was read from: the notes would land in "
            "the vault itself",
            subject=str(directory),
        )
    return write_notes(directory, {name: note_text(f) for f, name in zip(findings, note_names(findings), strict=True)})


def read_findings(runtime: Runtime, session_id: str | None = None) -> tuple[list[NoteFinding], list[str]]:
    """The findings to export, each with its sources' names, and the paths of the documents ingested (to know
    the vault's folders), read in one connection. An unknown ``session_id`` is :class:`SessionNotFound`.
    """
    with runtime.db.connect() as con:
        session = None
        if session_id is not None:
            session = require_session(con, wander_store.session_id_of(con, session_id)).id
        crystals = [
            c for c in wander_store.list_crystals(con, session_id=session) if c.review_state is ReviewState.APPROVED
        ]
        dreams = dreaming.list_dreams(runtime, limit=PAGE_MAX)
        node_ids = [d.id for d in dreams if d.kind != "exploration"] + [s.id for d in dreams for s in d.sources]
        nodes = {n.id: n for n in corpus.get_nodes(con, set(node_ids), with_vectors=False)}
        documents = {d.id: d for d in corpus.list_documents(con)}
    dreams = [d for d in dreams if d.kind == "exploration" or (d.id in nodes and nodes[d.id].is_latest)]
    dream_notes = {d.id: note_name(_dream(d, None, ())).removesuffix(".md") for d in dreams}

    def source_names(dream: Dream) -> tuple[str, ...]:
        names = []
        for source in dream.sources:
            node = nodes.get(source.id)
            document = documents.get(node.document_id or "") if node else None
            if document is not None:
                names.append(vault_name(document))
            elif source.id in dream_notes:  # a memory dreamt before: its own note
                names.append(dream_notes[source.id])
            elif source.title:
                names.append(source.title)
        return tuple(names)

    findings = [_crystal(c, *_crystal_sources(c, documents)) for c in crystals]
    for d in dreams:
        node = nodes.get(d.id)
        model = (node.metadata or {}).get("model") if node is not None else None
        findings.append(_dream(d, str(model) if model else None, source_names(d)))
    return findings, [d.path for d in documents.values() if d.path]


def vault_name(document: Document) -> str:
    """The name the vault knows a document by: the title it was last found under (an alias, when the same text
    was ingested again under another title, as after a note was renamed), else its title.
    """
    return document.aliases[-1] if document.aliases else document.title


def _crystal_sources(
    crystal: Crystal, documents: dict[str, Document]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The names of the two sources a crystal connects (their documents' names, or the titles it recorded), and
    the mark of each whose note was edited or deleted since ("source changed", "source removed").
    """
    names, retired = [], []
    for end in crystal.connects:
        document = documents.get(str(end.get("document_id") or ""))
        name = vault_name(document) if document is not None else end.get("title") or end.get("name")
        if name:
            names.append(str(name))
            if document is not None and document.retired_because:
                retired.append((str(name), SOURCE_RETIRED[document.retired_because]))
    return tuple(names), tuple(retired)


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


def _crystal(crystal: Crystal, sources: tuple[str, ...], retired: tuple[tuple[str, str], ...]) -> NoteFinding:
    return NoteFinding(
        kind="crystal",
        id=crystal.id,
        title=shorten(" ".join(crystal.insight.split()), TITLE_WORDS),
        text=crystal.insight,
        status=ReviewState.APPROVED.value,
        confidence=crystal.confidence,
        sources=sources,
        retired=retired,
        reviewer=crystal.human_approved_by,
        model=crystal.validated_by,
        session=crystal.session_id,
        created=_iso(crystal.created_at),
    )


def _dream(dream: Dream, model: str | None, sources: Sequence[str]) -> NoteFinding:
    return NoteFinding(
        kind="dream",
        id=dream.id,
        title=dream.title,
        text=dream.text,
        status=DREAM_STATUS,
        confidence=dream.confidence,
        sources=tuple(sources),
        model=model,
        created=_iso(dream.created),
        mechanism=dream.kind,
    )
