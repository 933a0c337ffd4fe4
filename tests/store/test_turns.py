"""The queue for a database file (:mod:`explorer.store.turns`): turns in the order asked, none lost to a waiter
that gives up or a process that dies. Threads stand for processes here: each turn is its own open descriptor,
and the kernel orders descriptors' locks alike whichever process holds them.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from explorer.store import turns

GRANTED_WITHIN_S = 10.0  # a bound on a wait that should end at once, not a measure of anything


def _tickets_given(path: Path) -> int:
    raw = Path(f"{path}.queue").read_bytes()[:8]
    return int.from_bytes(raw, "little")


def _queue_behind(path: Path, name: str, granted: list[str]) -> threading.Thread:
    """A thread that asks for a turn now (returning once it is in the queue) and notes when it gets it."""
    before = _tickets_given(path)

    def wait() -> None:
        turn = turns.take(path, GRANTED_WITHIN_S)
        assert turn is not None
        granted.append(name)
        turn.release()

    thread = threading.Thread(target=wait, daemon=True)  # a broken queue fails the test, not the run's exit
    thread.start()
    deadline = time.monotonic() + GRANTED_WITHIN_S
    while _tickets_given(path) == before and time.monotonic() < deadline:
        time.sleep(0.005)
    return thread


def test_turns_are_granted_in_the_order_they_were_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "order.duckdb"
    holder = turns.take(path, 1)
    assert holder is not None and not holder.others_waiting()
    granted: list[str] = []
    waiters = [_queue_behind(path, name, granted) for name in "abcde"]
    assert holder.others_waiting() and granted == []
    holder.release()
    for waiter in waiters:
        waiter.join(GRANTED_WITHIN_S)
    assert granted == list("abcde")


def test_a_waiter_that_gives_up_passes_its_place_on(tmp_path: Path) -> None:
    path = tmp_path / "gave-up.duckdb"
    holder = turns.take(path, 1)
    assert holder is not None
    assert turns.take(path, 0.2) is None  # the holder keeps it past this waiter's patience
    granted: list[str] = []
    behind = _queue_behind(path, "behind", granted)
    holder.release()
    behind.join(GRANTED_WITHIN_S)
    assert granted == ["behind"]


HOLD_AND_DIE = (
    "import sys, time; from pathlib import Path; from explorer.store import turns; "
    "turns.take(Path(sys.argv[1]), 5); print('held', flush=True); time.sleep(60)"
)


def test_a_process_killed_in_its_turn_stalls_nobody(tmp_path: Path) -> None:
    path = tmp_path / "killed.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_DIE, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert turns.take(path, 0.2) is None
    finally:
        holder.kill()
        holder.wait()
    turn = turns.take(path, GRANTED_WITHIN_S)
    assert turn is not None
    turn.release()
