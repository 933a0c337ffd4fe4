"""The layers point one way (pyproject.toml's layers contract says which), no import goes round in a cycle, and
Streamlit stays in the app.

import-linter checks the package's contracts ([tool.importlinter]); the tests read how many there are from
pyproject.toml and show, on a sabotaged copy of the package, that each of them catches what it forbids; the purity
contract's list is checked for a pure module it left out. The app's pages are not a package, so a small AST walk
checks them and the scripts beside the package.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import grimp

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


def contracts() -> list[dict[str, Any]]:
    with PYPROJECT.open("rb") as file:
        found: list[dict[str, Any]] = tomllib.load(file)["tool"]["importlinter"]["contracts"]
        return found


def contract_names() -> list[str]:
    return [contract["name"] for contract in contracts()]


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


def undeclared_pure_modules(graph: grimp.ImportGraph, purity: dict[str, Any]) -> list[str]:
    """The modules that reach none of the purity contract's forbidden modules, in a package that has a module the
    contract lists, and that the contract does not list: pure today, and free to stop being so unnoticed.
    """
    declared = purity["source_modules"]
    packages = {module.rpartition(".")[0] for module in declared} - {"explorer"}

    def listed(module: str) -> bool:
        return any(module == d or module.startswith(f"{d}.") for d in declared)

    def reaches_a_database(module: str) -> bool:
        upstream = graph.find_upstream_modules(module)
        return any(u == f or u.startswith(f"{f}.") for u in upstream for f in purity["forbidden_modules"])

    candidates = (m for m in graph.modules if any(m.startswith(f"{p}.") for p in packages) and not listed(m))
    return sorted(m for m in candidates if not reaches_a_database(m))


def test_every_pure_module_is_held_pure_by_the_contract() -> None:
    """The purity contract lists modules, not packages (a package holds its services too): a new algorithm stage
    that imports no database is named here until it is listed, so it cannot start reading the store unnoticed.
    """
    (purity,) = (c for c in contracts() if c["name"].endswith("are pure: no database"))
    graph = grimp.build_graph("explorer", include_external_packages=True, cache_dir=None)
    assert undeclared_pure_modules(graph, purity) == [], "add these to pyproject.toml's purity contract"
    assert undeclared_pure_modules(graph, {**purity, "source_modules": ["explorer.wander.walk"]}) != []  # it sees


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
