"""Every prompt the product sends, as a template with named fields and a parser.

A :class:`Prompt` knows its template, the shape of the answer it expects and how
to turn raw model text into a typed result (``None`` when it cannot). Prompts
register themselves by ``kind``; the offline provider must answer every kind
(a test walks this registry).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

REGISTRY: dict[str, Prompt[Any]] = {}


@dataclass(frozen=True)
class Prompt(Generic[T]):
    """A prompt template. ``parse`` returns the typed answer or ``None``."""

    kind: str
    template: str
    parse: Callable[[str], T | None]
    system: str | None = None
    temperature: float = 0.7
    max_tokens: int = 700
    json_answer: bool = False

    def __post_init__(self) -> None:
        if self.kind in REGISTRY:
            raise ValueError(f"prompt kind {self.kind!r} is defined twice")
        REGISTRY[self.kind] = self

    @property
    def fields(self) -> frozenset[str]:
        """The template's named placeholders: what a caller must supply (and the offline provider reads)."""
        return frozenset(name for _, name, _, _ in string.Formatter().parse(self.template) if name)

    def render(self, fields: dict[str, Any]) -> str:
        """The prompt text; a missing field is a programming error, named, rather than a silent blank."""
        missing = self.fields - fields.keys()
        if missing:
            raise KeyError(f"prompt {self.kind!r} needs fields {sorted(missing)}")
        return self.template.format_map({k: fields[k] for k in self.fields})

    def messages(self, fields: dict[str, Any]) -> list[dict[str, str]]:
        """The chat messages a model is sent: the system prompt, when there is one, then the rendered template."""
        user = {"role": "user", "content": self.render(fields)}
        return [{"role": "system", "content": self.system}, user] if self.system else [user]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any | None:
    """The first JSON object or array in a model's answer, tolerating code fences and chatter."""
    if not text:
        return None
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
        for opener, closer in ("{}", "[]"):
            start = candidate.find(opener)
            end = candidate.rfind(closer)
            if 0 <= start < end:
                try:
                    return json.loads(candidate[start : end + 1])
                except json.JSONDecodeError:
                    continue
    return None


@overload
def clamp01(value: Any) -> float | None: ...


@overload
def clamp01(value: Any, default: float) -> float: ...


def clamp01(value: Any, default: float | None = None) -> float | None:
    """A score in [0, 1]; ``default`` when the value is not a number (so a model's "0.X" never passes as one)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if number != number:  # NaN
        return default
    return min(1.0, max(0.0, number))


def clean_text(text: str | None) -> str:
    """A model's text without the surrounding blanks and quotes models like to add."""
    return (text or "").strip().strip('"').strip()


_PASSAGE = re.compile(r"^\[(\d+)\](?: \(([^)]*)\))? ", re.MULTILINE)


def format_passages(texts: list[str], labels: list[str | None] | None = None) -> str:
    """Numbered passages, one paragraph each: ``[1] (label) text``.

    The offline provider reads them back with :func:`split_passages`, so it
    answers from exactly what a model would see.
    """
    if not texts:
        return "(none)"
    labels = labels or [None] * len(texts)
    return "\n\n".join(
        f"[{i}] " + (f"({label}) " if label else "") + " ".join(text.split())
        for i, (text, label) in enumerate(zip(texts, labels, strict=True), 1)
    )


def split_passages(block: str) -> list[str]:
    """The passage texts of a :func:`format_passages` block (labels dropped)."""
    if not block or block.strip() == "(none)":
        return []
    starts = list(_PASSAGE.finditer(block))
    if not starts:
        return [block.strip()]
    ends = [m.start() for m in starts[1:]] + [len(block)]
    return [block[m.end() : end].strip() for m, end in zip(starts, ends, strict=True)]
