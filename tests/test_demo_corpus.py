"""What the demo reads: the sample's corpus, not the files that describe it."""

from __future__ import annotations

from explorer import demo
from explorer.reading.ingest import IngestReport, collect_sources


def test_the_demo_reads_the_corpus_and_not_its_licences_or_readme() -> None:
    report = IngestReport()
    sources = collect_sources(demo.CORPUS, year=None, domain=None, max_mb=20, report=report)
    titles = {source.title for source in sources}
    assert report.errors == [] and len(sources) > 20
    assert any("What's New" in title or "whatsnew" in title.lower() for title in titles)
    assert not any("licen" in title.lower() or "readme" in title.lower() for title in titles), sorted(titles)[:5]
    assert not any("Licence" in source.text[:200] or "License" in source.text[:200] for source in sources)
