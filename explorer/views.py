"""What the surfaces show, read from the engine: the map's layers, a session's
resonance history, the corpus overview, a node's provenance and the newest consolidation.

Shared by the app's pages and the session archive, so a picture in the app and
the one in an archive are drawn from the same data. Read-only: placing new items
on the map is a write the surfaces ask for first (:func:`explorer.projection.place_new`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from explorer import projection
from explorer.dreaming import service as dreaming
from explorer.figures.charts import StrengthPoint
from explorer.figures.map import MapCluster, MapCrystal, MapData, MapHalo, MapLink, MapLocus, MapStep, NodePoints
from explorer.reading.vault import normal_tag
from explorer.records import Document, Node, NoteLink
from explorer.records.consolidation import Experience, LadderItem, Pattern
from explorer.records.wander import ReviewState, SessionView, utcnow
from explorer.runtime import Runtime
from explorer.store import calls, corpus, stats
from explorer.store import consolidation as consolidation_store
from explorer.store import events as events_store
from explorer.store import projection as projection_store
from explorer.store import reading as reading_store
from explorer.store import wander as wander_store
from explorer.wander import service as wander
from explorer.wording import counted


def _plain(values) -> list:
    """A DuckDB numpy column as Python values (NULLs of masked arrays become None)."""
    if isinstance(values, np.ma.MaskedArray):
        return [
            None if masked else value
            for value, masked in zip(values.data.tolist(), np.ma.getmaskarray(values), strict=True)
        ]
    return list(values.tolist()) if hasattr(values, "tolist") else list(values)


def node_points(runtime: Runtime) -> NodePoints:
    """Where every corpus node and dream stands on the stored projection, with what the map colours and
    filters them by (type, domain, year) and their text for the hover.
    """
    with runtime.db.connect() as con:
        columns = projection_store.map_nodes(con)
    if not len(columns["id"]):
        return NodePoints()
    return NodePoints(
        ids=_plain(columns["id"]),
        x=np.asarray(columns["x"], dtype=float),
        y=np.asarray(columns["y"], dtype=float),
        types=_plain(columns["type"]),
        domains=_plain(columns["domain"]),
        years=_plain(columns["year"]),
        texts=_plain(columns["text"]),
    )


def map_data(
    runtime: Runtime,
    session_id: str | None = None,
    *,
    view: SessionView | None = None,
    discoveries: int = 300,
    clusters: bool = False,
    now: datetime | None = None,
) -> MapData:
    """The map's layers: the corpus (and dreams), the links dreaming discovered, with ``clusters`` the newest
    consolidation's pattern clusters, and, for a session, its loci, path, crystals and resonance halos.

    A view only reads: points not yet on the map are left out until a surface places them
    (:func:`explorer.projection.place_new`), which it does before asking for the view.
    """
    now = now or utcnow()
    data = MapData(nodes=node_points(runtime))
    at = {(k, i): (p.x, p.y) for (k, i), p in projection.load_points(runtime).items() if k != "node"}
    at.update({("node", i): (x, y) for i, x, y in zip(data.nodes.ids, data.nodes.x, data.nodes.y, strict=True)})
    links = dreaming.recent_discoveries(runtime, discoveries) if discoveries else []
    data.links = [
        MapLink(*at[("node", d.seed.id)], *at[("node", d.neighbor.id)], d.relation.description or "")
        for d in links
        if ("node", d.seed.id) in at and ("node", d.neighbor.id) in at
    ]
    if clusters:
        data.clusters = pattern_clusters(runtime)

    if view is None:
        if session_id is None:
            data.title = "Dream Explorer: the corpus"
            data.subtitle = f"{len(data.nodes)} nodes · {len(data.links)} discovered links"
            return data
        view = wander.session_view(runtime, session_id)
    session = view.session
    for locus in view.loci:
        if ("locus", locus.id) in at:
            x, y = at[("locus", locus.id)]
            data.loci.append(
                MapLocus(
                    locus.id,
                    x,
                    y,
                    locus.concept,
                    locus.domains[0] if locus.domains else None,
                    locus.visit_count,
                    locus.source_type,
                )
            )
    trace = sorted(view.trace, key=lambda t: t.step_number)
    if trace and trace[0].from_locus_id and ("locus", trace[0].from_locus_id) in at:
        data.path.append(MapStep(0, trace[0].from_locus_id, *at[("locus", trace[0].from_locus_id)]))
    elif not trace and session.current_locus_id and ("locus", session.current_locus_id) in at:
        data.path.append(MapStep(0, session.current_locus_id, *at[("locus", session.current_locus_id)]))
    data.path += [
        MapStep(t.step_number, t.to_locus_id, *at[("locus", t.to_locus_id)])
        for t in trace
        if ("locus", t.to_locus_id) in at
    ]
    for crystal in view.crystals:
        if ("crystal", crystal.id) in at:
            data.crystals.append(
                MapCrystal(
                    crystal.id,
                    *at[("crystal", crystal.id)],
                    crystal.insight,
                    crystal.review_state,
                    crystal.confidence,
                )
            )
    locus_of_residue = {r.id: r.to_locus_id for r in view.residues}
    for resonance in view.resonances:
        if resonance.status == "invalidated":
            continue
        current = resonance.current_strength(now)
        places = dict.fromkeys(locus_of_residue[r] for r in resonance.supporting_residue_ids if r in locus_of_residue)
        spots = [at[("locus", lid)] for lid in places if ("locus", lid) in at]
        if not spots and ("resonance", resonance.id) in at:
            spots = [at[("resonance", resonance.id)]]
        data.halos += [
            MapHalo(resonance.id, x, y, resonance.strength, current, tuple(resonance.themes), resonance.status)
            for x, y in spots
        ]
    data.title = session.name
    approved = sum(c.review_state is ReviewState.APPROVED for c in view.crystals)
    data.subtitle = (
        f"seed: {session.seed_concept} · {counted(session.step_count, 'step')} · "
        f"{counted(len(view.loci), 'locus', 'loci')} · "
        f"{counted(len(view.crystals), 'crystal')} ({approved} approved) · "
        f"{counted(sum(r.status != 'invalidated' for r in view.resonances), 'resonance')} · {session.status}"
    )
    return data


def strength_history(runtime: Runtime, session_id: str) -> list[StrengthPoint]:
    """Each resonance's strength after every step that touched it, from the session's event log."""
    out: list[StrengthPoint] = []
    pending: list[dict] = []
    for event in wander.session_events(runtime, session_id, limit=100_000):
        if event.subject in ("wander.resonance.detected", "wander.resonance.strengthened"):
            pending.append(event.payload)
        elif event.subject == "wander.step.completed":
            step = int(event.payload.get("step_number", 0))
            out += [
                StrengthPoint(p["resonance_id"], ", ".join(p.get("themes", [])[:3]), step, float(p["strength"]))
                for p in pending
            ]
            pending = []
    return out


FEED_SUBJECTS = (
    "wander.session.created",
    "wander.step.started",
    "wander.step.completed",
    "wander.crystal.formed",
    "wander.circuit.tripped",
    "wander.budget.low",
    "wander.session.paused",
    "wander.session.resumed",
    "wander.session.completed",
)


@dataclass(frozen=True)
class FeedEntry:
    """One line of a session's live feed: what happened, in the app's words (``headline``), and the text it is
    about (``text``: a concept, an insight, a reason; a model's or a document's words, shown as plain text).
    """

    seq: int
    at: datetime
    kind: str  # step, thinking, crystal, warning or session
    headline: str
    text: str | None = None


def _feed_entry(event: events_store.Event) -> FeedEntry:
    p, kind = event.payload, event.subject.removeprefix("wander.")
    step = p.get("step_number")
    if kind == "step.started":
        return FeedEntry(event.seq, event.created_at, "thinking", f"Step {step}: thinking…", p.get("from_concept"))
    if kind == "step.completed":
        crystal = " · a crystal formed" if p.get("crystal_id") else ""
        failures = f" · {counted(len(p['failures']), 'failure')}" if p.get("failures") else ""
        headline = f"Step {step} · {str(p.get('strategy', '')).replace('_', ' ')}{crystal}{failures}"
        return FeedEntry(event.seq, event.created_at, "step", headline, p.get("to_concept"))
    if kind == "crystal.formed":
        where = f" at step {step}" if step else " (asked for)"  # a forced crystallization happens between steps
        headline = f"Crystal formed{where} · confidence {float(p.get('confidence', 0)):.2f}"
        return FeedEntry(event.seq, event.created_at, "crystal", headline, p.get("insight"))
    if kind == "budget.low":
        spent = f"{float(p.get('spent_cents', 0)):.2f} of {p.get('budget_cents')} ¢"
        state = "spent" if p.get("exhausted") else "running low"
        return FeedEntry(event.seq, event.created_at, "warning", f"Cloud budget {state}: {spent}")
    if kind == "circuit.tripped":
        return FeedEntry(event.seq, event.created_at, "warning", f"Circuit breaker at step {step}", p.get("reason"))
    what = kind.removeprefix("session.")
    return FeedEntry(
        event.seq, event.created_at, "session", f"Session {what}", p.get("reason") or p.get("seed_concept")
    )


def session_feed(runtime: Runtime, session_id: str, limit: int = 40) -> list[FeedEntry]:
    """A session's latest steps, crystals, warnings and status changes, newest first, read from its event log:
    what a page polls to show a walk as it happens, whichever process walks it. The step under way (the newest
    event is its start) shows as thinking; other starts are told by their steps' ends.
    """
    with runtime.db.connect() as con:
        of = wander_store.session_id_of(con, session_id)
        latest = events_store.list_events(con, session_id=of, subjects=FEED_SUBJECTS, newest=True, limit=limit)
    happened = [e for e in latest if e.subject != "wander.step.started"]
    under_way = latest[-1:] if latest and latest[-1].subject == "wander.step.started" else []
    return [_feed_entry(e) for e in reversed([*happened, *under_way])]


@dataclass
class CorpusOverview:
    """What the corpus holds, counted by node type, domain and year: the Corpus page's charts and filters."""

    documents: int = 0
    nodes: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    by_domain: dict[str, int] = field(default_factory=dict)
    by_year: dict[int | None, int] = field(default_factory=dict)
    pending: int = 0  # reading steps the model could not do, waiting to be asked again
    deferred: int = 0  # reading steps a fast read left for later, never asked

    @property
    def domains(self) -> list[str]:
        """The domains a person can filter by (nodes without one are counted, not offered)."""
        return sorted(d for d in self.by_domain if d != "(no domain)")

    @property
    def years(self) -> list[int]:
        """The years a person can filter by, oldest first (undated nodes are counted, not offered)."""
        return sorted(y for y in self.by_year if y is not None)


def corpus_overview(runtime: Runtime) -> CorpusOverview:
    """The corpus at a glance, so a person sees what the dreams and walks draw on before browsing it."""
    with runtime.db.connect() as con:
        rows = corpus.domain_year_counts(con)
        documents = len(corpus.list_documents(con, current_only=True))  # a retired one is not drawn on
        pending = reading_store.count_pending(con)
        deferred = reading_store.count_deferred(con)
    by_type: Counter = Counter()
    by_domain: Counter = Counter()
    by_year: Counter = Counter()
    for domain, year, kind, count in rows:
        by_type[kind] += count
        by_domain[domain or "(no domain)"] += count
        by_year[year] += count
    return CorpusOverview(
        documents, sum(by_type.values()), dict(by_type), dict(by_domain), dict(by_year), pending - deferred, deferred
    )


@dataclass
class Provenance:
    """Where a node comes from and what came of it, so any dream can be traced back to the texts behind it."""

    node: Node
    document: Document | None
    parents: list[Node]
    children: list[Node]
    links: list[NoteLink] = field(default_factory=list)  # wikilinks and mentions to and from other documents


def find_documents(runtime: Runtime, *, tag: str | None = None) -> list[Document]:
    """The documents of the corpus, or those tagged ``tag`` (``#`` and case as a person writes them; a tag nested
    under it counts), oldest year first: what ``explorer documents`` lists.
    """
    with runtime.db.connect() as con:
        return corpus.list_documents(con, tag=normal_tag(tag) if tag else None)


def corpus_tags(runtime: Runtime) -> list[str]:
    """Every tag of the corpus's documents, the most used first: what a tag filter offers."""
    with runtime.db.connect() as con:
        return [tag for tag, _ in corpus.all_tags(con)]


def node_provenance(runtime: Runtime, node_id: str) -> Provenance | None:
    """A node with the document it came from, the nodes it was made from and the nodes made from it."""
    with runtime.db.connect() as con:
        found = corpus.get_nodes(con, [node_id], with_vectors=False)
        if not found:
            return None
        node = found[0]
        document = (
            next((d for d in corpus.list_documents(con) if d.id == node.document_id), None)
            if node.document_id
            else None
        )
        return Provenance(
            node,
            document,
            corpus.get_nodes(con, node.parent_ids, with_vectors=False),
            corpus.children_of(con, node.id),
            corpus.note_links(con, node.id),
        )


def store_counts(runtime: Runtime) -> dict[str, Any]:
    """Documents, nodes by type, relations and Wander's records: what `stats` prints and Settings shows."""
    with runtime.db.connect() as con:
        return stats.database_stats(con)


def model_calls(runtime: Runtime) -> list[tuple[str, str, str, int, float]]:
    """(tier, model, outcome, calls, cents) over the whole call log, so a person sees what was spent where."""
    with runtime.db.connect() as con:
        return calls.call_summary(con)


def find_nodes(
    runtime: Runtime,
    *,
    types: list[str] | None = None,
    search: str | None = None,
    domain: str | None = None,
    year: int | None = None,
    tag: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[int, list[Node]]:
    """One page of the corpus browser: how many nodes match the filters (``tag``: their document's, or one nested
    under it), and the page's nodes.
    """
    # a retired document's nodes are not what the corpus holds now: its crystals still show them
    filters: dict[str, Any] = {
        "types": types,
        "search": search,
        "domain": domain,
        "year": year,
        "current_sources": True,
        "tag": normal_tag(tag) if tag else None,
    }
    with runtime.db.connect() as con:
        return corpus.count_nodes(con, **filters), corpus.list_nodes(con, **filters, limit=limit, offset=offset)


@dataclass(frozen=True)
class ConsolidationView:
    """The newest consolidation run that stored knowledge: its report (what the run printed: counts, checks,
    warnings), its ladder rung by rung from the instances up, its patterns, and their member experiences by id.
    """

    run_id: str
    ran_at: datetime
    report: dict[str, Any]
    ladder: list[list[LadderItem]]
    patterns: list[Pattern]
    experiences: dict[str, Experience]

    def below(self, item: LadderItem) -> list[LadderItem]:
        """The items one level down that ``item`` subsumes, in its order, so the ladder opens level by level."""
        if item.level == 0 or item.level > len(self.ladder):
            return []
        lower = {i.id: i for i in self.ladder[item.level - 1]}
        return [lower[i] for i in item.subsumes if i in lower]

    def examples(self, pattern: Pattern) -> list[Experience]:
        """The pattern's example experiences (the members nearest its cluster's centre)."""
        return [self.experiences[i] for i in pattern.example_ids if i in self.experiences]

    def members(self, pattern: Pattern) -> list[Experience]:
        """Every experience of the pattern's cluster."""
        return [self.experiences[i] for i in pattern.member_ids if i in self.experiences]


def latest_consolidation(runtime: Runtime) -> ConsolidationView | None:
    """The newest run with patterns (the knowledge a query answers from), or None when nothing was consolidated."""
    with runtime.db.connect() as con:
        found = consolidation_store.last_run(con)
        if found is None:
            return None
        run_id, ran_at = found
        patterns = consolidation_store.run_patterns(con, run_id)
        members = consolidation_store.experiences_by_id(con, [i for p in patterns for i in p.member_ids])
        return ConsolidationView(
            run_id,
            ran_at,
            consolidation_store.run_report(con, run_id) or {},
            consolidation_store.run_ladder(con, run_id),
            patterns,
            members,
        )


def pattern_clusters(runtime: Runtime, view: ConsolidationView | None = None) -> list[MapCluster]:
    """The newest run's pattern clusters on the map: each member experience placed beside the fitted corpus
    points its embedding is nearest (as new nodes are, without refitting or storing a point); none before a fit.
    """
    view = view or latest_consolidation(runtime)
    if view is None:
        return []
    with runtime.db.connect() as con:
        _, anchors, anchor_xy = projection_store.fitted_anchors(con)
    groups = [view.members(p) for p in view.patterns]
    texts = list(dict.fromkeys(e.text for group in groups for e in group))
    if not len(anchors) or not texts:
        return []
    config = projection.ProjectionConfig()
    placed = projection.place_by_neighbours(
        anchors, anchor_xy, runtime.embedder.embed(texts), config.place_k, config.place_temperature
    )
    at = dict(zip(texts, placed.tolist(), strict=True))
    return [
        MapCluster(
            pattern.id,
            pattern.name,
            tuple(at[e.text][0] for e in group),
            tuple(at[e.text][1] for e in group),
            tuple(e.text for e in group),
        )
        for pattern, group in zip(view.patterns, groups, strict=True)
        if group
    ]
