"""How counts read to people: "1 crystal", "3 crystals", never "crystal(s)", on every surface."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` with its noun in the number it takes.

    Example::

        counted(1, "crystal")  # '1 crystal'
        counted(3, "crystal")  # '3 crystals'
        counted(2, "locus", "loci")  # '2 loci'
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


# How a walk found the place it went to (a locus's ``strategy``), as people say it.
WAYS = {
    "seed": "the seed",
    "distance_band": "a neighbour at the right distance",
    "cross_domain": "a bridge to another domain",
    "analogy": "an analogy",
    "tension": "a tension",
    "injected": "a concept a person injected",
}


def way(strategy: str) -> str:
    """``distance_band`` as "a neighbour at the right distance"; a name not known here as it is."""
    return WAYS.get(strategy, strategy)


def locus_kind(source_type: str) -> str:
    """A locus's ``source_type`` ("ADJACENT") as a word ("adjacent")."""
    return source_type.lower()


# A crystal's or dream's source whose note was edited or deleted since (a retired document), as every surface marks it.
SOURCE_RETIRED = {"changed": "source changed", "removed": "source removed"}


# What a node is (its ``type``), as people say it: the Corpus table, provenance and the map's hover.
NODE_KINDS = {
    "raw_chunk": "chunk",
    "synthesis": "synthesis",
    "entity_insight": "entity insight",
    "rem_dream": "dream",
    "fused": "fused memory",
    "pattern": "pattern",
    "abstraction": "abstraction",
}


def node_kind(node_type: str) -> str:
    """``raw_chunk`` as "chunk"; a type not known here as it is."""
    return NODE_KINDS.get(node_type, node_type)


# How a node's detail says a link to or from another document, so a wikilink the person wrote reads apart from a
# mention reading found: (kind, this node is the one that links) → the words before the other document's title.
NOTE_LINKS = {
    ("LINKS", True): "links in the vault to",
    ("LINKS", False): "linked in the vault from",
    ("MENTIONS", True): "mentions",
    ("MENTIONS", False): "mentioned in",
}


def note_link(kind: str, outgoing: bool) -> str:
    """The words for a LINKS or MENTIONS relation seen from one end (:data:`NOTE_LINKS`)."""
    return NOTE_LINKS.get((kind, outgoing), kind.lower())
