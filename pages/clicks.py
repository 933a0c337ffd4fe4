"""One click, one action: a button's callback that runs at most once per drawing of its page.

Streamlit can deliver one click twice. A key press on the review queue starts a run whose callback decides the
crystal; when a second request reaches the server before that run is over, the run is cut short and the next one
may carry the same click again, with the browser's widget values of the drawing the click was made on (the
crystal just decided, in the URL-bound text box). Deciding that crystal a second time is refused by the review
state machine and shows an error for a key pressed once. Each drawing of the page therefore numbers itself and
gives its number to its buttons' callbacks: a callback with a number already acted on is that copy, dropped, and
the keys its first run set are put back as that run left them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

DRAWING, ACTED = "clicks_drawing", "clicks_acted"


def drawing(state: Any) -> int:
    """A new number for this drawing of the page, to pass as the first argument of :func:`once` callbacks."""
    number = int(state.get(DRAWING, 0)) + 1
    state[DRAWING] = number
    return number


def once(state: Any, keeps: tuple[str, ...]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator (``state`` is ``st.session_state``, or any mapping): the callback takes the drawing's number
    first and acts once per number; a second call with the same number restores ``keeps`` (session-state keys) to
    what the first call left in them, and does nothing else.
    """

    def decorate(action: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(action)
        def run(number: int, *args: Any) -> None:
            acted = state.get(ACTED)
            if acted is not None and acted[0] == number:
                state.update(acted[1])
                return
            action(*args)
            state[ACTED] = (number, {key: state[key] for key in keeps if key in state})

        return run

    return decorate
