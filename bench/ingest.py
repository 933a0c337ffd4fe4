"""Ingest throughput of the sample corpus, offline, into a fresh database; or reading, format by format.

    python -m bench.ingest [--path FOLDER]
    python -m bench.ingest --formats [--limit N]
    python -m bench.ingest --docs 1000,5000,10000 [--runtimes torch,onnx]

Prints documents/s, chunks/s and the process's peak memory. Model load is timed
apart from the ingest itself. With ``--formats``, no database: each format's real
documents (Debian's documentation packages under /usr/share/doc, the sample
Markdown, the chat exports of the tests; a format whose folder is absent is
skipped, said so) are loaded and chunked, and per format it prints the files, the
seconds to load them, the documents, chunks and words they gave and the files
that failed; then pypdf against pdfplumber on the same PDFs (seconds, words). With ``--docs``, vaults of that many
real notes read fast (``--enrich later``) by ``explorer ingest``, against the model embedding their chunks alone,
runtime by runtime (:mod:`bench.ingest_scale`).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench.ingest_scale import measure
from explorer.providers.embeddings import LocalEmbedder
from explorer.reading.chunker import chunk_sections
from explorer.reading.formats import Section
from explorer.reading.ingest import ingest_paths
from explorer.reading.loaders import LoadError, load_file
from explorer.runtime import open_runtime
from explorer.settings import Settings

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
DOC = Path("/usr/share/doc")
# each format's folder of real documents and the files in it to read
FORMATS: dict[str, tuple[Path, str]] = {
    "AsciiDoc (.txt)": (DOC / "git-doc", "git-*.txt"),
    "reStructuredText (.txt)": (DOC / "docutils-doc" / "docs", "**/*.txt"),
    "reStructuredText (Sphinx)": (DOC / "python3.11-doc" / "html" / "_sources" / "howto", "*.rst.txt"),
    "HTML (Asciidoctor)": (DOC / "git-doc", "git-*.html"),
    "HTML (Sphinx)": (DOC / "python3.11-doc" / "html" / "howto", "*.html"),
    "PDF": (DOC, "*/*.pdf"),
    "Markdown": (SAMPLE / "python-whatsnew", "*.md"),
    "chat exports": (REPO / "tests" / "data" / "documents" / "chats", "**/conversations.json"),
}


def main() -> None:
    """Time ingesting a corpus (the sample data by default) into a fresh database."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--path", type=Path, default=SAMPLE)
    parser.add_argument("--formats", action="store_true", help="time reading each format, no database")
    parser.add_argument("--limit", type=int, default=40, help="files per format at most (with --formats)")
    parser.add_argument("--docs", help="vault sizes, e.g. 1000,5000,10000: ingest at scale (bench.ingest_scale)")
    parser.add_argument("--runtimes", default="torch,onnx", help="embedding runtimes compared (with --docs)")
    parser.add_argument("--keep", type=Path, help="keep the vault and databases here (with --docs)")
    args = parser.parse_args()
    if args.formats:
        read_formats(args.limit)
        return
    if args.docs:
        sizes = [int(size) for size in args.docs.split(",")]
        with tempfile.TemporaryDirectory() as folder:
            measure(sizes, args.runtimes.split(","), args.keep or Path(folder))
        return
    started = time.perf_counter()
    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    load_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        runtime = open_runtime(replace(Settings(), db_path=Path(folder) / "bench.duckdb"), embedder=embedder)
        started = time.perf_counter()
        report = ingest_paths(runtime, [args.path])
        seconds = time.perf_counter() - started
        size_mb = runtime.db.path.stat().st_size / 1e6
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"model load        {load_s:8.1f} s")
    print(f"documents         {report.documents_added:8d}   ({report.documents_added / seconds:.2f}/s)")
    print(f"chunks            {report.chunks_added:8d}   ({report.chunks_added / seconds:.2f}/s)")
    print(f"syntheses         {report.syntheses_added:8d}")
    print(f"entity insights   {report.entity_insights_added:8d}")
    print(f"ingest time       {seconds:8.1f} s")
    print(f"database size     {size_mb:8.1f} MB")
    print(f"peak memory (RSS) {peak_mb:8.0f} MB")
    print(f"errors            {len(report.errors):8d}")


def read_formats(limit: int) -> None:
    """Load and chunk each format's documents; a line per format, then the PDF libraries compared."""
    print(f"{'format':<27}{'files':>6}{'load s':>8}{'docs':>6}{'chunks':>8}{'words':>9}{'failed':>7}")
    for name, (folder, pattern) in FORMATS.items():
        files = sorted(folder.glob(pattern))[:limit] if folder.is_dir() else []
        if not files:
            print(f"{name:<27} skipped: nothing at {folder / pattern}")
            continue
        started = time.perf_counter()
        loaded = [item for path in files for item in load_file(path)]
        seconds = time.perf_counter() - started
        sources = [item for item in loaded if not isinstance(item, LoadError)]
        chunks = [c for s in sources for c in chunk_sections(s.sections or [Section(s.text)])]
        words = sum(len(s.text.split()) for s in sources)
        failed = len(loaded) - len(sources)
        print(f"{name:<27}{len(files):>6}{seconds:>8.2f}{len(sources):>6}{len(chunks):>8}{words:>9}{failed:>7}")
    compare_pdf_libraries(sorted(DOC.glob("*/*.pdf"))[:limit])


def compare_pdf_libraries(files: list[Path]) -> None:
    """Time pypdf (the reader used) against pdfplumber on the same files: seconds, and words of text extracted."""
    if not files:
        return
    import pypdf

    try:
        import pdfplumber
    except ImportError:
        pdfplumber = None
    started = time.perf_counter()
    words = sum(len((p.extract_text() or "").split()) for f in files for p in pypdf.PdfReader(f).pages)
    print(f"\nPDF text, {len(files)} files: pypdf {time.perf_counter() - started:.2f} s, {words} words", end="")
    if pdfplumber is None:
        print("; pdfplumber not installed")
        return
    started = time.perf_counter()
    words = 0
    for file in files:
        with pdfplumber.open(file) as pdf:
            words += sum(len((p.extract_text() or "").split()) for p in pdf.pages)
    print(f"; pdfplumber {time.perf_counter() - started:.2f} s, {words} words")


if __name__ == "__main__":
    main()
