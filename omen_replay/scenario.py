"""Scenario files: a fight's settings, its combatants and a script of commands, run against any store.

A scenario is TOML (see docs/scenarios.md)::

    [fight]
    id = "ember-ford"
    dice = "scripted"            # or "manual" (physical dice, faces typed in), or "seeded", with seed = "<hex>"

    [[combatants]]
    sheet = "sheets/kael.toml"   # a path, relative to the scenario, or the sheet's fields inline

    [[commands]]
    command = "declare_attack"
    attacker = "vesh"
    target = "kael"
    dice = [6, 3, 2]             # scripted faces, consumed by this command in the order of C29

Every error names the file, the line and the field (``$.commands[3].defense``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from omen_core import Fight, ScriptedDice, SeededDice
from omen_core.commands import Join
from omen_core.content import (
    SHIPPED_ABILITIES,
    AbilityLibrary,
    CombatantSheet,
    Ruleset,
    decode_content,
    load_library,
    load_ruleset,
    load_sheet,
    non_finite,
    read_content,
    with_abilities,
)
from omen_core.decide import Command, RevealSeed
from omen_core.dice import DiceSource, FacesNeeded, ManualDice, RollRequest
from omen_core.errors import (
    BadInput,
    ContentError,
    InvalidCommand,
    InvalidDieFace,
    InvalidFightId,
    OmenError,
    RuleViolation,
    StoreError,
)
from omen_core.events import Salts, StoredEvent
from omen_core.extensions import BY_ID, EXTENSIONS
from omen_core.locate import Lines, error_line
from omen_core.store import EventStore
from omen_core.store.base import FIGHT_ID, FIGHT_ID_WORDS

__all__ = ["FightSettings", "ScriptStep", "Scenario", "ScenarioError", "load_scenario", "run_scenario",
           "reveal_at_end"]


class ScenarioError(BadInput):
    """A scenario that cannot be loaded or run: file, line, field and what went wrong."""

    def __init__(self, source: str, path: str, reason: str, line: int | None = None):
        self.source, self.path, self.reason, self.line = source, path, reason, line
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {reason} (at {path})")


class FightSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The ``[fight]`` table: id, title, dice source (scripted; manual, for physical dice typed in; or seeded
    with a hex seed, and ``next_seeds``: the fresh seeds, in order, that a reveal in a fight that goes on commits
    to, C42; random if left out), ruleset file, and ability library files (``abilities``: the table's own
    abilities, which the sheets list by id; docs/abilities.md)."""

    id: str
    title: str = ""
    dice: Literal["scripted", "manual", "seeded"] = "scripted"
    seed: str | None = None
    next_seeds: tuple[str, ...] = ()
    ruleset: str | None = None
    abilities: tuple[str, ...] = ()


ScriptCommand = Command


class ScriptStep(msgspec.Struct, frozen=True, kw_only=True):
    """One scripted command (with the faces it rolls, if it carries them) and where it was written."""

    command: ScriptCommand
    index: int
    line: int | None


class Scenario(msgspec.Struct, frozen=True, kw_only=True):
    """A loaded scenario, ready to run. ``origins``: where each combatant's sheet is written, a sheet file
    (its path) or the scenario itself (empty), so that a sheet the rules refuse is named where it is;
    ``libraries``: for each combatant, for each ability its sheet lists, the library file that writes it out
    (empty: the sheet writes it, or it is shipped), so that an ability the rules refuse is named there."""

    source: str
    settings: FightSettings
    ruleset: Ruleset
    combatants: tuple[CombatantSheet, ...]
    steps: tuple[ScriptStep, ...]
    origins: tuple[str, ...] = ()
    libraries: tuple[tuple[str, ...], ...] = ()


def load_scenario(path: str | Path, *, seeded_elsewhere: bool = False) -> Scenario:
    """Read and validate a scenario file; sheets given by path are read relative to it. ``seeded_elsewhere``: its
    seeded dice take their seed from elsewhere (an encounter's, from the run's ``--seed``), so it gives none."""
    p = Path(path)
    try:
        text = read_content(p)
    except ContentError as exc:
        raise ScenarioError(exc.source, exc.path, exc.reason, exc.line) from None
    try:
        raw = msgspec.toml.decode(text)
    except msgspec.DecodeError as exc:
        raise ScenarioError(str(p), "$", f"not valid TOML: {exc}", error_line(str(exc), text)) from None
    except RecursionError:
        raise ScenarioError(str(p), "$", "not valid TOML: nested too deeply", 1) from None
    locate = Lines(text, "toml")
    try:
        odd = non_finite(raw)
    except RecursionError:
        raise ScenarioError(str(p), "$", "nested too deeply", 1) from None
    if odd is not None:  # TOML's inf and nan: no number a log can hold (its lines are JSON)
        raise ScenarioError(str(p), odd[0], f"{odd[1]} is not a number a fight can use (write a finite number)",
                            locate(odd[0]))
    unknown = set(raw) - {"fight", "combatants", "commands"}
    if unknown:
        key = sorted(unknown)[0]
        raise ScenarioError(str(p), f"$.{key}", f"unknown table {key!r} (expected fight, combatants, commands)",
                            locate(f"$.{key}"))
    if "fight" not in raw:
        raise ScenarioError(str(p), "$.fight", "no [fight] table: a scenario starts with one (its id at least; "
                                               "docs/scenarios.md)", 1)
    settings = _convert(raw.get("fight"), FightSettings, str(p), "$.fight", locate)
    _check_settings(settings, str(p), locate, seeded_elsewhere)
    ruleset = _ruleset(settings, p, locate)
    entries = _array(raw, "combatants", p, locate)
    libraries = _libraries(settings, p, locate)
    listed = tuple(_combatant(entry, i, p, locate) for i, entry in enumerate(entries))
    combatants = tuple(with_abilities(sheet, *(lib for _, lib in libraries)) for sheet in listed)
    written_in = tuple(tuple(next((path for path, lib in libraries if path and lib.get(a) is not None), "")
                             if isinstance(a, str) else "" for a in sheet.abilities) for sheet in listed)
    origins = tuple(str(p.parent / str(e["sheet"])) if isinstance(e, dict) and set(e) == {"sheet"} else ""
                    for e in entries)
    for index, sheet in enumerate(combatants):
        _check_listed(sheet, origins[index] or str(p), "$" if origins[index] else f"$.combatants[{index}]",
                      libraries, locate if not origins[index] else None)
    steps = tuple(_step(entry, i, str(p), locate) for i, entry in enumerate(_array(raw, "commands", p, locate)))
    scenario = Scenario(source=str(p), settings=settings, ruleset=ruleset, combatants=combatants, steps=steps,
                        origins=origins, libraries=written_in)
    for index, sheet in enumerate(combatants):  # an id twice, said as the join would, before any command naming one
        if any(other.id == sheet.id for other in combatants[:index]):  # (an engage naming another id was refused
            twice = RuleViolation("setup", f"a combatant with id {sheet.id!r} has already joined", field="$.id")
            twice.sheet_index = index                                  # first, "joined: a, a": a tester)
            raise _refused_sheet(scenario, twice)
    _check_named(steps, [sheet.id for sheet in combatants], str(p), locate)
    return scenario


def _check_listed(sheet: CombatantSheet, source: str, where: str, libraries: tuple[tuple[str, AbilityLibrary], ...],
                  locate: Lines | None) -> None:
    """Each ability a sheet lists by id is in one of the scenario's libraries or shipped (C37): one that is in
    none is named where the sheet lists it, with the ids it might have meant and where each set of ids comes from
    (the engine, which knows no library, could only list the shipped ones)."""
    for i, entry in enumerate(sheet.abilities):
        if not isinstance(entry, str) or entry in BY_ID:
            continue
        path = f"{where}.abilities[{i}]" if where != "$" else f"$.abilities[{i}]"
        own = [ability_id for file, library in libraries if file for ability_id in library.abilities]
        shipped = [*(e.id for e in EXTENSIONS if e.listed), *SHIPPED_ABILITIES.abilities]
        near = difflib.get_close_matches(entry, [*own, *shipped], n=3, cutoff=0.75)
        files = [Path(file).name for file, _library in libraries if file]
        mean = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
        theirs = (f"the ids of {', '.join(files)}: {', '.join(own) or 'none'}; " if files
                  else "the scenario lists no ability library (its [fight] abilities); ")
        reason = (f"[C37] {sheet.id}'s abilities list {entry!r}, which no library of the scenario defines and omen "
                  f"does not ship{mean} ({theirs}shipped: {', '.join(shipped)}; docs/abilities.md)")
        fmt: Literal["toml", "json"] = "toml" if locate is not None or source.endswith(".toml") else "json"
        raise ScenarioError(source, path, reason, locate(path) if locate is not None else _line(source, path, fmt))


def _read_as(exc: ContentError, kind: str, scenario: Path, line: int | None) -> str:
    """A problem in a file the scenario names; where the file's own top-level table is what is wrong (a scenario
    listed as its own library: its [fight] is an unknown field there), saying what it was read as and where the
    scenario names it."""
    if not _TOP_LEVEL.fullmatch(exc.path):
        return exc.reason
    return f"{exc.reason} (read as {kind}, as {scenario.name}:{line or 1} names it)"


_TOP_LEVEL = re.compile(r"\$\.[^.\[]+")


def _unread(exc: ContentError) -> str:
    """A file the scenario names that cannot be read, said with the path it was looked for at (the scenario's
    field names it as written, relative to the scenario)."""
    return exc.reason.replace("cannot read the file", f"cannot read {exc.source!r}", 1)


def _array(raw: dict[str, Any], key: str, scenario: Path, locate: Lines) -> list[Any]:
    """The ``[[combatants]]`` or ``[[commands]]`` array of tables (none if left out)."""
    found = raw.get(key, [])
    if not isinstance(found, list):
        raise ScenarioError(str(scenario), f"$.{key}", f"{key} must be an array of tables ([[{key}]])",
                            locate(f"$.{key}"))
    return found


def _check_settings(settings: FightSettings, source: str, locate: Lines, seeded_elsewhere: bool = False) -> None:
    if not FIGHT_ID.match(settings.id):  # the store would refuse it, naming no place
        raise ScenarioError(source, "$.fight.id", f"fight id {settings.id!r}: a fight id is {FIGHT_ID_WORDS}",
                            locate("$.fight.id") or locate("$.fight"))
    if settings.dice == "seeded" and not (seeded_elsewhere and settings.seed is None):
        try:
            seed = bytes.fromhex(settings.seed or "")
        except ValueError:
            seed = b""
        if len(seed) < 16:
            raise ScenarioError(source, "$.fight.seed", "a seeded fight needs seed = at least 16 bytes of hex",
                                locate("$.fight.seed") or locate("$.fight"))
    elif settings.seed is not None and not seeded_elsewhere:  # an encounter's: its own words (load_encounter)
        raise ScenarioError(source, "$.fight.seed", "a seed is only for dice = \"seeded\"", locate("$.fight.seed"))
    spent = {bytes.fromhex(settings.seed): "the fight's seed"} if settings.seed is not None else {}
    for n, text in enumerate(settings.next_seeds):
        try:
            following = bytes.fromhex(text)
        except ValueError:
            following = b""
        where = f"$.fight.next_seeds[{n}]"
        if settings.dice != "seeded" or len(following) < 16:
            raise ScenarioError(source, where, "next_seeds are for dice = \"seeded\": each at least 16 bytes of hex "
                                "(C42)", locate(where) or locate("$.fight.next_seeds"))
        if following in spent:  # revealed before this one is committed to: spent, its dice predictable (C42)
            raise ScenarioError(source, where, f"next_seeds[{n}] is {spent[following]}, revealed before the fight "
                                "commits to this one: a revealed seed is spent (C42), and dice drawn under it again "
                                "would be predictable by anyone holding the log; give a fresh seed",
                                locate(where) or locate("$.fight.next_seeds"))
        spent[following] = f"next_seeds[{n}]"


def _ruleset(settings: FightSettings, scenario: Path, locate: Lines) -> Ruleset:
    if settings.ruleset is None:
        return load_ruleset()
    try:
        return load_ruleset(scenario.parent / settings.ruleset)
    except ContentError as exc:
        if exc.path == "$" and "cannot read" in exc.reason:
            raise ScenarioError(str(scenario), "$.fight.ruleset", _unread(exc), locate("$.fight.ruleset")) from None
        raise ScenarioError(exc.source, exc.path, _read_as(exc, "a ruleset", scenario,
                                                           locate("$.fight.ruleset")), exc.line) from None


def _libraries(settings: FightSettings, scenario: Path, locate: Lines) -> tuple[tuple[str, AbilityLibrary], ...]:
    """The scenario's ability library files (each with its path), read relative to it, then the shipped abilities
    (no path; C37). An id is defined once: a library may not take a shipped ability's id, nor one another library
    has, and a library is listed once. The names an ability uses are checked against the ruleset when a sheet
    lists it (at the join): a library may serve tables whose rulesets differ, so what no sheet lists is not
    (a ruling, docs/rulings.md)."""
    found: list[tuple[str, AbilityLibrary]] = []
    defined: dict[str, str] = {}
    for n, name in enumerate(settings.abilities):
        where = f"$.fight.abilities[{n}]"
        path = scenario.parent / name
        if any(Path(known) == path for known, _library in found):
            raise ScenarioError(str(scenario), where, f"{name!r} is listed twice in abilities: list a library once",
                                locate(where) or locate("$.fight"))
        try:
            library = load_library(path)
        except ContentError as exc:
            if exc.path == "$" and "cannot read" in exc.reason:
                raise ScenarioError(str(scenario), where, _unread(exc), locate(where) or locate("$.fight")) from None
            raise ScenarioError(exc.source, exc.path, _read_as(exc, "an ability library", scenario,
                                                               locate(where) or locate("$.fight")), exc.line) from None
        lines = Lines(read_content(path), "toml" if path.suffix == ".toml" else "json")
        for ability_id in library.abilities:
            clash = "the shipped abilities" if SHIPPED_ABILITIES.get(ability_id) is not None or ability_id in BY_ID \
                else defined.get(ability_id)
            if clash:
                raise ScenarioError(str(path), f"$.abilities.{ability_id}",
                                    f"[C37] ability {ability_id!r} is already defined by {clash}: give it another "
                                    "id",
                                    lines(f"$.abilities.{ability_id}"))
            defined[ability_id] = str(path)
        found.append((str(path), library))
    return (*found, ("", SHIPPED_ABILITIES))


def _combatant(entry: Any, index: int, scenario: Path, locate: Lines) -> CombatantSheet:
    where = f"$.combatants[{index}]"
    if isinstance(entry, dict) and "sheet" in entry:
        _check_sheet_path(entry, where, scenario, locate)
    if isinstance(entry, dict) and set(entry) == {"sheet"}:
        try:
            return load_sheet(scenario.parent / str(entry["sheet"]))
        except ContentError as exc:
            if exc.path == "$" and "cannot read" in exc.reason:
                raise ScenarioError(str(scenario), f"{where}.sheet", _unread(exc), locate(f"{where}.sheet")) from None
            raise ScenarioError(exc.source, exc.path, _read_as(exc, "a sheet", scenario, locate(f"{where}.sheet")),
                                exc.line) from None
    sheet: CombatantSheet = _convert(entry, CombatantSheet, str(scenario), where, locate)
    return sheet


_TOML_KINDS = {dict: "a table", list: "an array", bool: "a boolean", int: "an integer", float: "a number"}


def _check_sheet_path(entry: dict[str, Any], where: str, scenario: Path, locate: Lines) -> None:
    """A combatant's ``sheet`` is a sheet file's path, alone in its ``[[combatants]]`` table; an inline sheet has
    no ``sheet`` key, its fields sitting directly in the table (docs/scenarios.md). A table under ``sheet``
    (``[combatants.sheet]``) or a ``sheet`` beside a sheet's fields is refused here, at its line, rather than read
    as a path or as a sheet with an unknown field."""
    value = entry["sheet"]
    if not isinstance(value, str):
        kind = next((name for t, name in _TOML_KINDS.items() if isinstance(value, t)), type(value).__name__)
        raise ScenarioError(str(scenario), f"{where}.sheet",
                            f"`sheet` must be a path string (a sheet file, relative to the scenario), not {kind}: "
                            "an inline sheet's fields go directly in the [[combatants]] table, with no `sheet` key "
                            "(docs/scenarios.md)", locate(f"{where}.sheet") or locate(where))
    others = sorted(set(entry) - {"sheet"})
    if others:
        raise ScenarioError(str(scenario), f"{where}.{others[0]}",
                            f"a combatant is a sheet by path (`sheet = \"...\"` alone in its [[combatants]] table) "
                            f"or a sheet's fields inline (no `sheet` key), not both: {', '.join(others)} beside "
                            f"sheet = {value!r} (docs/scenarios.md)", locate(f"{where}.{others[0]}") or locate(where))


def _step(entry: Any, index: int, source: str, locate: Lines) -> ScriptStep:
    where = f"$.commands[{index}]"
    if not isinstance(entry, dict) or "command" not in entry:
        raise ScenarioError(source, where, "each command needs a `command = \"...\"` name", locate(where))
    command = _convert(entry, ScriptCommand, source, where, locate)
    return ScriptStep(command=command, index=index, line=locate(where))


#: The fields of a command that name combatants: each a text, or a list of them; and those holding a check, whose
#: ``who`` names one (a static check's ``check``, a contest's ``initiator`` and ``defender``).
_NAMING = frozenset({"attacker", "target", "defender", "who", "caller", "saver", "by", "of", "leaves", "others",
                     "ambushers", "defenders", "order", "group"})
_CHECKS = frozenset({"check", "initiator", "defender"})


def _named(command: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every combatant id a command names, with its path: the texts in its naming fields, the ``who`` of a check it
    holds, the keys of an initiative's ``modifiers`` (not what its effects or branches say: ``of = "actor"``)."""
    for name in command.__struct_fields__:
        value = getattr(command, name)
        who = getattr(value, "who", None) if isinstance(value, msgspec.Struct) else None
        if name in _CHECKS and isinstance(who, str):
            yield who, f"{path}.{name}.who"
        elif name in _NAMING and isinstance(value, str):
            yield value, f"{path}.{name}"
        elif name in _NAMING and isinstance(value, (list, tuple)):
            yield from ((w, f"{path}.{name}[{i}]") for i, w in enumerate(value) if isinstance(w, str))
        elif name == "modifiers" and isinstance(value, dict):
            yield from ((w, f"{path}.{name}.{w}") for w in value if isinstance(w, str))


def _check_named(steps: tuple[ScriptStep, ...], joined: list[str], source: str, locate: Lines) -> None:
    """Every combatant a command names has joined by then (the scenario's combatants, and each ``join`` before it):
    a misspelt id is refused with the file, its line, the field and a close id, before anything is written (it was
    refused mid-run, exit 3, the commands before it written: found by a tester)."""
    known = list(joined)
    for step in steps:
        command = step.command
        for who, path in _named(command, f"$.commands[{step.index}]"):
            if who not in known:
                close = difflib.get_close_matches(who, known, n=1) or [  # a short id one letter off: "bp", "bo"
                    k for k in known
                    if len(k) == len(who) and sum(a != b for a, b in zip(k, who, strict=True)) == 1][:1]
                raise ScenarioError(source, path, f"no combatant {who!r} has joined by this command (joined: "
                                    f"{', '.join(known) or 'none'})" + (f"; did you mean {close[0]!r}?" if close
                                                                       else ""), locate(path) or step.line)
        if isinstance(command, Join):
            known.append(command.sheet.id)


def _convert(raw: Any, kind: Any, source: str, where: str, locate: Lines) -> Any:
    """Validate ``raw`` as ``kind``; errors name the file, the line and the full field path."""
    try:
        return decode_content(msgspec.json.encode(raw), kind, source=source)
    except RecursionError:
        raise ScenarioError(source, where, "nested too deeply", locate(where)) from None
    except ContentError as exc:
        path = where + exc.path[1:]
        reason = exc.reason.replace("Invalid value 'None'", "Missing table")
        raise ScenarioError(source, path, reason, locate(path)) from None


class _ScriptFaces(ScriptedDice):
    """A scripted fight's dice, when every command carries its own: one that does not, and rolls, is told which
    faces to give (:class:`~omen_core.dice.FacesNeeded`)."""

    def __init__(self) -> None:
        super().__init__([])

    def faces(self, request: RollRequest) -> list[int]:
        raise FacesNeeded([request], 0)


def reveal_at_end(fight: Fight) -> list[StoredEvent]:
    """Reveal a seeded fight's seed if the fight has ended with it unrevealed: "a seed is revealed at the end of a
    fight unless the GM chooses otherwise" (C42), for whoever plays a scenario with no GM at hand (``omen run``
    unless ``--keep-seed``, ``omen fixtures record`` and ``check``); the events appended (none if there is
    nothing to reveal)."""
    state = fight.state
    if state.ending is None or not isinstance(fight.dice, SeededDice) or state.seed_commitment is None \
            or state.revealed_seed is not None:
        return []
    return fight.execute(RevealSeed(seed=fight.dice.seed.hex()))


def run_scenario(scenario: Scenario, store: EventStore,
                 on_step: Callable[[ScriptStep, list[StoredEvent]], object] | None = None,
                 on_start: Callable[[list[StoredEvent]], object] | None = None,
                 clock: Callable[[], int] | None = None, snapshots: object = None,
                 salts: Salts | None = None) -> Fight:
    """Start the fight in ``store`` with its combatants (one atomic append: a sheet the rules refuse, and
    nothing is written) and run every command in order (``undo`` and ``redo`` among them).

    A command rolls the faces it carries (``dice``); in a seeded fight, one
    without them rolls the seeded dice. A command that fails stops the run with
    a :class:`ScenarioError` naming its line; everything before it stays in
    the store. ``clock`` and ``salts`` default to the live ones (the system
    clock, random salts).
    """
    s = scenario.settings
    dice: DiceSource = SeededDice(bytes.fromhex(s.seed or ""), [bytes.fromhex(n) for n in s.next_seeds]) \
        if s.dice == "seeded" \
        else ManualDice() if s.dice == "manual" else _ScriptFaces()
    kwargs: dict[str, Any] = {"clock": clock} if clock else {}
    if snapshots is not None:
        kwargs["snapshots"] = snapshots
    if salts is not None:
        kwargs["salts"] = salts
    try:
        fight = Fight.start(store, s.id, dice=dice, ruleset=scenario.ruleset, title=s.title,
                            combatants=scenario.combatants, **kwargs)
    except RuleViolation as exc:
        raise _refused_sheet(scenario, exc) from exc
    except StoreError as exc:
        if not isinstance(exc, InvalidFightId):
            raise  # the log's place (omen run --log) cannot be written: that names itself, not the scenario
        raise ScenarioError(scenario.source, "$.fight.id", str(exc), _line(scenario.source, "$.fight.id")) from exc
    except OmenError as exc:
        raise ScenarioError(scenario.source, "$.combatants", f"the fight's set-up is refused: {exc}",
                            _line(scenario.source, "$.combatants")) from exc
    if on_start is not None:
        on_start(fight.events)
    for step in scenario.steps:
        command = step.command
        if isinstance(command, RevealSeed) and not command.seed and isinstance(fight.dice, SeededDice):
            command = msgspec.structs.replace(command, seed=fight.dice.seed.hex())  # the seed rolled from now
        try:
            stored = fight.execute(command)
        except InvalidCommand as exc:  # its own name and path said once: the command's, within the scenario's
            where = f"$.commands[{step.index}]" + exc.path.removeprefix("$")
            raise ScenarioError(scenario.source, where, f"{exc.command}: {exc.reason}", step.line) from exc
        except OmenError as exc:  # a rule naming one of the command's fields (C4's weapon), a face its die cannot
            # show: at that field, on its line
            name = type(step.command).__struct_config__.tag
            where = f"$.commands[{step.index}]"
            field = exc.field_under(where) if isinstance(exc, RuleViolation) else \
                f"{where}.dice[{exc.index}]" if isinstance(exc, InvalidDieFace) and exc.index is not None else None
            fmt: Literal["toml", "json"] = "json" if scenario.source.endswith(".json") else "toml"
            line = _line(scenario.source, field, fmt) if field is not None else step.line
            said = InvalidDieFace(exc.face, exc.sides, exc.roll) if isinstance(exc, InvalidDieFace) else exc  # its
            # path is the scenario's, said once (the engine's "$.dice[0]" beside it named no field of the file)
            raise ScenarioError(scenario.source, field or where, f"{name}: {said}", line) from exc
        if on_step is not None:
            on_step(step, stored)
    return fight


def _refused_sheet(scenario: Scenario, exc: RuleViolation) -> ScenarioError:
    """The set-up refused by the rules, named where the refused sheet is written: the combatant the rules refused to
    join (the error's ``sheet_index``), in its sheet file or in the scenario, at the field the rule names, with its
    line; the scenario's combatants as a whole if no single one is to blame. A sheet file listed a second time is
    named at the scenario's second entry (``$.combatants[4].id``): the file is both entries' (a tester)."""
    index = exc.sheet_index
    if index is None or not 0 <= index < len(scenario.combatants):
        return ScenarioError(scenario.source, "$.combatants", f"the fight's set-up is refused: {exc}",
                             _line(scenario.source, "$.combatants"))
    field = exc.field_under("$") or "$"
    origin = scenario.origins[index] if index < len(scenario.origins) else ""
    if origin and origin in scenario.origins[:index]:  # one sheet file listed twice: the scenario's second entry
        origin = ""                                        # is the fault, not the file
    source, path = (origin, field) if origin else (scenario.source, f"$.combatants[{index}]{field[1:]}")
    library = _in_library(scenario, index, scenario.combatants[index], field)
    if library is not None:
        source, path = library
    fmt: Literal["toml", "json"] = "json" if source != scenario.source and not source.endswith(".toml") else "toml"
    return ScenarioError(source, path, f"the rules refuse this combatant: {exc}", _line(source, path, fmt))


_ABILITY_FIELD = re.compile(r"\$\.abilities\[(\d+)\](.*)", re.S)


def _in_library(scenario: Scenario, index: int, sheet: CombatantSheet, field: str) -> tuple[str, str] | None:
    """Where a refused field of an ability a library file writes out is (the library, ``$.abilities.<id>...``), if
    ``field`` is one: the sheet only lists the ability by id."""
    found = _ABILITY_FIELD.fullmatch(field)
    written_in = scenario.libraries[index] if index < len(scenario.libraries) else ()
    if found is None or int(found[1]) >= len(written_in) or not written_in[int(found[1])]:
        return None
    rest = "" if found[2] == ".id" else found[2]  # a library's ability has no id field: its table's key is its id
    return written_in[int(found[1])], f"$.abilities.{sheet.ability_ids()[int(found[1])]}{rest}"


def _line(source: str, path: str, fmt: Literal["toml", "json"] = "toml") -> int:
    """The line of ``path`` in the file ``source`` (read again: an error path only)."""
    try:
        text = read_content(source)
    except ContentError:
        return 1
    return Lines(text, fmt)(path)
