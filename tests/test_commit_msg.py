"""The commit-msg hook (scripts/hooks, installed by scripts/setup.sh) keeps subjects short and apart from the body."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parents[1] / "scripts" / "hooks" / "commit-msg"


def check(tmp_path: Path, message: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run(["bash", str(HOOK), str(path)], capture_output=True, text=True, timeout=30)


def test_a_short_subject_and_a_body_pass(tmp_path: Path) -> None:
    subject = "s" * 72
    assert check(tmp_path, f"{subject}\n\nWhy, with figures.\n# a comment git strips\n").returncode == 0


@pytest.mark.parametrize(
    ("message", "complaint"),
    [("s" * 73 + "\n\nbody\n", "73 characters"), ("subject\nbody glued to it\n", "blank line")],
)
def test_a_long_subject_or_a_glued_body_is_refused(tmp_path: Path, message: str, complaint: str) -> None:
    result = check(tmp_path, message)
    assert result.returncode == 1 and complaint in result.stderr
