"""Build the shipped sample corpus in ``sample_data/`` from Debian packages.

Why: Dream Explorer needs real, human-written text that nobody on the team wrote,
spanning several domains and years, under a licence that lets us ship it. Two
Debian packages give exactly that and are reachable with apt-get alone:

* ``python3.11-doc`` (PSF licence): the "What's New in Python" series, 2.0 to 3.11,
  one dated essay per release from 2000 to 2022, converted here from reST to
  plain Markdown and trimmed to their prose-heavy opening sections;
* ``fortunes`` and ``fortunes-min`` (BSD licence): attributed quotations in
  category files, of which a few non-offensive categories are sampled.

The output is deterministic for a given package version: run
``python scripts/build_sample_data.py`` (standard library only; needs apt-get and
dpkg-deb) and it rewrites ``sample_data/`` in place.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "sample_data"
PACKAGES = ("python3.11-doc", "fortunes", "fortunes-min")
DOCS = Path("usr/share/doc/python3.11/html/_sources")
FORTUNE_DIR = Path("usr/share/games/fortunes")

# Release year of each "What's New" document (X.0 final release; checked against
# the dates the documents themselves state where they state one).
WHATSNEW_YEARS = {
    "2.0": 2000,
    "2.1": 2001,
    "2.2": 2001,
    "2.3": 2003,
    "2.4": 2004,
    "2.5": 2006,
    "2.6": 2008,
    "2.7": 2010,
    "3.0": 2008,
    "3.1": 2009,
    "3.2": 2011,
    "3.3": 2012,
    "3.4": 2014,
    "3.5": 2015,
    "3.6": 2016,
    "3.7": 2018,
    "3.8": 2019,
    "3.9": 2020,
    "3.10": 2021,
    "3.11": 2022,
}
WHATSNEW_SOURCE = "python3.11-doc (Debian), PSF License"
SOFT_LIMIT, HARD_LIMIT = 11_000, 14_000  # bytes of Markdown body per document
MAX_CODE_LINES = 8

FORTUNE_CATEGORIES = ("art", "education", "literature", "love", "politics", "science", "wisdom", "work")
FORTUNES_PER_CATEGORY = 40
FORTUNE_SOURCE = "fortunes (Debian), BSD"


# --------------------------------------------------------------------------- packages


def fetch_packages(workdir: Path) -> tuple[Path, dict[str, str]]:
    """Download the .debs with apt-get, unpack them with dpkg -x; return root and versions."""
    debs = workdir / "debs"
    debs.mkdir()
    debs.chmod(0o777)  # lets apt's sandbox user write here, silencing its warning
    cmd = ["apt-get", "download", *PACKAGES]
    if subprocess.run(cmd, cwd=debs, capture_output=True).returncode != 0:  # usually stale package lists
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(cmd, cwd=debs, check=True, stdout=subprocess.DEVNULL)
    root = workdir / "root"
    versions: dict[str, str] = {}
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        versions[deb_field(deb, "Package")] = deb_field(deb, "Version")
    return root, versions


def deb_field(deb: Path, field: str) -> str:
    """A control field of a downloaded package (its version, for the licence file)."""
    result = subprocess.run(["dpkg-deb", "-f", str(deb), field], check=True, capture_output=True, text=True)
    return result.stdout.strip()


# --------------------------------------------------------------------------- reST -> Markdown


@dataclass
class Block:
    """One Markdown block of a converted document, as the renderer lays it out."""

    kind: str  # "h" heading, "p" paragraph, "li" list item, "code"
    text: str
    depth: int = 0  # heading level for "h", list nesting otherwise


ADORNMENT = re.compile(r"^([=\-~^\"'`#*+_.:])\1{2,}\s*$")
SIMPLE_TABLE = re.compile(r"^=+( +=+)+\s*$")
DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")
LABEL = re.compile(r"^\.\.\s+_([^:`]+):\s*$")
BULLET = re.compile(r"^([*+-]|\d+\.|#\.)\s+")
FIELD = re.compile(r"^:([A-Za-z][\w ]*):(?:\s+(.*))?$")
ROLE = re.compile(r":(?:[\w-]+:)?([\w-]+):`([^`]+)`")  # the domain (c:, py:) is dropped
DROP_DIRECTIVES = {
    "index",
    "tabularcolumns",
    "testsetup",
    "testcleanup",
    "highlight",
    "toctree",
    "image",
    "figure",
    "raw",
    "list-table",
    "csv-table",
    "table",
    "productionlist",
}
CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput"}
LABELLED_DIRECTIVES = {
    "note": "Note: ",
    "warning": "Warning: ",
    "important": "Important: ",
    "seealso": "See also: ",
    "versionadded": "New in version {}. ",
    "versionchanged": "Changed in version {}: ",
    "deprecated": "Deprecated since version {}: ",
}
ARG_IS_VERSION = {"versionadded", "versionchanged", "deprecated"}
# Roles whose text is prose; every other role names code and is rendered as `code`.
PROSE_ROLES = {
    "pep",
    "rfc",
    "issue",
    "gh",
    "ref",
    "term",
    "doc",
    "abbr",
    "dfn",
    "menuselection",
    "sup",
    "sub",
    "newsgroup",
    "mailheader",
    "kbd",
    "title-reference",
}


def indent_of(line: str) -> int:
    """How far a line is indented: reST nests blocks by indentation."""
    return len(line) - len(line.lstrip())


def dedent(lines: list[str]) -> list[str]:
    """A nested block's lines as if written at the margin, to parse it like a document of its own."""
    return textwrap.dedent("\n".join(lines)).split("\n")


def indented_block_end(lines: list[str], start: int) -> int:
    """Index after the block of blank or indented lines beginning at ``start``."""
    i = start
    while i < len(lines) and (not lines[i].strip() or indent_of(lines[i]) > 0):
        i += 1
    return i


def is_heading_underline(title: str, line: str) -> bool:
    """Whether ``line`` underlines ``title`` as a reST section heading (reST allows a slightly short one)."""
    return bool(title.strip()) and bool(ADORNMENT.match(line)) and len(line.strip()) >= len(title.strip()) - 2


def scan_labels(sources: Path) -> dict[str, str]:
    """Map every ``.. _label:`` that precedes a section heading to that heading's title."""
    labels: dict[str, str] = {}
    for path in sorted(sources.rglob("*.rst.txt")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() + ["", ""]
        pending: list[str] = []
        for i, line in enumerate(lines[:-2]):
            if m := LABEL.match(line):
                pending.append(m.group(1).strip().lower())
            elif not line.strip():
                continue
            else:
                title = None
                if ADORNMENT.match(line) and ADORNMENT.match(lines[i + 2]) and lines[i + 1].strip():
                    title = lines[i + 1].strip()
                elif is_heading_underline(line, lines[i + 1]) and not ADORNMENT.match(line):
                    title = line.strip()
                if title:
                    labels.update({label: title for label in pending if label not in labels})
                pending = []
    return labels


class RstConverter:
    """A small reST reader that keeps prose, drops markup, and renders Markdown blocks."""

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        self.heading_styles: list[tuple[str, bool]] = []

    # ---- inline markup
    def role(self, match: re.Match[str]) -> str:
        """A reST role (a function, a PEP, a cross-reference…) as the text a reader would see."""
        name, content = match.group(1), match.group(2).replace("\n", " ")
        explicit = re.match(r"^(.*?)\s*<([^<>]+)>$", content, re.S)
        text, target = (explicit.group(1), explicit.group(2)) if explicit else ("", content)
        target = target.lstrip("!")
        if name == "ref" and not text:
            label = target.lower()
            text = self.inline(self.labels[label]) if label in self.labels else label.replace("-", " ")
        if text:
            return text
        if target.startswith("~"):
            target = target[1:].rsplit(".", 1)[-1]
        prefixes = {"pep": "PEP ", "rfc": "RFC ", "issue": "bpo-", "gh": "gh-"}
        if name in prefixes:
            return prefixes[name] + target.split("#")[0]
        if name == "menuselection":
            return target.replace("-->", ">")
        if name in PROSE_ROLES:
            return target
        if name in {"func", "meth"} and not target.endswith(")"):
            target += "()"
        if name == "samp":
            target = target.replace("{", "").replace("}", "")
        return f"`{target}`"

    def inline(self, text: str) -> str:
        """A paragraph's inline markup reduced to plain Markdown on one line."""
        literals: list[str] = []

        def stash(m: re.Match[str]) -> str:
            literals.append(m.group(1))
            return f"\x00{len(literals) - 1}\x00"

        text = re.sub(r"``(.+?)``", stash, text, flags=re.S)
        text = ROLE.sub(self.role, text)
        text = re.sub(r"`([^`<]+?)\s*<(https?://[^>]+)>`__?", r"[\1](\2)", text)
        text = re.sub(r"`([^`<]+?)\s*<[^>]+>`__?", r"\1", text)
        text = re.sub(r"`([^`]+)`__?", r"\1", text)
        text = re.sub(r"\s*\[(#[\w-]*|\d+)\]_", "", text)
        text = re.sub(r"\|(release|today|version)\|", "", text)
        text = re.sub(r"\\ ", "", text)
        text = re.sub(r"\\(.)", r"\1", text)
        text = re.sub(r"\x00(\d+)\x00", lambda m: "`" + literals[int(m.group(1))] + "`", text)
        return " ".join(text.split())

    # ---- block structure
    def heading(self, title: str, char: str, overline: bool) -> Block:
        """A heading whose level is the order its adornment style first appeared in, as reST defines it."""
        style = (char, overline)
        if style not in self.heading_styles:
            self.heading_styles.append(style)
        return Block("h", self.inline(title), min(self.heading_styles.index(style) + 1, 6))

    def directive(self, name: str, arg: str, body: list[str], depth: int) -> list[Block]:
        """A directive's content kept as prose or code, labelled (``New in 3.8:``) or dropped."""
        body = dedent(body)
        while body and FIELD.match(body[0].strip()) and name not in LABELLED_DIRECTIVES:
            body = body[1:]  # directive options such as :linenos:
        if name in DROP_DIRECTIVES:
            return []
        if name in CODE_DIRECTIVES:
            return [code_block(body, depth)]
        if name not in LABELLED_DIRECTIVES:
            return self.parse(body, depth)
        version, content = (arg, body) if name in ARG_IS_VERSION else ("", [arg, *body])
        blocks = self.parse(content, depth)
        label = LABELLED_DIRECTIVES[name].format(version)
        if blocks and blocks[0].kind == "p":
            blocks[0].text = label + blocks[0].text
        else:
            blocks.insert(0, Block("p", label.strip(" :.") + (":" if blocks else "."), depth))
        return blocks

    def explicit(self, first: str, body: list[str], depth: int) -> list[Block]:
        """``.. something``: a directive, or else a target, substitution, footnote or comment (all dropped)."""
        if m := DIRECTIVE.match(first.strip()):
            return self.directive(m.group(1), m.group(2), body, depth)
        return []

    def list_item(self, lines: list[str], start: int, depth: int) -> tuple[list[Block], int]:
        """The blocks of the list item at ``start`` and the index after it."""
        marker = BULLET.match(lines[start])
        assert marker
        column = marker.end()
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or indent_of(lines[end]) >= column):
            end += 1
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        item = [lines[start][column:]] + [line[column:] for line in lines[start + 1 : end]]
        blocks = self.parse(item, depth + 1)
        if blocks and blocks[0].kind == "p":
            blocks[0] = Block("li", blocks[0].text, depth + 1)
        return blocks, end

    def parse(self, lines: list[str], depth: int = 0) -> list[Block]:
        """A document (or a nested part of one) as Markdown blocks."""
        blocks: list[Block] = []
        lines = [line.rstrip().expandtabs(8) for line in lines]
        i, n = 0, len(lines)
        while i < n:
            line, s = lines[i], lines[i].strip()
            nxt = lines[i + 1] if i + 1 < n else ""
            if not s:
                i += 1
            elif indent_of(line) > 0:  # block quote or definition body
                end = indented_block_end(lines, i)
                blocks += self.parse(dedent(lines[i:end]), depth)
                i = end
            elif s == ".." or s.startswith(".. "):
                end = indented_block_end(lines, i + 1)
                blocks += self.explicit(s, lines[i + 1 : end], depth)
                i = end
            elif ADORNMENT.match(s) and i + 2 < n and ADORNMENT.match(lines[i + 2]) and nxt.strip():
                blocks.append(self.heading(nxt.strip(), s[0], True))
                i += 3
            elif not ADORNMENT.match(s) and is_heading_underline(s, nxt):
                blocks.append(self.heading(s, nxt.strip()[0], False))
                i += 2
            elif s.startswith(("+-", "+=")) or ADORNMENT.match(s):  # grid table or transition
                while i < n and lines[i].strip():
                    i += 1
            elif SIMPLE_TABLE.match(s):
                i += 1
                while i < n and not (SIMPLE_TABLE.match(lines[i]) and (i + 1 >= n or not lines[i + 1].strip())):
                    i += 1
                i += 1
            elif m := FIELD.match(s):
                value = self.inline(m.group(2) or "")
                if value and "|" not in (m.group(2) or ""):
                    blocks.append(Block("p", f"{m.group(1)}: {value}", depth))
                i += 1
            elif BULLET.match(line):
                item, i = self.list_item(lines, i, depth)
                blocks += item
            elif s.startswith(">>>"):
                end = i
                while end < n and lines[end].strip():
                    end += 1
                blocks.append(code_block(lines[i:end], depth))
                i = end
            else:
                i = self.paragraph(lines, i, depth, blocks)
        return blocks

    def paragraph(self, lines: list[str], i: int, depth: int, blocks: list[Block]) -> int:
        """Add the paragraph at ``i`` (and the literal block it may introduce); return the next index."""
        end = i
        while end < len(lines) and lines[end].strip() and indent_of(lines[end]) == 0:
            end += 1
        text = " ".join(line.strip() for line in lines[i:end])
        literal = text.endswith("::")
        if literal:
            text = text[:-2].rstrip() if text[-3:-2] in (" ", "") else text[:-1]  # "x ::" -> "x", "x::" -> "x:"
        if text.strip():
            blocks.append(Block("p", self.inline(text), depth))
        if literal:
            start = end
            while start < len(lines) and not lines[start].strip():
                start += 1
            if start < len(lines) and indent_of(lines[start]) > 0:
                stop = indented_block_end(lines, start)
                blocks.append(code_block(dedent(lines[start:stop]), depth))
                return stop
        return end


def code_block(lines: list[str], depth: int) -> Block:
    """A fenced code block, cut to MAX_CODE_LINES so the corpus stays mostly prose."""
    lines = dedent(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if len(lines) > MAX_CODE_LINES:
        lines = lines[: MAX_CODE_LINES - 1] + ["..."]
    return Block("code", "\n".join(lines), depth)


def render(blocks: list[Block]) -> str:
    """Markdown for the blocks, stopping near the size limits at a section boundary."""
    parts: list[str] = []
    size, previous = 0, ""
    for block in blocks:
        if block.kind == "h":
            text = "#" * block.depth + " " + block.text
            if size >= SOFT_LIMIT:
                break
        elif block.kind == "code":
            if not block.text.strip():
                continue
            pad = "  " * block.depth
            text = "\n".join(pad + line if line else "" for line in ["```", *block.text.split("\n"), "```"])
        elif block.kind == "li":
            text = "  " * (block.depth - 1) + "- " + block.text
        else:
            text = "  " * block.depth + block.text
        if size + len(text.encode()) > HARD_LIMIT:
            break
        tight = block.kind == "li" and previous == "li"  # consecutive items form one list
        parts.append(("\n" if tight else "\n\n") + text)
        size += len(parts[-1].encode())
        previous = block.kind
    while parts and parts[-1].lstrip("\n").startswith("#"):
        parts.pop()
    return "".join(parts).lstrip("\n") + "\n"


def yaml_value(value: str | int) -> str:
    """A YAML scalar: plain when unambiguous, else double-quoted (JSON strings are valid YAML)."""
    if isinstance(value, int) or re.fullmatch(r"[A-Za-z][\w .,'()/+-]*[\w)]", value):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def front_matter(fields: dict[str, str | int]) -> str:
    """The YAML front matter the loaders read a document's title, year and domain from."""
    return "---\n" + "".join(f"{key}: {yaml_value(value)}\n" for key, value in fields.items()) + "---\n\n"


def build_whatsnew(root: Path, out: Path) -> list[Path]:
    """One dated Markdown document per Python release, converted from its What's New page."""
    sources = root / DOCS
    labels = scan_labels(sources)
    out.mkdir(parents=True)
    written = []
    for version, year in sorted(WHATSNEW_YEARS.items(), key=lambda kv: tuple(map(int, kv[0].split(".")))):
        rst = (sources / "whatsnew" / f"{version}.rst.txt").read_text(encoding="utf-8")
        body = render(RstConverter(labels).parse(rst.splitlines()))
        title = f"What's New in Python {version}"
        meta: dict[str, str | int] = {"title": title, "year": year, "domain": "python", "source": WHATSNEW_SOURCE}
        path = out / f"whatsnew-{version}.md"
        path.write_text(front_matter(meta) + body, encoding="utf-8")
        written.append(path)
    return written


# --------------------------------------------------------------------------- fortunes


def read_fortunes(path: Path) -> list[str]:
    """The entries of one fortune file, decoded, with overstrike (x BACKSPACE y) removed."""
    raw = path.read_bytes()
    entries = re.split(rb"^%[ \t]*\r?$\n?", raw, flags=re.M)
    decoded = []
    for entry in entries:
        try:
            text = entry.decode("utf-8")
        except UnicodeDecodeError:
            text = entry.decode("latin-1")
        decoded.append(re.sub(r".\x08", "", text))
    return decoded


def clean_fortune(text: str) -> str:
    """Collapse whitespace; rejoin hard-wrapped prose lines; keep short (verse) lines and '-- Author' lines."""
    lines: list[str] = []
    previous_indent = -1
    for raw in text.expandtabs(8).splitlines():
        line, indent = " ".join(raw.split()), indent_of(raw)
        if not line:
            if lines and lines[-1]:
                lines.append("")
            previous_indent = -1
            continue
        wrapped = indent == previous_indent and lines and len(lines[-1]) >= 50  # hard-wrapped prose
        if wrapped and not lines[-1].startswith("--") and not line.startswith("--"):
            lines[-1] += " " + line
        else:
            lines.append(line)
        previous_indent = indent
    return "\n".join(lines).strip()


def is_good_fortune(text: str) -> bool:
    """Prose of a sensible size, not ASCII art or a table of symbols."""
    visible = [c for c in text if not c.isspace()]
    letters = sum(c.isalpha() for c in visible)
    return 40 <= len(text) <= 1000 and letters >= 0.7 * len(visible)


def sample_evenly(items: list[str], n: int) -> list[str]:
    """``n`` items spread over the whole list, so a category is sampled from end to end, reproducibly."""
    return items if len(items) <= n else [items[k * len(items) // n] for k in range(n)]


def build_fortunes(root: Path, out: Path) -> tuple[Path, dict[str, int]]:
    """The quotations file: a sample of good fortunes per category, each a JSONL record with its domain."""
    out.mkdir(parents=True)
    records, counts = [], {}
    for category in sorted(FORTUNE_CATEGORIES):
        seen: set[str] = set()
        candidates = []
        for text in map(clean_fortune, read_fortunes(root / FORTUNE_DIR / category)):
            if is_good_fortune(text) and text not in seen:
                seen.add(text)
                candidates.append(text)
        chosen = sample_evenly(candidates, FORTUNES_PER_CATEGORY)
        counts[category] = len(chosen)
        for text in chosen:
            words = re.split(r"\n-- ", text)[0].split()  # the quotation, not its attribution
            title = " ".join(words[:8]) + ("..." if len(words) > 8 else "")
            records.append({"text": text, "title": title, "domain": category, "source": FORTUNE_SOURCE})
    path = out / "fortunes.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path, counts


# --------------------------------------------------------------------------- licences and readme


def psf_license_text(root: Path) -> str:
    """The PSF licence agreement and copyright notice, as the documentation itself states them."""
    license_rst = (root / DOCS / "license.rst.txt").read_text(encoding="utf-8")
    terms = re.search(r"^Terms and conditions.*?\n=+\n(.*?)\n\.\. _PSF-license:", license_rst, re.S | re.M)
    psf = re.search(r"^PSF LICENSE AGREEMENT.*?\n-+\n\s*\.\. parsed-literal::\n(.*?)\n\S", license_rst, re.S | re.M)
    bsd0 = re.search(r"^ZERO-CLAUSE BSD.*?\n-+\n\s*\.\. parsed-literal::\n(.*?)\n\.\. _", license_rst, re.S | re.M)
    copyright_rst = (root / DOCS / "copyright.rst.txt").read_text(encoding="utf-8")
    notice = re.search(r"\*+\n\n(.*?)\n-+", copyright_rst.split("Copyright\n", 1)[1], re.S)
    if not (terms and psf and bsd0 and notice):
        raise SystemExit("could not find the licence text in python3.11-doc")
    converter = RstConverter(
        {
            "psf-license": "PSF License Agreement",
            "bsd0": "Zero-Clause BSD license",
            "otherlicenses": "Licenses and Acknowledgements for Incorporated Software",
        }
    )
    terms_md = render(converter.parse(terms.group(1).splitlines()))
    return (
        notice.group(1).strip()
        + "\n\n"
        + terms_md
        + "\n### PSF License Agreement for Python 3.11\n\n```\n"
        + textwrap.dedent(psf.group(1)).strip().replace("|release|", "3.11")
        + "\n```\n"
        + "\n### Zero-Clause BSD license for code in the Python 3.11 documentation\n\n```\n"
        + textwrap.dedent(bsd0.group(1)).strip()
        + "\n```\n"
    )


def whatsnew_authors(root: Path) -> list[str]:
    """Authors and editors named in the documents' :Author: and :Editor: fields, oldest first."""
    names: list[str] = []
    for version in sorted(WHATSNEW_YEARS, key=lambda v: (WHATSNEW_YEARS[v], v)):
        rst = (root / DOCS / "whatsnew" / f"{version}.rst.txt").read_text(encoding="utf-8")
        for field in re.findall(r"^:(?:Author|Editors?):\s*(.+)$", rst, re.M):
            field = re.sub(r"<[^>]*>|\([^)]*\)", "", field)
            names += [name.strip() for name in re.split(r",| and ", field) if name.strip() not in names]
    return names


def build_licenses(root: Path, versions: dict[str, str], out: Path) -> Path:
    """LICENSES.md: where every file came from and under which terms, so the corpus may be shipped."""
    fortunes_copyright = (root / "usr/share/doc/fortunes/copyright").read_text(encoding="utf-8").strip()
    sources = [
        (
            "`python-whatsnew/whatsnew-*.md`",
            "`usr/share/doc/python3.11/html/_sources/whatsnew/*.rst.txt` in "
            f"`python3.11-doc` {versions['python3.11-doc']}",
            "PSF License Agreement (code examples also Zero-Clause BSD)",
        ),
        (
            "`fortunes/fortunes.jsonl`",
            f"`usr/share/games/fortunes/` in `fortunes` {versions['fortunes']} "
            f"and `fortunes-min` {versions['fortunes-min']}",
            "BSD (as stated in the package's copyright file)",
        ),
    ]
    table = "\n".join(f"| {files} | {origin} | {licence} |" for files, origin, licence in sources)
    text = f"""# Licences of the sample data

None of these texts was written by the Dream Explorer team. They were taken from
Debian packages by `scripts/build_sample_data.py`.

| Files | Taken from (Debian package, version) | Licence |
| --- | --- | --- |
{table}

## "What's New in Python" (python3.11-doc)

Authors and editors: {", ".join(whatsnew_authors(root))}, and the many
contributors credited in the text.

Summary of changes (PSF licence, clause 3): each document was converted from
reStructuredText to plain Markdown (Sphinx roles and directives reduced to their
text, tables and comments dropped, code examples cut to {MAX_CODE_LINES} lines),
trimmed to roughly its first {HARD_LIMIT // 1000} KB, and given YAML front matter
(title, release year, domain, source).

### Copyright and terms, as stated in the documentation

{psf_license_text(root)}
## Fortune quotations (fortunes, fortunes-min)

Up to {FORTUNES_PER_CATEGORY} entries from each of the categories
{", ".join(sorted(FORTUNE_CATEGORIES))}; whitespace normalised, attribution lines
kept. Nothing was taken from the offensive collections. The quotations are by many
authors, named in their attribution lines. The package's copyright file
(`usr/share/doc/fortunes/copyright`, identical in `fortunes-min`) reads:

```
{fortunes_copyright}
```
"""
    path = out / "LICENSES.md"
    path.write_text(text, encoding="utf-8")
    return path


def build_readme(out: Path) -> Path:
    """The sample folder's README: what is in it and how to rebuild it."""
    path = out / "README.md"
    path.write_text(
        "# Sample data\n\n"
        'Real, human-written texts for trying Dream Explorer: the "What\'s New in Python" series '
        "(`python-whatsnew/`, one Markdown file per release 2.0–3.11, 2000–2022, with YAML front matter) "
        "and attributed quotations in several domains (`fortunes/fortunes.jsonl`). "
        "Sources and licences: [LICENSES.md](LICENSES.md).\n\n"
        "Rebuild (needs apt-get and dpkg-deb, a Debian or Ubuntu machine): `python scripts/build_sample_data.py`\n",
        encoding="utf-8",
    )
    return path


# --------------------------------------------------------------------------- main


def main() -> int:
    """Rebuild ``sample_data/`` from the packages and print what was written."""
    with tempfile.TemporaryDirectory() as tmp:
        root, versions = fetch_packages(Path(tmp))
        for sub in ("python-whatsnew", "fortunes"):
            shutil.rmtree(OUT / sub, ignore_errors=True)
        OUT.mkdir(exist_ok=True)
        written = build_whatsnew(root, OUT / "python-whatsnew")
        fortunes, counts = build_fortunes(root, OUT / "fortunes")
        written += [fortunes, build_licenses(root, versions, OUT), build_readme(OUT)]
    total = 0
    for path in written:
        size = path.stat().st_size
        total += size
        print(f"{size:>9,}  {path.relative_to(REPO)}")
    print(f"{total:>9,}  bytes in {len(written)} files")
    print("fortunes: " + ", ".join(f"{category} {count}" for category, count in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
