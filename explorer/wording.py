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
