"""The layers point one way (pyproject.toml's layers contract says which), no import goes round in a cycle, and
Streamlit stays in the app.

import-linter checks the package's contracts ([tool.importlinter]); the tests read how many there are from
pyproject.toml and show, on a sabotaged copy of the package, that each of them catches what it forbids. The
app's pages are not a package, so a small AST walk checks them and the scripts beside the package.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# One wrong import per contract (a line appended to a module of a copy of the package), and a module in no layer.
SABOTAGE = {
    "store/stats.py": "from explorer.wander import config  # the store reaching up into the engine, and round",
    "wander/adjacency.py": "import duckdb  # a pure algorithm opening the database",
    "figures/palette.py": "import streamlit  # the engine drawing",
    "newcomer.py": '"""A module added without a layer."""',
}


def contract_names() -> list[str]:
    with PYPROJECT.open("rb") as file:
        return [contract["name"] for contract in tomllib.load(file)["tool"]["importlinter"]["contracts"]]


def lint_imports(package_parent: Path) -> tuple[dict[str, str], str]:
    """Run import-linter with this project's contracts on the ``explorer`` package found in ``package_parent``
    (lint-imports looks in its working directory first): each contract's verdict by name, and the whole report.
    """
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(PYPROJECT)],
        cwd=package_parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    verdicts = {}
    for line in result.stdout.splitlines():  # "<name> KEPT", or "<name> KEPT (1 ignored import)"
        found = re.fullmatch(r"(.+) (KEPT|BROKEN)( \(.*\))?", line)
        if found:
            verdicts[found[1]] = found[2]
    return verdicts, result.stdout + result.stderr


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (``import a.b`` and ``from a.b import c`` give ``a.b``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO / folder).rglob("*.py"))


def test_the_package_keeps_every_import_contract() -> None:
    verdicts, report = lint_imports(REPO)
    assert verdicts == dict.fromkeys(contract_names(), "KEPT"), report


def test_every_contract_catches_what_it_forbids(tmp_path: Path) -> None:
    """A contract that a wrong import does not break would pass forever: on a copy of the package with
    :data:`SABOTAGE` applied, every contract is broken (a new contract needs its own line there), and the layers
    contract names the module that has no layer.
    """
    copy = tmp_path / "explorer"
    shutil.copytree(REPO / "explorer", copy, ignore=shutil.ignore_patterns("__pycache__"))
    for module, line in SABOTAGE.items():
        with (copy / module).open("a", encoding="utf-8") as file:
            file.write(f"\n{line}\n")
    verdicts, report = lint_imports(tmp_path)
    assert verdicts == dict.fromkeys(contract_names(), "BROKEN"), report
    assert "explorer.newcomer" in report


def draws_with_streamlit(modules: set[str]) -> bool:
    """Imports Streamlit to draw (``streamlit.testing`` drives the real app from outside: that is not drawing)."""
    return any(
        m == "streamlit" or (m.startswith("streamlit.") and not m.startswith("streamlit.testing")) for m in modules
    )


def test_only_the_app_imports_streamlit() -> None:
    outside = [p for p in python_files("explorer", "bench", "scripts") if draws_with_streamlit(imported_modules(p))]
    assert outside == []


def test_pages_orchestrate_through_the_engine_not_the_store() -> None:
    surfaces = [REPO / "app.py", *python_files("pages")]
    reaching = {
        str(p.relative_to(REPO)): sorted(m for m in imported_modules(p) if m.startswith("explorer.store"))
        for p in surfaces
    }
    assert {page: modules for page, modules in reaching.items() if modules} == {}


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    """The AST walk finds nested and aliased imports (a check that sees nothing would always pass)."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import streamlit as st\nfrom explorer.store import corpus\ndef f():\n    import explorer.store.calls\n",
        encoding="utf-8",
    )
    found = imported_modules(sample)
    assert {"streamlit", "explorer.store", "explorer.store.corpus", "explorer.store.calls"} <= found
    assert draws_with_streamlit(found) and not draws_with_streamlit({"streamlit.testing.v1"})
