"""Tests for omen_core.engine at its Python boundary: the seed in force (C42), a fight that exists, wrong types,
and the façade methods' ``dice`` and ``by``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from omen_core import Fight, ManualDice, MemoryStore, ScriptedDice, SeededDice
from omen_core.commands import RevealSeed, RollInitiative
from omen_core.content import load_sheet
from omen_core.dice import commitment
from omen_core.errors import ConcurrencyError, FightExists, InvalidArgument, InvalidCommand, SeedMismatch
from omen_core.events import CommandIssued, DiceRolled
from omen_core.store import JsonlStore, SqliteStore, open_store
from omen_replay.explain import explain_records
from tests.sheets import sheet

KAEL = sheet("kael", STR=(8, 2), AGI=(6, 1))
VESH = sheet("vesh", side="raiders", AGI=(8, 2))
SEED, FRESH, OTHER = bytes(range(32)), bytes(range(1, 33)), bytes(32)


def seeded(store: MemoryStore, successors: tuple[bytes, ...] = ()) -> Fight:
    """A seeded fight of Kael and Vesh under SEED (its successors: the fresh seeds a reveal commits to)."""
    return Fight.start(store, "f", dice=SeededDice(SEED, successors), clock=lambda: 0, combatants=[KAEL, VESH])


class TestSeedInForce:
    def test_a_seed_that_is_not_the_fights_is_refused_before_anything_is_written(self) -> None:
        """C42: a fight loaded with another seed's dice refuses roll_initiative with SeedMismatch naming both
        hashes; nothing is appended (its dice would be recorded as seeded and fail verification)."""
        store = MemoryStore()
        seeded(store)
        fight = Fight.load(store, "f", dice=SeededDice(OTHER))
        with pytest.raises(SeedMismatch) as caught:
            fight.roll_initiative()
        assert (caught.value.commitment, caught.value.actual, caught.value.spent, caught.value.rule) == (
            commitment(SEED), commitment(OTHER), False, None)
        assert store.version("f") == 3 and fight.version == 3

    def test_a_spent_seed_is_refused_naming_c42(self) -> None:
        """C42: after a reveal mid-fight, the revealed (public) seed loaded again is refused as spent; the fresh
        seed the reveal committed to rolls."""
        store = MemoryStore()
        first = seeded(store, (FRESH,))
        first.reveal_seed()
        version = store.version("f")
        stale = Fight.load(store, "f", dice=SeededDice(SEED))
        with pytest.raises(SeedMismatch, match=r"already revealed.*\(C42\)") as caught:
            stale.roll_initiative()
        assert (caught.value.spent, caught.value.rule, caught.value.commitment) == (True, "C42", commitment(FRESH))
        assert store.version("f") == version
        fresh = Fight.load(store, "f", dice=SeededDice(FRESH))
        fresh.roll_initiative()
        assert [e.event.source for e in fresh.events if isinstance(e.event, DiceRolled)] == ["seeded", "seeded"]

    def test_giving_a_fight_a_wrong_seed_is_refused_at_once(self) -> None:
        """Assigning fight.dice a seed that is not the one in force raises SeedMismatch and keeps the dice."""
        fight = seeded(MemoryStore())
        with pytest.raises(SeedMismatch):
            fight.dice = SeededDice(OTHER)
        assert isinstance(fight.dice, SeededDice) and fight.dice.seed == SEED

    def test_a_manual_fight_refuses_seeded_dice(self) -> None:
        """A fight with no seed commitment given seeded dice refuses to roll from them (no commitment to match)."""
        store = MemoryStore()
        Fight.start(store, "f", dice=ManualDice(), combatants=[KAEL, VESH])
        with pytest.raises(SeedMismatch, match="the fight has no seed commitment"):
            Fight.load(store, "f", dice=SeededDice(SEED)).roll_initiative()
        assert store.version("f") == 3

    def test_revealing_a_spent_seed_says_it_is_spent(self) -> None:
        """C42: after a reveal mid-fight, reveal_seed given the revealed (public) seed again is refused as spent,
        rule C42, as the dice holding it are; nothing is appended."""
        store = MemoryStore()
        first = seeded(store, (FRESH,))
        first.reveal_seed()
        version = store.version("f")
        with pytest.raises(SeedMismatch, match=r"already revealed") as caught:
            Fight.load(store, "f").reveal_seed(SEED)
        assert (caught.value.spent, caught.value.rule) == (True, "C42") and store.version("f") == version

    def test_revealing_the_right_seed_needs_no_dice_of_its_own(self) -> None:
        """reveal_seed checks the seed it reveals itself: with wrong dice, revealing the right seed explicitly
        at the end is accepted."""
        store = MemoryStore()
        seeded(store).end_fight()
        fight = Fight.load(store, "f", dice=SeededDice(OTHER))
        assert fight.reveal_seed(SEED) == SEED.hex()


    def test_a_batch_that_reveals_mid_fight_rolls_on_from_the_fresh_seed(self) -> None:
        """C42: execute_all([reveal_seed, roll_initiative]) rolls initiative from the fresh seed, the same faces
        as revealing then rolling in two calls (it rolled from the spent seed)."""
        batched, stepped = seeded(MemoryStore(), (FRESH,)), seeded(MemoryStore(), (FRESH,))
        batched.execute_all([RevealSeed(seed=SEED.hex()), RollInitiative()])
        stepped.reveal_seed()
        stepped.roll_initiative()

        def faces(fight: Fight) -> list[tuple[str, list[int]]]:
            return [(e.event.source, [d.face for d in e.event.dice]) for e in fight.events
                    if isinstance(e.event, DiceRolled)]
        assert faces(batched) == faces(stepped) and len(faces(batched)) == 2
        assert isinstance(batched.dice, SeededDice) and batched.dice.seed == FRESH


class TestFightExists:
    def test_starting_an_existing_fight_says_it_exists(self) -> None:
        """Fight.start on an id the store holds raises FightExists (a ConcurrencyError) saying to use Fight.load;
        nothing is written."""
        store = MemoryStore()
        seeded(store)
        with pytest.raises(FightExists, match=r"fight 'f' already exists \(at version 3\): open it with Fight.load"
                           ) as caught:
            Fight.start(store, "f", dice=ManualDice())
        assert isinstance(caught.value, ConcurrencyError) and (caught.value.expected, caught.value.actual) == (0, 3)
        assert store.version("f") == 3


def _started() -> Fight:
    return Fight.start(MemoryStore(), "a", dice=ScriptedDice([4, 5]), combatants=[KAEL, VESH])


WRONG: list[tuple[str, Callable[[], Any], str]] = [
    ("start dice None", lambda: Fight.start(MemoryStore(), "a", dice=None, combatants=[KAEL]), "dice"),  # type: ignore[arg-type]
    ("start dice text", lambda: Fight.start(MemoryStore(), "a", dice="manual", combatants=[KAEL]), "dice"),  # type: ignore[arg-type]
    ("start store None", lambda: Fight.start(None, "a", dice=ManualDice()), "store"),  # type: ignore[arg-type]
    ("load store None", lambda: Fight.load(None, "a"), "store"),  # type: ignore[arg-type]
    ("load dice text", lambda: Fight.load(_started().store, "a", dice="manual"), "dice"),  # type: ignore[arg-type]
    ("attack encircled one", lambda: _started().attack("kael", "vesh", encircled=(1,)), "encircled"),  # type: ignore[arg-type]
    ("attack encircled three", lambda: _started().attack("kael", "vesh", encircled=(1, 2, 3)), "encircled"),  # type: ignore[arg-type]
    ("facade dice text", lambda: _started().roll_initiative(dice="45"), "dice"),  # type: ignore[arg-type]
    ("state_after text", lambda: _started().state_after("x"), "seq"),  # type: ignore[arg-type]
    ("open_store None", lambda: open_store(None), "url"),  # type: ignore[arg-type]
    ("SqliteStore None", lambda: SqliteStore(None), "path"),  # type: ignore[arg-type]
    ("JsonlStore None", lambda: JsonlStore(None), "directory"),  # type: ignore[arg-type]
    ("JsonlStore.single None", lambda: JsonlStore.single(None), "path"),  # type: ignore[arg-type]
    ("load_sheet None", lambda: load_sheet(None), "path"),  # type: ignore[arg-type]
    ("reveal_seed text", lambda: seeded(MemoryStore()).reveal_seed("ab"), "seed"),  # type: ignore[arg-type]
    ("SeededDice text", lambda: SeededDice("ab" * 32), "SeededDice's seed"),  # type: ignore[arg-type]
    ("SeededDice None", lambda: SeededDice(None), "SeededDice's seed"),  # type: ignore[arg-type]
    ("ManualDice number", lambda: ManualDice(5), "ManualDice's ask"),  # type: ignore[arg-type]
    ("ScriptedDice text", lambda: ScriptedDice("45"), "ScriptedDice's faces"),  # type: ignore[arg-type]
    ("move leaves text", lambda: _started().move("vesh", "kael"), "leaves"),
    ("ambush text", lambda: _started().ambush(["vesh"], "kael"), "defenders"),
    ("agree_initiative text", lambda: _started().agree_initiative("kael"), "order"),
    ("explain_records None", lambda: explain_records(None, 1), "records"),  # type: ignore[arg-type]
    ("explain_records seq text", lambda: explain_records(_started().events, "2"), "seq"),  # type: ignore[arg-type]
]


class TestWrongTypes:
    @pytest.mark.parametrize(("label", "call", "parameter"), WRONG, ids=[w[0] for w in WRONG])
    def test_a_wrong_type_names_the_parameter(self, label: str, call: Callable[[], Any], parameter: str) -> None:
        """A value of the wrong kind at the Python API raises InvalidArgument (an OmenError) naming the
        parameter and what it takes, never a bare AttributeError, IndexError or TypeError."""
        with pytest.raises(InvalidArgument, match=rf"^{parameter}: expected ") as caught:
            call()
        assert caught.value.parameter == parameter

    @pytest.mark.parametrize("given", [{"command": "roll_initiative"}, None, "end_turn"])
    def test_execute_refuses_what_is_no_command_and_writes_nothing(self, given: object) -> None:
        """fight.execute given a dict, None or text raises InvalidCommand; a dict or text is told to use
        command_from; nothing is appended."""
        fight = _started()
        with pytest.raises(InvalidCommand, match="expected a command") as caught:
            fight.execute(given)  # type: ignore[arg-type]
        assert ("command_from" in str(caught.value)) == (given is not None)
        assert fight.store.version("a") == 3

    def test_a_store_left_untouched_by_a_wrong_dice_source(self, tmp_path: Path) -> None:
        """Fight.start given no dice source writes nothing to the store."""
        store = SqliteStore(tmp_path / "f.db")
        with pytest.raises(InvalidArgument):
            Fight.start(store, "a", dice=object(), combatants=[KAEL])  # type: ignore[arg-type]
        assert store.version("a") == 0


class TestFacadeFacesAndBy:
    def test_undo_and_redo_record_who_gave_them(self) -> None:
        """fight.undo(by="gm") and fight.redo(by="gm") record who gave them in their command_issued, as every other
        shorthand's by= does (docs/live.md, the shorthands)."""
        fight = _started()
        fight.roll_initiative()
        fight.undo(by="gm")
        fight.redo(by="gm")
        issued = [e.event for e in fight.events if isinstance(e.event, CommandIssued)][-2:]
        assert [(type(i.command).__name__, i.by) for i in issued] == [("Undo", "gm"), ("Redo", "gm")]

    def test_a_facade_method_carries_faces_and_who_gave_it(self) -> None:
        """roll_initiative(dice=[4, 6], by="gm") rolls the faces typed in (recorded as manual in a seeded fight)
        and records who gave the command, exactly as execute would."""
        fight = seeded(MemoryStore())
        fight.roll_initiative(dice=[4, 6], by="gm")
        issued = next(e.event for e in fight.events if isinstance(e.event, CommandIssued))
        rolls = [e.event for e in fight.events if isinstance(e.event, DiceRolled)]
        assert issued.by == "gm" and issued.command.dice == (4, 6)
        assert [(r.source, [d.face for d in r.dice]) for r in rolls] == [("manual", [4]), ("manual", [6])]

    def test_a_facade_methods_faces_are_checked_like_a_commands(self) -> None:
        """A face out of range given to a façade method is InvalidCommand naming $.dice[0]; nothing written."""
        fight = _started()
        with pytest.raises(InvalidCommand) as caught:
            fight.roll_initiative(dice=[0, 5])
        assert caught.value.path == "$.dice[0]" and fight.version == 3
