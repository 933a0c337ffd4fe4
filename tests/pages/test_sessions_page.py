"""The Sessions page: the creation form, stepping and running with progress, the checkpoint banner,
pause / resume / stop / delete, and (in a real browser) the live event feed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields

import harness
from playwright.sync_api import expect

from explorer import jobs, projection
from explorer.wander import service as wander
from explorer.wander.config import SessionConfig

FORM = {
    "new_seed_concept": "seed_concept",
    "new_name": "name",
    "new_attractor": "attractor",
    "new_allowed": "allowed_domains",
    "new_forbidden": "forbidden_domains",
    "new_max_drift": "max_drift_distance",
    "new_temperature": "temperature",
    "new_max_steps": "max_steps",
    "new_budget": "cloud_budget_cents",
    "new_checkpoint": "human_checkpoint_frequency",
    "new_seed": "random_seed",
}


def widget(at, key):
    for kind in ("text_area", "text_input", "multiselect", "number_input"):
        for element in getattr(at, kind):
            if element.key == key:
                return element
    raise KeyError(key)


def test_the_form_has_every_configuration_field_with_its_default_and_help(open_app, app_runtime) -> None:
    at = open_app("sessions")
    assert set(FORM.values()) == {f.name for f in fields(SessionConfig)}
    defaults = {f.name: f.default for f in fields(SessionConfig)}
    for key, name in FORM.items():
        element = widget(at, key)
        assert element.help, f"{name} has no help text"
        if name in ("max_drift_distance", "temperature", "max_steps", "human_checkpoint_frequency", "random_seed"):
            assert element.value == defaults[name], name
    assert widget(at, "new_budget").value == app_runtime.settings.cloud_budget_cents


def test_creating_a_session_stores_what_the_form_says(open_app, app_runtime, page_text) -> None:
    at = open_app("sessions")
    widget(at, "new_seed_concept").input("how jokes about work change with the times")
    widget(at, "new_name").input("Work jokes")
    widget(at, "new_forbidden").set_value(["python"])
    widget(at, "new_temperature").set_value(0.4)
    widget(at, "new_checkpoint").set_value(0)
    widget(at, "new_seed").set_value(11)
    next(b for b in at.form_submit_button if b.label == "Create session").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    created = wander.list_sessions(app_runtime)[0]
    assert (
        created.name,
        created.seed_concept,
        created.forbidden_domains,
        created.temperature,
        created.human_checkpoint_frequency,
        created.random_seed,
    ) == ("Work jokes", "how jokes about work change with the times", ["python"], 0.4, 0, 11)
    assert "Created “Work jokes”" in page_text(at)
    # the new session is the one opened, and its seed locus is already on the map
    assert at.subheader[1].value == "Work jokes"
    assert projection.projection_status(app_runtime).missing["locus"] == 0


def test_checkpoint_banner_resume_step_and_run_with_progress(
    open_app, app_runtime, page_text, shown, after_jobs
) -> None:
    (session,) = wander.list_sessions(app_runtime)
    at = open_app("sessions")
    assert "waits at a human checkpoint" in page_text(at)
    assert at.button(key="step_once").disabled and at.button(key="run_n").disabled
    at.button(key="resume").click().run()
    assert wander.get_session(app_runtime, session.id).status == "active"
    assert "waits at a human checkpoint" not in page_text(at)

    at.button(key="step_once").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert wander.get_session(app_runtime, session.id).step_count == session.step_count + 1
    assert {m.label: m.value for m in at.metric}["Steps"] == str(session.step_count + 1)
    assert at.get("progress") and "1 step taken" in at.get("progress")[0].proto.text

    at.number_input(key="run_steps").set_value(5)
    at.button(key="run_n").click().run()
    # many steps are a background job: the page follows it live, and says how it went once it has ended
    (job,) = jobs.list_jobs(app_runtime)
    assert (job.kind, job.params) == ("wander.run", {"session_id": session.id, "steps": 5})
    assert "A background job is walking this session" in page_text(at.run())
    assert at.button(key="run_n").disabled and at.button(key=f"cancel_walk_job_{session.id}")
    after_jobs(at)
    assert not at.exception, [e.value for e in at.exception]
    after = wander.get_session(app_runtime, session.id)
    # the next checkpoint (every 3 steps) stops the run and says so
    assert after.step_count == session.step_count + 3 and after.status == "paused"
    assert "stopped: paused: checkpoint" in shown(at.get("progress")[0].proto.text)
    assert "waits at a human checkpoint" in page_text(at)
    metrics = {m.label: m.value for m in at.metric}
    view = wander.session_view(app_runtime, session.id)
    assert metrics["Steps"] == str(after.step_count) and metrics["Loci"] == str(len(view.loci))
    assert projection.projection_status(app_runtime).missing["locus"] == 0  # new loci placed as they came


def test_pause_stop_and_delete(open_app, app_runtime) -> None:
    (session,) = wander.list_sessions(app_runtime)
    crystals = wander.list_crystals(app_runtime, session_id=session.id)
    at = open_app("sessions")
    at.button(key="resume").click().run()
    at.button(key="pause").click().run()
    assert wander.get_session(app_runtime, session.id).status_reason == "paused by a person"
    at.button(key="stop").click().run()
    assert wander.get_session(app_runtime, session.id).status == "completed"
    assert at.button(key="stop").disabled and at.button(key="step_once").disabled
    at.button(key="delete").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert wander.list_sessions(app_runtime) == []
    # the crystals stay, without a session; the deleted loci left the map
    assert {c.id for c in wander.list_crystals(app_runtime)} == {c.id for c in crystals}
    assert all(k != "locus" for k, _ in projection.load_points(app_runtime))


def test_steps_and_crystals_of_another_process_appear_in_the_live_feed_without_a_reload(
    browser, app_db, app_runtime
) -> None:
    (session,) = wander.list_sessions(app_runtime)
    wander.resume(app_runtime, session.id)  # it waits at a checkpoint; the other process walks it on
    page = browser.page
    harness.open_page(page, browser.url, "sessions")
    feed = page.locator(".st-key-event_feed")
    expect(feed).to_contain_text(f"Step {session.step_count} ·")
    expect(feed).to_contain_text("Session resumed")
    page.evaluate("window.sameDocument = true")  # gone if the page reloads

    def explorer(*args: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "explorer", "wander", *args, session.id, "--db", str(app_db), "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    explorer("step")
    step = wander.session_events(app_runtime, session.id)[-1]
    assert step.subject == "wander.step.completed"
    expect(feed).to_contain_text(f"Step {step.payload['step_number']} ·", timeout=60_000)
    expect(feed).to_contain_text(step.payload["to_concept"])  # the concept as plain text

    explorer("crystallize")
    formed = [e for e in wander.session_events(app_runtime, session.id) if e.subject == "wander.crystal.formed"]
    assert formed[-1].payload.get("forced"), "the other process's crystallization formed no crystal"
    expect(feed).to_contain_text("Crystal formed (asked for)", timeout=60_000)
    expect(feed).to_contain_text(formed[-1].payload["insight"])
    assert page.evaluate("window.sameDocument") is True


def test_an_empty_database_says_documents_come_first(open_app, page_text, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_DB", str(tmp_path / "empty.duckdb"))
    at = open_app("sessions")
    assert "the knowledge base holds, and it is empty: add documents first" in page_text(at)
    assert not at.expander[0].proto.expanded  # the form waits, folded, until there is something to walk through


def test_the_sessions_table_shows_a_missing_value_as_a_dash(open_app, app_runtime) -> None:
    """A session that has not stepped yet has no last step: its cell reads "—", and no cell reads "None"."""
    wander.create_session(app_runtime, SessionConfig(seed_concept="tides and the moon", name="Not yet stepped"))
    at = open_app("sessions")
    (table,) = at.dataframe
    rows = table.value
    assert rows.loc[rows["name"] == "Not yet stepped", "last step"].tolist() == ["—"]
    assert not rows.isna().any().any()
    assert "None" not in {str(cell) for cell in rows.to_numpy().ravel()}
