r"""What the product takes in from outside: text that every store can hold, and numbers that are numbers.

Each surface checks what it is given once, where it comes in, and with these only: the API's bodies and query
parameters and the MCP tools' arguments through the pydantic types below (a fault is a 422 or a tool error naming
the field), the command line through :func:`text_fault` on every argument (``explorer/cli/__init__.py``), and the
documents being ingested through :func:`storable` (``explorer/reading/loaders.py``), which mends their text
rather than refuse a file for one stray character.

Text: PostgreSQL's ``text`` and ``json`` cannot hold NUL (U+0000), and no store can write a lone surrogate
(U+D800 to U+DFFF: half of a UTF-16 pair, as a JSON ``\ud800`` escape brings it, or a byte that is not UTF-8 in a
command-line argument, which Python reads as one). DuckDB keeps a NUL; PostgreSQL took one into a session's seed,
then could not read the session's events back, so the session never stepped again. Refused at the door, such text
never reaches a store, and both backends answer alike.

Numbers: NaN and the infinities are not amounts a person means (a NaN budget compares false with any spending, so
it would never run out), and neither a boolean (though Python counts ``True`` as 1) nor a text of digits is a number:
:data:`NUMERIC` refuses them all, as the schema's ``integer`` and ``number`` say. Nor is ``null`` one: JSON writers
write NaN and the infinities as null (pydantic's, so the MCP SDK's client, and JavaScript's), so a number that may
be left out for its default is refused when sent as null, or a NaN budget would arrive as "the default budget".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator, GetCoreSchemaHandler
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

# The undecoded bytes of a command line (Python's "surrogateescape") are these lone surrogates, 0x80 to 0xFF.
_ESCAPED_BYTES = range(0xDC80, 0xDD00)
# NUL removed, each lone surrogate read as U+FFFD (the character of one that could not be read).
_MENDED = {0: None, **{code: 0xFFFD for code in range(0xD800, 0xE000)}}


def text_fault(text: str) -> str | None:
    r"""What makes ``text`` one no store can hold, worded to follow the name of the field that carries it; None
    when there is nothing wrong with it.

    Example::

        text_fault("tides")  # None
        text_fault("a\x00b")  # "contains a NUL character (\x00) at position 1, which stored text cannot hold"
        text_fault("\udcff")  # "is not UTF-8 text: position 0 holds a lone surrogate (\udcff, the byte 0xFF …)"
    """
    nul = text.find("\x00")
    if nul >= 0:
        return f"contains a NUL character (\\x00) at position {nul}, which stored text cannot hold"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        byte = f", the byte 0x{code - 0xDC00:02X} undecoded" if code in _ESCAPED_BYTES else ""
        return f"is not UTF-8 text: position {exc.start} holds a lone surrogate (\\u{code:04x}{byte})"
    return None


def storable(text: str) -> str:
    r"""``text`` as every store can hold it: each NUL removed and each lone surrogate replaced by U+FFFD. For
    documents, which are mended rather than refused; what a person sends is refused instead (:func:`text_fault`).

    Example::

        storable("tab\x00le")  # "table"
    """
    return text if text_fault(text) is None else text.translate(_MENDED)


def _checked(value: object) -> object:
    fault = text_fault(value) if isinstance(value, str) else None  # what is not text, the type refuses
    if fault is not None:
        raise PydanticCustomError("unstorable_text", "{fault}", {"fault": fault})
    return value


# The check as pydantic metadata. It comes after a text's own bounds, so they stay in the schema (a validator
# placed before them would hide their pattern): ``Annotated[str, Field(max_length=500), STORABLE]``. It runs before
# them, so a lone surrogate is refused in its words, not as a text pydantic cannot read.
STORABLE = BeforeValidator(_checked)
Text = Annotated[str, STORABLE]  # any text a store will keep, without bounds of its own


class _NotNull:
    """Pydantic metadata for a field that may be left out (its default is None) but is never sent as null: the
    schema and the check are the value's alone. It comes after the value's bounds and before :data:`STORABLE`.
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        value = schema["schema"] if schema["type"] == "nullable" else schema
        return core_schema.no_info_before_validator_function(self.check(value), value)

    def check(self, schema: CoreSchema) -> Callable[[object], object]:
        """What refuses a value before ``schema`` reads it: here null alone."""

        def refuse_null(value: object) -> object:
            if value is None:
                raise PydanticCustomError("null_value", "null is not a value here: leave the field out instead")
            return value

        return refuse_null


class _Numeric(_NotNull):
    """Pydantic metadata for a number of a request: what JSON calls a number of the field's type (an ``int`` takes
    ``3.0``, which JSON Schema counts an integer; a ``float`` takes ``3``), finite, and neither a boolean nor a text,
    which pydantic's lax mode would take for ``1`` or ``"1"``; never null, as :data:`NOT_NULL`.
    """

    def check(self, schema: CoreSchema) -> Callable[[object], object]:
        """What refuses a number before ``schema`` reads it: null, a boolean, a text, NaN and the infinities."""
        kind = "integer" if schema["type"] == "int" else "number"

        def refuse_non_number(value: object) -> object:
            if value is None:
                raise PydanticCustomError("null_number", "null is not a number: leave the field out instead")
            if isinstance(value, (bool, str)):
                what = "a boolean" if isinstance(value, bool) else "a text"
                raise PydanticCustomError(
                    "number_type", "Input should be a valid {kind}, not {what}", {"kind": kind, "what": what}
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise PydanticCustomError("finite_number", "Input should be a finite number")
            return value

        return refuse_non_number


# The checks as pydantic metadata, last, after the value's bounds (which they keep in the schema, as STORABLE does):
# ``Annotated[float | None, Field(ge=0, le=1), NUMERIC] = None`` is None to the code when left out, and
# ``Annotated[str | None, Field(max_length=500), NOT_NULL, STORABLE] = None`` the same for a text.
NOT_NULL = _NotNull()
NUMERIC = _Numeric()
