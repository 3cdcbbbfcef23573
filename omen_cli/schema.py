"""``omen schema``: the JSON Schemas of a stored event, a command, the options, ``omen do``'s output, an error as
``--json`` prints it, a simulation's run, an ability library file, a sheet and a ruleset; and the OpenAPI document
``omen serve`` publishes."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import (
    refusals,
    wrote,
)
from .console import stdout

__all__ = ["schema", "SchemaOf", "DIALECT", "openapi_document"]

class SchemaOf(str, Enum):
    """What ``omen schema`` describes."""

    event = "event"
    command = "command"
    options = "options"
    do = "do"
    error = "error"
    verify = "verify"
    state = "state"
    step = "step"
    explanation = "explanation"
    fixtures = "fixtures"
    simulation = "simulation"
    content = "content"
    sheet = "sheet"
    ruleset = "ruleset"
    openapi = "openapi"


def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE", help="Write to this file "
                                                "instead of standard output.")] = None,
    of: Annotated[SchemaOf, typer.Option(
        "--of", help="Which schema: a stored event (the envelope and every event type), a command (any command, as "
                     "omen do and a scenario's [[commands]] take it), the options (omen status --json), what omen do "
                     "--json prints, what a command asked for --json prints when it fails (error), omen verify "
                     "--json's report (verify), the state omen replay --json and omen run --json print (state), a line"
                     " of omen replay --steps --json (step), omen explain --json (explanation), omen fixtures check "
                     "--json (fixtures), a simulation's run (omen simulate --json and its run file), an ability "
                     "library file (content: docs/abilities.md), a combatant's sheet or a ruleset file "
                     "(docs/content.md); or the OpenAPI document of omen serve (openapi: every resource, its "
                     "parameters and the schemas of its bodies, as GET /schema/openapi.json serves it).")
    ] = SchemaOf.event,
) -> None:
    """Print a JSON Schema: of a stored event (the default), a command, the options, omen do's output, an error as
    --json prints it, the other commands' --json (verify, state, step, explanation, fixtures), a simulation's run,
    an ability library file, a combatant's sheet or a ruleset file; or omen serve's OpenAPI document."""
    import json

    import msgspec

    from omen_core.commands import Command
    from omen_core.content import AbilityLibrary, CombatantSheet, Ruleset
    from omen_core.events import event_schema
    from omen_core.limits import bound_wholes
    from omen_core.options import Options
    from omen_replay.explain import Explanation
    from omen_replay.fixtures import FixtureResult
    from omen_replay.output import output_file
    from omen_replay.replay import DoResult, StateSummary, StepLine

    schemas: dict[str, Any] = {"event": event_schema, "command": lambda: msgspec.json.schema(Command),
                               "options": lambda: msgspec.json.schema(Options),
                               "do": lambda: msgspec.json.schema(DoResult), "error": _error_schema,
                               "verify": _verify_schema, "state": lambda: msgspec.json.schema(StateSummary),
                               "step": lambda: msgspec.json.schema(StepLine),
                               "explanation": lambda: msgspec.json.schema(Explanation),
                               "fixtures": lambda: msgspec.json.schema(list[FixtureResult]),
                               "simulation": _simulation_schema,
                               "content": lambda: msgspec.json.schema(AbilityLibrary),
                               "sheet": lambda: msgspec.json.schema(CombatantSheet),
                               "ruleset": lambda: msgspec.json.schema(Ruleset), "openapi": openapi_document}
    document = schemas[of.value]()
    if of.value in _TAKEN:
        bound_wholes(document)  # what the decoders take: no whole number past 2**53 - 1
    if of.value != "openapi":  # an OpenAPI document names its own version ("openapi": "3.1.0") and dialect
        document = {"$schema": DIALECT, **document}  # the dialect msgspec writes ($defs): said, for every validator
    text = json.dumps(document, indent=2)
    if output is None:
        stdout.write(text + "\n")
    else:
        with refusals(), output_file(output, "the schema") as page:
            page.write(text + "\n")
        wrote(f"the schema written to {output}")


#: The JSON Schema dialect of every schema omen prints (msgspec's: ``$defs``, draft 2020-12).
DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The schemas of what omen reads from a user (commands and content), whose whole numbers are bounded (rulings,
#: docs/rulings.md "Limits"); the others describe what omen writes.
_TAKEN = frozenset({"command", "content", "sheet", "ruleset"})


def _verify_schema() -> Any:
    """What ``omen verify --json`` prints: the audit's report, and whether it is clean and strictly clean."""
    import msgspec

    from omen_replay.verify import Report

    document: dict[str, Any] = msgspec.json.schema(Report)
    name = document["$ref"].rsplit("/", 1)[1]
    report = document["$defs"][name]
    report["properties"].update({
        "clean": {"type": "boolean", "description": "No integrity finding (undo re-rolls and dice provenance aside): "
                                                   "exit 0"},
        "strict_clean": {"type": "boolean", "description": "No finding at all: exit 0 with --strict"}})
    report["required"] = sorted({*report.get("required", ()), "clean", "strict_clean"})
    return document


def _error_schema() -> Any:
    import msgspec

    from .errors import ErrorReport

    return msgspec.json.schema(ErrorReport)


def _simulation_schema() -> Any:
    import msgspec

    from omen_replay.simulate.run import Run

    return msgspec.json.schema(Run)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document ``omen serve`` publishes at ``GET /schema/openapi.json``, made without serving: the app
    of an empty memory store, Litestar's document of its routes, completed as the server completes it
    (:func:`omen_server.openapi.complete`). ``omen serve`` always has a creation token, so ``POST /fights`` is
    behind the bearer scheme (no answer of it has made-up examples, so it is the same whenever it is built)."""
    from omen_core import MemoryStore
    from omen_server import create_app
    from omen_server.openapi import complete

    app = create_app(MemoryStore(), create_token="not served")
    document: dict[str, Any] = complete(app.openapi_schema.to_schema(), create_token=True)
    return document
