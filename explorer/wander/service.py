"""Wander's engine API in one place, for the CLI, the REST API, the MCP server, the app and jobs.

Every function takes the :class:`~explorer.runtime.Runtime` first. Each lives in the module of its concern,
re-exported here:

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

__all__ = [
    "SEARCH_TYPES",
    "SearchKind",
    "abandon",
    "create_session",
    "crystal_evidence",
    "crystallize",
    "delete_session",
    "fence",
    "get_locus",
    "get_session",
    "inject",
    "invalidate_resonance",
    "list_crystals",
    "list_loci",
    "list_resonances",
    "list_sessions",
    "list_trace",
    "pause",
    "resume",
    "review_crystal",
    "run",
    "search",
    "session_events",
    "session_view",
    "step",
    "stop",
    "update_session",
]
