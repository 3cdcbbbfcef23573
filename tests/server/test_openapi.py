"""omen_server: schemathesis against the live app's own OpenAPI document (every operation but the endless stream,
with generated inputs, valid and invalid), every check of schemathesis on: no answer is a 500; every answer
(status, content type, headers, body) matches what the document says; every request the document says is valid
is accepted, and every one it says is not is refused (the document says what the decoders take:
omen_server/openapi.py); a request without its bearer token is 401.

One check is configured rather than left at its default: "schema-valid request accepted" takes 422 as an
acceptance, as it takes 401, 403, 404 and 409. A 422 is a rule of the game refusing a well-formed command (no such
combatant, not its turn, a sheet the rules refuse), which no schema can say; a 400 is a request the decoders
refuse, which the document must say, and stays a failure (docs/server.md, "What is tested")."""

from __future__ import annotations

from typing import Any

import msgspec
import schemathesis
from hypothesis import HealthCheck, settings
from requests.structures import CaseInsensitiveDict
from schemathesis import AuthContext, Case
from schemathesis.config import SchemathesisConfig

from omen_core.store.base import FIGHT_ID
from omen_server import create_app
from tests.server.test_app import Table

CREATE = "omen_create_schemathesis"
TABLE = Table()
with TABLE.client:
    TABLE.create()
APP = create_app(TABLE.store, TABLE.keep, create_token=CREATE)
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]
CONFIG = SchemathesisConfig.from_dict({"checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}}})
SCHEMA = schemathesis.openapi.from_asgi("/schema/openapi.json", APP, config=CONFIG).exclude(path_regex="stream")


@SCHEMA.auth(refresh_interval=None, retry_on=[])
class Bearer:
    """The bearer token of each request: the creation token for POST /fights, the GM's of 'duel' for the rest."""

    def get(self, case: Case[Any], _context: AuthContext) -> str:
        return CREATE if (case.method, case.path) == ("POST", "/fights") else TABLE.gm

    def set(self, case: Case[Any], token: str, _context: AuthContext) -> None:
        headers: dict[str, Any] = dict(case.headers or {})
        case.headers = CaseInsensitiveDict({**headers, "Authorization": f"Bearer {token}"})


@SCHEMA.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case: Case[Any]) -> None:
    """Generated requests to every operation, on the fight 'duel' with its GM token (POST /fights with the
    creation token): never a 500, and every status, header and body conforms to the OpenAPI document, valid
    requests accepted and invalid ones refused, and a request without its token is 401."""
    if case.path_parameters and FIGHT_ID.fullmatch(str(case.path_parameters.get("fight_id", ""))):
        case.path_parameters["fight_id"] = "duel"  # a valid id: the fight that is there (an invalid one is kept)
    case.call_and_validate()


def test_the_document_names_every_resource() -> None:
    """The OpenAPI document lists each resource of docs/server.md."""
    paths = set(SCHEMA.raw_schema["paths"])
    assert {"/fights", "/fights/{fight_id}/options", "/fights/{fight_id}/commands", "/fights/{fight_id}/events",
            "/fights/{fight_id}/stream"} <= paths


def test_the_document_says_what_the_decoders_take() -> None:
    """Bearer tokens are a security scheme every fight resource needs (GET /fights none); the stream answers
    text/event-stream; every body is closed to unknown fields; the commands HTTP takes are the scenario
    vocabulary without start_fight and join."""
    doc = SCHEMA.raw_schema
    assert doc["components"]["securitySchemes"]["bearer"] == {**doc["components"]["securitySchemes"]["bearer"],
                                                              "type": "http", "scheme": "bearer"}
    assert doc["paths"]["/fights"]["get"]["security"] == []
    assert doc["paths"]["/fights"]["post"]["security"] == [{"bearer": []}]
    assert all(op["security"] == [{"bearer": []}] for path, item in doc["paths"].items() if "{fight_id}" in path
               for op in item.values())
    assert "text/event-stream" in doc["paths"]["/fights/{fight_id}/stream"]["get"]["responses"]["200"]["content"]
    parts = doc["components"]["schemas"]
    for body in ("CreateFight", "CommandRequest", "NewSeat", "SettingsChange", "CombatantSheet"):
        assert parts[body]["additionalProperties"] is False, body
    commands = {ref["$ref"].rsplit("/", 1)[1] for ref in parts["CommandRequest"]["properties"]["command"]["anyOf"]}
    assert "StartFight" not in commands and "Join" not in commands and {"DeclareAttack", "Undo"} <= commands
    assert not any("uniqueItems" in str(schema) for schema in parts.values())


def test_the_document_says_what_staging_answers() -> None:
    """docs/server.md, "Players roll their own dice": POST /commands answers 202 with the staged command (asked with
    stage: true), and POST /staged 201 with a CommandResult or 202 with the staged command (the document said
    neither 202, and POST /staged's 201 was a string)."""
    paths = SCHEMA.raw_schema["paths"]
    answers = {path: {status: body["content"]["application/json"]["schema"]["$ref"].rpartition("/")[2]
                      for status, body in paths[path]["post"]["responses"].items() if status in ("201", "202")}
               for path in ("/fights/{fight_id}/commands", "/fights/{fight_id}/staged")}
    assert answers == {"/fights/{fight_id}/commands": {"201": "CommandResult", "202": "StagedView"},
                       "/fights/{fight_id}/staged": {"201": "CommandResult", "202": "StagedView"}}


def test_no_201_promises_a_location_header() -> None:
    """RFC 9110 §15.3.2: a 201's description said "Document created, URL follows", Litestar's default, but the
    server sends no Location header (the body says what was made: a client author looked for the URL); each 201
    says what its body holds."""
    paths = SCHEMA.raw_schema["paths"]
    created = {(path, method): answer["201"]["description"] for path, item in paths.items()
               for method, op in item.items() if "201" in (answer := op.get("responses", {}))}
    assert created and not [k for k, words in created.items() if "URL follows" in words], created
    assert created[("/fights", "post")].startswith("The fight was created: its id, the GM's token")


def test_the_document_says_what_the_table_fragment_and_the_sheets_answer() -> None:
    """docs/server.md's GET /fights/{id}/table (HTML with its X-Table-Tag; 204 with no body when the tag sent back
    is the one it has) and GET /sheets (no token: the bundled sheets by id) are in the document (they were left
    out: include_in_schema=False)."""
    paths = SCHEMA.raw_schema["paths"]
    table = paths["/fights/{fight_id}/table"]["get"]
    assert table["security"] == [{"bearer": []}]
    assert [p["name"] for p in table["parameters"] if p["in"] == "header"] == ["X-Table-Tag"]
    assert list(table["responses"]["200"]["content"]) == ["text/html"]
    assert "content" not in table["responses"]["204"]
    assert {"X-Table-Tag"} == set(table["responses"]["200"]["headers"]) == set(table["responses"]["204"]["headers"])
    sheets = paths["/sheets"]["get"]
    assert sheets["security"] == [] and "401" not in sheets["responses"]
    assert sheets["responses"]["200"]["content"]["application/json"]["schema"] == {
        "type": "object", "additionalProperties": {"$ref": "#/components/schemas/CombatantSheet"}}


def test_the_document_says_what_a_faces_needed_problem_lists() -> None:
    """docs/server.md, "Errors": a problem's ``needed`` is a list of texts (one a roll) and ``needed_dice`` a list
    of NeededDie (roller, purpose, pool, sides: one a die)."""
    schemas = SCHEMA.raw_schema["components"]["schemas"]
    problem = schemas["Problem"]["properties"]
    assert "needed" in problem and "needed_dice" in problem
    assert sorted(schemas["NeededDie"]["required"]) == ["pool", "purpose", "roller", "sides"]


def _walk(node: Any) -> Any:
    """Every dict in ``node``, itself included, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_every_error_the_document_lists_is_a_problem_document() -> None:
    """docs/server.md, "Errors": every error is application/problem+json, a Problem. Nine operations' 400 were
    Litestar's own (application/json {status_code, detail, extra}), a body the server never sends: now every
    response of status 400 and up of every operation has the problem document as its one content, and no schema in
    the document is the framework's error body."""
    paths = SCHEMA.raw_schema["paths"]
    errors = [(path, method, status, answer.get("content")) for path, item in paths.items()
              for method, operation in item.items() for status, answer in operation["responses"].items()
              if int(status) >= 400 and method != "head"]  # (a HEAD's answers have no body)
    assert len(errors) > 90 and {status for _p, _m, status, _c in errors} >= {"400", "401", "403", "404", "409",
                                                                              "413", "422", "503"}
    wrong = [(path, method, status) for path, method, status, content in errors
             if content != {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}]
    assert wrong == []
    defaults = [node for node in _walk(SCHEMA.raw_schema)
                if isinstance(node.get("properties"), dict) and {"status_code", "extra"} <= set(node["properties"])]
    assert defaults == []


def test_every_503_declares_its_retry_after_header() -> None:
    """docs/server.md ("Limits"): a 503 while the store cannot be used carries Retry-After: 1; the document declares
    it on every operation's 503 (it was sent and not declared: an OpenAPI client author)."""
    paths = SCHEMA.raw_schema["paths"]
    unavailable = [operation["responses"]["503"] for item in paths.values() for method, operation in item.items()
                   if method != "head" and "503" in operation["responses"]]
    assert len(unavailable) > 20
    assert all(answer.get("headers", {}).get("Retry-After", {}).get("schema") == {"type": "integer", "minimum": 0}
               for answer in unavailable)


def test_the_document_says_the_qr_code_is_an_svg_image() -> None:
    """GET /fights/{id}/seats/{seat}/qr's 200 is image/svg+xml (the document said an application/json string), and
    that is what it answers."""
    from litestar.testing import TestClient

    answer = SCHEMA.raw_schema["paths"]["/fights/{fight_id}/seats/{seat_id}/qr"]["get"]["responses"]["200"]
    assert answer["content"] == {"image/svg+xml": {"schema": {"type": "string"}}}
    with TestClient(APP) as client:
        made = client.post("/fights/duel/seats", headers={"Authorization": f"Bearer {TABLE.gm}"},
                           json={"kind": "spectator", "name": "Qr", "combatants": []})
        assert made.status_code == 201, made.text
        got = client.get(f"/fights/duel/seats/{made.json()['id']}/qr", params={"origin": "http://h:1"},
                         headers={"Authorization": f"Bearer {TABLE.gm}"})
    assert got.status_code == 200 and got.headers["content-type"].startswith("image/svg+xml"), got.text
    assert got.text.startswith("<?xml") or got.text.startswith("<svg"), got.text[:80]


def test_every_operation_with_a_body_lists_415() -> None:
    """An operation taking a JSON body lists 415 (a body not sent as application/json, its only media type);
    one without a body does not."""
    paths = SCHEMA.raw_schema["paths"]
    listed = {(path, method): ("requestBody" in operation, "415" in operation["responses"])
              for path, item in paths.items() for method, operation in item.items()}
    assert all(body == said for body, said in listed.values()), listed
    assert listed[("/fights/{fight_id}/commands", "post")] == (True, True)
    assert all(list(operation["requestBody"]["content"]) == ["application/json"] for item in paths.values()
               for operation in item.values() if "requestBody" in operation)


def test_every_get_but_the_streams_has_its_head_operation() -> None:
    """docs/server.md: HEAD works wherever GET does but on the stream; the document says so, a HEAD operation beside
    each such GET with the same parameters and statuses, and no body in any answer (RFC 9110 §9.3.2)."""
    paths = SCHEMA.raw_schema["paths"]
    gets = {path for path, item in paths.items() if "get" in item}
    heads = {path for path, item in paths.items() if "head" in item}
    assert heads == gets - {"/fights/{fight_id}/stream"} and "/fights/{fight_id}/options" in heads
    for path in heads:
        get, head = paths[path]["get"], paths[path]["head"]
        assert head["responses"].keys() == get["responses"].keys() and head.get("parameters") == get.get("parameters")
        assert all("content" not in answer for answer in head["responses"].values()), path
    with TABLE.client:
        answer = TABLE.client.head("/fights/duel/options", headers=TABLE.auth())
    assert answer.status_code == 200 and answer.content == b""


def test_the_schema_page_is_the_servers_own_and_lists_every_operation() -> None:
    """docs/server.md: `/schema` is a page of the document in words, from this server alone: the table pages'
    Content-Security-Policy (no script, nothing from elsewhere), no address of another host in it (it loaded Redoc,
    fonts and an icon from CDNs on the origin that keeps the creation token: a security tester), a row for every
    operation of the document and a section for every body it names."""
    import re

    from omen_server.table import CSP

    with TABLE.client:
        answer = TABLE.client.get("/schema")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"] == CSP
    assert (answer.headers["referrer-policy"], answer.headers["x-content-type-options"]) == ("no-referrer", "nosniff")
    page = answer.text
    assert "<script" not in page and re.findall(r"https?://", page) == []
    document = TABLE.client.get("/schema/openapi.json").json()
    operations = [(method.upper(), path) for path, item in document["paths"].items() for method in item
                  if method in ("get", "post", "put", "patch", "delete", "head")]
    rows = re.findall(r"<tr id=[^>]*><td><code>([A-Z]+)</code></td><td><code>(.*?)</code>", page)
    assert [(method, path.replace("<wbr>", "")) for method, path in rows] == operations
    assert set(re.findall(r'<details id="schema-([^"]+)"', page)) == set(document["components"]["schemas"])


def test_every_request_example_is_taken_by_the_server() -> None:
    """The document's request examples (for a client author reading it, not the source) each decode as the request
    they illustrate, strictly, and are taken: the fights they create are created, the seats made, the settings
    changed, the command given (201), on a real app; the staged faces name a staged command, so they are only
    decoded. Each is in the document under its operation."""
    from omen_server.app import _strict
    from omen_server.openapi import BODIES, EXAMPLES

    doc = SCHEMA.raw_schema
    for (path, method), examples in EXAMPLES.items():
        shown = doc["paths"][path][method]["requestBody"]["content"]["application/json"]["examples"]
        assert {name: shown[name]["value"] for name in shown} == {name: v for name, (_s, v) in examples.items()}
        for _summary, value in examples.values():
            _strict(msgspec.json.encode(value), BODIES[(path, method)])
    table = Table()
    with table.client:
        gm = {}
        for _summary, body in EXAMPLES[("/fights", "post")].values():
            made = table.client.post("/fights", json=body)
            assert made.status_code == 201, made.text
            gm[body["id"]] = {"Authorization": f"Bearer {made.json()['gm_token']}"}
        for path, fight in (("/fights/{fight_id}/seats", "duel"), ("/fights/{fight_id}/settings", "ambush")):
            for _summary, body in EXAMPLES[(path, "post")].values():
                answer = table.client.post(path.format(fight_id=fight), headers=gm[fight], json=body)
                assert answer.status_code in (200, 201), answer.text
        examples = EXAMPLES[("/fights/{fight_id}/commands", "post")]
        answer = table.client.post("/fights/duel/commands", headers=gm["duel"], json=examples["initiative"][1])
        assert answer.status_code == 201, answer.text
        answer = table.client.post("/fights/ambush/commands", headers=gm["ambush"], json=examples["attack-manual"][1])
        assert answer.status_code == 201, answer.text
