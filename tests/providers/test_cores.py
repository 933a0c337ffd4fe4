"""The local model's threads: it takes the cores other processes leave idle, not the ones this process uses."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from explorer.providers.cores import IdleCores

SPIN = "import time\nend = time.time() + 3\nwhile time.time() < end: pass"


def test_idle_cores_are_the_total_less_what_other_processes_used() -> None:
    # one second in which the machine worked 2.5 core-seconds, 1.0 of them in this process: others used 1.5 cores
    # each sample: (clock, the machine's CPU seconds, this process's); the first is read when the counter is made
    figures = [(0.0, 100.0, 10.0), (1.0, 102.5, 11.0), (1.05, 999.0, 11.0), (2.0, 106.5, 11.0)]
    idle = IdleCores(total=4, sample=iter(figures).__next__)
    assert idle() == 3  # 4 - 1.5 = 2.5 idle rounds to 3: a core is taken once others use half of it
    assert idle() == 3  # 50 ms later: too short a window to read, the last figure stands
    assert idle() == 1  # the next second others used all 4 cores: never fewer than one


def test_a_core_counts_as_taken_from_half_of_it_on() -> None:
    for others, expected in ((0.4, 2), (0.6, 1)):
        idle = IdleCores(total=2, sample=iter([(0.0, 0.0, 0.0), (1.0, others, 0.0)]).__next__)
        assert idle() == expected, others


def test_the_os_figures_see_another_process_at_work() -> None:
    cores = os.cpu_count() or 1
    idle = IdleCores(total=4 * cores)  # a pretend total, so the answer is neither the floor nor the total
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(1.0)  # the spinner is always runnable: at least one core works for the whole window
        # others used at least the spinner's core and at most every real core, whatever else the machine runs
        assert 3 * cores <= idle() <= 4 * cores - 1
    finally:
        spinner.wait()
