"""Wander's engine API in one place, for the CLI, the REST API, the MCP server, the app and jobs.

Every function takes the :class:`~explorer.runtime.Runtime` first. Each lives in the module of its concern,
re-exported here and imported on first use, so a command imports only the modules it calls:

- :mod:`~explorer.wander.sessions`: create, read, change and end a session (its status machine);
- :mod:`~explorer.wander.stepping`: a step and a walk of steps, read → think → write;
- :mod:`~explorer.wander.interventions`: inject, fence, force a crystallization, invalidate a resonance;
- :mod:`~explorer.wander.review`: a person's review of a crystal;
- :mod:`~explorer.wander.queries`: what the surfaces read (a session whole, crystals, search, events).

What a step keeps in memory between steps (the corpus space, each session's memory) is in
:mod:`~explorer.wander.caches`, held by the runtime.

Example::

    from explorer.wander import service

    session = service.create_session(runtime, SessionConfig(seed_concept="garbage collection"))
    service.run(runtime, session.id, 10)
    service.list_crystals(runtime, session_id=session.id)
"""

# ruff: noqa: F401 - the imports under TYPE_CHECKING are the facade's names for mypy; __all__ is made from _HOMES
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.wander.interventions import crystallize, fence, inject, invalidate_resonance
    from explorer.wander.queries import (
        SEARCH_TYPES,
        SearchKind,
        crystal_evidence,
        get_locus,
        list_crystals,
        list_loci,
        list_resonances,
        list_trace,
        search,
        session_events,
        session_view,
    )
    from explorer.wander.review import review_crystal
    from explorer.wander.sessions import (
        abandon,
        create_session,
        delete_session,
        get_session,
        list_sessions,
        pause,
        resume,
        stop,
        update_session,
    )
    from explorer.wander.stepping import run, step

# Each name is imported from its module when first asked for (PEP 562), so listing sessions does not import
# the walk, the corpus space and scipy under it (half a second of imports on a loaded machine, the most
# `explorer wander list` spent on anything). The imports above under TYPE_CHECKING say the same to mypy and
# readers; tests/test_one_place.py holds the two lists equal, and ``__all__`` is this one's names.
_HOMES = {
    "interventions": ("crystallize", "fence", "inject", "invalidate_resonance"),
    "queries": (
        "SEARCH_TYPES",
        "SearchKind",
        "crystal_evidence",
        "get_locus",
        "list_crystals",
        "list_loci",
        "list_resonances",
        "list_trace",
        "search",
        "session_events",
        "session_view",
    ),
    "review": ("review_crystal",),
    "sessions": (
        "abandon",
        "create_session",
        "delete_session",
        "get_session",
        "list_sessions",
        "pause",
        "resume",
        "stop",
        "update_session",
    ),
    "stepping": ("run", "step"),
}
_MODULE_OF = {name: f"explorer.wander.{module}" for module, names in _HOMES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    """The public name from its module, imported now and kept here so the next use is a plain lookup."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
