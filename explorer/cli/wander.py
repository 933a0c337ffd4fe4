"""``explorer wander …``: the Wander engine's API, command by command, with the same names."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from explorer.cli.choices import PAGE_MAX, STEPS_PER_RUN, CrystalStatus, FenceAction, ReviewState, SessionStatus
from explorer.cli.common import DbOption, JsonOption, print_json, runtime_for
from explorer.cli.consolidate import summary
from explorer.cli.jobs import BackgroundOption, run_kind
from explorer.cli.run_outcome import Asked, exit_if_nothing_came
from explorer.errors import ExplorerError
from explorer.wander.errors import InvalidRequest
from explorer.wording import SOURCE_RETIRED, counted

if TYPE_CHECKING:
    from explorer.jobs.kinds import WalkReport
    from explorer.records.wander import Crystal, Review, ReviewDecision, Session
    from explorer.runtime import Runtime

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Wander: a seeded walk through idea space that dwells, resonates and crystallizes.",
)

SessionArg = Annotated[
    str,
    typer.Argument(
        help="Session id, or its first digits as the app shows them (see `explorer wander list`).", show_default=False
    ),
]
CrystalArg = Annotated[
    str,
    typer.Argument(
        help="Crystal id, or its first digits as the app shows them (see `explorer wander crystals`).",
        show_default=False,
    ),
]


# -- JSON shapes ------------------------------------------------------------------


def connects(c: Crystal) -> str:
    """What a crystal connects, as one line ("" for a crystal formed before crystals named it)."""
    ends = [
        f"{e.get('name')} ({e.get('domain') or 'no domain'}"
        + (f"; {SOURCE_RETIRED[e['retired']]})" if e.get("retired") else ")")
        for e in c.connects
    ]
    return f"connects {' and '.join(ends)}" if ends else ""


def _say_session(s: Session) -> None:
    reason = f" ({s.status_reason})" if s.status_reason else ""
    typer.echo(f"{s.id}  {s.status}{reason}  step {s.step_count}/{s.max_steps}  {s.name}")


# -- sessions -----------------------------------------------------------------------


@app.command()
def new(
    seed_concept: Annotated[str, typer.Option("--seed-concept", help="Where the walk starts.", show_default=False)],
    name: Annotated[str | None, typer.Option(help="A name for the session.")] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Random seed (the same seed replays the same walk).")
    ] = None,
    max_steps: Annotated[int, typer.Option("--max-steps", help="The walk ends after this many steps.")] = 1000,
    temperature: Annotated[float, typer.Option(help="Softmax temperature of the choice of the next locus.")] = 0.7,
    budget_cents: Annotated[
        int | None, typer.Option("--budget-cents", help="Cloud budget (default: EXPLORER_BUDGET_CENTS, 500).")
    ] = None,
    checkpoint_every: Annotated[
        int, typer.Option("--checkpoint-every", help="Pause for review every N steps (0: never).")
    ] = 50,
    allowed_domains: Annotated[
        str | None, typer.Option("--allowed-domains", help="Comma-separated domains to stay in.")
    ] = None,
    forbidden_domains: Annotated[
        str | None, typer.Option("--forbidden-domains", help="Comma-separated domains to avoid.")
    ] = None,
    attractor: Annotated[str | None, typer.Option(help="A concept that pulls the walk towards it.")] = None,
    max_drift: Annotated[
        float, typer.Option("--max-drift", help="Cosine distance from the seed the walk may reach.")
    ] = 0.8,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Start a wander session at a seed concept."""
    from explorer.wander import service as wander_service
    from explorer.wander.config import SessionConfig

    runtime = runtime_for(db)
    session = wander_service.create_session(
        runtime,
        SessionConfig(
            seed_concept=seed_concept,
            name=name,
            random_seed=seed,
            max_steps=max_steps,
            temperature=temperature,
            cloud_budget_cents=runtime.settings.cloud_budget_cents if budget_cents is None else budget_cents,
            human_checkpoint_frequency=checkpoint_every,
            attractor=attractor,
            max_drift_distance=max_drift,
            allowed_domains=tuple(d.strip() for d in allowed_domains.split(",")) if allowed_domains else None,
            forbidden_domains=tuple(d.strip() for d in forbidden_domains.split(",")) if forbidden_domains else None,
        ),
    )
    if as_json:
        print_json({"session_id": session.id})
    else:
        typer.echo(f"session {session.id} created: {session.name} (seed {session.random_seed})")


@app.command("list")
def list_(
    status: Annotated[SessionStatus | None, typer.Option(help="Only sessions with this status.")] = None,
    limit: Annotated[int, typer.Option(min=0, max=PAGE_MAX, help="How many sessions to list.")] = 50,
    offset: Annotated[int, typer.Option(min=0, max=PAGE_MAX, help="How many of the newest to skip.")] = 0,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List sessions, newest first."""
    from explorer.wander import service as wander_service

    sessions = wander_service.list_sessions(runtime_for(db, create=False), status=status, limit=limit, offset=offset)
    if as_json:
        print_json([s.to_json() for s in sessions])
        return
    for s in sessions:
        _say_session(s)
    if not sessions:
        typer.echo("no sessions yet; start one with `explorer wander new --seed-concept TEXT`")


@app.command()
def show(session_id: SessionArg, db: DbOption = None, as_json: JsonOption = False) -> None:
    """A session with its loci, trace, residues, resonances and crystals."""
    from explorer.text import shorten
    from explorer.wander import service as wander_service

    view = wander_service.session_view(runtime_for(db, create=False), session_id)
    if as_json:
        print_json(
            {
                "session": view.session.to_json(),
                "loci": [locus.to_json() for locus in view.loci],
                "trace": [t.to_json() for t in view.trace],
                "residues": [r.to_json() for r in view.residues],
                "resonances": [r.to_json() for r in view.resonances],
                "crystals": [c.to_json() for c in view.crystals],
                "warm_memory": [{"cluster_type": w.cluster_type, "content": w.content} for w in view.warm_memory],
            }
        )
        return
    _say_session(view.session)
    concepts = {locus.id: locus.concept for locus in view.loci}
    for t in view.trace:
        typer.echo(f"  {t.step_number:>4} {t.strategy or '':<13} → {shorten(concepts.get(t.to_locus_id, '?'), 12)}")
    for r in view.resonances:
        typer.echo(f"  resonance {r.status:<9} ×{r.occurrences} {r.current_strength():.2f}  {', '.join(r.themes)}")
    for c in view.crystals:
        typer.echo(f"  crystal {c.id} ({c.confidence:.2f}, {c.status}): {shorten(c.insight, 30)}")
        if c.connects:
            typer.echo(f"    {connects(c)}")


@app.command()
def delete(session_id: SessionArg, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Delete a session and all it owns (its crystals stay, without the session)."""
    from explorer.wander import service as wander_service

    wander_service.delete_session(runtime_for(db), session_id)
    if as_json:
        print_json({"deleted": session_id})
    else:
        typer.echo(f"session {session_id} deleted")


def _status_command(
    change: Callable[..., Session], session_id: str, db: str | None, as_json: bool, **kwargs: Any
) -> None:
    """Move a session to another status (``change`` is the service function) and print where it stands."""
    session = change(runtime_for(db), session_id, **kwargs)
    if as_json:
        print_json(session.to_json())
    else:
        _say_session(session)


@app.command()
def pause(
    session_id: SessionArg,
    reason: Annotated[str | None, typer.Option(help="Why.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Pause an active session."""
    from explorer.wander import service as wander_service

    _status_command(wander_service.pause, session_id, db, as_json, reason=reason)


@app.command()
def resume(session_id: SessionArg, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Resume a paused session (after a checkpoint, a tripped circuit breaker or a pause)."""
    from explorer.wander import service as wander_service

    _status_command(wander_service.resume, session_id, db, as_json)


@app.command()
def stop(
    session_id: SessionArg,
    abandon: Annotated[bool, typer.Option("--abandon", help="Mark it abandoned instead of completed.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Stop a session (marks it completed, and consolidates the walks' experiences)."""
    from explorer.wander import service as wander_service

    runtime = runtime_for(db)
    session = (wander_service.abandon if abandon else wander_service.stop)(runtime, session_id)
    consolidated = consolidate_completed(runtime, session.status, as_json)
    if as_json:
        print_json({**session.to_json(), **consolidated})
    else:
        _say_session(session)


# -- wandering ------------------------------------------------------------------------


def consolidate_completed(runtime: Runtime, status: str, as_json: bool) -> dict[str, Any]:
    """The session-complete trigger, after a command that may have completed a session: ``{"consolidation": …}``
    with the run's id, status and numbers when it ran (nothing for a session still open). The walk stands
    whatever happens here, so trouble with the consolidation is a warning, not the command's failure.
    """
    from explorer.consolidation import service as consolidation_service

    try:
        report = consolidation_service.after_session(runtime, status)
    except ExplorerError as exc:
        typer.echo(f"warning: the session completed, but consolidating it failed: {exc}", err=True)
        return {"consolidation": {"status": "failed", "error": str(exc)}}
    if report is None:
        return {}
    if not as_json:
        typer.echo(f"session completed, consolidated: {summary(report.to_json())[0]}")
    return {"consolidation": report.brief()}


@app.command()
def step(session_id: SessionArg, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Take one step."""
    from explorer.text import shorten
    from explorer.wander import service as wander_service

    runtime = runtime_for(db)
    result = wander_service.step(runtime, session_id)
    runtime.flush()
    consolidated = consolidate_completed(runtime, result.status, as_json)
    if as_json:
        print_json({**result.to_json(), **consolidated})
        return
    typer.echo(f"step {result.step_number} ({result.trace.strategy}): {shorten(result.to_locus.concept, 20)}")
    if result.residue:
        typer.echo(f"  themes: {', '.join(result.residue.themes)}")
    if result.crystal:
        typer.echo(f"  crystal: {result.crystal.insight}")
        typer.echo(f"  {connects(result.crystal)}")
    for failure in result.failures:
        typer.echo(f"  warning: {failure}", err=True)
    if result.status != "active":
        typer.echo(f"  session {result.status}: {result.status_reason}")


@app.command()
def run(
    session_id: SessionArg,
    steps: Annotated[int, typer.Option("--steps", min=1, max=STEPS_PER_RUN, help="How many steps to take.")] = 10,
    background: BackgroundOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Take up to N steps; stops early at a checkpoint, a tripped circuit breaker or max steps."""
    from explorer.jobs.kinds import WANDER_RUN

    report = run_kind(
        WANDER_RUN,
        {"session_id": session_id, "steps": steps},
        db=db,
        background=background,
        as_json=as_json,
        bar=("wandering", "step"),
        summary=_walked,
    )
    if report is None:
        return
    if report.consolidation_error is not None:
        typer.echo(
            f"warning: the session completed, but consolidating it failed: {report.consolidation_error}", err=True
        )
    walk = report.walk
    # a failed dwelling is a model's answer that failed or could not be read (the offline provider's never fails)
    came = walk.steps_completed - walk.dwellings_failed
    exit_if_nothing_came(
        Asked(
            "step", walk.steps_completed, failed=walk.dwellings_failed, came=came, asked_model=True, errors=walk.errors
        )
    )
    if not as_json:
        for error in walk.errors:
            typer.echo(f"warning: {error}", err=True)


def _walked(report: WalkReport) -> list[str]:
    """A walk's summary line, and its consolidation's when the walk completed the session."""
    walk = report.walk
    lines = [
        f"{walk.steps_completed} steps, {walk.crystals_formed} crystals"
        + (f", {walk.dwellings_failed} failed to dwell" if walk.dwellings_failed else "")
        + (f"; stopped: {walk.stopped_reason}" if walk.stopped_reason else "")
    ]
    if report.consolidation is not None:
        lines.append(f"session completed, consolidated: {summary(report.consolidation.to_json())[0]}")
    return lines


@app.command()
def inject(
    session_id: SessionArg,
    concept: Annotated[str, typer.Argument(help="The concept to add as a locus.", show_default=False)],
    no_visit: Annotated[bool, typer.Option("--no-visit", help="Add it without making the next step go there.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Inject a concept to guide the walk (the next step visits it unless --no-visit)."""
    from explorer.wander import service as wander_service

    locus = wander_service.inject(runtime_for(db), session_id, concept, force_visit=not no_visit)
    if as_json:
        print_json({"locus_id": locus.id, "force_visit": not no_visit, "domains": locus.domains})
    else:
        typer.echo(f"locus {locus.id} injected" + ("" if no_visit else "; the next step goes there"))


@app.command()
def fence(
    session_id: SessionArg,
    concept: Annotated[str, typer.Argument(help="The concept to fence in or out.", show_default=False)],
    action: Annotated[FenceAction | None, typer.Option(help="include or exclude.")] = None,
    include: Annotated[bool, typer.Option("--include", help="Widen the fence around the concept.")] = False,
    exclude: Annotated[bool, typer.Option("--exclude", help="Cut the concept's surroundings out.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Widen the fence around a concept, or cut it out."""
    from explorer.wander import service as wander_service

    chosen = [a for a, on in (("include", include), ("exclude", exclude)) if on] + ([action] if action else [])
    if len(set(chosen)) != 1:
        raise InvalidRequest("say exactly one of --include, --exclude (or --action include|exclude)")
    session = wander_service.fence(runtime_for(db), session_id, concept, chosen[0])
    if as_json:
        print_json(session.to_json())
    else:
        typer.echo(f"fence of {session.id}: " + "; ".join(f"{a.action} {a.concept!r}" for a in session.fence))


@app.command()
def crystallize(session_id: SessionArg, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Force a crystallization attempt at the current locus."""
    from explorer.wander import service as wander_service

    attempt = wander_service.crystallize(runtime_for(db), session_id)
    if as_json:
        print_json({"crystal": attempt.crystal.to_json() if attempt.crystal else None, "reason": attempt.reason})
    elif attempt.crystal:
        typer.echo(f"crystal {attempt.crystal.id}: {attempt.crystal.insight}")
    else:
        typer.echo(f"no crystal: {attempt.reason}")


@app.command()
def review(
    crystal_id: CrystalArg,
    approve: Annotated[bool, typer.Option("--approve")] = False,
    reject: Annotated[bool, typer.Option("--reject")] = False,
    archive: Annotated[bool, typer.Option("--archive")] = False,
    notes: Annotated[str | None, typer.Option(help="Why; kept as the crystal's validation notes.")] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who reviewed it.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Change the decision on a crystal reviewed before.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve, reject or archive a crystal (once; --force changes an earlier decision)."""
    from explorer.wander import review as reviewing

    decision = _decision(approve, reject, archive)
    crystal = reviewing.review_crystal(runtime_for(db), crystal_id, decision, notes=notes, reviewer=by, force=force)
    if as_json:
        print_json(crystal.to_json())
    else:
        typer.echo(f"crystal {crystal.id}: {crystal.review_state}")


def _decision(approve: bool, reject: bool, archive: bool) -> ReviewDecision:
    from explorer.wander.guards import require_decision

    decisions = [d for d, on in (("approve", approve), ("reject", reject), ("archive", archive)) if on]
    if len(decisions) != 1:
        raise InvalidRequest("say exactly one of --approve, --reject, --archive")
    return require_decision(decisions[0])


_PAST = {"approve": "approved", "reject": "rejected", "archive": "archived"}


@app.command("review-bulk")
def review_bulk(
    approve: Annotated[bool, typer.Option("--approve")] = False,
    reject: Annotated[bool, typer.Option("--reject")] = False,
    archive: Annotated[bool, typer.Option("--archive")] = False,
    session: Annotated[str | None, typer.Option("--session", help="Only this session's crystals.")] = None,
    min_confidence: Annotated[
        float | None, typer.Option("--min-confidence", min=0.0, max=1.0, help="Only crystals at least this sure.")
    ] = None,
    max_confidence: Annotated[
        float | None, typer.Option("--max-confidence", min=0.0, max=1.0, help="Only crystals at most this sure.")
    ] = None,
    state: Annotated[
        list[ReviewState] | None,
        typer.Option("--state", help="Only crystals in this review state (repeatable; default: pending)."),
    ] = None,
    notes: Annotated[str | None, typer.Option(help="Why; kept as each crystal's validation notes.")] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who reviewed them.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Also change the crystals whose earlier decision it overturns.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only count what it would change.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do it without asking (needed when not at a terminal).")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve, reject or archive every crystal a filter takes (after a count and a confirmation)."""
    from explorer.records.wander import ReviewFilter
    from explorer.records.wander import ReviewState as State
    from explorer.wander import review as reviewing

    decision = _decision(approve, reject, archive)
    where = ReviewFilter(
        session_id=session,
        min_confidence=min_confidence,
        max_confidence=max_confidence,
        states=frozenset(State(s) for s in state or [ReviewState.PENDING]),
    )
    runtime = runtime_for(db)
    arguments: dict[str, Any] = {"notes": notes, "reviewer": by, "force": force}
    report = reviewing.bulk_review(runtime, where, decision, dry_run=True, **arguments)
    if not dry_run and report.reviewed and not yes:
        question = f"{decision} {counted(report.reviewed, 'crystal')}?"
        if not sys.stdin.isatty():
            raise InvalidRequest(f"this would {question[:-1]}; add --yes to do it, or --dry-run to only count")
        typer.confirm(question, abort=True, err=True)
    if not dry_run:
        report = reviewing.bulk_review(runtime, where, decision, **arguments)
    if as_json:
        print_json(report.to_json())
        return
    done = f"would {decision}" if dry_run else _PAST[decision]
    refused = f"; {report.refused} more match but keep their decision (--force changes it)" if report.refused else ""
    batch = f" (batch {report.batch_id})" if report.batch_id else ""
    typer.echo(f"{done} {report.reviewed} of {counted(report.matched, 'matching crystal')}{batch}{refused}")


def _say_review(r: Review) -> None:
    from explorer.text import shorten

    when = r.created_at.strftime("%Y-%m-%d %H:%M:%S") if r.created_at else "?"
    what = f"revert of {r.reverts}" if r.reverts else r.decision
    marks = [
        m
        for m, on in (("forced", r.forced), (f"bulk {r.batch_id}", r.batch_id), ("not revertible", not r.revertible))
        if on
    ]
    extra = f" [{', '.join(marks)}]" if marks else ""
    notes = f": {shorten(r.notes, 20)}" if r.notes else ""
    typer.echo(f"{when}  {r.id}  {what}  {r.state_before} -> {r.state_after}  by {r.reviewer}{extra}{notes}")


@app.command()
def history(
    crystal_id: CrystalArg,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A crystal's reviews and reverts, oldest first (each with the id `explorer wander revert` takes)."""
    from explorer.wander import review as reviewing

    entries = reviewing.review_history(runtime_for(db, create=False), crystal_id)
    if as_json:
        print_json([r.to_json() for r in entries])
        return
    if not entries:
        typer.echo(f"crystal {crystal_id} has not been reviewed")
    for r in entries:
        _say_review(r)


@app.command()
def revert(
    review_id: Annotated[
        str, typer.Argument(help="Review id, or its first digits (see `explorer wander history`).", show_default=False)
    ],
    notes: Annotated[str | None, typer.Option(help="Why it is reverted (kept in the log).")] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who reverted it.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Revert it even though the crystal was reviewed again since.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Put a crystal back exactly as it was before a review (the revert is logged, and can be reverted too)."""
    from explorer.wander import review as reviewing

    runtime = runtime_for(db)
    entry = reviewing.revert_review(runtime, review_id, reviewer=by, notes=notes, force=force)
    if as_json:
        print_json({"review": entry.to_json(), "crystal": reviewing.get_crystal(runtime, entry.crystal_id).to_json()})
        return
    typer.echo(f"crystal {entry.crystal_id}: {entry.state_after} again (revert {entry.id})")


@app.command()
def crystals(
    status: Annotated[CrystalStatus | None, typer.Option(help="Only crystals with this status.")] = None,
    min_confidence: Annotated[
        float | None, typer.Option("--min-confidence", min=0.0, max=1.0, help="Only crystals at least this sure.")
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session's crystals.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Crystals across sessions."""
    from explorer.text import shorten
    from explorer.wander import service as wander_service

    found = wander_service.list_crystals(
        runtime_for(db, create=False), status=status, min_confidence=min_confidence, session_id=session
    )
    if as_json:
        print_json([c.to_json() for c in found])
        return
    for c in found:
        typer.echo(f"{c.id} ({c.confidence:.2f}, {c.review_state}): {shorten(c.insight, 30)}")
        if c.connects:
            typer.echo(f"  {connects(c)}")


@app.command()
def evidence(
    crystal_id: CrystalArg,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """What supports a crystal: residues, loci, corpus nodes and their source chunks."""
    from explorer.text import shorten
    from explorer.wander import service as wander_service

    found = wander_service.crystal_evidence(runtime_for(db, create=False), crystal_id)
    if as_json:
        print_json(
            {
                "crystal": found.crystal.to_json(),
                "residues": [r.to_json() for r in found.residues],
                "loci": [locus.to_json() for locus in found.loci],
                "nodes": [{"id": n.id, "type": n.type, "domain": n.domain, "text": n.text} for n in found.nodes],
                "chunks": [
                    {
                        "id": n.id,
                        "document_id": n.document_id,
                        "chunk_index": n.chunk_index,
                        "section": n.section,
                        "text": n.text,
                        "retired": found.retired.get(n.document_id or ""),
                    }
                    for n in found.chunks
                ],
            }
        )
        return
    typer.echo(found.crystal.insight)
    if found.crystal.connects:
        typer.echo(connects(found.crystal))
    for n in found.chunks:
        mark = f" ({SOURCE_RETIRED[found.retired[n.document_id]]})" if n.document_id in found.retired else ""
        typer.echo(f"  chunk {n.id}{f' ({n.section})' if n.section else ''}{mark}: {shorten(n.text, 25)}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words.", show_default=False)],
    types: Annotated[list[str] | None, typer.Option("--type", help="locus, crystal or resonance (repeatable).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=PAGE_MAX, help="How many hits at most.")] = 10,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search loci, crystals and resonances by meaning."""
    from explorer.text import shorten
    from explorer.wander import service as wander_service

    hits = wander_service.search(
        runtime_for(db, create=False), query, types=tuple(types) if types else wander_service.SEARCH_TYPES, limit=limit
    )
    if as_json:
        print_json(
            [
                {"type": h.type, "id": h.id, "text": h.text, "score": round(h.score, 4), "session_id": h.session_id}
                for h in hits
            ]
        )
        return
    for h in hits:
        typer.echo(f"{h.score:.2f} {h.type:<9} {h.id}  {shorten(h.text, 20)}")
