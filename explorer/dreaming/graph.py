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


def several_categories(nodes: Iterable[Node]) -> bool:
    """Whether the nodes span more than one category, so that a bridge means crossing from one to another."""
    return len({category_of(n) for n in nodes}) > 1


def bridges_from(
    node: Node, by_id: dict[str, Node], *, other_category: bool, other_source: bool = True
) -> Callable[[str], bool]:
    """Which memories a bridge from ``node`` may lead to: current ones of ``by_id``, not ``node`` itself, from
    another source document (when ``other_source``) and of another category (when ``other_category``).
    """

    def allowed(other_id: str) -> bool:
        other = by_id.get(other_id)
        return (
            other is not None
            and other.is_latest
            and other.id != node.id
            and (not other_source or other.document_id is None or other.document_id != node.document_id)
            and (not other_category or category_of(other) != category_of(node))
        )

    return allowed


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
