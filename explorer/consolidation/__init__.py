"""Consolidation (docs/consolidation.md): many experiences turned into a few verified, reusable patterns.

One small pure module per phase (``experiences`` capture, ``triage``, ``compression``, ``ladder``,
``integration``, ``verification``), the run as a pure function (``pipeline``), and the read → think → write
orchestration shared by the CLI and the app (``service``). SQL lives in :mod:`explorer.store.consolidation`.
"""
