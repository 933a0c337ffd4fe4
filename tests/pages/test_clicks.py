"""A click Streamlit delivers twice acts once: the copy carries the drawing's number already acted on."""

from __future__ import annotations

import contextlib
from typing import Any

from pages import clicks


def test_a_click_delivered_twice_acts_once_and_leaves_the_page_where_the_first_left_it() -> None:
    state: dict[str, Any] = {}
    decided: list[str] = []

    @clicks.once(state, keeps=("crystal",))
    def decide(crystal: str) -> None:
        decided.append(crystal)
        state["crystal"] = ""  # the next one

    first = clicks.drawing(state)
    state["crystal"] = "c48"
    decide(first, "c48")
    state["crystal"] = "c48"  # the copy comes with the browser's values of the drawing it was made on
    decide(first, "c48")
    assert decided == ["c48"] and state["crystal"] == ""
    second = clicks.drawing(state)
    assert second > first
    decide(second, "c49")
    assert decided == ["c48", "c49"]


def test_an_action_that_fails_is_not_counted_as_done() -> None:
    state: dict[str, Any] = {}
    calls: list[int] = []

    @clicks.once(state, keeps=())
    def flaky() -> None:
        calls.append(1)
        raise RuntimeError("store busy")

    number = clicks.drawing(state)
    for _ in range(2):
        with contextlib.suppress(RuntimeError):
            flaky(number)
    assert len(calls) == 2
