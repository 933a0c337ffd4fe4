"""What a crystal is judged against, read from the store: a resonance's evidence back to its source chunks, and
the crystals already formed (a new one must not repeat them). A step and a forced crystallization read the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.records.wander import Residue, Resonance
from explorer.store import wander as wander_store
from explorer.store.database import Connection
from explorer.wander.crystal import Evidence, KnownCrystals
from explorer.wander.space import LociSpace


def gather_evidence(
    con: Connection,
    loci: LociSpace,
    limit: int,
    resonance: Resonance,
    residue: Residue | None,
    also: Sequence[str] = (),
) -> Evidence:
    """A resonance's latest residues (and the residues ``also`` named, first), the loci they went from and to,
    those loci's corpus nodes and the raw chunks behind each node (the node itself, or the chunks it was
    derived from).
    """
    supporting = [i for i in resonance.supporting_residue_ids if residue is None or i != residue.id][-limit:]
    ids = list(dict.fromkeys([*also, *supporting]))
    residues = wander_store.get_residues(con, ids)
    if residue is not None:
        residues.append(residue)
    residues = residues[-(limit + len(also)) :]
    wanted = [i for r in residues for i in (r.from_locus_id, r.to_locus_id) if i]
    found = {i: loci.loci[i] for i in wanted if i in loci.loci}
    found.update(
        {x.id: x for x in wander_store.get_loci(con, [i for i in wanted if i not in found], with_vectors=False)}
    )
    nodes = wander_store.node_summaries(con, [x.node_id for x in found.values() if x.node_id])
    parents = wander_store.node_summaries(
        con, [p for n in nodes.values() if n["type"] != "raw_chunk" for p in n["parent_ids"]]
    )
    chunks: dict[str, list[dict[str, Any]]] = {}
    for node_id, node in nodes.items():
        behind = [(node_id, node)] if node["type"] == "raw_chunk" else [(p, parents.get(p)) for p in node["parent_ids"]]
        chunks[node_id] = [
            {**summary, "id": chunk_id}
            for chunk_id, summary in behind
            if summary is not None and _source_chunk(summary, node)
        ]
    return Evidence(residues, found, nodes, chunks)


def _source_chunk(candidate: dict[str, Any], node: dict[str, Any]) -> bool:
    """Whether ``candidate`` is a raw chunk of the source ``node`` stands for: its own document's (a synthesis
    also derives from the passages it was read against, which are other sources), or any parent chunk of a node
    with no document (a dream, a fusion).
    """
    if candidate.get("type") != "raw_chunk":
        return False
    return node.get("document_id") is None or candidate.get("document_id") == node.get("document_id")


def known_crystals(con: Connection) -> KnownCrystals:
    """The crystals formed so far, as a new one is checked against them: their vectors and the pairs they join;
    and the pairs of documents one of which names the other.
    """
    return KnownCrystals(
        wander_store.crystal_vectors(con)[1],
        frozenset(wander_store.crystal_pairs(con)),
        frozenset(wander_store.naming_pairs(con)),
    )
