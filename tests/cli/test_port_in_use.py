"""A port another program holds: ``explorer app`` says so in one line on stderr and exits non-zero, before it
announces any address (the app's server would say it only after "Dream Explorer is at ...").
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

EXPLORER = Path(sys.executable).with_name("explorer")


def test_a_port_in_use_is_one_line_and_no_announcement(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        out = subprocess.run(
            [str(EXPLORER), "app", "--port", str(port), "--db", str(tmp_path / "mine.duckdb")],
            capture_output=True,
            text=True,
            env=os.environ,
            timeout=120,
        )
    assert out.returncode != 0
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()
    assert line.startswith(f"error: invalid value for --port: port {port} on 127.0.0.1 is in use"), line
    assert "is at" not in out.stderr and "not available" not in out.stderr
