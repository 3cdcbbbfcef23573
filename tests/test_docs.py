"""The Python examples in README.md and docs/ run, and say what the code does."""

from __future__ import annotations

import re
import shutil
import typing
from pathlib import Path
from typing import Any

import pytest

from omen_core import MemoryStore
from omen_core.dice import seeded_face
from omen_core.events import encode_line
from omen_replay.demo import run_demo
from tests.fights import present

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "omen_replay" / "data"


def python_blocks(doc: str) -> list[str]:
    """The ```python blocks of a Markdown file under the repository root."""
    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the sample sheets and a demo log as fight.jsonl."""
    for sheet in DATA.glob("*.toml"):
        shutil.copy(sheet, tmp_path / sheet.name)
    events = run_demo(MemoryStore(), clock=lambda: 0).events
    (tmp_path / "fight.jsonl").write_bytes(b"".join(encode_line(e) + b"\n" for e in events))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_api_example_runs(workdir: Path) -> None:
    """The README's Python API tour runs as written and leaves a verified-seed fight."""
    (block,) = python_blocks("README.md")
    scope: dict[str, Any] = {}
    exec(block, scope)
    assert scope["fight"].state.revealed_seed is not None
    assert scope["contest"].winner in {"kael", "vesh"}


def test_live_doc_from_python_runs(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/live.md's "From Python" block runs as written: a command built from data, its refusal naming
    $.dice[0], a shorthand given by the GM, and the first initiative roll explained (4 + 1 AGI = 5)."""
    text = (ROOT / "docs" / "live.md").read_text()
    section = text[text.index("## From Python"):]
    (block, *_rest) = re.findall(r"```python\n(.*?)```", section, re.S)
    scope: dict[str, Any] = {}
    exec(block, scope)
    assert capsys.readouterr().out == "$.dice[0] Expected `int` >= 1\n"
    assert scope["fight"].state.order == ("vesh", "kael") and scope["fight"].state.turn == "kael"
    assert (scope["why"].parts[0].total, [(t.label, t.value) for t in scope["why"].parts[0].terms]) == (
        5, [("AGI die", 4), ("AGI bonus", 1)])
    issued = [r.event for r in scope["fight"].events if type(r.event).__name__ == "CommandIssued"]
    assert [i.by for i in issued] == ["the GM", "the GM"]


def test_live_doc_auditing_and_narrating_from_python_runs(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/live.md's "Auditing and narrating" block runs as written after the "From Python" one: the fight's
    events verify clean, with no finding, and the last three lines of its narrative are printed with their seqs
    (a tester embedding omen found verify and narrate in no doc)."""
    text = (ROOT / "docs" / "live.md").read_text()
    first, audit = re.findall(r"```python\n(.*?)```", text[text.index("## From Python"):], re.S)[:2]
    scope: dict[str, Any] = {}
    exec(first, scope)
    capsys.readouterr()
    exec(audit, scope)
    assert scope["report"].clean and scope["report"].findings == ()
    told = capsys.readouterr().out.splitlines()
    assert len(told) == 3 and all(re.match(r"#\d+ ", line) for line in told), told


def test_live_doc_retries_from_python_run(workdir: Path) -> None:
    """docs/live.md's "Retries and other writers" block runs as written: a command given with a key is appended
    once however often it is retried (execute alone records the key and appends twice: found by a tester), a
    second Fight on the store that fell behind catches up and gives its command, and a key held by another
    command is refused (KeyReused) with nothing written."""
    from omen_core import Fight, ManualDice, MemoryStore
    from omen_core.errors import KeyReused
    from omen_replay.demo import demo_sheet

    text = (ROOT / "docs" / "live.md").read_text()
    block = re.findall(r"```python\n(.*?)```", text[text.index("**Retries and other writers.**"):], re.S)[0]
    scope: dict[str, Any] = {}
    exec(block, scope)
    store = MemoryStore()
    one = Fight.start(store, "duel", dice=ManualDice(), combatants=[demo_sheet("kael"), demo_sheet("vesh")])
    two = Fight.load(store, "duel", dice=ManualDice())
    initiative = {"command": "roll_initiative", "dice": [4, 5], "idempotency_key": "k1"}
    first = scope["give_once"](one, initiative)
    again = scope["give_once"](two, initiative)  # behind the store, and a retry: done, nothing appended
    assert [r.seq for r in again] == [r.seq for r in first] and store.version("duel") == first[-1].seq
    turn = one.state.turn
    ended = scope["give_once"](two, {"command": "end_turn", "who": turn, "idempotency_key": "k2"})
    assert ended and one.catch_up() == len(ended)
    with pytest.raises(KeyReused):
        scope["give_once"](one, {"command": "end_turn", "who": one.state.turn, "idempotency_key": "k1"})
    assert store.version("duel") == ended[-1].seq


def test_live_doc_stepping_through_from_python_runs(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/live.md's "Stepping through a fight" block runs as written (a tester embedding omen found step_through
    in no doc but a table): after the "From Python" block, where nobody was hurt, it prints nothing; on the demo's
    fight (Ember Ford, recorded) it prints one line for each HP loss the log keeps (an undone one not), at the
    resource_changed that records it, with the HP before and after as that event says."""
    import shutil

    from omen_core import Fight
    from omen_core.events import ResourceChanged
    from omen_core.store import JsonlStore
    from omen_core.walk import StoreSource, step_through

    text = (ROOT / "docs" / "live.md").read_text()
    first, _audit, steps = re.findall(r"```python\n(.*?)```", text[text.index("## From Python"):], re.S)[:3]
    scope: dict[str, Any] = {}
    exec(first, scope)
    capsys.readouterr()
    exec(steps, scope)
    assert capsys.readouterr().out == ""
    log = workdir / "ember.jsonl"
    shutil.copy(ROOT / "fixtures" / "ember-ford" / "fight.jsonl", log)
    fight = Fight.load(JsonlStore.single(log), "ember-ford")
    exec(steps, {**scope, "fight": fight})
    voided = {s.rec.seq for s in step_through(StoreSource(fight.store, "ember-ford")) if s.voided}
    lost = [(r.seq, r.event) for r in fight.events if isinstance(r.event, ResourceChanged)
            and r.event.resource == "hp" and r.event.after < r.event.before and r.seq not in voided]
    assert lost and capsys.readouterr().out.splitlines() == [
        f"#{seq} ResourceChanged: {e.who} {e.before} -> {e.after}" for seq, e in lost]


def test_events_doc_chain_check_runs(workdir: Path) -> None:
    """The standalone chain check in docs/events.md passes on a real log and fails on a changed one."""
    (block,) = python_blocks("docs/events.md")
    exec(block, {})
    log = workdir / "fight.jsonl"
    log.write_text(log.read_text().replace('"face":8', '"face":7', 1))
    with pytest.raises(AssertionError, match="changed"):
        exec(block, {})


def test_dice_doc_function_is_the_engines(workdir: Path) -> None:
    """The seeded_face printed in docs/dice.md computes exactly what omen_core.dice.seeded_face does."""
    (block,) = python_blocks("docs/dice.md")
    scope: dict[str, Any] = {}
    exec(block, scope)
    seed = bytes(range(32))
    for counter in range(1, 40):
        for sides in (2, 4, 6, 8, 10, 12, 20, 100):
            assert scope["seeded_face"](seed, "doc", counter, 1, sides) == seeded_face(seed, "doc", counter, 1, sides)


def test_machine_diagrams_are_generated_from_the_machines() -> None:
    """docs/machine.md holds exactly the Mermaid diagrams generated from the phase and lifecycle machines."""
    from omen_core.machine import PHASE_ORDER, mermaid

    doc = (ROOT / "docs" / "machine.md").read_text()
    assert re.findall(r"```mermaid\n(.*?)```", doc, re.S) == [mermaid(PHASE_ORDER), mermaid()]


def test_content_doc_sheet_loads_and_ruleset_example_runs(tmp_path: Path) -> None:
    """The sample sheet in docs/content.md is a valid sheet, and its Python example runs (its example conditions
    are played by tests/decide/test_conditions.py)."""
    from omen_core.content import load_sheet

    blocks = re.findall(r"```toml\n(.*?)```", (ROOT / "docs" / "content.md").read_text(), re.S)
    (toml,) = [b for b in blocks if not b.startswith("[conditions.")]
    path = tmp_path / "kael.toml"
    path.write_text(toml)
    sheet = load_sheet(path)
    assert sheet.wielded()[0].id == "longsword" and sheet.resistances == {"fire": 2}
    (block,) = python_blocks("docs/content.md")
    exec(block, {})


def test_content_doc_error_examples_are_real(tmp_path: Path) -> None:
    """The error messages quoted in docs/content.md are the ones the loader gives (the line of the field too)."""
    from omen_core.content import load_sheet
    from omen_core.errors import ContentError

    doc = (ROOT / "docs" / "content.md").read_text()
    (toml,) = [b for b in re.findall(r"```toml\n(.*?)```", doc, re.S) if not b.startswith("[conditions.")]
    quoted = re.findall(r"^kael\.toml:(\d+: .*)$", doc, re.M)
    edits = [('STR = { die = "d8", bonus = 2 }', 'STR = { die = "d8", bonsu = 2 }'),
             ('STR = { die = "d8", bonus = 2 }', 'STR = { die = "8", bonus = 2 }'),
             ('Perception = { attribute = "FCS", level = 2 }', 'Perception = { attribute = "FCS", level = -2 }'),
             ('Perception = { attribute = "FCS", level = 2 }', 'Perception = { attribute = "FOC", level = 2 }')]
    path = tmp_path / "kael.toml"
    for (old, new), message in zip(edits, quoted, strict=True):
        path.write_text(toml.replace(old, new))
        with pytest.raises(ContentError) as info:
            load_sheet(path)
        assert str(info.value) == f"{path}:{message}"


def test_readme_demo_excerpt_is_what_the_demo_says() -> None:
    """Every narrative line quoted in the README's demo excerpt is a line the demo's fight really narrates."""
    from importlib.resources import files

    from omen_replay.narrate import narrate
    from omen_replay.scenario import load_scenario, run_scenario

    scenario = load_scenario(Path(str(files("omen_replay") / "data" / "ember-ford" / "scenario.toml")))
    events = run_scenario(scenario, MemoryStore(), clock=lambda: 0).events
    told = {" ".join(f"#{line.seq} {line.text}".split()) for line in narrate(events)}
    readme = (ROOT / "README.md").read_text()
    excerpt = present(re.search(r"```text\n(#7 .*?)```", readme, re.S))[1]
    quoted = [" ".join(line.split()) for line in excerpt.splitlines() if line.startswith("#")]
    assert quoted and all(line in told for line in quoted), [q for q in quoted if q not in told]


def test_coverage_table_is_current_and_complete() -> None:
    """docs/coverage.md is what tests/coverage_table.py generates, and every clause has at least one test."""
    from tests.coverage_table import coverage, render

    assert (ROOT / "docs" / "coverage.md").read_text() == render(), "run: .venv/bin/python -m tests.coverage_table"
    missing = [clause for clause, (tests, _fixtures) in coverage().items() if not tests]
    assert missing == []


def test_event_schema_in_the_docs_is_omen_schema() -> None:
    """docs/schema/stored-event.schema.json is exactly what `omen schema` prints, every event type in it is
    described in docs/events.md, and every line of every golden fixture validates against it."""
    import json

    import jsonschema

    from omen_core.events import Event, event_schema

    published = json.loads((ROOT / "docs" / "schema" / "stored-event.schema.json").read_text())
    from omen_cli.schema import DIALECT

    assert published == json.loads(json.dumps({"$schema": DIALECT, **event_schema()})), \
        "regenerate: omen schema -o docs/schema/stored-event.schema.json"
    table = (ROOT / "docs" / "events.md").read_text()
    tags = [member.__struct_config__.tag for member in typing.get_args(Event)]
    assert len(tags) > 40 and [t for t in tags if f"`{t}`" not in table] == []
    validator = jsonschema.Draft202012Validator(published)
    for log in sorted((ROOT / "fixtures").glob("*/fight.jsonl")):
        for number, line in enumerate(log.read_text().splitlines(), 1):
            errors = list(validator.iter_errors(json.loads(line)))
            assert errors == [], f"{log.relative_to(ROOT)}:{number}: {errors[0].message}"


@pytest.mark.parametrize("kind", ["command", "options", "do", "error", "verify", "state", "step", "explanation",
                                  "fixtures", "simulation", "content", "sheet", "ruleset"])
def test_published_schemas_are_what_omen_schema_prints(kind: str) -> None:
    """docs/schema/{command,options,do,simulation,content,sheet,ruleset}.schema.json are exactly `omen schema --of KIND`
    (regenerate with `omen schema --of KIND -o docs/schema/KIND.schema.json`), and each is referenced from the
    docs."""
    import json

    from typer.testing import CliRunner

    from omen_cli import app

    result = CliRunner().invoke(app, ["schema", "--of", kind])
    assert result.exit_code == 0, result.output
    published = json.loads((ROOT / "docs" / "schema" / f"{kind}.schema.json").read_text())
    assert published == json.loads(result.stdout), \
        f"regenerate: omen schema --of {kind} -o docs/schema/{kind}.schema.json"
    docs = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    assert f"schema/{kind}.schema.json" in docs


def test_published_openapi_is_what_the_server_serves() -> None:
    """docs/schema/openapi.json is exactly `omen schema --of openapi` (regenerate with `omen schema --of openapi -o
    docs/schema/openapi.json`) and exactly what a served app answers at GET /schema/openapi.json, and
    docs/server.md points at it."""
    import json

    from litestar.testing import TestClient
    from typer.testing import CliRunner

    from omen_cli import app
    from omen_core import MemoryStore
    from omen_server import create_app

    result = CliRunner().invoke(app, ["schema", "--of", "openapi"])
    assert result.exit_code == 0, result.output
    published = json.loads((ROOT / "docs" / "schema" / "openapi.json").read_text())
    assert published == json.loads(result.stdout), "regenerate: omen schema --of openapi -o docs/schema/openapi.json"
    from litestar._openapi.schema_generation.examples import ExampleFactory

    ExampleFactory.seed_random(10)  # the examples Litestar makes up, as a server process's first document has them
    with TestClient(create_app(MemoryStore(), create_token="omen_create_test")) as client:
        served = client.get("/schema/openapi.json")
    assert served.status_code == 200 and served.json() == published
    assert "schema/openapi.json" in (ROOT / "docs" / "server.md").read_text()


def _bodies_table() -> dict[str, tuple[set[str], set[str]]]:
    """docs/server.md's "The bodies, field by field": by body, the names in backticks of its two field columns."""
    text = (ROOT / "docs" / "server.md").read_text()
    section = text.split("### The bodies, field by field", 1)[1].split("\n#", 1)[0]
    rows: dict[str, tuple[set[str], set[str]]] = {}
    for line in section.splitlines():
        cells = line.split(" | ")
        if len(cells) == 3 and line.startswith("| `"):
            body = re.findall(r"`(\w+)`", cells[0])[0]
            rows[body] = (set(re.findall(r"`(\w+)`", cells[1])), set(re.findall(r"`(\w+)`", cells[2])))
    return rows


def test_server_doc_says_which_fields_each_body_may_leave_out() -> None:
    """docs/server.md's table of bodies names every JSON body the server takes or answers (omen_server.openapi's
    WIRE_TYPES, and the CombatantView, SeenEvent and Head in them); for each, the fields it says are always there are
    the published OpenAPI document's `required` list, and every other field of the body is named among those it
    says may be left out (a player's /verify has no seeded_dice or findings, the GM's StagedView no given until a
    face is in, /options no staged when none is)."""
    import json

    from omen_server.openapi import WIRE_TYPES

    schemas = json.loads((ROOT / "docs" / "schema" / "openapi.json").read_text())["components"]["schemas"]
    rows = _bodies_table()
    wanted = {kind.__name__ for kind in WIRE_TYPES} | {"CombatantView", "SeenEvent", "Head"}
    assert wanted - set(rows) == set()
    for body, (always, optional) in rows.items():
        required = set(schemas[body].get("required", []))
        assert always == required, (body, always ^ required)
        assert set(schemas[body]["properties"]) - required <= optional, (body, optional)
    assert rows["VerifyView"][1] >= {"seeded_dice", "findings"} and rows["OptionsView"][1] == {"staged"}


def test_verify_doc_names_every_rule_a_finding_may_carry() -> None:
    """Each rule the audit names that is no clarification id or section of the rules (``chain``, ``content``,
    ``re-decision``...) is in docs/verify.md's table under "Reading a report" (``content`` was missing)."""
    section = (ROOT / "docs" / "verify.md").read_text().split("## Reading a report", 1)[1].split("\n## ", 1)[0]
    source = "".join((ROOT / path).read_text() for path in ("omen_replay/verify.py", "omen_core/walk.py"))
    named = set(re.findall(r'rule="([^"]+)"', source)) | set(re.findall(r'_compare\([\w.]+, "([^"]+)"', source))
    named |= set(re.findall(r'_RULES\.get\([^)]*, "([^"]+)"\)', source))
    own = {rule for rule in named if not re.match(r"(C\d+|§)", rule)}
    assert own >= {"chain", "content", "re-decision", "roll primitive"}
    assert sorted(rule for rule in own if f"`{rule}`" not in section) == []


def test_server_doc_lists_every_problem_type_the_server_answers() -> None:
    """Each problem type the server's code makes (``_problem(422, "refused", ...)``) is a row of docs/server.md's
    Errors table, with its status (``/problems/refused`` was missing: a tester's client met it and found no row)."""
    source = "".join(path.read_text() for path in (ROOT / "omen_server").glob("*.py"))
    made = set(re.findall(r'_problem\((\d{3}), "([a-z-]+)"', source))
    assert ("422", "refused") in made and len(made) >= 15
    rows = [line for line in (ROOT / "docs" / "server.md").read_text().splitlines() if line.startswith("| ")]
    missing = [(status, kind) for status, kind in sorted(made)
               if not any(row.startswith(f"| {status} |") and f"`/problems/{kind}`" in row for row in rows)]
    assert missing == []


def test_stores_doc_tells_the_tables_schema_version_from_the_events() -> None:
    """docs/stores.md gives the tables' schema version `omen db init` reports and the event schema version, each
    with its value, and describes every version of the tables (it said this omen writes version 3)."""
    from omen_core.events import SCHEMA_VERSION as EVENTS
    from omen_core.store.postgres import MIGRATIONS
    from omen_core.store.postgres import SCHEMA_VERSION as TABLES

    text = " ".join((ROOT / "docs" / "stores.md").read_text().split())
    assert f"this omen's is `omen_core.store.postgres.SCHEMA_VERSION` ({TABLES})" in text
    assert f"(\"omen's tables are at schema version {TABLES}\")" in text
    assert f"`omen_core.events.SCHEMA_VERSION`, also {EVENTS} today" in text
    described = text.split("The tables' versions:")[1].split("Opening a database")[0]
    assert sorted(MIGRATIONS) == list(range(1, TABLES + 1))
    assert all(f"{n} " in described for n in MIGRATIONS) and f"; {TABLES} adds" in described
