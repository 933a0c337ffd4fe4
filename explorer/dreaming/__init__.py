"""Dreaming over the memory graph: the three "night" mechanisms.

- :mod:`exploration` — REM exploration (docs/dreaming.md#rem-exploration): diverse seeds, noisy
  spreading activation, one judge call per seed; accepted links become EXTENDS
  relations that keep their description and scores.
- :mod:`fusion` — memory fusion (docs/dreaming.md#memory-fusion): clusters of fading, related
  memories merged into one shorter summary; sources superseded, never deleted.
- :mod:`rem_cycle` — the REM cycle (docs/dreaming.md#rem-cycle): three nodes (one from
  the current year), their implicit question, a synthesis, its relation to what is
  known; dreams that add nothing are dropped. :mod:`chrono` reads a dated
  corpus in order and dreams at each period boundary.

Each algorithm is a pure function (data, a ``get_relations`` callback and the
gateway in, a result out); :mod:`service` reads and writes the store around them
for the CLI and the app.
"""
