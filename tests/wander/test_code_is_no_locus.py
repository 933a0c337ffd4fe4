"""A block of code is read, searched and shown as a source, but a walk never goes there to dwell, nor does a
dream bind it: on real documentation (git's manual pages, Python's HOWTOs, a chat export), a third of the chunks
are code, and the offline dwelling on an ASCII diagram of branches had nothing to say but the diagram.
"""

from __future__ import annotations

from pathlib import Path

from explorer.dreaming.rem_cycle import dreamable
from explorer.reading.chunker import is_code
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.wander import service
from explorer.wander.config import SessionConfig

DOCUMENTS = Path(__file__).resolve().parents[1] / "data" / "documents"


def test_a_walk_over_documents_with_code_never_stands_on_a_code_block(runtime: Runtime) -> None:
    assert ingest_paths(runtime, [DOCUMENTS]).errors == []
    with runtime.db.connect() as con:
        nodes = {n.id: n for n in corpus.list_nodes(con, latest_only=True, with_vectors=True)}
    code = {node_id for node_id, node in nodes.items() if node.type == "raw_chunk" and is_code(node.text)}
    assert len(code) >= 5  # the fixtures' listings, synopses and examples: a walk could well meet them
    session = service.create_session(
        runtime,
        SessionConfig(seed_concept="git column options and sorting keys", random_seed=4, max_drift_distance=1.5),
    )
    for _ in range(25):
        service.step(runtime, session.id)
    stood_on = {locus.node_id for locus in service.session_view(runtime, session.id).loci if locus.node_id}
    assert stood_on and not stood_on & code
    assert not {n.id for n in dreamable(list(nodes.values()))} & code  # nor is code a memory a dream binds
