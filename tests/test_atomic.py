"""Every command is atomic: however malformed its arguments or the faces it carries, it is either refused with an
OmenError that names the rule or the field, the stored log left byte for byte as it was, or accepted with a log that
``Fight.load`` and ``omen verify`` accept.

A property plays a random fight forward through the offers of ``Fight.options()`` (memory, JSON Lines and SQLite
stores; manual, typed-in, scripted and seeded dice), then issues one command built by hypothesis with arbitrary,
often invalid, arguments and faces. Regression examples follow, then the engine bugs found while writing it (values
the property leaves out, since one bad value in one optional field is too rare for it to reach), each now a
regression test.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from msgspec.structs import force_setattr, replace

from omen_core import Fight, ManualDice, MemoryStore, ScriptedDice, SeededDice
from omen_core.commands import (
    AnswerActiveDefense,
    ApplyConditionCommand,
    BeginAmbush,
    CheckSpec,
    Command,
    DeclareAttack,
    EndFight,
    Join,
    StaticCheck,
)
from omen_core.content import (
    ApplyCondition,
    Armor,
    Attribute,
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
    Skill,
    Weapon,
    load_ruleset,
)
from omen_core.dice import FacesNeeded, RollRequest, SurplusFaces
from omen_core.errors import DiceError, InvalidCommand, InvalidDieFace, OmenError, RuleViolation
from omen_core.events import encode_line
from omen_core.options import Choice
from omen_core.parts import Encircled, Modifier, Situational
from omen_core.rules.ambush import TIME_WAITED
from omen_core.store import JsonlStore, SqliteStore
from omen_replay.verify import verify_lines, verify_store
from tests.fights import scripted
from tests.random_fights import BRANCHES, EFFECTS, GEAR, NAMES, SIDES, _sides, combatants
from tests.sheets import sheet

#: Examples of the property: a fight of up to a dozen offered steps, then the one random command.
EXAMPLES = 100

# -- the stores, and the log as stored ----------------------------------------------------------------------------


@dataclass
class Table:
    """A fight under test: its store (and the directory of a JSON Lines one), the random source of the faces it
    is given, and its dice's seed."""

    fight: Fight
    store: Any
    rng: random.Random
    seed: bytes | None = None
    directory: Path | None = None

    def stored(self) -> object:
        """Everything the store holds for the fight, as bytes: every file beside a JSON Lines log (the log, its
        ``.idx`` and ``.marks``), else each record encoded and the lines as the store keeps them."""
        if self.directory is not None:
            return {p.name: p.read_bytes() for p in sorted(self.directory.iterdir())}
        fight_id = self.fight.fight_id
        return ([encode_line(rec) for rec in self.store.read(fight_id)],
                [line for chunk in self.store.read_lines(fight_id) for line in chunk],
                [encode_line(rec) for rec in self.store.landmarks(fight_id)])

    def log(self) -> list[bytes]:
        """The fight's lines as stored, each with its newline (a JSON Lines store keeps it, the others do not)."""
        return [line.rstrip(b"\n") + b"\n" for chunk in self.store.read_lines(self.fight.fight_id) for line in chunk]


@contextlib.contextmanager
def opened(kind: str) -> Iterator[tuple[Any, Path | None]]:
    """A fresh empty store of ``kind`` (memory, jsonl: one file in a temporary directory, or sqlite), closed
    and removed afterwards."""
    if kind == "memory":
        yield MemoryStore(), None
        return
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "jsonl":
            yield JsonlStore.single(Path(tmp) / "fight.jsonl"), Path(tmp)
        else:
            store = SqliteStore(Path(tmp) / "fights.db")
            try:
                yield store, None
            finally:
                store.close()


# -- the check ----------------------------------------------------------------------------------------------------


def names_what(exc: OmenError) -> None:
    """A refusal names what refused: the rule (a RuleViolation), the field path (an InvalidCommand) or the roll
    and its faces (a DiceError); any other OmenError is no refusal of a command."""
    if isinstance(exc, RuleViolation):
        assert exc.rule and f"[{exc.rule}]" in str(exc), repr(exc)
    elif isinstance(exc, InvalidCommand):
        assert exc.command and exc.path.startswith("$") and f"(at {exc.path})" in str(exc), repr(exc)
    else:
        assert isinstance(exc, DiceError) and str(exc), repr(exc)


def attempt(table: Table, command: Command, by: str = "") -> OmenError | None:
    """Execute ``command``: refused, the log, state and dice are as they were and the fight still loads;
    accepted, it appended after the old log, and the log loads to the live state and verifies clean. Any other
    exception propagates (an engine bug). Returns the refusal, if any."""
    fight = table.fight
    before, state = table.stored(), fight.state
    remaining = fight.dice.remaining if isinstance(fight.dice, ScriptedDice) else None
    old_log = table.log()
    try:
        stored = fight.execute(command, by=by)
    except OmenError as exc:
        names_what(exc)
        assert table.stored() == before, f"refused ({exc!r}) but the stored log changed"
        assert fight.state == state and fight.version == state.version
        if remaining is not None:
            assert scripted(fight).remaining == remaining, "refused, but scripted faces were used up"
        assert Fight.load(table.store, fight.fight_id).state == state
        return exc
    assert stored and stored[0].seq == state.version + 1 and stored[-1].seq == fight.version
    log = table.log()
    assert log[:len(old_log)] == old_log and len(log) == fight.version
    assert Fight.load(table.store, fight.fight_id).state == fight.state
    report = verify_store(table.store, fight.fight_id, seed=table.seed)
    assert report.clean, report.problems
    if table.directory is not None:
        raw = (table.directory / "fight.jsonl").read_bytes().splitlines(keepends=True)
        assert raw == log and verify_lines(raw, seed=table.seed).clean
    return None


# -- playing forward through the offers -----------------------------------------------------------------------------

#: How often each offered command is taken while playing forward: answers and what moves the fight on first.
WEIGHTS = {"answer_active_defense": 10, "react": 6, "pass_reaction": 5, "answer_catch": 10, "route_damage": 10,
           "choose_will_conversion": 10, "agree_initiative": 6, "roll_off": 6, "roll_initiative": 10,
           "declare_attack": 10, "end_turn": 5, "move": 4, "call_save": 3, "begin_ambush": 3, "engage": 3,
           "draw": 2, "apply_condition": 2, "undo": 2, "redo": 2, "static_check": 1, "contest": 1,
           "clear_condition": 1, "disengage": 1, "leave_fight": 1, "end_fight": 1, "cancel_action": 1,
           "reveal_seed": 1}


def offered(table: Table) -> list[tuple[str, tuple[Choice, ...]]]:
    """The offers of ``Fight.options()`` now, each as its command's tag and choices, repeated by weight and ranked
    (hypothesis shrinks towards the first)."""
    offers = sorted(table.fight.options().offers, key=lambda offer: -WEIGHTS.get(offer.command, 1))
    return [(offer.command, offer.choices) for offer in offers for _ in range(WEIGHTS.get(offer.command, 1))]


def command_of(table: Table, tag: str, choice: Choice) -> Command:
    """The command an offer's choice stands for (revealing the table's own seed, if it has one)."""
    args = dict(choice.args)
    if tag == "reveal_seed" and table.seed is not None:
        args["seed"] = table.seed.hex()
    command: Command = msgspec.convert({"command": tag, **args}, Command)
    return command


def play(table: Table, command: Command) -> None:
    """Execute a legal command; with dice typed in (a manual source with nothing to ask), give the faces each
    FacesNeeded asks for, in C29 order. A refusal is fine here: only the last command is checked."""
    fight, faces = table.fight, None
    for _ in range(60):
        try:
            fight.execute(command if faces is None else replace(command, dice=tuple(faces)))
            return
        except FacesNeeded as exc:
            kept = sum(len(r.pool) for r in exc.needed[:-1])
            faces = [*(faces or [])[:kept], *(table.rng.randint(1, sides) for _, sides in exc.needed[-1].pool)]
        except OmenError:
            return


class Asked:
    """A player asked for faces: random right ones, or, once ``spoilt`` is set, those faces for every roll."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.spoilt: list[Any] | None = None  # any faces at all, numbers or not: their refusal is tested

    def __call__(self, request: RollRequest) -> list[Any]:
        if self.spoilt is not None:
            return list(self.spoilt)
        return [self.rng.randint(1, sides) for _, sides in request.pool]


def started(data: st.DataObject, store: Any, directory: Path | None) -> Table:
    """Start a fight of 2-3 random combatants (tests/random_fights.py) on ``store``, with manual (asked),
    typed-in, scripted or seeded dice, and play up to a dozen offered commands."""
    n = data.draw(st.integers(2, 3), label="combatants")
    teams = [SIDES[0], SIDES[1], *(data.draw(st.sampled_from(SIDES)) for _ in range(n - 2))]
    sheets = [data.draw(combatants(cid, side)) for cid, side in zip(NAMES[:n], teams, strict=True)]
    rng = random.Random(data.draw(st.integers(0, 2**32), label="faces"))
    dice_kind = data.draw(st.sampled_from(("manual", "typed", "scripted", "seeded")), label="dice")
    seed = None
    if dice_kind == "manual":
        dice: Any = ManualDice(Asked(rng))
    elif dice_kind == "typed":
        dice = ManualDice()
    elif dice_kind == "scripted":
        dice = ScriptedDice([])
    else:
        seed = data.draw(st.binary(min_size=16, max_size=32), label="seed")
        dice = SeededDice(seed)
    fight = Fight.start(store, data.draw(st.sampled_from(("atomic", "f.1"))), dice=dice, clock=lambda: 1_700_000,
                        combatants=sheets)
    table = Table(fight, store, rng, seed, directory)
    smallest = _sides(sheets)
    for _ in range(data.draw(st.integers(0, 12), label="steps")):
        if isinstance(dice, ScriptedDice) and dice.remaining < 16:
            dice.feed(rng.randint(1, smallest) for _ in range(32))
        menu = offered(table)
        if not menu:
            break
        tag, choices = data.draw(st.sampled_from(menu))
        play(table, command_of(table, tag, data.draw(st.sampled_from(choices))))
    if isinstance(dice, ScriptedDice) and dice.remaining < 16:
        dice.feed(rng.randint(1, smallest) for _ in range(32))
    return table


# -- the random command ---------------------------------------------------------------------------------------------

#: Values of the wrong type or out of every range a decoded command could hold. Left out on purpose, each a
#: regression test below: infinite floats, lone surrogates in text, and objects msgspec cannot encode.
JUNK = st.sampled_from((None, True, False, 0, -1, 1, 2**63, -(2**63) - 1, 10**30, 1.5, -0.0, float("nan"), "",
                        "zed", "x" * 300, "d1", [], {}, [1, "a"], {"a": 1}, (), b"\x00"))
TEXT = st.text(max_size=12) | st.sampled_from(("", "the GM", "<&>\"'", "\x00\n\t", "ünïcödé ⚔", "x" * 2000))
FACES = st.integers(1, 6) | st.sampled_from((0, -1, 7, 9, 13, 21, 10**6, 10**6 + 1, 2**64, 10**30, True, 2.0, "3",
                                             None))


def faces_for(sides: list[int]) -> st.SearchStrategy[tuple[object, ...]]:
    """Faces for dice of these sizes: right (half the time), one of them wrong (0, one too many pips, huge), one
    too few or too many."""
    right = st.tuples(*(st.integers(1, s) for s in sides))

    def spoil(faces: tuple[int, ...]) -> st.SearchStrategy[tuple[object, ...]]:
        same: st.SearchStrategy[tuple[object, ...]] = st.just(faces)
        spoils = [same] * 4 + [st.just((*faces, 1)), st.just((*faces, *faces))]
        if faces:
            spoils.append(st.just(faces[:-1]))
            spoils.append(st.tuples(st.integers(0, len(faces) - 1), FACES | st.sampled_from(
                [s + 1 for s in sides])).map(lambda at: (*faces[:at[0]], at[1], *faces[at[0] + 1:])))
        return st.one_of(spoils)

    return right.flatmap(spoil)


@dataclass(frozen=True)
class Ctx:
    """What a random command may name: the fight's combatants, gear, conditions, sides, version and seed."""

    names: tuple[str, ...]
    gear: tuple[str, ...]
    conditions: tuple[str, ...]
    sides: tuple[str, ...]
    version: int
    seed: bytes | None

    @classmethod
    def of(cls, table: Table) -> Ctx:
        """The context of a table's fight as it stands."""
        state = table.fight.state
        gear = {w.id for w in GEAR}
        for f in state.combatants.values():
            gear |= {w.id for w in f.sheet.weapons} | ({f.sheet.shield.id} if f.sheet.shield else set())
        conditions = tuple(state.ruleset.conditions) if state.ruleset else ()
        return cls(tuple(state.combatants), tuple(sorted(gear)), conditions,
                   tuple(sorted({f.side for f in state.combatants.values()})), state.version, table.seed)


def wrong(good: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly ``good``, now and then junk."""
    return st.one_of(good, good, good, JUNK)


@st.composite
def sheets_for(draw: st.DrawFn, ctx: Ctx) -> CombatantSheet:
    """A sheet to join: a random legal one, often broken in one place (a d1, hp 0, negative weapon damage, extra
    primary dice 5, duplicate weapon ids, an unknown damage type, an id already in the fight...)."""
    cid = draw(st.sampled_from(("eve", "eve", *ctx.names, "bad id!", "")))
    base = draw(combatants(cid, draw(st.sampled_from((*SIDES, "new-side", "")))))
    breaks: dict[str, Callable[[CombatantSheet], CombatantSheet]] = {
        "none": lambda s: s,
        "die": lambda s: replace(s, attributes=replace(s.attributes, STR=Attribute(
            die=draw(st.sampled_from(("d1", "d0", "6", "d6.5", "D6", "d-4", "d99999"))), bonus=-1))),
        "hp": lambda s: replace(s, hp=draw(st.sampled_from((0, -1, 2**63)))),
        "will": lambda s: replace(s, will=-1),
        "damage": lambda s: replace(s, weapons=(Weapon(id="club", weapon_damage=draw(st.integers(-3, -1))),),
                                    wielding=None),
        "primary": lambda s: replace(s, features=Features(extra_primary_dice=draw(st.sampled_from((-1, 3, 5))))),
        "rage": lambda s: replace(s, features=Features(rage=RageDice(count=draw(st.integers(-1, 1)), die="d1"))),
        "type": lambda s: replace(s, weapons=(Weapon(id="rod", damage_type="banana"),), wielding=None),
        "resist": lambda s: replace(s, resistances=draw(st.sampled_from(({"banana": 1}, {"fire": -1})))),
        "skill": lambda s: replace(s, skills={"Stealth": Skill(attribute=draw(st.sampled_from(("LUCK", "AGI"))),
                                                              level=-1)}),
        "armor": lambda s: replace(s, armor=Armor(rating=-1), shield=Shield(block_rating=-2)),
        "multiply": lambda s: replace(s, incoming_damage=IncomingDamage(
            multiply=bad(draw(st.sampled_from(("1/0", "-1", "x", -0.5, float("nan"), "7/5", 0.0)))))),
    }
    broken = breaks[draw(st.sampled_from(sorted(breaks)))](base)
    if draw(st.integers(0, 9)) == 0:  # duplicate ids: the constructor refuses them, so force them in
        force_setattr(broken, "weapons", (Weapon(id="twin"), Weapon(id="twin")))
    elif draw(st.integers(0, 9)) == 0:
        force_setattr(broken, "wielding", ("nope",))
    return broken


def bad(value: object) -> Any:
    """``value`` where a field takes another type or range, on purpose: its refusal is what is tested."""
    return value


def consequences(draw: st.DrawFn) -> tuple[Any, ...]:
    """Consequences for branches and effects: legal ones, or an unknown damage type or condition, zero stacks, a
    d1, zero dice, negative flat damage, a recipient that is no one."""
    one = st.sampled_from((
        DealDamage(flat=2, damage_type="fire"), ApplyCondition(condition="Prone"), ClearCondition(condition="Prone"),
        DealDamage(flat=1, damage_type="banana"), ApplyCondition(condition="Banana"),
        ApplyCondition(condition="Exhausted", stacks=0), DealDamage(dice=DamageDice(die="d1"), damage_type="cold"),
        DealDamage(dice=DamageDice(count=0, die="d6"), damage_type="cold"), DealDamage(flat=-5, damage_type="fire"),
        ApplyCondition(condition="Prone", to=bad("nobody")), DealDamage(flat=10**30, damage_type="fire")))
    return tuple(draw(st.lists(one, max_size=3)))


@st.composite
def effects(draw: st.DrawFn) -> SaveEffect:
    """A save effect: one of tests/random_fights.py's, or one broken in its attributes, cost or consequences."""
    if draw(st.booleans()):
        return draw(st.sampled_from(EFFECTS))
    return SaveEffect(name=draw(st.sampled_from(("", "hex"))), save=draw(st.sampled_from(("AGI", "LUCK", "RES"))),
                      against=draw(st.sampled_from(("INT", "agi"))), action_cost=draw(st.integers(-1, 3)),
                      on_success=consequences(draw), on_failure=consequences(draw))


@st.composite
def arguments(draw: st.DrawFn, ctx: Ctx, cls: type, name: str) -> object:
    """A value for field ``name`` of command ``cls``: mostly of the right type and often legal, sometimes
    junk."""
    who = st.sampled_from((*ctx.names, *ctx.names, "zed", ""))
    several = st.lists(who, max_size=4).map(tuple)
    match name:
        case "attacker" | "target" | "who" | "caller" | "saver":
            good: st.SearchStrategy = who
        case "defender" if cls is AnswerActiveDefense:
            good = who
        case "check" | "initiator" | "defender":
            good = st.builds(CheckSpec, who=wrong(who),
                             skill=st.sampled_from((None, "Stealth", "Perception", "Athletics", "Juggling")),
                             attribute=st.sampled_from((None, None, "STR", "AGI", "LUCK")),
                             modifiers=st.lists(st.builds(Modifier, source=TEXT, value=wrong(st.integers(-5, 5))),
                                                max_size=2).map(tuple))
        case "weapon":
            good = st.sampled_from((None, *ctx.gear, "nope"))
        case "ambushers" | "defenders" | "order" | "leaves" | "others":
            good = several
        case "defense":
            good = st.sampled_from((None, "dodge", "parry", "block", "kick"))
        case "die":
            good = st.none() | st.integers(-2, 6)
        case "unarmed" | "rage" | "convert" | "catch" | "engaged":
            good = st.booleans()
        case "situational":
            circle = st.none() | st.builds(Encircled, attackers=wrong(st.integers(-1, 5)),
                                           defenders=wrong(st.integers(-1, 5)))
            good = st.builds(Situational, high_ground=st.booleans(), encircled=circle)
        case "damage_modifiers":
            good = st.lists(st.builds(Modifier, source=TEXT, value=wrong(st.integers(-10, 10))), max_size=2).map(tuple)
        case "branches":
            good = st.sampled_from(BRANCHES) if draw(st.booleans()) else st.just(Branches(
                on_hit=consequences(draw), on_miss=consequences(draw), on_crit=consequences(draw)))
        case "effect":
            good = effects()
        case "condition":
            good = st.sampled_from((*ctx.conditions, "Banana", "prone", ""))
        case "stacks":
            good = st.integers(-2, 4) | st.just(2**63)
        case "difficulty":
            good = st.none() | st.integers(-20, 40) | st.just(10**30)
        case "time_waited":
            good = st.sampled_from((*TIME_WAITED, "forever", None, -1.0, 0.0, 2.5, 61.0, float("nan"), 10**6))
        case "reason" if cls.__name__ == "LeaveFight":
            good = st.sampled_from(("fled", "yielded", "dead", "bored"))
        case "reason" if cls.__name__ == "EndFight":
            good = st.sampled_from(("gm", "yielded", "fled", "defeated", "won"))
        case "side":
            good = st.sampled_from((None, *ctx.sides, "nobody"))
        case "seed":
            good = st.sampled_from(("", "zz", "00" * 16, *((ctx.seed.hex(),) * 3 if ctx.seed else ())))
        case "to_seq":
            good = st.none() | st.integers(-1, ctx.version + 2)
        case "modifiers":
            good = st.dictionaries(who, st.lists(st.builds(Modifier, source=TEXT, value=wrong(st.integers(-3, 3))),
                                                 max_size=2).map(tuple), max_size=2)
        case "sheet":
            good = sheets_for(ctx)
        case "ruleset":
            good = st.just(load_ruleset())
        case "dice_source":
            good = st.sampled_from(("manual", "seeded", "scripted", "loaded"))
        case _:
            good = TEXT
    return draw(wrong(good))


@st.composite
def made_up(draw: st.DrawFn, ctx: Ctx) -> Command:
    """Any command, its fields drawn one by one (a default now and then kept), built without validation; now and
    then as a dict (a field dropped, an unknown one added) converted as JSON would be, where that validates."""
    cls = draw(st.sampled_from(Command.__args__))
    fields: dict[str, object] = {}
    for field in msgspec.structs.fields(cls):
        if field.name == "dice":
            fields["dice"] = draw(st.none() | st.none() | st.lists(FACES, max_size=8).map(tuple))
        elif field.required or draw(st.booleans()):
            fields[field.name] = draw(arguments(ctx, cls, field.name))
    command: Command = cls(**fields)
    if draw(st.integers(0, 3)) == 0:
        raw = msgspec.to_builtins(command)
        if raw and draw(st.booleans()):
            raw.pop(draw(st.sampled_from(sorted(raw))))
        if draw(st.booleans()):
            raw[draw(st.sampled_from(("weapons", "hp", "extra", "dice")))] = draw(JUNK)
        with contextlib.suppress(msgspec.ValidationError):  # a dict that does not convert is not the engine's
            converted: Command = msgspec.convert(raw, Command)
            return converted
    return command


@st.composite
def spoiled(draw: st.DrawFn, table: Table) -> Command:
    """A command the fight offers now, carrying faces for the dice it rolls (right, wrong or miscounted), or with
    one field replaced by junk or by a plausible wrong value."""
    fight = table.fight
    offers = fight.options().offers
    if not offers:
        return draw(made_up(Ctx.of(table)))
    offer = draw(st.sampled_from(offers))
    choice = draw(st.sampled_from(offer.choices))
    command = command_of(table, offer.command, choice)
    rolls = [*choice.dice, *(choice.may_roll if draw(st.booleans()) else ())]
    how = draw(st.sampled_from(("faces", "faces", "as offered", "a field")))
    if how == "as offered":
        return command
    if how == "faces":
        return replace(command, dice=draw(faces_for([d.sides for r in rolls for d in r.dice])))
    names = [f.name for f in msgspec.structs.fields(type(command)) if f.name != "dice"]
    if not names:
        return replace(command, dice=draw(st.lists(FACES, max_size=3).map(tuple)))
    name = draw(st.sampled_from(names))
    return replace(command, **{name: draw(arguments(Ctx.of(table), type(command), name))})


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_a_random_command_is_refused_unwritten_or_written_so_it_verifies(data: st.DataObject) -> None:
    """After a random fight, one random command with arbitrary arguments and faces is refused (an OmenError naming
    its rule or field, the stored log byte-identical, the fight still loading) or accepted (its log loads to the
    live state and verifies clean), and nothing else ever happens."""
    kind = data.draw(st.sampled_from(("memory", "memory", "jsonl", "jsonl", "sqlite")), label="store")
    with opened(kind) as (store, directory):
        table = started(data, store, directory)
        ctx = Ctx.of(table)
        command = data.draw(st.one_of(made_up(ctx), spoiled(table)), label="command")
        by = data.draw(st.sampled_from(("", "gm", "ana's player")) | TEXT, label="by")
        asked = table.fight.dice.ask if isinstance(table.fight.dice, ManualDice) else None
        if isinstance(asked, Asked):
            asked.spoilt = data.draw(st.none() | st.lists(FACES, max_size=3), label="faces asked")
        refusal = attempt(table, command, by)
        tag = command.__struct_config__.tag
        event(f"{tag} accepted" if refusal is None else f"refused: {type(refusal).__name__}")
        event(f"on a {kind} store")
        event(f"in phase {table.fight.state.phase.value}")


# -- regressions: each refused before anything is written ----------------------------------------------------------

ANA = replace(sheet("ana", "heroes", hp=12), weapons=(Weapon(id="sword", weapon_damage=3),))
BRAM = sheet("bram", "raiders", hp=12)


@pytest.fixture(params=["memory", "jsonl"])
def table(request: pytest.FixtureRequest) -> Iterator[Table]:
    """A fight of Ana (sword) and Bram on a memory store or a JSON Lines file, with plenty of scripted 3s."""
    with opened(request.param) as (store, directory):
        fight = Fight.start(store, "regress", dice=ScriptedDice([3] * 40), clock=lambda: 0, combatants=[ANA, BRAM])
        yield Table(fight, store, random.Random(0), None, directory)


def refused(table: Table, command: Command) -> OmenError:
    """``command`` is refused and changes nothing (as :func:`attempt` checks); the refusal."""
    exc = attempt(table, command)
    assert exc is not None, f"{command!r} was accepted"
    return exc


def test_the_table_accepts_a_plain_attack(table: Table) -> None:
    """The regressions' fight accepts a sound attack, so each refusal below is the broken argument's doing."""
    assert attempt(table, DeclareAttack(attacker="ana", target="bram",
                                        situational=Situational(encircled=Encircled(attackers=1, defenders=1)))) \
        is None


@pytest.mark.parametrize(("claim", "field"), [((4, 0), "defenders"), ((0, 1), "attackers")])
def test_an_impossible_encircled_claim_is_refused(table: Table, claim: tuple[int, int], field: str) -> None:
    """An encircled claim (C26) of 4 attackers and 0 defenders, or 0 and 1, is refused naming the count."""
    circle = Encircled(attackers=claim[0], defenders=claim[1])
    exc = refused(table, DeclareAttack(attacker="ana", target="bram", situational=Situational(encircled=circle)))
    assert isinstance(exc, InvalidCommand) and exc.path == f"$.situational.encircled.{field}"


def _broken(change: str) -> CombatantSheet:
    """Cyra's sheet broken in one way."""
    cyra = sheet("cyra", "raiders")
    match change:
        case "d1":
            return replace(cyra, attributes=replace(cyra.attributes, AGI=Attribute(die="d1")))
        case "hp 0":
            return replace(cyra, hp=0)
        case "negative damage":
            return replace(cyra, weapons=(Weapon(id="club", weapon_damage=-2),))
        case "extra dice 5":
            return replace(cyra, features=Features(extra_primary_dice=5))
        case "unknown damage type":
            return replace(cyra, weapons=(Weapon(id="club", damage_type="banana"),))
        case "duplicate weapons":
            twin = replace(cyra, weapons=(Weapon(id="club"),))
            force_setattr(twin, "weapons", (Weapon(id="club"), Weapon(id="club", weapon_damage=2)))
            return twin
    raise AssertionError(change)


@pytest.mark.parametrize(("change", "where"), [
    ("d1", "$.sheet.attributes.AGI.die"), ("hp 0", "$.sheet.hp"),
    ("negative damage", "$.sheet.weapons[0].weapon_damage"), ("extra dice 5", "$.sheet.features.extra_primary_dice"),
    ("unknown damage type", "C14"), ("duplicate weapons", "$.sheet")])
def test_a_broken_sheet_does_not_join(table: Table, change: str, where: str) -> None:
    """A sheet with a d1, hp 0, negative weapon damage, 5 extra primary dice, an unknown damage type (C14) or
    duplicate weapon ids is refused, naming the field or the rule."""
    exc = refused(table, Join(sheet=_broken(change)))
    assert (exc.rule if isinstance(exc, RuleViolation) else getattr(exc, "path", None)) == where


@pytest.mark.parametrize("stacks", [-1, 0])
def test_exhausted_needs_a_stack(table: Table, stacks: int) -> None:
    """Exhausted with -1 or 0 stacks is refused, naming the stacks field."""
    exc = refused(table, ApplyConditionCommand(who="ana", condition="Exhausted", stacks=stacks))
    assert isinstance(exc, InvalidCommand) and exc.path == "$.stacks"


@pytest.mark.parametrize(("faces", "error"), [
    ((3, 4), SurplusFaces), ((3, 3, 3), SurplusFaces), ((), FacesNeeded), ((7,), InvalidDieFace),
    ((0,), InvalidCommand), ((10**6 + 1,), InvalidCommand), ((10**30,), InvalidCommand)])
def test_a_check_with_the_wrong_faces_is_refused(table: Table, faces: tuple[int, ...], error: type[OmenError]) -> None:
    """A check on a d6 carrying more faces than it rolls, none, a 7, a 0 or a huge face is refused, and the
    scripted queue is left as it was."""
    exc = refused(table, StaticCheck(check=CheckSpec(who="ana", attribute="AGI"), difficulty=5, dice=faces))
    assert type(exc) is error


def test_an_attack_with_one_face_too_few_or_too_many_is_refused(table: Table) -> None:
    """An attack (hit: primary and FCS; base defense: RES) carrying two faces asks for the third, and carrying
    faces for damage it never rolls (a miss) is refused as surplus."""
    needed = refused(table, DeclareAttack(attacker="ana", target="bram", dice=(3, 3)))
    assert isinstance(needed, FacesNeeded) and needed.given == 2
    surplus = refused(table, DeclareAttack(attacker="ana", target="bram", dice=(1, 1, 6, 6, 6, 6)))
    assert isinstance(surplus, SurplusFaces)


@pytest.mark.parametrize("change", ["unknown damage type", "duplicate weapons", "d1", "hp 0"])
@pytest.mark.parametrize("kind", ["memory", "jsonl"])
def test_a_start_with_a_broken_sheet_writes_nothing(kind: str, change: str) -> None:
    """``Fight.start`` with a sheet the rules or the schema refuse raises and writes nothing: no fight in the
    store, no file on disk."""
    with opened(kind) as (store, directory):
        with pytest.raises(OmenError) as caught:
            Fight.start(store, "never", dice=ScriptedDice([]), clock=lambda: 0, combatants=[ANA, _broken(change)])
        names_what(caught.value)
        assert store.fights() == []
        if directory is not None:
            assert list(directory.iterdir()) == []


@pytest.mark.parametrize("kind", ["memory", "jsonl"])
def test_a_start_with_two_sheets_of_one_id_writes_nothing(kind: str) -> None:
    """``Fight.start`` with two combatants of the same id is refused by the set-up rule, and writes nothing."""
    with opened(kind) as (store, directory):
        with pytest.raises(RuleViolation, match="already joined"):
            Fight.start(store, "never", dice=ScriptedDice([]), clock=lambda: 0, combatants=[ANA, BRAM, ANA])
        assert store.fights() == [] and (directory is None or list(directory.iterdir()) == [])


# -- engine bugs the property found (fixed; kept as regressions) ----------------------------------------------------


def test_an_infinite_wait_is_refused(table: Table) -> None:
    """An ambush whose ambushers waited an infinite time is refused (as its JSON, 1e999, is), not written."""
    refused(table, BeginAmbush(ambushers=("ana",), defenders=("bram",), time_waited=float("inf")))


def test_an_infinite_damage_multiplier_is_refused(table: Table) -> None:
    """A sheet multiplying incoming damage by infinity does not join (its JSON could not say it, and a multiplier
    is at most 1000, MAX_MULTIPLY)."""
    refused(table, Join(sheet=replace(sheet("cyra", "raiders"), incoming_damage=IncomingDamage(multiply=float("inf")))))


def test_a_lone_surrogate_in_text_is_refused(table: Table) -> None:
    """A note holding a lone surrogate (no JSON can carry it) is refused with an OmenError."""
    refused(table, EndFight(note="\ud800"))


def test_a_value_msgspec_cannot_encode_is_refused(table: Table) -> None:
    """A field holding an object no JSON can say is refused with an InvalidCommand naming it."""
    exc = refused(table, EndFight(note=object()))  # type: ignore[arg-type]
    assert isinstance(exc, InvalidCommand) and exc.path == "$.note"


def test_a_by_that_is_not_text_is_refused(table: Table) -> None:
    """``by`` that is not text is refused (or the log it leaves verifies)."""
    attempt(table, EndFight(note="x"), by=5)  # type: ignore[arg-type]


def test_a_by_with_a_lone_surrogate_is_refused(table: Table) -> None:
    """``by`` holding a lone surrogate is refused with an OmenError."""
    attempt(table, EndFight(note="x"), by="\ud800")
