"""The local model's threads: it takes the cores other processes leave idle."""

from __future__ import annotations

import subprocess
import sys
import time

from explorer.providers.cores import IdleCores

SPIN = "import time\nend = time.time() + 3\nwhile time.time() < end: pass"


def test_cores_busy_in_other_processes_are_not_taken() -> None:
    idle = IdleCores(total=2)
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(2)]
    try:
        time.sleep(1.0)  # both cores busy elsewhere for the whole window
        assert idle() == 1  # never fewer than one
    finally:
        for spinner in spinners:
            spinner.wait()
