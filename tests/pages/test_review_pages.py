"""The review pages: Crystals (approve, reject, archive with notes; evidence), Resonances and Trace."""

from __future__ import annotations

import json

import pytest

from explorer.records.wander import ReviewState
from explorer.store import corpus
from explorer.store import events as events_store
from explorer.wander import review as reviewing
from explorer.wander import service as wander
from explorer.wording import counted


def test_approving_a_crystal_stores_who_when_and_why(open_app, app_runtime, page_text) -> None:
    (crystal, *_) = wander.list_crystals(app_runtime, status="active")
    at = open_app("crystals?view=List")
    assert "Offline provider" in page_text(at)
    assert crystal.insight in [t.value for t in at.text]
    assert len(crystal.connects) == 2  # a crystal joins two stored sources, and the page names them
    assert " ↔ ".join(f"{c['title']} ({c['domain'] or '—'})" for c in crystal.connects) in [t.value for t in at.text]
    at.text_input(key="crystal_reviewer").input("Ada")
    at.text_input(key=f"notes_{crystal.id}").input("holds up against the sources")
    at.button(key=f"approve_{crystal.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    stored = next(c for c in wander.list_crystals(app_runtime) if c.id == crystal.id)
    assert stored.human_approved and stored.human_approved_by == "Ada" and stored.human_approved_at is not None
    assert stored.validation_notes == "holds up against the sources"
    with app_runtime.db.connect() as con:
        decisions = [
            e.payload
            for e in events_store.list_events(con, subject_prefix="wander.crystal.validated")
            if e.payload.get("validated_by") == "human"
        ]
    assert decisions == [
        {
            "crystal_id": crystal.id,
            "decision": "approve",
            "before": "pending",
            "after": "approved",
            "forced": False,
            "validated_by": "human",
            "reviewer": "Ada",
            "notes": "holds up against the sources",
        }
    ]
    # no longer awaiting review; listed under "approved"
    assert f"approve_{crystal.id}" not in [b.key for b in at.button if not b.disabled]
    at.selectbox(key="crystal_status").select("approved").run()
    assert crystal.insight in [t.value for t in at.text]


def test_the_review_queue_opens_first_while_crystals_wait(open_app, app_runtime) -> None:
    def opens_on(at) -> str:
        review = any(w.label == "Crystal under review" for w in at.text_input)
        listing = any(w.key == "crystal_status" for w in at.selectbox)
        assert review != listing
        return "Review" if review else "List"

    assert opens_on(open_app("crystals")) == "Review"
    for crystal in wander.list_crystals(app_runtime):
        if crystal.review_state is ReviewState.PENDING:
            reviewing.decide(app_runtime, crystal.id, "archive")
    assert opens_on(open_app("crystals")) == "List"  # nothing waits: the list
    assert opens_on(open_app("crystals?view=Review")) == "Review"  # unless the link says otherwise


def test_any_entry_of_a_history_can_be_reverted(open_app, app_runtime) -> None:
    (crystal, *_) = wander.list_crystals(app_runtime, status="active")
    approved = reviewing.decide(app_runtime, crystal.id, "approve", reviewer="Ada")
    reviewing.decide(app_runtime, crystal.id, "archive", reviewer="Ada")
    at = open_app("crystals?view=List")
    at.query_params.update(view="Review", crystal=crystal.id)
    at.run()
    older = at.button(key=f"revert_{approved.id}")
    assert older.label == "Revert to before" and not older.disabled  # not only the newest entry
    older.click().run()
    assert not at.exception, [e.value for e in at.exception]
    *_, revert = reviewing.review_history(app_runtime, crystal.id)
    assert revert.reverts == approved.id and revert.forced  # over the archive that came after it, and says so
    assert reviewing.get_crystal(app_runtime, crystal.id).review_state is ReviewState.PENDING


def test_reject_and_archive(open_app, app_runtime) -> None:
    (first, *_) = wander.list_crystals(app_runtime, status="active")
    at = open_app("crystals?view=List")
    at.button(key=f"reject_{first.id}").click().run()
    assert next(c for c in wander.list_crystals(app_runtime) if c.id == first.id).status == "invalidated"
    at.selectbox(key="crystal_status").select("rejected").run()
    # a decision stands: the review state machine greys out every button of a rejected crystal
    assert all(at.button(key=f"{action}_{first.id}").disabled for action in ("approve", "reject", "archive"))
    # a change of mind made on purpose (the CLI's --force), then an approved insight archived from the page
    wander.review_crystal(app_runtime, first.id, "approve", force=True)
    at.selectbox(key="crystal_status").select("approved").run()
    assert at.button(key=f"reject_{first.id}").disabled and not at.button(key=f"archive_{first.id}").disabled
    at.button(key=f"archive_{first.id}").click().run()
    archived = next(c for c in wander.list_crystals(app_runtime) if c.id == first.id)
    assert archived.status == "archived" and archived.review_state is ReviewState.ARCHIVED


@pytest.mark.minilm
def test_every_crystal_opens_its_evidence(open_app, app_runtime) -> None:
    (crystal, *_) = wander.list_crystals(app_runtime)
    evidence = wander.crystal_evidence(app_runtime, crystal.id)
    assert evidence.residues and evidence.chunks
    at = open_app("crystals?view=List")
    shown = [t.value for t in at.text]
    assert all(r.connection in shown for r in evidence.residues if r.connection)
    assert all(c.text in shown for c in evidence.chunks)
    assert f"**Source chunks** ({len(evidence.chunks)})" in [m.value for m in at.markdown]


def test_the_confidence_filter(open_app, app_runtime, page_text) -> None:
    crystals = wander.list_crystals(app_runtime)
    at = open_app("crystals?view=List")
    at.slider(key="crystal_confidence").set_value(1.0).run()
    expected = sum(c.confidence >= 1.0 and c.status == "active" and not c.human_approved for c in crystals)
    assert f"{counted(expected, 'crystal')} shown" in page_text(at)
    if not expected:  # the list says what its filters hide, and how to see it
        assert f"{counted(len(crystals), 'crystal')} in all" in page_text(at)


def test_an_empty_list_says_what_the_status_filter_hides(open_app, app_runtime, page_text) -> None:
    crystals = wander.list_crystals(app_runtime)
    at = open_app("crystals?view=List")
    at.selectbox(key="crystal_status").set_value("archived").run()
    assert "0 crystals shown" in page_text(at)
    assert f"No crystal is archived here; this filter hides {counted(len(crystals), 'crystal')} (" in page_text(at)
    assert "Choose “all” in Status to see them." in page_text(at)


def test_resonances_table_chart_and_invalidation(open_app, app_runtime) -> None:
    (session,) = wander.list_sessions(app_runtime)
    live = [r for r in wander.list_resonances(app_runtime, session_id=session.id) if r.status != "invalidated"]
    at = open_app("resonances")
    table = at.dataframe[0].value
    assert sorted(table["id"]) == sorted(r.id for r in live)
    (chart,) = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    assert spec["layout"]["title"]["text"] == "Resonance strength by step" and spec["data"]
    strongest = max(live, key=lambda r: r.current_strength())
    assert at.selectbox(key="resonance_pick").value == strongest.id
    at.button(key="invalidate").click().run()
    assert next(r for r in wander.list_resonances(app_runtime) if r.id == strongest.id).status == "invalidated"


def test_trace_lists_every_step_and_shows_its_residue(open_app, app_runtime) -> None:
    (session,) = wander.list_sessions(app_runtime)
    view = wander.session_view(app_runtime, session.id)
    at = open_app("trace")
    assert list(at.dataframe[0].value["step"]) == sorted(t.step_number for t in view.trace)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    score = next(t for t in spec["data"] if t["name"] == "score")
    assert score["y"] == [t.selection_scores["score"] for t in sorted(view.trace, key=lambda t: t.step_number)]
    first = min(view.trace, key=lambda t: t.step_number)
    at.selectbox(key="trace_step").select(first.step_number).run()
    residue = next(r for r in view.residues if r.trace_id == first.id)
    shown = [t.value for t in at.text]
    assert residue.connection in shown and residue.possibility in shown


def test_a_step_not_in_the_session_says_so_and_shows_the_last(open_app, app_runtime, page_text) -> None:
    (session,) = wander.list_sessions(app_runtime)
    last = max(t.step_number for t in wander.session_view(app_runtime, session.id).trace)
    at = open_app("trace?step=99")
    assert "The link names step 99, which is not here; showing " in page_text(at)
    assert at.selectbox(key="trace_step").value == last


def test_going_back_to_the_page_without_a_step_shows_what_it_showed_first(open_app, app_runtime) -> None:
    (session,) = wander.list_sessions(app_runtime)
    last = max(t.step_number for t in wander.session_view(app_runtime, session.id).trace)
    at = open_app("trace?step=1")
    assert at.selectbox(key="trace_step").value == 1
    at.query_params.pop("step")  # the back button, to the address before the choice
    at.run()
    assert at.selectbox(key="trace_step").value == last


def test_a_crystal_s_evidence_names_its_loci_in_words(open_app, app_runtime, shown) -> None:
    """A locus reads as "adjacent" or "seed" in the evidence, never as its stored constant ("ADJACENT")."""
    (crystal, *_) = wander.list_crystals(app_runtime)
    loci = wander.crystal_evidence(app_runtime, crystal.id).loci
    assert loci
    at = open_app("crystals?view=List")
    captions = [shown(c.value) for c in at.caption]
    for locus in loci:
        assert any(c.startswith(f"{locus.source_type.lower()} · ") for c in captions), locus.source_type
    assert not any(kind in c for c in captions for kind in ("SEED", "ADJACENT", "BRIDGED", "SERENDIPITOUS"))


def test_a_crystal_whose_note_was_deleted_says_so(open_app, app_runtime) -> None:
    (crystal, *_) = wander.list_crystals(app_runtime, status="active")
    gone, kept = crystal.connects
    with app_runtime.db.transaction() as con:  # as an ingest of its folder does once the note is deleted
        corpus.retire_documents(con, [gone["document_id"]], "removed")
    at = open_app("crystals?view=List")
    bridged = f"{gone['title']} ({gone['domain'] or '—'}; source removed) ↔ {kept['title']} ({kept['domain'] or '—'})"
    assert bridged in [t.value for t in at.text]
