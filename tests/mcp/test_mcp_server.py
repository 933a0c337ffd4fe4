"""The MCP server as an agent meets it: ``explorer mcp`` started over stdio by the SDK's own client, on a copy of
the small corpus, and every tool called through the protocol. One server serves the whole module; the tests
share its database, each with sessions of its own.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult
from typer.testing import CliRunner

import explorer.cli
from explorer.errors import Remedy
from explorer.jobs.foreground import PER_REQUEST
from explorer.mcp_server import HINTS
from explorer.providers.embeddings import HASHING

EXPLORER = Path(sys.executable).with_name("explorer")
TOOLS = {
    "wander_create_session",
    "wander_step",
    "wander_run",
    "wander_get_insights",
    "wander_inject",
    "crystal_review",
    "search",
    "dream_run",
    "dream_list",
    "dream_show",
    "consolidate_run",
    "job_status",
    "job_cancel",
}


@dataclass
class Agent:
    """The test's side of the connection: calls tools and waits for their results."""

    portal: BlockingPortal
    client: Client
    db: Path

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        return self.portal.call(self.client.call_tool, tool, arguments)

    def result(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """A call that must succeed: its structured content."""
        answer = self.call(tool, **arguments)
        assert not answer.is_error, answer.content
        assert answer.structured_content is not None
        return answer.structured_content

    def refusal(self, tool: str, **arguments: Any) -> str:
        """A call that must be refused: the one line the agent reads."""
        answer = self.call(tool, **arguments)
        assert answer.is_error, answer.structured_content
        assert answer.structured_content is None and len(answer.content) == 1
        return answer.content[0].text  # type: ignore[union-attr]

    def new_session(self, **arguments: Any) -> dict[str, Any]:
        return self.result("wander_create_session", name="a walk", seed_concept="unicode strings and text", **arguments)


def stop_workers(db: Path) -> None:
    """Job workers started for this database end with the module (one idles for a minute otherwise)."""
    for process in psutil.process_iter(["cmdline"]):
        command = process.info["cmdline"] or []
        if "worker" in command and str(db) in command:
            process.terminate()


@pytest.fixture(scope="module")
def agent(corpus_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    db = tmp_path_factory.mktemp("mcp") / "corpus.duckdb"
    shutil.copy(corpus_template, db)
    server = StdioServerParameters(
        command=str(EXPLORER), args=["mcp", "--db", str(db)], env={"EXPLORER_EMBEDDING_MODEL": HASHING}
    )
    try:
        with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
            yield Agent(portal, client, db)
    finally:
        stop_workers(db)


def test_the_tools_are_listed_with_their_input_and_output_schemas(agent: Agent) -> None:
    tools = {tool.name: tool for tool in agent.portal.call(agent.client.list_tools).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema and tool.output_schema["type"] == "object", tool.name
    create = tools["wander_create_session"].input_schema
    assert set(create["required"]) == {"name", "seed_concept"}
    assert {"attractor", "allowed_domains"} <= set(create["properties"])
    run = tools["wander_run"].input_schema["properties"]
    assert run["n_steps"]["default"] == 10 and str(PER_REQUEST) in run["n_steps"]["description"]
    assert tools["wander_get_insights"].input_schema["properties"]["min_confidence"]["default"] == 0.7
    assert tools["wander_inject"].input_schema["required"] == ["session_id", "concept"]
    assert tools["crystal_review"].input_schema["properties"]["decision"]["enum"] == ["approve", "reject", "archive"]
    step = tools["wander_step"].output_schema["properties"]
    assert {"to_locus", "trace", "residue", "crystal", "status"} <= set(step)
    insights = tools["wander_get_insights"].output_schema["properties"]
    assert set(insights) == {"session", "crystals", "resonances"}
    assert tools["search"].annotations is not None and tools["search"].annotations.read_only_hint


def test_an_agent_walks_steers_and_reads_the_insights(agent: Agent) -> None:
    session = agent.new_session(seed=1)
    assert session["status"] == "active" and session["step_count"] == 0 and session["random_seed"] == 1

    ran = agent.result("wander_run", session_id=session["id"], n_steps=3)
    assert ran["job"] is None
    assert ran["result"]["steps_completed"] == 3 and ran["result"]["stopped_reason"] is None

    step = agent.result("wander_step", session_id=session["id"])
    assert step["step_number"] == 4 and step["status"] == "active" and step["to_locus"]["concept"]
    assert "consolidation" not in step  # the session goes on

    injected = agent.result("wander_inject", session_id=session["id"], concept="bytes and encodings")
    assert injected["force_visit"] and injected["locus"]["concept"] == "bytes and encodings"
    steered = agent.result("wander_step", session_id=session["id"])
    assert steered["to_locus"]["id"] == injected["locus"]["id"]

    insights = agent.result("wander_get_insights", session_id=session["id"], min_confidence=0.0)
    assert insights["session"]["step_count"] == 5
    assert all(r["status"] != "invalidated" and r["themes"] for r in insights["resonances"])
    assert all(c["session_id"] == session["id"] for c in insights["crystals"])
    strict = agent.result("wander_get_insights", session_id=session["id"], min_confidence=1.0)
    assert all(c["confidence"] >= 1.0 for c in strict["crystals"])

    hits = agent.result("search", query="bytes and encodings", types=["locus"], limit=3)["hits"]
    assert 0 < len(hits) <= 3 and all(h["type"] == "locus" for h in hits)
    assert hits[0]["text"] == "bytes and encodings" and hits[0]["session_id"] == session["id"]


def test_a_run_reports_its_progress_step_by_step(agent: Agent) -> None:
    session = agent.new_session()
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    answer = agent.portal.call(
        lambda: agent.client.call_tool(
            "wander_run", {"session_id": session["id"], "n_steps": 2}, progress_callback=progress
        )
    )
    assert not answer.is_error
    assert seen == [(1, 2), (2, 2)]


def test_a_crystal_is_reviewed_once_unless_forced(agent: Agent) -> None:
    session = agent.new_session(seed=2)
    agent.result("wander_run", session_id=session["id"], n_steps=4)
    made = subprocess.run(  # a person forces a crystal at the walk's current locus
        [str(EXPLORER), "wander", "crystallize", session["id"], "--db", str(agent.db), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    crystal = json.loads(made.stdout)["crystal"]
    assert crystal is not None

    approved = agent.result("crystal_review", crystal_id=crystal["id"], decision="approve", notes="holds up")
    assert approved["review_state"] == "approved" and approved["validation_notes"] == "holds up"
    assert approved["human_approved_by"] == "mcp agent"
    assert agent.refusal("crystal_review", crystal_id=crystal["id"], decision="reject") == (
        f"crystal {crystal['id']} is already approved; a review cannot make it rejected unless forced; "
        "pass force: true to change the decision"
    )
    rejected = agent.result("crystal_review", crystal_id=crystal["id"], decision="reject", force=True)
    assert rejected["review_state"] == "rejected"


def test_business_failures_are_tool_results_with_the_engines_line(agent: Agent) -> None:
    assert agent.refusal("crystal_review", crystal_id="nope", decision="approve") == (
        "no crystal 'nope'; wander_get_insights lists a session's crystals with their ids"
    )
    assert agent.refusal("wander_step", session_id="nope") == (
        "no wander session 'nope'; use the id wander_create_session returned"
    )
    assert agent.refusal("wander_get_insights", session_id="nope").startswith("no wander session 'nope'")
    assert agent.refusal("job_status", job_id="nope") == "no job 'nope'; use the job id a background run returned"
    assert agent.refusal("search", query="text", types=["dream"]).startswith("Error executing tool search")
    session = agent.new_session()
    assert agent.refusal("wander_run", session_id=session["id"], n_steps=PER_REQUEST + 1) == (
        f"n_steps must be at most {PER_REQUEST} in one call, not {PER_REQUEST + 1}; pass background: true for more"
    )


def test_a_session_that_has_ended_refuses_steps(agent: Agent) -> None:
    session = agent.new_session(max_steps=1)
    last = agent.result("wander_step", session_id=session["id"])
    assert last["status"] == "completed"
    assert last["consolidation"]["status"]  # completing the session consolidated the walks
    refused = agent.refusal("wander_step", session_id=session["id"])
    assert refused.startswith(f"session {session['id']} is completed")
    assert refused.endswith("; start a new session with wander_create_session")
    assert agent.refusal("wander_inject", session_id=session["id"], concept="anything").startswith(
        f"cannot inject into session {session['id']}: it is completed"
    )


def test_a_dream_runs_now_or_as_a_job(agent: Agent) -> None:
    now = agent.result("dream_run", mode="rem", dreams=1, seed=1)
    assert now["job"] is None
    assert now["result"]["dreams_requested"] == 1 and now["result"]["seed"] == 1

    queued = agent.result("dream_run", mode="rem", dreams=1, seed=2, background=True)
    assert queued["result"] is None
    job = queued["job"]
    assert job["kind"] == "dream.rem" and job["status"] in ("queued", "running")
    assert job["params"]["dreams"] == 1 and job["params"]["seed"] == 2
    deadline = time.monotonic() + 90
    while job["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.3)
        job = agent.result("job_status", job_id=job["job_id"])
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["dreams_requested"] == 1 and job["result"]["seed"] == 2
    assert agent.refusal("job_cancel", job_id=job["job_id"]) == f"job {job['job_id']} has already ended (succeeded)"


def test_an_agent_reads_the_dreams_a_run_stored(agent: Agent) -> None:
    stored = agent.result("dream_run", mode="rem", dreams=2, seed=5)["result"]["dream_ids"]
    assert stored
    listed = {d["id"]: d for d in agent.result("dream_list", kind="rem", limit=100)["dreams"]}
    assert set(stored) <= set(listed)
    dream = listed[stored[0]]
    assert list(dream) == ["id", "kind", "title", "text", "confidence", "sources", "created"] and dream["sources"]
    shown = agent.result("dream_show", dream_id=dream["id"][:8])
    assert shown == dream
    assert len(agent.result("dream_list", limit=1)["dreams"]) == 1
    assert agent.result("dream_list", kind="fusion")["dreams"] == []
    refused = agent.refusal("dream_show", dream_id="ffff0000")
    assert refused == "no dream 'ffff0000'; dream_list lists the dreams with their ids"


def test_a_consolidation_runs_over_the_walks(agent: Agent) -> None:
    agent.result("wander_run", session_id=agent.new_session()["id"], n_steps=2)
    report = agent.result("consolidate_run", source="wander")["result"]
    assert report["source"] == "wander" and report["trigger"] == "manual" and report["experiences"] > 0


def test_every_remedy_has_a_hint_for_the_agent() -> None:
    assert set(HINTS) == set(Remedy)


def test_a_database_that_cannot_be_opened_fails_before_serving(tmp_path: Path) -> None:
    broken = tmp_path / "notes.duckdb"
    broken.write_text("not a database", encoding="utf-8")
    done = CliRunner().invoke(explorer.cli.app, ["mcp", "--db", str(broken)])
    assert done.exit_code == 1 and done.stdout == ""
    assert done.stderr == f"error: {broken} is not a Dream Explorer database (nor any DuckDB file)\n"


@dataclass
class Wire:
    """The test speaking JSON-RPC to ``explorer mcp`` itself, a line at a time, as an agent's host does (the SDK's
    client would only log a stray line, and it writes NaN as null); every line read is kept.
    """

    server: subprocess.Popen[str]
    lines: list[str]

    @classmethod
    def start(cls, db: Path | str) -> Wire:
        server = subprocess.Popen(
            [str(EXPLORER), "mcp", "--db", str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wire = cls(server, [])
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
        assert wire.ask(1, "initialize", hello)["serverInfo"]["name"] == "dream-explorer"
        wire.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        return wire

    def send(self, line: str) -> None:
        assert self.server.stdin is not None
        self.server.stdin.write(line + "\n")
        self.server.stdin.flush()

    def ask(self, number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request, written by ``json.dumps`` as it is (NaN as ``NaN``)."""
        assert self.server.stdout is not None
        self.send(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}))
        while True:
            self.lines.append(self.server.stdout.readline())
            message = json.loads(self.lines[-1])
            if message.get("id") == number:
                return message["result"]

    def close(self) -> str:
        """End the session as the agent does (closing stdin); what the server wrote on stderr."""
        assert self.server.stdin is not None and self.server.stdout is not None and self.server.stderr is not None
        self.server.stdin.close()
        self.lines += self.server.stdout.read().splitlines()
        assert self.server.wait(timeout=30) == 0
        return self.server.stderr.read()


def test_only_the_protocol_reaches_stdout_while_a_model_answers(corpus_copy: Path, model_server: Any) -> None:
    """Read line by line, as an agent reads it: every line on stdout is a JSON-RPC message, through a step whose
    model calls go through litellm to a real HTTP server.
    """
    model_server()
    wire = Wire.start(corpus_copy)
    created = wire.ask(
        2, "tools/call", {"name": "wander_create_session", "arguments": {"name": "x", "seed_concept": "text"}}
    )
    session_id = created["structuredContent"]["id"]
    step = wire.ask(3, "tools/call", {"name": "wander_step", "arguments": {"session_id": session_id}})
    assert "test-model" in (step["structuredContent"]["residue"]["model_used"] or "")
    errors = wire.close()
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in wire.lines if line.strip())
    assert "Traceback" not in errors


def test_nan_an_infinity_or_a_nul_on_the_wire_is_refused_naming_the_argument(corpus_copy: Path) -> None:
    r"""JSON as Python writes it, ``NaN`` and ``Infinity`` literals and a ``\u0000`` escape, which the server's
    reader takes: each comes back as a tool error naming the argument, and no run starts on the default budget.
    """
    wire = Wire.start(corpus_copy)
    calls = [
        ("dream_run", {"mode": "rem", "dreams": 1, "budget_cents": math.nan}, "budget_cents", "finite number"),
        ("consolidate_run", {"budget_cents": math.inf}, "budget_cents", "finite number"),
        ("dream_run", {"mode": "explore", "result_threshold": -math.inf}, "result_threshold", "finite number"),
        ("wander_create_session", {"name": "a\x00b", "seed_concept": "text"}, "name", "NUL character"),
    ]  # a lone surrogate's escape never reaches a tool: the SDK's reader refuses the line (test_tool_bounds sends one)
    for number, (tool, arguments, name, says) in enumerate(calls, 2):
        answer = wire.ask(number, "tools/call", {"name": tool, "arguments": arguments})
        text = answer["content"][0]["text"]
        assert answer["isError"] and name in text and says in text, text
    assert "Traceback" not in wire.close()
