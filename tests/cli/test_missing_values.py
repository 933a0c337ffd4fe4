"""What the CLI says of a value that is not there: the phrase is left out, never "None"."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

EXPLORER = Path(sys.executable).with_name("explorer")
NOTES = {
    "gardens.txt": "A garden needs water in the dry months. Compost feeds the soil and keeps it loose. "
    "Weeds come back after rain, so pulling them early saves work later in the season.",
    "bridges.txt": "A suspension bridge hangs its deck from cables slung between towers. "
    "Engineers check the cables for corrosion, because salt air wears the steel faster than rain.",
    "letters.txt": "Old letters kept in a drawer fade where the light reaches them. "
    "Archivists store them flat, in boxes without acid, away from damp and from the sun.",
    "kitchens.txt": "Bread rises faster in a warm kitchen. A slow rise in the cold gives the loaf more flavour, "
    "and bakers plan their day around it.",
}


def explorer(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EXPLORER_DB": str(db), "EXPLORER_EMBEDDING_MODEL": "hashing"}
    for name in ("EXPLORER_LOCAL_MODEL", "EXPLORER_CLOUD_MODEL", "EXPLORER_CONFIG"):
        env.pop(name, None)
    return subprocess.run([str(EXPLORER), *args], capture_output=True, text=True, env=env, timeout=300)


def test_a_dream_over_an_undated_corpus_names_no_year(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    db = tmp_path / "undated.duckdb"
    ingested = explorer(db, "ingest", str(folder))
    assert ingested.returncode == 0, ingested.stderr
    out = explorer(db, "dream", "rem", "--dreams", "1")
    assert out.returncode == 0, out.stderr
    said = out.stdout + out.stderr
    assert re.search(r"\b(1 dream|[02-9]\d* dreams) stored", said) and "model calls" in said
    assert "None" not in said and "year" not in said, said
