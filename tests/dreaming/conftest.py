"""Helpers for the dreaming tests: memories built field by field, written to a
real store with real embeddings, and a scripted gateway for the pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from explorer.prompts import Prompt
from explorer.providers.gateway import Answer
from explorer.records import Node, Relation
from explorer.runtime import Runtime
from explorer.store import corpus


def memory(text: str = "a memory", **fields: Any) -> Node:
    """A node for the pure functions; ``id`` may be given for readable tests."""
    return Node(type=fields.pop("type", "raw_chunk"), text=text, **fields)


def link(a: Node | str, b: Node | str, kind: str = "EXTENDS", confidence: float = 1.0, **fields: Any) -> Relation:
    return Relation(
        getattr(a, "id", a),
        getattr(b, "id", b),
        kind,
        created_by=fields.pop("created_by", "test"),
        confidence=confidence,
        **fields,
    )


def days_ago(days: float) -> datetime:
    return datetime.now(UTC) - timedelta(days=days)


def store(runtime: Runtime, nodes: Sequence[Node], relations: Sequence[Relation] = ()) -> None:
    """Write nodes (embedded with the runtime's embedder when they have no vector) and relations.

    ``created_at`` given on a node is written too, so a test can make memories old.
    """
    missing = [n for n in nodes if n.embedding is None]
    if missing:
        for node, vector in zip(missing, runtime.embedder.embed([n.text for n in missing]), strict=True):
            node.embedding = vector
    with runtime.db.transaction() as con:
        corpus.insert_nodes(con, nodes)
        corpus.insert_relations(con, relations)
        for node in nodes:
            if node.created_at is not None:
                corpus.update_node_fields(con, node.id, created_at=node.created_at)


class ScriptedGateway:
    """A gateway whose answers come from ``script(prompt, fields) -> text``; an
    exception raised by the script becomes a failed answer, as the real gateway's would.
    """

    def __init__(self, script: Callable[[Prompt, dict], str]):
        self.script = script
        self.calls: list[tuple[str, dict]] = []

    def ask(
        self,
        prompt: Prompt,
        fields: dict,
        *,
        tier: str = "local",
        purpose: str | None = None,
        session_id: str | None = None,
        budget: object = None,
    ) -> Answer:
        self.calls.append((prompt.kind, fields))
        try:
            text = self.script(prompt, fields)
        except Exception as exc:
            return Answer(None, "", "scripted", "local", error=f"scripted failure: {exc}")
        value = prompt.parse(text)
        return Answer(
            value,
            text,
            "scripted",
            "local",
            attempts=1,
            error=None if value is not None else f"answer to {prompt.kind} does not parse",
        )

    def map(self, work: Callable, items: list, progress: object = None) -> list:
        """One item after another, so ``calls`` keeps the order a test reads (the real gateway's concurrency
        is tested in tests/providers).
        """
        return [work(item) for item in items]

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


@pytest.fixture
def scripted() -> Callable[[Callable[[Prompt, dict], str]], ScriptedGateway]:
    return ScriptedGateway
