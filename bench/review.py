"""Reviewing at speed: crystals reviewed by keyboard on the Crystals page's Review queue, in a real browser.

    python -m bench.review [--crystals 50] [--db PATH]

It stores ``--crystals`` pending crystals in a fresh database (through the store, as a walk would), starts the
real app (``streamlit run``, tests/e2e/harness.py) and Debian's Chromium, opens ``/crystals?view=Review`` and
reviews every crystal with one key each (A approve, X reject, now and then S skip and Backspace undo). For each
key it measures, in the browser, the time from the key going down to the next crystal's insight drawn in the
review card, and prints the median, p90 and max. tests/e2e/test_review_keyboard.py runs the same session and
checks what was decided; speed is this script's business, not the test's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from explorer.providers.embeddings import HashingEmbedder
from explorer.records.wander import Crystal
from explorer.runtime import Runtime, open_runtime
from explorer.settings import Settings
from explorer.store import wander as wander_store

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import harness  # noqa: E402

CARD = ".st-key-review_card"
# Keydown and "drawn" times, both in the page's clock: a listener that sees every key first, and an observer that
# notes each new insight the review card shows.
WATCH = """card => {
    window.reviewKeys = [];
    window.reviewShown = [];
    document.addEventListener('keydown', e => window.reviewKeys.push([e.key, performance.now()]), true);
    const insight = () => document.querySelector(card + ' [data-testid="stText"]')?.textContent ?? null;
    let last = insight();
    new MutationObserver(() => {
        const now = insight();
        if (now !== null && now !== last) { last = now; window.reviewShown.push([now, performance.now()]); }
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def insight(i: int) -> str:
    return f"Crystal {i:02d}: what nothing refers to any more can be collected, in memory as in notes."


def seed_crystals(runtime: Runtime, count: int) -> list[Crystal]:
    """``count`` pending crystals, confidence falling with their number, so the queue shows them in order."""
    crystals = [
        Crystal(
            insight=insight(i),
            embedding=runtime.embedder.embed([insight(i)])[0],
            confidence=round(0.99 - i * 0.9 / max(count, 1), 4),
            actionability=0.5,
            domains=["python", "psychology"],
            validated_by="bench",
        )
        for i in range(count)
    ]
    with runtime.db.transaction() as con:
        for crystal in crystals:
            wander_store.insert_crystal(con, crystal)
    return crystals


@dataclass
class KeyboardRun:
    """What a keyboard session did: the keys pressed in order, with the crystal shown before each, and the time
    from each key to the next crystal drawn (ms; a key that ends the queue draws nothing and is not timed).
    """

    keys: list[tuple[str, str]] = field(default_factory=list)  # (key, insight shown when it was pressed)
    latencies_ms: list[float] = field(default_factory=list)


def plan(count: int) -> list[str]:
    """The keys for ``count`` crystals: approve two, reject one, over and over; every 12th crystal is skipped first
    (it comes back at the end of the queue), and every 17th decision is undone and the other one taken.
    """
    keys: list[str] = []
    for i in range(count):
        if i % 12 == 5:
            keys.append("s")
        decision = "x" if i % 3 == 2 else "a"
        keys.append(decision)
        if i % 17 == 16:
            keys += ["Backspace", "a" if decision == "x" else "x"]
    return keys


def shown(page) -> str:
    return page.locator(f'{CARD} [data-testid="stText"]').first.inner_text()


def _visible_text(page) -> str:
    return " | ".join(page.locator('[data-testid="stMain"]').inner_text().split("\n"))[:2000]


def review_by_keyboard(page, url: str, count: int, timeout_ms: float = 30_000) -> KeyboardRun:
    """Review ``count`` pending crystals by keyboard on ``url``'s Review queue; what was pressed and how fast."""
    harness.open_page(page, url, "crystals?view=Review")
    page.locator(CARD).wait_for(timeout=timeout_ms)
    page.locator(".st-key-review_approve button:enabled").wait_for(timeout=timeout_ms)
    harness.settle(page)  # the keys are bound once the page's first run has finished drawing
    page.evaluate(WATCH, CARD)
    run = KeyboardRun()
    keys = plan(count)
    for number, key in enumerate(keys):
        before = shown(page)
        drawn = page.evaluate("() => window.reviewShown.length")
        page.keyboard.press(key)
        run.keys.append((key, before))
        last = number == len(keys) - 1
        try:
            if last:
                page.get_by_text("Nothing awaits review in this filter.").wait_for(timeout=timeout_ms)
                break
            page.wait_for_function(f"() => window.reviewShown.length > {drawn}", timeout=timeout_ms)
        except Exception as exc:
            raise AssertionError(
                f"key {number} ({key}) on {before!r} drew nothing new; the page shows {_visible_text(page)!r}"
            ) from exc
        pressed = page.evaluate("() => window.reviewKeys[window.reviewKeys.length - 1][1]")
        at = page.evaluate(f"() => window.reviewShown[{drawn}][1]")
        run.latencies_ms.append(at - pressed)
    return run


@contextmanager
def review_app(db: Path, count: int) -> Iterator[tuple[str, Runtime, list[Crystal]]]:
    """A database of ``count`` pending crystals and the app serving it (hashing embedder: no model to load)."""
    embedder = HashingEmbedder()
    runtime = open_runtime(replace(Settings(), db_path=db, embedding_model=embedder.name), embedder=embedder)
    crystals = seed_crystals(runtime, count)
    runtime.flush()
    with harness.streamlit_server(db, log=db.with_suffix(".log")) as url:
        yield url, runtime, crystals


def summary(latencies_ms: list[float]) -> str:
    ordered = sorted(latencies_ms)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (
        f"{len(ordered)} keys: median {statistics.median(ordered):.0f} ms, p90 {p90:.0f} ms, "
        f"max {ordered[-1]:.0f} ms (key down to the next crystal drawn)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crystals", type=int, default=50)
    parser.add_argument("--db", type=Path, help="where to make the database (default: a temporary folder)")
    args = parser.parse_args()
    os.environ["EXPLORER_EMBEDDING_MODEL"] = "hashing"  # the app's embedder, as the database's
    with tempfile.TemporaryDirectory() as folder:
        db = args.db or Path(folder) / "review.duckdb"
        with review_app(db, args.crystals) as (url, _, _), harness.chromium(1400, 1200) as page:
            run = review_by_keyboard(page, url, args.crystals)
    print(summary(run.latencies_ms))


if __name__ == "__main__":
    main()
