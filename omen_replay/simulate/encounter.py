"""An encounter to simulate: a scenario file's set-up (its fight, combatants and set-up commands), no script.

The file is a scenario (docs/scenarios.md) whose ``[[commands]]``, if any, only set the fight up: positions
(``engage``), conditions, drawing gear, an ambush with the time waited (its dice rolled per fight) and the
initiative roll (with its modifiers). Left out, ``roll_initiative`` comes last by itself. Every fight's dice are
seeded from the run's seed (``omen simulate --seed``), so the file leaves ``dice`` out (or says ``"seeded"``), gives
no ``seed`` and no faces. Anything else is an error naming the file, the line and the field, and so is what the
rules refuse of its set-up whatever the dice: the set-up is played once when the file is read (:func:`_tried`),
before any fight.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import msgspec

from omen_core.commands import (
    ApplyConditionCommand,
    BeginAmbush,
    ClearConditionCommand,
    Command,
    Draw,
    Engage,
    RollInitiative,
)
from omen_core.content import CombatantSheet, Ruleset, read_content
from omen_core.errors import OmenError, RuleViolation
from omen_core.locate import Lines
from omen_core.store import MemoryStore

from ..scenario import Scenario, ScenarioError, ScriptStep, load_scenario, run_scenario

__all__ = ["Encounter", "SETUP_COMMANDS", "load_encounter", "is_surprised_draw"]

#: The commands an encounter may set a fight up with.
SETUP_COMMANDS: tuple[type, ...] = (Engage, ApplyConditionCommand, ClearConditionCommand, Draw, BeginAmbush,
                                    RollInitiative)


class Encounter(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An encounter as a run records it (so any fight of the run can be played again from the run's file alone):
    where it was read from, the digest of its content, its id and title, the ruleset, the combatants in the order
    they join and the set-up commands (``roll_initiative`` last)."""

    source: str
    digest: str
    id: str
    title: str = ""
    ruleset: Ruleset
    combatants: tuple[CombatantSheet, ...]
    setup: tuple[Command, ...]

    @property
    def sides(self) -> tuple[str, ...]:
        """The sides, in the order their first combatant joined."""
        return tuple(dict.fromkeys(s.side for s in self.combatants))


def _listed_twice(combatants: Sequence[CombatantSheet], source: str, locate: Lines) -> None:
    """A combatant whose id an earlier one has, refused in the words and at the field the set-up's own refusal
    (:func:`_tried`) uses, where the two-sides check would otherwise come first (found by a tester)."""
    seen: set[str] = set()
    for i, sheet in enumerate(combatants):
        if sheet.id in seen:
            where = f"$.combatants[{i}].id"
            raise ScenarioError(source, where, f"the rules refuse this combatant: [setup] a combatant with id "
                                               f"{sheet.id!r} has already joined", locate(where))
        seen.add(sheet.id)


def load_encounter(path: str | Path) -> Encounter:
    """Read an encounter file (a scenario's set-up); :class:`ScenarioError` names what is wrong and where."""
    scenario = load_scenario(path, seeded_elsewhere=True)
    source = scenario.source
    text = read_content(Path(path))
    raw, locate = msgspec.toml.decode(text), Lines(text, "toml")
    fight = raw.get("fight", {}) if isinstance(raw, dict) else {}
    if fight.get("dice", "seeded") != "seeded":
        raise ScenarioError(source, "$.fight.dice", "an encounter's dice are seeded from the run's --seed: leave "
                                                    "dice out or say \"seeded\"", locate("$.fight.dice"))
    if scenario.settings.seed is not None or scenario.settings.next_seeds:
        key = "seed" if scenario.settings.seed is not None else "next_seeds"
        raise ScenarioError(source, f"$.fight.{key}", f"an encounter gives no {key}: each fight's seed comes from "
                                                      "the run's --seed and the fight's index",
                            locate(f"$.fight.{key}"))
    if len({s.side for s in scenario.combatants}) < 2:
        _listed_twice(scenario.combatants, source, locate)  # one sheet twice is one side: the duplicate is the fault
        raise ScenarioError(source, "$.combatants", "an encounter needs combatants on at least two sides",
                            locate("$.combatants") or locate("$.fight"))
    setup: list[Command] = []
    steps: list[ScriptStep] = []
    for step in scenario.steps:
        where = f"$.commands[{step.index}]"
        tag = type(step.command).__struct_config__.tag
        if not isinstance(step.command, SETUP_COMMANDS):
            allowed = ", ".join(str(k.__struct_config__.tag) for k in SETUP_COMMANDS)  # type: ignore[attr-defined]
            raise ScenarioError(source, where, f"{tag}: an encounter's commands only set the fight up ({allowed}); "
                                               "the policies play the rest", step.line)
        if step.command.dice is not None:
            raise ScenarioError(source, f"{where}.dice", f"{tag}: an encounter's dice are seeded per fight: give no "
                                                         "faces", step.line)
        if setup and isinstance(setup[-1], RollInitiative):
            raise ScenarioError(source, where, f"{tag}: roll_initiative comes last in an encounter", step.line)
        setup.append(step.command)
        steps.append(step)
    if not setup or not isinstance(setup[-1], RollInitiative):
        setup.append(RollInitiative())
    _tried(scenario, steps, setup)
    made = Encounter(source=source, digest="", id=scenario.settings.id, title=scenario.settings.title,
                     ruleset=scenario.ruleset, combatants=scenario.combatants, setup=tuple(setup))
    return msgspec.structs.replace(made, digest=digest_of(made))


#: The seed of the dice the set-up is tried with when an encounter is read (any seed would do: what is refused
#: whatever the dice is refused with this one).
_TRIAL_SEED = "00" * 16


def is_surprised_draw(command: Command, exc: OmenError) -> bool:
    """A set-up ``draw`` refused only because its drawer is Completely Surprised (C18): the ambush's dice decide
    it, fight by fight, so the draw is left out of that fight, not refused as a mistake."""
    return isinstance(command, Draw) and isinstance(exc, RuleViolation) and exc.rule == "C18"


def _tried(scenario: Scenario, steps: list[ScriptStep], setup: list[Command]) -> None:
    """Set the fight up once, with seeded dice, so that what the rules refuse (a combatant's sheet, a duplicate id,
    a set-up command naming one who never joined) is said before any fight is played, where it is written: a
    sheet as the scenario loader names it (``omen run``'s words: its file, line and field), a command at its line
    and ``$.commands[i]``. A draw refused by C18 is not a mistake (:func:`is_surprised_draw`)."""
    trial = msgspec.structs.replace(scenario, steps=(), settings=msgspec.structs.replace(
        scenario.settings, dice="seeded", seed=_TRIAL_SEED, next_seeds=()))
    fight = run_scenario(trial, MemoryStore(), clock=lambda: 0)
    for i, command in enumerate(setup):
        try:
            fight.execute(command)
        except OmenError as exc:
            if is_surprised_draw(command, exc):
                continue
            tag = type(command).__struct_config__.tag
            step = steps[i] if i < len(steps) else None  # past the steps: the roll_initiative added
            raise ScenarioError(scenario.source, f"$.commands[{step.index}]" if step else "$.commands",
                                f"{tag}: {exc}" if step else f"{tag} (added last): {exc}",
                                step.line if step else None) from exc


#: Sets (a weapon's properties) and dicts in sorted order: the same digest in every process, whatever its hash seed.
_DIGESTED = msgspec.json.Encoder(order="deterministic")


def digest_of(encounter: Encounter) -> str:
    """The SHA-256 of what an encounter plays (its ruleset, combatants and set-up, not where it was read from), the
    same in every process."""
    body = _DIGESTED.encode([encounter.id, encounter.title, encounter.ruleset, encounter.combatants,
                             encounter.setup])
    return hashlib.sha256(body).hexdigest()
