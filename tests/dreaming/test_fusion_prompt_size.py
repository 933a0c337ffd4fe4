"""A fusion prompt holds what a small local model's context holds: a cluster's most central memories within
``prompt_words``, whole; the rest are left as they were and counted, never superseded by a summary that did not
read them.
"""

from __future__ import annotations

import json

from explorer.dreaming.fusion import FusionConfig, fuse
from explorer.dreaming.graph import relations_lookup
from explorer.prompts.dreaming import FUSION

from .conftest import link, memory

WORDS = 400  # each memory's words


def long_memory(name: str):
    return memory(f"{name} " + "word " * (WORDS - 1), prominence=0.3, category="fact")


def star(leaves: int):
    """A hub related to each of ``leaves`` memories, which are related to nothing else; the hub listed last."""
    outer = [long_memory(f"leaf{n}") for n in range(leaves)]
    hub = long_memory("hub")
    return [*outer, hub], [link(hub, leaf) for leaf in outer]


def test_the_prompt_holds_the_most_central_memories_within_its_words(scripted, embedder) -> None:
    nodes, relations = star(5)
    gateway = scripted(lambda p, f: json.dumps({"summary": "hub and leaf0, merged."}))
    config = FusionConfig(min_cluster_size=2, prompt_words=2 * WORDS + WORDS // 2)
    result = fuse(nodes, relations_lookup(relations), gateway, embedder, config)
    ((kind, fields),) = gateway.calls
    prompt = FUSION.render(fields)
    assert kind == "fusion" and "hub word" in prompt and "leaf0 word" in prompt and "leaf1" not in prompt
    assert len(prompt.split()) < 2 * WORDS + 100
    (fused,) = result.nodes
    held = {n.id for n in nodes if n.text.startswith(("hub", "leaf0"))}
    assert set(result.superseded) == held and set(fused.parent_ids) == held
    assert result.left_out == 4 and fused.metadata == {"model": "scripted", "sources": 2, "left_out": 4}


def test_a_cluster_of_which_too_few_fit_is_not_fused_nor_asked(scripted, embedder) -> None:
    nodes, relations = star(3)
    gateway = scripted(lambda p, f: json.dumps({"summary": "never asked"}))
    result = fuse(nodes, relations_lookup(relations), gateway, embedder, FusionConfig(prompt_words=WORDS * 2))
    assert gateway.calls == [] and result.nodes == [] and result.superseded == {}
    assert result.rejected == 1 and result.errors == ["cluster 1: only 2 of its memories fit a prompt of 800 words"]
