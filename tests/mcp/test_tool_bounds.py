"""Every MCP tool's input schema states the bounds the server holds its arguments to, and the server holds to each
one it states.

The schemas are read as an agent reads them (``list_tools`` of the real server, connected in process, over a copy
of the small corpus): every number a tool takes is bounded on both sides, and each bound, the limit on what one
call runs itself (an ``if`` on ``background``) among them, is sent at the bound, which must be taken, and just past
it, which must be refused, naming the argument. A run asked for in the background is only queued: the test holds
the database's worker lock as a worker would, so no worker starts and no queued job runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.types import CallToolResult

from explorer.jobs import worker
from explorer.jobs.foreground import PER_REQUEST
from explorer.mcp_server import build_server
from explorer.runtime import Runtime

NUMBERS = {"integer", "number"}
BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
BLANK = "   "


@dataclass(frozen=True)
class Slot:
    """A tool's argument, the schema it has, and the other arguments that schema holds under (the ``if`` of a
    condition, or its opposite for the argument's own bounds).
    """

    tool: str
    name: str
    schema: dict[str, Any]
    context: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.tool}.{self.name} {self.context or ''}"


@dataclass
class Agent:
    """The test's side of an in-process connection to the server."""

    portal: BlockingPortal
    client: Client

    def tools(self) -> dict[str, dict[str, Any]]:
        """Each tool's input schema, by name."""
        return {tool.name: tool.input_schema for tool in self.portal.call(self.client.list_tools).tools}

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        return self.portal.call(self.client.call_tool, tool, arguments)


@pytest.fixture
def agent(corpus_runtime: Runtime) -> Iterator[Agent]:
    with (
        worker._worker_lock(corpus_runtime) as free,  # standing in for a worker: queued jobs wait, none starts
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(build_server(corpus_runtime))) as client,
    ):
        assert free
        yield Agent(portal, client)


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """An argument's schema with ``null`` taken out of an ``anyOf``: what a value sent must meet."""
    if "anyOf" not in schema:
        return schema
    sent = [s for s in schema["anyOf"] if s.get("type") != "null"]
    assert len(sent) == 1, schema
    return {**{k: v for k, v in schema.items() if k != "anyOf"}, **sent[0]}


def conditions(schema: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """The ``if``/``then`` of a tool's schema: the arguments that make it hold, that make it not hold, and the
    properties it bounds. Only a flag's value is understood as a condition; anything else fails here.
    """
    if "if" not in schema:
        return
    flags = schema["if"]["properties"]
    assert set(schema["if"]) == {"properties"} and all(set(s) == {"const"} for s in flags.values()), schema["if"]
    holds = {name: s["const"] for name, s in flags.items()}
    assert all(isinstance(value, bool) for value in holds.values()), schema["if"]
    yield holds, {name: not value for name, value in holds.items()}, schema["then"]["properties"]


def slots(tools: dict[str, dict[str, Any]]) -> Iterator[Slot]:
    """Every argument of every tool; one a condition bounds further comes twice, under the condition (with the
    added bounds) and under its opposite (with its own alone).
    """
    for tool, schema in tools.items():
        properties = {name: nullable(s) for name, s in schema["properties"].items()}
        tightened: dict[str, dict[str, Any]] = {}
        for holds, fails, bounded in conditions(schema):
            for name, extra in bounded.items():
                yield Slot(tool, name, {**properties[name], **extra}, holds)
                tightened[name] = fails
        for name, argument in properties.items():
            yield Slot(tool, name, argument, tightened.get(name, {}))


def at_and_past(schema: dict[str, Any], keyword: str) -> tuple[float, float]:
    """A value at the bound ``keyword`` states (just inside an exclusive one) and a value just past it."""
    limit, integer = schema[keyword], schema["type"] == "integer"
    inward = math.inf if "inimum" in keyword else -math.inf

    def beside(value: float, direction: float) -> float:
        if integer:
            return int(value) + (1 if direction > 0 else -1)
        return math.nextafter(value, direction)

    if keyword.startswith("exclusive"):
        return beside(limit, inward), limit
    return limit, beside(limit, -inward)


def arguments(agent: Agent, schema: dict[str, Any], slot: Slot, value: Any) -> dict[str, Any]:
    """A call's arguments with ``value`` for the slot's: a fresh session where one is named (a call before may
    have moved another), a choice's first value, a concept for a text; a run that can be queued is queued (the
    limit of one call is the only bound a run in the call itself has beyond the queued one's).
    """
    given: dict[str, Any] = {"background": True} if "background" in schema["properties"] else {}
    for name in schema.get("required", []):
        if name == "session_id":
            created = agent.call("wander_create_session", {"name": "bounds", "seed_concept": "unicode strings"})
            assert not created.is_error, created.content
            given[name] = created.structured_content["id"]  # type: ignore[index]
        elif "enum" in schema["properties"][name]:
            given[name] = schema["properties"][name]["enum"][0]
        else:
            given[name] = "unicode strings"
    return {**given, **slot.context, slot.name: value}


def numbers(agent: Agent) -> tuple[dict[str, dict[str, Any]], list[Slot]]:
    """The tools' schemas and their numeric arguments."""
    tools = agent.tools()
    return tools, [slot for slot in slots(tools) if slot.schema.get("type") in NUMBERS]


def test_every_number_a_tool_takes_is_bounded_on_both_sides(agent: Agent) -> None:
    tools, found = numbers(agent)
    assert {slot.tool for slot in found} >= {"wander_create_session", "wander_run", "dream_run", "search"}
    unbounded = [
        str(slot)
        for slot in found
        if not (
            {"minimum", "exclusiveMinimum"} & slot.schema.keys()
            and {"maximum", "exclusiveMaximum"} & slot.schema.keys()
        )
    ]
    assert not unbounded, unbounded


def test_the_server_holds_to_every_bound_a_tool_states(agent: Agent) -> None:
    tools, found = numbers(agent)
    wrong: list[str] = []
    probed = 0
    for slot in found:
        for keyword in BOUNDS:
            if keyword not in slot.schema:
                continue
            probed += 1
            at, past = at_and_past(slot.schema, keyword)
            taken = agent.call(slot.tool, arguments(agent, tools[slot.tool], slot, at))
            refused = agent.call(slot.tool, arguments(agent, tools[slot.tool], slot, past))
            said = " ".join(getattr(block, "text", "") for block in refused.content)
            if taken.is_error or not refused.is_error or slot.name not in said:  # refused for this argument
                wrong.append(f"{slot} {keyword}: at {at!r} -> {taken.content}, past {past!r} -> {refused.content}")
    assert probed >= 24, probed  # every tool's numbers, and the two limits of one call, were reached
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("tool", "count"), [("wander_run", "n_steps"), ("dream_run", "dreams")])
def test_the_most_one_call_runs_is_stated_as_a_condition(agent: Agent, tool: str, count: str) -> None:
    schema = agent.tools()[tool]
    assert schema["if"] == {"properties": {"background": {"const": False}}}
    assert schema["then"] == {"properties": {count: {"maximum": PER_REQUEST}}}


def admits(schema: dict[str, Any], text: str) -> bool:
    """Whether a string's schema admits ``text``, as JSON Schema reads its length and (unanchored) pattern."""
    pattern = schema.get("pattern")
    fits = schema.get("minLength", 0) <= len(text) <= schema.get("maxLength", len(text))
    return fits and (pattern is None or re.search(pattern, text) is not None)


def test_a_blank_text_is_refused_exactly_where_a_tool_says(agent: Agent) -> None:
    """The engine strips a seed concept, an injected concept or a query and refuses what is left empty: a text of
    spaces is refused, naming the argument, where the schema asks for a character, and taken elsewhere (a default
    name, no attractor). Ids are left out (a blank one names nothing, as a mistyped one does), and so are the
    tools that need one beside a session's.
    """
    tools = agent.tools()
    named = {
        tool
        for tool, schema in tools.items()
        if {n for n in schema.get("required", []) if n.endswith("_id")} - {"session_id"}
    }
    texts = [
        slot
        for slot in slots(tools)
        if slot.schema.get("type") == "string"
        and not {"enum", "format"} & slot.schema.keys()
        and not slot.name.endswith("_id")
        and slot.tool not in named
    ]
    assert {(s.tool, s.name) for s in texts} >= {("wander_create_session", "seed_concept"), ("search", "query")}
    wrong = []
    for slot in texts:
        answer = agent.call(slot.tool, arguments(agent, tools[slot.tool], slot, BLANK))
        said = " ".join(getattr(block, "text", "") for block in answer.content)
        documented = not admits(slot.schema, BLANK)
        if answer.is_error != documented or (documented and slot.name not in said):
            wrong.append(f"{slot} {slot.schema}: {said[:200]}")
    assert not wrong, "\n".join(wrong)


def said(answer: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in answer.content)


def test_every_number_a_tool_takes_is_a_finite_number_of_its_type(agent: Agent) -> None:
    """NaN and the infinities (which the SDK's client sends as null, so null too), and a boolean, are refused
    naming the argument; a whole number is a number.
    """
    tools, found = numbers(agent)
    wrong: list[str] = []
    for slot in found:
        for fault in (math.nan, math.inf, -math.inf, None, True, False):
            answer = agent.call(slot.tool, arguments(agent, tools[slot.tool], slot, fault))
            if not answer.is_error or slot.name not in said(answer):
                wrong.append(f"{slot} {fault!r}: {answer.content}")
        if slot.schema["type"] == "number":
            whole = math.floor(slot.schema.get("minimum", slot.schema.get("exclusiveMinimum", -1)) + 1)
            taken = agent.call(slot.tool, arguments(agent, tools[slot.tool], slot, whole))
            if taken.is_error:
                wrong.append(f"{slot} {whole!r}: {taken.content}")
    assert {(s.tool, s.name) for s in found} >= {("dream_run", "budget_cents"), ("consolidate_run", "budget_cents")}
    assert not wrong, "\n".join(wrong)


def test_every_text_a_tool_takes_is_one_a_store_can_hold(agent: Agent) -> None:
    """A NUL or a lone surrogate in any text argument, ids too, is refused before the tool runs, naming it."""
    tools = agent.tools()
    texts = [
        slot
        for slot in slots(tools)
        if slot.schema.get("type") == "string" and not {"enum", "format"} & slot.schema.keys()
    ]
    wrong = []
    for slot in texts:
        for fault in ("tide\x00s", "tide\ud800s"):
            answer = agent.call(slot.tool, arguments(agent, tools[slot.tool], slot, fault))
            if not answer.is_error or slot.name not in said(answer) or "Traceback" in said(answer):
                wrong.append(f"{slot} {fault!r}: {said(answer)[:200]}")
    assert len(texts) >= 12 and not wrong, "\n".join(wrong)
