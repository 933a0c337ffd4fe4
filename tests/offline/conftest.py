"""A sample of every text the offline provider writes, generated as the product would ask for it.

The fields are built as the engine builds them (explorer/reading/cycle.py, explorer/dreaming/rem_cycle.py and
fusion.py, explorer/wander/dwell.py, adjacency.py and crystal.py): each answer of one stage becomes a node or a
residue the next stage reads, so nested syntheses, code from Markdown and contributor names reach the later
prompts just as they do in a real run. The inputs are FOLDOC entries (tests/data/foldoc_sample.jsonl), What's New
chunks with code, links and authors, and attributed quotations,
and a person's notes on bees and git (tests/data/notes).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from explorer.offline import OfflineProvider
from explorer.offline.kit import OfflineKit
from explorer.prompts import REGISTRY, format_passages, load_prompts
from explorer.providers.embeddings import Embedder
from explorer.reading.chunker import chunk_text

TESTS = Path(__file__).resolve().parents[1]
FOLDOC = TESTS / "data" / "foldoc_sample.jsonl"
SAMPLE = TESTS.parent / "sample_data"


@dataclass
class Sample:
    """One answer: its prompt kind, the text a reader sees, and the source texts it should draw on."""

    kind: str
    text: str
    sources: list[str] = field(default_factory=list)  # the two (or more) things it connects, when it connects
    context: str = ""  # every field of the prompt it answered: how its words are cased there


@dataclass
class Doc:
    text: str
    domain: str
    year: int | None


def corpus() -> list[Doc]:
    """FOLDOC entries, What's New chunks (code, links, authors, emails) and attributed quotations."""
    docs = [Doc(r["text"], r["domain"], r["year"]) for r in map(json.loads, FOLDOC.read_text().splitlines())]
    for name, year in (("whatsnew-2.0.md", 2000), ("whatsnew-3.8.md", 2019)):
        body = (SAMPLE / "python-whatsnew" / name).read_text(encoding="utf-8").split("---", 2)[2]
        docs += [Doc(chunk, "python", year) for chunk in chunk_text(body)[:4]]
    quotes = [json.loads(line) for line in (SAMPLE / "fortunes" / "fortunes.jsonl").read_text().splitlines()]
    docs += [Doc(q["text"], q["domain"], None) for q in quotes if "\n-- " in q["text"]][:6]
    for note in sorted((TESTS / "data" / "notes").glob("*/*.md")):  # a person's own notes, where bad words were seen
        docs.append(Doc(note.read_text(encoding="utf-8").split("---", 2)[2].strip(), note.parent.name, 2024))
    return docs


class Run:
    """The known nodes so far (texts, domains, vectors) and the provider answering as the gateway would."""

    def __init__(self, embedder: Embedder) -> None:
        load_prompts()
        self.kit = OfflineKit(embedder, seed=0)
        self.provider = OfflineProvider(self.kit)
        self.texts: list[str] = []
        self.domains: list[str] = []
        self.years: list[int | None] = []
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        self.samples: list[Sample] = []
        self.context = ""  # the fields of the last prompt asked

    def add(self, text: str, domain: str, year: int | None) -> None:
        vector = self.kit.embed([text])
        self.vectors = vector if not len(self.texts) else np.vstack([self.vectors, vector])
        self.texts.append(text)
        self.domains.append(domain)
        self.years.append(year)

    def nearest(self, text: str, k: int, exclude: set[int] | frozenset[int] = frozenset()) -> list[int]:
        sims = self.vectors @ self.kit.embed([text])[0]
        return [int(i) for i in np.argsort(-sims) if int(i) not in exclude][:k]

    def passages(self, ids: list[int], labels: str = "year") -> str:
        if labels == "year":
            return format_passages([self.texts[i] for i in ids], [str(self.years[i] or "") or None for i in ids])
        return format_passages([self.texts[i] for i in ids], [self.domains[i] for i in ids])

    def ask(self, kind: str, fields: dict[str, Any], sources: list[str] | None = None) -> Any:
        """The parsed answer (the prompt's own reader must accept it), its text kept as a sample."""
        prompt = REGISTRY[kind]
        text = self.provider.answer(prompt, fields)
        value, reason = prompt.read(text)
        assert reason is None, f"{kind}: {reason}\n{text}"
        self.context = "\n\n".join(str(v) for v in fields.values())
        if isinstance(value, str) and value:
            self.samples.append(Sample(kind, value, sources or [], self.context))
        return value


def read(run: Run, docs: list[Doc]) -> None:
    """The READING cycle: implant against the nearest known nodes, entities, and each entity's insight."""
    insights: dict[str, list[int]] = {}
    for doc in docs:
        known = run.nearest(doc.text, 5) if run.texts else []
        synthesis = run.ask(
            "implant",
            {"new_info": doc.text, "existing_knowledge": run.passages(known)},
            [doc.text, *(run.texts[i] for i in known)],
        )
        found = run.ask("entities", {"passage": doc.text, "max_entities": 3})
        context = run.context
        run.add(doc.text, doc.domain, doc.year)
        if synthesis:
            run.add(synthesis, doc.domain, doc.year)
        for item in found:
            run.samples.append(Sample("entity", item.entity, context=context))
            run.samples.append(Sample("entity_learning", item.learning, context=context))
            previous = insights.setdefault(item.entity.lower(), [])
            fields = {
                "entity": item.entity,
                "learning": item.learning,
                "previous": format_passages([run.texts[i] for i in previous[-3:]]),
            }
            insight = run.ask("entity_synthesis", fields)
            run.add(insight, doc.domain, doc.year)
            previous.append(len(run.texts) - 1)


def dream(run: Run, rng: random.Random, dreams: int) -> None:
    """REM cycles over triads of distant nodes (syntheses and insights among them), then fusion."""
    for _ in range(dreams):
        triad = rng.sample(range(len(run.texts)), 3)
        passages = run.passages(triad)
        question = run.ask("rem_question", {"passages": passages})
        related = run.nearest(question, 5, exclude=set(triad))
        synthesis = run.ask(
            "rem_synthesis",
            {"question": question, "passages": passages, "related": run.passages(related)},
            [run.texts[i] for i in triad],
        )
        neighbours = run.nearest(synthesis, 5)
        text = run.ask("dream_relation", {"synthesis": synthesis, "related": run.passages(neighbours)})
        if text:
            run.add(text, run.domains[triad[0]], None)
    for start in rng.sample(range(len(run.texts)), 3):
        cluster = run.nearest(run.texts[start], 3)
        memories = format_passages(
            [run.texts[i] for i in cluster], [f"{run.domains[i]}, importance 0.40" for i in cluster]
        )
        run.ask("fusion", {"memories": memories}, [run.texts[i] for i in cluster])


def wander(run: Run, rng: random.Random, steps: int) -> None:
    """Analogies and dwellings between loci (nodes and analogies), then a crystal and its validation."""
    residues: list[tuple[str, str]] = []
    themes: list[str] = []
    here = rng.randrange(len(run.texts))
    here_text, here_domain = run.texts[here], run.domains[here]
    for _ in range(steps):
        others = [i for i in range(len(run.texts)) if run.domains[i] != here_domain]
        elsewhere = rng.sample(others, 4)
        analogies = run.ask(
            "wander_analogy",
            {"concept": here_text, "domains": here_domain, "elsewhere": run.passages(elsewhere, "domain"), "count": 3},
        )
        for analogy in analogies:
            run.samples.append(Sample("locus", analogy.concept, context=run.context))
            run.samples.append(Sample("analogy_rationale", analogy.rationale, context=run.context))
        there = rng.choice(run.nearest(here_text, 8, exclude={here})[3:])
        there_text, there_domain = run.texts[there], run.domains[there]
        if analogies and rng.random() < 0.4:
            there_text, there_domain = analogies[0].concept, analogies[0].domain or "unknown"
        dwelling = run.ask(
            "wander_dwell",
            {
                "current_concept": here_text,
                "current_domains": here_domain,
                "current_abstraction": "0.5",
                "next_concept": there_text,
                "next_domains": there_domain,
                "next_abstraction": "0.5",
                "recent_themes": ", ".join(themes[-8:]) or "(none yet)",
                "active_resonances": "(none yet)",
            },
        )
        for name in ("connection", "tension", "bridge", "surprise", "possibility"):
            sources = [here_text, there_text] if name == "connection" else []
            run.samples.append(Sample(f"residue_{name}", getattr(dwelling, name), sources, run.context))
        run.samples += [Sample("theme", theme, context=run.context) for theme in dwelling.themes]
        themes += dwelling.themes
        residues.append((" ".join([dwelling.connection, dwelling.possibility]), there_domain))
        here_text, here_domain = there_text, there_domain
    node_texts = [(" ".join(run.texts[i].split()[:80]), run.domains[i]) for i in rng.sample(range(len(run.texts)), 3)]
    evidence = residues[-6:] + node_texts
    block = format_passages([t for t, _ in evidence], [d for _, d in evidence])
    for start in range(0, len(themes) - 2, 3):
        draft = run.ask(
            "wander_crystallize",
            {
                "themes": ", ".join(themes[start : start + 3]),
                "locus": here_text,
                "domains": here_domain,
                "evidence": block,
            },
            [t for t, _ in evidence],
        )
        verdict = run.ask("wander_validate", {"insight": draft.insight, "evidence": block})
        run.samples.append(Sample("crystal", draft.insight, [t for t, _ in evidence], run.context))
        run.samples.append(Sample("validation_notes", verdict.notes, context=run.context))
        if start >= 6:
            break


def generate(embedder: Embedder, seed: int = 0) -> list[Sample]:
    """Every kind of offline text, from reading the sample corpus through dreaming to wandering over it."""
    rng = random.Random(seed)
    run = Run(embedder)
    docs = corpus()
    rng.shuffle(docs)
    read(run, docs[:22])
    dream(run, rng, dreams=6)
    wander(run, rng, steps=8)
    return run.samples


@pytest.fixture(scope="session")
def prose_samples(embedder: Embedder) -> list[Sample]:
    """Every kind of offline text. On the hashing embedder: which sentences an answer picks depends on the model,
    but every candidate is a sentence of its input, and the rules checked here (no markup, no nesting, no stutter,
    names as themes) are about how the answers are built, not about which sentence wins.
    """
    return generate(embedder)
