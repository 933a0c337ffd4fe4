"""Reviewing at speed, in a real browser: 50 crystals reviewed on the Crystals page's Review queue by keyboard
alone (A approve, X reject, S skip, Backspace undo), each key's crystal checked against the queue's order; a link to
one crystal opens it with its history, whose newest entry is reverted from there; then a bulk review with its count
and confirmation. The time from each key to the next crystal drawn is printed and recorded (the figure in
docs/benchmarks.md comes from ``python -m bench.review``, which runs this same session); the test asserts what was
decided.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import harness

from explorer.records.wander import Crystal, ReviewState
from explorer.wander import review

sys.path.insert(0, str(harness.REPO))
from bench.review import insight, plan, review_app, review_by_keyboard, summary  # noqa: E402

COUNT = 50


def expected_session(keys: list[str], crystals: list[Crystal]) -> tuple[list[str], dict[str, list[str]]]:
    """What the queue shows before each key, and each crystal's log (decisions and reverts), as the page's rules
    say: surest first, a skipped crystal after every other, Backspace takes back the last decision or skip.
    """
    pending = [c.id for c in sorted(crystals, key=lambda c: (-c.confidence, c.id))]
    skipped: list[str] = []
    done: list[tuple[str, str]] = []
    logs: dict[str, list[str]] = {c.id: [] for c in crystals}
    text = {c.id: c.insight for c in crystals}
    shown_before: list[str] = []
    current = pending[0]
    for key in keys:
        shown_before.append(text[current])
        if key in ("a", "x"):
            logs[current].append("approve" if key == "a" else "reject")
            pending.remove(current)
            done.append(("review", current))
        elif key == "s":
            skipped = [i for i in skipped if i != current] + [current]
            done.append(("skip", current))
        else:
            kind, undone = done.pop()
            if kind == "review":
                logs[undone].append("revert")
                pending.append(undone)
                pending.sort(key=lambda i: next(-c.confidence for c in crystals if c.id == i))
            else:
                skipped.remove(undone)
            current = undone
            continue
        order = [i for i in pending if i not in skipped] + [i for i in skipped if i in pending]
        current = order[0] if order else ""
    return shown_before, logs


def test_fifty_crystals_reviewed_by_keyboard(tmp_path: Path, record_property) -> None:
    app = review_app(tmp_path / "review.duckdb", COUNT)
    with app as (url, runtime, crystals), harness.chromium(1400, 1200) as page:
        run = review_by_keyboard(page, url, COUNT)
        keys = plan(COUNT)
        shown_before, logs = expected_session(keys, crystals)
        assert [key for key, _ in run.keys] == keys and "Backspace" in keys and "s" in keys
        assert [shown for _, shown in run.keys] == shown_before  # each key acted on the crystal the queue showed
        assert review.review_queue(runtime) == []  # all 50 reviewed
        for crystal in crystals:
            history = review.review_history(runtime, crystal.id)
            assert [entry.decision for entry in history] == logs[crystal.id], crystal.insight
            final = history[-1]
            state = review.get_crystal(runtime, crystal.id).review_state
            assert (
                state
                is final.state_after
                is (ReviewState.APPROVED if final.decision == "approve" else ReviewState.REJECTED)
            )
        undone = [c for c in crystals if "revert" in logs[c.id]]
        assert len(undone) == keys.count("Backspace") == 2
        first = review.review_history(runtime, undone[0].id)
        assert first[1].reverts == first[0].id and first[1].state_after is ReviewState.PENDING
        print(summary(run.latencies_ms))
        record_property("median_key_to_next_crystal_ms", round(statistics.median(run.latencies_ms)))

        # -- a shared link to one crystal: its history, and a revert from there ---------------------------------
        linked = crystals[3]
        harness.open_page(page, url, f"crystals?crystal={linked.id}")
        page.locator(".st-key-review_card").get_by_text(insight(3)).wait_for()
        assert page.get_by_role("tab", name="Review", selected=True).count() == 1
        before = review.get_crystal(runtime, linked.id).review_state
        page.get_by_text("History (1)").wait_for()
        page.locator(".st-key-revert_" + review.review_history(runtime, linked.id)[-1].id).get_by_role("button").click()
        page.get_by_text("History (2)").wait_for(timeout=30_000)
        assert before is ReviewState.APPROVED and review.get_crystal(runtime, linked.id).review_state is (
            ReviewState.PENDING
        )
        assert f"crystal={linked.id}" in page.url

        # -- bulk: archive every approved crystal, after the count and the confirmation ---------------------------
        approved = [c for c in crystals if review.get_crystal(runtime, c.id).review_state is ReviewState.APPROVED]
        harness.open_page(page, url, "crystals?view=Bulk")
        page.locator(".st-key-bulk_decision").get_by_role("radio", name="archive").click()
        harness.settle(page)
        states = page.locator(".st-key-bulk_states")
        states.get_by_role("combobox").click()
        page.get_by_role("option", name="approved").click()
        page.keyboard.press("Escape")
        harness.settle(page)
        assert approved  # so there are at least two to archive, and the words are plural
        archived = len(approved) + 1
        page.get_by_text(f"{archived} of {archived} matching crystals would be archived").wait_for()
        go = page.get_by_role("button", name=f"Archive {archived} crystals")
        assert go.is_disabled()  # not before the confirmation
        page.get_by_text(f"Yes, archive these {archived} crystals").click()
        harness.settle(page)
        go.click()
        page.get_by_text(f"Archived {archived} crystals").wait_for(timeout=30_000)
    after = {c.id: review.get_crystal(runtime, c.id).review_state for c in crystals}
    assert all(after[c.id] is ReviewState.ARCHIVED for c in approved)
    assert after[linked.id] is ReviewState.ARCHIVED  # pending after the revert: archived from there
    assert sum(s is ReviewState.ARCHIVED for s in after.values()) == len(approved) + 1
