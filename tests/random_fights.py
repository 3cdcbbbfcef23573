"""A hypothesis strategy for random legal fights, played command by command through the public ``Fight`` API."""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st
from msgspec.structs import replace

from omen_core import (
    CheckSpec,
    Fight,
    ManualDice,
    MemoryStore,
    Modifier,
    OmenError,
    ScriptedDice,
    SeededDice,
)
from omen_core.commands import UseAbility
from omen_core.content import (
    ATTRIBUTES,
    SHIPPED_ABILITIES,
    ApplyCondition,
    Armor,
    Branches,
    ClearCondition,
    CombatantSheet,
    DamageDice,
    DealDamage,
    Features,
    IncomingDamage,
    RageDice,
    SaveEffect,
    Shield,
    Training,
    Weapon,
)
from omen_core.dice import DiceSource, RollRequest
from omen_core.events import (
    ActiveDefenseWindowOpened,
    CatchWindowOpened,
    DecisionOpened,
    InitiativeTied,
    ReactionWindowOpened,
    RoutingWindowOpened,
    StoredEvent,
    WillConversionOffered,
    encode_line,
    is_undo_batch,
)
from omen_core.machine import Phase
from omen_core.rules.ambush import TIME_WAITED
from omen_core.state import FightState
from omen_core.walk import landmarks_of
from tests.sheets import sheet

__all__ = ["EFFECTS", "GEAR", "NAMES", "Played", "RandomFight", "fights", "same_state"]

Draw = st.DrawFn
T = TypeVar("T")

NAMES = ("ana", "bram", "cyra", "dov")
SIDES = ("heroes", "raiders")
DICE = (4, 6, 8, 10, 12, 20)

#: Every kind of gear: melee, finesse and magical, thrown (marked alone: struck in hand, a melee attack; and with
#: ranged: thrown, which may be caught, docs/rulings.md), ranged, melee and ranged spells.
GEAR = (
    Weapon(id="knife", weapon_damage=2, damage_type="piercing", properties=frozenset({"thrown"})),
    Weapon(id="sword", weapon_damage=3, hit_bonus=1, parry_rating=1),
    Weapon(id="dagger", weapon_damage=1, damage_type="piercing", properties=frozenset({"finesse", "magical"})),
    Weapon(id="javelin", weapon_damage=3, damage_type="piercing", properties=frozenset({"thrown", "ranged"})),
    Weapon(id="bow", weapon_damage=2, damage_type="piercing", properties=frozenset({"ranged"})),
    Weapon(id="staff", weapon_damage=1, damage_type="arcane", properties=frozenset({"spell", "magical"})),
    Weapon(id="wand", damage_type="fire", properties=frozenset({"spell", "ranged"})),
)
MELEE = {w.id for w in GEAR if "ranged" not in w.properties}
CONDITIONS = ("Prone",) * 3 + ("Unseen",) * 3 + ("Exhausted", "Fatigued") * 2 + ("Paralysed", "Incapacitated",
                                                                                 "Dying")

#: Effects that call for a save: with and without an Action cost, damage dice (d6 only), conditions, clearing.
EFFECTS = (
    SaveEffect(name="flask", save="AGI", against="INT",
               on_failure=(DealDamage(dice=DamageDice(count=2, die="d6"), damage_type="fire"),
                           ApplyCondition(condition="Prone"))),
    SaveEffect(name="shove", save="STR", against="STR", spell=False, action_cost=0,
               on_success=(ClearCondition(condition="Prone", to="actor"),),
               on_failure=(DealDamage(flat=3, damage_type="crushing"), ApplyCondition(condition="Exhausted"))),
    SaveEffect(name="backlash", save="RES", against="FCS",
               on_failure=(DealDamage(flat=2, damage_type="psychic", to="actor"),),
               on_success=(ApplyCondition(condition="Fatigued", stacks=2),)),
    SaveEffect(name="hold", save="RES", against="INT", action_cost=0,
               on_failure=(ApplyCondition(condition="Paralysed"),)),
)
BRANCHES = (
    Branches(),
    Branches(),
    Branches(on_hit=(ApplyCondition(condition="Prone"),),
             on_miss=(DealDamage(flat=1, damage_type="fire", to="actor"),)),
    Branches(on_crit=(ApplyCondition(condition="Exhausted"), DealDamage(dice=DamageDice(die="d6"),
                                                                        damage_type="cold"))),
    Branches(on_hit=(ClearCondition(condition="Prone", to="actor"),)),
)
DAMAGE_MODIFIERS = ((), (), (Modifier(source="blessed blade", value=2),), (Modifier(source="blunted", value=-3),))


def same_state(a: FightState, b: FightState) -> bool:
    """Two states are the same fight state, wherever they stand in the log (version and last hash aside, and the
    redo stack: after an undo, a redo is possible that was not before)."""
    return replace(a, version=0, last_hash="", redo_stack=()) == replace(b, version=0, last_hash="", redo_stack=())


@dataclass
class Played:
    """One command tried: its label, the seqs it appended (first, last), or the error that refused it."""

    label: str
    seqs: tuple[int, int] | None = None
    refused: str | None = None


@dataclass
class RandomFight:
    """A generated fight: the live ``Fight``, the commands played, and the live state after every version."""

    fight: Fight
    dice_kind: str
    seed: bytes | None
    played: list[Played] = field(default_factory=list)
    states: dict[int, FightState] = field(default_factory=dict)
    undone_open: bool = False
    joined: int = 0

    @property
    def records(self) -> list[StoredEvent]:
        """Every stored event of the fight, undone ones and undo markers included."""
        return list(self.fight.store.read(self.fight.fight_id))

    @property
    def state(self) -> FightState:
        """The live state."""
        return self.fight.state

    def lines(self) -> list[bytes]:
        """The log as JSON Lines, each line with its newline."""
        return [encode_line(rec) + b"\n" for rec in self.records]

    def undoable(self) -> list[int]:
        """The live commands after the combatants joined, by first seq: where an undo may go back to."""
        records = self.records
        voided = landmarks_of(records).voided()
        return [r.seq for r in records if r.batch == r.seq and r.seq > self.joined and r.seq not in voided
                and not is_undo_batch(r.event)]

    def accepted(self) -> list[Played]:
        """The commands that were accepted."""
        return [p for p in self.played if p.seqs is not None]

    def __repr__(self) -> str:
        shown = "; ".join(p.label + ("" if p.refused is None else f" -> {p.refused}") for p in self.played)
        return f"RandomFight({self.dice_kind} dice, {self.joined - 1} combatants: {shown})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints a failing fight as the commands it played, not as every field."""
        printer.text(repr(self))

    # -- playing ------------------------------------------------------------------------------

    def record(self) -> None:
        """Remember the live state at the current version."""
        self.states[self.fight.version] = self.fight.state

    def attempt(self, label: str, run: Callable[[], object]) -> bool:
        """Run a command; if it is refused (an OmenError), check that nothing changed at all."""
        fight = self.fight
        version, state, count = fight.version, fight.state, len(self.records)
        remaining = fight.dice.remaining if isinstance(fight.dice, ScriptedDice) else None
        try:
            run()
        except OmenError as exc:
            assert (fight.version, fight.state, len(self.records)) == (version, state, count), label
            if remaining is not None:
                assert isinstance(fight.dice, ScriptedDice) and fight.dice.remaining == remaining, label
            self.played.append(Played(label, refused=type(exc).__name__))
            return False
        assert fight.version > version, label
        self.played.append(Played(label, seqs=(version + 1, fight.version)))
        self.record()
        if label.startswith("undo"):
            self.undone_open = True
        elif not label.startswith("redo"):
            self.undone_open = False
        return True


# -- combatants ---------------------------------------------------------------------------------


@st.composite
def combatants(draw: Draw, cid: str, side: str, always: tuple[str, ...] = ()) -> CombatantSheet:
    """A sheet with varied dice, bonuses, skills, weapons in and out of hand, armor, shield and features; it lists
    the abilities ``always`` names, and perhaps others."""
    attrs = {name: (draw(st.sampled_from(DICE)), draw(st.integers(-1, 3))) for name in ATTRIBUTES}
    skills = draw(st.dictionaries(st.sampled_from(("Stealth", "Perception", "Athletics")),
                                  st.tuples(st.sampled_from(ATTRIBUTES), st.integers(0, 3)), max_size=2))
    base = sheet(cid, side, hp=draw(st.integers(3, 14)), will=draw(st.integers(0, 8)), skills=skills, **attrs)
    armed = draw(st.sampled_from((1, 1, 1, 0)))
    weapons = tuple(draw(st.lists(st.sampled_from(GEAR), min_size=armed, max_size=3, unique_by=lambda w: w.id)))
    wielding = None  # the first weapon in hand
    if len(weapons) > 0 and draw(st.booleans()):
        wielding = tuple(draw(st.lists(st.sampled_from([w.id for w in weapons]), min_size=armed, unique=True)))
    rage = draw(st.none() | st.builds(RageDice, count=st.integers(1, 2), die=st.sampled_from(("d4", "d6"))))
    drawn = replace(
        base, weapons=weapons, wielding=wielding,
        armor=draw(st.none() | st.builds(Armor, rating=st.integers(0, 2), magical=st.booleans())),
        shield=draw(st.none() | st.builds(Shield, block_rating=st.integers(0, 2), magical=st.booleans())),
        training=Training(hit_bonus=draw(st.integers(0, 1)), veteran_shield=draw(st.booleans())),
        features=Features(extra_primary_dice=draw(st.sampled_from((0, 0, 0, 1))), rage=rage,
                          rogue_routing=draw(st.booleans()),
                          will_conversion=draw(st.sampled_from((False, False, False, True, "choice")))),
        resistances=draw(st.sampled_from(({}, {}, {"physical": 1}, {"fire": 2}))),
        incoming_damage=draw(st.sampled_from((IncomingDamage(),) * 3 + (IncomingDamage(multiply=0.5, add=1),))))
    given = {a.id for a in drawn.shorthand_abilities()}  # what its shorthand keys stand for already (C37)
    listable = [i for i in LISTED if i not in given and i not in always]
    return replace(drawn, abilities=always + draw(st.sampled_from(((), ())) | st.lists(
        st.sampled_from(listable), max_size=3, unique=True).map(tuple)))


#: What a random sheet may list in ``abilities``: the Python example and every shipped data ability (C37).
LISTED = ("arcane_ward", *SHIPPED_ABILITIES.abilities)


def _ability_sides(ability_id: str) -> list[int]:
    """The faces of each die a listed ability may roll (its added, damage and healing dice)."""
    ability = SHIPPED_ABILITIES.get(ability_id)
    if ability is None:
        return []
    dice = [getattr(e, "die", None) or getattr(getattr(e, "dice", None), "die", None) for e in ability.effects]
    return [int(d[1:]) for d in dice if isinstance(d, str)]


def _sides(sheets: list[CombatantSheet]) -> int:
    """The fewest faces of any die the fight can roll: scripted faces up to it always fit."""
    faces = [s.attributes[a].sides for s in sheets for a in ATTRIBUTES]
    faces += [s.features.rage.sides for s in sheets if s.features.rage is not None]
    faces += [n for s in sheets for a in s.ability_ids() for n in _ability_sides(a)]
    return min([*faces, 6])


# -- choosing a command -------------------------------------------------------------------------


def _menu(rf: RandomFight) -> list[str]:
    """The commands worth trying now, repeated by weight: mostly those legal in this phase and step.

    Hypothesis draws the first entry more often than its weight says (and shrinks towards it), so the menu is
    ranked by weight: what moves the fight on comes first, undo, redo and revealing the seed last.
    """
    state, window = rf.state, rf.fight.waiting_for
    reveal = 1 if rf.seed is not None and state.revealed_seed is None else 0
    weights: dict[str, int] = {}
    answer: dict[type, dict[str, int]] = {
        InitiativeTied: {"agree": 6, "roll_off": 6}, ActiveDefenseWindowOpened: {"defend": 12},
        ReactionWindowOpened: {"react": 7, "pass": 5}, CatchWindowOpened: {"catch": 12},
        RoutingWindowOpened: {"route": 12}, WillConversionOffered: {"will": 12}, DecisionOpened: {"decide": 12}}
    if state.ending is not None:
        weights |= {"undo": 3, "reveal": reveal * 3, "stop": 2}
    elif type(window) in answer:
        weights |= answer[type(window)]
    elif state.phase is Phase.SETUP:
        weights |= {"initiative": 10, "ambush": 4, "engage": 8, "condition": 2, "clear": 1, "check": 2, "contest": 2,
                    "draw": 2, "attack": 2, "save": 2, "move": 1, "end_fight": 1, "ability": 2, "stand_up": 1}
    elif state.phase is Phase.AMBUSH:
        weights |= {"initiative": 10, "engage": 3, "condition": 1, "draw": 1, "end_fight": 1}
    else:
        owner = state.combatants[state.turn] if state.turn else None
        able = owner is not None and not owner.helpless
        close = bool(state.turn and state.engaged_with(state.turn))
        acts, moves = able and state.turn_actions > 0, able and state.turn_movement > 0
        weights |= {"attack": 12 if acts else 1, "move": 6 if moves else 1, "save": 3 if acts else 1, "end_turn": 6,
                    "ability": 4 if able else 1,
                    "engage": 4, "condition": 2, "disengage": 1 if close else 0, "draw": 1, "clear": 1, "check": 1,
                    "contest": 1, "end_fight": 1, "leave": 1, "undo": 1,
                    "stand_up": 3 if owner is not None and owner.prone else 0}
    weights["undo"] = weights.get("undo", 0) + 1 if rf.undoable() else 0
    weights["redo"] = 6 if rf.undone_open else 0
    weights["reveal"] = weights.get("reveal", reveal)
    ranked = sorted(weights.items(), key=lambda kv: -kv[1])  # stable: ties keep the order above
    return [kind for kind, weight in ranked for _ in range(weight)]


EVERY = ("undo", "redo", "reveal", "agree", "roll_off", "defend", "react", "pass", "catch", "route", "will", "engage",
         "condition", "clear", "check", "contest", "end_fight", "draw", "attack", "save", "move", "ambush",
         "initiative", "end_turn", "disengage", "cancel", "leave", "decide", "ability", "stand_up")


def _pick(draw: Draw, options: Iterable[T]) -> T | None:
    options = list(options)
    return draw(st.sampled_from(options)) if options else None


def _who(draw: Draw, rf: RandomFight) -> str:
    """A combatant, now and then one who has not joined."""
    return draw(st.sampled_from(list(rf.state.combatants) * 8 + ["zed"]))


def _actor(draw: Draw, rf: RandomFight) -> str:
    """Whoever may act now: the turn's owner in the rounds (mostly), anyone in set-up."""
    state = rf.state
    if state.phase is Phase.ROUNDS and state.turn and draw(st.integers(0, 9)) < 9:
        return state.turn
    return _who(draw, rf)


def _enemy(draw: Draw, rf: RandomFight, who: str) -> str:
    """Someone on the other side (mostly an engaged one), now and then anyone else."""
    state = rf.state
    me = state.combatants.get(who)
    others = [c for c in state.combatants if c != who]
    foes = [c for c in others if me is None or state.combatants[c].side != me.side]
    close = [c for c in foes if c in state.engaged_with(who)]
    return draw(st.sampled_from(close * 3 + foes * 3 + others)) if others else who


def _weapon(draw: Draw, rf: RandomFight, who: str, melee: bool = False) -> str | None:
    """A weapon in hand (None: the default), 'unarmed', or now and then one not in hand."""
    fighter = rf.state.combatants.get(who)
    held = [w for w in fighter.wielding if not melee or w in MELEE] if fighter else []
    bare = ["unarmed"] * 2 if melee and not held else []  # a reaction is a melee attack: fists over a bow
    return draw(st.sampled_from(held * 3 + bare + [None] * 2 + ["unarmed", _pick(draw, [w.id for w in GEAR])]))


def _command(draw: Draw, rf: RandomFight, kind: str) -> tuple[str, Callable[[], object]]:
    """Draw the arguments of one command of ``kind``; returns a label and the call."""
    fight, state, window = rf.fight, rf.state, rf.fight.waiting_for
    names = list(state.combatants)
    match kind:
        case "cancel":
            return "cancel", lambda: fight.cancel("the GM calls it off")
        case "undo":
            to = draw(st.none() | st.none() | st.sampled_from(rf.undoable() or [1]))
            return f"undo to {to}", lambda: fight.undo(to_seq=to, reason="random undo")
        case "redo":
            return "redo", lambda: fight.redo(reason="random redo")
        case "reveal":
            current = fight.dice.seed if isinstance(fight.dice, SeededDice) else rf.seed  # C42: the seed in force
            seed = current if draw(st.integers(0, 5)) < 5 else bytes(16)
            return "reveal seed", lambda: fight.reveal_seed(seed)
        case "agree":
            group = window.group if isinstance(window, InitiativeTied) else tuple(names[:2])
            order = draw(st.permutations(group))
            return f"agree {order}", lambda: fight.agree_initiative(order)
        case "roll_off":
            return "roll off", fight.roll_off
        case "defend":
            who = window.defender if isinstance(window, ActiveDefenseWindowOpened) else _who(draw, rf)
            eligible = list(window.eligible) if isinstance(window, ActiveDefenseWindowOpened) else []
            defense = draw(st.sampled_from([*eligible * 4, None, None, "dodge", "parry", "block"]))
            weapon = _weapon(draw, rf, who) if defense == "parry" else None
            weapon = None if weapon == "unarmed" else weapon
            return f"defend {who} {defense} {weapon}", lambda: fight.defend(who, defense, weapon)
        case "react" | "pass":
            waiting = [w for w in window.responders if state.pending is not None and w not in state.pending.answered] \
                if isinstance(window, ReactionWindowOpened) else []
            who = draw(st.sampled_from(waiting * 6 + names)) if names else "zed"
            if kind == "pass":
                return f"pass {who}", lambda: fight.pass_reaction(who)
            weapon = _weapon(draw, rf, who, melee=True)
            return (f"react {who} {weapon}",
                    lambda: fight.react(who, weapon=None if weapon == "unarmed" else weapon,
                                        unarmed=weapon == "unarmed"))
        case "decide":
            opened = window if isinstance(window, DecisionOpened) else None
            asked = list(opened.responders) if opened is not None else []
            who = draw(st.sampled_from(asked * 9 + names)) if asked or names else "zed"
            choice = draw(st.sampled_from([*(opened.choices * 4 if opened else ()), "bogus"]))
            decision = opened.decision if opened is not None else "arcane_ward"
            return f"decide {decision} {who} {choice}", lambda: fight.answer_decision(decision, who, choice)
        case "catch":
            who = window.target if isinstance(window, CatchWindowOpened) and draw(st.integers(0, 9)) < 9 \
                else _who(draw, rf)
            caught = draw(st.sampled_from((True, False)))
            return f"catch {who} {caught}", lambda: fight.catch(who, caught)
        case "route":
            who = window.attacker if isinstance(window, RoutingWindowOpened) else _who(draw, rf)
            size = len(window.dice) if isinstance(window, RoutingWindowOpened) else 2
            die = draw(st.none() | st.integers(0, size))
            return f"route {who} {die}", lambda: fight.route(who, die)
        case "will":
            who = window.who if isinstance(window, WillConversionOffered) and draw(st.integers(0, 9)) < 9 \
                else _who(draw, rf)
            convert = draw(st.booleans())
            return f"will {who} {convert}", lambda: fight.choose_will_conversion(who, convert)
        case "engage":
            who = _who(draw, rf)
            side = state.combatants[who].side if who in state.combatants else None
            foes = [c for c in names if state.combatants[c].side != side]
            others = draw(st.lists(st.sampled_from(foes * 6 + names), min_size=1, max_size=2, unique=True)) \
                if names else []
            engaged = draw(st.sampled_from((True, True, True, False)))
            return f"engage {who} {others} {engaged}", lambda: fight.engage(who, *others, engaged=engaged)
        case "condition":
            who, condition, stacks = _who(draw, rf), draw(st.sampled_from(CONDITIONS)), draw(st.integers(1, 2))
            return f"apply {condition} x{stacks} {who}", lambda: fight.apply_condition(who, condition, stacks, "GM")
        case "clear":
            marked = [c for c, f in state.combatants.items() if f.conditions]
            who = draw(st.sampled_from(marked * 4 + names + ["zed"]))
            held = list(state.combatants[who].conditions) if who in state.combatants else []
            condition = draw(st.sampled_from(held * 4 + ["Prone"]))
            return f"clear {condition} {who}", lambda: fight.clear_condition(who, condition, "GM")
        case "check":
            who = _who(draw, rf)
            fog = (Modifier(source="fog", value=2),)
            spec = draw(st.sampled_from((CheckSpec(who=who, attribute="AGI"), CheckSpec(who=who, skill="Athletics"),
                                         CheckSpec(who=who, skill="Stealth", modifiers=fog))))
            difficulty = draw(st.integers(0, 14))
            return f"check {who} {difficulty}", lambda: fight.static_check(spec, difficulty)
        case "contest":
            a, b = _who(draw, rf), _who(draw, rf)
            return f"contest {a} {b}", lambda: fight.contest(CheckSpec(who=a, skill="Stealth"),
                                                             CheckSpec(who=b, skill="Perception"))
        case "leave":
            who = _who(draw, rf)
            reason = draw(st.sampled_from(("fled", "yielded", "dead")))
            return f"leave {who} {reason}", lambda: fight.leave_fight(who, reason, note="random leave")
        case "end_fight":
            reason = draw(st.sampled_from(("gm", "gm", "yielded", "fled", "defeated")))
            side = draw(st.sampled_from((None, *SIDES))) if reason == "gm" else draw(st.sampled_from(SIDES))
            return f"end fight {reason} {side}", lambda: fight.end_fight(reason, side, note="random end")
        case "draw":
            who = _actor(draw, rf)
            fighter = state.combatants.get(who)
            sheathed = [w.id for w in fighter.sheet.weapons if w.id not in fighter.wielding] if fighter else []
            weapon = draw(st.sampled_from(sheathed * 4 + ["sword"]))
            return f"draw {who} {weapon}", lambda: fight.draw(who, weapon)
        case "attack":
            attacker = _actor(draw, rf)
            target = _enemy(draw, rf, attacker)
            weapon = _weapon(draw, rf, attacker)
            fighter = state.combatants.get(attacker)
            rage = fighter is not None and fighter.sheet.features.rage is not None and draw(st.booleans())
            high = draw(st.sampled_from((False,) * 4 + (True,)))
            circle = draw(st.sampled_from((None,) * 4 + ((3, 1), (1, 2))))
            branches, mods = draw(st.sampled_from(BRANCHES)), draw(st.sampled_from(DAMAGE_MODIFIERS))
            return (f"attack {attacker}->{target} {weapon}{' rage' if rage else ''}",
                    lambda: fight.attack(attacker, target, weapon=None if weapon == "unarmed" else weapon,
                                         unarmed=weapon == "unarmed", high_ground=high, encircled=circle, rage=rage,
                                         damage_modifiers=mods, branches=branches))
        case "save":
            caller = _actor(draw, rf)
            saver, effect = _enemy(draw, rf, caller), draw(st.sampled_from(EFFECTS))
            return f"save {effect.name} {caller}->{saver}", lambda: fight.call_save(caller, saver, effect)
        case "ability":  # an ability used on one's turn (C37): mostly one the actor has, on anyone or itself
            who = _actor(draw, rf)
            mine = [a.id for a in state.combatants[who].sheet.written_abilities()] if who in state.combatants else []
            ability = draw(st.sampled_from(mine * 6 + ["healing_word", "bogus"]))
            aim: str | None = draw(st.sampled_from([None, *names, "zed"])) if names else None
            return (f"ability {who} {ability} {aim}",
                    lambda: fight.execute(UseAbility(who=who, ability=ability, target=aim)))
        case "move":
            who = _actor(draw, rf)
            near = state.engaged_with(who) if who in state.combatants else []
            foes = [c for c in near if state.combatants[c].side != state.combatants[who].side]
            some = draw(st.sampled_from((1, 1, 1, 0))) if near else draw(st.sampled_from((0, 0, 0, 1)))
            leaves = draw(st.lists(st.sampled_from(foes * 8 + near * 2 + names), min_size=some, max_size=2,
                                   unique=True)) if names else []
            return f"move {who} leaves {leaves}", lambda: fight.move(who, leaves)
        case "ambush":
            first = draw(st.sampled_from(SIDES))
            mine = [c for c in names if state.combatants[c].side == first]
            theirs = [c for c in names if state.combatants[c].side != first]
            ambushers = draw(st.lists(st.sampled_from(mine), min_size=1, unique=True)) if mine else []
            defenders = draw(st.lists(st.sampled_from(theirs), min_size=1, unique=True)) if theirs else []
            if draw(st.booleans()):
                waited = draw(st.sampled_from(TIME_WAITED))
                return (f"ambush {ambushers} on {defenders} {waited}",
                        lambda: fight.ambush(ambushers, defenders, time_waited=waited))
            difficulty = draw(st.integers(2, 16))
            return (f"ambush {ambushers} on {defenders} difficulty {difficulty}",
                    lambda: fight.ambush(ambushers, defenders, difficulty=difficulty))
        case "initiative":
            blessing = (Modifier(source="blessing", value=2),)
            blessed: dict[str, tuple[Modifier, ...]] = {names[0]: blessing} if names else {}
            bonuses = draw(st.sampled_from(({}, {}, blessed)))
            return f"initiative {bonuses}", lambda: fight.roll_initiative(bonuses)
        case "end_turn":
            who = _actor(draw, rf)
            return f"end turn {who}", lambda: fight.end_turn(who)
        case "disengage":
            who = _actor(draw, rf)
            return f"disengage {who}", lambda: fight.disengage(who)
        case "stand_up":
            who = _actor(draw, rf)
            return f"stand up {who}", lambda: fight.stand_up(who)
    raise AssertionError(kind)


# -- the strategy -------------------------------------------------------------------------------


def _face(sides: int) -> st.SearchStrategy[int]:
    """A face on a d``sides``, the extremes (crits, misses) more often than by chance."""
    return st.integers(1, sides) | st.sampled_from((1, sides))


@st.composite
def fights(draw: Draw, max_commands: int = 40, min_combatants: int = 2, max_combatants: int = 4,
           abilities: tuple[str, ...] = ()) -> RandomFight:
    """A fight of 2-4 combatants on two sides, each listing the ``abilities`` given (and perhaps others), then up to
    ``max_commands`` commands, each drawn among those worth trying in the state the fight is in (now and then any
    command at all, to be refused).

    Dice are manual (each face drawn, now and then an impossible one), seeded (a drawn seed) or scripted
    (faces fed before each command, none larger than the fight's smallest die). Undo and redo come at random
    points. Every refused command is checked to have changed nothing: log, version, state and dice.
    """
    n = draw(st.integers(min_combatants, max_combatants))
    teams = [SIDES[0], SIDES[1], *(draw(st.sampled_from(SIDES)) for _ in range(n - 2))]
    sheets = [draw(combatants(cid, side, abilities)) for cid, side in zip(NAMES[:n], teams, strict=True)]
    if draw(st.booleans()):  # one AGI for all: initiative ties, among allies too, become likely
        agi = sheets[0].attributes.AGI
        sheets = [replace(s, attributes=replace(s.attributes, AGI=agi)) for s in sheets]
    kind = draw(st.sampled_from(("manual", "manual", "seeded", "scripted")))
    seed = None
    roll_offs = [0]  # roll-off rolls in the current command
    if kind == "manual":
        rng = random.Random(draw(st.integers(0, 2**32)))

        def ask(request: RollRequest) -> list[int]:
            if request.purpose == "roll_off":
                roll_offs[0] += 1
                if roll_offs[0] > 6:  # foes roll off until the tie breaks: stop drawing the same faces forever
                    return [rng.randint(1, sides) for _, sides in request.pool]
            if draw(st.integers(0, 199)) == 99:
                return [0] * len(request.pool)  # a mistyped face: the roll is refused
            tie = request.purpose == "initiative" and draw(st.booleans())
            return [draw(st.integers(1, 2) if tie else _face(sides)) for _, sides in request.pool]

        dice: DiceSource = ManualDice(ask)
    elif kind == "seeded":
        seed = draw(st.binary(min_size=16, max_size=32))
        # the fresh seeds a mid-fight reveal commits to (C42), made from the first: the same fight every run
        dice = SeededDice(seed, (hashlib.sha256(seed + n.to_bytes(4, "big")).digest() for n in itertools.count(1)))
    else:
        dice = ScriptedDice([])
    clock = itertools.count(1_800_000_000_000, 997).__next__
    fight = Fight.start(MemoryStore(), draw(st.sampled_from(("random", "rf-1", "fight.2"))), dice=dice, clock=clock,
                        title=draw(st.sampled_from(("", "A random fight", "<Fight & \"friends\">"))))
    rf = RandomFight(fight, kind, seed)
    rf.record()
    for s in sheets:
        fight.join(s)
        rf.record()
    rf.joined = fight.version
    most = _sides(sheets)
    while len(rf.played) < max_commands:
        if isinstance(dice, ScriptedDice) and dice.remaining < 12:
            dice.feed(draw(st.lists(st.integers(1, most), min_size=12, max_size=12)))
        wild = draw(st.integers(0, 11)) == 11
        kind = draw(st.sampled_from(EVERY if wild else _menu(rf)))
        if kind == "stop":
            break
        roll_offs[0] = 0
        rf.attempt(*_command(draw, rf, kind))
    return rf
