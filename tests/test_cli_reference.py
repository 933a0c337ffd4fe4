"""``docs/cli.md`` says what the CLI says: its generated blocks are what ``scripts/gen_cli_reference.py`` writes
from the commands now, so a changed option, default or help fails here until the page is regenerated.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gen_cli_reference.py"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_cli_reference", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_page_is_what_the_cli_says(generator: ModuleType) -> None:
    page = generator.PAGE.read_text(encoding="utf-8")
    assert generator.regenerate(page) == page, "docs/cli.md is stale: run python scripts/gen_cli_reference.py"


def test_every_command_has_its_block_once(generator: ModuleType) -> None:
    named = [m["name"] for m in generator.BLOCK.finditer(generator.PAGE.read_text(encoding="utf-8"))]
    assert sorted(named) == sorted(name for name, _, _ in generator.commands())


def test_a_changed_help_is_caught(generator: ModuleType) -> None:
    page = generator.PAGE.read_text(encoding="utf-8")
    tampered = page.replace("| `--steps <int range>` |", "| `--steps <int>` |", 1)
    assert tampered != page
    assert generator.regenerate(tampered) == page


def test_a_command_the_page_lacks_is_added_as_a_stub(generator: ModuleType) -> None:
    page = generator.PAGE.read_text(encoding="utf-8")
    start = page.index("<!-- cli: wander step -->")
    without = page[:start] + page[page.index("<!-- /cli -->", start) + len("<!-- /cli -->") :]
    fresh = generator.regenerate(without)
    assert generator.UNDESCRIBED in fresh
    assert "### `explorer wander step`\n\n<!-- cli: wander step -->" in fresh


def test_a_block_naming_no_command_is_refused(generator: ModuleType) -> None:
    with pytest.raises(SystemExit, match="no such command"):
        generator.regenerate("<!-- cli: wander fly -->\n<!-- /cli -->\n")
