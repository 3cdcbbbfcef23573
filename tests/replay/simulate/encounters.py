"""Encounter files for the simulator's tests, written where a test asks: a mirror duel (50 % by symmetry), a
quick mirror duel, the Ember Ford's four, and an ambush that leaves Ash unarmed."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EMBER_FORD_2V2 = ROOT / "examples" / "encounters" / "ember-ford-2v2.toml"


#: Every fighter's attributes, an inline TOML table.
ATTRIBUTES = ('{ STR = { die = "d6", bonus = 1 }, AGI = { die = "d6" }, INT = { die = "d4" }, RES = { die = "d6" }, '
              'FCS = { die = "d6" } }')


def fighter(cid: str, side: str, hp: int, weapon_damage: int = 3, extra: str = "") -> str:
    """One combatant, inline: STR d6 + 1, AGI d6, RES d6, a sword (Parry Rating 1), Leathers."""
    return f'''
[[combatants]]
id = "{cid}"
name = "{cid.title()}"
side = "{side}"
hp = {hp}
will = 4
attributes = {ATTRIBUTES}
weapons = [{{ id = "sword", weapon_damage = {weapon_damage}, damage_type = "slashing", parry_rating = 1 }}]
armor = {{ name = "Leathers", rating = 1 }}
{extra}'''


def mirror_duel(directory: Path, hp: int = 12, name: str = "duel") -> Path:
    """Ash (north) against Bo (south), the same sheet on both sides: each wins half the fights, by symmetry."""
    path = directory / f"{name}.toml"
    path.write_text(f'[fight]\nid = "{name}"\ntitle = "A mirror duel"\n' + fighter("ash", "north", hp)
                    + fighter("bo", "south", hp))
    return path


def lopsided_duel(directory: Path, weapon_damage: int, name: str) -> Path:
    """The mirror duel with Ash's sword dealing ``weapon_damage``: what a designer compares."""
    path = directory / f"{name}.toml"
    path.write_text(f'[fight]\nid = "{name}"\ntitle = "A duel, Ash\'s sword {weapon_damage}"\n'
                    + fighter("ash", "north", 12, weapon_damage) + fighter("bo", "south", 12))
    return path


def surprised_unarmed(directory: Path) -> Path:
    """Bo ambushes Ash at a preset difficulty of 30 that Ash's Perception (d6) cannot beat by 5: Ash is Completely
    Surprised (C18) in every fight, so his set-up draw of his sword is dropped and he starts holding nothing."""
    path = directory / "surprised.toml"
    path.write_text('[fight]\nid = "surprised"\ntitle = "Ash caught unarmed"\n'
                    + fighter("ash", "north", 12, extra="wielding = []\n") + fighter("bo", "south", 12)
                    + '\n[[commands]]\ncommand = "begin_ambush"\nambushers = ["bo"]\ndefenders = ["ash"]\n'
                      'difficulty = 30\n\n[[commands]]\ncommand = "draw"\nwho = "ash"\nweapon = "sword"\n')
    return path


def wolves_and_troll(directory: Path) -> Path:
    """Three wolves (north) engaged with one troll (south) from the start, as a GM states positions (``engage``):
    each wolf's attack has the troll encircled three to one (C26)."""
    path = directory / "wolves.toml"
    wolves = "".join(fighter(w, "north", 8) for w in ("wolf1", "wolf2", "wolf3"))
    path.write_text('[fight]\nid = "wolves"\ntitle = "Three wolves and a troll"\n' + wolves
                    + fighter("troll", "south", 40, weapon_damage=6)
                    + '\n[[commands]]\ncommand = "engage"\nwho = "troll"\nothers = ["wolf1", "wolf2", "wolf3"]\n')
    return path


def strike_back(cost: str = "") -> str:
    """Strike Back: when its owner is hit, the attacker takes 3 crushing (a triggered ability, docs/abilities.md),
    at ``cost`` (a TOML inline table; free if empty)."""
    return ('[abilities.strike_back]\nname = "Strike Back"\nsummary = "When hit, the attacker takes 3 crushing."\n'
            'use = "trigger"\ntrigger = { moment = "attack.determined", owner = "target", outcome = "hit" }\n'
            + (f"cost = {cost}\n" if cost else "")
            + 'effects = [{ kind = "damage", to = "target", flat = 3, damage_type = "crushing" }]\n')


def mutual_knockout(directory: Path, hp: int = 2, cost: str = "", name: str = "mutual") -> Path:
    """Ash (north) and Bo (south) at 2 HP each, Ash with Strike Back (free, or at ``cost``): when Bo hits Ash,
    Strike Back fells Bo as Bo's blow fells Ash, both sides down in the same attack; when Ash hits first, Bo falls
    alone."""
    (directory / f"{name}-lib.toml").write_text(strike_back(cost))
    path = directory / f"{name}.toml"
    path.write_text(f'[fight]\nid = "{name}"\ntitle = "Both fall"\nabilities = ["{name}-lib.toml"]\n'
                    + fighter("ash", "north", hp, extra='abilities = ["strike_back"]\n') + fighter("bo", "south", hp))
    return path


#: Two abilities used on one's turn: Bolt (an Action and 1 Will: the target saves RES against INT or takes 1d8
#: cold) and Mend (an Action: the target heals 2d4).
BOLT_AND_MEND = '''[abilities.bolt]
name = "Bolt"
summary = "An Action and 1 Will: the target saves RES against INT or takes 1d8 cold."
use = "action"
cost = { will = 1 }
effects = [{ kind = "save", save = "RES", against = "INT", on_failure = [
    { kind = "damage", to = "target", dice = { count = 1, die = "d8" }, damage_type = "cold" }] }]

[abilities.mend]
name = "Mend"
summary = "An Action: the target heals 2d4."
use = "action"
effects = [{ kind = "heal", to = "target", dice = { count = 2, die = "d4" } }]
'''


def caster_duel(directory: Path) -> Path:
    """Ash (north, 12 HP, 4 Will) with Bolt and Mend against Bo (south, 12 HP), the mirror duel's sheets."""
    (directory / "caster-lib.toml").write_text(BOLT_AND_MEND)
    path = directory / "caster.toml"
    path.write_text('[fight]\nid = "caster"\ntitle = "A caster\'s duel"\nabilities = ["caster-lib.toml"]\n'
                    + fighter("ash", "north", 12, extra='abilities = ["bolt", "mend"]\n') + fighter("bo", "south", 12))
    return path


#: An ability used on one's turn that deals its damage directly, with no save: Smite (an Action and 1 Will: the
#: target takes 1d4 + 2 radiant).
SMITE = '''[abilities.smite]
name = "Smite"
summary = "An Action and 1 Will: the target takes 1d4 + 2 radiant."
use = "action"
cost = { will = 1 }
effects = [{ kind = "damage", to = "target", dice = { count = 1, die = "d4" }, flat = 2, damage_type = "radiant" }]
'''


def smiter_duel(directory: Path) -> Path:
    """Ash (north, 12 HP, 4 Will) with Smite against Bo (south, 12 HP), the mirror duel's sheets."""
    (directory / "smite-lib.toml").write_text(SMITE)
    path = directory / "smite.toml"
    path.write_text('[fight]\nid = "smite"\ntitle = "A smiter\'s duel"\nabilities = ["smite-lib.toml"]\n'
                    + fighter("ash", "north", 12, extra='abilities = ["smite"]\n') + fighter("bo", "south", 12))
    return path


def interrupted_last(directory: Path) -> Path:
    """Ash (north, 1 HP) and Cy (north, 12 HP) against Bo (south, 12 HP): whatever Bo's Interrupt hits on Ash's
    own turn (C24) drops him to 0 HP there, and his turn ends by itself (C36) while Cy still stands."""
    path = directory / "interrupted.toml"
    path.write_text('[fight]\nid = "interrupted"\ntitle = "Ash interrupted"\n' + fighter("ash", "north", 1)
                    + fighter("cy", "north", 12) + fighter("bo", "south", 12))
    return path


def three_sides(directory: Path) -> Path:
    """Ash (north), Bo (south) and Cy (west), one side each: the fight ends when the first side is down (C33), two
    sides left standing, so no side wins."""
    path = directory / "three.toml"
    path.write_text('[fight]\nid = "three"\ntitle = "Three sides"\n' + fighter("ash", "north", 6)
                    + fighter("bo", "south", 6) + fighter("cy", "west", 6))
    return path
