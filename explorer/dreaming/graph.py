"""What every dreaming algorithm shares about the memory graph: the
``get_relations`` callback and a memory's category.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from explorer.records import Node, Relation

GetRelations = Callable[[str], list[Relation]]


def category_of(node: Node) -> str:
    """The node's category; READING-cycle nodes have none, so their domain (or type) stands in."""
    return node.category or node.domain or node.type


def relations_lookup(relations: Iterable[Relation]) -> GetRelations:
    """A ``get_relations`` callback over relations held in memory (both directions)."""
    by_node: dict[str, list[Relation]] = defaultdict(list)
    for relation in relations:
        by_node[relation.source_id].append(relation)
        if relation.target_id != relation.source_id:
            by_node[relation.target_id].append(relation)
    return lambda node_id: by_node.get(node_id, [])


def other_end(relation: Relation, node_id: str) -> str:
    """The memory a relation leads to from ``node_id``, whichever way the relation points."""
    return relation.target_id if relation.source_id == node_id else relation.source_id
