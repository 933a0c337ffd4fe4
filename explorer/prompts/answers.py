"""What a model's answer must be before the engine uses it: typed fields for the answer models, and the checks
that refuse an answer with a reason.

Every structured prompt reads its JSON through one pydantic model built from the types here; every free-text
prompt reads its text through :func:`prose`. A refusal is an :class:`~explorer.prompts.AnswerRejected` whose
reason names the field and what was wrong with it, so the call log says why an answer was not used.

Real models need some tolerance, and get it: code fences and chatter around the JSON (:func:`json_object`), keys
in any case, numbers given as strings ("0.7"). They do not get a boolean for a score, a list for a domain, a
paragraph of HTML where JSON was asked, or JSON where a paragraph was asked.

Scores out of their range. A score a little off its range is clamped into it; one far off is refused. "A
little" is at most the range's own width beyond it: for a 0–1 score 1.02 or 1.7 becomes 1.0 and -0.05 becomes 0.0
(a model overshooting the scale it was given); 7 or 70 is refused, as the model rated on another scale (1–10,
percent) and no clamp can say what it meant. For a 1–5 score, 0 becomes 1 and 9 becomes 5; 10 or 80 is refused.
The one rule holds for every score, so no prompt has its own idea of "out of range".

What is asked matches what is accepted. Each field's check is declared with :class:`Checked`, which also puts the
bounds it enforces into the field's JSON schema (``maxLength``, ``maxItems``, scores as an ``enum`` of steps): a
server that turns the schema into a grammar (llama.cpp) cannot then write a value the check refuses, nor an answer
longer than :func:`longest_answer`, which each prompt's ``max_tokens`` is sized to hold. A bound the reader needs of
several fields together is asked of each (``minLength``, ``minItems``), so the grammar writes more than enough; a
text that must say something begins with a character the reader keeps (:func:`said`), so " " or "..." cannot pass
for one. Left to the prompt, as no schema says it in a form every server reads (OpenAI's strict mode has no
``not``): a placeholder echoed as a name, and blanks at a text's end that leave it under its least length.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, NoReturn, TypeVar

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from explorer.prompts import AnswerRejected, clean_text, extract_json

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

LABEL_MAX_CHARS = 80  # a domain or theme is a name, not a sentence


@dataclass(frozen=True)
class Checked:
    """A field's check and what a model is asked for, side by side, as ``Annotated`` metadata.

    ``check`` reads the raw value before pydantic's own type check (cleaning it, or refusing it with a reason);
    ``schema`` holds the JSON-schema keywords that ask for what ``check`` accepts, merged into the field's schema,
    so the bound is written once, here, for the reader and the grammar alike.
    """

    check: Callable[[object], Any]
    schema: Mapping[str, Any] = field(compare=False)  # a dict: typing hashes Annotated's metadata

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), **self.schema}


def refuse(reason: str) -> NoReturn:
    """Refuse a field's value, from inside a check: the reason becomes the field's in :func:`summarise`."""
    raise PydanticCustomError("answer", "{reason}", {"reason": reason})


def _shown(value: object, limit: int = 40) -> str:
    """A value as it appears in a reason: its repr, shortened."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind_of(value: object) -> str:
    return {bool: "a boolean", list: "a list", dict: "an object", type(None): "null"}.get(type(value), _shown(value))


# -- scores ---------------------------------------------------------------------------


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        refuse(f"a number is needed, not {_kind_of(value)}")
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except ValueError:
        refuse(f"a number is needed, not the text {_shown(value)}")
    if not math.isfinite(number):
        refuse(f"a finite number is needed, not {_shown(value)}")
    return number


def score(low: float, high: float) -> Callable[[object], float]:
    """A validator for a score in [low, high]: clamped when off by at most the range's width, refused beyond."""
    width = high - low

    def check(value: object) -> float:
        number = _number(value)
        if number < low - width or number > high + width:
            refuse(f"{number:g} is far outside the {low:g}–{high:g} scale (another scale?)")
        return min(high, max(low, number))

    return check


# Scores are asked for as steps of their scale: llama.cpp's grammar ignores minimum and maximum, and a small model
# asked for "a number" rates 0-1 things 7 or 8. The reader still takes any number the scale's rule allows.
TENTHS = [round(step / 10, 1) for step in range(11)]
Score01 = Annotated[float, Checked(score(0.0, 1.0), {"enum": TENTHS})]
Score15 = Annotated[float, Checked(score(1.0, 5.0), {"type": "integer", "enum": [1, 2, 3, 4, 5]})]
OptionalScore01 = Score01 | None


def _count(value: object) -> int:
    """A positive whole number (a candidate's number in the prompt), given as a number or a string."""
    number = _number(value)
    if number != int(number) or number < 1:
        refuse(f"a whole number from 1 is needed, not {_shown(value)}")
    return int(number)


Count = Annotated[int, Checked(_count, {"minimum": 1})]
OptionalCount = Count | None

# -- text and labels ------------------------------------------------------------------


def text(max_chars: int | None, min_chars: int = 0) -> Callable[[object], str]:
    """A validator for a text field: a string (never a number, list or object), cleaned, within length bounds.

    An absent or empty text is the empty string when ``min_chars`` is 0; ``max_chars`` ``None`` leaves the
    length to the answer's cap. An answer model's field uses :func:`text_field`, which also asks for the bounds.
    """

    def check(value: object) -> str:
        if value is None:
            value = ""
        if not isinstance(value, str):
            refuse(f"text is needed, not {_kind_of(value)}")
        cleaned = clean_text(value)
        if max_chars is not None and len(cleaned) > max_chars:
            refuse(f"{len(cleaned)} characters, over the {max_chars}-character limit")
        if len(cleaned) < min_chars:
            refuse(f"{len(cleaned)} characters, under the {min_chars} needed" if cleaned else "empty")
        return cleaned

    return check


# What a reader trims from a text's ends (Python's blanks, quotes, dots) and JSON's control characters: a text that
# must say something may not begin with one, or " " and "..." would pass for a theme or a reflection.
_TRIMMED = r"\x00-\x20\x7F\x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\"\\.…"
_PLAIN = r"[^\"\\\x00-\x1F\x7F]"  # a character of a JSON string that needs no escape


def said(min_chars: int, max_chars: int) -> dict[str, Any]:
    """The schema of a text that must say something: at least ``min_chars`` (one or more) and at most ``max_chars``
    characters, beginning with one the reader keeps.

    A ``pattern`` says it, and holds the lengths too, as llama.cpp's grammar reads a pattern in place of them; the
    lengths stay for the servers and checks that read those. The text can hold no double quote or backslash (a
    grammar would otherwise have to spell JSON's escapes): a model quotes with single quotes.
    """
    pattern = f"^[^{_TRIMMED}]{_PLAIN}{{{min_chars - 1},{max_chars - 1}}}$"
    return {"minLength": min_chars, "maxLength": max_chars, "pattern": pattern}


def text_field(max_chars: int, min_chars: int = 0, *, asked_min: int = 0) -> Checked:
    """:func:`text`'s check with its bounds asked for: a text field of an answer model, ``Annotated[str, …]``.

    ``asked_min`` asks for more than the field's own check needs, where the reader judges the fields together (a
    dwelling's five reflections are each asked for, and three are enough): the grammar writes all of them.
    """
    least = max(min_chars, asked_min)
    return Checked(text(max_chars, min_chars), said(least, max_chars) if least else {"maxLength": max_chars})


def label(value: object) -> str:
    """A short name (domain, theme): a string, or a number written as one; never a list or object in its str
    form. The empty string when absent or blank; refused over :data:`LABEL_MAX_CHARS`.
    """
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        refuse(f"a short name is needed, not {_kind_of(value)}")
    name = clean_text(str(value)).strip(".").strip()
    if len(name) > LABEL_MAX_CHARS:
        refuse(f"a short name is needed, not {len(name)} characters ({_shown(name)})")
    return name


def _each(items: list[object], one: Callable[[object], str]) -> tuple[str, ...]:
    """The items as ``one`` reads them, blanks and repeats (in any case) dropped; the first bad one refused,
    named by its position.
    """
    seen: dict[str, str] = {}
    for position, item in enumerate(items):
        try:
            name = one(item)
        except PydanticCustomError as exc:
            refuse(f"item {position}: {exc.message()}")
        if name and name.lower() not in seen:
            seen[name.lower()] = name
    return tuple(seen.values())


# A name in a list is asked for non-empty: a grammar that allows "" lets a small model fill the list with blanks,
# which the reader drops (a dwelling's themes ["", ""] are none given).
LABEL_SCHEMA = {"type": "string", **said(1, LABEL_MAX_CHARS)}
Label = Annotated[str, Checked(label, {"maxLength": LABEL_MAX_CHARS})]


def labels(max_items: int, min_items: int = 0) -> Checked:
    """Short names from a list (or a comma-separated string), blanks and repeats (in any case) dropped, the first
    ``max_items`` kept (a model that names more has still named these). ``min_items`` is asked for only: the
    prompt's reader says what it needs (a dwelling without themes is refused there, with its reason).
    """

    def check(value: object) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list):
            refuse(f"a list of short names is needed, not {_kind_of(value)}")
        return _each(value, label)[:max_items]

    return Checked(check, {"items": LABEL_SCHEMA, "minItems": min_items, "maxItems": max_items})


def phrases(max_items: int, max_chars: int) -> Checked:
    """A list of short texts (conditions, actions): from one to ``max_items`` strings of at most ``max_chars``
    each, cleaned, blanks and repeats dropped; a single string is a list of one.
    """

    def check(value: object) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            refuse(f"a list of texts is needed, not {_kind_of(value)}")
        kept = _each(items, text(max_chars))
        if not kept:
            refuse("at least one text is needed")
        if len(kept) > max_items:
            refuse(f"{len(kept)} items, over the {max_items} allowed")
        return kept

    return Checked(check, {"items": {"type": "string", **said(1, max_chars)}, "minItems": 1, "maxItems": max_items})


class AnswerModel(BaseModel):
    """Base of the answer models: frozen, extra keys ignored (models add them), keys read in any case."""

    model_config = ConfigDict(frozen=True, extra="ignore")


# -- the shape asked for ----------------------------------------------------------------

_UNSENT = ("title", "description", "default", "$defs")  # words for people, or what the reader fills in itself


def answer_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of the answers ``model`` reads, as a model is asked to follow it (the gateway sends it as a
    ``response_format``, which grammar-constrained servers such as llama.cpp's turn into a grammar).

    Derived from ``model``, never written twice, and kept small and plain: no titles, descriptions, defaults or
    ``$ref`` (nested models are written in place); every key is required and no other allowed (the prompt asks for
    all of them, a grammar that makes a key optional lets a small model stop before it, and OpenAI's strict mode
    wants exactly this); a key the reader merely tolerates, untyped (``Any``), is left out. The reader stays the
    tolerant one: it still takes an answer the schema would not (a missing key, a number written as a string).
    """
    full = model.model_json_schema()
    return _plain(full, full.get("$defs", {}))


def _plain(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        return _plain(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    plain = {key: value for key, value in node.items() if key not in _UNSENT}
    if "properties" in plain:
        properties = {name: _plain(sub, defs) for name, sub in plain["properties"].items()}
        properties = {name: sub for name, sub in properties.items() if sub}
        plain.update(properties=properties, required=list(properties), additionalProperties=False)
    if "items" in plain:
        plain["items"] = _plain(plain["items"], defs)
    if "anyOf" in plain:
        plain["anyOf"] = [_plain(sub, defs) for sub in plain["anyOf"]]
    return plain


# Beside its strings' own length: a number (the grammar's longest, in practice a few digits), true/false/null.
_SCALAR_CHARS = {"number": 20, "integer": 20, "boolean": 5, "null": 4}


def longest_answer(schema: Mapping[str, Any]) -> int | None:
    """The most characters of JSON an answer following ``schema`` can hold, as a grammar writes it (one blank
    after each mark at most); ``None`` when the schema leaves it unbounded (a string without ``maxLength``, a list
    without ``maxItems``). A prompt's ``max_tokens`` must hold it, or the answer is cut mid-JSON.
    """
    if "enum" in schema:
        return max(len(json.dumps(value)) for value in schema["enum"])
    if "anyOf" in schema:
        options = [longest_answer(option) for option in schema["anyOf"]]
        return None if None in options else max(n for n in options if n is not None)
    kind = str(schema.get("type"))
    if kind == "object":
        fields = [longest_answer(sub) for sub in schema["properties"].values()]
        if None in fields:
            return None
        keys = sum(len(json.dumps(name)) + 4 for name in schema["properties"])  # the key, ": " and ", "
        return 4 + keys + sum(n for n in fields if n is not None)
    if kind == "array":
        item, most = longest_answer(schema["items"]), schema.get("maxItems")
        return None if item is None or most is None else 4 + most * (item + 2)
    if kind == "string":
        return None if "maxLength" not in schema else schema["maxLength"] + 3
    return _SCALAR_CHARS[kind]


# -- reading answers --------------------------------------------------------------------


def lower_keys(data: object) -> object:
    """``data`` with every object's keys lower-cased (models write "Insight" or "NOVELTY")."""
    if isinstance(data, dict):
        return {str(k).lower(): lower_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [lower_keys(v) for v in data]
    return data


def summarise(error: ValidationError) -> str:
    """A validation error in one line: the first problem's field and reason, and how many others there are."""
    problems = error.errors()
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    if first["type"] == "answer":
        what = first["msg"]
    elif first["type"] == "missing":
        what = "missing"
    elif first["type"] in ("model_type", "model_attributes_type", "dict_type"):
        what = f"an object is needed, not {_kind_of(first['input'])}"
    else:
        what = f"{first['msg'].lower()}, not {_kind_of(first['input'])}"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {what}{more}" if where else f"{what}{more}"


def check(model: type[M], data: object) -> M:
    """``data`` read as ``model``, keys in any case; :class:`AnswerRejected` with a one-line reason otherwise."""
    try:
        return model.model_validate(lower_keys(data))
    except ValidationError as exc:
        raise AnswerRejected(summarise(exc)) from None


def listed(data: object, key: str) -> list[Any]:
    """The list a list answer holds: ``{key: [...]}`` (its own keys in any case) or a bare list; refused otherwise."""
    if isinstance(data, dict):
        data = {str(k).lower(): v for k, v in data.items()}.get(key)
    if not isinstance(data, list):
        raise AnswerRejected(f'{key}: a list is needed ({{"{key}": [...]}})')
    return data


def checked_each(model: type[M], items: list[Any], key: str) -> list[tuple[int, M]]:
    """The items of a list answer that read as ``model``, each with its position. One that does not is left out,
    as the others are still good; when none does, the answer is refused with the first one's reason (named
    ``key.position``) and how many more failed.
    """
    found, reasons = [], []
    for position, item in enumerate(items):
        try:
            found.append((position, check(model, item)))
        except AnswerRejected as exc:
            reasons.append(f"{key}.{position}: {exc.reason}")
    if reasons and not found:
        raise AnswerRejected(reasons[0] + (f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""))
    return found


def opening(text: str, limit: int = 40) -> str:
    """How an answer begins, for a reason that says what came instead of what was asked."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def json_value(text: str) -> Any:
    """The JSON in an answer (fences and chatter tolerated); refused when there is none."""
    data = extract_json(text)
    if data is None:
        raise AnswerRejected(f"no JSON in the answer (it begins {opening(text)})")
    return data


def json_object(text: str) -> dict[str, Any]:
    """The JSON object in an answer, keys lower-cased; refused when there is none or it is something else."""
    data = json_value(text)
    if not isinstance(data, dict):
        raise AnswerRejected(f"a JSON object is needed, not {_kind_of(data)}")
    return {str(k).lower(): v for k, v in data.items()}


_MARKUP = re.compile(r"<(?:!doctype|html|head|body|div|p|span|table|ul|ol|li|h[1-6])\b[^>]*>", re.IGNORECASE)
# A fence on its own line (a quote may carry one inline); blanks but not line ends before it, so a run of empty
# lines is not rescanned from each of them.
_FENCE_LINE = re.compile(r"^[^\S\n]*```", re.MULTILINE)
_JSON_START = re.compile(r"[{\[]\s*[\"{\[]")
MIN_WORDS = 3


def looks_like_json(answer: str) -> bool:
    """Whether the answer is JSON (whole, or begun): not "[1] The passage ...", which cites a passage."""
    if _JSON_START.match(answer):
        return True
    try:
        return isinstance(json.loads(answer), (dict, list))
    except (ValueError, RecursionError):
        return False


def prose(text: str, asked: str = "a paragraph") -> str:
    """The text of an answer that asked for prose, cleaned; refused when it is empty, too short to be one, or
    JSON, a code block or HTML instead.
    """
    answer = clean_text(text)
    if not answer:
        raise AnswerRejected("empty answer")
    if looks_like_json(answer):
        raise AnswerRejected(f"JSON where {asked} was asked (it begins {opening(answer)})")
    if _FENCE_LINE.search(answer):
        raise AnswerRejected(f"a code block where {asked} was asked (it begins {opening(answer)})")
    if _MARKUP.match(answer):  # begins with a tag: a paragraph about HTML may still name one
        raise AnswerRejected(f"HTML where {asked} was asked (it begins {opening(answer)})")
    if len(answer.split()) < MIN_WORDS:
        raise AnswerRejected(f"{opening(answer)} is too short to be {asked}")
    return answer
