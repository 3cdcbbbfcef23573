"""The forging test: re-sealed logs, forged every way docs/verify.md names, audited with and without the seed and a
witnessed head; the verdicts and their figures are those the page states (its table is read and checked here).

A forger rewrites a fight's log and recomputes every hash. Two ways to forge:

- **edit the stored events** (drop, duplicate, swap or insert one, relabel a seeded die as manual) and re-seal, as
  :func:`tests.replay.test_verify.rechain` does (every seq an event names moved with it);
- **play the fight again** through omen with the command list edited (a command dropped, duplicated, moved or
  inserted, faces chosen for one roll, faces typed into a command) and dice that lie: labelled seeded, their faces
  taken from the genuine log at the same roll counter and die where its die had the same size (what a forger
  without the seed can copy), chosen otherwise; or, for a forger who knows the seed (the GM, or anyone once it is
  revealed), drawn from the seed itself. Every number is then the rules' own: only the seed, the heads and the
  dice provenance can tell.

The auditor holds the log (its seed not revealed), or also the seed (``--seed``, or the reveal), or also the head
witnessed at the fight's end, or both. The verdict of each audit: ``caught`` (an integrity finding: exit 1),
``listed`` (no integrity finding but a dice provenance finding: exit 0, and 1 with ``--strict``) or ``passes``
(no finding at all).
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import msgspec
import pytest

from omen_core import CheckSpec, Fight, MemoryStore, SeededDice
from omen_core.commands import Command, EndFight, RevealSeed, StaticCheck, Undo
from omen_core.content import CombatantSheet
from omen_core.dice import RollRequest
from omen_core.errors import OmenError
from omen_core.events import (
    CombatantJoined,
    CommandIssued,
    DiceRolled,
    FightStarted,
    StoredEvent,
    Undone,
    encode_line,
    keyed_salts,
)
from omen_core.machine import Phase
from omen_core.store import FileSnapshots, JsonlStore
from omen_core.store.snapshots import take
from omen_core.walk import LinesSource, project, step_through
from omen_replay.verify import Head, Report, verify, verify_store
from tests.fights import present
from tests.replay.test_verify import rechain

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
SEED = bytes.fromhex("5eed" * 16)
FIGHT = "forged"
COLUMNS = ("the log only", "with the seed", "with a witnessed head", "with the seed and a head")
CASES = 8  # forgeries of each kind (fewer where fewer can be made)


def _genlog() -> ModuleType:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import genlog
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return genlog


class Played(msgspec.Struct, frozen=True):
    """A fight as a forger reads it from a log: its set-up and its commands in order, each with who gave it."""

    started: FightStarted
    sheets: tuple[CombatantSheet, ...]
    commands: tuple[tuple[Command, str], ...]


def read_back(log: list[StoredEvent]) -> Played:
    """The set-up and the command list a log records."""
    started = next(r.event for r in log if isinstance(r.event, FightStarted))
    sheets = tuple(r.event.sheet for r in log if isinstance(r.event, CombatantJoined))
    commands = tuple((r.event.command, r.event.by) for r in log if isinstance(r.event, CommandIssued))
    return Played(started=started, sheets=sheets, commands=commands)


class LyingDice(SeededDice):
    """Dice labelled seeded (the commitment is the fight's own) whose faces ``pick`` chooses."""

    def __init__(self, seed: bytes, pick: Callable[[RollRequest], list[int]]):
        super().__init__(seed)
        self.pick = pick

    def faces(self, request: RollRequest) -> list[int]:
        return self.pick(request)


#: The salts of the genuine fight and of every fight played again: from a fixed key, as a forger who copies the
#: genuine log's salts would have them (what the audit proves does not rest on the salts: docs/verify.md).
SALTS = keyed_salts(b"the forging test")


def play(played: Played, dice: SeededDice, until: int = 0) -> list[StoredEvent]:
    """The fight played again with ``dice``: its commands in order while the rules accept them; from the first
    they refuse (an edit changed what follows: a hit that had missed opens a window nobody answered), the fight
    goes on as a forger would write it (every window answered, turns played, by a fixed policy) until ``until``
    events, and the GM ends it."""
    fight = Fight.start(MemoryStore(), FIGHT, dice=dice, clock=itertools.count(0, 1000).__next__,
                        ruleset=played.started.ruleset, title=played.started.title, combatants=played.sheets,
                        salts=SALTS)
    try:
        for command, by in played.commands:
            if isinstance(command, EndFight):
                break
            fight.execute(command, by=by)
    except OmenError:
        genlog, rng = _genlog(), random.Random(until)
        genlog._answer_windows(fight, rng)
        while fight.version < until and fight.state.phase is Phase.ROUNDS:
            genlog._turn(fight, fight.state.turn, rng)
    if fight.state.ending is None:
        fight.end_fight("gm")
    return fight.events


@pytest.fixture(scope="module")
def genuine() -> list[StoredEvent]:
    """The genuine log (:func:`genuine_fight`)."""
    return genuine_fight()


def genuine_fight() -> list[StoredEvent]:
    """A seeded fight of the Ember Ford cast (dice of four sizes, every kind of window), ended by the GM: the log
    as it stood when the players last saw its head (the seed not revealed yet)."""
    genlog = _genlog()
    rng = random.Random(26)
    fight = Fight.start(MemoryStore(), FIGHT, dice=SeededDice(SEED), clock=itertools.count(0, 1000).__next__,
                        combatants=genlog._cast(), salts=SALTS)
    fight.ambush(["vesh", "skarn"], ["kael", "brin"], time_waited="one_to_two_minutes")
    fight.roll_initiative()
    genlog._answer_windows(fight, rng)
    while fight.version < 220:
        who = present(fight.state.turn)
        if rng.random() < 0.4:  # the GM asks for a check now and then (a free roll: C16)
            fight.static_check(CheckSpec(who=who, skill="Perception"), difficulty=12)
        genlog._turn(fight, who, rng)
    fight.end_fight("gm")
    return fight.events


def faces_at(log: list[StoredEvent]) -> dict[tuple[int, int], tuple[int, int]]:
    """(roll counter, die index) -> (sides, face) of every die a log records."""
    return {(r.event.counter, i): (d.sides, d.face) for r in log if isinstance(r.event, DiceRolled)
            for i, d in enumerate(r.event.dice)}


def copied(genuine_log: list[StoredEvent], chosen: dict[int, list[int]] | None = None
           ) -> Callable[[RollRequest], list[int]]:
    """A forger's faces without the seed: the genuine log's face at the same counter and die where its die had the
    same size (copied, so the seed agrees), 1 where it did not; ``chosen`` faces for some roll counters."""
    known = faces_at(genuine_log)

    def pick(request: RollRequest) -> list[int]:
        if chosen and request.counter in chosen:
            return chosen[request.counter]
        found = [known.get((request.counter, i)) for i in range(len(request.pool))]
        return [f[1] if f is not None and f[0] == sides else 1 for f, (_tag, sides) in zip(found, request.pool,
                                                                                          strict=True)]

    return pick


def rolling(played: Played, genuine_log: list[StoredEvent]) -> list[int]:
    """The indexes (in the command list) of the commands whose batch rolled dice."""
    batches = [r for r in genuine_log if isinstance(r.event, CommandIssued)]
    rolled = {r.batch for r in genuine_log if isinstance(r.event, DiceRolled)}
    return [i for i, r in enumerate(batches) if r.seq in rolled]


def spread(items: list[T], n: int = CASES) -> list[T]:
    """``n`` items spread evenly over ``items`` (all of them if fewer)."""
    if len(items) <= n:
        return list(items)
    return [items[round(k * (len(items) - 1) / (n - 1))] for k in range(n)]


# -- the forgeries ----------------------------------------------------------------------------------------------


def edited_events(log: list[StoredEvent], how: str) -> Iterator[list[StoredEvent]]:
    """One event dropped, duplicated, swapped with the next, inserted (a copy of another event of its type from
    elsewhere), or a seeded die relabelled manual; the chain re-sealed (:func:`rechain`)."""
    body = [i for i, r in enumerate(log) if not isinstance(r.event, (FightStarted, CombatantJoined))]
    if how == "relabel":
        body = [i for i in body if isinstance(log[i].event, DiceRolled)]
    for i in spread(body[:-1]):
        out = list(log)
        if how == "drop":
            del out[i]
        elif how == "duplicate":
            out.insert(i, out[i])
        elif how == "swap":
            out[i], out[i + 1] = out[i + 1], out[i]
        elif how == "insert":
            twin = next(r for r in log if type(r.event) is type(log[i].event) and r.seq != log[i].seq)
            out.insert(i, msgspec.structs.replace(twin, batch=log[i].batch))
        else:
            out[i] = msgspec.structs.replace(out[i], event=msgspec.structs.replace(out[i].event, source="manual"))
        yield rechain(out)


def units(genuine_log: list[StoredEvent]) -> list[list[int]]:
    """The command list cut into actions: each run of commands from one at rest (no action in progress, no tie
    open) to the next (a declaration and the answers that complete it), as indexes into the command list; those
    of the set-up, the ambush and the initiative left out."""
    lines = [encode_line(r) + b"\n" for r in genuine_log]
    befores = [s.before for s in step_through(LinesSource(lines)) if isinstance(s.rec.event, CommandIssued)]
    starts = [k for k, before in enumerate(befores) if not before.stack and not before.tie_open
              and before.phase is Phase.ROUNDS]
    return [list(range(a, b)) for a, b in zip(starts, [*starts[1:], len(befores)], strict=True)]


def edited_commands(played: Played, genuine_log: list[StoredEvent], how: str, knows_seed: bool
                    ) -> Iterator[list[StoredEvent]]:
    """Whole actions (a command and the answers that complete it) dropped, repeated, swapped with the next, or a
    check the fight had inserted elsewhere; the fight played again, its dice copied by a forger without the seed,
    drawn from the seed by one who knows it. Only the edits the rules accept are forgeries (an attack repeated in
    a turn whose Action is spent is refused, say)."""
    actions = units(genuine_log)
    rolled = set(rolling(played, genuine_log))
    checks = [a for a in actions if isinstance(played.commands[a[0]][0], StaticCheck)]
    count = 0
    for u, action in enumerate(actions[:-1]):
        if not rolled & set(action):
            continue
        order = [k for a in actions[:u] for k in a]
        rest = [k for a in actions[u + 1:] for k in a]
        following = actions[u + 1]
        if how == "drop":
            order += rest
        elif how == "duplicate":
            order += action + action + rest
        elif how == "swap":
            order += following + action + [k for a in actions[u + 2:] for k in a]
        else:
            order += checks[u % len(checks)] + action + rest
        commands = tuple(played.commands[k] for k in _head(actions) + order)
        dice = SeededDice(SEED) if knows_seed else LyingDice(SEED, copied(genuine_log))
        forged = play(msgspec.structs.replace(played, commands=commands), dice, len(genuine_log))
        if [encode_line(r) for r in forged] != [encode_line(r) for r in genuine_log]:
            yield forged
            count += 1
            if count == CASES:
                return


def _head(actions: list[list[int]]) -> list[int]:
    """The commands before the first action of the rounds (the ambush, the initiative and its answers)."""
    return list(range(actions[0][0]))


def chosen_faces(played: Played, genuine_log: list[StoredEvent], typed: bool) -> Iterator[list[StoredEvent]]:
    """One roll's faces chosen (each die its top face), the fight played again: labelled seeded, or typed into
    the roll's command (its ``dice``, as a GM with physical dice gives them: recorded as manual)."""
    rolls = [r for r in genuine_log if isinstance(r.event, DiceRolled)]
    batches = [r.seq for r in genuine_log if isinstance(r.event, CommandIssued)]
    for rolled in spread([r for r in rolls if any(d.face != d.sides for d in r.as_(DiceRolled).dice)]):
        roll = rolled.as_(DiceRolled)
        top = [d.sides for d in roll.dice]
        if not typed:
            forged = play(played, LyingDice(SEED, copied(genuine_log, {roll.counter: top})), len(genuine_log))
            if faces_at(forged).get((roll.counter, 0)) == (top[0], top[0]):  # the roll was made
                yield forged
            continue
        k = batches.index(rolled.batch)
        in_batch = [r for r in rolls if r.batch == rolled.batch]
        faces = tuple(f for r in in_batch for f in (top if r is rolled else [d.face for d in r.as_(DiceRolled).dice]))
        command, by = played.commands[k]
        commands = list(played.commands)
        commands[k] = (msgspec.structs.replace(command, dice=faces), by)
        forged = play(msgspec.structs.replace(played, commands=tuple(commands)), SeededDice(SEED), len(genuine_log))
        if any(isinstance(r.event, DiceRolled) and r.event.source == "manual" for r in forged):  # it was accepted
            yield forged


def fished(played: Played, genuine_log: list[StoredEvent], start: int) -> list[StoredEvent]:
    """The fight played with the seed by a GM who fishes for a check before the command at ``start`` (the start of
    an action): the check rolled, undone, a throwaway check rolled to move the roll counter on, the check rolled
    again (the undo re-roll listed by the audit)."""
    lines = [encode_line(r) + b"\n" for r in genuine_log]
    befores = [s.before for s in step_through(LinesSource(lines)) if isinstance(s.rec.event, CommandIssued)]
    who = present(befores[start].turn)
    fishing = ((StaticCheck(check=CheckSpec(who=who, skill="Perception"), difficulty=12), "gm"),
               (Undo(reason="fishing"), "gm"),
               (StaticCheck(check=CheckSpec(who=who, skill="Stealth"), difficulty=12), "gm"),
               (StaticCheck(check=CheckSpec(who=who, skill="Perception"), difficulty=12), "gm"))
    commands = played.commands[:start] + fishing + played.commands[start:]
    return play(msgspec.structs.replace(played, commands=commands), SeededDice(SEED), len(genuine_log))


def hidden_undo(played: Played, genuine_log: list[StoredEvent]) -> Iterator[tuple[list[StoredEvent], Head]]:
    """The fight :func:`fished` at the start of actions spread over it, and a forger WITHOUT the seed who drops the
    undone check and the undo and re-seals: the undo had rewound the roll counter, so the dice that remain still
    line up with the seed. Each forgery with the head witnessed at the end of the fight as it was played (the undo
    in it)."""
    for start in spread([a[0] for a in units(genuine_log)]):
        honest = fished(played, genuine_log, start)
        undo = next(r for r in honest if isinstance(r.event, Undone))
        undone = undo.as_(Undone)
        dropped = set(range(undone.from_seq, undone.to_seq + 1)) | {r.seq for r in honest if r.batch == undo.batch}
        yield rechain([r for r in honest if r.seq not in dropped]), Head(seq=honest[-1].seq, hash=honest[-1].hash)


def cut(genuine_log: list[StoredEvent]) -> Iterator[list[StoredEvent]]:
    """The log cut after a command's batch (a prefix: nothing re-sealed)."""
    ends = [r.seq for r in genuine_log if r.batch_size and r.seq == r.batch + r.batch_size - 1][2:-1]
    for end in spread(ends):
        yield genuine_log[:end]


def _commands(played: Played, genuine_log: list[StoredEvent], how: str, knows_seed: bool
              ) -> Iterator[list[StoredEvent]]:
    return edited_commands(played, genuine_log, how, knows_seed)


#: A forgery, or a forgery with the head witnessed at the end of the fight as played where that is not the genuine
#: log's (the fight played with an undo that the forgery hides).
Forgery = list[StoredEvent] | tuple[list[StoredEvent], Head]

FORGERIES: dict[str, Callable[[Played, list[StoredEvent]], Iterator[Forgery]]] = {
    "drop-event": lambda p, g: edited_events(g, "drop"),
    "duplicate-event": lambda p, g: edited_events(g, "duplicate"),
    "swap-events": lambda p, g: edited_events(g, "swap"),
    "insert-event": lambda p, g: edited_events(g, "insert"),
    "relabel": lambda p, g: edited_events(g, "relabel"),
    "faces": lambda p, g: chosen_faces(p, g, typed=False),
    "seeded-to-manual": lambda p, g: chosen_faces(p, g, typed=True),
    **{f"{how}-command": functools.partial(_commands, how=how, knows_seed=False)
       for how in ("drop", "duplicate", "swap", "insert")},
    **{f"{how}-command-with-seed": functools.partial(_commands, how=how, knows_seed=True)
       for how in ("drop", "duplicate", "swap", "insert")},
    "cut": lambda p, g: cut(g),
    "hide-undo": hidden_undo,
}


def verdict(report: Report) -> str:
    """caught (an integrity finding), listed (dice provenance only) or passes (no finding)."""
    return "caught" if not report.clean else "listed" if not report.strict_clean else "passes"


def audits(forged: list[StoredEvent], head: Head) -> tuple[str, ...]:
    """The verdicts of the four audits: the log alone, with the seed, with the head, with both."""
    return (verdict(verify(forged)), verdict(verify(forged, seed=SEED)), verdict(verify(forged, heads=[head])),
            verdict(verify(forged, seed=SEED, heads=[head])))


def cell(verdicts: list[str]) -> str:
    """A cell of the table: each verdict with how many of the forgeries got it (``caught 8/8``)."""
    counts = Counter(verdicts)
    return ", ".join(f"{v} {counts[v]}/{len(verdicts)}" for v in ("caught", "listed", "passes") if counts[v])


def stated_table() -> dict[str, tuple[str, ...]]:
    """docs/verify.md's forging table: each row's key (in backticks) and its four cells."""
    text = (ROOT / "docs" / "verify.md").read_text()
    table = text.split("<!-- forging table: tests/replay/test_forgery.py checks it -->", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        key = re.search(r"`([a-z-]+)`", cells[0])
        assert key is not None, line
        rows[key.group(1)] = tuple(cells[1:])
    return rows


@pytest.fixture(scope="module")
def measured(genuine: list[StoredEvent]) -> dict[str, tuple[str, ...]]:
    """Every forgery of every kind audited four ways: each kind's four cells."""
    played = read_back(genuine)
    head = Head(seq=genuine[-1].seq, hash=genuine[-1].hash)
    found = {}
    for kind, forge in FORGERIES.items():
        results = [audits(*(made if isinstance(made, tuple) else (made, head))) for made in forge(played, genuine)]
        assert results, f"no forgery of kind {kind} could be made"
        found[kind] = tuple(cell([r[col] for r in results]) for col in range(4))
    return found


def test_the_genuine_log_passes_every_audit_and_is_the_one_the_page_describes(genuine: list[StoredEvent]) -> None:
    """The fight as played: no finding with or without the seed and the head; its size as docs/verify.md says."""
    head = Head(seq=genuine[-1].seq, hash=genuine[-1].hash)
    assert audits(genuine, head) == ("passes",) * 4
    dice = [d for r in genuine if isinstance(r.event, DiceRolled) for d in r.event.dice]
    assert verify(genuine, seed=SEED).seeded_checked == len(dice)
    commands = sum(isinstance(r.event, CommandIssued) for r in genuine)
    sizes = {"2": "two", "3": "three", "4": "four"}[str(len({d.sides for d in dice}))]
    said = " ".join((ROOT / "docs" / "verify.md").read_text().split())
    assert f"({len(genuine)} events: {commands} commands, {len(dice)} seeded dice of {sizes} sizes," in said


def test_the_replayed_fight_is_the_genuine_one(genuine: list[StoredEvent]) -> None:
    """The forger's tool is faithful: the command list played again with dice copied from the log gives the very
    same log, byte for byte (so each forgery differs only by its edit)."""
    again = play(read_back(genuine), LyingDice(SEED, copied(genuine)))
    assert [encode_line(r) for r in again] == [encode_line(r) for r in genuine]


@pytest.mark.parametrize("kind", list(FORGERIES))
def test_the_page_states_each_verdict_and_its_figures(measured: dict[str, tuple[str, ...]], kind: str) -> None:
    """Each kind of forgery gets, in each of the four audits, the verdicts docs/verify.md states, in the
    numbers it states."""
    assert stated_table().get(kind) == measured[kind], (kind, measured[kind])


def test_the_page_lists_no_other_forgery() -> None:
    """The page's table has a row for each kind of forgery this test makes, and no other."""
    assert sorted(stated_table()) == sorted(FORGERIES)


def test_the_fished_fight_lists_its_undo_re_roll(genuine: list[StoredEvent]) -> None:
    """The fight as the fishing GM played it (the `hide-undo` row's genuine log) is sound with the seed and lists
    the undo re-roll the forgery hides: the voided Perception check beside the Perception check rolled again."""
    played = read_back(genuine)
    honest = fished(played, genuine, units(genuine)[0][0])
    report = verify(honest, seed=SEED)
    assert report.clean and report.seeded_checked == report.seeded_dice and len(report.rerolls) == 1


def test_crafted_side_files_change_no_verdict(genuine: list[StoredEvent], tmp_path: Path) -> None:
    """A face chosen and played again, the seed revealed in the log, stored beside crafted side files (a landmark
    index that covers the log but omits the seed's row, snapshots of the genuine fight, an offset index of another
    log): verify reads none of them and catches the die, as it does without them (issue #26, item 1)."""
    forged = next(chosen_faces(read_back(genuine), genuine, typed=False))
    fight = Fight.load(store_with(forged), FIGHT, dice=SeededDice(SEED))
    fight.execute(RevealSeed(seed=SEED.hex()))
    path = tmp_path / "forged.jsonl"
    JsonlStore.single(path).append(FIGHT, fight.events, 0)
    marks = path.with_name(path.name + ".marks")
    marks.write_text(marks.read_text().splitlines(keepends=True)[0])
    snapshots = FileSnapshots(f"{path}.snapshots")
    for seq in (50, 100, 150):
        snapshots.save(take(project(genuine, seq)))
    path.with_name(path.name + ".idx").write_text("1025 0\n2049 17\n")
    assert JsonlStore.single(path).landmarks(FIGHT) == []
    report = verify_store(JsonlStore.single(path), FIGHT)
    assert not report.clean and any(f.what.startswith("seeded die") for f in report.problems)
    assert report == verify(fight.events)


def store_with(records: list[StoredEvent]) -> MemoryStore:
    """A memory store holding ``records``."""
    store = MemoryStore()
    store.append(FIGHT, records, 0)
    return store
