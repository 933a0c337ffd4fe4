"""The offline judge's answer stays within what the judge's answer model accepts: a kept link is never lost."""

from __future__ import annotations

from explorer.affinity import Evidence
from explorer.offline.judging import CONNECTION_CHARS, rem_judge
from explorer.offline.kit import OfflineKit
from explorer.prompts import format_passages
from explorer.prompts.dreaming import REM_JUDGE
from explorer.providers.embeddings import HashingEmbedder

LONG = (
    "Magnetic tape drives store archival backups sequentially on long reels of coated plastic film, "
    "and a backup operator rewinds and mounts each reel by hand before the nightly backup job can start writing."
)


def test_a_kept_link_between_long_sentences_is_read_back() -> None:
    """Two sentences of 35 words: quoted at 20 words each, the connection ran to about 290 characters, over the
    answer's 240, and the judgement was refused, its candidate left unjudged.
    """
    strong = Evidence(1.1, 0.5, 0.6, 99.9, ("backup", "reel"))
    fields = {
        "seed": LONG,
        "candidates": format_passages([LONG.replace("Magnetic", "Optical"), LONG.replace("tape", "disk")]),
        "candidate_evidence": f"[1] {strong.line()}\n[2] {strong.line()}",
        "min_score": 3.0,
    }
    answer = REM_JUDGE.read(rem_judge(fields, OfflineKit(HashingEmbedder())))[0]
    assert [j.candidate for j in answer.judgements] == [1, 2]
    for judgement in answer.judgements:
        assert judgement.connection is not None and len(judgement.connection) <= CONNECTION_CHARS
        assert judgement.connection.startswith("Both concern backup and reel: “")
