"""Two worlds a seat cannot tell apart: one random fight played twice, the second with every secret changed.

World A and world B differ only in what a player or spectator may not see (docs/server.md, "Threat model"): the
hidden combatant's id, name, side, weapon and HP; the visible raider's weapon ids and names, its Stealth level (its
Stealth faces lowered by as much, so every Stealth total is the same), its weapon's hit bonus and damage (both one
higher in world B, its primary faces with the weapon one lower: the same hit totals, the same damage) and,
where the HP display hides it, its HP; the
GM's notes and the free text of the GM's commands; the seed (every command carries its faces, so no seeded die is
ever drawn from it). The GM's commands are the same in both, renamed. :class:`Transcript` keeps every answer each
player and spectator seat is given; :func:`canonical` replaces opaque values (hashes, salts, tags, commitments,
tokens, times, the fight id) by the order of their first appearance, so that two transcripts compare equal exactly
when the two worlds are indistinguishable to that seat.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from omen_core import Fight, ManualDice, MemoryStore, SeededDice
from omen_core.commands import Command
from omen_core.content import (
    ApplyCondition,
    Armor,
    CombatantSheet,
    DealDamage,
    Features,
    SaveEffect,
    Shield,
    Training,
    Weapon,
)
from omen_core.decide import decided
from omen_core.dice import FacesNeeded
from omen_core.errors import OmenError
from tests.sheets import sheet

__all__ = ["World", "WORLDS", "PLAYERS", "SPECTATOR", "Step", "Plan", "plan", "in_world", "world_b", "Transcript",
           "first_difference", "Table", "play"]


@dataclass(frozen=True)
class World:
    """The secrets of one world."""

    hidden: str
    hidden_name: str
    hidden_side: str
    hidden_weapon: str
    hidden_weapon_name: str
    raider_weapon: str
    raider_weapon_name: str
    raider_stealth: int
    raider_edge: int
    note: str
    free_text: str
    hidden_hp_extra: int = 0
    raider_hp_extra: int = 0

    def renamed(self, other: World) -> dict[str, str]:
        """What each of this world's secret names is called in ``other``."""
        return {self.hidden: other.hidden, self.hidden_side: other.hidden_side,
                self.hidden_weapon: other.hidden_weapon, self.raider_weapon: other.raider_weapon,
                self.free_text: other.free_text}


WORLDS = (
    World(hidden="zqskarn", hidden_name="Skarn Gutterjaw", hidden_side="zqcult", hidden_weapon="zqaxe",
          hidden_weapon_name="Bone Axe", raider_weapon="zqhatchet", raider_weapon_name="Rust Hatchet",
          raider_stealth=1, raider_edge=1, note="flees at half", free_text="the GM's aside"),
    World(hidden="zqmorg", hidden_name="Morg the Quiet", hidden_side="zqcoven", hidden_weapon="zqclub",
          hidden_weapon_name="Oak Club", raider_weapon="zqcleaver", raider_weapon_name="Grey Cleaver",
          raider_stealth=3, raider_edge=2, note="fights to the death", free_text="a secret of the GM"),
)
#: The players' seats: who plays what (the third seat is a spectator's).
PLAYERS = {"alice": ("kael",), "bob": ("brin",)}
SPECTATOR = "watcher"


def sheets(world: World) -> list[CombatantSheet]:
    """The four combatants of a world: Kael (Alice's; Will conversion by choice, and Healing Word, an ability used
    on one's turn), Brin (Bob's; Rogue routing and the Arcane Ward, so Bob answers a decision point of an
    extension's, and Regeneration, which answers the start of his turn: a moment of the round),
    Vesh the raider (visible, not played) and the hidden one, alone on its own side."""
    kael = msgspec.structs.replace(
        sheet("kael", "heroes", hp=24, will=6, STR=(8, 2), AGI=(6, 1), RES=(8, 1), FCS=(6, 1), INT=(4, 0)),
        name="Kael Arden", armor=Armor(rating=1),
        weapons=(Weapon(id="sword", weapon_damage=3, parry_rating=1),
                 Weapon(id="knife", weapon_damage=1, damage_type="piercing",
                        properties=frozenset({"thrown", "ranged"}))),  # thrown: its target may Catch it (C22)
        features=Features(will_conversion="choice"), abilities=("healing_word",))
    brin = msgspec.structs.replace(
        sheet("brin", "heroes", hp=18, will=4, AGI=(8, 1), RES=(6, 1), FCS=(8, 2), STR=(6, 0)),
        name="Brin Hollowmere", shield=Shield(block_rating=1),
        weapons=(Weapon(id="dagger", weapon_damage=2, damage_type="piercing", properties=frozenset({"finesse"})),
                 Weapon(id="bow", weapon_damage=2, damage_type="piercing", properties=frozenset({"ranged"}))),
        wielding=("dagger", "bow"), features=Features(rogue_routing=True), abilities=("arcane_ward", "regeneration"))
    vesh = msgspec.structs.replace(
        sheet("vesh", "raiders", hp=26 + world.raider_hp_extra, will=3, AGI=(6, 1), STR=(8, 1), RES=(6, 1),
              skills={"Stealth": ("AGI", world.raider_stealth)}),
        name="Vesh the Cinder-Hand",
        weapons=(Weapon(id=world.raider_weapon, name=world.raider_weapon_name, hit_bonus=world.raider_edge,
                        weapon_damage=1 + world.raider_edge, properties=frozenset({"thrown"})),),
        training=Training(hit_bonus=1))
    hidden = msgspec.structs.replace(
        sheet(world.hidden, world.hidden_side, hp=9 + world.hidden_hp_extra, will=2, AGI=(6, 1), STR=(8, 2),
              RES=(8, 0)),
        name=world.hidden_name,
        weapons=(Weapon(id=world.hidden_weapon, name=world.hidden_weapon_name, weapon_damage=3),))
    return [kael, brin, vesh, hidden]


def creation(world: World, fight_id: str, dice: str, hp_display: str) -> dict[str, Any]:
    """The body of ``POST /fights`` for a world."""
    return {"id": fight_id, "title": "Two worlds", "dice": dice, "hp_display": hp_display,
            "combatants": [msgspec.to_builtins(s) for s in sheets(world)], "hidden": [world.hidden],
            "notes": {"fight": world.note, world.hidden: world.note, "vesh": world.note}}


# -- the plan: the GM's commands, drawn from world A's options ---------------------------------------------

#: How often the GM picks each command when it is offered (answers to an open decision come first anyway).
WEIGHTS = {"declare_attack": 14, "end_turn": 6, "move": 4, "apply_condition": 3, "call_save": 3, "engage": 4,
           "disengage": 1, "draw": 1, "undo": 2, "redo": 3, "clear_condition": 1, "static_check": 1, "contest": 1,
           "begin_ambush": 6, "roll_initiative": 8, "leave_fight": 1, "end_fight": 1, "reveal_seed": 1,
           "cancel_action": 1, "use_ability": 3}
_ANSWERS = {"answer_active_defense", "react", "pass_reaction", "answer_catch", "route_damage",
            "choose_will_conversion", "agree_initiative", "roll_off", "answer_decision"}
#: The GM's commands whose free text is the GM's (varied between the worlds).
FREE_TEXT = {"leave_fight": "note", "end_fight": "note", "cancel_action": "reason"}
#: The reason of a condition the GM applies or clears is told to the table (omen_server.views.TOLD_REASONS): the
#: same in both worlds.
TOLD_TEXT = "told to the table"
SAVE = SaveEffect(name="cinder flask", save="AGI", against="STR", action_cost=1,
                  on_failure=(DealDamage(flat=2, damage_type="fire"), ApplyCondition(condition="Prone")))
_JUNK_TARGETS = ("vesh", "kael", "brin", "zqskarn", "zqmorg", "nobody", "Skarn Gutterjaw")
_JUNK_WEAPONS = ("sword", "dagger", "zqaxe", "zqclub", "zqhatchet", "zqcleaver", "nope")


@dataclass
class Step:
    """One command of the plan, in world A's names: whether it is a player's junk (given by that player as is, most
    likely refused), and where the raider's Stealth faces and its primary faces with its weapon sit in its ``dice``
    (lowered in world B)."""

    body: dict[str, Any]
    junk: str = ""
    stealth: tuple[int, ...] = ()
    primary: tuple[int, ...] = ()
    rollers: frozenset[str] = frozenset()


@dataclass
class Plan:
    """The commands to play, the table settings, and what world A's dry run went through."""

    steps: list[Step]
    hp_display: str
    dice: str
    hp_safe: tuple[bool, bool] = (False, False)
    kinds: set[str] = field(default_factory=set)


def _faces(rng: random.Random, choice: dict[str, Any], body: dict[str, Any]) -> tuple[list[int], tuple[int, ...]]:
    """Faces for every die a choice rolls (C29 order), and the indices of the raider's Stealth faces, drawn high
    enough for world B to roll as much lower. The raider's primary dice with its weapon may be lowered too: every
    face it rolls is drawn that high (which of them are is known only once the command is decided)."""
    faces: list[int] = []
    stealth: list[int] = []
    for roll in choice["dice"]:
        mine = roll["roller"] == "vesh"
        is_stealth = mine and _is_stealth(roll, body)
        for die in roll["dice"]:
            if is_stealth:
                stealth.append(len(faces))
            shift = _SHIFTS["stealth"] if is_stealth else _SHIFTS["primary"] if mine else 0
            faces.append(rng.randint(min(1 + shift, die["sides"]), die["sides"]))
    return faces, tuple(stealth)


def _armed(events: list[Any], weapons: dict[int, str | None]) -> tuple[int, ...]:
    """Where, among the faces a command carried, the raider's primary dice of an attack with its weapon are: read
    off the events it produced (each roll takes the next faces, in order) and the weapon of each of the raider's
    attacks (``weapons``, by action: kept up to date here, for an attack rolled by a later command, as passing a
    reaction rolls the attack that goes on)."""
    weapons |= {e.action: e.weapon for e in events if type(e).__name__ == "AttackDeclared" and e.attacker == "vesh"}
    found: list[int] = []
    at = 0
    for e in events:
        if type(e).__name__ != "DiceRolled":
            continue
        armed = e.roller == "vesh" and e.purpose == "hit" and weapons.get(e.action) == WORLDS[0].raider_weapon
        found += [at + i for i, die in enumerate(e.dice) if armed and die.pool == "primary"]
        at += len(e.dice)
    return tuple(found)


#: How much lower world B rolls the raider's marked faces.
_SHIFTS = {"stealth": WORLDS[1].raider_stealth - WORLDS[0].raider_stealth,
           "primary": WORLDS[1].raider_edge - WORLDS[0].raider_edge}


def _is_stealth(roll: dict[str, Any], body: dict[str, Any]) -> bool:
    """Whether a roll of the raider's is a Stealth roll (its total holds its Stealth level)."""
    if roll["purpose"] == "stealth":
        return True
    specs = [body.get("check"), body.get("initiator"), body.get("defender")]
    return roll["purpose"] == "check" and any(isinstance(s, dict) and s.get("who") == "vesh"
                                                and s.get("skill") == "Stealth" for s in specs)


def _tied(fight: Fight, body: dict[str, Any], faces: list[int], rng: random.Random) -> list[int]:
    """Faces for an initiative roll or roll-off that leave two combatants tied (C19), if a few tries find some
    (each tried with ``decided``, which appends nothing); else ``faces``."""
    for _ in range(30):
        tried = [rng.randint(1, 6) for _ in faces]
        command = msgspec.convert({**body, "dice": tried}, type=Command)
        try:
            events = decided(fight.state, command, ManualDice()).events
        except OmenError:
            continue
        if any(type(e).__name__ == "InitiativeTied" for e in events):
            return tried
    return faces


#: Conditions the GM may apply before the fight begins: Brin Unseen (Rogue routing on its first hit, C12, C27) and
#: the raider Fatigued (it ticks at each round's end, C28).
_OPENINGS = (("brin", "Unseen"), ("vesh", "Fatigued"))


def _condition(rng: random.Random, choices: list[dict[str, Any]], choice: dict[str, Any]) -> dict[str, Any]:
    """Which condition the GM applies, biased to what the property must go through: Brin Unseen (Rogue routing,
    C12), and conditions that tick (Fatigued at the round's end, Paralysed at the turn's end: C28)."""
    roll = rng.random()
    wanted = ("Unseen",) if roll < 0.35 else ("Fatigued", "Paralysed") if roll < 0.7 else ()
    fitting = [c for c in choices if c["args"]["condition"] in wanted and (wanted != ("Unseen",)
                                                                            or c["args"]["who"] == "brin")]
    return rng.choice(fitting) if fitting else choice


def _pick(rng: random.Random, offers: list[dict[str, Any]], waiting: bool, fight: Fight) -> dict[str, Any] | None:
    """An offer, by :data:`WEIGHTS` (an open decision's answers first; an Unseen Brin's attack, for Rogue routing,
    and a Paralysed combatant's end of turn, for its tick, more often)."""
    state = fight.state
    hidden_rogue = state.turn == "brin" and "Unseen" in state.combatants["brin"].conditions
    ticking = state.turn is not None and "Paralysed" in state.combatants[state.turn].conditions

    def weight(offer: dict[str, Any]) -> int:
        if waiting and offer["command"] in _ANSWERS:
            return 40
        if hidden_rogue and offer["command"] == "declare_attack" and offer["actor"] == "brin":
            return 60
        if ticking and offer["command"] == "end_turn":
            return 40
        return WEIGHTS.get(offer["command"], 0)

    weighted = [(o, weight(o)) for o in offers if o["choices"]]
    weighted = [(o, w) for o, w in weighted if w > 0]
    if not weighted:
        return None
    chosen = rng.choices([o for o, _w in weighted], weights=[w for _o, w in weighted])[0]
    if chosen["command"] == "undo" and 0 < state.undo_point <= _setup_end(fight):  # the server offers no such undo
        weighted = [(o, w) for o, w in weighted if o["command"] != "undo"]
        return rng.choices([o for o, _w in weighted], weights=[w for _o, w in weighted])[0] if weighted else None
    return chosen


def _setup_end(fight: Fight) -> int:
    """The last seq of the fight's set-up (its opening fight_started and combatant_joined events), which an undo over
    HTTP does not reach (omen_server.app.refuse_setup_undo)."""
    end = 0
    for rec in fight.store.read(fight.fight_id):
        if type(rec.event).__struct_config__.tag not in ("fight_started", "combatant_joined"):
            break
        end = rec.seq
    return end


def _refused(fight: Fight, body: dict[str, Any]) -> bool:
    """Whether the rules refuse ``body`` now, whatever its faces (a command they would take given its faces is
    not refused: a seeded fight would roll them)."""
    try:
        decided(fight.state, msgspec.convert(body, type=Command), ManualDice())
    except FacesNeeded:
        return False
    except (OmenError, msgspec.ValidationError):
        return True
    return False


def _junk(rng: random.Random) -> Step:
    """A player's command that may well be refused: naming what it cannot see, gear that is not its own."""
    who = rng.choice(list(PLAYERS))
    own = PLAYERS[who][0]
    kind = rng.choice(["declare_attack", "draw", "react", "move", "answer_active_defense"])
    body: dict[str, Any] = {"command": kind}
    if kind == "declare_attack":
        body |= {"attacker": own, "target": rng.choice(_JUNK_TARGETS), "weapon": rng.choice(_JUNK_WEAPONS)}
    elif kind in ("draw", "react"):
        body |= {"who": own, "weapon": rng.choice(_JUNK_WEAPONS)}
    elif kind == "move":
        body |= {"who": own, "leaves": [rng.choice(_JUNK_TARGETS)]}
    else:
        body |= {"defender": own, "defense": "parry", "weapon": rng.choice(_JUNK_WEAPONS)}
    return Step(body=body, junk=who)


def plan(seed: int, length: int, dice: str, hp_display: str) -> Plan:
    """World A's fight, played in memory: ``length`` commands picked (by a generator seeded with ``seed``) from the
    GM's options with the weights above, each with its faces, and a player's junk command now and then. Whether
    world B may add HP to the hidden combatant and to the raider: only where world A's never fell to 0."""
    rng = random.Random(seed)
    world = WORLDS[0]
    source = SeededDice(bytes(32)) if dice == "seeded" else ManualDice()
    fight = Fight.start(MemoryStore(), "plan", dice=source, clock=lambda: 0, combatants=sheets(world))
    steps: list[Step] = []
    lowest = {world.hidden: fight.state.combatants[world.hidden].hp, "vesh": fight.state.combatants["vesh"].hp}
    weapons: dict[int, str | None] = {}
    for who, condition in _OPENINGS:  # now and then, what the rare situations need, set up before the first blow
        if rng.random() < 0.5:
            body: dict[str, Any] = {"command": "apply_condition", "who": who, "condition": condition,
                                    "reason": TOLD_TEXT}
            fight.execute(msgspec.convert(body, type=Command))
            steps.append(Step(body=body))
    for _ in range(length):
        if rng.random() < 0.12:
            junk = _junk(rng)
            if _refused(fight, junk.body):  # junk the rules would take would move the fight off the plan
                steps.append(junk)
        options = msgspec.to_builtins(fight.options())
        offer = _pick(rng, list(options["offers"]), options["waiting"] is not None, fight)
        if offer is None:
            break
        choice = rng.choice(offer["choices"])
        if offer["command"] == "apply_condition":
            choice = _condition(rng, offer["choices"], choice)
        body = {"command": offer["command"], **choice["args"]}
        if offer["command"] == "call_save":
            offered = msgspec.convert(body["effect"], SaveEffect)  # (its defaults left out, as a line leaves them)
            effect = msgspec.structs.replace(SAVE, action_cost=offered.action_cost)
            body["effect"] = msgspec.to_builtins(effect)
        if offer["command"] in FREE_TEXT and FREE_TEXT[offer["command"]] != "note":
            body[FREE_TEXT[offer["command"]]] = world.free_text  # a note: none in world A, one in world B (in_world)
        elif offer["command"] in ("apply_condition", "clear_condition"):
            body["reason"] = TOLD_TEXT
        faces, stealth = _faces(rng, choice, body)
        if body["command"] in ("roll_initiative", "roll_off") and len(faces) > 1 and rng.random() < 0.8:
            faces = _tied(fight, body, faces, rng)
        if faces:
            body["dice"] = faces
        given = {**body, "seed": bytes(32).hex()} if body["command"] == "reveal_seed" else body
        try:
            stored = fight.execute(msgspec.convert(given, type=Command))
        except OmenError:
            continue  # the save's own effect may be refused where the offered one was not
        primary = _armed([r.event for r in stored], weapons)
        rollers = frozenset(roll["roller"] for roll in choice["dice"])
        steps.append(Step(body=body, stealth=stealth, primary=primary, rollers=rollers))
        now = fight.state.combatants  # an undo may take back a join
        lowest = {who: min(hp, now[who].hp) if who in now else hp for who, hp in lowest.items()}
    records = list(fight.store.read("plan"))
    kinds = {str(type(r.event).__struct_config__.tag) for r in records}
    kinds |= situations([msgspec.to_builtins(r.event) for r in records], world.hidden)
    return Plan(steps=steps, hp_display=hp_display, dice=dice, kinds=kinds,
                hp_safe=(lowest[world.hidden] > 0, lowest["vesh"] > 0))


def situations(events: list[dict[str, Any]], hidden: str) -> set[str]:
    """What else a fight went through that the property must have seen: the hidden combatant leaving the fight or
    falling to 0 HP."""
    found: set[str] = set()
    for e in events:
        if e["type"] == "combatant_left" and e["who"] == hidden:
            found.add("the hidden combatant left")
        if e["type"] == "resource_changed" and e["who"] == hidden and e["resource"] == "hp" and e["after"] <= 0:
            found.add("the hidden combatant fell")
    return found


def world_b(the_plan: Plan) -> World:
    """World B, with extra HP for the hidden combatant and the raider where that changes nothing a seat sees."""
    hidden_safe, raider_safe = the_plan.hp_safe
    return World(**{**WORLDS[1].__dict__, "hidden_hp_extra": 7 if hidden_safe else 0,
                    "raider_hp_extra": 9 if raider_safe and the_plan.hp_display == "hidden" else 0})


def in_world(step: Step, world: World) -> dict[str, Any]:
    """A command of world A's plan as it is given in ``world``: secret names renamed, the raider's Stealth faces
    lowered by the difference in its Stealth level, its primary faces with its weapon by the difference in the
    weapon's hit bonus (and damage)."""
    if step.junk:
        return step.body
    names = WORLDS[0].renamed(world)
    body = json.loads(json.dumps(step.body), object_hook=lambda d: {k: _rename(v, names) for k, v in d.items()})
    stealth = world.raider_stealth - WORLDS[0].raider_stealth
    primary = world.raider_edge - WORLDS[0].raider_edge
    if "dice" in body:
        body["dice"] = [f - stealth if i in step.stealth else f - primary if i in step.primary else f
                        for i, f in enumerate(body["dice"])]
    if FREE_TEXT.get(str(body["command"])) == "note" and world.free_text != WORLDS[0].free_text:
        body["note"] = world.free_text  # the GM's note, written in one world and not the other: the log holds it or
        # leaves the field out, and no seat may tell which (a withheld list told: found by a tester)
    return dict(body)


def _rename(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [names.get(v, v) if isinstance(v, str) else v for v in value]
    return value


# -- the transcript of what the seats are given ------------------------------------------------------------


#: Hashes, salts, tags; a hash cut short; a staged command's id.
_HEX = re.compile(r"\b[0-9a-f]{64}\b|\b[0-9a-f]{32}\b|\b[0-9a-f]{12}\b|\b[0-9a-f]{10}\b")
_TOKEN = re.compile(r"omen_(?:gm|player|spectator)_[A-Za-z0-9_-]{43}")
_OPAQUE_FIELDS = ("salt", "seed", "seed_commitment", "x-table-tag", "hash", "prev_hash")


class Transcript:
    """Every answer the player and spectator seats of one world are given, in order: (what was asked, the status,
    its headers but the date, the body)."""

    def __init__(self, fight_id: str) -> None:
        self.fight_id = fight_id
        self.entries: list[tuple[str, int, dict[str, str], Any]] = []

    def add(self, label: str, answer: httpx.Response, headers: tuple[str, ...] | None = None) -> None:
        """Keep one answer, with ``headers`` (by default every header but ``date``, and the length of a compressed
        body, which varies with the random salts and hashes it compresses)."""
        if headers is None:
            skip = {"date", "content-length"} if "content-encoding" in answer.headers else {"date"}
            headers = tuple(h for h in answer.headers if h not in skip)
        kind = answer.headers.get("content-type", "")
        body: Any = answer.json() if "json" in kind and answer.content else answer.text
        self.entries.append((label, answer.status_code, {h: answer.headers.get(h, "") for h in headers}, body))

    def canonical(self) -> list[Any]:
        """The entries with opaque values replaced by the order they first appear in (see the module doc)."""
        seen: dict[str, str] = {}

        def opaque(text: str) -> str:
            return seen.setdefault(text, f"<#{len(seen)}>")

        def fix(value: Any, key: str = "") -> Any:
            if isinstance(value, dict):
                return {k: fix(v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [fix(v) for v in value]
            if isinstance(value, str):
                if key.lower() in _OPAQUE_FIELDS and value:
                    return opaque(value)
                text = value.replace(self.fight_id, "<fight>")
                text = _TOKEN.sub(lambda m: opaque(m.group()), text)
                return _HEX.sub(lambda m: opaque(m.group()), text)
            if key == "recorded_at" and isinstance(value, int):
                return 0
            return value

        return [fix(list(entry)) for entry in self.entries]


def first_difference(a: Transcript, b: Transcript) -> str | None:
    """Where two worlds' transcripts first differ, shown around the first differing character; None if they are
    the same."""
    left, right = a.canonical(), b.canonical()
    for n, (x, y) in enumerate(zip(left, right, strict=False)):
        if x != y:
            one, two = json.dumps(x, sort_keys=True), json.dumps(y, sort_keys=True)
            at = next((i for i, (p, q) in enumerate(zip(one, two, strict=False)) if p != q), min(len(one), len(two)))
            return (f"entry {n} ({x[0]}) differs at character {at}:\n  A: ...{one[max(0, at - 600):at + 400]}\n"
                    f"  B: ...{two[max(0, at - 600):at + 400]}")
    if len(left) != len(right):
        return f"A has {len(left)} entries, B {len(right)}"
    return None


# -- playing both worlds in step ---------------------------------------------------------------------------


class Seated:
    """A fight made on a server, seen from each seat: its client, the GM's token and each seat's, and the
    transcript of what the seats were answered."""

    client: httpx.Client
    fight_id: str

    def seat_everyone(self, made: httpx.Response) -> None:
        """The GM's token from the fight ``made``, then a seat for each player and the spectator."""
        self.gm = made.json()["gm_token"]
        self.tokens: dict[str, str] = {}
        for who, plays in [*PLAYERS.items(), (SPECTATOR, ())]:
            kind = "spectator" if who == SPECTATOR else "player"
            seat = self.call("POST", "/seats", self.gm, {"kind": kind, "name": who.title(), "combatants": plays})
            assert seat.status_code == 201, seat.text
            self.tokens[who] = seat.json()["token"]
        self.transcript = Transcript(self.fight_id)

    def call(self, method: str, path: str, token: str, body: Any = None,
             headers: dict[str, str] | None = None) -> httpx.Response:
        """One request to this fight's resources (``path`` after ``/fights/{id}``)."""
        return self.client.request(method, f"/fights/{self.fight_id}{path}", json=body,
                                   headers={"Authorization": f"Bearer {token}", **(headers or {})})

    def seen(self, who: str, label: str, method: str, path: str, body: Any = None,
             send: dict[str, str] | None = None) -> httpx.Response:
        """A seat's request, kept in the transcript with every header of its answer (``date`` aside)."""
        answer = self.call(method, path, self.tokens[who], body, send)
        self.transcript.add(f"{who} {label}", answer)
        return answer


class Table(Seated):
    """One world's fight on a server: its client, the GM's token and each seat's, and the transcript."""

    def __init__(self, client: httpx.Client, world: World, fight_id: str, the_plan: Plan, headers: dict[str, str]):
        self.client, self.world, self.fight_id = client, world, fight_id
        made = client.post("/fights", json=creation(world, fight_id, the_plan.dice, the_plan.hp_display),
                           headers=headers)
        assert made.status_code == 201, made.text
        self.seat_everyone(made)

    def offered(self, who: str, body: dict[str, Any]) -> bool:
        """Whether ``who``'s own options offer ``body`` (its command and arguments, faces aside)."""
        offers = self.call("GET", "/options", self.tokens[who]).json()["options"]["offers"]
        args = {k: v for k, v in body.items() if k not in ("command", "dice")}
        return any(o["command"] == body["command"] and args in [c["args"] for c in o["choices"]] for o in offers)

    def look(self, tag: dict[str, str]) -> None:
        """Every seat reads its state, options and table fragment, sending the tag of the fragment it had (a 204
        while its view is unchanged)."""
        for who in self.tokens:
            self.seen(who, "state", "GET", "/state")
            self.seen(who, "options", "GET", "/options")
            fragment = self.seen(who, "table", "GET", "/table", send={"X-Table-Tag": tag.get(who, "")})
            tag[who] = fragment.headers.get("x-table-tag", "")

    def finish(self) -> set[str]:
        """Every path once more at the end: every page of events, the explanation of every seq, verify, the log and
        the session log, the stream up to the head, the seat and the page; returns the event types logged."""
        gm_events = self.call("GET", "/events?limit=500", self.gm).json()
        head = gm_events["head"]["seq"]
        for who in self.tokens:
            after = 0
            while True:
                page = self.seen(who, f"events after {after}", "GET", f"/events?after={after}&limit=37")
                nxt = page.json().get("next_after")
                if nxt is None:
                    break
                after = nxt
            for seq in range(1, head + 1, 1 if who in PLAYERS else 3):  # the spectator's are mostly 403s
                self.seen(who, f"explain {seq}", "GET", f"/explain/{seq}")
            for path in ("/verify", "/log", "/session", "/seat"):
                self.seen(who, path, "GET", path)
            self.stream(who, head)
        page = self.client.get(f"/table/{self.fight_id}")
        self.transcript.add("the table page", page)
        events = [e["event"] for e in gm_events["events"]]
        return {str(e["type"]) for e in events} | situations(events, self.world.hidden)

    def stream(self, who: str, head: int) -> None:
        """A seat's live stream from the start, read until it has sent the head's event and an options message."""
        messages: list[str] = []
        with self.client.stream("GET", f"/fights/{self.fight_id}/stream",
                                headers={"Authorization": f"Bearer {self.tokens[who]}"}) as answer:
            current: list[str] = []
            for line in answer.iter_lines():
                if line:
                    current.append(line)
                    continue
                if current:
                    messages.append("\n".join(current))
                    current = []
                    options = messages[-1].startswith("event: options") or "\nevent: options" in messages[-1]
                    if options and any(f"id: {head}" in m for m in messages):
                        break
        self.transcript.entries.append((f"{who} stream", 200, {}, [_sse(m) for m in messages]))


def _sse(message: str) -> dict[str, Any]:
    """One Server-Sent Events message as fields (its data decoded)."""
    fields: dict[str, Any] = {}
    for line in message.split("\n"):
        name, _, value = line.partition(": ")
        fields[name] = json.loads(value) if name == "data" else value
    return fields


def play(client: httpx.Client, the_plan: Plan, fight_ids: tuple[str, str], headers: dict[str, str] | None = None
         ) -> tuple[Table, Table, set[str]]:
    """Play the plan in world A and world B side by side on one server: each command given by the same seat in both
    (a player's own where its options offer it in world A and it rolls only that player's dice, none in a seeded
    fight, else the GM's),
    every seat looking after each. Returns
    the two tables (with their transcripts) and the event types world A's log holds."""
    worlds = (WORLDS[0], world_b(the_plan))
    tables = [Table(client, world, fid, the_plan, headers or {}) for world, fid in zip(worlds, fight_ids, strict=True)]
    tags: list[dict[str, str]] = [{}, {}]
    for table, tag in zip(tables, tags, strict=True):
        table.look(tag)
    for step in the_plan.steps:
        giver = step.junk or "gm"
        if not step.junk:
            owner = next((who for who, plays in PLAYERS.items() if _actor(step.body) in plays), None)
            own_dice = owner is not None and step.rollers <= set(PLAYERS[owner])  # a seat types only its own dice
            own_dice = own_dice and (the_plan.dice == "manual" or not step.rollers)  # and in a seeded fight none:
            # its dice are the seed's (no combatant's dice are physical here; every face the plan types is the GM's)
            if owner is not None and own_dice and tables[0].offered(owner, in_world(step, tables[0].world)):
                giver = owner
        for table, tag in zip(tables, tags, strict=True):
            body = {"command": in_world(step, table.world)}
            if giver == "gm":
                answer = table.call("POST", "/commands", table.gm, body)
                assert answer.status_code in (201, 409, 422), answer.text
            else:
                table.seen(giver, f"gives {body}", "POST", "/commands", body)
            table.look(tag)
    kinds = tables[0].finish()
    tables[1].finish()
    return tables[0], tables[1], kinds


_ACTOR_FIELDS = ("attacker", "defender", "who")


def _actor(body: dict[str, Any]) -> str | None:
    """The combatant a player's command acts for (the field omen_server.views.PLAYER_COMMANDS names)."""
    from omen_server.views import PLAYER_COMMANDS

    field_name = PLAYER_COMMANDS.get(body["command"])
    return None if field_name is None else body.get(field_name)


def covering(tries: int = 120, length: int = 50) -> list[tuple[int, str]]:
    """Plans (seed, dice) that together go through every event type and situation the property asserts: a greedy
    cover over the first ``tries`` seeds, to pin with ``@example`` in tests/server/test_noninterference.py."""
    from omen_core.events import EVENT_TYPES

    every = {str(k.__struct_config__.tag) for k in EVENT_TYPES} - {"dice_source_changed"}
    every |= {"the hidden combatant left", "the hidden combatant fell"}
    found = {(seed, dice): plan(seed, length, dice, "hidden").kinds for seed in range(tries)
             for dice in ("seeded", "manual")}
    chosen: list[tuple[int, str]] = []
    covered: set[str] = set()
    while covered < every:
        best = max(found, key=lambda k: len(found[k] & (every - covered)))
        if not found[best] & (every - covered):
            raise SystemExit(f"no plan of the first {tries} seeds goes through: {sorted(every - covered)}")
        chosen.append(best)
        covered |= found[best]
    return chosen


if __name__ == "__main__":
    print(covering())


# -- scripted fights, in process: a hidden combatant among the others, ties, reactions, abilities, typed dice ------


@dataclass(frozen=True)
class Mixed:
    """The secrets of one world of the scripted fights: the hidden combatant (on a side the table sees: the
    raiders' or the heroes'), its sheet's words and HP, the ability it lists, the raider's reaction ability (the
    same rule written under another id, name and summary) and the GM's notes."""

    hidden: str
    hidden_name: str
    hidden_weapon: str
    hidden_weapon_name: str
    hidden_hp: int
    hidden_ability: str
    counter: str
    counter_name: str
    note: str


MIXED = (Mixed(hidden="zqskarn", hidden_name="Skarn Gutterjaw", hidden_weapon="zqaxe", hidden_weapon_name="Bone Axe",
               hidden_hp=40, hidden_ability="battle_focus", counter="zqriposte", counter_name="Zq Riposte",
               note="flees at half"),
         Mixed(hidden="zqmorg", hidden_name="Morg the Quiet", hidden_weapon="zqclub", hidden_weapon_name="Oak Club",
               hidden_hp=47, hidden_ability="keen_edge", counter="zqbackhand", counter_name="Zq Backhand Cut",
               note="fights to the death"))


def mixed_sheets(world: Mixed, side: str) -> list[CombatantSheet]:
    """Kael (Alice's: Healing Word), Brin (Bob's), Vesh the visible raider whose reaction ability is written out
    under the world's id and name (Riposte's rule: a missed melee attack on it opens its decision), and the hidden
    one on ``side``, listing an ability of the world's."""
    from omen_core.content import SHIPPED_ABILITIES

    riposte = SHIPPED_ABILITIES.get("riposte")
    assert riposte is not None
    counter = msgspec.structs.replace(riposte, id=world.counter, name=world.counter_name,
                                      summary=f"{world.counter_name}: {world.note}")
    kael = msgspec.structs.replace(sheet("kael", "heroes", hp=30), name="Kael Arden",
                                   weapons=(Weapon(id="sword", weapon_damage=2),), abilities=("healing_word",))
    brin = msgspec.structs.replace(sheet("brin", "heroes", hp=30), name="Brin Hollowmere",
                                   weapons=(Weapon(id="dagger", weapon_damage=1),))
    vesh = msgspec.structs.replace(sheet("vesh", "raiders", hp=30), name="Vesh", abilities=(counter,),
                                   weapons=(Weapon(id="cleaver", weapon_damage=2),))
    hidden = msgspec.structs.replace(sheet(world.hidden, side, hp=world.hidden_hp), name=world.hidden_name,
                                     weapons=(Weapon(id=world.hidden_weapon, name=world.hidden_weapon_name,
                                                     weapon_damage=1),), abilities=(world.hidden_ability,))
    return [kael, brin, vesh, hidden]


#: The faces typed in, in turn (a physical die of any size shows the face modulo its sides, from 1).
FACES = (3, 3, 3, 3, 1, 1, 6, 5, 2, 6, 1, 4, 3, 6, 2, 5, 1, 6, 4, 2)
#: What the GM picks when nothing is open, in order of preference, by whose turn it is.
_SCRIPT = ("use_ability", "declare_attack", "end_turn")


class Scripted(Seated):
    """One world of a scripted fight on an in-process app: the GM's token, the seats' tokens and their transcript
    (every header of every answer kept, ``date`` aside)."""

    def __init__(self, client: httpx.Client, world: Mixed, side: str, fight_id: str):
        self.client, self.world, self.fight_id = client, world, fight_id
        made = client.post("/fights", json={
            "id": fight_id, "title": "Two worlds", "dice": "manual", "hp_display": "banded",
            "combatants": [msgspec.to_builtins(s) for s in mixed_sheets(world, side)], "hidden": [world.hidden],
            "notes": {"fight": world.note, world.hidden: world.note}})
        assert made.status_code == 201, made.text
        self.seat_everyone(made)
        self.tags: dict[str, str] = {}

    def give(self, giver: str, body: dict[str, Any]) -> httpx.Response:
        """A command given by ``giver`` (``gm`` or a seat) with ``stage`` and the faces it has; a seat's answer is
        kept."""
        if giver == "gm":
            return self.call("POST", "/commands", self.gm, {"command": body, "stage": True})
        return self.seen(giver, f"gives {body}", "POST", "/commands", {"command": body, "stage": True})

    def staged(self) -> dict[str, Any] | None:
        """The command staged now, as the GM sees it."""
        found: dict[str, Any] | None = self.call("GET", "/options", self.gm).json().get("staged")
        return found

    def offered(self, who: str, command: str, args: dict[str, Any]) -> bool:
        """Whether ``who``'s own options offer ``command`` with ``args``."""
        offers = self.call("GET", "/options", self.tokens[who]).json()["options"]["offers"]
        return any(o["command"] == command and args in [c["args"] for c in o["choices"]] for o in offers)

    def look(self) -> None:
        """Every seat reads its state, options and table fragment (sending the tag it had)."""
        for who in self.tokens:
            self.seen(who, "state", "GET", "/state")
            self.seen(who, "options", "GET", "/options")
            fragment = self.seen(who, "table", "GET", "/table", send={"X-Table-Tag": self.tags.get(who, "")})
            self.tags[who] = fragment.headers.get("x-table-tag", "")

    def finish(self) -> None:
        """Every seat reads every event, verify and its seat at the end."""
        for who in self.tokens:
            for path in ("/events?limit=500", "/verify", "/seat"):
                self.seen(who, path, "GET", path)


def _renamed(value: Any, names: dict[str, str]) -> Any:
    return json.loads(json.dumps(value), object_hook=lambda d: {k: _rename(v, names) for k, v in d.items()})


def _gm_pick(options: dict[str, Any], step: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The GM's pick in world A: an answer to what is open (the first choice, or by ``step`` among several), else
    the first of :data:`_SCRIPT` offered, its choice by ``step``; an attack on a foe, not an ally."""
    offers = [o for o in options["offers"] if o["choices"]]
    if options["waiting"] is not None:
        answers = [o for o in offers if o["command"] in _ANSWERS]
        if answers:
            offer = answers[step % len(answers)]
            return offer, offer["choices"][step % len(offer["choices"])]
    turn = options["turn"]
    for kind in ("roll_initiative", *_SCRIPT):
        for offer in offers:
            if offer["command"] == kind and offer["actor"] == turn:
                return offer, offer["choices"][step % len(offer["choices"])]
    return (offers[0], offers[0]["choices"][0]) if offers else None


#: The name of the save the hidden combatant calls on Kael in each world (its caller's: a secret).
HIDDEN_SAVE = ("zq spore cloud", "zq ash veil")


def _picked(worlds: list[Scripted], options: dict[str, Any], picked: tuple[dict[str, Any], dict[str, Any]],
            owner: dict[str, str], faces: Iterator[int]) -> tuple[str, dict[str, Any]]:
    """Who gives the GM's pick and its command, with the faces of the giver's own dice; while a decision or window
    is open, Alice first tries to end Kael's turn in each world (its refusal names what is open, C38)."""
    offer, choice = picked
    if options["waiting"] is not None:
        for world in worlds:
            world.seen("alice", "ends Kael's turn", "POST", "/commands",
                       {"command": {"command": "end_turn", "who": "kael"}})
    giver = owner.get(offer["actor"] or "", "gm")
    if giver != "gm" and not worlds[0].offered(giver, offer["command"], choice["args"]):
        giver = "gm"  # the GM's attack for Kael on the hidden one: Alice's options do not offer it
    rolls = [r for r in choice["dice"] if giver == "gm" or r["roller"] in PLAYERS.get(giver, ())]
    mine = [1 + (next(faces) - 1) % die["sides"] for r in rolls for die in r["dice"]]
    if offer["command"] == "roll_initiative":
        mine = [3] * len(mine)  # everyone ties (C19)
    return giver, {"command": offer["command"], **choice["args"], **({"dice": mine} if mine else {})}


def play_scripted(client: httpx.Client, side: str, steps: int = 40) -> tuple[Scripted, Scripted, set[str]]:
    """Play one scripted fight in both worlds side by side on one app: the GM rolls initiative with faces that tie
    everyone (C19: roll-offs), then each turn's combatant uses an ability if offered, else attacks, else ends its
    turn, every open decision answered; each command is given by the player who plays its actor, else the GM, with
    the faces of the giver's own dice only (``stage``), each other seat giving its own when the command waits for
    them; while a decision or window is open, Alice tries to end Kael's turn (its refusal names what is open).
    Once the rounds begin, the GM stages a save the hidden one calls on Kael, which waits for Alice's die (she is
    asked for it without being told of the hidden caller). Every seat looks after each step, and after each 202.
    Returns the two worlds and the event types world A logged."""
    worlds = [Scripted(client, MIXED[0], side, f"sc-{side}-a"), Scripted(client, MIXED[1], side, f"sc-{side}-b")]
    names = {MIXED[0].hidden: MIXED[1].hidden, MIXED[0].hidden_weapon: MIXED[1].hidden_weapon,
             MIXED[0].counter: MIXED[1].counter}
    owner = {combatant: who for who, plays in PLAYERS.items() for combatant in plays}
    faces = itertools.cycle(FACES)
    for world in worlds:
        world.look()
    names[HIDDEN_SAVE[0]] = HIDDEN_SAVE[1]
    saved = False
    for step in range(steps):
        options = worlds[0].call("GET", "/options", worlds[0].gm).json()["options"]
        if not saved and options["waiting"] is None and options["phase"] == "rounds":
            # the hidden one's save on Kael, staged by the GM with none of its faces: Alice's save die first (C29)
            saved, giver = True, "gm"
            body = {"command": "call_save", "caller": MIXED[0].hidden, "saver": "kael", "effect": {
                "name": HIDDEN_SAVE[0], "save": "AGI", "against": "AGI", "action_cost": 0}}
        else:
            picked = _gm_pick(options, step)
            if picked is None:
                break
            giver, body = _picked(worlds, options, picked, owner, faces)
        later = [next(faces) for _ in range(30)]  # the faces typed for the staged command: the same in both
        for world, given in zip(worlds, (body, _renamed(body, names)), strict=True):
            typed = iter(later)
            answer = world.give(giver, given)
            assert answer.status_code in (201, 202, 409, 422), answer.text
            if answer.status_code == 202:
                world.look()  # every seat sees the command staged before its dice are given
            for _ in range(8):  # each seat types its own dice when asked
                staged = world.staged()
                if staged is None:
                    break
                seat = next((w for w in PLAYERS if staged["awaiting"] == w.title()), "gm")
                dice = [1 + (next(typed) - 1) % d["sides"] for r in staged["rolls"] for d in r["dice"]]
                if seat == "gm":
                    gave = world.call("POST", "/staged", world.gm, {"id": staged["id"], "dice": dice})
                else:
                    gave = world.seen(seat, "gives dice", "POST", "/staged", {"id": staged["id"], "dice": dice})
                if gave.status_code not in (201, 202):
                    world.call("DELETE", "/staged", world.gm)
            world.look()
    for world in worlds:
        world.finish()
    events = worlds[0].call("GET", "/events?limit=500", worlds[0].gm).json()["events"]
    return worlds[0], worlds[1], {str(e["type"]) for e in events}
