"""Domains, as the surfaces and ingest ask for them: listed, renamed and merged by a person, found as topics.

The engine's one pattern (read → think → write): what the store holds is read in a short connection, the pure
functions decide (:mod:`explorer.reading.domains`, :mod:`explorer.reading.topics`), and the changes are written in
one transaction, documents and their nodes together (:mod:`explorer.store.domains`). Nothing is read again from
the files: a renamed domain is a new name for what is stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from explorer.errors import ExplorerError
from explorer.reading.domains import stronger
from explorer.reading.topics import DEFAULT_TOPICS, TopicConfig, find_topics, keep_topics, refits
from explorer.records import DomainOrigin, Progress, begin
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store import domains as domains_store
from explorer.store.domains import DomainCount
from explorer.wording import counted

__all__ = ["DomainChange", "DomainCount", "DomainError", "list_domains", "merge_domains", "refresh_topics"]


class DomainError(ExplorerError):
    """A domain that does not exist, or a name no domain can take."""


@dataclass(frozen=True)
class DomainChange:
    """What a rename or merge did: the domains it took in, the name they now share, and what changed."""

    merged: tuple[str, ...]
    into: str
    documents: int
    nodes: int

    def to_json(self) -> dict[str, object]:
        """The change as ``explorer domains rename|merge --json`` prints it."""
        return {"merged": list(self.merged), "into": self.into, "documents": self.documents, "nodes": self.nodes}


def list_domains(runtime: Runtime) -> list[DomainCount]:
    """Every domain, with where it came from and how many documents and nodes hold it.

    Example::

        [(d.name, d.origin, d.documents) for d in list_domains(runtime)]  # [("git", "folder", 20), ...]
    """
    with runtime.db.connect() as con:
        return domains_store.domain_counts(con)


def rename_domain(runtime: Runtime, old: str, new: str) -> DomainChange:
    """Call the domain ``old`` ``new`` (an existing ``new`` takes it in: a merge), on its documents and nodes.

    Example::

        rename_domain(runtime, "commit · branch", "git").documents  # 8
    """
    return merge_domains(runtime, [old], new)


def merge_domains(runtime: Runtime, names: Sequence[str], into: str) -> DomainChange:
    """Give the documents and nodes of every domain in ``names`` the domain ``into`` (new or existing), in one
    transaction; from then on a person chose it, and topics found later never overwrite it.

    Example::

        merge_domains(runtime, ["git", "vcs"], "version control")  # both now "version control"
    """
    into = " ".join(into.split())
    if not into:
        raise DomainError("a domain's new name must not be blank")
    with runtime.db.transaction() as con:
        known = {d.name for d in domains_store.domain_counts(con)}
        missing = [name for name in names if name not in known]
        if missing:
            raise DomainError(f"no domain named {', '.join(map(repr, missing))}; {_known(known)}")
        documents, nodes = domains_store.rename_domains(con, list(dict.fromkeys(names)), into)
    return DomainChange(tuple(dict.fromkeys(names)), into, documents, nodes)


def _known(names: set[str]) -> str:
    if not names:
        return "there are no domains yet"
    shown = sorted(names)
    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
    return f"the domains are {', '.join(map(repr, shown[:10]))}{more}"


def settle_met_again(runtime: Runtime, found: Mapping[str, tuple[str | None, DomainOrigin | None]]) -> int:
    """Give each stored document met again (id → the domain and origin its source now gives) that domain when it
    comes from a stronger origin than the stored one (:func:`~explorer.reading.domains.stronger`): ``--domain``
    added to notes read without one applies to them, and a person's choice stands. How many changed.
    """
    if not found:
        return 0
    with runtime.db.transaction() as con:
        stored = {d.id: d for d in corpus.list_documents(con)}
        changes = {
            document_id: (domain, origin)
            for document_id, (domain, origin) in found.items()
            if document_id in stored
            and domain != stored[document_id].domain
            and stronger(origin, stored[document_id].domain_origin)
        }
        domains_store.set_document_domains(con, changes)
    return len(changes)


def refresh_topics(
    runtime: Runtime,
    config: TopicConfig = DEFAULT_TOPICS,
    progress: Progress | None = None,
    added: int | None = None,
) -> list[str]:
    """Find topics again over every document whose domain nobody gave (none yet, or a topic's) and give each its
    topic (or none), documents and nodes together; given, folder and tag domains, and renamed ones, are never
    touched. The names of the topics found.

    ``added`` is how many documents the ingest just added or changed: when they, with those added since the topics
    were last found, are few against the documents with a topic (:func:`~explorer.reading.topics.refits`), the
    topics stand and each new document joins the nearest (:func:`~explorer.reading.topics.keep_topics`), in a
    second where finding them again takes minutes in a vault of 10,000 notes; None finds them again. The count
    since the last fit is kept, so a vault that grows a note at a time is clustered again once a tenth is new.

    Example::

        refresh_topics(runtime)  # ["commit · branch", "list · function"]
        refresh_topics(runtime, added=1)  # the same topics, the new note in the nearest
    """
    begin(progress, "finding topics")
    with runtime.db.connect() as con:
        chunks = domains_store.topic_chunks(con, runtime.db.embedding_dim)
        previous = {d.id: d.domain for d in corpus.list_documents(con) if d.domain_origin == "topic" and d.domain}
        since = None if added is None else added + domains_store.added_since_topics(con)
    if refits(since, len(previous), config):
        found, since = find_topics(chunks.document_ids, chunks.texts, chunks.vectors, config, previous), 0
    else:
        found = keep_topics(chunks.document_ids, chunks.vectors, previous, config)
    changes: dict[str, tuple[str | None, DomainOrigin | None]] = {
        document: (topic, "topic" if topic else None) for document, topic in found.of_document.items()
    }
    with runtime.db.transaction() as con:
        current = {d.id: (d.domain, d.domain_origin) for d in corpus.list_documents(con)}
        # only documents still without a given domain: a person may have renamed one while topics were found
        applied = {
            d: value
            for d, value in changes.items()
            if d in current and current[d][1] in (None, "topic") and current[d] != value
        }
        domains_store.set_document_domains(con, applied)
        domains_store.set_added_since_topics(con, since or 0)
        held = {domain for domain, _ in (current | applied).values()}
        domains_store.rename_loose_nodes(con, _successors(previous, found.of_document, held))
    if progress:
        progress(1, 1, counted(len(found.topics), "topic"), "finding topics")
    return [topic.name for topic in found.topics]


def _successors(
    previous: Mapping[str, str], now: Mapping[str, str | None], held: set[str | None]
) -> dict[str, str | None]:
    """Each former topic no document holds any more → the topic most of its documents are in now (None: none), for
    the nodes no document owns (a dream of several documents) that carry its name.
    """
    followers: dict[str, Counter[str | None]] = {}
    for document, name in previous.items():
        if name not in held:
            followers.setdefault(name, Counter())[now.get(document)] += 1
    return {name: count.most_common(1)[0][0] for name, count in followers.items()}
