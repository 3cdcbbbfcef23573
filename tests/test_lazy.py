"""The lazy replay path (omen_core.lazy, through omen_replay.replay.replay_store): the reference's state, errors
and checks, on fixture logs, generated benchmark-style logs, cut points, undos and redos, tampered lines."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omen_core import CheckSpec, Fight, ScriptedDice
from omen_core import lazy as lazy_module
from omen_core.content import Weapon
from omen_core.errors import LogCorrupted, TornTail
from omen_core.events import (
    EVENT_TYPES,
    GENESIS_HASH,
    UNDO_MARKERS,
    ActionSettled,
    DiceRolled,
    StoredEvent,
    decode_line,
    encode_line,
    seal,
)
from omen_core.lazy import (
    LAZY_FIELDS,
    FoldStats,
    UndoMarkerFound,
    decode_lazy,
    fold_lines,
)
from omen_core.machine import (
    Phase,
    phase_trigger_for,
    phase_trigger_of,
    trigger_for,
    trigger_of,
)
from omen_core.state import EFFECTS, FightState, fold, project, undo_history
from omen_core.store import JsonlStore, SqliteStore
from omen_replay.replay import replay, replay_store
from tests.sheets import sheet

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(ROOT.glob("fixtures/*/fight.jsonl"))
GENERATED_EVENTS = 2500


def read_log(path: Path) -> list[StoredEvent]:
    """Every event of a one-fight JSON Lines file, each line decoded in full (no lock file left beside it)."""
    return [decode_line(line) for line in path.read_bytes().splitlines()]


def jsonl(directory: Path, records: list[StoredEvent] | list[bytes], name: str = "fight.jsonl") -> JsonlStore:
    """A single-file JSON Lines store holding exactly ``records`` (events, or lines as bytes)."""
    path = directory / name
    path.write_bytes(b"".join(r if isinstance(r, bytes) else encode_line(r) + b"\n" for r in records))
    return JsonlStore.single(path)


def reseal(fight_id: str, events: list) -> list[StoredEvent]:
    """Events sealed into a fresh, sound hash chain, seqs 1, 2, 3..."""
    out, prev = [], GENESIS_HASH
    for seq, event in enumerate(events, 1):
        out.append(seal(fight_id, seq, 0, prev, event))
        prev = out[-1].hash
    return out


class _Reference:
    """A store seen without ``read_lines``: ``replay_store`` then runs its reference path (decode everything,
    ``project``), exactly as before the lazy fold."""

    def __init__(self, store: JsonlStore | SqliteStore) -> None:
        self.read, self.raw_lines = store.read, store.raw_lines


def outcome(run: Callable[[], FightState]) -> tuple:
    """What a replay gives: ("state", the state), or ("error", its type, message and seq)."""
    try:
        return "state", run()
    except Exception as exc:  # noqa: BLE001 - the point is to compare whatever is raised
        return "error", type(exc), str(exc), getattr(exc, "seq", None), getattr(exc, "line", None)


def lazily(store: JsonlStore | SqliteStore, fight_id: str, voided=None, to_seq=None) -> tuple[FightState, list[int]]:
    """The lazy fold of a store's lines, and the seqs it handed to the reference fold."""
    stats = FoldStats()
    state = fold_lines(store.read_lines(fight_id), fight_id, lambda after: store.read(fight_id, after),
                       voided=voided, to_seq=to_seq, stats=stats)
    return state, stats.slow


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """A benchmark-style log of GENERATED_EVENTS events (``benchmarks/genlog.py``: every kind of window and
    reaction, long rounds), written once for the module."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import genlog
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    path = tmp_path_factory.mktemp("generated") / "long.jsonl"
    genlog.generate(GENERATED_EVENTS, path)
    return path


@pytest.fixture(scope="module")
def generated_records(generated: Path) -> list[StoredEvent]:
    """The generated log's events."""
    return read_log(generated)


# -- equality with the reference ----------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.parent.name)
def test_fixture_logs_replay_to_the_reference_state(fixture: Path, tmp_path: Path):
    """Every golden fixture replays lazily to exactly project()'s state, only undo markers leaving the fast path."""
    records = read_log(fixture)
    store = jsonl(tmp_path, records)
    fight_id = records[0].fight_id
    voided, undos = undo_history(records)
    state, slow = lazily(store, fight_id, voided=voided)
    assert state == project(records) == replay_store(store, fight_id)
    assert slow == [r.seq for r in records if isinstance(r.event, UNDO_MARKERS)]
    if undos:
        with pytest.raises(UndoMarkerFound):
            lazily(store, fight_id)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.parent.name)
def test_fixture_logs_at_every_seq(fixture: Path, tmp_path: Path):
    """Cut at every seq of every fixture (undos so far applied), the lazy replay is the reference's state."""
    records = read_log(fixture)
    store = jsonl(tmp_path, records)
    fight_id = records[0].fight_id
    for to in range(len(records) + 1):
        assert replay_store(store, fight_id, to) == replay(records, to), f"to_seq {to}"


def test_generated_log_replays_to_the_reference_state(generated: Path, generated_records):
    """A long generated fight (reactions, windows, catches, routing) replays lazily to project()'s state, every
    event on the fast path."""
    store = JsonlStore.single(generated)
    state, slow = lazily(store, generated_records[0].fight_id)
    assert state == project(generated_records) == replay_store(store, generated_records[0].fight_id)
    assert slow == []


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_generated_log_at_random_cut_points(generated: Path, generated_records, data):
    """At any seq of the generated log (in the middle of actions, windows and reactions), the lazy replay is the
    reference's state, the actions in progress included."""
    to = data.draw(st.integers(0, len(generated_records)), label="to_seq")
    store = JsonlStore.single(generated)
    assert replay_store(store, generated_records[0].fight_id, to) == replay(generated_records, to)


def test_sqlite_store_replays_lazily_to_the_reference_state(generated_records, tmp_path: Path):
    """The SQLite store's lines take the same lazy path, to the same state, at the end and at cut points."""
    fight_id = generated_records[0].fight_id
    with SqliteStore(tmp_path / "f.db") as store:
        store.append(fight_id, generated_records, 0)
        state, slow = lazily(store, fight_id)
        assert state == project(generated_records) and slow == []
        for to in (1, 17, 500, 1234, len(generated_records) - 3):
            assert replay_store(store, fight_id, to) == replay(generated_records, to)


def duelists():
    """Ash and Bo, d6 everywhere, swords."""
    sword = (Weapon(id="sword", weapon_damage=3),)
    return (msgspec.structs.replace(sheet("ash"), weapons=sword),
            msgspec.structs.replace(sheet("bo", side="b"), weapons=sword))


commands = st.lists(st.tuples(st.sampled_from(["check", "attack", "attack", "condition", "undo", "undo", "redo"]),
                              st.lists(st.integers(1, 6), min_size=4, max_size=4)), min_size=1, max_size=10)


def play(store, script) -> Fight:
    """A fight between the duelists in ``store``, running ``script`` (refused commands are skipped)."""
    from omen_core.errors import RuleViolation

    fight = Fight.start(store, "u", dice=ScriptedDice([]), clock=lambda: 0)
    for s in duelists():
        fight.join(s)
    for kind, faces in script:
        fight.dice.feed(faces)
        try:
            if kind == "check":
                fight.static_check(CheckSpec(who="ash", attribute="STR"), 3)
            elif kind == "attack":
                fight.attack("ash", "bo")
                if fight.waiting_for is not None:
                    fight.defend("bo", None)
            elif kind == "condition":
                fight.apply_condition("bo", "Exhausted")
            elif kind == "undo":
                fight.undo()
            else:
                fight.redo()
        except RuleViolation:
            pass
    return fight


@settings(max_examples=25, deadline=None)
@given(script=commands)
def test_undos_and_redos_at_every_seq(script):
    """With undos and redos (and undone actions left half-way), the lazy replay at every seq is the reference's
    state, on JSON Lines and SQLite alike; only the undo markers leave the fast path."""
    with tempfile.TemporaryDirectory() as tmp:
        for store in (JsonlStore(Path(tmp) / "logs"), SqliteStore(Path(tmp) / "f.db")):
            fight = play(store, script)
            records = list(store.read("u"))
            assert replay_store(store, "u") == fight.state == project(records)
            for to in range(len(records) + 1):
                assert replay_store(store, "u", to) == replay(records, to), f"to_seq {to}"
            markers = [r for r in records if isinstance(r.event, UNDO_MARKERS)]
            _, slow = lazily(store, "u", voided=undo_history(markers)[0])
            assert slow == [r.seq for r in markers]
            getattr(store, "close", lambda: None)()


# -- errors: the reference's own --------------------------------------------------------------------------


def mutated(events: list, kind: str, i: int, j: int) -> list:
    """The events with one taken out, repeated, swapped with another, or moved elsewhere."""
    events = list(events)
    i, j = i % len(events), j % len(events)
    if kind == "drop":
        del events[i]
    elif kind == "repeat":
        events.insert(i, events[i])
    elif kind == "swap":
        events[i], events[j] = events[j], events[i]
    else:
        events.insert(j, events.pop(i))
    return events


@settings(max_examples=150, deadline=None)
@given(fixture=st.sampled_from(FIXTURES), kind=st.sampled_from(["drop", "repeat", "swap", "move"]),
       i=st.integers(0, 10_000), j=st.integers(0, 10_000))
def test_reordered_logs_fail_or_fold_exactly_as_the_reference(fixture: Path, kind: str, i: int, j: int):
    """A fixture with events dropped, repeated, swapped or moved (its chain sealed again, so that only the order
    is wrong) gives the same state as the reference, or fails with the same error: type, message and seq."""
    records = read_log(fixture)
    events = reseal(records[0].fight_id, mutated([r.event for r in records], kind, i, j))
    with tempfile.TemporaryDirectory() as tmp:
        store = jsonl(Path(tmp), events)
        fight_id = records[0].fight_id
        assert outcome(lambda: replay_store(store, fight_id)) == \
            outcome(lambda: replay_store(_Reference(store), fight_id)) == outcome(lambda: project(events))


def test_an_illegal_order_is_the_reference_error(tmp_path: Path):
    """A cost paid twice in an attack is refused with the reference's IllegalOrder, at the same seq, not folded."""
    from omen_core.machine import IllegalOrder

    records = read_log(ROOT / "fixtures" / "ember-ford" / "fight.jsonl")
    at = next(i for i, r in enumerate(records) if type(r.event).__name__ == "CostPaid")
    events = reseal(records[0].fight_id, [r.event for r in records[:at + 1]] + [records[at].event]
                    + [r.event for r in records[at + 1:]])
    store = jsonl(tmp_path, events)
    with pytest.raises(IllegalOrder) as lazy_error:
        replay_store(store, records[0].fight_id)
    with pytest.raises(IllegalOrder) as reference_error:
        project(events)
    assert (lazy_error.value.seq, str(lazy_error.value)) == (reference_error.value.seq, str(reference_error.value))
    assert lazy_error.value.seq == at + 2


# -- tampered and undecodable lines: reported as the store reports them ---------------------------------


def tamper(line: bytes, old: bytes, new: bytes) -> bytes:
    """The line with its first ``old`` replaced by ``new`` (which must be there)."""
    assert old in line, (old, line[:120])
    return line.replace(old, new, 1)


TAMPERINGS = {
    # a body that is not JSON at all, in an event the lazy path does not decode
    "settled body not JSON": (b'"type":"action_settled"', b'"type":"action_settled"', b'"type":"action_settled",,'),
    "cost body not JSON": (b'"type":"cost_paid"', b'"type":"cost_paid"', b'"type":cost_paid"'),
    "unknown event type": (b'"type":"reaction_passed"', b'"type":"reaction_passed"', b'"type":"reaction_skipped"'),
    # a field of the wrong type in a state-changing event (decoded in full) and in a field the order checks read
    "dice counter not an int": (b'"type":"dice_rolled"', b'"type":"dice_rolled","counter":', b'"type":"dice_rolled",'
                                b'"counter":"x","c":'),
    "settled action not an int": (b'"type":"action_settled"', b'"type":"action_settled","action":',
                                  b'"type":"action_settled","action":"7","a":'),
    "unknown envelope field": (b'"type":"turn_started"', b'"batch":', b'"extra":1,"batch":'),
    "seq not an int": (b'"type":"hit_determined"', b'"seq":', b'"seq":"1",'),
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_a_bad_line_is_reported_as_the_store_reports_it(generated_records, tmp_path: Path, name: str):
    """A line that does not decode as a stored event fails the lazy replay with the store's own LogCorrupted, at
    that line, with the message a full read gives, after folding the lines before it (as the reference)."""
    marker, old, new = TAMPERINGS[name]
    lines = [encode_line(r) + b"\n" for r in generated_records]
    at = next(i for i, line in enumerate(lines) if marker in line and i > 300)
    lines[at] = tamper(lines[at], old, new)
    store = jsonl(tmp_path, lines)
    fight_id = generated_records[0].fight_id
    got = outcome(lambda: replay_store(store, fight_id))
    assert got[:2] == ("error", LogCorrupted) and got[4] == at + 1
    assert got == outcome(lambda: replay_store(_Reference(store), fight_id))


def test_a_bad_row_is_reported_as_the_sqlite_store_reports_it(generated_records, tmp_path: Path):
    """In SQLite too, a row that does not decode, or a missing row, is the store's own LogCorrupted."""
    import sqlite3
    from contextlib import closing

    fight_id = generated_records[0].fight_id
    with SqliteStore(tmp_path / "f.db") as store:
        store.append(fight_id, generated_records, 0)
        with closing(sqlite3.connect(tmp_path / "f.db", isolation_level=None)) as conn:
            conn.execute("UPDATE events SET line = ? WHERE seq = 700", (b'{"garbage"',))
        assert outcome(lambda: replay_store(store, fight_id)) == outcome(lambda: replay_store(_Reference(store),
                                                                                              fight_id))
        assert outcome(lambda: replay_store(store, fight_id))[4] == 700
        with closing(sqlite3.connect(tmp_path / "f.db", isolation_level=None)) as conn:
            conn.execute("DELETE FROM events WHERE seq = 400")
        got = outcome(lambda: replay_store(store, fight_id))
        assert got == outcome(lambda: replay_store(_Reference(store), fight_id))
        assert got[:2] == ("error", LogCorrupted) and got[4] == 401 and "rows missing" in got[2]


@pytest.mark.parametrize("damage", ["empty line", "seq gap", "other fight", "torn tail", "last hash not hex"])
def test_broken_framing_is_reported_as_the_store_reports_it(generated_records, tmp_path: Path, damage: str):
    """Empty lines, missing events, another fight's event, a torn last line and a malformed last hash fail the
    lazy replay exactly as the reference replay fails."""
    lines = [encode_line(r) + b"\n" for r in generated_records[:900]]
    if damage == "empty line":
        lines.insert(450, b"\n")
    elif damage == "seq gap":
        del lines[450]
    elif damage == "other fight":
        lines[450] = encode_line(msgspec.structs.replace(generated_records[449], fight_id="other")) + b"\n"
    elif damage == "torn tail":
        lines[-1] = lines[-1][:100]
    else:
        lines[-1] = tamper(lines[-1], b'"hash":"', b'"hash":"Z')[:-3] + b'"}\n'
    store = jsonl(tmp_path, lines)
    fight_id = generated_records[0].fight_id
    got = outcome(lambda: replay_store(store, fight_id))
    assert got[0] == "error" and issubclass(got[1], LogCorrupted)
    assert got == outcome(lambda: replay_store(_Reference(store), fight_id))
    if damage == "torn tail":
        assert got[1] is TornTail and got[4] == 900


def test_nothing_after_to_seq_is_read(tmp_path: Path):
    """A replay to seq S neither folds nor reads what comes after S: a bad line or a torn tail there, with undos
    before it, does not stop it."""
    records = read_log(ROOT / "fixtures" / "ember-ford" / "fight.jsonl")
    lines = [encode_line(r) + b"\n" for r in records]
    lines[-5] = b"not an event\n"
    lines[-1] = lines[-1][:40]
    store = jsonl(tmp_path, lines)
    to = len(records) - 6
    assert replay_store(store, records[0].fight_id, to) == replay(records, to)
    with pytest.raises(LogCorrupted) as info:
        replay_store(store, records[0].fight_id)
    assert info.value.line == len(records) - 4


def test_what_plain_replay_does_not_check(generated_records, tmp_path: Path):
    """By design, the lazy replay does not look inside the bodies it does not decode, nor at the hashes before the
    last: a wrongly typed field there goes unnoticed (the state is the untampered log's), while a full read
    (verified replay, ``omen verify``) reports the line."""
    lines = [encode_line(r) + b"\n" for r in generated_records]
    at = next(i for i, line in enumerate(lines) if b'"type":"active_defense_declined"' in line)
    lines[at] = tamper(lines[at], b'"defender":"', b'"defender":7,"x":"')
    lines[at + 1] = tamper(lines[at + 1], b'"prev_hash":"', b'"prev_hash":"not hex ')
    store = jsonl(tmp_path, lines)
    fight_id = generated_records[0].fight_id
    assert replay_store(store, fight_id) == project(generated_records)
    with pytest.raises(LogCorrupted) as info:
        list(store.read(fight_id))
    assert info.value.line == at + 1


def test_a_bad_line_inside_an_action_left_open_is_reported(generated_records, tmp_path: Path):
    """The events of an action still open at the end are read in full, so a bad field among them is reported,
    as the reference reports it."""
    lines = [encode_line(r) + b"\n" for r in generated_records]
    at = next(i for i, line in enumerate(lines) if b'"type":"active_defense_window_opened"' in line and i > 400)
    lines[at] = tamper(lines[at], b'"attack_total":', b'"attack_total":"x","y":')
    store = jsonl(tmp_path, lines)
    fight_id = generated_records[0].fight_id
    got = outcome(lambda: replay_store(store, fight_id, at + 2))
    assert got[:2] == ("error", LogCorrupted) and got[4] == at + 1
    assert got == outcome(lambda: replay_store(_Reference(store), fight_id, at + 2))


# -- the fast path's derivations and assumptions --------------------------------------------------------


def all_records(generated_records) -> Iterator[StoredEvent]:
    """The events of every fixture and of the generated log."""
    for fixture in FIXTURES:
        yield from read_log(fixture)
    yield from generated_records


def test_stand_ins_give_the_reference_triggers(generated_records):
    """For every event of the fixtures and the generated log, the triggers computed from its lazy decode (the
    tables derived from the machines and trigger_for/phase_trigger_for) are trigger_of/phase_trigger_of's."""
    for rec in all_records(generated_records):
        if isinstance(rec.event, UNDO_MARKERS):
            continue
        lazy = decode_lazy(encode_line(rec)).event
        kind, trigger, phase_trigger, effect = lazy_module._SPECS[type(lazy)]
        assert kind is type(rec.event) and effect is EFFECTS.get(kind)
        assert (trigger or trigger_for(kind, lazy)) == trigger_of(rec.event)
        assert (phase_trigger or phase_trigger_for(kind, lazy)) == phase_trigger_of(rec.event)


def test_every_event_type_has_a_lazy_form():
    """Each event type decodes in full (it changes the state, or is an undo marker) or into a stand-in with its
    tag and only the fields the order checks read."""
    for kind in EVENT_TYPES:
        lazy = lazy_module._LAZY_TYPES[kind]
        if kind in EFFECTS or kind in UNDO_MARKERS:
            assert lazy is kind
        else:
            assert lazy.__struct_config__.tag == kind.__struct_config__.tag
            assert set(lazy.__struct_fields__) == set(LAZY_FIELDS) & set(kind.__struct_fields__)


def neutral(state: FightState) -> FightState:
    """The state without what the effects must not read: the action stack, phase, action count and position."""
    return msgspec.structs.replace(state, stack=(), phase=Phase.SETUP, actions=0, version=0, last_hash="",
                                   fight_id="")


def test_effects_do_not_read_the_stack_phase_or_position(generated_records):
    """Every effect gives the same result whatever the stack, phase, action count and position of the state it
    is applied to: the lazy fold keeps those apart and sets them at the end."""
    for records in (read_log(fixture) for fixture in FIXTURES), [generated_records]:
        for log in records:
            voided = undo_history(log)[0]
            state = FightState()
            for rec in log:
                effect = EFFECTS.get(type(rec.event))
                if effect is not None and rec.seq not in voided:
                    scrambled = msgspec.structs.replace(state, stack=(), phase=Phase.ENDED, actions=10 ** 6,
                                                        version=10 ** 6, last_hash="f" * 64, fight_id="elsewhere")
                    assert neutral(effect(scrambled, rec.event)) == neutral(effect(state, rec.event))
                state = project([rec], state, voided)


@pytest.mark.parametrize("kind", [ActionSettled, DiceRolled])
def test_a_type_the_fast_path_does_not_know_goes_to_the_reference(generated: Path, generated_records,
                                                                   monkeypatch, kind):
    """An event type without a fast-path entry (as a new type would be) is decoded in full and folded by the
    reference, event by event, to the same state."""
    monkeypatch.setitem(lazy_module._SPECS, lazy_module._LAZY_TYPES[kind], None)
    state, slow = lazily(JsonlStore.single(generated), generated_records[0].fight_id)
    assert state == project(generated_records)
    assert slow == [r.seq for r in generated_records if isinstance(r.event, kind)] != []


def test_the_lazy_state_folds_on(generated_records, tmp_path: Path):
    """The lazy fold's state at a cut in the middle of an action is a full state: folding the rest of the log the
    reference way from it gives the reference's state at the end."""
    fight_id = generated_records[0].fight_id
    store = jsonl(tmp_path, generated_records)
    declared = [r.seq for r in generated_records if type(r.event).__name__ == "AttackDeclared"]
    for cut in (declared[10] + 2, declared[100] + 5, declared[-20] + 1):
        state, _ = lazily(store, fight_id, to_seq=cut)
        assert not state.at_rest
        for rec in generated_records[cut:]:
            state = fold(state, rec)
        assert state == project(generated_records)
