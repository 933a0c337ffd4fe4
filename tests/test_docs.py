"""The design pages under ``docs/`` are the ones the code cites, and they say what the code does.

- Every Markdown page a docstring or comment cites (in ``explorer/``, ``pages/``, ``bench/``, ``tests/``, ``app.py``
  and the migrations' SQL comments) is in the repository: ``docs/wander.md``, ``README.md``, or a bare name of a
  page of ``docs/``; a section anchor after it (``docs/wander.md#guard-rails``) names one of the page's headings.
  A design document from outside the repository fails. Text in double backticks is code, not a citation
  (``untrusted.md`` is the function ``md`` of ``pages/untrusted.py``).
- Every config dataclass is documented: each has a table in its page headed by its class name
  (``| `WanderTuning` | default | what it does |``), one row per field and no other, each row's default a Python
  expression (``required`` for a field without one) equal to the code's, of the same type.
- Every relative link of the README and of ``docs/`` resolves to a file (a page, a screenshot), and a link to a
  page's anchor to one of its headings.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.affinity import AffinityConfig
from explorer.clustering import ClusterConfig
from explorer.consolidation.compression import CompressionConfig
from explorer.consolidation.integration import IntegrationConfig
from explorer.consolidation.ladder import LadderConfig
from explorer.consolidation.pipeline import ConsolidationConfig, DegradationConfig
from explorer.consolidation.schedule import ScheduleConfig
from explorer.consolidation.triage import TriageConfig
from explorer.consolidation.verification import VerificationConfig
from explorer.dreaming.activation import ActivationConfig
from explorer.dreaming.exploration import ExplorationConfig
from explorer.dreaming.fusion import FusionConfig
from explorer.dreaming.prominence import ProminenceConfig
from explorer.dreaming.rem_cycle import RemConfig
from explorer.dreaming.triads import TriadConfig
from explorer.projection import ProjectionConfig
from explorer.reading.cycle import ReadingConfig
from explorer.reading.topics import TopicConfig
from explorer.wander.config import SessionConfig, WanderTuning

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CITING = ["explorer", "pages", "bench", "tests", "app.py"]

# Which page documents which config. A config class added to explorer/ and missing here fails
# test_every_config_class_has_a_page.
DOCUMENTED: dict[str, list[type]] = {
    "reading.md": [ReadingConfig, TopicConfig],
    "wander.md": [SessionConfig, WanderTuning],
    "dreaming.md": [
        ProminenceConfig,
        AffinityConfig,
        ExplorationConfig,
        ActivationConfig,
        FusionConfig,
        RemConfig,
        TriadConfig,
    ],
    "map.md": [ProjectionConfig],
    "consolidation.md": [
        TriageConfig,
        CompressionConfig,
        ClusterConfig,
        LadderConfig,
        IntegrationConfig,
        VerificationConfig,
        DegradationConfig,
        ConsolidationConfig,
        ScheduleConfig,
    ],
}
CONFIG_CLASS = re.compile(r"^class (\w+(?:Config|Tuning))\b", re.MULTILINE)
CITATION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)(?:#([\w-]+))?")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CELL = re.compile(r"(?<!\\)\|")
CODE = re.compile(r"``.+?``", re.DOTALL)


def slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (outside code blocks)."""
    found, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#+\s+(.*)", line)):
            found.add(slug(heading[1]))
    return found


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """The docstrings and comments of a Python file, or the comments of a SQL file, with their line numbers."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".sql":
        yield from ((n, line) for n, line in enumerate(source.splitlines(), 1) if "--" in line)
        return
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                yield first.lineno, str(first.value.value)


def citations(text: str) -> Iterator[re.Match[str]]:
    """The pages ``text`` cites (group 1) with their anchors (group 2), code in double backticks left out."""
    return CITATION.finditer(CODE.sub("", text))


def citing_files() -> Iterator[Path]:
    for name in CITING:
        path = ROOT / name
        if path.is_file():
            yield path
        else:
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".py", ".sql") and ".venv" not in p.parts)


def resolve(cited: str) -> Path | None:
    """The page a citation names: a path from the repository's root, or a page of docs/."""
    for base in (ROOT, DOCS):
        if (base / cited).is_file():
            return base / cited
    return None


def unresolved_citations() -> list[str]:
    bad = []
    for path in citing_files():
        for line, text in prose(path):
            for match in citations(text):
                page, anchor = resolve(match[1]), match[2]
                where = f"{path.relative_to(ROOT)}:{line}: {match[0]}"
                if page is None:
                    bad.append(f"{where} (no such page in the repository)")
                elif anchor and anchor not in anchors(page):
                    bad.append(f"{where} (no heading with that anchor)")
    return bad


def test_every_cited_page_is_in_the_repository() -> None:
    assert unresolved_citations() == []


def test_a_citation_outside_the_repository_is_caught(tmp_path: Path) -> None:
    cited = tmp_path / "cites.py"
    cited.write_text(
        '"""As dreaming-pipeline.md says (docs/wander.md#no-such-section), not ``pages.md``."""\n# see docs/wander.md\n'
    )
    found = [(m[1], m[2]) for _, text in prose(cited) for m in citations(text)]
    assert found == [("docs/wander.md", None), ("dreaming-pipeline.md", None), ("docs/wander.md", "no-such-section")]
    assert resolve("dreaming-pipeline.md") is None
    assert "no-such-section" not in anchors(DOCS / "wander.md")


def tables(page: Path) -> dict[str, dict[str, str]]:
    """Each table of a page whose header's first cell is a class name in backticks: field → default cell."""
    found: dict[str, dict[str, str]] = {}
    rows: dict[str, str] | None = None
    for line in page.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in CELL.split(line.strip())[1:-1]] if line.startswith("|") else []
        if not cells:
            rows = None
        elif rows is None and (header := re.fullmatch(r"`(\w+)`", cells[0])) and cells[1] == "default":
            rows = found.setdefault(header[1], {})
        elif rows is not None and (name := re.fullmatch(r"`(\w+)`", cells[0])):
            rows[name[1]] = cells[1]
    return found


def documented_default(cell: str, namespace: dict[str, Any]) -> Any:
    """The value a table's default cell says: a Python expression in backticks, or ``required``."""
    if cell == "required":
        return dataclasses.MISSING
    assert cell.startswith("`") and cell.endswith("`"), f"a default is written in backticks: {cell}"
    return eval(cell.strip("`"), {"__builtins__": {}}, namespace)  # our own page, over the config classes only


def code_default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


CASES = [(page, config) for page, configs in DOCUMENTED.items() for config in configs]


@pytest.mark.parametrize(("page", "config"), CASES, ids=[c.__name__ for _, c in CASES])
def test_parameter_table_matches_the_code(page: str, config: type) -> None:
    documented = tables(DOCS / page).get(config.__name__)
    assert documented is not None, f"docs/{page} has no table headed `{config.__name__}`"
    fields = {f.name: f for f in dataclasses.fields(config)}
    assert set(documented) == set(fields), f"docs/{page}: {config.__name__}'s rows are not its fields"
    namespace = {c.__name__: c for configs in DOCUMENTED.values() for c in configs}
    for name, field in fields.items():
        said, meant = documented_default(documented[name], namespace), code_default(field)
        assert (said, type(said)) == (meant, type(meant)), f"docs/{page}: {config.__name__}.{name}"


def test_a_changed_default_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "| `ReadingConfig` | default | what |\n| --- | --- | --- |\n"
        "| `neighbours` | `6` | x |\n| `chunk_words` | `300.0` | y |\n"
    )
    rows = tables(page)["ReadingConfig"]
    assert documented_default(rows["neighbours"], {}) != ReadingConfig().neighbours
    said = documented_default(rows["chunk_words"], {})
    assert said == ReadingConfig().chunk_words and type(said) is not type(ReadingConfig().chunk_words)


def test_every_config_class_has_a_page() -> None:
    declared = {m for path in (ROOT / "explorer").rglob("*.py") for m in CONFIG_CLASS.findall(path.read_text())}
    assert declared == {c.__name__ for configs in DOCUMENTED.values() for c in configs}


def test_relative_links_resolve() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []
