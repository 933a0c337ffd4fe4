"""Do walks keep exploring? Walks of 100 steps over the bridges dev set and over a corpus of 70 of its entries.

    python -m bench.walks [--data DIR] [--variant implicit|explicit] [--corpus dev|small] [--walks 8] [--steps 100]
                          [--seed 0] [--keep DIR] [--json]

Each corpus is read into a fresh database (offline by default, the configured models otherwise) and walked from
``--walks`` seeds, one entry title from each of the largest domains (as ``bench.bridges`` starts its sessions). A
walk the circuit breaker pauses is counted and resumed, so every walk takes its steps. Per corpus, it prints the
measures of whether walks keep exploring, with their aims:

- **revisits**: the share of steps onto a locus visited in the walk's last 10 steps (at most 20%);
- **distinct loci** per 100 steps (at least 60);
- **breaker trips**, over all walks (none);
- **crystals** per 100 steps (2 to 7), how many are **grounded** (their evidence comes from two documents or more)
  and how many **name a known pair**: two of their entries where one entry's text, as read, names the other's
  title (a link the notes already make; none should); and the crystal attempts the rules **declined**, by
  reason (ungrounded, weak bridge, known link …), which say why a corpus forms few.

The small corpus is ``walks_small.json`` beside this file: 70 titles of the dev set drawn at random, seeded
(``--rebuild-small`` draws them again), read from whichever variant is walked.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from bench.bridges import DEV, EntryMap, load_entries, seeds_by_domain
from explorer.reading.ingest import ingest_paths
from explorer.runtime import Runtime, open_runtime
from explorer.settings import load_settings
from explorer.store import events as events_store
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig
from explorer.wander.crystal import DECLINED

SMALL = Path(__file__).with_name("walks_small.json")
SMALL_SIZE = 70
RECENT = 10  # a step onto a locus among the walk's last this many is a revisit


@dataclass(frozen=True)
class WalkFigures:
    """One corpus's walks, summed."""

    corpus: str
    entries: int
    walks: int
    steps: int
    revisits: float
    distinct_loci_per_100: float
    breaker_trips: int
    crystals_per_100: float
    crystals: int
    grounded: int
    naming_a_known_pair: int
    declined: dict[str, int]


def revisits(visited: list[str], recent: int = RECENT) -> int:
    """Steps onto a locus among the ``recent`` loci visited just before (the walk's own order)."""
    return sum(locus in visited[max(0, i - recent) : i] for i, locus in enumerate(visited))


def named_pairs(entries: list[dict]) -> set[frozenset[str]]:
    """Pairs of titles where one entry's text, as it was read, names the other's title: links the notes already
    make (the implicit variant has its titles taken out, so a crystal there joining two entries is a discovery).
    """
    titles = {e["title"].lower() for e in entries}
    found = set()
    for entry in entries:
        text = entry["text"].lower()
        for title in titles - {entry["title"].lower()}:
            if len(title) > 2 and re.search(rf"(?<!\w){re.escape(title)}(?!\w)", text):
                found.add(frozenset((entry["title"].lower(), title)))
    return found


def walk(runtime: Runtime, seed_concept: str, steps: int, random_seed: int) -> tuple[str, int]:
    """A session of ``steps`` steps from ``seed_concept``; its id and how often the circuit breaker paused it."""
    config = SessionConfig(
        seed_concept=seed_concept, max_steps=steps, human_checkpoint_frequency=0, random_seed=random_seed
    )
    session = wander.create_session(runtime, config)
    trips = 0
    while (current := wander.get_session(runtime, session.id)).step_count < steps:
        if current.status == "paused" and current.pause_kind == "circuit_breaker":
            trips += 1
            wander.resume(runtime, session.id)
        elif current.status != "active":
            break
        if wander.run(runtime, session.id, steps - current.step_count).steps_completed == 0:
            break
    return session.id, trips


def measure(
    name: str, rows: list[dict], folder: Path, args: argparse.Namespace, say: Callable[[str], None]
) -> WalkFigures:
    """Read ``rows`` into a fresh database, walk it, and sum what the walks did."""
    corpus = folder / f"{name}.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    runtime = open_runtime(replace(load_settings().with_db(folder / f"{name}.duckdb"), seed=args.seed))
    say(f"{name}: reading {len(rows)} entries")
    ingest_paths(runtime, [corpus])
    entries = load_entries(args.data, args.variant)
    kept = {row["title"].lower() for row in rows}
    entries = [e for e in entries if e.title in kept]
    known = named_pairs(rows)
    total_steps = total_revisits = total_distinct = trips = 0
    crystals = grounded = naming = 0
    declined: Counter[str] = Counter()
    starts = seeds_by_domain(entries, args.walks, np.random.default_rng(args.seed))
    for number, start in enumerate(starts):
        say(f"{name}: walk {number + 1} of {len(starts)} from “{start.title}”")
        session_id, tripped = walk(runtime, start.title, args.steps, args.seed + number)
        trips += tripped
        view = wander.session_view(runtime, session_id)
        visited = [t.to_locus_id for t in sorted(view.trace, key=lambda t: t.step_number)]
        total_steps += len(visited)
        total_revisits += revisits(visited)
        total_distinct += len(set(visited))
        graph = EntryMap(runtime, entries)
        for crystal in view.crystals:
            crystals += 1
            chunks = wander.crystal_evidence(runtime, crystal.id).chunks
            grounded += len({c.document_id for c in chunks}) >= 2
            titles = set().union(*(graph.of(c.id) for c in chunks)) if chunks else set()
            naming += any(frozenset((a, b)) in known for a in titles for b in titles if a < b)
        with runtime.db.connect() as con:
            rejected = events_store.list_events(
                con, session_id=session_id, subjects=["wander.crystal.rejected"], limit=10_000
            )
        declined.update(_kind(str(e.payload.get("reason", ""))) for e in rejected)
    per_100 = 100 / total_steps if total_steps else 0.0
    return WalkFigures(
        corpus=name,
        entries=len(rows),
        walks=len(starts),
        steps=total_steps,
        revisits=round(total_revisits / total_steps, 3) if total_steps else 0.0,
        distinct_loci_per_100=round(total_distinct * per_100, 1),
        breaker_trips=trips,
        crystals_per_100=round(crystals * per_100, 2),
        crystals=crystals,
        grounded=grounded,
        naming_a_known_pair=naming,
        declined=dict(declined.most_common()),
    )


def _kind(reason: str) -> str:
    """A declined crystal's reason without its particulars: the rule that declined it."""
    return next((rule for rule in DECLINED if reason.startswith(rule)), reason.split(":")[0])


def load_rows(data: Path, variant: str) -> list[dict]:
    """The dev set's records of one variant, as they are read."""
    folder = data / ("corpus" if variant == "explicit" else "corpus-implicit")
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.open() if line.strip()]


def small_titles(rows: list[dict], seed: int = 0) -> list[str]:
    """``SMALL_SIZE`` titles drawn at random (seeded) from the dev set: its domains in about their proportions."""
    titles = [row["title"] for row in rows]
    return sorted(np.random.default_rng(seed).choice(titles, size=SMALL_SIZE, replace=False).tolist())


def table(figures: list[WalkFigures]) -> str:
    """The figures as a Markdown table, with the aims."""
    head = (
        "| corpus | walks × steps | revisits (≤ 20%) | distinct loci / 100 (≥ 60) | breaker trips (0) "
        "| crystals / 100 (2–7) | grounded | naming a known pair (0) |\n" + "| --- " * 8 + "|"
    )
    rows = [
        f"| {f.corpus} ({f.entries} entries) | {f.walks} × {f.steps // max(1, f.walks)} | {f.revisits:.0%} "
        f"| {f.distinct_loci_per_100:.0f} | {f.breaker_trips} | {f.crystals_per_100:.1f} | {f.grounded} of "
        f"{f.crystals} | {f.naming_a_known_pair} |"
        for f in figures
    ]
    declined = [
        f"{f.corpus}: crystals declined: " + (", ".join(f"{n} {why}" for why, n in f.declined.items()) or "none")
        for f in figures
    ]
    return "\n".join([head, *rows, "", *declined])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEV, help="A folder laid out as the bridges dev set.")
    parser.add_argument("--variant", choices=("implicit", "explicit"), default="implicit")
    parser.add_argument("--walks", type=int, default=8)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", choices=("dev", "small"), action="append", help="Only these (both by default).")
    parser.add_argument("--keep", type=Path, help="Keep the databases in this folder.")
    parser.add_argument("--json", action="store_true", help="One JSON object instead of the table.")
    parser.add_argument("--rebuild-small", action="store_true", help=f"Draw the {SMALL_SIZE} titles again.")
    args = parser.parse_args()
    rows = load_rows(args.data, args.variant)
    if args.rebuild_small or not SMALL.exists():
        SMALL.write_text(json.dumps(small_titles(rows), indent=1) + "\n", encoding="utf-8")
    small = set(json.loads(SMALL.read_text(encoding="utf-8")))
    say = (lambda _: None) if args.json else print
    corpora = {"dev": rows, "small": [r for r in rows if r["title"] in small]}
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        figures = [measure(name, corpora[name], folder, args, say) for name in args.corpus or corpora]
    if args.json:
        print(json.dumps({"variant": args.variant, "seed": args.seed, "corpora": [asdict(f) for f in figures]}))
    else:
        print(table(figures))


if __name__ == "__main__":
    main()
