"""The OpenAPI document ``omen serve`` publishes (``GET /schema/openapi.json``), made to say what the decoders take.

Litestar writes the paths, parameters and responses from the handlers; its
schemas of the bodies are looser than omen's strict decoders (a field it does
not know, a pattern inside a union). So every component schema is replaced by
msgspec's own (:func:`msgspec.json.schema_components`, the decoder's source:
``additionalProperties: false`` where unknown fields are refused, every pattern
and range), and the document is completed with what Litestar cannot know: the
bearer tokens (a security scheme), the stream's ``text/event-stream``, the QR
code's ``image/svg+xml``, the headers' and path parameters' own forms, and the
problems any resource may answer (413 for a body too large, 415 for one not sent as JSON, 503 while the store
cannot be used); every error is a problem document. Each GET but the stream's gets its HEAD operation beside it
(the server answers HEAD as GET, without the body).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
from litestar import Request
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin

from omen_core import __version__
from omen_core.limits import bound_wholes
from omen_core.store.base import FIGHT_ID
from omen_replay.explain import Explanation

from .app import (
    CommandRequest,
    CommandResult,
    ContentRead,
    ContentText,
    Created,
    CreateFight,
    EventsPage,
    FightsPage,
    NewSeat,
    OptionsView,
    Problem,
    SeatEntry,
    SeatInfo,
    SeatMade,
    SettingsChange,
    StagedView,
    StateView,
    TableSettings,
    VerifyView,
)
from .limits import MAX_IDEMPOTENCY_KEY, MAX_SEQ
from .staging import GiveDice

__all__ = ["openapi_config", "complete", "WIRE_TYPES", "BODIES", "ANSWERS", "RAW_ANSWERS", "EXAMPLES"]

#: Every type that goes over the wire as JSON, requests and answers: their schemas are msgspec's.
WIRE_TYPES: tuple[type, ...] = (CreateFight, CommandRequest, NewSeat, SettingsChange, GiveDice, Created, FightsPage,
                                SeatMade, SeatInfo, SeatEntry, TableSettings, StateView, OptionsView, StagedView,
                                CommandResult, EventsPage, Explanation, VerifyView, Problem, ContentText,
                                ContentRead)

_PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
#: The body each operation takes (the handlers decode it themselves, strictly: Litestar never does).
BODIES: dict[tuple[str, str], type] = {("/fights", "post"): CreateFight,
                                       ("/content", "post"): ContentText,
                                       ("/fights/{fight_id}/seats", "post"): NewSeat,
                                       ("/fights/{fight_id}/settings", "post"): SettingsChange,
                                       ("/fights/{fight_id}/commands", "post"): CommandRequest,
                                       ("/fights/{fight_id}/staged", "post"): GiveDice}
def _examples() -> dict[tuple[str, str], dict[str, tuple[str, Any]]]:
    """The example bodies of the requests (``omen_server/data/openapi-examples.json``, by ``METHOD /path``): data,
    not literals of the code, whose words would be message words (tests/engine_words.py) that no sheet's id or name
    may be ("longsword", "kael" were refused once they were here)."""
    raw = json.loads((Path(__file__).parent / "data" / "openapi-examples.json").read_text(encoding="utf-8"))
    return {(key.partition(" ")[2], key.partition(" ")[0].lower()): {
        name: (str(example["summary"]), example["value"]) for name, example in examples.items()}
        for key, examples in raw.items()}


#: Example bodies of the requests, by path and method: each a name, a summary and the value, which the server takes
#: as it is (tests/server/test_openapi.py decodes each with the request's own decoder, and creates the fights,
#: makes the seats, changes the settings and gives the commands of its examples on a real app).
EXAMPLES: dict[tuple[str, str], dict[str, tuple[str, Any]]] = _examples()
#: The answers an operation gives besides what its handler's signature says (a handler answering raw bytes): by
#: status, the type of the body.
ANSWERS: dict[tuple[str, str], dict[int, tuple[type, str]]] = {
    ("/fights/{fight_id}/commands", "post"): {
        202: (StagedView, "Staged: the command waits for another seat's dice (asked with stage: true)")},
    ("/fights/{fight_id}/staged", "post"): {
        201: (CommandResult, "The command was decided: the events appended, as this seat sees them"),
        202: (StagedView, "The faces are in; the command now waits for another seat's dice")},
}
#: What a 201 answers, where Litestar's default would say "Document created, URL follows" (no Location header is
#: sent: the body says what was made; a client author looked for the URL).
CREATED: dict[tuple[str, str], str] = {
    ("/fights", "post"): "The fight was created: its id, the GM's token (shown this once), the head and the GM's "
                         "options (no Location header: the body says it)",
    ("/fights/{fight_id}/seats", "post"): "The seat was made: its id, token and link (no Location header: the "
                                          "body says it)",
    ("/fights/{fight_id}/commands", "post"): "The command was decided: the events appended, as this seat sees them",
}
_TAG = {"description": "What the fragment shows, tagged (an HMAC under the keep's secret): send it back in "
                       "X-Table-Tag to be answered 204 while nothing it shows changed",
        "schema": {"type": "string"}}
#: The answers of the routes that answer raw bytes of their own kind (HTML, nothing), by path and method: by status,
#: the OpenAPI response object.
RAW_ANSWERS: dict[tuple[str, str], dict[int, dict[str, Any]]] = {
    ("/fights/{fight_id}/table", "get"): {
        200: {"description": "The table as this seat sees it, an HTML fragment",
              "headers": {"X-Table-Tag": _TAG}, "content": {"text/html": {"schema": {"type": "string"}}}},
        204: {"description": "Nothing the fragment shows changed since the X-Table-Tag sent: no body",
              "headers": {"X-Table-Tag": _TAG}}},
    ("/fights/{fight_id}/seats/{seat_id}/qr", "get"): {
        200: {"description": "The seat's link as a QR code, an SVG image",
              "content": {"image/svg+xml": {"schema": {"type": "string"}}}}},
    ("/sheets", "get"): {
        200: {"description": "The bundled sheets by id", "content": {"application/json": {"schema": {
            "type": "object", "additionalProperties": {"$ref": "#/components/schemas/CombatantSheet"}}}}}},
}
_HEADERS: dict[str, dict[str, Any]] = {
    "Idempotency-Key": {"type": "string", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY},
    "Last-Event-ID": {"type": "string", "pattern": r"^[0-9]{1,19}$(?!\n)"},
    "X-Table-Tag": {"type": "string"},
}


def _components() -> dict[str, Any]:
    _schemas, components = msgspec.json.schema_components(WIRE_TYPES, ref_template="#/components/schemas/{name}")
    _as_decoded(components)
    bound_wholes(components)  # no whole number past 2**53 - 1 in a command or a sheet (docs/rulings.md "Limits")
    return components


def _integers(schema: dict[str, Any]) -> None:
    """Litestar writes an integer's bounds as floats (``minimum: 0.0``, and 2^63 - 1 rounded up to 2^63); JSON
    Schema's integers bound them, exactly."""
    for key in ("minimum", "maximum", "default"):
        value = schema.get(key)
        if isinstance(value, float):
            schema[key] = MAX_SEQ if value == float(MAX_SEQ) else int(value)


def _as_decoded(schema: Any) -> None:
    """msgspec writes a set's array ``uniqueItems``, but its decoder takes repeated items (and keeps one of each):
    the document says what the decoder takes."""
    if isinstance(schema, dict):
        schema.pop("uniqueItems", None)
        for value in schema.values():
            _as_decoded(value)
    elif isinstance(schema, list):
        for value in schema:
            _as_decoded(value)


def _parameter(parameter: dict[str, Any]) -> None:
    name, where = parameter["name"], parameter["in"]
    if where == "header" and name in _HEADERS:
        parameter["schema"] = dict(_HEADERS[name])
    elif where == "path" and name == "fight_id":
        parameter["schema"] = {"type": "string", "pattern": FIGHT_ID.pattern, "maxLength": 128}
    _integers(parameter["schema"])


def _problems(operation: dict[str, Any], *statuses: int) -> None:
    """Every error an operation answers is a problem document (``application/problem+json``): the ``statuses`` any
    resource may answer added, and each error Litestar wrote its own way (the 400 it adds to an operation with
    parameters: ``application/json`` ``{status_code, detail, extra}``, a body the server never sends) made one."""
    responses = operation["responses"]
    for status in statuses:
        responses.setdefault(str(status), {"description": _WORDS[status]})
    for status, answer in responses.items():
        if int(status) >= 400:
            answer["content"] = _PROBLEM
        if status == "503":  # (docs/server.md, "Limits": it was sent and not declared: an OpenAPI client author)
            answer["headers"] = {"Retry-After": {"description": "Seconds to wait before trying again (1)",
                                                 "schema": {"type": "integer", "minimum": 0}}}


_WORDS = {400: "Bad request", 401: "No valid token", 413: "The body is too large",
          415: "The body is not sent as JSON", 503: "The event store cannot be used now"}


def complete(document: dict[str, Any], create_token: bool) -> dict[str, Any]:
    """``document`` (Litestar's, as a dict) completed as the module says; a new dict."""
    doc = copy.deepcopy(document)
    doc.setdefault("components", {})["schemas"] = _components()
    doc["components"]["securitySchemes"] = {"bearer": {
        "type": "http", "scheme": "bearer",
        "description": "A seat's token (the GM's comes with the fight; the GM makes the others); for POST /fights, "
                       "the server's creation token (docs/server.md)"}}
    for path, item in doc.get("paths", {}).items():
        for method, operation in item.items():
            if method not in {"get", "post", "delete"}:
                continue
            for parameter in operation.get("parameters", []):
                _parameter(parameter)
            body = BODIES.get((path, method))
            if body is not None:
                operation["requestBody"] = {"required": True, "content": {"application/json": {
                    "schema": {"$ref": f"#/components/schemas/{body.__name__}"}}}}
                examples = EXAMPLES.get((path, method))
                if examples:
                    operation["requestBody"]["content"]["application/json"]["examples"] = {
                        name: {"summary": summary, "value": value} for name, (summary, value) in examples.items()}
            for status, (kind, words) in ANSWERS.get((path, method), {}).items():
                operation["responses"][str(status)] = {"description": words, "content": {"application/json": {
                    "schema": {"$ref": f"#/components/schemas/{kind.__name__}"}}}}
            created = CREATED.get((path, method))
            if created is not None and "201" in operation["responses"]:
                operation["responses"]["201"]["description"] = created
            for status, answer in RAW_ANSWERS.get((path, method), {}).items():
                operation["responses"][str(status)] = answer
            public = path == "/sheets" or (path == "/fights" and (method == "get" or not create_token))
            operation["security"] = [] if public else [{"bearer": []}]
            _problems(operation, 400, 503, *(() if public else (401,)), *((413,) if method == "post" else ()),
                      *((415,) if body is not None else ()))
            if path.endswith("/stream"):
                operation["responses"]["200"] = {
                    "description": "Server-Sent Events, each message's data one JSON document: `event` messages (a "
                                   "SeenEvent of components/schemas, its seq as the message's id), `options` "
                                   "messages (an OptionsView) and, where the stream cannot go on, one `error` "
                                   "message (a Problem)",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}}}
    for path, item in doc.get("paths", {}).items():
        if "get" in item and not path.endswith("/stream"):
            item["head"] = _head_of(item["get"])
    return doc


def _head_of(get: dict[str, Any]) -> dict[str, Any]:
    """The HEAD operation of a GET (``app.head_as_get``): the same parameters, security, statuses and headers, and
    no body (RFC 9110 §9.3.2)."""
    head = copy.deepcopy(get)
    if "operationId" in head:
        head["operationId"] = f"Head{head['operationId']}"
    head["summary"] = f"{head.get('summary') or 'The same as GET'} (headers only)"
    for answer in head.get("responses", {}).values():
        answer.pop("content", None)
    return head


class _CompletedJson(JsonRenderPlugin):
    """``/schema/openapi.json``: Litestar's document, completed (:func:`complete`) once."""

    def __init__(self, create_token: bool) -> None:
        super().__init__()
        self.create_token = create_token
        self._done: dict[str, Any] | None = None

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        if self._done is None:
            self._done = complete(openapi_schema, self.create_token)
        return self.render_json(request, self._done)


class _SchemaPage(OpenAPIRenderPlugin):
    """``/schema``: the completed document as a page of this server's alone (every operation, its body and its
    answers, and each body's JSON Schema), with no script and nothing from elsewhere: Litestar's Redoc view loaded
    its script, fonts and icon from CDNs (an unpinned "latest") on the origin whose set-up page keeps the creation
    token, and showed nothing off-line (a security tester). Rendered once."""

    def __init__(self, create_token: bool) -> None:
        super().__init__(path="/")
        self.create_token = create_token
        self._page: bytes | None = None

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        if self._page is None:
            from .table import ENV  # (the table imports the app's names: not at import time)

            done = complete(openapi_schema, self.create_token)
            self._page = ENV.get_template("schema.html.j2").render(
                doc=done, operations=operations_of(done), schemas=[
                    (name, {"description": " ".join(str(schema.get("description", "")).split("\n\n", 1)[0].split()),
                            "lines": msgspec.json.format(msgspec.json.encode(schema)).decode().splitlines()})
                    for name, schema in sorted(done.get("components", {}).get("schemas", {}).items())]).encode()
        return self._page


def operations_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Each operation of an OpenAPI document, in its paths' order: method, path, summary and description, the name
    of its request body's schema, and its answers (status, the name of the schema of each, if one)."""
    found = []
    for path, item in document.get("paths", {}).items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete", "head"):
                continue
            body = _schema_name((op.get("requestBody") or {}).get("content", {}))
            answers = [(status, _schema_name(answer.get("content", {})))
                       for status, answer in sorted(op.get("responses", {}).items())]
            found.append({"id": op.get("operationId") or f"{method}-{path}", "method": method.upper(), "path": path,
                          "summary": op.get("summary", ""), "description": op.get("description", ""),
                          "body": body, "answers": answers})
    return found


def _schema_name(content: dict[str, Any]) -> str:
    """The name of the components schema a content map's first media type refers to, or ""."""
    for media in content.values():
        ref = str((media.get("schema") or {}).get("$ref", ""))
        return ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else ""
    return ""


def openapi_config(create_token: bool) -> OpenAPIConfig:
    """The app's OpenAPI configuration: the completed JSON document, and a page of it in words at ``/schema``;
    ``create_token``: whether ``POST /fights`` needs the creation token (then the document says so)."""
    return OpenAPIConfig(title="omen", version=__version__,
                         description="The network back end of omen: fights, their options, commands and events "
                                     "(docs/server.md).",
                         render_plugins=[_CompletedJson(create_token), _SchemaPage(create_token)])
