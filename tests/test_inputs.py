"""What the product takes in: text every store can hold (no NUL, no lone surrogate), mended for documents, and
numbers that are finite numbers of their type, never booleans, texts or null.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from explorer.inputs import NUMERIC, STORABLE, Text, storable, text_fault


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("tides", None),
        ("", None),
        ("naïve — 漢字 🌊 \ufffd \uffff", None),  # any code point UTF-8 encodes, noncharacters too
        ("a\x00b", "contains a NUL character (\\x00) at position 1, which stored text cannot hold"),
        ("\ud800x", "is not UTF-8 text: position 0 holds a lone surrogate (\\ud800)"),
        ("ab\udcff", "is not UTF-8 text: position 2 holds a lone surrogate (\\udcff, the byte 0xFF undecoded)"),
        ("\udfff\x00", "contains a NUL character (\\x00) at position 1, which stored text cannot hold"),
    ],
)
def test_a_text_fault_says_what_and_where(text: str, fault: str | None) -> None:
    assert text_fault(text) == fault
    assert fault is None or fault.isascii()  # the words themselves can be printed and stored anywhere


def test_a_document_is_mended_not_refused() -> None:
    assert storable("tab\x00le") == "table"
    assert storable("caf\udce9 \ud83c") == "caf\ufffd \ufffd"
    assert storable("🌊 tides") == "🌊 tides"  # a pair of surrogates is one character, kept
    assert text_fault(storable("a\x00\ud800\udfff")) is None


def test_text_refuses_what_no_store_holds_and_keeps_its_bounds() -> None:
    bounded = TypeAdapter(Annotated[str, Field(max_length=5, pattern=r"\S"), STORABLE] | None)
    assert bounded.validate_python("tides") == "tides" and bounded.validate_python(None) is None
    wrongs = (
        ("a\x00", "unstorable_text"),
        ("a\ud800", "unstorable_text"),
        ("toolong", "string_too_long"),
        (3, "string_type"),
    )
    for wrong, kind in wrongs:
        with pytest.raises(ValidationError) as refused:
            bounded.validate_python(wrong)
        assert refused.value.errors()[0]["type"] == kind
    assert bounded.json_schema()["anyOf"][0] == {"maxLength": 5, "pattern": r"\S", "type": "string"}
    assert TypeAdapter(list[Text]).validate_python(["a", "b"]) == ["a", "b"]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, False, "1", None])
@pytest.mark.parametrize("kind", [int, float])
def test_a_number_is_finite_and_never_a_boolean_a_text_or_null(kind: type, value: Any) -> None:
    number = TypeAdapter(Annotated[kind | None, Field(ge=0, le=10), NUMERIC])
    with pytest.raises(ValidationError):
        number.validate_python(value)


def test_a_number_is_what_json_calls_one_of_its_type_and_keeps_its_bounds() -> None:
    number = TypeAdapter(Annotated[float | None, Field(gt=0, le=2), NUMERIC])
    assert number.validate_python(1) == 1.0 and number.validate_python(5e-324) == 5e-324
    assert number.json_schema() == {"exclusiveMinimum": 0, "maximum": 2, "type": "number"}  # null is no number
    integer = TypeAdapter(Annotated[int, Field(ge=1, le=10), NUMERIC])
    assert integer.validate_python(3) == 3 and integer.validate_python(3.0) == 3  # JSON Schema's integer
    assert integer.json_schema() == {"minimum": 1, "maximum": 10, "type": "integer"}
    for wrong, says in ((3.5, "fractional part"), (True, "not a boolean"), ("3", "not a text"), (11, "less than")):
        with pytest.raises(ValidationError, match=says):
            integer.validate_python(wrong)
    with pytest.raises(ValidationError, match="null is not a number: leave the field out instead"):
        number.validate_python(None)
