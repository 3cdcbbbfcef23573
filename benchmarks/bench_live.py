"""Live play (issue #11): attack commands and whole fights through the public ``Fight`` API, against the bare rules
functions on the same attacks with the same seeded dice, in one process.

Two kinds of case, every one through ``omen_core.Fight`` on a memory store, a
JSON Lines store (``JsonlStore``, which fsyncs every append, as it always does)
and a SQLite store (``SqliteStore``: WAL, ``synchronous=FULL``, one transaction
per append), the files on the repository's disk (``benchmarks/.cache/``;
``--dir`` chooses another place):

- **a duel**: one live attack command cycle after another, each timed from
  the declaration (``fight.attack``) to the settled action, every window it
  opens answered on the way (``fight.waiting_for``, then ``fight.defend`` or
  ``fight.pass_reaction``). Between two attacks the attacker's turn ends
  (``fight.end_turn``: timed apart, not part of the cycle). Two duels:

  - *ranged* (the headline): Brin Hollowmere's bow against Orla, a raider
    with a crossbow (a sheet of this script). No one is within reach, so no
    Interrupt: the cycle is attack -> Active Defense window (when the attack
    beats the base defense, C8) -> ``defend`` -> settled;
  - *melee*: Kael Arden's longsword against Vesh's knife. After the first
    blow they are within reach, so every attack first opens an Interrupt
    window for the target, which passes (``pass_reaction``), then the Active
    Defense window: three commands a cycle.

  The Active Defense policy is fixed: attacks 0, 1 dodge, attacks 2, 3
  decline (``defend(..., None)``), and so on (each attacker sees both). The
  sheets are the Ember Ford's (``fixtures/ember-ford/sheets``) with
  10,000,000 HP so that nobody drops; ``--attacks`` cycles per run in memory
  (default 200), the first ``--file-attacks`` of them on the file stores
  (default 50: every command there is an fsync), one fight per run, the same
  fight id and seed every run.

- **2v2 fights to defeat**: the Ember Ford cast as written (Kael and Brin
  against Vesh and Skarn, their own HP and gear in hand), seeded dice, one
  fight after another from ``Fight.start`` (the sheets joined) and
  ``roll_initiative`` to ``fight_ended``: each turn the owner attacks the
  standing enemy with the fewest HP (Skarn with his rage dice), a combatant
  at 0 HP takes no turn (C36); every Interrupt window is passed, every Active
  Defense window answered with Block if allowed, else Parry, else Dodge.
  ``--fights`` fights per run in memory (default 20), each with its own seed
  and id, the same ones every run; the first ``--file-fights`` of them (default
  5) on the file stores. Timed from ``Fight.start`` to the fight's end, store
  creation and removal left out.

The **baseline** of each case, measured in the same run: the bare rules
functions (``omen_core.rules.attack``, ``omen_core.rules.mitigation``,
``omen_core.derive.active_attribute``) on the same attacks, drawing the same
dice the way the seeded dice source draws them (HMAC-SHA256 of the seed over
fight id, roll counter, die index, from the seed's HMAC pads hashed once per
seed: ``omen_core.dice.seeded_faces``, held to ``seeded_face``'s faces by a
test; issue #26 found the baseline drawing each die with a full HMAC, 1.3-1.5x
slower than the engine's draw): the hit roll (primary and FCS dice), the defender's RES
die, the Active Defense die when one was rolled, the rage dice on a hit; the
hit total, base and total defense, hit, crit, the damage terms and the
mitigation. No events, no state, no store: the inputs are the sheets, the
weapon, the roll counter of the attack's first roll and the answer given.
Before timing, every attack of the duels and of the 2v2 fights is decided
both ways and the attack total, defense total, hit, crit, raw and final
damage must be equal (the script stops otherwise): the two sides compute the
same outcome. A bare run goes over its attacks ``--bare-loops`` times
(default 10), so that it lasts about as long as a live run and a busy
machine slows both alike (a run of a few ms is either hit by another process or
not). For information, each case also has the bare path with the faces
given (looked up, drawn beforehand by the same primitive): what the rules
math costs without the HMAC.

Cases run round-robin, ``--repeat`` times after a warm-up round; the figures
are medians (see ``_common``). ``--profile`` adds a cProfile of the memory
ranged duel's attack cycles (the profiler is on only inside the cycles;
``--profile-attacks`` of them, default 1000).

    .venv/bin/python benchmarks/bench_live.py --profile
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import itertools
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import _common
import msgspec
from _common import ROOT, Case, fmt_s, run_interleaved, table
from genlog import CACHE, SHEETS, quiet_logging

from omen_core import Fight, MemoryStore, SeededDice
from omen_core.content import CombatantSheet, Weapon, decode_content, load_ruleset, load_sheet
from omen_core.derive import UNARMED_DAMAGE, active_attribute
from omen_core.dice import seeded_face, seeded_faces
from omen_core.events import (
    ActiveDefenseWindowOpened,
    DamageResolved,
    DiceRolled,
    HitDetermined,
    InitiativeTied,
    ReactionWindowOpened,
)
from omen_core.rules import attack as rules
from omen_core.rules.attack import ActiveDefense
from omen_core.rules.mitigation import armor_applies, mitigate
from omen_core.store import JsonlStore, SqliteStore

#: The goals of issue #11.
GOAL_RATIO = 20.0          # a live attack command cycle costs at most 20x the bare rules functions
GOAL_FIGHTS_PER_S = 200.0  # 2v2 fights to defeat per second, one core, in memory
BEFORE_RATIO = 270         # the figure before the work ("about 270x")

HUGE_HP = 10_000_000
RULESET = load_ruleset()
PHYSICAL = frozenset(RULESET.damage_types.physical)

ORLA = """
id = "orla"
name = "Orla Reedcutter"
side = "raiders"
hp = 10000000
will = 6

[attributes]
STR = { die = "d6", bonus = 0 }
AGI = { die = "d8", bonus = 1 }
INT = { die = "d4", bonus = 0 }
RES = { die = "d8", bonus = 1 }
FCS = { die = "d6", bonus = 1 }

[[weapons]]
id = "crossbow"
name = "Light crossbow"
weapon_damage = 4
damage_type = "piercing"
properties = ["ranged"]

[armor]
name = "Leathers"
rating = 1
"""


def sheet(who: str, **changes: Any) -> CombatantSheet:
    loaded = load_sheet(SHEETS / f"{who}.toml")
    return msgspec.structs.replace(loaded, **changes) if changes else loaded


# -- the bare rules path --------------------------------------------------------------------------------------------


class BareAttack(NamedTuple):
    """One attack as the bare path sees it: the dice's address, the sheets, the weapon and the answer given."""

    seed: bytes
    fight_id: str
    counter: int                      # the roll counter of the attack's hit roll (its first roll)
    attacker: CombatantSheet
    target: CombatantSheet
    weapon: Weapon | None
    defense: str | None               # the Active Defense rolled (None: declined, or no window)
    parry_with: Weapon | None         # the target's weapon in hand (for a Parry)
    rage: bool


class Outcome(NamedTuple):
    attack_total: int
    defense_total: int
    hit: bool
    crit: bool
    raw: int
    final: int


Face = Callable[[bytes, str, int, int, int], int]


def bare_attack(a: BareAttack, seeded_face: Face = seeded_face) -> Outcome:
    """The attack by the rules functions alone: the same HMAC dice, the hit total, defense, hit, crit, damage, C13.

    ``seeded_face`` is the dice primitive (the seeded source's own); the "faces given" variant passes a look-up
    of the same faces instead, to show what the HMAC costs.
    """
    seed, fid, counter = a.seed, a.fight_id, a.counter
    attacker, target, weapon = a.attacker, a.target, a.weapon
    kind = rules.attack_kind(weapon.properties if weapon else None)
    attr = attacker.attributes[rules.primary_attribute(kind, weapon is not None and "finesse" in weapon.properties)]
    fcs_attr = attacker.attributes.FCS
    n_primary = 1 + attacker.features.extra_primary_dice
    # C29: the hit roll (primary dice, then the FCS die), then the defender's RES die
    primary = [seeded_face(seed, fid, counter, i, attr.sides) for i in range(n_primary)]
    fcs = [seeded_face(seed, fid, counter, n_primary, fcs_attr.sides)]
    res_die = seeded_face(seed, fid, counter + 1, 0, target.attributes.RES.sides)
    counter += 2
    total = rules.hit_total(primary, fcs, rules.static_bonus(attr.bonus, weapon.hit_bonus if weapon else 0,
                                                             attacker.training.hit_bonus))
    damage_type = weapon.damage_type if weapon else UNARMED_DAMAGE
    physical = damage_type in PHYSICAL
    armor = target.armor
    applies = armor is not None and armor_applies(magical_armor=armor.magical, spell_attack=rules.is_spell(kind),
                                                  physical_damage=physical)
    res_bonus = target.attributes.RES.bonus
    rating = rules.defense_rating(res_bonus, armor.rating if armor else 0, applies)
    defense = rules.base_defense(res_die, rating)
    if a.defense is not None and rules.hits(total, defense):  # C8: a window only if the attack would hit
        parry = a.parry_with if a.defense == "parry" else None
        active = target.attributes[active_attribute(a.defense, parry)]
        die = seeded_face(seed, fid, counter, 0, active.sides)
        counter += 1
        bonus = (0 if a.defense == "dodge" else parry.parry_rating if parry is not None and a.defense == "parry"
                 else target.shield.block_rating if target.shield is not None else 0)
        defense += die + active.bonus + bonus
    hit = rules.hits(total, defense)
    crit = hit and rules.is_crit(rules.fcs_portion(fcs, fcs_attr.bonus), rules.res_portion(res_die, res_bonus))
    if not hit:
        return Outcome(total, defense, False, False, 0, 0)
    rage_dice: list[int] = []
    if a.rage:
        spec = attacker.features.rage
        assert spec is not None
        rage_dice = [seeded_face(seed, fid, counter, i, spec.sides) for i in range(spec.count)]
    d = rules.damage(dice_result=sum(primary), primary_bonus=attr.bonus,
                     weapon_damage=weapon.weapon_damage if weapon else 0, crit=crit, unarmed=weapon is None,
                     ability_dice=rage_dice)
    steps = mitigate(d.raw, resistance=target.resistances.get(damage_type, 0), physical=physical,
                     physical_resistance=target.resistances.get("physical", 0), armor=armor.rating if armor else 0,
                     armor_applies=applies, multiply=target.incoming_damage.multiply, add=target.incoming_damage.add)
    return Outcome(total, defense, True, crit, d.raw, steps[-1].after)


def engine_dice() -> Face:
    """The dice primitive drawn the way the engine's seeded source draws: each seed's HMAC pads hashed once
    (``omen_core.dice.seeded_faces``, the faces of ``seeded_face``), then each die from them. Made once per run,
    inside the clock, as the engine makes its source once per fight (issue #26: the baseline drew every die with a
    full ``hmac.digest``, 1.3-1.5x slower than the engine's own draw, which flattered the ratios)."""
    by_seed: dict[bytes, Callable[[str, int, int, int], int]] = {}

    def face(seed: bytes, fight_id: str, counter: int, index: int, sides: int) -> int:
        draw = by_seed.get(seed)
        if draw is None:
            draw = by_seed[seed] = seeded_faces(seed)
        return draw(fight_id, counter, index, sides)

    return face


def bare_run(attacks: list[BareAttack], expect: list[Outcome], face: Face | None = None,
             loops: int = 1) -> tuple[int, float]:
    """Every attack by the bare path, ``loops`` times over (a run about as long as the engine's: see --bare-loops),
    its dice drawn as the engine draws them (:func:`engine_dice`, made inside the clock) unless ``face`` is given."""
    start = time.perf_counter()
    for _ in range(loops):
        draw = face if face is not None else engine_dice()
        outcomes = [bare_attack(a, draw) for a in attacks]
    elapsed = time.perf_counter() - start
    if outcomes != expect:  # outside the clock
        raise RuntimeError("the bare path changed its mind between runs")
    return len(attacks), elapsed


def faces_given(attacks: list[BareAttack]) -> Face:
    """A dice primitive that looks up the faces ``seeded_face`` gives these attacks (drawn here, beforehand)."""
    drawn: dict[tuple[bytes, str, int, int], int] = {}

    def draw(seed: bytes, fight_id: str, counter: int, index: int, sides: int) -> int:
        face = drawn[seed, fight_id, counter, index] = seeded_face(seed, fight_id, counter, index, sides)
        return face

    for a in attacks:
        bare_attack(a, draw)

    def look_up(seed: bytes, fight_id: str, counter: int, index: int, sides: int) -> int:
        return drawn[seed, fight_id, counter, index]
    return look_up


# -- the live path --------------------------------------------------------------------------------------------------


@dataclass
class Recorder:
    """What one untimed run of the engine did, attack by attack: the bare path's inputs and the engine's outcomes."""

    seed: bytes
    attacks: list[BareAttack] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    windows: int = 0
    defended: int = 0
    interrupts: int = 0
    commands: int = 0
    events: int = 0

    def begin(self, fight: Fight, attacker: str, target: str, weapon: str | None, rage: bool) -> None:
        state = fight.state
        a, t = state.combatants[attacker], state.combatants[target]
        held = a.sheet.weapon(weapon) if weapon else next((w for w in a.sheet.weapons if w.id in a.wielding), None)
        parry = next((w for w in t.sheet.weapons if w.id in t.wielding), None)
        self._pending = BareAttack(self.seed, fight.fight_id, state.rolls + 1, a.sheet, t.sheet, held, None, parry,
                                   rage)
        self._events: list[Any] = []

    def saw(self, events: list[Any]) -> None:
        self._events += events

    def end(self) -> None:
        events = self._events
        hit = next(e for e in events if isinstance(e, HitDetermined))
        damage = next((e for e in events if isinstance(e, DamageResolved)), None)
        window = next((e for e in events if isinstance(e, ActiveDefenseWindowOpened)), None)
        active = next((e for e in events if isinstance(e, DiceRolled) and e.purpose == "active_defense"), None)
        self.windows += window is not None
        self.interrupts += any(isinstance(e, ReactionWindowOpened) for e in events)
        defense = hit.defense.active.defense if hit.defense.active is not None else None
        self.defended += active is not None
        self.attacks.append(self._pending._replace(defense=defense))
        self.outcomes.append(Outcome(hit.attack.total, hit.defense.total, hit.hit, hit.crit,
                                     damage.terms.raw if damage else 0, damage.final if damage else 0))


def answer_windows(fight: Fight, choose: Callable[[ActiveDefenseWindowOpened], ActiveDefense | None],
                   rec: Recorder | None) -> None:
    """Answer every window the attack opens until it settles: Interrupts passed, Active Defense by ``choose``."""
    while (window := fight.waiting_for) is not None:
        if type(window) is ActiveDefenseWindowOpened:
            events = fight.defend(window.defender, choose(window))
        elif type(window) is ReactionWindowOpened:
            pending = fight.state.pending
            assert pending is not None
            answered = pending.answered
            events = fight.pass_reaction(next(w for w in window.responders if w not in answered))
        else:  # pragma: no cover - a window these fights do not open
            raise RuntimeError(f"the benchmark does not answer {window!r}")
        if rec is not None:
            rec.saw(events)
            rec.commands += 1


def start(store: Any, fight_id: str, seed: bytes, cast: list[CombatantSheet]) -> Fight:
    fight = Fight.start(store, fight_id, dice=SeededDice(seed), ruleset=RULESET, combatants=cast)
    fight.roll_initiative()
    while isinstance(fight.waiting_for, InitiativeTied):  # tied allies roll off (C19)
        fight.roll_off()
    return fight


@dataclass
class Duel:
    name: str
    fight_id: str
    seed: bytes
    cast: list[CombatantSheet]
    weapons: dict[str, str]
    foe: dict[str, str]


def duel_policy(i: int) -> Callable[[ActiveDefenseWindowOpened], ActiveDefense | None]:
    defense: ActiveDefense | None = "dodge" if (i // 2) % 2 == 0 else None
    return lambda window: defense


DODGE_THEN_DECLINE = [duel_policy(i) for i in range(4)]


def duel_run(duel: Duel, store: Any, attacks: int, splits: list[dict[str, float]] | None,
             rec: Recorder | None = None) -> tuple[int, float, tuple[Any, ...]]:
    """``attacks`` live attack cycles in one fight; the seconds spent in the cycles (declaration to settled)."""
    fight = start(store, duel.fight_id, duel.seed, duel.cast)
    clock = time.perf_counter
    in_attack = in_answers = in_end_turn = 0.0
    for i in range(attacks):
        who = fight.state.turn
        assert who is not None
        target = duel.foe[who]
        choose = DODGE_THEN_DECLINE[i % 4]
        if rec is not None:
            rec.begin(fight, who, target, duel.weapons[who], False)
        t0 = clock()
        events = fight.attack(who, target, weapon=duel.weapons[who])
        t1 = clock()
        answer_windows(fight, choose, rec)
        t2 = clock()
        if rec is not None:
            rec.saw(events)
            rec.commands += 1
            rec.end()
        fight.end_turn(who)
        in_attack, in_answers, in_end_turn = in_attack + t1 - t0, in_answers + t2 - t1, in_end_turn + clock() - t2
    if splits is not None:
        splits.append({"attack_s": in_attack, "answers_s": in_answers, "end_turn_s": in_end_turn})
    if rec is not None:
        rec.events += fight.version
    state = fight.state
    return attacks, in_attack + in_answers, (fight.version, tuple(c.hp for c in state.combatants.values()))


AD_PREFERENCE: tuple[ActiveDefense, ...] = ("block", "parry", "dodge")


def best_defense(window: ActiveDefenseWindowOpened) -> ActiveDefense | None:
    return next((d for d in AD_PREFERENCE if d in window.eligible), None)


def play_2v2(store: Any, fight_id: str, seed: bytes, cast: list[CombatantSheet], rec: Recorder | None = None,
             max_rounds: int = 100) -> tuple[Any, ...]:
    """One 2v2 fight to defeat; its fingerprint (events, HP at the end, the side defeated)."""
    fight = start(store, fight_id, seed, cast)
    while fight.state.ending is None:
        state = fight.state
        who = state.turn
        assert who is not None
        if state.round > max_rounds:
            raise RuntimeError(f"{fight_id}: no side defeated after {max_rounds} rounds")
        me = state.combatants[who]
        if me.hp > 0:
            foes = sorted((c.hp, c.id) for c in state.combatants.values() if c.side != me.side and c.hp > 0)
            target = foes[0][1]
            rage = me.sheet.features.rage is not None
            if rec is not None:
                rec.begin(fight, who, target, None, rage)
            events = fight.attack(who, target, rage=rage)
            answer_windows(fight, best_defense, rec)
            if rec is not None:
                rec.saw(events)
                rec.commands += 1
                rec.end()
            if fight.state.ending is not None:
                break
        fight.end_turn(who)
        if rec is not None:
            rec.commands += 1
    if rec is not None:
        rec.events += fight.version
        rec.commands += 2  # start (with the joins) and roll_initiative
    state = fight.state
    assert state.ending is not None
    return fight.version, tuple(c.hp for c in state.combatants.values()), state.ending.side


def fights_run(store: Any, fights: list[tuple[str, bytes]], cast: list[CombatantSheet],
               rec: Recorder | None = None) -> tuple[int, float, list[tuple[Any, ...]]]:
    clock = time.perf_counter
    total = 0.0
    prints = []
    for fight_id, seed in fights:
        t0 = clock()
        prints.append(play_2v2(store, fight_id, seed, cast, rec))
        total += clock() - t0
    return len(fights), total, prints


# -- stores ---------------------------------------------------------------------------------------------------------


class Stores:
    """Fresh stores on demand, in one scratch directory, and their removal (neither is timed)."""

    def __init__(self, where: Path):
        self.where = where
        self.counter = itertools.count()

    def memory(self, duel: bool) -> MemoryStore:
        return MemoryStore()

    def jsonl(self, duel: bool) -> JsonlStore:
        n = next(self.counter)
        return JsonlStore.single(self.where / f"duel-{n}.jsonl") if duel else JsonlStore(self.where / f"fights-{n}")

    def sqlite(self, duel: bool) -> SqliteStore:
        return SqliteStore(self.where / f"live-{next(self.counter)}.db")

    def remove(self, store: Any) -> None:
        if isinstance(store, SqliteStore):
            path = store.path
            store.close()
            for suffix in ("", "-wal", "-shm"):
                Path(path + suffix).unlink(missing_ok=True)
        elif isinstance(store, JsonlStore):
            where = Path(store.location)
            if where.is_dir():
                shutil.rmtree(where)
            else:
                for p in where.parent.glob(where.name + "*"):
                    shutil.rmtree(p) if p.is_dir() else p.unlink()


STORE_LABEL = {"memory": "memory", "jsonl": "JSON Lines (fsync)", "sqlite": "SQLite (WAL)"}


# -- profile --------------------------------------------------------------------------------------------------------


def profile_duel(duel: Duel, attacks: int, top: int) -> dict[str, Any]:
    """cProfile of the attack cycles of the memory duel (the profiler on only inside each cycle)."""
    fight = start(MemoryStore(), duel.fight_id, duel.seed, duel.cast)
    prof = cProfile.Profile()
    for i in range(attacks):
        who = fight.state.turn
        assert who is not None
        choose = DODGE_THEN_DECLINE[i % 4]
        prof.enable()
        fight.attack(who, duel.foe[who], weapon=duel.weapons[who])
        answer_windows(fight, choose, None)
        prof.disable()
        fight.end_turn(who)
    stats = pstats.Stats(prof)
    raw = stats.stats  # type: ignore[attr-defined]
    here = str(Path(__file__).resolve())
    rows = []
    for (path, line, name), (_cc, ncalls, tottime, cumtime, _callers) in raw.items():
        if path == here or name == "<method 'disable' of '_lsprof.Profiler' objects>":
            continue
        rows.append({"function": _where(path, line, name), "ncalls": ncalls, "tottime_s": tottime,
                     "cumtime_s": cumtime})
    total = stats.total_tt  # type: ignore[attr-defined]
    by_cum = sorted(rows, key=lambda r: -r["cumtime_s"])[:top]
    by_tot = sorted(rows, key=lambda r: -r["tottime_s"])[:top]
    return {"attacks": attacks, "total_s": total, "by_cumulative": by_cum, "by_tottime": by_tot}


FIGHT_METHODS = ("start", "roll_initiative", "roll_off", "attack", "defend", "pass_reaction", "end_turn",
                 "waiting_for", "state")


def profile_fights(fights: list[tuple[str, bytes]], cast: list[CombatantSheet]) -> dict[str, Any]:
    """cProfile of the memory 2v2 fights: the time under each public ``Fight`` method the fights call, and in all."""
    prof = cProfile.Profile()
    store = MemoryStore()
    prof.enable()
    fights_run(store, fights, cast)
    prof.disable()
    stats = pstats.Stats(prof)
    raw = stats.stats  # type: ignore[attr-defined]
    engine = str((ROOT / "omen_core" / "engine.py").resolve())
    rows = [{"method": name, "ncalls": ncalls, "cumtime_s": cumtime}
            for (path, _line, name), (_cc, ncalls, _tt, cumtime, _callers) in raw.items()
            if name in FIGHT_METHODS and str(Path(path).resolve()) == engine]
    rows.sort(key=lambda r: -r["cumtime_s"])
    return {"fights": len(fights), "total_s": stats.total_tt, "by_method": rows}  # type: ignore[attr-defined]


def _where(path: str, line: int, name: str) -> str:
    if path == "~":
        return name
    p = Path(path)
    try:
        short = str(p.resolve().relative_to(ROOT))
    except ValueError:
        parts = p.parts
        short = "/".join(parts[parts.index("site-packages") + 1:]) if "site-packages" in parts else p.name
    return f"{short}:{line}({name})"


def profile_table(prof: dict[str, Any], key: str) -> str:
    n, total = prof["attacks"], prof["total_s"]
    rows = [[r["function"], f"{r['ncalls']:,}", f"{r['ncalls'] / n:,.1f}", f"{r['tottime_s'] / n * 1e6:,.1f}",
             f"{r['cumtime_s'] / n * 1e6:,.1f}", f"{r['cumtime_s'] / total:.0%}"] for r in prof[key]]
    return table(["function", "calls", "per attack", "own µs/attack", "cum µs/attack", "cum share"], rows)


# -- main -----------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="live attack cycles and 2v2 fights vs the bare rules functions")
    parser.add_argument("--attacks", type=int, default=200, help="attack cycles per duel run (default 200)")
    parser.add_argument("--fights", type=int, default=20, help="2v2 fights per run (default 20)")
    parser.add_argument("--file-attacks", type=int, default=50,
                        help="attack cycles per duel run on the JSON Lines and SQLite stores (default 50: each "
                             "append is an fsync)")
    parser.add_argument("--file-fights", type=int, default=5,
                        help="2v2 fights per run on the JSON Lines and SQLite stores (default 5)")
    parser.add_argument("--bare-loops", type=int, default=10,
                        help="times a bare run goes over its attacks (default 10), so that a bare run lasts about "
                             "as long as a live one and a busy machine hits both alike")
    parser.add_argument("--repeat", type=int, default=20,
                        help="timed runs of each case (default 20; the median counts)")
    parser.add_argument("--stores", default="memory,jsonl,sqlite", help="stores to run (default memory,jsonl,sqlite)")
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (default: under benchmarks/.cache)")
    parser.add_argument("--profile", type=int, nargs="?", const=20, default=0, metavar="TOP",
                        help="also profile the memory ranged duel's attack cycles (top TOP functions, default 20)")
    parser.add_argument("--profile-attacks", type=int, default=1000,
                        help="attack cycles profiled (default 1000: on a busy machine the time another process "
                             "takes lands on whatever function runs, and many cycles spread it out)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    kinds = [k.strip() for k in args.stores.split(",") if k.strip()]
    if "memory" not in kinds or set(kinds) - set(STORE_LABEL):
        parser.error("--stores: memory, jsonl, sqlite (memory is needed: the goals are in memory)")

    duels = [
        Duel("ranged duel", "live-duel-ranged", hashlib.sha256(b"omen bench_live ranged duel").digest(),
             [sheet("brin", hp=HUGE_HP, wielding=("bow",)), decode_content(ORLA, CombatantSheet, fmt="toml")],
             {"brin": "bow", "orla": "crossbow"}, {"brin": "orla", "orla": "brin"}),
        Duel("melee duel", "live-duel-melee", hashlib.sha256(b"omen bench_live melee duel").digest(),
             [sheet("kael", hp=HUGE_HP), sheet("vesh", hp=HUGE_HP)],
             {"kael": "longsword", "vesh": "knife"}, {"kael": "vesh", "vesh": "kael"}),
    ]
    cast = [sheet(w) for w in ("kael", "brin", "vesh", "skarn")]
    fights = [(f"live-2v2-{i:03d}", hashlib.sha256(b"omen bench_live 2v2 %d" % i).digest())
              for i in range(args.fights)]

    # The check: one untimed run of each, recording; the bare path must find the same outcome for every attack.
    records: dict[str, Recorder] = {}
    expect: dict[Any, tuple[Any, ...]] = {}
    file_attacks, file_fights = min(args.file_attacks, args.attacks), min(args.file_fights, args.fights)
    for duel in duels:
        rec = records[duel.name] = Recorder(duel.seed)
        expect[duel.name] = duel_run(duel, MemoryStore(), args.attacks, None, rec)[2]
        expect[duel.name, file_attacks] = duel_run(duel, MemoryStore(), file_attacks, None)[2]
    rec2 = records["2v2"] = Recorder(b"")
    prints = []
    attacks_by_fight = []
    for fight_id, seed in fights:
        rec2.seed = seed
        before = len(rec2.attacks)
        prints.append(play_2v2(MemoryStore(), fight_id, seed, cast, rec2))
        attacks_by_fight.append(len(rec2.attacks) - before)
    expect["2v2"] = tuple(prints)
    for name, rec in records.items():
        bare = [bare_attack(a) for a in rec.attacks]
        wrong = [(i, e, b) for i, (e, b) in enumerate(zip(rec.outcomes, bare, strict=True)) if e != b]
        if wrong:
            i, e, b = wrong[0]
            raise SystemExit(f"{name}: the bare path disagrees with the engine on {len(wrong)} of "
                             f"{len(bare)} attacks; first, attack {i}: engine {e}, bare {b}")

    base_dir = args.dir or CACHE
    base_dir.mkdir(parents=True, exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix="live-", dir=base_dir))
    stores = Stores(where)
    splits: dict[str, list[dict[str, float]]] = {}

    def duel_case(duel: Duel, kind: str, attacks: int) -> Callable[[], tuple[int, float]]:
        key = f"{duel.name} / {kind}"
        splits[key] = []
        want = expect[duel.name] if attacks == args.attacks else expect[duel.name, attacks]

        def run() -> tuple[int, float]:
            store = getattr(stores, kind)(True)
            try:
                n, seconds, fingerprint = duel_run(duel, store, attacks, splits[key])
            finally:
                stores.remove(store)
            if fingerprint != want:
                raise RuntimeError(f"{key}: the fight came out differently from the checked run")
            return n, seconds
        return run

    def fights_case(kind: str, count: int) -> Callable[[], tuple[int, float]]:
        def run() -> tuple[int, float]:
            store = getattr(stores, kind)(False)
            try:
                n, seconds, got = fights_run(store, fights[:count], cast)
            finally:
                stores.remove(store)
            if tuple(got) != expect["2v2"][:count]:
                raise RuntimeError(f"2v2 / {kind}: the fights came out differently from the checked run")
            return n, seconds
        return run

    # per group: the baseline (bare, HMAC dice), the bare path with the faces given (information), the live cases
    groups: list[tuple[str, Case, Case, list[Case]]] = []
    loops = args.bare_loops
    for duel in duels:
        rec = records[duel.name]
        given = faces_given(rec.attacks)
        base = Case(f"{duel.name}: bare rules functions",
                    lambda r=rec: bare_run(r.attacks, r.outcomes, None, loops),  # type: ignore[misc]
                    group=duel.name, store="bare", n=args.attacks * loops)
        nohmac = Case(f"{duel.name}: bare, faces given (no HMAC)",
                      lambda r=rec, g=given: bare_run(r.attacks, r.outcomes, g, loops),  # type: ignore[misc]
                      group=duel.name,
                      store="bare-given", n=args.attacks * loops)
        live = []
        for k in kinds:
            n = args.attacks if k == "memory" else file_attacks
            live.append(Case(f"{duel.name}: Fight API, {STORE_LABEL[k]}", duel_case(duel, k, n), group=duel.name,
                             store=k, n=n))
        groups.append((duel.name, base, nohmac, live))
    rec2 = records["2v2"]
    given2 = faces_given(rec2.attacks)
    base2 = Case("2v2 fights: bare rules functions (their attacks)", lambda: (
        args.fights, bare_run(rec2.attacks, rec2.outcomes, None, loops)[1]), group="2v2", store="bare",
                 n=args.fights * loops)
    nohmac2 = Case("2v2 fights: bare, faces given (no HMAC)", lambda: (
        args.fights, bare_run(rec2.attacks, rec2.outcomes, given2, loops)[1]), group="2v2", store="bare-given",
                   n=args.fights * loops)
    live2 = []
    for k in kinds:
        n = args.fights if k == "memory" else file_fights
        live2.append(Case(f"2v2 fights: Fight API, {STORE_LABEL[k]}", fights_case(k, n), group="2v2", store=k, n=n))
    groups.append(("2v2", base2, nohmac2, live2))
    everything = [c for _, base, nohmac, live in groups for c in (base, nohmac, *live)]
    wall = time.perf_counter()
    try:
        run_interleaved(everything, args.repeat)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    wall = time.perf_counter() - wall
    profile = profile_duel(duels[0], args.profile_attacks, args.profile) if args.profile else None
    if profile is not None:
        profile["fights_2v2"] = profile_fights(fights, cast)
    info = _common.machine()

    results = []
    for name, base, nohmac, live in groups:
        per = {c.name: c.median / c.info["n"] for c in (base, nohmac, *live)}  # per attack cycle, or per fight
        for case in (base, nohmac, *live):
            n = case.info["n"]
            row: dict[str, Any] = {**case.as_dict(), "ratio_to_bare": per[case.name] / per[base.name],
                                   "ratio_to_bare_faces_given": per[case.name] / per[nohmac.name]}
            bare = case.info["store"].startswith("bare")
            if name == "2v2":
                fights_n = n // args.bare_loops if bare else n
                attacks = len(records[name].attacks) * args.bare_loops if bare else sum(attacks_by_fight[:n])
                row.update(fights=fights_n, ms_per_fight=case.median / n * 1e3, fights_per_s=n / case.median,
                           attacks=attacks, us_per_attack=case.median / attacks * 1e6)
                if case.info["store"] == "memory":
                    row.update(goal_fights_per_s=GOAL_FIGHTS_PER_S, goal_met=n / case.median >= GOAL_FIGHTS_PER_S)
            else:
                row.update(attacks=n // args.bare_loops if bare else n, us_per_attack=case.median / n * 1e6)
                key = f"{name} / {case.info['store']}"
                if key in splits:
                    timed = splits[key][-args.repeat:]
                    row["split_median_us_per_attack"] = {
                        part: statistics.median(s[part] for s in timed) / n * 1e6
                        for part in ("attack_s", "answers_s", "end_turn_s")}
                if case.info["store"] == "memory" and name == "ranged duel":
                    row.update(goal_ratio=GOAL_RATIO, goal_met=row["ratio_to_bare"] <= GOAL_RATIO)
            if bare:
                row["loops"] = args.bare_loops
            results.append(row)
    workload = {name: {"attacks": len(rec.attacks), "windows_opened": rec.windows, "active_defenses": rec.defended,
                       "interrupt_windows": rec.interrupts, "hits": sum(o.hit for o in rec.outcomes),
                       "crits": sum(o.crit for o in rec.outcomes), "commands": rec.commands, "events": rec.events}
                for name, rec in records.items()}
    if args.json:
        _common.emit_json({"benchmark": "live", "attacks": args.attacks, "fights": args.fights,
                           "bare_loops": args.bare_loops,
                           "file_attacks": file_attacks, "file_fights": file_fights,
                           "repeat": args.repeat, "stores": kinds, "wall_s": wall, "machine": info,
                           "workload": workload, "results": results, "profile": profile})
        return 0

    _common.print_machine(info)
    print(f"medians of {args.repeat} interleaved runs (fastest – slowest shown); a bare run goes over its attacks "
          f"{args.bare_loops} times (its time column is for all of them, per-attack figures and ratios are not); "
          f"{wall:,.0f} s of timed rounds; "
          f"files under {base_dir}; the bare path agreed with the engine on all "
          f"{sum(len(r.attacks) for r in records.values()):,} attacks checked\n")
    for name, base, nohmac, live in groups:
        w = workload[name]
        if name == "2v2":
            print(f"2v2 fights to defeat: {args.fights} fights a run in memory, {file_fights} on the file stores "
                  f"(the first {file_fights}: {sum(attacks_by_fight[:file_fights])} attacks); "
                  f"{w['attacks']} attacks in all "
                  f"({w['attacks'] / args.fights:.1f} a fight; {w['windows_opened']} Active Defense windows, "
                  f"{w['interrupt_windows']} with an Interrupt window, {w['hits']} hits, {w['crits']} crits), "
                  f"{w['commands'] / args.fights:.1f} commands and {w['events'] / args.fights:.0f} events a fight")
            rows = []
            for case in (base, nohmac, *live):
                r = next(x for x in results if x["case"] == case.name)
                goal = (f"≥ {GOAL_FIGHTS_PER_S:.0f}/s: " + ("met" if r["goal_met"] else "MISSED")
                        if "goal_met" in r else "")
                rows.append([case.name, fmt_s(case.median), _common.spread(case), f"{r['ms_per_fight']:,.2f}",
                             f"{r['fights_per_s']:,.0f}", f"{r['ratio_to_bare']:,.1f}×",
                             f"{r['ratio_to_bare_faces_given']:,.1f}×", goal])
            print(table(["case", "time (run)", "(min – max)", "ms/fight", "fights/s", "vs bare", "vs bare, faces given",
                         "goal"], rows))
        else:
            print(f"{name}: {args.attacks} attack cycles a run in memory, the first {file_attacks} on the file stores "
                  f"({w['windows_opened']} opened an Active Defense window, "
                  f"{w['active_defenses']} answered with a Dodge, the rest declined; {w['interrupt_windows']} "
                  f"Interrupt windows passed; {w['hits']} hits, {w['crits']} crits)")
            rows = []
            for case in (base, nohmac, *live):
                r = next(x for x in results if x["case"] == case.name)
                split = r.get("split_median_us_per_attack")
                parts = (f"{split['attack_s']:,.0f} + {split['answers_s']:,.0f} (end_turn {split['end_turn_s']:,.0f})"
                         if split else "")
                goal = f"≤ {GOAL_RATIO:.0f}×: " + ("met" if r["goal_met"] else "MISSED") if "goal_met" in r else ""
                rows.append([case.name, fmt_s(case.median), _common.spread(case), f"{r['us_per_attack']:,.1f}",
                             f"{r['ratio_to_bare']:,.1f}×", f"{r['ratio_to_bare_faces_given']:,.1f}×", parts, goal])
            print(table(["case", "time (run)", "(min – max)", "µs/attack", "vs bare", "vs bare, faces given",
                         "attack + answers µs", "goal"], rows))
        print()
    if profile:
        out = sys.stdout
        print(f"cProfile of the memory ranged duel's {args.profile_attacks} attack cycles "
              f"({profile['total_s'] * 1e3:,.0f} ms under the profiler; profiling slows it down: read the shares, "
              "not the times)\n", file=out)
        print("by cumulative time:", file=out)
        print(profile_table(profile, "by_cumulative"), file=out)
        print("\nby own time:", file=out)
        print(profile_table(profile, "by_tottime"), file=out)
        pf = profile["fights_2v2"]
        n, total = pf["fights"], pf["total_s"]
        print(f"\ncProfile of the {n} memory 2v2 fights ({total * 1e3:,.0f} ms under the profiler), by the public "
              "Fight method the time is spent under:\n", file=out)
        rows = [[f"Fight.{r['method']}", f"{r['ncalls']:,}", f"{r['ncalls'] / n:,.1f}",
                 f"{r['cumtime_s'] / n * 1e3:,.2f}", f"{r['cumtime_s'] / r['ncalls'] * 1e6:,.0f}",
                 f"{r['cumtime_s'] / total:.0%}"] for r in pf["by_method"]]
        print(table(["method", "calls", "per fight", "ms/fight", "µs/call", "share"], rows), file=out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
