"""omen_server: schemathesis against the live app's own OpenAPI document (every operation but the endless
stream, with generated inputs): no answer is a 500, and every answer (status, content type, headers, body)
matches what the document says.

Two of schemathesis's checks judge the request schemas instead, and are left out: Litestar's OpenAPI
generator writes some request constraints looser than omen's decoders check them (an exact multiplier's
pattern inside a union, say), so "schema-valid request rejected" would report the decoders being strict,
and "schema-violating request accepted" the reverse where Litestar's schema is stricter than JSON needs.
The bodies themselves are decoded strictly (omen_server.app._strict)."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from omen_server import create_app
from tests.server.test_app import Table

TABLE = Table()
with TABLE.client:
    TABLE.create()
APP = create_app(TABLE.store, TABLE.keep)
SCHEMA = schemathesis.openapi.from_asgi("/schema/openapi.json", APP).exclude(path_regex="stream")


@SCHEMA.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case):
    """Generated requests to every operation, on the fight 'duel' with its GM token: never a 500, and every
    status, header and body conforms to the OpenAPI document."""
    if case.path_parameters and "fight_id" in case.path_parameters:
        case.path_parameters["fight_id"] = "duel"
    case.call_and_validate(headers={"Authorization": f"Bearer {TABLE.gm}"},
                           excluded_checks=[positive_data_acceptance, negative_data_rejection])


def test_the_document_names_every_resource():
    """The OpenAPI document lists each resource of docs/server.md."""
    paths = set(SCHEMA.raw_schema["paths"])
    assert {"/fights", "/fights/{fight_id}/options", "/fights/{fight_id}/commands", "/fights/{fight_id}/events",
            "/fights/{fight_id}/stream"} <= paths
