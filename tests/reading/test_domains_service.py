"""Topics found again over a real database: documents and their nodes renamed together, and a dream that no
document owns follows its topic to the new name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.reading.domains_service import list_domains, refresh_topics
from explorer.records import Document, Node
from explorer.runtime import Runtime
from explorer.store import corpus

TWO_SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "topics" / "two_subjects.jsonl"


@pytest.mark.minilm
def test_topics_found_again_rename_their_documents_nodes_and_the_dreams_that_carry_them(runtime: Runtime) -> None:
    pages = [json.loads(line) for line in TWO_SUBJECTS.read_text(encoding="utf-8").splitlines()]
    vectors = runtime.embedder.embed([p["text"] for p in pages])
    documents = [Document(p["title"], p["title"], domain=f"old {p['subject']}", domain_origin="topic") for p in pages]
    chosen = Document("chosen", "chosen", domain="mine", domain_origin="given")
    dream = Node(type="fused", text="a dream across git's pages", domain="old git")
    with runtime.db.transaction() as con:
        for document in [*documents, chosen]:
            corpus.insert_document(con, document)
        corpus.insert_nodes(
            con,
            [
                Node(type="raw_chunk", text=p["text"], embedding=v, document_id=d.id, domain=d.domain, chunk_index=0)
                for p, v, d in zip(pages, vectors, documents, strict=True)
            ]
            + [Node(type="raw_chunk", text="mine", embedding=vectors[0], document_id=chosen.id, domain="mine"), dream],
        )
    names = refresh_topics(runtime)
    assert len(names) == 2 and not {"old git", "old python"} & set(names)
    with runtime.db.connect() as con:
        stored = {d.title: (d.domain, d.domain_origin) for d in corpus.list_documents(con)}
        nodes = corpus.list_nodes(con)
    git_topic = stored["git-commit"][0]
    assert {stored[p["title"]] for p in pages if p["subject"] == "git"} == {(git_topic, "topic")}
    assert stored["chosen"] == ("mine", "given")  # a given domain is never a topic's
    by_document = {n.document_id: n.domain for n in nodes if n.document_id}
    assert all(by_document[d.id] == stored[d.title][0] for d in documents)
    assert next(n for n in nodes if n.id == dream.id).domain == git_topic  # the dream followed its topic
    assert {d.name for d in list_domains(runtime)} == {*names, "mine"}  # no name is left behind
