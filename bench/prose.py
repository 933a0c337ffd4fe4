"""Does the offline provider write English? Every answer of a demo and a bridges run, checked.

    python -m bench.prose [--entries N] [--dreams N] [--steps N] [--sessions N] [--sample N] [--seed N] [--show N]

Two runs in fresh databases, offline, with a recorder around the offline provider that keeps every prompt it
answered and the text it wrote: the demo (``explorer.demo.prepare``: the sample corpus read, a walk to its
checkpoint, dreams, a consolidation) and a bridges run (as ``bench.bridges`` builds one: FOLDOC entries of
``../shared/benchmarks/bridges-dev/`` read, explored and dreamt 45 days later, walked from the largest domains;
``--entries`` takes a seeded slice of them, 0 for all 300). Each answer is parsed as the engine parses it and every
text in it is checked (``explorer.testing.prose``): prose against the rules of prose, with the prompt's own fields
as the source its words are cased by; themes and entities as names of things. Printed: per prompt kind and field,
the texts, the share flagged and the commonest fault classes; then a seeded sample of sentences to read by hand.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from bench.bridges import DEV, FADED_AFTER, load_entries, seeds_by_domain
from explorer import demo
from explorer.dreaming import service as dreaming
from explorer.offline import OfflineProvider
from explorer.prompts import Prompt
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime, open_runtime
from explorer.settings import load_settings
from explorer.testing.prose import MAX_WORDS, fixed_words, label_faults, prose_faults
from explorer.text import split_sentences
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

LABELS = {"themes", "entity", "name", "conditions"}  # fields that name a thing
PHRASES = {"actions"}  # fields that say what to do in a phrase, not a sentence
DATA = {"domain", "domains", "type", "relationship", "candidate", "verdict", "reason", "no_connection"}
# Length caps for the fields the prose checker knows by another name.
CAPS = {
    "wander_dwell.connection": MAX_WORDS["residue_connection"],
    "wander_dwell.tension": MAX_WORDS["residue_tension"],
    "wander_dwell.bridge": MAX_WORDS["residue_bridge"],
    "wander_dwell.surprise": MAX_WORDS["residue_surprise"],
    "wander_dwell.possibility": MAX_WORDS["residue_possibility"],
    "wander_analogy.concept": MAX_WORDS["locus"],
    "wander_analogy.rationale": MAX_WORDS["analogy_rationale"],
    "wander_crystallize.insight": MAX_WORDS["crystal"],
    "wander_validate.notes": MAX_WORDS["validation_notes"],
    "entities.learning": MAX_WORDS["entity_learning"],
}


@dataclass(frozen=True)
class Said:
    """One prompt the offline provider answered: its kind, its fields and the text it wrote."""

    kind: str
    fields: dict[str, Any]
    text: str


class Recorder:
    """The offline provider, keeping what it was asked and what it answered."""

    def __init__(self, provider: OfflineProvider):
        self.provider = provider
        self.said: list[Said] = []

    def answer(self, prompt: Prompt[Any], fields: dict[str, Any]) -> str:
        text = self.provider.answer(prompt, fields)
        self.said.append(Said(prompt.kind, dict(fields), text))
        return text

    def prepare(self, requests: Sequence[tuple[Prompt[Any], dict[str, Any]]]) -> None:
        self.provider.prepare(requests)


def recording(runtime: Runtime) -> Recorder:
    """Put a recorder between the runtime's gateway and its offline provider."""
    if not runtime.gateway.offline_only:
        raise SystemExit("bench.prose measures the offline provider: unset the model settings")
    recorder = Recorder(runtime.gateway.offline)  # type: ignore[arg-type]
    runtime.gateway.offline = recorder
    return recorder


def run_demo(folder: Path, seed: int) -> list[Said]:
    """The demo, prepared in a fresh database."""
    runtime = open_runtime(replace(load_settings().with_db(folder / "demo.duckdb"), seed=seed))
    recorder = recording(runtime)
    demo.prepare(runtime)
    return recorder.said


def run_bridges(folder: Path, args: argparse.Namespace) -> list[Said]:
    """A bridges run as ``bench.bridges`` builds one, on a seeded slice of the dev entries (all with 0)."""
    source = args.data / "corpus-implicit"
    rows = [json.loads(line) for path in sorted(source.glob("*.jsonl")) for line in path.open() if line.strip()]
    if args.entries:
        rows = random.Random(args.seed).sample(rows, min(args.entries, len(rows)))
    corpus = folder / "corpus"
    corpus.mkdir()
    (corpus / "slice.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    runtime = open_runtime(replace(load_settings().with_db(folder / "bridges.duckdb"), seed=args.seed))
    recorder = recording(runtime)
    ingest_paths(runtime, [corpus])
    as_of = datetime.now(UTC) + FADED_AFTER
    dreaming.run_exploration(runtime, seed=args.seed, as_of=as_of)
    dreaming.run_rem(runtime, dreams=args.dreams, seed=args.seed, as_of=as_of)
    titles = {r["title"].lower() for r in rows}
    entries = [e for e in load_entries(args.data, "implicit") if e.title in titles]
    for number, entry in enumerate(seeds_by_domain(entries, args.sessions, np.random.default_rng(args.seed))):
        config = SessionConfig(
            seed_concept=entry.title, max_steps=args.steps, human_checkpoint_frequency=0, random_seed=args.seed + number
        )
        session = wander.create_session(runtime, config)
        wander.run(runtime, session.id, args.steps)
    return recorder.said


@dataclass(frozen=True)
class Text:
    """One text an answer holds: where it is (``kind`` or ``kind.field``), whether it names a thing, its source."""

    where: str
    text: str
    label: bool
    source: str
    refused: str | None = None  # why the prompt's reader refused the answer it is in


def texts_of(said: Said) -> Iterator[Text]:
    """Every text in one answer, as the engine parses it."""
    from explorer.prompts import REGISTRY

    value, reason = REGISTRY[said.kind].read(said.text)
    source = "\n\n".join(str(v) for v in said.fields.values())
    if reason is not None:  # the engine would not use it: counted against its kind, not read
        yield Text(said.kind, said.text, False, source, refused=reason)
    yield from _walk(said.kind, None, value, source)


def _walk(kind: str, name: str | None, value: Any, source: str) -> Iterator[Text]:
    where = f"{kind}.{name}" if name else kind
    if value is None or name in DATA:
        return
    if isinstance(value, str):
        if value.strip():
            yield Text(where, value, name in LABELS, source)
    elif isinstance(value, BaseModel):
        for key in type(value).model_fields:
            yield from _walk(kind, key, getattr(value, key), source)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _walk(kind, f.name, getattr(value, f.name), source)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _walk(kind, name, item, source)


def faults_of(text: Text, fixed: frozenset[str] = frozenset()) -> list[str]:
    """The checker's faults (``fixed``: the template's own words), each reduced to its class (what comes before
    its first colon).
    """
    if text.refused is not None:
        return ["refused by its reader"]
    found = (
        label_faults(text.text, text.source)
        if text.label
        else prose_faults(text.text, CAPS.get(text.where, MAX_WORDS.get(text.where, 150)), text.source, fixed)
    )
    classes = [f.split(":", 1)[0] for f in found]
    return [c for c in classes if c != "unended sentence"] if text.where.rsplit(".", 1)[-1] in PHRASES else classes


def report(runs: dict[str, list[Said]], sample: int, seed: int, shown: int = 0) -> str:
    """The table per prompt kind and field, ``shown`` flagged texts of each, and a seeded sample of the sentences
    written.
    """
    rows: dict[str, list[list[str]]] = {}
    flagged_texts: dict[str, list[str]] = {}
    sentences: list[str] = []
    by_where: dict[str, list[Text]] = {}
    for said in (s for run in runs.values() for s in run):
        for text in texts_of(said):
            by_where.setdefault(text.where, []).append(text)
    for where, texts in by_where.items():
        fixed = fixed_words([t.text for t in texts if not t.label and t.refused is None])
        for text in texts:
            found = faults_of(text, fixed)
            rows.setdefault(where, []).append(found)
            if found:
                flagged_texts.setdefault(where, []).append(f"{found}: {text.text}")
            if not text.label and text.refused is None:
                sentences += [s for s in split_sentences(text.text) if len(s.split()) >= 4]
    lines = [
        ", ".join(f"{name}: {len(run)} answers" for name, run in runs.items()),
        "",
        "| prompt kind (field) | texts | flagged | top fault classes |",
        "| --- | --- | --- | --- |",
    ]
    total = flagged = 0
    for where in sorted(rows):
        found = rows[where]
        bad = sum(bool(f) for f in found)
        total, flagged = total + len(found), flagged + bad
        classes = Counter(c for f in found for c in set(f)).most_common(3)
        top = ", ".join(f"{c} ×{n}" for c, n in classes) or "—"
        lines.append(f"| {where} | {len(found)} | {bad} ({bad / len(found):.0%}) | {top} |")
    lines += ["", f"all: {flagged} of {total} texts flagged ({flagged / max(1, total):.1%})", ""]
    for where, texts in sorted(flagged_texts.items()):
        lines += [f"flagged {where}: {t}" for t in texts[:shown]]
    unique = list(dict.fromkeys(sentences))
    lines.append(f"A seeded sample of {sample} of the {len(unique)} sentences (seed {seed}):")
    picked = random.Random(seed).sample(unique, min(sample, len(unique)))
    lines += [f"{k}. {' '.join(s.split())}" for k, s in enumerate(picked, 1)]
    return "\n".join(lines)


def main() -> None:
    """Run the demo and a bridges run offline, and print what the checker finds in their answers."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEV, help="a folder laid out as bridges-dev")
    parser.add_argument("--entries", type=int, default=100, help="a seeded slice of the entries; 0 for all")
    parser.add_argument("--dreams", type=int, default=20)
    parser.add_argument("--steps", type=int, default=20, help="steps of each wander session")
    parser.add_argument("--sessions", type=int, default=4, help="wander sessions, one from each largest domain")
    parser.add_argument("--sample", type=int, default=30, help="sentences to print for reading by hand")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="flagged texts to print of each kind")
    parser.add_argument("--no-demo", action="store_true", help="the bridges run only")
    args = parser.parse_args()
    started = time.perf_counter()
    runs: dict[str, list[Said]] = {}
    with tempfile.TemporaryDirectory() as folder:
        if not args.no_demo:
            (Path(folder) / "demo").mkdir()
            runs["demo"] = run_demo(Path(folder) / "demo", args.seed)
        (Path(folder) / "bridges").mkdir()
        runs["bridges"] = run_bridges(Path(folder) / "bridges", args)
    print(report(runs, args.sample, args.seed, args.show))
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
