"""The API publishes each record's answer as the record's own JSON form: the OpenAPI component a route answers
with lists exactly the keys ``to_json`` prints, in that order, so a client generated from the document reads
what the CLI's ``--json`` prints.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from explorer.api import create_app
from explorer.records.dreaming import CycleReport, Dream, DreamSource
from explorer.records.jobs import Job
from explorer.records.json_form import Computed, JsonForm
from explorer.records.wander import Crystal, Locus, Resonance, Review, SearchHit, Session, StepResult, Trace
from explorer.settings import Settings

FORMS = [
    Session.json_form,
    Locus.json_form,
    Trace.json_form,
    Resonance.json_form,
    Crystal.json_form,
    Review.json_form,
    SearchHit.json_form,
    CycleReport.json_form,
    Dream.json_form,
    DreamSource.json_form,
    Job.json_form,
]


@pytest.fixture(scope="module")
def components(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db: Path = tmp_path_factory.mktemp("openapi") / "explorer.duckdb"
    app = create_app(replace(Settings(), db_path=db, embedding_model="hashing"))
    return app.openapi()["components"]["schemas"]


def keys(form: JsonForm) -> list[str]:
    return [key.name if isinstance(key, Computed) else key for key in form.keys]


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.title)
def test_a_records_component_has_the_keys_its_json_prints_in_order(components: dict[str, Any], form: JsonForm) -> None:
    component = components[form.title]
    assert list(component["properties"]) == keys(form)
    assert set(component["required"]) == set(keys(form)) - set(form.optional)
    assert component["description"].startswith(((form.record or object).__doc__ or "").split("\n")[0])


def test_what_a_route_adds_to_a_record_comes_after_its_keys(components: dict[str, Any]) -> None:
    for name, form in (("SessionAfter", Session.json_form), ("StepOut", StepResult.json_form)):
        assert list(components[name]["properties"]) == [*keys(form), "consolidation"]
        assert "consolidation" not in components[name]["required"]
    step = components["StepOut"]["properties"]  # a step is answered only with what followed it
    assert step["to_locus"] == {"$ref": "#/components/schemas/LocusJson"}
    assert components["SessionJson"]["properties"]["fence"]["items"] == {"$ref": "#/components/schemas/FenceJson"}
    assert components["JobJson"]["properties"]["progress"] == {"$ref": "#/components/schemas/JobProgressJson"}
