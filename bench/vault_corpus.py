"""A vault of N real notes for the ingest and first-step benchmarks, each a part of a section of documentation.

    python -m bench.vault_corpus --notes 10000 --out /tmp/vault-10k

Why sections of documentation: a person's vault holds thousands of short notes, each on one matter, in
Markdown; the documentation Debian installs (python3.11-doc, git-doc, docutils-doc) is real prose of that size
once cut at its headings, and it installs with apt on any machine, so anyone can rebuild the same vault. The
sections are read by the product's own format readers (so markup is handled as ingest handles it), taken in a
fixed order (sorted paths) and cut between paragraphs into parts of at most :data:`MAX_WORDS` words, and the
first ``N`` parts with at least :data:`MIN_WORDS` words are written as
``<folder of the package>/<nnnnn> <title>.md``. Not enough sections installed: it says how many it found.
"""

from __future__ import annotations

import argparse
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from explorer.reading.loaders import SourceText, load_file

DOC = Path("/usr/share/doc")
# the documentation read, in order: package folder, the files in it
SOURCES: tuple[tuple[str, str], ...] = (
    ("python3.11-doc/html/_sources", "**/*.rst.txt"),
    ("git-doc", "*.txt"),
    ("docutils-doc/docs", "**/*.txt"),
)
MIN_WORDS = 40  # a shorter section (a stub, a lone sentence of a table of contents) is no note
MAX_WORDS = 150  # a longer section becomes several notes, cut between paragraphs, as notes are short
UNSAFE = re.compile(r"[^\w .,()+-]+")


def sections(doc: Path = DOC) -> Iterator[tuple[str, str, str]]:
    """(package, title, prose) of every section of the installed documentation, in a fixed order."""
    for folder, pattern in SOURCES:
        root = doc / folder
        for path in sorted(root.glob(pattern)) if root.is_dir() else []:
            for source in load_file(path):
                if isinstance(source, SourceText):
                    yield from _split(folder.split("/")[0], source)


def _split(package: str, source: SourceText) -> Iterator[tuple[str, str, str]]:
    """A document's prose sections (code left out: a note is prose), each titled by its heading and document."""
    by_title: dict[str | None, list[str]] = {}
    for section in source.sections or ():
        if not section.code:
            by_title.setdefault(section.title, []).append(section.text)
    for title, texts in by_title.items():
        name = f"{source.title} - {title}" if title else source.title
        parts = list(_parts([p for text in texts for p in text.split("\n\n")]))
        for number, prose in enumerate(parts, 1):
            if len(prose.split()) >= MIN_WORDS:
                yield package, f"{name} ({number})" if len(parts) > 1 else name, prose


def _parts(paragraphs: list[str]) -> Iterator[str]:
    """Paragraphs gathered into parts of at most :data:`MAX_WORDS` words (a longer paragraph is a part alone)."""
    part: list[str] = []
    words = 0
    for paragraph in paragraphs:
        size = len(paragraph.split())
        if part and words + size > MAX_WORDS:
            yield "\n\n".join(part)
            part, words = [], 0
        part.append(paragraph)
        words += size
    if part:
        yield "\n\n".join(part)


def write_vault(notes: int, out: Path, doc: Path = DOC) -> int:
    """Write the first ``notes`` sections as Markdown notes under ``out`` (emptied first); how many were written."""
    shutil.rmtree(out, ignore_errors=True)
    written = 0
    for package, title, prose in sections(doc):
        if written == notes:
            break
        name = UNSAFE.sub(" ", title).strip()[:80]
        path = out / package / f"{written:05d} {name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {title}\n\n{prose}\n", encoding="utf-8")
        written += 1
    return written


def main() -> None:
    """Write the vault and say how many notes it holds."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    written = write_vault(args.notes, args.out)
    words = sum(len(p.read_text().split()) for p in args.out.rglob("*.md"))
    print(f"{written} notes, {words} words, in {args.out}")
    if written < args.notes:
        print(f"only {written} sections of {MIN_WORDS}+ words are installed (apt install python3.11-doc git-doc)")


if __name__ == "__main__":
    main()
