"""Wander (docs/wander.md): a seeded, budgeted walk through idea space that dwells on
each encounter, notices recurring themes (resonances) and keeps validated
insights (crystals).

Each stage of the step is a small pure module; :mod:`explorer.wander.stepping`
reads the store, runs the step and writes its rows in one transaction, and
:mod:`explorer.wander.service` is the one facade the surfaces call.
"""
