"""A property-based run of the API's own OpenAPI document (schemathesis) against a live server: whatever the
document admits (positive data) is taken, and bodies and parameters it refuses (negative data) are refused (a
boolean where it says number, 5e-324 where it says above 0), never with a server error.

Strings are generated without NUL: the server refuses a text no store can hold (``explorer/inputs.py``), which no
keyword of the document can state for every text, so a NUL would be data the document admits and the server does
not; tests/api/test_document_bounds.py sends one to every text instead.

Runs that call models for long (dreaming, consolidation) are left to test_runs.py: a generated body may ask for
thousands of dreams as a background job, and a worker would spend the run on them.
"""

from __future__ import annotations

import re

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import negative_data_rejection, not_a_server_error, positive_data_acceptance

from .conftest import Server

EXAMPLES = 12  # per operation and mode: enough to reach the parameters' edges, the document in about a minute
LEFT_OUT = re.compile(r"^/api/v1/(dreams/(rem|explore|fuse|cycle)|consolidation/runs)")  # runs: minutes each


def test_no_request_is_a_server_error(server: Server) -> None:
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    schema.config.generation.update(allow_x00=False)
    operations = [result.ok() for result in schema.get_all_operations()]
    tried = [op for op in operations if not LEFT_OUT.match(op.path)]
    assert len(tried) >= 25, [op.label for op in operations]
    failures: dict[str, str] = {}
    unsatisfiable: list[str] = []
    for operation in tried:
        for mode in GenerationMode:

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
                database=None,
            )
            def answers(case: schemathesis.Case) -> None:
                case.call_and_validate(checks=[not_a_server_error, negative_data_rejection, positive_data_acceptance])

            try:
                answers()
            except Unsatisfiable:
                # no negative data exists: the operation's only input is a path id (any text is a path segment)
                # and a server without a token refuses no header, so there is nothing wrong to send
                assert mode is GenerationMode.NEGATIVE, operation.label
                unsatisfiable.append(operation.label)
            except Exception as exc:  # every operation is tried; the failures are reported together
                failures[f"{operation.label} ({mode.value})"] = str(exc)[:2000]
    assert not failures, "\n\n".join(f"{label}:\n{why}" for label, why in failures.items())
    assert len(unsatisfiable) < len(tried) / 2, unsatisfiable  # most operations had bad data tried on them
