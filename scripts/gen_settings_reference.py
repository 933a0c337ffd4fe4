"""Write docs/reference/settings.md from the fields of explorer.settings.Settings (run after changing a setting).

    python scripts/gen_settings_reference.py

tests/test_settings.py fails while the file differs from what this writes.
"""

from __future__ import annotations

import typing
from pathlib import Path

from pydantic.fields import FieldInfo

from explorer.settings import FIELDS, TOML_NAMES

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "settings.md"
BOUNDS = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "under"}  # as pydantic keeps them

INTRO = """# Settings

<!-- Generated from explorer/settings.py by `python scripts/gen_settings_reference.py`: edit the fields there. -->

Settings come from environment variables, overriding an optional `explorer.toml` in the working directory (or the
file named by `EXPLORER_CONFIG`), whose keys, under `[explorer]` (or at the top of the file), are the second column.
An empty variable means the default. A value that cannot be used stops every command with one line naming the
setting. API keys are read only by litellm, from each provider's own variables (`OPENAI_API_KEY`,
`ANTHROPIC_API_KEY` ...): they are never stored in the database or the logs.

| variable | `explorer.toml` key | default | meaning |
| --- | --- | --- | --- |
"""


def default(field: FieldInfo) -> str:
    """A field's default as the table shows it: the same on every machine (the database's path is not)."""
    if field.default_factory is dict:
        return "`{}`"
    if field.default_factory is not None:
        return "per machine"
    return "unset" if field.default is None else f"`{field.default}`"


def allowed(field: FieldInfo) -> str:
    """The values a field takes, where they are fewer than its type's: its bounds, or its choices."""
    choices = typing.get_args(field.annotation) if typing.get_origin(field.annotation) is typing.Literal else ()
    words = [
        f"{word} {getattr(bound, name)}"
        for bound in field.metadata
        for name, word in BOUNDS.items()
        if hasattr(bound, name)
    ]
    if choices:
        words.append("one of " + ", ".join(f"`{choice}`" for choice in choices))
    return f" ({', '.join(words)})" if words else ""


def row(name: str, field: FieldInfo) -> str:
    """One setting's line of the table."""
    meaning = " ".join(str(field.description).split()) + allowed(field)
    keys = ", ".join(f"`{key}`" for key in [name, *(other for other, same in TOML_NAMES.items() if same == name)])
    return f"| `{field.validation_alias}` | {keys} | {default(field)} | {meaning} |\n"


def render() -> str:
    """The whole reference page."""
    return INTRO + "".join(row(name, field) for name, field in FIELDS.items())


if __name__ == "__main__":
    REFERENCE.write_text(render(), encoding="utf-8")
