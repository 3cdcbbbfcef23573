"""An encounter to simulate: a scenario file's set-up (its fight, combatants and set-up commands), no script.

The file is a scenario (docs/scenarios.md) whose ``[[commands]]``, if any, only set the fight up: positions
(``engage``), conditions, drawing gear, an ambush with the time waited (its dice rolled per fight) and the
initiative roll (with its modifiers). Left out, ``roll_initiative`` comes last by itself. Every fight's dice are
seeded from the run's seed (``omen simulate --seed``), so the file leaves ``dice`` out (or says ``"seeded"``), gives
no ``seed`` and no faces. Anything else is an error naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
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
from omen_core.locate import Lines

from ..scenario import ScenarioError, load_scenario

__all__ = ["Encounter", "SETUP_COMMANDS", "load_encounter"]

#: The commands an encounter may set a fight up with.
SETUP_COMMANDS: tuple[type, ...] = (Engage, ApplyConditionCommand, ClearConditionCommand, Draw, BeginAmbush,
                                    RollInitiative)


class Encounter(msgspec.Struct, frozen=True, kw_only=True):
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
        raise ScenarioError(source, "$.combatants", "an encounter needs combatants on at least two sides",
                            locate("$.combatants") or locate("$.fight"))
    setup: list[Command] = []
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
    if not setup or not isinstance(setup[-1], RollInitiative):
        setup.append(RollInitiative())
    made = Encounter(source=source, digest="", id=scenario.settings.id, title=scenario.settings.title,
                     ruleset=scenario.ruleset, combatants=scenario.combatants, setup=tuple(setup))
    return msgspec.structs.replace(made, digest=digest_of(made))


#: Sets (a weapon's properties) and dicts in sorted order: the same digest in every process, whatever its hash seed.
_DIGESTED = msgspec.json.Encoder(order="deterministic")


def digest_of(encounter: Encounter) -> str:
    """The SHA-256 of what an encounter plays (its ruleset, combatants and set-up, not where it was read from), the
    same in every process."""
    body = _DIGESTED.encode([encounter.id, encounter.title, encounter.ruleset, encounter.combatants,
                             encounter.setup])
    return hashlib.sha256(body).hexdigest()
