"""The facade imports each name from its module when first asked for: every name it lists is reachable every way
a caller reaches it (an attribute, ``from … import``, ``dir``), and is its module's own object.
"""

from __future__ import annotations

from importlib import import_module

import pytest

from explorer.wander import service

HOMES = [import_module(f"explorer.wander.{m}") for m in ("sessions", "stepping", "interventions", "review", "queries")]


@pytest.mark.parametrize("name", service.__all__)
def test_each_name_is_its_modules_own(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from explorer.wander.service import {name}", namespace)
    assert namespace[name] is getattr(service, name)
    assert any(getattr(home, name, None) is namespace[name] for home in HOMES)
    assert name in dir(service)


def test_a_name_it_does_not_list_is_not_there() -> None:
    assert not hasattr(service, "embed_one")  # a helper of sessions, not part of the API
    with pytest.raises(AttributeError, match="no attribute 'stpe'"):
        _ = service.stpe
