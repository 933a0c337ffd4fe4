"""The store's domain writes: documents and their nodes together, and a walk's cached corpus told of the change."""

from __future__ import annotations

from explorer.records import Document, Node
from explorer.records.wander import Session
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store import domains as domains_store
from explorer.store import wander as wander_store
from explorer.store.wander import corpus_marker


def stored(runtime: Runtime) -> tuple[list[Document], list[Node]]:
    with runtime.db.connect() as con:
        return corpus.list_documents(con), corpus.list_nodes(con)


def test_renames_and_settings_change_documents_and_nodes_and_move_the_corpus_marker(runtime: Runtime) -> None:
    git = Document("log", "h1", domain="git", domain_origin="folder")
    loose = Document("note", "h2")
    dream = Node(type="fused", text="a dream of git", domain="git")  # no document: it carries its parents' domain
    with runtime.db.transaction() as con:
        corpus.insert_document(con, git)
        corpus.insert_document(con, loose)
        corpus.insert_nodes(
            con,
            [
                Node(type="raw_chunk", text="git log", document_id=git.id, domain="git"),
                Node(type="raw_chunk", text="a note", document_id=loose.id),
                dream,
            ],
        )
    with runtime.db.connect() as con:
        before = corpus_marker(con)
        assert [(d.name, d.origin, d.documents, d.nodes) for d in domains_store.domain_counts(con)] == [
            ("git", "folder", 1, 2)
        ]
    with runtime.db.transaction() as con:
        assert domains_store.rename_domains(con, ["git"], "vcs") == (1, 2)
    with runtime.db.connect() as con:
        renamed = corpus_marker(con)
    assert renamed != before  # a walk's in-memory corpus is read again: its domains changed, not its counts
    documents, nodes = stored(runtime)
    assert {(d.title, d.domain, d.domain_origin) for d in documents} == {("log", "vcs", "given"), ("note", None, None)}
    assert {n.text: n.domain for n in nodes} == {"git log": "vcs", "a note": None, "a dream of git": "vcs"}

    with runtime.db.transaction() as con:
        domains_store.set_document_domains(con, {loose.id: ("notes · tea", "topic")})
    with runtime.db.connect() as con:
        assert corpus_marker(con) != renamed
        assert domains_store.topic_chunks(con, runtime.db.embedding_dim).document_ids == []  # no embedded chunk
    documents, nodes = stored(runtime)
    assert {(d.title, d.domain, d.domain_origin) for d in documents} == {
        ("log", "vcs", "given"),
        ("note", "notes · tea", "topic"),
    }
    assert {n.text: n.domain for n in nodes}["a note"] == "notes · tea"


def test_a_walk_kept_to_a_renamed_domain_keeps_to_it_under_its_new_name(runtime: Runtime) -> None:
    kept = Session("kept", "seed", allowed_domains=["git", "python"], forbidden_domains=["tea"])
    free = Session("free", "seed")
    with runtime.db.transaction() as con:
        corpus.insert_document(con, Document("log", "h1", domain="git", domain_origin="folder"))
        corpus.insert_document(con, Document("lists", "h2", domain="python", domain_origin="folder"))
        wander_store.insert_session(con, kept)
        wander_store.insert_session(con, free)
        domains_store.rename_domains(con, ["git", "python"], "code")
    with runtime.db.connect() as con:
        now = wander_store.get_session(con, kept.id)
        untouched = wander_store.get_session(con, free.id)
    assert now is not None and now.allowed_domains == ["code"] and now.forbidden_domains == ["tea"]
    assert untouched is not None and untouched.allowed_domains is None and untouched.forbidden_domains is None
