"""The built-in offline provider: answers every prompt from its own content.

It is not a language model. It extracts: keyphrases (YAKE), the sentences of
the input that embedding similarity ranks highest, and fixed connectives that
say how they relate. Its answers are labelled with the model name
``offline/extractive`` wherever they are stored or shown. It exists so that the
whole product runs with no key and no server; configure a model for real
reflection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from explorer.offline.kit import OfflineKit
from explorer.prompts import Prompt

Answerer = Callable[[dict[str, Any], OfflineKit], str]
Compared = Callable[[dict[str, Any]], list[str]]
ANSWERS: dict[str, Answerer] = {}
COMPARED: dict[str, Compared] = {}


def answers(kind: str, compares: Compared | None = None) -> Callable[[Answerer], Answerer]:
    """Register the offline answer for one prompt kind, and optionally the texts that answer embeds to compare
    (so a batch of requests can have them embedded together first: :meth:`OfflineProvider.prepare`).
    """

    def register(fn: Answerer) -> Answerer:
        if kind in ANSWERS:
            raise ValueError(f"offline answer for {kind!r} is defined twice")
        ANSWERS[kind] = fn
        if compares is not None:
            COMPARED[kind] = compares
        return fn

    return register


class OfflineProvider:
    """The gateway's model when none is configured: every prompt answered from its own fields, reproducibly."""

    def __init__(self, kit: OfflineKit):
        self.kit = kit

    def answer(self, prompt: Prompt[Any], fields: dict[str, Any]) -> str:
        """The raw answer text, as a model would give it, so the prompt's own parser reads it like any other."""
        load_answers()
        try:
            fn = ANSWERS[prompt.kind]
        except KeyError:
            raise LookupError(f"the offline provider has no answer for prompt kind {prompt.kind!r}") from None
        return fn(fields, self.kit)

    def prepare(self, requests: Sequence[tuple[Prompt[Any], dict[str, Any]]]) -> None:
        """Embed in one batch every text these requests' answers will compare; the embedder's cache then serves
        each answer. A request whose texts cannot be told is simply not prepared for.
        """
        load_answers()
        texts: dict[str, None] = {}
        for prompt, fields in requests:
            compared = COMPARED.get(prompt.kind)
            if compared is not None:
                try:
                    texts.update(dict.fromkeys(compared(fields)))
                except Exception:  # the answer itself will meet (and report) the trouble
                    continue
        if texts:
            self.kit.embed(list(texts))


def load_answers() -> None:
    """Import every module that registers answers (and the prompts they answer)."""
    import importlib
    import pkgutil

    import explorer.offline as package
    import explorer.prompts as prompts

    for module in pkgutil.iter_modules(prompts.__path__):
        importlib.import_module(f"explorer.prompts.{module.name}")
    for module in pkgutil.iter_modules(package.__path__):
        if module.name != "kit":
            importlib.import_module(f"explorer.offline.{module.name}")
