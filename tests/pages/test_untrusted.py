"""``untrusted.md``: a model's text inside a Streamlit label or message reads literally. The browser test
(tests/e2e/test_hostile_text.py) proves that Streamlit renders no link or image from it; here, that a reader sees
exactly the text and that nothing Markdown could act on is left unescaped.
"""

from __future__ import annotations

import re

import pytest

from pages.untrusted import md

from .conftest import literal

HOSTILE = [
    "![x](http://127.0.0.1:9/i.png)",
    "[a](http://127.0.0.1:9/l) and <http://127.0.0.1:9/auto>",
    '<img src="http://127.0.0.1:9/h.png" onerror="alert(1)">',
    "**bold** _it_ ~~gone~~ `code` :red[colour] :material/home: $x^2$ &amp; a\\b",
    "# heading",
    "1. first\n- second\n> quote\n\n    indented code",
    "bare http://127.0.0.1:9/bare HTTPS://x.example www.example.com me@example.com",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_reader_sees_the_text_itself_on_one_line(text: str) -> None:
    assert literal(md(text)) == " ".join(text.split())


@pytest.mark.parametrize("text", HOSTILE)
def test_every_markdown_character_is_escaped_and_no_autolink_is_left(text: str) -> None:
    escaped = md(text)
    assert "\n" not in escaped
    # with the escape pairs taken out, no ASCII punctuation is left to start a construct
    assert not re.search(r"[!-/:-@\[-`{-~]", re.sub(r"\\[!-/:-@\[-`{-~]", "", escaped))
    # GFM finds bare URLs and addresses in the text as parsed (escapes resolved): the joiner breaks each one
    parsed = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", escaped)
    assert not re.search(r"(?i)https?://|www\.|[\w.+-]@", parsed)


def test_ordinary_text_is_unchanged_to_the_eye() -> None:
    sentence = "Python 3.0 (2008) made str Unicode; bytes is what used to be text — a break, on purpose!"
    assert literal(md(sentence)) == sentence
