"""Every prompt the product sends, as a template with named fields and a reader for its answer.

A :class:`Prompt` knows its template, the shape of the answer it expects and how
to turn raw model text into a typed result. :meth:`Prompt.read` gives the value
or the reason it was refused (too long, the wrong shape, a field of the wrong
type: see :mod:`explorer.prompts.answers`); :meth:`Prompt.parse` gives the value
or ``None``. Prompts register themselves by ``kind``; the offline provider must
answer every kind (a test walks this registry).
"""

from __future__ import annotations

import importlib
import json
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

REGISTRY: dict[str, Prompt[Any]] = {}

PROMPT_MODULES = (
    "explorer.prompts.reading",
    "explorer.prompts.wander",
    "explorer.prompts.dreaming",
    "explorer.prompts.consolidation",
)

# English averages about four characters per token. Six leaves room for long words and a model that overruns
# its budget a little (some servers ignore max_tokens), and still catches a runaway answer.
CAP_CHARS_PER_TOKEN = 6


class AnswerRejected(ValueError):
    """A model's answer that cannot be used, and why (a phrase: "themes: a list of short names is needed...")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Prompt(Generic[T]):
    """A prompt template and the reader of its answer.

    ``reader`` turns the answer's text into the typed value, raising :class:`AnswerRejected` with a reason when
    it cannot. ``schema``, for a prompt whose answer is JSON, is that JSON's schema, derived from the pydantic
    model the reader checks it with (:func:`explorer.prompts.answers.answer_schema`): the gateway asks the model
    for it (:mod:`explorer.providers.structured`); ``None`` for free text. ``max_chars`` caps the answer's length
    (by default ``max_tokens`` × :data:`CAP_CHARS_PER_TOKEN`; the settings' ``answer_caps`` override it per kind,
    checked by :func:`check_answer_caps`).
    """

    kind: str
    template: str
    reader: Callable[[str], T]
    system: str | None = None
    temperature: float = 0.7
    max_tokens: int = 700
    schema: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    max_chars: int | None = None

    def __post_init__(self) -> None:
        if self.kind in REGISTRY:
            raise ValueError(f"prompt kind {self.kind!r} is defined twice")
        REGISTRY[self.kind] = self

    @property
    def json_answer(self) -> bool:
        """Whether the answer is JSON (with the shape :attr:`schema` gives) rather than free text."""
        return self.schema is not None

    @property
    def answer_cap(self) -> int:
        """The longest answer accepted by default, in characters: ``max_chars``, else derived from ``max_tokens``."""
        return self.max_chars or self.max_tokens * CAP_CHARS_PER_TOKEN

    def read(self, text: str | None, cap: int | None = None) -> tuple[T | None, str | None]:
        """``(value, None)`` for a usable answer, ``(None, reason)`` otherwise.

        The length cap is checked first, so a runaway answer is never parsed. The reason is a phrase about the
        answer ("answer of 204800 characters is over the 1500-character cap for implant"); the caller adds who
        gave it. ``cap`` replaces :attr:`answer_cap` (a configured cap).
        """
        text = text or ""
        cap = cap or self.answer_cap
        if len(text) > cap:
            return None, f"answer of {len(text)} characters is over the {cap}-character cap for {self.kind}"
        if not text.strip():
            return None, "empty answer"
        try:
            value = self.reader(text)
        except AnswerRejected as exc:
            return None, exc.reason
        if value is None:  # a reader that did not say why
            return None, f"answer does not have the shape {self.kind} asks for"
        return value, None

    def parse(self, text: str | None) -> T | None:
        """The typed answer, or ``None`` when :meth:`read` refuses it."""
        return self.read(text)[0]

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


def load_prompts() -> dict[str, Prompt[Any]]:
    """Every prompt, its module imported: the registry, complete."""
    for module in PROMPT_MODULES:
        importlib.import_module(module)
    return REGISTRY


def check_answer_caps(caps: Mapping[str, int]) -> None:
    """Refuse answer length caps (``[explorer.answer_caps]`` in explorer.toml, characters by prompt kind) that
    name no prompt kind or are not a positive whole number, with a ``ValueError`` naming it.
    """
    known = load_prompts()
    for kind, cap in caps.items():
        if kind not in known:
            raise ValueError(f"no prompt kind {kind!r} to cap; the kinds are {', '.join(sorted(known))}")
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ValueError(f"the answer cap for {kind} must be a positive number of characters, not {cap!r}")


def answer_caps(caps: Mapping[str, int] | None = None) -> dict[str, int]:
    """The cap in force for every prompt kind, in characters, with ``caps`` over the defaults."""
    caps = caps or {}
    return {kind: caps.get(kind) or prompt.answer_cap for kind, prompt in sorted(load_prompts().items())}


# Possessive blanks: the blanks after an unclosed fence were otherwise handed back one by one to a scan for ``` that
# could never succeed (a fence and 20 KB of blanks took 8 s).
_FENCE = re.compile(r"```(?:json)?\s*+(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any | None:
    """A model's answer as JSON: the whole of it when it is JSON, else the first JSON object or array in it,
    tolerating code fences and chatter, and line breaks written as they are inside a string (``strict=False``):
    llama-cpp-python's JSON grammar lets a model write them, and they say what an escaped one would.
    """
    if not text:
        return None
    try:  # an answer that is JSON whole is taken whole: a fence quoted inside one of its texts is no answer
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):
        pass
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            return json.loads(candidate, strict=False)
        except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than Python recurses
            pass
        for opener, closer in ("{}", "[]"):
            start = candidate.find(opener)
            end = candidate.rfind(closer)
            if 0 <= start < end:
                try:
                    return json.loads(candidate[start : end + 1], strict=False)
                except (ValueError, RecursionError):
                    continue
    return None


def clean_text(text: str | None) -> str:
    """A model's text without the surrounding blanks and quotes models like to add."""
    return (text or "").strip().strip('"').strip()


_PASSAGE = re.compile(r"^\[(\d+)\](?: \(([^)\n]*)\))? ", re.MULTILINE)  # a label on its line: not rescanned per line


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


def fitting(texts: Sequence[str], words: int) -> list[int]:
    """The positions of the texts one prompt can quote whole within ``words`` words together, in their order: as many
    as fit, one that would overrun passed over for the next. Why words: a prompt and its answer must fit a local
    model's context (4,096 tokens for the tests' server), and a word is one to two tokens in any tokenizer.
    """
    kept, total = [], 0
    for position, text in enumerate(texts):
        size = len(text.split())
        if total + size <= words:
            kept.append(position)
            total += size
    return kept


def split_passages(block: str) -> list[str]:
    """The passage texts of a :func:`format_passages` block (labels dropped)."""
    if not block or block.strip() == "(none)":
        return []
    starts = list(_PASSAGE.finditer(block))
    if not starts:
        return [block.strip()]
    ends = [m.start() for m in starts[1:]] + [len(block)]
    return [block[m.end() : end].strip() for m, end in zip(starts, ends, strict=True)]
