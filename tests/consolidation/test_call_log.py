"""The call log names each consolidation call by its prompt's kind, so a reader (and the real-model run, which
checks that every kind was asked) can tell a pattern's call from a contradiction's.
"""

from __future__ import annotations

from explorer.consolidation.service import import_log, run_consolidation
from explorer.prompts import REGISTRY, load_prompts
from explorer.store.calls import recent_calls

from .conftest import SAMPLE_LOG


def test_each_consolidation_call_is_logged_under_its_prompts_kind(runtime) -> None:
    import_log(runtime, SAMPLE_LOG)
    run_consolidation(runtime, trigger="manual")
    runtime.flush()
    with runtime.db.connect() as con:
        purposes = {call.purpose for call in recent_calls(con)}
    load_prompts()
    consolidation_kinds = {kind for kind in REGISTRY if kind.startswith("consolidation_")}
    assert {"consolidation_pattern", "consolidation_abstraction"} <= purposes <= consolidation_kinds
