"""``explorer app`` opens the app on the database it is given, a file or a PostgreSQL URL (a team's), as it is:
the app answers, and its first page names that database without a URL's password. A database that cannot be
opened is said in one line before any app starts, without any password its URL gives. Beyond this machine the app
needs named tokens, whether ``explorer app`` or ``explorer demo`` serves it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest

from explorer.testing.ports import listening_port

EXPLORER = Path(sys.executable).with_name("explorer")


def serve(db: str, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(EXPLORER), "app", "--port", "0", "--db", db], stdout=out, stderr=subprocess.STDOUT, env=os.environ
        )
    return process, listening_port(process, 120, log)


@pytest.mark.parametrize("backend", ["duckdb", "postgres"])
def test_the_app_answers_on_the_database_it_is_given(backend: str, tmp_path: Path, request) -> None:
    db = str(tmp_path / "mine.duckdb") if backend == "duckdb" else request.getfixturevalue("postgres_url")
    process, port = serve(db, tmp_path / "app.log")
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=30).text == "ok"
        server = psutil.Process(process.pid).children(recursive=True)
    finally:
        process.terminate()
        process.wait(30)
    gone, alive = psutil.wait_procs(server, timeout=30)
    assert server and not alive, f"the app's server outlived the command stopped with SIGTERM: {alive}"
    said = (tmp_path / "app.log").read_text()
    assert ("database: " + (db if backend == "duckdb" else db.split("?")[0])) in said


def test_a_database_that_cannot_be_opened_is_said_before_the_app(tmp_path: Path) -> None:
    broken = tmp_path / "notes.duckdb"
    broken.write_text("my notes", encoding="utf-8")
    done = subprocess.run([str(EXPLORER), "app", "--db", str(broken)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == f"error: {broken} is not a Dream Explorer database (nor any DuckDB file)\n"


def test_the_app_beyond_this_machine_needs_named_tokens(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EXPLORER_TOKENS"}
    done = subprocess.run(
        [str(EXPLORER), "app", "--host", "0.0.0.0", "--db", str(tmp_path / "kb.duckdb")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert "set EXPLORER_TOKENS to name who may use it" in done.stderr and done.stderr.count("\n") == 1


def test_the_demo_beyond_this_machine_needs_named_tokens_before_it_prepares_anything(tmp_path: Path) -> None:
    """The same rule, line and status as ``explorer app``, said before the demo's database is even made."""
    env = {k: v for k, v in os.environ.items() if k != "EXPLORER_TOKENS"}
    demo = tmp_path / "demo.duckdb"
    done = subprocess.run(
        [str(EXPLORER), "demo", "--host", "0.0.0.0", "--db", str(demo)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: invalid value for --host: the app would serve anyone who reaches this address: set EXPLORER_TOKENS "
        "to name who may use it; see: explorer demo --help\n"
    )
    assert not demo.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ana@/kb?host={socket}&sslmode=disable&password=S3cretPw",
        "postgresql://ana:Pw%zzS3cretPw@/kb?host={socket}",  # libpq refuses the encoding and quotes the password
        "postgres://ana@/kb?host={socket}&password=Pw%zzS3cretPw",
    ],
)
def test_a_server_the_app_cannot_reach_is_said_without_its_password(url: str, tmp_path: Path) -> None:
    url = url.format(socket=tmp_path / "no-server")  # a socket folder nobody listens in: refused at once
    for command in (["app", "--db", url], ["stats", "--db", url], ["demo", "--no-app", "--db", url]):
        done = subprocess.run([str(EXPLORER), *command], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, done.stderr
        assert "cannot open database postgres" in done.stderr
        assert "S3cret" not in done.stderr + done.stdout
