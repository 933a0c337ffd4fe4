"""Do the product's connections agree with the ones people wrote? The bridges benchmark.

    python -m bench.bridges [--variant explicit|implicit] [--data DIR] [--half SEED] [--json] [--keep DB]

A fresh database reads a set of FOLDOC entries (``--data``: a folder laid out as
``../shared/benchmarks/bridges-dev/``, see its README; with ``--half``, a seeded
half of them, the truth kept to pairs within it: a smaller corpus of the same
kind, on which a mechanism tuned to the whole should hold), then dreams as of a later
date (when the freshly read memories have faded into exploration's window):
REM exploration, a REM cycle of 60 dreams, and one wander session of 40 steps
from one entry title in each of the 8 largest domains. Every connection the
product made is mapped to the entries it joins:

- reading relations: the reading cycle's links between nodes (EXTENDS, UPDATES,
  MENTIONS; not DERIVES, which is provenance);
- exploration: the judge's discoveries (seed → neighbour);
- dreams: each dream's parents, pairwise;
- wander steps: each step from one locus to the next (loci tied to no node join nothing);
- crystal evidence: the source chunks behind each crystal, pairwise;

and the pairs whose domains differ are scored against the human cross-references
(``truth.json``): hits, precision, recall, and the precision of the kNN anchor (the
top-*n* cross-domain pairs by MiniLM cosine of ``"{title}: {text}"``) at the same
count *n*; lift = hits / anchor hits. The models are the configured ones (offline by
default), so the same command documents a real model's figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from explorer.dreaming import service as dreaming
from explorer.providers.embeddings import LocalEmbedder
from explorer.reading.ingest import ingest_paths
from explorer.records import Node, Relation
from explorer.runtime import Runtime, open_runtime
from explorer.settings import load_settings
from explorer.store import corpus
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

DEV = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "bridges-dev"
FADED_AFTER = timedelta(days=45)  # a month and a half on, unused memories sit in exploration's window
DUPLICATE_COSINE = 0.9

Pair = frozenset[str]


@dataclass(frozen=True)
class Entry:
    """One benchmark entry, as the truth names it (lower-case title) with its domain."""

    title: str
    domain: str
    text: str


@dataclass
class Score:
    """One mechanism's connections against the truth and the kNN anchor at the same count."""

    mechanism: str
    pairs: int
    hits: int
    precision: float
    recall: float
    knn_precision: float
    lift: float | None


def load_rows(data: Path, variant: str) -> list[dict]:
    """The entries of one variant as their JSON lines hold them, in file order."""
    folder = data / ("corpus" if variant == "explicit" else "corpus-implicit")
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.open() if line.strip()]


def load_entries(data: Path, variant: str) -> list[Entry]:
    """The entries of one variant, in file order."""
    return [Entry(r["title"].lower(), r["domain"], r["text"]) for r in load_rows(data, variant)]


def half_of(rows: list[dict], seed: int) -> list[dict]:
    """A seeded half of the entries (every title drawn with the same chance), in file order: the same half for
    both variants, which hold the same titles.
    """
    chosen = np.random.default_rng(seed).choice(len(rows), size=len(rows) // 2, replace=False)
    return [rows[i] for i in sorted(chosen)]


def load_truth(data: Path) -> set[Pair]:
    """The human cross-domain references, undirected."""
    return {frozenset(pair) for pair in json.loads((data / "truth.json").read_text())}


def within(truth: set[Pair], entries: list[Entry]) -> set[Pair]:
    """The pairs of ``truth`` between two of ``entries``."""
    titles = {e.title for e in entries}
    return {pair for pair in truth if pair <= titles}


def knn_ranking(entries: list[Entry]) -> list[Pair]:
    """Every cross-domain pair, most similar first by MiniLM cosine: the similarity-search anchor."""
    vectors = LocalEmbedder().embed([f"{e.title}: {e.text}" for e in entries])
    sims = vectors @ vectors.T
    rows, cols = np.triu_indices(len(entries), 1)
    keep = np.array([entries[i].domain != entries[j].domain for i, j in zip(rows, cols, strict=True)])
    rows, cols = rows[keep], cols[keep]
    order = np.argsort(-sims[rows, cols], kind="stable")
    return [frozenset((entries[rows[k]].title, entries[cols[k]].title)) for k in order]


def score(mechanism: str, pairs: set[Pair], truth: set[Pair], anchor: list[Pair]) -> Score:
    """Hits, precision and recall of ``pairs``, and the anchor's precision at the same count."""
    hits = len(pairs & truth)
    n = len(pairs)
    anchor_hits = len(set(anchor[:n]) & truth)
    return Score(
        mechanism,
        n,
        hits,
        round(hits / n, 3) if n else 0.0,
        round(hits / len(truth), 3),
        round(anchor_hits / n, 3) if n else 0.0,
        round(hits / anchor_hits, 2) if anchor_hits else None,
    )


class EntryMap:
    """Which entries a node stands for: its document's (under its title and aliases), or (for a dream or a
    fusion) its parents'.
    """

    def __init__(self, runtime: Runtime, entries: list[Entry]):
        with runtime.db.connect() as con:
            titles = {d.id: {name.lower() for name in d.names} for d in corpus.list_documents(con)}
            self.nodes = {n.id: n for n in corpus.list_nodes(con, with_vectors=False)}
            self.relations = corpus.list_relations(con)
        self.titles = titles
        self.domain = {e.title: e.domain for e in entries}

    def of(self, node_id: str | None, depth: int = 0) -> set[str]:
        """The entries behind a node (empty for an unknown node or one tied to no document)."""
        node = self.nodes.get(node_id or "")
        if node is None or depth > 4:
            return set()
        if node.document_id and node.document_id in self.titles:
            return set(self.titles[node.document_id])
        return set().union(*(self.of(p, depth + 1) for p in node.parent_ids)) if node.parent_ids else set()

    def cross(self, groups: Iterable[tuple[set[str], set[str]]]) -> set[Pair]:
        """The cross-domain entry pairs joining each (left, right) group."""
        found = set()
        for left, right in groups:
            for a, b in itertools.product(left, right):
                if a != b and self.domain.get(a) and self.domain.get(b) and self.domain[a] != self.domain[b]:
                    found.add(frozenset((a, b)))
        return found

    def among(self, groups: list[set[str]]) -> set[Pair]:
        """The cross-domain pairs joining any two of several groups (the entries of each parent, or chunk)."""
        return self.cross(itertools.combinations(groups, 2))

    def relations_by(self, made_by: str, skip: tuple[str, ...] = ()) -> list[Relation]:
        """Relations one mechanism made, leaving out the types in ``skip``."""
        return [r for r in self.relations if r.created_by == made_by and r.type not in skip]

    def nodes_of(self, kind: str) -> list[Node]:
        """Every node of one type."""
        return [n for n in self.nodes.values() if n.type == kind]


def seeds_by_domain(entries: list[Entry], domains: int, rng: np.random.Generator) -> list[Entry]:
    """One entry from each of the ``domains`` largest domains, drawn at random: where each session starts."""
    sizes: dict[str, int] = {}
    for entry in entries:
        sizes[entry.domain] = sizes.get(entry.domain, 0) + 1
    largest = sorted(sizes, key=lambda d: (-sizes[d], d))[:domains]
    return [rng.choice([e for e in entries if e.domain == d]) for d in largest]  # type: ignore[misc]


def run(args: argparse.Namespace, folder: Path) -> dict:
    """Build the knowledge base, dream and wander over it, and score every mechanism."""
    rows = load_rows(args.data, args.variant)
    if args.half is not None:
        rows = half_of(rows, args.half)
    entries = [Entry(r["title"].lower(), r["domain"], r["text"]) for r in rows]
    truth = within(load_truth(args.data), entries)
    anchor = knn_ranking(entries)
    folder_in = folder / "corpus"
    folder_in.mkdir()
    (folder_in / "entries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    settings = load_settings().with_db(args.keep or folder / "bridges.duckdb")
    runtime = open_runtime(replace(settings, seed=args.seed))
    timings: dict[str, float] = {}
    started = time.perf_counter()
    ingest = ingest_paths(runtime, [folder_in])
    timings["ingest_s"] = time.perf_counter() - started
    as_of = datetime.now(UTC) + FADED_AFTER
    started = time.perf_counter()
    explored = dreaming.run_exploration(runtime, seed=args.seed, as_of=as_of)
    timings["explore_s"] = time.perf_counter() - started
    started = time.perf_counter()
    dreamt = dreaming.run_rem(runtime, dreams=args.dreams, seed=args.seed, as_of=as_of)
    timings["rem_s"] = time.perf_counter() - started
    started = time.perf_counter()
    sessions = []
    for number, entry in enumerate(seeds_by_domain(entries, args.domains, np.random.default_rng(args.seed))):
        config = SessionConfig(
            seed_concept=entry.title,
            max_steps=args.steps,
            human_checkpoint_frequency=0,
            random_seed=args.seed + number,
        )
        session = wander.create_session(runtime, config)
        wander.run(runtime, session.id, args.steps)
        sessions.append(session.id)
    timings["wander_s"] = time.perf_counter() - started

    graph = EntryMap(runtime, entries)
    reading = graph.cross(
        (graph.of(r.source_id), graph.of(r.target_id)) for r in graph.relations_by("reading", ("DERIVES",))
    )
    exploration = graph.cross(
        (graph.of(r.source_id), graph.of(r.target_id)) for r in graph.relations_by("rem_exploration")
    )
    dreams = set().union(*(graph.among([graph.of(p) for p in d.parent_ids]) for d in graph.nodes_of("rem_dream")))
    steps, unmoored, step_count = set(), 0, 0
    crystals = []
    for session_id in sessions:
        view = wander.session_view(runtime, session_id)
        loci = {locus.id: locus for locus in view.loci}
        for trace in view.trace:
            step_count += 1
            to = loci.get(trace.to_locus_id)
            if to is None or to.node_id is None:
                unmoored += 1
            if trace.from_locus_id is None:
                continue
            origin = loci.get(trace.from_locus_id)
            if origin is not None and to is not None:
                steps |= graph.cross([(graph.of(origin.node_id), graph.of(to.node_id))])
        crystals += view.crystals
    evidence_pairs: set[Pair] = set()
    grounded = 0
    for crystal in crystals:
        chunks = wander.crystal_evidence(runtime, crystal.id).chunks
        grounded += len({c.document_id for c in chunks}) >= 2
        evidence_pairs |= graph.among([graph.of(c.id) for c in chunks])
    duplicates = _duplicates([c.embedding for c in crystals if c.embedding is not None])
    together = exploration | dreams | steps | evidence_pairs
    scores = [
        score("reading relations", reading, truth, anchor),
        score("exploration", exploration, truth, anchor),
        score("dreams", dreams, truth, anchor),
        score("wander steps", steps, truth, anchor),
        score("crystal evidence", evidence_pairs, truth, anchor),
        score("all discoveries", together, truth, anchor),
    ]
    return {
        "variant": args.variant,
        "half": args.half,
        "entries": len(entries),
        "truth_pairs": len(truth),
        "model": "offline"
        if runtime.settings.offline
        else (runtime.settings.local_model or runtime.settings.cloud_model),
        "scores": [asdict(s) for s in scores],
        "judge_keep_rate": round(explored.candidates_kept / explored.candidates_judged, 3)
        if explored.candidates_judged
        else None,
        "candidates_judged": explored.candidates_judged,
        "candidates_kept": explored.candidates_kept,
        "discoveries": explored.discoveries,
        "dreams_stored": dreamt.dreams_stored,
        "wander_steps": step_count,
        "steps_on_unmoored_loci": unmoored,
        "crystals": len(crystals),
        "crystals_per_step": round(len(crystals) / step_count, 3) if step_count else 0.0,
        "grounded_crystals": grounded,
        "duplicate_crystals": duplicates,
        "ingest_errors": len(ingest.errors),
        "seconds": {k: round(v, 1) for k, v in timings.items()},
    }


def _duplicates(vectors: list[np.ndarray]) -> int:
    """Crystals at cosine ≥ 0.9 to an earlier one."""
    if len(vectors) < 2:
        return 0
    matrix = np.vstack(vectors)
    sims = np.triu(matrix @ matrix.T, 1)
    return int((sims >= DUPLICATE_COSINE).any(axis=0).sum())


def table(result: dict) -> str:
    """The scores as the Markdown table docs/benchmarks.md keeps."""
    half = "" if result["half"] is None else f", half {result['half']}"
    lines = [
        f"{result['variant']}{half} ({result['entries']} entries, {result['truth_pairs']} truth pairs, "
        f"model {result['model']})",
        "",
        "| mechanism | pairs | hits | precision | recall | kNN precision at equal count | lift |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in result["scores"]:
        lift = "—" if s["lift"] is None else f"{s['lift']:.2f}×"
        lines.append(
            f"| {s['mechanism']} | {s['pairs']} | {s['hits']} | {s['precision']:.2f} | {s['recall']:.2f} | "
            f"{s['knn_precision']:.2f} | {lift} |"
        )
    lines += [
        "",
        f"judge keep rate {result['judge_keep_rate']} ({result['candidates_kept']} of {result['candidates_judged']}, "
        f"{result['discoveries']} links); "
        f"{result['dreams_stored']} dreams; {result['wander_steps']} wander steps "
        f"({result['steps_on_unmoored_loci']} on loci tied to no node); {result['crystals']} crystals "
        f"({result['crystals_per_step']} a step), {result['grounded_crystals']} grounded, "
        f"{result['duplicate_crystals']} duplicates; seconds {result['seconds']}",
    ]
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark and print its table (or its JSON)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=("explicit", "implicit"), default="implicit")
    parser.add_argument("--data", type=Path, default=DEV, help="a folder laid out as bridges-dev")
    parser.add_argument("--dreams", type=int, default=60)
    parser.add_argument("--steps", type=int, default=40, help="steps of each wander session")
    parser.add_argument("--domains", type=int, default=8, help="wander sessions, one from each largest domain")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--half", type=int, metavar="SEED", help="read a half of the entries drawn with this seed")
    parser.add_argument("--keep", type=Path, help="build the database here (kept) instead of a temporary file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = run(args, Path(folder))
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()
