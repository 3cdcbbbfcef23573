"""The bundled demo: a short scripted encounter (a skill contest, a static check, a save, two attacks)."""

from __future__ import annotations

from importlib.resources import files

from omen_core import CheckSpec, Fight, Modifier, SeededDice
from omen_core.content import (
    CombatantSheet,
    DamageDice,
    DealDamage,
    SaveEffect,
    decode_content,
)
from omen_core.engine import Clock, system_clock
from omen_core.events import ActiveDefenseWindowOpened
from omen_core.store import EventStore

__all__ = ["DEMO_SEED", "CINDER_FLASK", "demo_sheet", "ember_ford_sheets", "run_demo"]

#: The demo's published seed, so that its output is the same on every machine.
#: A real table would use ``SeededDice.fresh()`` and reveal the seed afterwards.
DEMO_SEED = bytes.fromhex("0de0d1ce" * 8)

#: Vesh's alchemical fire: an AGI save against Vesh's INT; failing it burns for 1d6 + 1.
CINDER_FLASK = SaveEffect(name="cinder flask", save="AGI", against="INT",
                          on_failure=(DealDamage(dice=DamageDice(count=1, die="d6"), flat=1,
                                                 damage_type="fire"),))


def demo_sheet(name: str) -> CombatantSheet:
    """A sample sheet shipped with omen (``kael`` or ``vesh``)."""
    resource = files("omen_replay") / "data" / f"{name}.toml"
    return decode_content(resource.read_bytes(), CombatantSheet, source=str(resource), fmt="toml")


def ember_ford_sheets() -> dict[str, CombatantSheet]:
    """The four sheets shipped with omen for the Ember Ford (Kael, Brin, Vesh, Skarn), by id: the sheets the table
    page's set-up offers (``GET /sheets``) and the ember-ford scenario plays, wherever omen is installed."""
    folder = files("omen_replay") / "data" / "ember-ford" / "sheets"
    found: dict[str, CombatantSheet] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            sheet = decode_content(entry.read_bytes(), CombatantSheet, source=str(entry), fmt="toml")
            found[sheet.id] = sheet
    return found


def _answer_window(fight: Fight, defense: str) -> None:
    """The defender's scripted answer, if the attack opened a window and ``defense`` is allowed."""
    window = fight.waiting_for
    if isinstance(window, ActiveDefenseWindowOpened):
        fight.defend(window.defender, defense if defense in window.eligible else None)


def run_demo(store: EventStore, fight_id: str = "demo", seed: bytes = DEMO_SEED,
             clock: Clock = system_clock, finish: bool = True) -> Fight:
    """Play the demo into ``store``: who spots whom, a climb, a save against fire, a blow each way; then, if
    ``finish``, the GM ends it and reveals the seed (left out, the fight stands open after the last blow: it can
    still be undone, C42)."""
    fight = Fight.start(store, fight_id, dice=SeededDice(seed), clock=clock,
                        title="Ambush at the Ember Ford")
    fight.join(demo_sheet("kael"))
    fight.join(demo_sheet("vesh"))
    fight.contest(CheckSpec(who="vesh", skill="Stealth"), CheckSpec(who="kael", skill="Perception"))
    fight.static_check(CheckSpec(who="kael", skill="Athletics",
                                 modifiers=(Modifier(source="slick river stones", value=-1),)),
                       difficulty=8)
    fight.call_save("vesh", "kael", CINDER_FLASK)
    fight.attack("vesh", "kael", weapon="knife")
    _answer_window(fight, "block")
    fight.attack("kael", "vesh", weapon="longsword", high_ground=True)
    _answer_window(fight, "dodge")
    if not finish:
        return fight
    fight.end_fight("gm", note="the demo ends here")
    fight.reveal_seed()  # at the end of the fight, as C42 has it: no fresh seed is needed
    return fight
