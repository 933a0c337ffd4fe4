"""A record's JSON form, declared once on the record: what every surface prints of it, and the schema it publishes.

A record (a dataclass) lists the keys it shows, in the order they are printed, in a :class:`JsonForm`; most are
its own fields or properties, and a :class:`Computed` key says how to get a value the record does not hold as is
(a rounding, another name). ``to_json`` and the shape the API and the MCP tools publish are both derived from
that list and the record's own type hints, so the printed JSON and its published schema cannot drift apart.

Values stay Python values (datetimes, enums): each surface writes them its own way (the CLI with ``str``, the
API and the MCP tools as ISO 8601 through pydantic). A record shown inside another is shown by its own form.

The published shape is a TypedDict made from the form; a surface names it as ``Annotated[dict[str, Any], form]``
(each record module keeps such an alias, e.g. ``SessionJson``), which the type checker reads as a dict and
pydantic (FastAPI's response models, the MCP SDK) as that TypedDict.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, NotRequired, get_args, get_origin, get_type_hints

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema
from typing_extensions import TypedDict  # pydantic reads typing's own TypedDict only from Python 3.12


@dataclass(frozen=True)
class Computed:
    """A key whose value the record works out: its name in the JSON, its type, and how to get it from a record."""

    name: str
    type: Any
    value: Callable[[Any], Any]


class JsonShape:
    """A published shape, built on first use, as an ``Annotated`` marker: pydantic reads the annotated dict as it.

    A surface that answers a record with something beside it extends the record's (:meth:`JsonForm.extended`).
    """

    def __init__(self, make: Callable[[], type]) -> None:
        self.make = make

    @functools.cached_property
    def typed_dict(self) -> type:
        """The shape's TypedDict."""
        return self.make()

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Pydantic reads the annotated dict as this shape."""
        return handler.generate_schema(self.typed_dict)


class JsonForm(JsonShape):
    """The keys a record shows, in order; ``optional`` ones are shown only when asked for (a detail view's).

    ``title`` names the published shape (the OpenAPI component, e.g. ``SessionJson``), described by the record's
    docstring and ``note`` (what a reader of the JSON must know beyond it). Declared on the record as its
    ``json_form``, it learns its record's class. For example::

        @dataclass
        class Hit(JsonRecord):
            text: str
            score: float
            json_form = JsonForm("HitJson", "text", Computed("score", float, lambda hit: round(hit.score, 4)))

        Hit("weak references", 0.123456).to_json()  # {"text": "weak references", "score": 0.1235}
        HitJson = Annotated[dict[str, Any], Hit.json_form]  # what a surface names as its answer's type
    """

    def __init__(
        self, title: str, *keys: str | Computed, optional: tuple[str, ...] = (), note: str | None = None
    ) -> None:
        super().__init__(self._shape)
        self.title = title
        self.keys = keys
        self.optional = optional
        self.note = note
        self.record: type | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.record = owner

    def dump(self, record: object, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
        """``record`` as its JSON form, without the keys in ``leave_out``."""
        shown = {}
        for key in self.keys:
            name = key.name if isinstance(key, Computed) else key
            if name not in leave_out:
                shown[name] = _shown(key.value(record) if isinstance(key, Computed) else getattr(record, key))
        return shown

    def extended(self, title: str, doc: str, **more: Any) -> JsonShape:
        """The shape with ``more`` keys after the record's."""
        return JsonShape(
            lambda: _typed_dict(title, {**get_type_hints(self.typed_dict, include_extras=True), **more}, doc)
        )

    def _shape(self) -> type:
        """A TypedDict of the keys, each typed as the record's hints say (built when first asked for, once the
        record's class is complete).
        """
        if self.record is None:
            raise TypeError(f"{self.title} is not the json_form of a record")
        hints = get_type_hints(self.record)
        items: dict[str, Any] = {}
        for key in self.keys:
            if isinstance(key, Computed):
                name, hint = key.name, key.type
            else:
                name, hint = key, hints.get(key) or get_type_hints(getattr(self.record, key).fget)["return"]
            items[name] = NotRequired[_json_type(hint)] if name in self.optional else _json_type(hint)
        about = inspect.cleandoc(self.record.__doc__ or "")
        return _typed_dict(self.title, items, f"{about}\n\n{self.note}" if self.note else about)


class JsonRecord:
    """A record with a JSON form: ``to_json`` is what every surface prints of it (the CLI's ``--json``, the API,
    the MCP tools).
    """

    json_form: ClassVar[JsonForm]

    def to_json(self) -> dict[str, Any]:
        """The record as its :attr:`json_form` shows it."""
        return self.json_form.dump(self)


def published(annotation: Any) -> Any:
    """The TypedDict an ``Annotated[dict[str, Any], form]`` stands for (``annotation`` itself otherwise): what a
    reader of the bare type, such as the MCP SDK's return types, must be given to see the shape.
    """
    marks = [m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, JsonShape)]
    return marks[0].typed_dict if marks else annotation


def _shown(value: Any) -> Any:
    """A value as JSON shows it: a record by its own form, a list item by item, anything else as it is."""
    if isinstance(value, list | tuple):
        return [_shown(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and hasattr(value, "to_json"):
        return value.to_json()
    return value


def _json_type(hint: Any) -> Any:
    """The type a hint stands for in JSON: a record with a form becomes that form's shape, within lists and
    unions too; anything else (a report pydantic reads as a dataclass, a date, an enum) is itself.
    """
    form = getattr(hint, "json_form", None)
    if isinstance(form, JsonForm):
        return form.typed_dict
    args = get_args(hint)
    if not args or get_origin(hint) is Annotated:
        return hint
    shown = tuple(_json_type(a) for a in args)
    if isinstance(hint, types.UnionType) or get_origin(hint) is typing.Union:
        return functools.reduce(operator.or_, shown)
    return get_origin(hint)[shown]


def _typed_dict(title: str, items: dict[str, Any], doc: str | None) -> type:
    shape: type = typing.cast(Callable[[str, dict[str, Any]], type], TypedDict)(title, items)
    shape.__doc__ = doc
    return shape
