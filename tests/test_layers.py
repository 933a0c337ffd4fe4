"""The layers point one way (records → store → providers → engine → surfaces) and Streamlit stays in the app.

import-linter checks the package's contracts (pyproject.toml, [tool.importlinter]); the app's pages are not a
package, so a small AST walk checks them and the scripts beside the package.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


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


def test_the_package_keeps_its_import_contracts() -> None:
    result = subprocess.run(
        [str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and "5 kept" in result.stdout


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
