"""Orchestration shared by the CLI and the app: read the store, run a dreaming
algorithm, write its results in one transaction, report counts and what was stored;
read the dreams back (``list_dreams``, ``dream``) for every surface.

No connection is held while the model thinks: the store is read, the
connection closed, the algorithm run, and its results written in one
transaction (other processes get the file in between). Every run is recorded
as an event (``dream.<mechanism>.completed``) with its parameters and counts,
including the random seed, so that a run can be traced and repeated.

Progress callbacks take ``(done, total, note)``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from explorer.affinity import Affinity, titled_texts
from explorer.dreaming.chrono import plan_periods
from explorer.dreaming.exploration import CREATED_BY as EXPLORATION
from explorer.dreaming.exploration import DEFAULT_EXPLORATION, ExplorationConfig, explore, in_window
from explorer.dreaming.fusion import DEFAULT_FUSION, FusionConfig, fusable, fuse
from explorer.dreaming.graph import relations_lookup
from explorer.dreaming.prominence import DEFAULT_PROMINENCE, ProminenceConfig, prominence
from explorer.dreaming.rem_cycle import DEFAULT_REM, RemConfig, dreamable, latest_year, primary, rem_cycle
from explorer.errors import ExplorerError, Remedy
from explorer.providers.budget import Budget
from explorer.providers.embeddings import load_model, text_hash
from explorer.reading.cycle import DEFAULT_READING, ReadingConfig
from explorer.reading.ingest import IngestReport, collect_sources, ingest_sources
from explorer.reading.loaders import DEFAULT_MAX_MB
from explorer.records import Node, Progress, Relation, begin, in_phase
from explorer.records.dreaming import (
    DREAM_KINDS,
    ChronoReport,
    CycleReport,
    DiscoveryView,
    Dream,
    DreamKind,
    DreamSource,
    DreamView,
    Every,
    ExplorationReport,
    FusionReport,
    PeriodReport,
    RemReport,
    VerdictView,
)
from explorer.runtime import Runtime
from explorer.store import corpus
from explorer.store import dreaming as dreaming_store
from explorer.store import events as events_store
from explorer.store.database import Connection
from explorer.text import shorten
from explorer.wording import counted

# Memories a dreaming run embeds headed by their titles before it dreams, at most: a few seconds of the local
# model (see _affinity).
TITLED_AT_ONCE = 256


class DreamingError(ExplorerError):
    """A dreaming run that cannot start as asked; the message says what to do."""


class DreamNotFound(DreamingError):
    """An id that names no dream (mistyped, or a node or relation of another kind)."""

    def __init__(self, dream_id: str):
        super().__init__(f"no dream {dream_id!r}", remedy=Remedy.LIST_DREAMS, subject=dream_id)


def _seed(seed: int | None) -> int:
    """The run's random seed: the one given, or a fresh one that the report records."""
    return secrets.randbits(32) if seed is None else int(seed)


def run_budget(runtime: Runtime, budget_cents: float | None = None) -> Budget:
    """The budget of one run that calls models: ``budget_cents``, or the settings' default.

    Example::

        budget = run_budget(runtime, budget_cents=50)  # one budget shared by two runs
        run_exploration(runtime, budget=budget)
        run_rem(runtime, dreams=5, budget=budget)
    """
    return Budget(runtime.settings.cloud_budget_cents if budget_cents is None else budget_cents)


def spent_fields(before: float, budget: Budget) -> dict[str, Any]:
    """A report's spending fields: what this run added to the budget, and whether it ran out.

    Example::

        before = budget.spent_cents
        result = fuse(nodes, get_relations, runtime.gateway, runtime.embedder, budget=budget)
        report = FusionReport(clusters_found=result.clusters_found, **spent_fields(before, budget))
    """
    return {"spent_cents": round(budget.spent_cents - before, 6), "budget_exhausted": budget.exhausted}


def _record(runtime: Runtime, subject: str, payload: dict[str, Any]) -> None:
    with runtime.db.transaction() as con:
        events_store.emit(con, subject, payload)


def refresh_prominence(
    runtime: Runtime, now: datetime | None = None, config: ProminenceConfig = DEFAULT_PROMINENCE
) -> int:
    """Recompute every node's prominence from its age and use; the number of nodes that changed.

    Example::

        changed = refresh_prominence(runtime, now=datetime(2027, 3, 1, tzinfo=UTC))  # as if months had passed
    """
    now = now or datetime.now(UTC)
    with runtime.db.connect() as con:
        nodes = corpus.list_nodes(con)
        changed = {}
        for node in nodes:
            value = round(prominence(node, now, config), 6)
            if abs(value - node.prominence) > 1e-6:
                changed[node.id] = value
        with runtime.db.transaction():
            dreaming_store.set_prominence(con, changed)
    return len(changed)


def _titles(con: Connection) -> dict[str, str]:
    """Each document's title by id: a chunk's subject, which affinity reads with its text."""
    return dreaming_store.all_document_titles(con)


def _graph(runtime: Runtime, wanted: Callable[[list[Node]], object]) -> tuple[list[Node], list[Relation]]:
    """Current nodes (without vectors), and every relation when the run has nodes it ``wanted`` to work on.

    Why not always: a base read minutes ago holds no fading memory, and reading its relations to find none was
    seconds of a first night (40,000 of them for 10,000 notes).
    """
    with runtime.db.connect() as con:
        nodes = corpus.list_nodes(con, latest_only=True)
        return nodes, corpus.list_relations(con) if wanted(nodes) else []


def run_exploration(
    runtime: Runtime,
    seed: int | None = None,
    progress: Progress | None = None,
    config: ExplorationConfig = DEFAULT_EXPLORATION,
    budget: Budget | None = None,
    as_of: datetime | None = None,
) -> ExplorationReport:
    """REM exploration: new EXTENDS relations between distant memories (prominence refreshed first, as of
    ``as_of``: default now).

    Example::

        report = run_exploration(runtime, seed=7)
        report.discoveries, report.candidates_kept, report.candidates_judged
        recent_verdicts(runtime, limit=report.candidates_judged)  # why each link was kept or refused
    """
    seed = _seed(seed)
    budget = budget or run_budget(runtime)
    before = budget.spent_cents
    load_model(runtime.embedder, progress)
    begin(progress, "refreshing prominence")
    refresh_prominence(runtime, as_of)
    begin(progress, "loading memories")
    with runtime.db.connect() as con:
        nodes = corpus.list_nodes(con, latest_only=True)
        # No memory in the window (a base read minutes ago is all fresh): no seed to explore from, so neither the
        # vectors, the graph nor the affinities are read or measured (seconds on a large base, for nothing).
        seeded = bool(in_window(nodes, config))
        if seeded:
            nodes = corpus.list_nodes(con, latest_only=True, with_vectors=True)
        relations, titles = (corpus.list_relations(con), _titles(con)) if seeded else ([], {})
    linkable = primary(dreamable(nodes))
    affinity = _affinity(linkable, titles, runtime, progress) if seeded and len(linkable) >= 2 else None
    result = explore(
        nodes,
        relations_lookup(relations),
        runtime.gateway,
        config,
        rng=np.random.default_rng(seed),
        budget=budget,
        progress=progress,
        affinity=affinity,
    )
    found = [d.relation() for d in result.discoveries]
    report = ExplorationReport(
        seed=seed,
        eligible_memories=result.eligible,
        seeds_explored=result.seeds_explored,
        candidates_judged=result.candidates_judged,
        candidates_kept=sum(v.kept for v in result.verdicts),
        discoveries=len(found),
        dream_ids=[r.id for r in found],
        failures=result.failures,
        model_calls=result.usage.calls,
        errors=result.errors,
        **spent_fields(before, budget),
    )
    begin(progress, "storing links")
    with runtime.db.transaction() as con:
        corpus.insert_relations(con, found)
        dreaming_store.insert_verdicts(con, result.verdicts)
        dreaming_store.touch_nodes(con, [end for r in found for end in (r.source_id, r.target_id)], at=as_of)
        events_store.emit(con, "dream.exploration.completed", {"config": asdict(config), **report.to_json()})
    runtime.flush()
    return report


def run_fusion(
    runtime: Runtime,
    progress: Progress | None = None,
    config: FusionConfig = DEFAULT_FUSION,
    budget: Budget | None = None,
    as_of: datetime | None = None,
) -> FusionReport:
    """Memory fusion over fading memories (prominence refreshed first, as of ``as_of``: default now); sources
    are superseded, never deleted.

    Example::

        report = run_fusion(runtime, as_of=datetime(2027, 3, 1, tzinfo=UTC))
        report.clusters_fused, report.memories_superseded
    """
    budget = budget or run_budget(runtime)
    before = budget.spent_cents
    begin(progress, "refreshing prominence")
    refresh_prominence(runtime, as_of)
    begin(progress, "loading memories")
    nodes, relations = _graph(runtime, lambda nodes: fusable(nodes, config))
    result = fuse(
        nodes, relations_lookup(relations), runtime.gateway, runtime.embedder, config, budget, progress=progress
    )
    report = FusionReport(
        eligible_memories=result.eligible,
        clusters_found=result.clusters_found,
        clusters_rejected=result.rejected,
        failures=result.failures,
        model_calls=result.usage.calls,
        errors=result.errors,
        **spent_fields(before, budget),
    )
    begin(progress, "storing fused memories")
    with runtime.db.transaction() as con:
        # A source another process superseded meanwhile spoils its cluster: keep the source, drop the fusion.
        still_latest = {n.id for n in corpus.get_nodes(con, result.superseded, with_vectors=False) if n.is_latest}
        for node in result.nodes:
            if not set(node.parent_ids) <= still_latest:
                report.failures += 1
                report.errors.append(f"fused memory {node.id}: a source changed during fusion; not stored")
                continue
            corpus.insert_nodes(con, [node])
            corpus.insert_relations(con, [r for r in result.relations if r.source_id == node.id])
            dreaming_store.supersede_nodes(con, {p: node.id for p in node.parent_ids})
            report.clusters_fused += 1
            report.memories_superseded += len(node.parent_ids)
            report.dream_ids.append(node.id)
        events_store.emit(con, "dream.fusion.completed", {"config": asdict(config), **report.to_json()})
    runtime.flush()
    return report


def run_rem(
    runtime: Runtime,
    dreams: int = 10,
    current_year: int | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
    config: RemConfig = DEFAULT_REM,
    budget: Budget | None = None,
    as_of: datetime | None = None,
) -> RemReport:
    """The REM cycle: ``dreams`` dreams, each drawing one node from ``current_year``
    (default: the latest year in the corpus).

    Example::

        report = run_rem(runtime, dreams=5, seed=7)
        report.dreams_stored, report.dreams_dropped, report.current_year  # the same seed dreams the same dreams
    """
    if dreams < 1:
        raise DreamingError(f"the number of dreams must be at least 1, not {dreams}")
    seed = _seed(seed)
    budget = budget or run_budget(runtime)
    before = budget.spent_cents
    load_model(runtime.embedder, progress)
    begin(progress, "loading memories")
    with runtime.db.connect() as con:
        pool = dreamable(corpus.list_nodes(con, latest_only=True, with_vectors=True))
        titles = _titles(con)
    _require_dreamable(len(pool))
    years = sorted({n.year for n in pool if n.year is not None})
    if current_year is None:
        current_year = latest_year(pool)
    elif current_year not in years:
        raise DreamingError(
            f"no nodes from {current_year} to dream from; years in the knowledge base: "
            f"{_span(years) or 'none (leave the year out)'}"
        )
    result = rem_cycle(
        pool,
        runtime.gateway,
        runtime.embedder,
        replace(config, dreams=dreams),
        current_year=current_year,
        rng=np.random.default_rng(seed),
        budget=budget,
        progress=progress,
        affinity=_affinity(primary(pool), titles, runtime, progress),
    )
    report = RemReport(
        seed=seed,
        current_year=current_year,
        dreams_requested=dreams,
        dreams_stored=len(result.nodes),
        dreams_dropped=result.dropped,
        duplicates=result.duplicates,
        dream_ids=[n.id for n in result.nodes],
        failures=result.failures,
        model_calls=result.usage.calls,
        errors=result.errors,
        **spent_fields(before, budget),
    )
    begin(progress, "storing dreams")
    with runtime.db.transaction() as con:
        corpus.insert_nodes(con, result.nodes)
        corpus.insert_relations(con, result.relations)
        dreaming_store.touch_nodes(con, [p for node in result.nodes for p in node.parent_ids], at=as_of)
        events_store.emit(
            con, "dream.rem.completed", {"config": asdict(replace(config, dreams=dreams)), **report.to_json()}
        )
    runtime.flush()
    return report


def _require_dreamable(count: int) -> None:
    if count < 3:
        raise DreamingError(
            f"the knowledge base holds {counted(count, 'node')} to dream over; dreaming needs at least 3",
            remedy=Remedy.INGEST,
        )


def _span(years: list[int]) -> str:
    if len(years) <= 6:
        return ", ".join(map(str, years))
    return f"{years[0]}–{years[-1]} ({len(years)} years)"


def _affinity(memories: list[Node], titles: dict[str, str], runtime: Runtime, progress: Progress | None) -> Affinity:
    """The memories' affinity, said first: their meaning read from their texts headed by their titles when at most
    :data:`TITLED_AT_ONCE` of those are new to the embedding cache (embedded now, kept for the next run), else
    from the vectors stored with the memories, the titles' words still weighed as terms.

    Why not embed them all: a fresh base of 10,000 notes would wait 2 to 20 minutes for its first dream (1,000
    notes took 134 s on a loaded 2-core machine), where a first dream should come within 10 s. Whoever embeds
    :func:`~explorer.affinity.titled_texts` ahead (the enrichment of a large read, through the cache) gives
    every later run the titled meaning.
    """
    texts = titled_texts(memories, titles)
    with runtime.db.connect() as con:
        known = corpus.cached_hashes(con, runtime.embedder.name)
    new = len({h for h in map(text_hash, texts) if h not in known})
    embedder = runtime.embedder if new <= TITLED_AT_ONCE else None
    if embedder is None:
        begin(progress, "measuring affinities")
    else:
        begin(progress, "measuring affinities", len(memories), "memories embedded with their titles")
    return Affinity.of_nodes(memories, titles, embedder, progress=in_phase(progress, "measuring affinities"))


def run_cycle(
    runtime: Runtime,
    dreams: int = 10,
    progress: Progress | None = None,
    seed: int | None = None,
    budget: Budget | None = None,
    as_of: datetime | None = None,
) -> CycleReport:
    """One night (as of ``as_of``: default now): REM exploration, then fusion, then the REM cycle, on one
    budget.

    Example::

        night = run_cycle(runtime, dreams=10, seed=7)
        night.exploration.discoveries, night.fusion.clusters_fused, night.rem.dreams_stored, night.model_calls
    """
    with runtime.db.connect() as con:  # refuse before the night begins, not after two of its three parts
        _require_dreamable(corpus.count_nodes(con, latest_only=True))
    seed = _seed(seed)
    budget = budget or run_budget(runtime)
    explore, fusing, rem_cycle = (in_phase(progress, part) for part in ("exploration", "fusion", "REM"))
    exploration = run_exploration(runtime, seed=seed, progress=explore, budget=budget, as_of=as_of)
    fusion = run_fusion(runtime, progress=fusing, budget=budget, as_of=as_of)
    rem = run_rem(runtime, dreams=dreams, seed=seed + 1, progress=rem_cycle, budget=budget, as_of=as_of)
    return CycleReport(exploration, fusion, rem)


def run_chrono(
    runtime: Runtime,
    paths: Sequence[str | Path],
    every: Every = "year",
    dreams: int = 10,
    progress: Progress | None = None,
    seed: int | None = None,
    max_mb: float = DEFAULT_MAX_MB,
    reading: ReadingConfig = DEFAULT_READING,
    budget: Budget | None = None,
) -> ChronoReport:
    """Read a dated corpus in date order, dreaming ``dreams`` times at the end of each year or month, on one
    budget for the reading and the dreams.

    Example::

        report = run_chrono(runtime, ["notes/"], every="year", dreams=5, seed=7)
        [(period.period, period.dreams_stored) for period in report.periods]  # [('undated', 0), ('2007', 5), ...]
    """
    if every not in ("year", "month"):
        raise DreamingError(f"a period must be year or month, not {every!r}")
    if dreams < 1:
        raise DreamingError(f"the number of dreams must be at least 1, not {dreams}")
    seed = _seed(seed)
    budget = budget or run_budget(runtime)
    report = ChronoReport(every=every)
    loading = IngestReport()
    sources = collect_sources(paths, year=None, domain=None, max_mb=max_mb, report=loading)
    report.errors += loading.errors
    if sources and all(s.year is None for s in sources):
        raise DreamingError(
            "none of these documents has a year: the chronological loop needs dated documents "
            "(a year in Markdown front matter or in each JSONL record)"
        )
    periods = plan_periods(sources, every)
    total, done = len(sources), 0
    for number, period in enumerate(periods):

        def period_progress(
            index: int, count: int, title: str, phase: str = "", key: str = period.key, base: int = done
        ) -> None:
            if progress is None:
                return
            if phase == "reading":  # the period's documents counted among the whole corpus's
                index, count = base + index, total
            progress(index, count, f"{key}: {title}" if title else key, phase)

        read = ingest_sources(runtime, period.sources, config=reading, progress=period_progress, budget=budget)
        done += len(period.sources)
        summary = PeriodReport(
            period.key, documents_added=read.documents_added, documents_skipped=read.documents_skipped
        )
        report.documents_added += read.documents_added
        report.documents_skipped += read.documents_skipped
        report.chunks_added += read.chunks_added
        report.errors += read.errors
        if period.dated and read.documents_added:
            with runtime.db.connect() as con:
                enough = corpus.count_nodes(con, latest_only=True) >= 3
            if enough:
                rem = run_rem(runtime, dreams=dreams, current_year=period.year, seed=seed + number, budget=budget)
                summary.dreamt = True
                summary.dreams_stored, summary.dreams_dropped, summary.failures = (
                    rem.dreams_stored,
                    rem.dreams_dropped,
                    rem.failures,
                )
                report.dreams_stored += rem.dreams_stored
                report.dreams_dropped += rem.dreams_dropped
                report.failures += rem.failures
                report.model_calls += rem.model_calls
        report.periods.append(summary)
    report.spent_cents, report.budget_exhausted = round(budget.spent_cents, 6), budget.exhausted
    runtime.flush()
    _record(runtime, "dream.chrono.completed", {"seed": seed, **report.to_json()})
    if progress:
        progress(total, total, "done")
    return report


def list_dreams(runtime: Runtime, kind: DreamKind | None = None, limit: int = 50, offset: int = 0) -> list[Dream]:
    """The dreams of every kind (or of one: ``rem``, ``exploration``, ``fusion``), newest first, a page at a time,
    each with the memories it came from: what the CLI, the API and the MCP tools list.

    Example::

        for dream in list_dreams(runtime, kind="rem", limit=5):
            print(dream.id[:8], dream.kind, dream.title, [source.title for source in dream.sources])
    """
    with runtime.db.connect() as con:
        return _dreams(con, dreaming_store.list_dreams(con, [kind] if kind else DREAM_KINDS, limit, offset))


def dream(runtime: Runtime, given: str) -> Dream:
    """The dream ``given`` names (its id, or the short id the pages show), whole; :class:`DreamNotFound` when it
    names none.

    Example::

        report = run_rem(runtime, dreams=2)
        dream(runtime, report.dream_ids[0][:8]).text
    """
    with runtime.db.connect() as con:
        found = dreaming_store.find_dream(con, given)
        if found is None:
            raise DreamNotFound(given)
        return _dreams(con, [found])[0]


def _dreams(con: Connection, listed: Sequence[tuple[str, str]]) -> list[Dream]:
    """The dreams ``listed`` (kind, id), in that order, read with their sources and the sources' titles."""
    nodes = {n.id: n for n in corpus.get_nodes(con, [i for k, i in listed if k != "exploration"], with_vectors=False)}
    links = {
        r.id: (r, at) for r, at in dreaming_store.discovered_links(con, [i for k, i in listed if k == "exploration"])
    }
    ends = {p for n in nodes.values() for p in n.parent_ids} | {
        e for r, _ in links.values() for e in (r.source_id, r.target_id)
    }
    sources = {n.id: n for n in corpus.get_nodes(con, ends, with_vectors=False)}
    titles = dreaming_store.document_titles(con, [n.document_id for n in sources.values() if n.document_id])

    def source(node_id: str) -> DreamSource:
        node = sources.get(node_id)
        return DreamSource(node_id, titles.get(node.document_id or "") if node else None)

    def named(node_id: str) -> str:
        node = sources.get(node_id)
        known = source(node_id).title
        return known or (shorten(" ".join(node.text.split()), 8) if node else node_id[:8])

    made = []
    for kind, dream_id in listed:
        if kind == "exploration" and dream_id in links:
            link, at = links[dream_id]
            made.append(
                Dream(
                    link.id,
                    "exploration",
                    f"{named(link.source_id)} ↔ {named(link.target_id)}",
                    link.description or "",
                    link.confidence,
                    [source(link.source_id), source(link.target_id)],
                    at,
                )
            )
        elif dream_id in nodes:
            node = nodes[dream_id]
            question = (node.metadata or {}).get("question") if kind == "rem" else None
            made.append(
                Dream(
                    node.id,
                    "rem" if kind == "rem" else "fusion",
                    " ".join(str(question or shorten(node.text, 12)).split()),
                    node.text,
                    node.confidence,
                    [source(p) for p in node.parent_ids],
                    node.created_at,
                )
            )
    return made


def recent_dreams(runtime: Runtime, limit: int = 50) -> list[DreamView]:
    """The newest dreams, newest first, each with the nodes it was dreamt from.

    Example::

        for view in recent_dreams(runtime, limit=5):
            print(view.question, "->", view.dream.text, [source.id for source in view.sources])
    """
    with runtime.db.connect() as con:
        return _dream_views(con, dreaming_store.recent_nodes(con, "rem_dream", limit))


def get_dream(runtime: Runtime, dream_id: str) -> DreamView | None:
    """One dream with the nodes it was dreamt from (``None`` when ``dream_id`` names no dream), e.g. for a link.

    Example::

        view = get_dream(runtime, dream_id)
        if view is not None:
            print(view.question, [source.text for source in view.sources])
    """
    with runtime.db.connect() as con:
        found = [n for n in corpus.get_nodes(con, {dream_id}, with_vectors=False) if n.type == "rem_dream"]
        return _dream_views(con, found)[0] if found else None


def _dream_views(con: Connection, dreams: list[Node]) -> list[DreamView]:
    parents = {n.id: n for n in corpus.get_nodes(con, {p for d in dreams for p in d.parent_ids}, with_vectors=False)}
    return [
        DreamView(d, (d.metadata or {}).get("question"), [parents[p] for p in d.parent_ids if p in parents])
        for d in dreams
    ]


def recent_verdicts(runtime: Runtime, limit: int = 100) -> list[VerdictView]:
    """The judge's newest verdicts, kept and refused, newest first, with both memories.

    Example::

        for view in recent_verdicts(runtime, limit=20):
            print(view.verdict.kept, view.verdict.reason, view.seed.id, view.candidate.id)
    """
    with runtime.db.connect() as con:
        found = dreaming_store.recent_verdicts(con, limit)
        ends = {
            n.id: n
            for n in corpus.get_nodes(con, {e for v in found for e in (v.seed_id, v.candidate_id)}, with_vectors=False)
        }
    return [
        VerdictView(v, ends[v.seed_id], ends[v.candidate_id]) for v in found if {v.seed_id, v.candidate_id} <= set(ends)
    ]


def recent_discoveries(runtime: Runtime, limit: int = 50) -> list[DiscoveryView]:
    """The newest links found by REM exploration, newest first, with both memories.

    Example::

        for view in recent_discoveries(runtime, limit=10):
            print(view.relation.description, view.relation.confidence, view.seed.id, view.neighbor.id)
    """
    with runtime.db.connect() as con:
        found = dreaming_store.recent_relations(con, EXPLORATION, limit)
        ends = {
            n.id: n
            for n in corpus.get_nodes(
                con, {e for r, _ in found for e in (r.source_id, r.target_id)}, with_vectors=False
            )
        }
    return [
        DiscoveryView(r, ends[r.source_id], ends[r.target_id], at)
        for r, at in found
        if r.source_id in ends and r.target_id in ends
    ]
