"""The bundled demo: a short scripted contest (a skill contest, a static check, a save) with seeded dice."""

from __future__ import annotations

from importlib.resources import files

from omen_core import CheckSpec, Fight, Modifier, SeededDice
from omen_core.content import CombatantSheet, decode_content
from omen_core.engine import Clock, system_clock
from omen_core.store import EventStore

__all__ = ["DEMO_SEED", "demo_sheet", "run_demo"]

#: The demo's published seed, so that its output is the same on every machine.
#: A real table would use ``SeededDice.fresh()`` and reveal the seed afterwards.
DEMO_SEED = bytes.fromhex("0de0d1ce" * 8)


def demo_sheet(name: str) -> CombatantSheet:
    """A sample sheet shipped with omen (``kael`` or ``vesh``)."""
    resource = files("omen_replay") / "data" / f"{name}.toml"
    return decode_content(resource.read_bytes(), CombatantSheet, source=str(resource), fmt="toml")


def run_demo(store: EventStore, fight_id: str = "demo", seed: bytes = DEMO_SEED,
             clock: Clock = system_clock) -> Fight:
    """Play the demo into ``store``: who spots whom, a climb, a save against fire; then reveal the seed."""
    fight = Fight.start(store, fight_id, dice=SeededDice(seed), clock=clock,
                        title="Ambush at the Ember Ford")
    fight.join(demo_sheet("kael"))
    fight.join(demo_sheet("vesh"))
    fight.contest(CheckSpec(who="vesh", skill="Stealth"), CheckSpec(who="kael", skill="Perception"))
    fight.static_check(CheckSpec(who="kael", skill="Athletics",
                                 modifiers=(Modifier(source="slick river stones", value=-1),)),
                       difficulty=8)
    fight.save("Vesh's cinder flask", saver=CheckSpec(who="kael", attribute="AGI"),
               opposing=CheckSpec(who="vesh", attribute="INT"))
    fight.reveal_seed()
    return fight
