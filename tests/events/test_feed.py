"""The live feed a page polls (explorer.views.session_feed): a session's steps, crystals and status changes,
newest first, with the step under way shown as thinking.
"""

from __future__ import annotations

from typing import Any

from explorer.text import shorten
from explorer.views import FeedEntry, session_feed
from explorer.wander import service

from .conftest import new_session


def test_the_feed_shows_the_step_under_way_then_the_steps_taken(corpus_runtime) -> None:
    rt = corpus_runtime
    session = new_session(rt)
    service.run(rt, session.id, 2)
    inner = rt.gateway.offline
    seen_while_thinking: list[list[FeedEntry]] = []

    class Watching:
        """Reads the feed while the third step's model is asked, as a page in another thread would."""

        def answer(self, prompt: Any, fields: dict[str, Any]) -> str:
            seen_while_thinking.append(session_feed(rt, session.id))
            return inner.answer(prompt, fields)

    rt.gateway.offline = Watching()
    third = service.step(rt, session.id)
    rt.gateway.offline = inner

    under_way = seen_while_thinking[0]
    assert (under_way[0].kind, under_way[0].headline) == ("thinking", "Step 3: thinking…")
    assert under_way[0].text == shorten(third.from_locus.concept, 20)  # where it stands, as the event says
    assert [e.headline.split(" ·")[0] for e in under_way[1:3]] == ["Step 2", "Step 1"]

    feed = session_feed(rt, session.id)
    assert [e.seq for e in feed] == sorted((e.seq for e in feed), reverse=True)  # newest first
    assert feed[0].kind == "step" and feed[0].headline.startswith(f"Step 3 · {third.trace.strategy.replace('_', ' ')}")
    assert not [e for e in feed if e.kind == "thinking"]  # every start is told by its step's end now
    assert (feed[-1].kind, feed[-1].headline, feed[-1].text) == ("session", "Session created", session.seed_concept)

    service.pause(rt, session.id, "time for a look")
    assert (session_feed(rt, session.id)[0].headline, session_feed(rt, session.id)[0].text) == (
        "Session paused",
        "time for a look",
    )
