"""Where a domain comes from when nobody names one: the top folder under the folder ingested, else the first tag."""

from __future__ import annotations

import pytest

from explorer.reading.domains import domain_of, folder_domain, stronger, tag_domain
from explorer.reading.loaders import DOMAIN_MAX_CHARS, SourceText


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("notes/git/log.txt", "notes", "git"),
        ("notes/git/howto/deep/a.md", "notes/", "git"),
        ("./notes/python/lists.txt", "notes", "python"),
        ("/home/me/notes/git/log.txt", "/home/me/notes", "git"),
        ("notes/readme.txt", "notes", None),  # directly in the folder named: no folder of its own
        ("elsewhere/git/log.txt", "notes", None),  # not under it
        ("notes/git/log.txt", None, None),  # a file named by itself
        ("notes/git/log.txt", "", None),
    ],
)
def test_the_top_folder_under_the_folder_named_is_the_domain(path: str, root: str | None, expected: str | None) -> None:
    assert folder_domain(path, root) == expected


def test_a_long_folder_name_is_cut_to_a_domain_s_length() -> None:
    assert folder_domain(f"n/{'x' * 200}/a.txt", "n") == "x" * DOMAIN_MAX_CHARS


def test_the_first_tag_is_a_domain_with_or_without_its_hash() -> None:
    assert tag_domain(("#git", "python")) == "git"
    assert tag_domain(("  ", "python")) == "python"
    assert tag_domain(()) is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (SourceText("t", "a", "notes/git/a.txt", domain="vcs", root="notes", tags=("x",)), ("vcs", "given")),
        (SourceText("t", "a", "notes/git/a.txt", root="notes", tags=("x",)), ("git", "folder")),
        (SourceText("t", "a", "notes/a.md", root="notes", tags=("#recipes", "x")), ("recipes", "tag")),
        (SourceText("t", "a", "notes/a.md", root="notes"), (None, None)),
        (SourceText("t", "a", "a.md"), (None, None)),
    ],
)
def test_a_domain_is_given_else_its_folder_else_its_first_tag(source: SourceText, expected: tuple) -> None:
    assert domain_of(source) == expected


def test_a_stronger_origin_replaces_a_weaker_and_nothing_replaces_a_given_domain() -> None:
    assert stronger("given", None) and stronger("given", "folder") and stronger("folder", "topic")
    assert stronger("tag", "topic") and stronger("topic", None)
    assert not stronger("given", "given") and not stronger("folder", "given") and not stronger("topic", "tag")
    assert not stronger(None, None) and not stronger("topic", "topic")
