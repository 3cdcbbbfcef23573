"""``Fight``, the public façade: load a fight from a store, decide commands, append, fold.

>>> from omen_core import Fight, MemoryStore, ScriptedDice, CheckSpec
>>> from omen_core.content import decode_content, CombatantSheet
>>> sheet = decode_content(b'''{"id": "kael", "name": "Kael", "side": "heroes", "hp": 20,
...   "attributes": {"STR": {"die": "d8", "bonus": 2}, "AGI": {"die": "d6", "bonus": 1},
...                  "INT": {"die": "d4"}, "RES": {"die": "d8"}, "FCS": {"die": "d6"}},
...   "skills": {"Climb": {"attribute": "STR", "level": 1}}}''', CombatantSheet)
>>> fight = Fight.start(MemoryStore(), "doc-fight", dice=ScriptedDice([5]), clock=lambda: 0)
>>> _ = fight.join(sheet)
>>> result = fight.static_check(CheckSpec(who="kael", skill="Climb"), difficulty=8)
>>> result.check.total, result.outcome      # 5 + STR bonus 2 + Climb level 1 = 8: a tie (C16)
(8, 'tie')
>>> fight.version                           # 1 start, 2 join, 3 command_issued, 4 the roll, 5 the result
5
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar, get_args

import msgspec

from .commands import first_field
from .content import (
    SHIPPED_ABILITIES,
    Branches,
    CombatantSheet,
    Ruleset,
    SaveEffect,
    TurnMoment,
    load_ruleset,
    reason_and_path,
    with_abilities,
)
from .decide import (
    AgreeInitiative,
    AnswerActiveDefense,
    AnswerCatch,
    AnswerDecision,
    ApplyConditionCommand,
    BeginAmbush,
    CallSave,
    CancelAction,
    CheckSpec,
    ChooseWillConversion,
    ClearConditionCommand,
    Command,
    Contest,
    DeclareAttack,
    Disengage,
    Draw,
    EndFight,
    EndTurn,
    Engage,
    Join,
    LeaveFight,
    Move,
    PassReaction,
    React,
    Redo,
    RevealSeed,
    RollInitiative,
    RollOff,
    RouteDamage,
    StandUp,
    StartFight,
    StaticCheck,
    Target,
    Undo,
    decided,
)
from .dice import DiceSource, NoDice, SeededDice
from .dice import commitment as seed_commitment
from .errors import (
    ConcurrencyError,
    FightExists,
    InvalidArgument,
    InvalidCommand,
    OmenError,
    RuleViolation,
    SeedMismatch,
    UnknownSeq,
    expect,
)
from .events import (
    UNDO_MARKERS,
    ActiveDefenseWindowOpened,
    CatchWindowOpened,
    CommandIssued,
    ContestResolved,
    DecisionOpened,
    Encircled,
    Event,
    FacesGiven,
    InitiativeTied,
    Modifier,
    ReactionWindowOpened,
    Redone,
    RoutingWindowOpened,
    Salts,
    Sealed,
    SeedRevealed,
    Situational,
    StaticCheckResolved,
    StoredEvent,
    Undone,
    WillConversionOffered,
    fresh_salts,
    random_salts,
    seal_line,
)
from .limits import MAX_WHOLE, beyond_whole, digit_run, first_leaf
from .logs import get_logger
from .options import Options, options, waiting_point
from .rules.ambush import TimeWaited
from .rules.attack import ActiveDefense
from .state import FightState
from .store.base import EventStore, check_fight_id
from .store.snapshots import SnapshotStore, take
from .walk import StoreSource, after_marker, landmarks_of, replay, state_at

__all__ = ["Clock", "system_clock", "CommandMemo", "validated", "Fight"]

Clock = Callable[[], int]
#: The faces a façade method's command carries (typed in from physical dice, in the order of C29), or None.
Faces = Sequence[int] | None
Window = (ActiveDefenseWindowOpened | RoutingWindowOpened | ReactionWindowOpened | CatchWindowOpened
          | WillConversionOffered | DecisionOpened)
E = TypeVar("E")
#: How many recent states a live fight keeps (by seq) so that undoing the last commands needs no re-reading.
_RECENT = 64
log = get_logger(__name__)


_COMMAND_JSON = msgspec.json.Encoder()
#: A JSON decoder for each command type, built once at import (an immutable table).
_COMMAND_DECODERS: Mapping[type, msgspec.json.Decoder[Any]] = MappingProxyType(
    {kind: msgspec.json.Decoder(kind) for kind in get_args(Command)})


class CommandMemo:
    """Commands validated lately, by their type and JSON: decoding is a pure function of the two (a fight's set-up
    sheets, an ``end_turn`` by the same combatant are validated once); bounded (``kept``), emptied when full.

    An explicit object, owned by a :class:`Fight` (each has its own unless
    given one) or by a caller running many fights in one process, who may
    share one among them (the simulator's fights join the same sheets).
    """

    def __init__(self, kept: int = 1024) -> None:
        self.kept = kept
        self._known: dict[tuple[type, bytes], Command] = {}

    def __len__(self) -> int:
        return len(self._known)

    def get(self, key: tuple[type, bytes]) -> Command | None:
        """The command validated before under ``key``, if it is still kept."""
        return self._known.get(key)

    def keep(self, key: tuple[type, bytes], command: Command) -> None:
        """Remember a validated command (the memo emptied first if full)."""
        if len(self._known) >= self.kept:
            self._known.clear()
        self._known[key] = command


def validated(command: Command, memo: CommandMemo | None = None) -> Command:
    """``command`` as the JSON decoders would have it, through its JSON: a command built in code gets every
    check a decoded one gets (ranges, patterns, a sheet's own consistency; no infinite number, no text that is
    not Unicode, nothing JSON cannot hold); :class:`InvalidCommand` names the field otherwise. With a ``memo``, a
    command of the same type and JSON validated before is that command (the same checks passed)."""
    tag = str(type(command).__struct_config__.tag)
    try:
        text = _COMMAND_JSON.encode(command)
    except (TypeError, ValueError, UnicodeError, OverflowError) as exc:
        raise InvalidCommand(tag, _unencodable(command, "$"), f"cannot be written as JSON: {exc}") from None
    kind = type(command)
    key = (kind, text)
    known = memo.get(key) if memo is not None else None
    if known is not None:  # the same JSON decoded before: the same checks passed, the same (immutable) command
        return known
    decoder = _COMMAND_DECODERS.get(kind)
    if decoder is None:  # a subclass of a command type: its decoder made for this call
        decoder = msgspec.json.Decoder(kind)
    try:
        checked: Command = decoder.decode(text)
    except msgspec.ValidationError as exc:
        reason, path = reason_and_path(exc)
        raise InvalidCommand(tag, path, reason) from None
    except msgspec.DecodeError as exc:  # e.g. a number JSON cannot hold (an infinity is written as null)
        raise InvalidCommand(tag, "$", str(exc)) from None
    if b'"origin"' in text or b'"owner"' in text:  # perhaps a modifier claiming what made it: the engine's word
        where = first_field(checked, _claimed_origin)
        if where is not None:
            raise RuleViolation("C5", f"{tag}: a command's modifier is situational (the GM's word): what made a "
                                      "term (a condition, an ability) and whose it is are recorded by the engine, not "
                                      "given; give its source and value alone", field=where)
            # (a 422: the schema a client reads allows the field, which only the engine fills in; it was a 400, and
            # a conformance client sending what the schema allows read it as a schema the server does not keep)
    if digit_run(text):  # 16 digits or more somewhere: perhaps a whole number past every JSON reader's
        where = beyond_whole(msgspec.json.decode(text))
        if where is not None:
            raise InvalidCommand(tag, where, f"a whole number beyond ±{MAX_WHOLE} (2**53 - 1: the largest every "
                                             "JSON reader holds exactly); no number of the rules comes near it")
    if memo is not None:
        memo.keep(key, checked)
    return checked


def _claimed_origin(held: object) -> str | None:
    """For a modifier of a command that gives an ``origin`` or an ``owner`` (the engine's to record), that field."""
    if isinstance(held, Modifier):
        return ".origin" if held.origin else ".owner" if held.owner else None
    return None


def _recordable(command: Command, batch: Sealed) -> None:
    """Refuse ``command`` (:class:`InvalidCommand`, nothing written) if its events would record a whole number past
    ±:data:`~omen_core.limits.MAX_WHOLE`, naming the event, its seq, the field and the number. Every number a
    command or a sheet holds is within the bound, but the totals made of them are not: sums (a bonus of 2**53 - 1
    plus its die) and products (stacks times a per-stack modifier, damage times an incoming multiplier); a log
    holds none past it (I-JSON: it is read in any language; docs/rulings.md "Limits on dice")."""
    if not digit_run(b"\n".join(batch.lines)):
        return  # the usual case, the whole batch at once: no 16 digits in a row anywhere (its hashes and salts too)
    for stored, line in zip(batch, batch.lines, strict=True):
        numbers = line[:line.find(b',"prev_hash":')] + line[line.find(b',"event":'):-_HASH_FIELD]  # not the hex
        if not digit_run(numbers):
            continue  # no 16 digits in a row: every number the line records is within the bound
        found = first_leaf(msgspec.json.decode(line), lambda v: type(v) is int and abs(v) > MAX_WHOLE)
        if found is not None:
            field, value = found
            why = ("the numbers it adds up or multiplies (bonuses, ratings, modifiers, stacks, damage) are too large "
                   "for a log" if field.startswith("$.event.") else "no log holds it")
            raise InvalidCommand(str(type(command).__struct_config__.tag), "$",
                                 f"its {stored.event.__struct_config__.tag} event (seq {stored.seq}) would record "
                                 f"{value} at {field}, a whole number beyond ±{MAX_WHOLE} (2**53 - 1: the largest "
                                 f"every JSON reader holds exactly): {why}; nothing written")


_HASH_FIELD = len(',"hash":""}') + 64  # a line's last field (hex, as its prev_hash and salt: no numbers there)


def written_out(command: Command) -> Command:
    """``command`` as the log records it: a sheet joining with shipped abilities listed by id has them written out
    in full (C37), so the fight never depends on the library's later releases (docs/abilities.md)."""
    if isinstance(command, Join) and isinstance(command.sheet, CombatantSheet) \
            and any(isinstance(a, str) for a in command.sheet.abilities):
        try:
            sheet = with_abilities(command.sheet, SHIPPED_ABILITIES)
        except ValueError:  # a sheet built in Python past its own checks: the join refuses it as it stands
            return command
        if sheet is not command.sheet:
            return msgspec.structs.replace(command, sheet=sheet)
    return command


def _unencodable(value: object, path: str) -> str:
    """The path of the first part of ``value`` JSON cannot hold (``value``'s own, if no part is to blame)."""
    parts: list[tuple[str, object]] = []
    if isinstance(value, msgspec.Struct):
        parts = [(f"{path}.{name}", getattr(value, name)) for name in value.__struct_fields__]
    elif isinstance(value, dict):
        parts = [(f"{path}.{key}", item) for key, item in value.items()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    for where, part in parts:
        try:
            _COMMAND_JSON.encode(part)
        except (TypeError, ValueError, UnicodeError, OverflowError):
            return _unencodable(part, where)
    return path


def _checked_by(by: object) -> str:
    """Who gives a command, as text JSON can hold; :class:`InvalidCommand` otherwise."""
    if not isinstance(by, str):
        raise InvalidCommand("command_issued", "$.by", f"who gives a command is text, not {type(by).__name__}")
    try:
        by.encode("utf-8")
    except UnicodeError as exc:
        raise InvalidCommand("command_issued", "$.by", f"not Unicode text: {exc}") from None
    return by


_DICE_WORDS = "a dice source (SeededDice, ManualDice or ScriptedDice)"


def _dice_arg(dice: DiceSource | None) -> DiceSource | None:
    """``dice`` if it is a dice source or None; :class:`InvalidArgument` naming ``dice`` otherwise."""
    if dice is not None and not all(hasattr(dice, part) for part in ("kind", "faces", "checkpoint", "restore")):
        raise InvalidArgument("dice", _DICE_WORDS + " or None", dice)
    return dice


def _typists(commands: Sequence[object], by: str, faces_by: object) -> tuple[FacesGiven, ...]:
    """``faces_by`` (:meth:`Fight.execute`) as the runs a ``command_issued`` records: none where every face is
    ``by``'s; :class:`InvalidArgument` unless it is runs ``(who, how many)`` adding up to the faces of a single
    command."""
    if isinstance(faces_by, (str, bytes, Mapping)) or not isinstance(faces_by, Sequence):
        raise InvalidArgument("faces_by", "a sequence of (who, how many faces) runs", faces_by)
    if not faces_by:
        return ()
    runs = []
    for run in faces_by:
        if not (isinstance(run, tuple) and len(run) == 2 and isinstance(run[0], str) and type(run[1]) is int
                and run[1] >= 1):
            raise InvalidArgument("faces_by", "runs (who, how many faces), each of at least 1 face", run)
        runs.append(FacesGiven(by=_checked_by(run[0]), faces=run[1]))
    given = commands[0].dice if len(commands) == 1 and isinstance(commands[0], get_args(Command)) else None
    if given is None or sum(r.faces for r in runs) != len(given):
        raise InvalidArgument("faces_by", f"runs adding up to the faces of one command "
                              f"({len(given) if given is not None else 'none'} given)", faces_by)
    return () if all(r.by == by for r in runs) else tuple(runs)


def _check_command(command: object) -> None:
    """:class:`InvalidCommand` for anything :meth:`Fight.execute` is given that is not a command (a dict: build
    the command with :func:`omen_core.commands.command_from`)."""
    if isinstance(command, get_args(Command)):
        return
    hint = " (build one from data with omen_core.commands.command_from)" if isinstance(command, (Mapping, str, bytes)) \
        else ""
    raise InvalidCommand(type(command).__name__, "$", f"expected a command (a Struct of omen_core.commands), not "
                                   f"{type(command).__name__}{hint}")


def _pair(value: object, parameter: str, names: tuple[str, str], expected: str) -> dict[str, Any]:
    """``value``, a pair (a tuple or list of two), as the fields ``names``; :class:`InvalidArgument` naming
    ``parameter`` otherwise (the fields' own checks are the command's: :func:`validated`)."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InvalidArgument(parameter, expected, value)
    return dict(zip(names, value, strict=True))


def system_clock() -> int:
    """Milliseconds since the Unix epoch, UTC: the default ``recorded_at`` clock."""
    return time.time_ns() // 1_000_000


class _History:
    """What an undo back to a chosen seq asks of the log (:class:`omen_core.decide.History`), from the store."""

    def __init__(self, fight: Fight):
        self.fight = fight

    def target(self, seq: int) -> Target | None:
        fight = self.fight
        rec = next(iter(fight.store.read(fight.fight_id, seq - 1)), None) if seq >= 1 else None
        if rec is None or rec.seq != seq:
            return None
        voided = landmarks_of(StoreSource(fight.store, fight.fight_id).log_landmarks()).voided()  # the log's own
        return Target(before=fight.state_after(seq - 1), event=rec.event, seq=seq, batch=rec.batch,
                      live=seq not in voided)


def _ids(given: Sequence[str], parameter: str) -> tuple[str, ...]:
    """A façade argument naming combatants, as a tuple; a text (one id where a sequence of ids is wanted, which
    ``tuple`` would take letter by letter) is :class:`InvalidArgument` naming ``parameter``."""
    if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
        raise InvalidArgument(parameter, "a sequence of combatant ids (a list or tuple, not one id as text)", given)
    return tuple(given)


class Fight:
    """One fight: its store, dice source, clock, salts and the state folded from its events.

    Create with :meth:`start` or :meth:`load`. Every command method decides,
    appends atomically with optimistic concurrency, and keeps the state its
    decision computed (each event is folded once); a command that breaks a
    rule raises and appends nothing. Each event's hash is salted with
    ``salts(fight_id, seq)`` (random by default: docs/events.md).
    """

    def __init__(self, store: EventStore, state: FightState, dice: DiceSource | None,
                 clock: Clock, snapshots: SnapshotStore | None = None, snapshot_every: int = 500,
                 salts: Salts = random_salts, commands: CommandMemo | None = None):
        self.store = expect(store, EventStore, "store", "an event store (MemoryStore, JsonlStore, SqliteStore, "
                                                        "PostgresStore, or open_store(url))")
        self.clock, self.salts = clock, salts
        self.commands = commands if commands is not None else CommandMemo()
        self.snapshots, self.snapshot_every = snapshots, snapshot_every
        self._state = state
        self._dice_source = _dice_arg(dice)  # its seed is checked at each command (and on assignment to ``dice``)
        self._recent: dict[int, FightState] = {state.version: state}

    @classmethod
    def start(cls, store: EventStore, fight_id: str, *, dice: DiceSource,
              clock: Clock = system_clock, ruleset: Ruleset | None = None, title: str = "",
              snapshots: SnapshotStore | None = None, snapshot_every: int = 500,
              combatants: Sequence[CombatantSheet] = (), salts: Salts = random_salts,
              commands: CommandMemo | None = None) -> Fight:
        """Open a new fight under ``ruleset`` (default: the shipped core ruleset), with ``combatants`` joined in
        the same atomic append (a sheet the rules refuse, and nothing is written at all: its error's
        ``sheet_index`` is that sheet's index in ``combatants``).

        For seeded dice only the seed's commitment goes into the first event.
        With a snapshot store, the state is snapshotted every ``snapshot_every``
        events (a cache for loading, time travel and undo).
        """
        check_fight_id(fight_id)
        if dice is None:
            raise InvalidArgument("dice", _DICE_WORDS, dice)
        pledge = dice.commitment if isinstance(dice, SeededDice) else None
        fight = cls(store, FightState(fight_id=fight_id), dice, clock, snapshots, snapshot_every, salts, commands)
        begin = StartFight(ruleset=ruleset or load_ruleset(), dice_source=dice.kind, seed_commitment=pledge,
                           title=title)
        try:
            fight.execute_all([begin, *(Join(sheet=sheet) for sheet in combatants)])
        except OmenError as exc:
            if exc.command_index:  # a join's refusal: the sheet's place among those given (the start is command 0)
                exc.sheet_index = exc.command_index - 1
            if not isinstance(exc, ConcurrencyError):
                raise
            if exc.expected == 0 and exc.actual > 0 and not isinstance(exc, FightExists):
                raise FightExists(fight_id, exc.actual) from None
            raise
        return fight

    @classmethod
    def load(cls, store: EventStore, fight_id: str, *, dice: DiceSource | None = None,
             clock: Clock = system_clock, snapshots: SnapshotStore | None = None,
             snapshot_every: int = 500, salts: Salts = random_salts, commands: CommandMemo | None = None) -> Fight:
        """Rebuild a stored fight from its events (from its latest usable snapshot, if any), checking the
        hash chain of every event read. A :class:`SeededDice` must hold the seed the fight's dice are drawn under
        now (it hashes to the commitment in force: the first, or the fresh one a reveal committed to, C42): every
        command but ``reveal_seed`` (which checks the seed it reveals) is refused with
        :class:`~omen_core.errors.SeedMismatch` otherwise, before anything is rolled or written (a caller may
        first look at the state, and give the fight other dice: ``fight.dice = ...``, checked the same way)."""
        expect(store, EventStore, "store", "an event store (MemoryStore, JsonlStore, SqliteStore, PostgresStore, "
                                           "or open_store(url))")
        state = state_at(StoreSource(store, fight_id), snapshots)
        if not state.version:
            from .errors import UnknownFight

            raise UnknownFight(fight_id, getattr(store, "location", repr(store)))
        return cls(store, state, dice, clock, snapshots, snapshot_every, salts, commands)

    @property
    def dice(self) -> DiceSource | None:
        """Where the dice come from (None: every command carries its faces). Given a :class:`SeededDice`, its
        seed must hash to the commitment in force (C42): :class:`~omen_core.errors.SeedMismatch` otherwise."""
        return self._dice_source

    @dice.setter
    def dice(self, dice: DiceSource | None) -> None:
        self._check_seed(_dice_arg(dice), self._state)
        self._dice_source = dice

    def _check_seed(self, dice: DiceSource | None, state: FightState) -> None:
        """Refuse seeded dice whose seed does not hash to the commitment in force at ``state`` (C42): a wrong
        seed's dice would be recorded as seeded and fail verification; a revealed (spent) seed's are predictable."""
        if not isinstance(dice, SeededDice) or not state.started or dice.commitment == state.seed_commitment:
            return  # before the start nothing is in force: the start records the dice's own commitment
        raise SeedMismatch(state.seed_commitment, dice.commitment, given="the seeded dice's seed",
                           spent=self._revealed_before(dice.seed, state))

    def _revealed_before(self, seed: bytes, state: FightState) -> bool:
        """Whether the log up to ``state`` reveals ``seed``: a seed spent and public (C42)."""
        hexed = seed.hex()
        return state.version > 0 and any(isinstance(rec.event, SeedRevealed) and rec.event.seed == hexed
                                         for rec in self.store.read(state.fight_id))

    def catch_up(self) -> int:
        """Take in the events appended to the store since this fight's version by another ``Fight`` (another
        process, another server): folded from the state held, the walk checking that they continue its hash
        chain, the state before them kept among the recent ones (undo and options find it without a replay).
        Among them an undo or redo, which may reach back past the states held, and the fight is walked again
        from the store (its snapshots, if any). Returns how many events were taken in."""
        before = self._state
        if self.store.version(self.fight_id) == before.version:
            return 0
        source = StoreSource(self.store, self.fight_id)
        marks = landmarks_of(source.landmarks())
        if any(u.seq > before.version for u in marks.undos) or any(r > before.version for r, _u in marks.redos):
            state = state_at(source, self.snapshots)
            self._recent = {state.version: state}
            self._state = state
        else:
            self._keep(replay(source, start=before))
        return self._state.version - before.version

    def snapshot(self) -> None:
        """Take a snapshot of the current state now (needs a snapshot store)."""
        if self.snapshots is None:
            raise RuleViolation("snapshots", "this fight has no snapshot store")
        self.snapshots.save(take(self._state))

    def state_after(self, seq: int) -> FightState:
        """The state just after the event at ``seq``, as the log stands now (a recent one kept in memory, else
        walked from the latest usable snapshot); ``0``: before the first event. A seq the log has no event at
        (below 0, past the head) is :class:`~omen_core.errors.UnknownSeq` (it gave the state at the nearest end)."""
        expect(seq, int, "seq", "a seq (a whole number)")
        if isinstance(seq, bool) or not 0 <= seq <= self.version:
            raise UnknownSeq(seq, 1, self.version, f"fight {self.fight_id!r}")
        kept = self._recent.get(seq)
        if kept is not None:
            return kept
        return state_at(StoreSource(self.store, self.fight_id), self.snapshots, seq)

    def undo(self, to_seq: int | None = None, reason: str = "", *, by: str = "") -> Undone:
        """Undo the last command, or everything from ``to_seq`` on, by appending an event that voids them.

        History is never rewritten: the undone events stay in the log, and the
        projection skips them. Undo goes back to safe points only: the start of
        a command that began with no action in progress; undoing an answer to
        a window undoes the whole action. Returns the :class:`Undone` event.
        The state it goes back to is one kept in memory or walked from a
        snapshot: an undo costs the same on a long log as on a short one.
        """
        event = self.execute(Undo(to_seq=to_seq, reason=reason), by)[-1].event
        assert isinstance(event, Undone)
        return event

    def redo(self, reason: str = "", *, by: str = "") -> Redone:
        """Take back the last undo, if nothing has been done since (``by``: who, for the record)."""
        event = self.execute(Redo(reason=reason), by)[-1].event
        assert isinstance(event, Redone)
        return event

    @property
    def state(self) -> FightState:
        """The current state, folded from every event."""
        return self._state

    @property
    def fight_id(self) -> str:
        """This fight's stream id."""
        return self._state.fight_id

    @property
    def version(self) -> int:
        """The seq of the last event."""
        return self._state.version

    @property
    def events(self) -> list[StoredEvent]:
        """Every stored event of this fight, read from the store."""
        return list(self.store.read(self.fight_id))

    def execute(self, command: Command, by: str = "", then_roll: bool = False,
                physical: Collection[str] = (), faces_by: Sequence[tuple[str, int]] = ()) -> list[StoredEvent]:
        """Decide ``command`` (given by ``by``, for the record), append its events, and keep the state the
        decision computed; return the stored events. ``then_roll``: the dice after the faces the command carries
        roll from the fight's own source (a player types its own dice in a seeded fight; C29). ``physical``: in a
        seeded fight, the combatants whose dice are physical: their rolls take the command's faces in C29 order
        (too few: :class:`~omen_core.dice.FacesNeeded`, naming those rolls alone), every other roll is the seed's,
        wherever it comes (ignored in a fight whose dice are not seeded: every die of it is typed or scripted).
        ``faces_by``: who typed the command's faces, as runs ``(who, how many)`` in their order, adding up to
        them all, where another than ``by`` typed some (a command staged for another seat's dice); recorded in its
        ``command_issued`` (:class:`InvalidArgument` if the runs do not add up to the faces it carries).

        Everything is checked before anything is written: the command's
        arguments exactly as the JSON decoders check them
        (:class:`~omen_core.errors.InvalidCommand`), the rules, the faces it
        carries (too few or too many), and that its events record no whole
        number past 2**53 - 1 (a total made of large numbers: InvalidCommand
        naming the event and the field). A refused command appends nothing.
        """
        return self.execute_all([command], by, then_roll, physical, faces_by)

    def execute_all(self, commands: Sequence[Command], by: str = "", then_roll: bool = False,
                    physical: Collection[str] = (), faces_by: Sequence[tuple[str, int]] = ()) -> list[StoredEvent]:
        """Decide several commands one after the other and append all their events at once, atomically: all of
        them or none (each still its own batch). How a fight's set-up is written in one go. An :class:`OmenError`
        one of the commands raises carries that command's index in ``commands`` (``command_index``)."""
        by = _checked_by(by)
        if isinstance(commands, (str, bytes, Mapping)) or not isinstance(commands, Sequence):
            raise InvalidArgument("commands", "a sequence of commands", commands)
        dice = source = self._dice()
        mark = source.checkpoint()
        if isinstance(physical, (str, bytes)) or not isinstance(physical, Collection):
            raise InvalidArgument("physical", "a collection of combatant ids", physical)
        rolled_by = frozenset(physical)
        typed = (lambda request: request.roller in rolled_by) if rolled_by and dice.kind == "seeded" else None
        typists = _typists(commands, by, faces_by)
        state, stored, drafts = self._state, Sealed(), []
        following: SeededDice | None = None
        try:
            for given in commands:
                _check_command(given)
                whole = given
                if not isinstance(given, RevealSeed):  # a reveal checks its own seed, and rolls nothing
                    self._check_seed(dice, state)
                elif not given.seed and isinstance(dice, SeededDice):  # the seed left out: the seeded dice's own
                    whole = msgspec.structs.replace(given, seed=dice.seed.hex())
                command, fresh = self._spent(written_out(whole), state, following)
                if fresh is not None and fresh is not following:  # the seed revealed is spent (C42): the batch's
                    dice = following = fresh                          # later dice come from the fresh one
                checked = validated(command, self.commands)
                draft = decided(state, checked, dice, _History(self), by, then_roll, typed)
                if typists and draft.events and isinstance(draft.events[0], CommandIssued):
                    draft.events[0] = msgspec.structs.replace(draft.events[0], faces_by=typists)
                batch = self._seal(draft.events, state)
                _recordable(checked, batch)
                stored.extend_sealed(batch)
                state = self._after(draft.state, batch)
                drafts.append(checked)
            self.store.append(self.fight_id, stored, self._state.version)
        except BaseException as exc:
            source.restore(mark)
            if isinstance(exc, OmenError) and len(drafts) < len(commands) and exc.command_index is None:
                exc.command_index = len(drafts)  # the command deciding when it was raised (not the append's)
            raise
        first = self._state.version + 1
        self._keep(state)
        if following is not None:  # the seed revealed is spent: the dice come from the fresh one (C42)
            self.dice = following
        if self.snapshots is not None and state.version // self.snapshot_every > (first - 1) // self.snapshot_every:
            self._cache(state)
        if log.on():  # the list of tags is made only for a host that logs
            log.debug("events_appended", fight_id=state.fight_id, first_seq=first, last_seq=state.version,
                      commands=[type(command).__struct_config__.tag for command in drafts])
        last = stored[-1]
        if isinstance(last.event, UNDO_MARKERS):
            log.info("undo" if isinstance(last.event, Undone) else "redo", fight_id=self.fight_id,
                     **msgspec.to_builtins(last.event))
        return stored

    def _cache(self, state: FightState) -> None:
        """Save a periodic snapshot: a cache, so one that cannot be written (a full disk, a link in the way) is a
        warning in omen's log, never the failure of a command already appended."""
        assert self.snapshots is not None
        try:
            self.snapshots.save(take(state))
        except OmenError as exc:
            log.warning("snapshot_not_saved", fight_id=state.fight_id, seq=state.version, error=str(exc))

    def _after(self, decided_state: FightState, batch: list[StoredEvent]) -> FightState:
        """The state after a sealed batch: the one its decision computed, at the batch's position; after an undo or
        redo marker, the state the walk goes back to."""
        last = batch[-1]
        if isinstance(last.event, UNDO_MARKERS):
            before = msgspec.structs.replace(decided_state, version=last.seq - 1)
            return after_marker(before, last, self.state_after, self._batch_of)
        return msgspec.structs.replace(decided_state, fight_id=self.fight_id, version=last.seq, last_hash=last.hash)

    def _keep(self, state: FightState) -> None:
        self._state = state
        self._recent[state.version] = state
        if len(self._recent) > _RECENT:  # the oldest, by seq: states are kept in the order of their seqs
            del self._recent[next(iter(self._recent))]

    def _batch_of(self, seq: int) -> int | None:
        rec = next(iter(self.store.read(self.fight_id, seq - 1)), None)
        return rec.batch if rec is not None and rec.seq == seq else None

    def join(self, sheet: CombatantSheet) -> CombatantSheet:
        """Add a combatant from its sheet."""
        self.execute(Join(sheet=sheet))
        return sheet

    def static_check(self, check: CheckSpec, difficulty: int,
            *, dice: Faces = None, by: str = "") -> StaticCheckResolved:
        """Roll a skill or attribute check against a difficulty (C16)."""
        return self._last(self._do(StaticCheck(check=check, difficulty=difficulty), dice, by),
                          StaticCheckResolved)

    def contest(self, initiator: CheckSpec, defender: CheckSpec,
            *, dice: Faces = None, by: str = "") -> ContestResolved:
        """Roll a contested check; ties favour the defender (C16)."""
        return self._last(self._do(Contest(initiator=initiator, defender=defender), dice, by),
                          ContestResolved)

    def attack(self, attacker: str, target: str, *, weapon: str | None = None, unarmed: bool = False,
               high_ground: bool = False, encircled: tuple[int, int] | None = None, rage: bool = False,
               damage_modifiers: tuple[Modifier, ...] = (), branches: Branches | None = None,
               dice: Faces = None, by: str = "") -> list[Event]:
        """Declare an attack and resolve it up to the next choice (an open window) or to the end.

        ``encircled`` is the claim (A, D) of C26. Returns the new events;
        :attr:`waiting_for` tells whether a window is now open.

        >>> from omen_core import MemoryStore, ScriptedDice
        >>> from omen_core.content import decode_content, CombatantSheet
        >>> def sheet(cid, side, extra=""):
        ...     return decode_content(f'''{{"id": "{cid}", "name": "{cid}", "side": "{side}", "hp": 20,
        ...       "attributes": {{"STR": {{"die": "d8", "bonus": 2}}, "AGI": {{"die": "d6", "bonus": 1}},
        ...         "INT": {{"die": "d4"}}, "RES": {{"die": "d6", "bonus": 1}}, "FCS": {{"die": "d6"}}}}
        ...       {extra}}}''', CombatantSheet)
        >>> fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([6, 3, 2, 5]), clock=lambda: 0)
        >>> _ = fight.join(sheet("ash", "a", ', "weapons": [{"id": "axe", "weapon_damage": 4}]'))
        >>> _ = fight.join(sheet("bo", "b"))
        >>> _ = fight.attack("ash", "bo")     # hit 6 + 3 + 2 = 11 against base defense 2 + 1 = 3
        >>> fight.waiting_for.eligible         # bo has no weapon or shield: only Dodge (C9)
        ('dodge',)
        >>> _ = fight.defend("bo", "dodge")  # + AGI d6 5 + 1: defense 9, still a hit
        >>> fight.state.combatants["bo"].hp  # no crit (FCS 3 + 0 vs RES 2 + 1); 20 - (6 + 2 STR + 4 WD)
        8
        """
        claim = "the claim (A, D) of C26: two whole numbers, or None"
        circle = None if encircled is None else Encircled(**_pair(encircled, "encircled", ("attackers", "defenders"),
                                                                  claim))
        return self._events(self._do(DeclareAttack(
            attacker=attacker, target=target, weapon=weapon, unarmed=unarmed,
            situational=Situational(high_ground=high_ground, encircled=circle), rage=rage,
            damage_modifiers=damage_modifiers, branches=branches or Branches()), dice, by))

    def defend(self, defender: str, defense: ActiveDefense | None, weapon: str | None = None,
            *, dice: Faces = None, by: str = "") -> list[Event]:
        """Answer the open Active Defense window: ``"dodge"``, ``"parry"``, ``"block"`` or None to decline."""
        return self._events(self._do(AnswerActiveDefense(defender=defender, defense=defense, weapon=weapon), dice, by))

    def route(self, attacker: str, die: int | None, *, dice: Faces = None, by: str = "") -> list[Event]:
        """A Rogue's routing choice: which hit-pool die (by index) feeds damage, or None (C12)."""
        return self._events(self._do(RouteDamage(attacker=attacker, die=die), dice, by))

    def choose_will_conversion(self, who: str, convert: bool, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Answer a Will-conversion choice (C31): ``convert`` sends the hit's damage to Will, else to HP."""
        return self._events(self._do(ChooseWillConversion(who=who, convert=convert), dice, by))

    def call_save(self, caller: str, saver: str, effect: SaveEffect,
            *, dice: Faces = None, by: str = "") -> list[Event]:
        """An effect calls for a save; its branch's consequences are applied in order (C15, C25)."""
        return self._events(self._do(CallSave(caller=caller, saver=saver, effect=effect), dice, by))

    def apply_condition(self, who: str, condition: str, stacks: int = 1, reason: str = "", *, by: str | None = None,
                        until: TurnMoment | None = None, of: str | None = None) -> list[Event]:
        """The GM applies stacks of a condition (C28): ``by`` who applied it (a condition a save ends needs one:
        its die opposes the save), ``until`` the start or end of ``of``'s next turn (default ``by``'s, C40)."""
        return self._events(self.execute(ApplyConditionCommand(who=who, condition=condition, stacks=stacks,
                                                               reason=reason, by=by, until=until, of=of)))

    def clear_condition(self, who: str, condition: str, reason: str = "",
            *, dice: Faces = None, by: str = "") -> list[Event]:
        """The GM clears a condition."""
        return self._events(self._do(ClearConditionCommand(who=who, condition=condition, reason=reason), dice, by))

    def cancel(self, reason: str, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Cancel the declared action before it resolves."""
        return self._events(self._do(CancelAction(reason=reason), dice, by))

    def ambush(self, ambushers: Sequence[str], defenders: Sequence[str], *,
               time_waited: TimeWaited | float | None = None, difficulty: int | None = None,
               dice: Faces = None, by: str = "") -> list[Event]:
        """Ambushers roll Stealth for the difficulty (or the GM presets it); defenders roll Perception (C17, C18)."""
        return self._events(self._do(BeginAmbush(ambushers=_ids(ambushers, "ambushers"),
                                                 defenders=_ids(defenders, "defenders"), time_waited=time_waited,
                                                 difficulty=difficulty), dice, by))

    def roll_initiative(self, modifiers: dict[str, tuple[Modifier, ...]] | None = None,
            *, dice: Faces = None, by: str = "") -> list[Event]:
        """Everyone rolls Initiative (C19); with no tie among allies left open, round 1 begins."""
        return self._events(self._do(RollInitiative(modifiers=modifiers or {}), dice, by))

    def agree_initiative(self, order: Sequence[str], *, dice: Faces = None, by: str = "") -> list[Event]:
        """Tied allies agree their order instead of rolling off (C19)."""
        return self._events(self._do(AgreeInitiative(order=_ids(order, "order")), dice, by))

    def roll_off(self, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Tied allies roll off after all (C19)."""
        return self._events(self._do(RollOff(), dice, by))

    def end_turn(self, who: str, *, dice: Faces = None, by: str = "") -> list[Event]:
        """End ``who``'s turn; the next in initiative order begins (C20)."""
        return self._events(self._do(EndTurn(who=who), dice, by))

    def move(self, who: str, leaves: Sequence[str] = (), *, dice: Faces = None, by: str = "") -> list[Event]:
        """A Movement Action; leaving enemies' reach opens Attack of Opportunity windows (C23)."""
        return self._events(self._do(Move(who=who, leaves=_ids(leaves, "leaves")), dice, by))

    def stand_up(self, who: str, *, dice: Faces = None, by: str = "") -> list[Event]:
        """A Prone combatant stands up: its Movement Action in the rounds (C20), free outside them."""
        return self._events(self._do(StandUp(who=who), dice, by))

    def disengage(self, who: str, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Disengage (1 Bonus Action): this turn's movement provokes no Attack of Opportunity (C22, C23)."""
        return self._events(self._do(Disengage(who=who), dice, by))

    def react(self, who: str, weapon: str | None = None, unarmed: bool = False, *, high_ground: bool = False,
              encircled: tuple[int, int] | None = None, dice: Faces = None, by: str = "") -> list[Event]:
        """Take the reaction an open window offers: an Attack of Opportunity or an Interrupt (C23, C24), claiming
        high ground and ``encircled`` (A, D) as :meth:`attack` does (C26, C27)."""
        claim = "the claim (A, D) of C26: two whole numbers, or None"
        circle = None if encircled is None else Encircled(**_pair(encircled, "encircled", ("attackers", "defenders"),
                                                                  claim))
        return self._events(self._do(React(who=who, weapon=weapon, unarmed=unarmed, situational=Situational(
            high_ground=high_ground, encircled=circle)), dice, by))

    def pass_reaction(self, who: str, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Let an open reaction window pass."""
        return self._events(self._do(PassReaction(who=who), dice, by))

    def catch(self, who: str, catch: bool = True, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Catch a thrown item about to hit (1 Bonus Action, C22), or let it hit (``catch=False``)."""
        return self._events(self._do(AnswerCatch(who=who, catch=catch), dice, by))

    def answer_decision(self, decision: str, who: str, choice: str, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Answer an extension's open decision point (C38): ``who`` makes ``choice``, one its ``decision_opened``
        lists (``fight.waiting_for``)."""
        return self._events(self._do(AnswerDecision(decision=decision, who=who, choice=choice), dice, by))

    def engage(self, who: str, *others: str, engaged: bool = True, dice: Faces = None, by: str = "") -> list[Event]:
        """State who is within reach of (adjacent to) whom; positions are abstract."""
        return self._events(self._do(Engage(who=who, others=others, engaged=engaged), dice, by))

    def draw(self, who: str, weapon: str, *, dice: Faces = None, by: str = "") -> list[Event]:
        """Draw a weapon into hand (not if Completely Surprised in the first round, C18)."""
        return self._events(self._do(Draw(who=who, weapon=weapon), dice, by))

    def leave_fight(self, who: str, reason: str, note: str = "", *, dice: Faces = None, by: str = "") -> list[Event]:
        """One combatant fled, yielded or is dead (``reason``): out of the fight (C33)."""
        return self._events(self._do(LeaveFight(who=who, reason=reason, note=note), dice, by))  # type: ignore[arg-type]

    def end_fight(self, reason: str = "gm", side: str | None = None, note: str = "",
            *, dice: Faces = None, by: str = "") -> list[Event]:
        """End the fight, at any time (C33: an action in progress is called off first): the GM's call, or a side
        yielded, fled or was defeated."""
        return self._events(self._do(EndFight(reason=reason, side=side, note=note), dice, by))  # type: ignore[arg-type]

    @property
    def waiting_for(self) -> Window | InitiativeTied | None:
        """The event that opened the decision the fight is waiting on, if any (an Active Defense, reaction,
        Catch or routing window, a Will-conversion choice, or a tie among allies in initiative);
        :meth:`options` says it in full."""
        state = self._state
        found = waiting_point(state)
        if found is None:
            return None
        point, _who, _action = found
        if point.window is None:
            return InitiativeTied(group=state.tie_open, allies=True)
        opened: Window | None = getattr(state.pending, point.window, None)
        return opened

    def options(self, offers: bool = True, unseen: frozenset[str] = frozenset()) -> Options:
        """What the fight waits for now (its phase, round, turn, the open decision and who may answer it) and,
        for each actor, every command the rules accept now with its legal arguments and the dice it rolls
        (:mod:`omen_core.options`; ``offers`` False: all but the offers, at a fraction of the cost; ``unseen``:
        combatants a seat may not see, left out of the offers' lists of others)."""
        return options(self._state, _History(self), offers, unseen)

    def reveal_seed(self, seed: bytes | None = None) -> str:
        """Append the seed (by default the seeded source's own); return it as hex. In a fight that goes on, the
        seed is spent (C42): the same command commits to a fresh seed (the source's :meth:`SeededDice.successor`),
        which the dice roll from afterwards (``fight.dice.seed``: keep it as secret as the first)."""
        if seed is None:
            if not isinstance(self.dice, SeededDice):
                raise RuleViolation("dice", "no seed given and the dice source is not seeded")
            seed = self.dice.seed
        seed = expect(seed, bytes, "seed", "the seed's bytes (or None: the seeded dice's own)")
        state = self._state
        if seed_commitment(seed) != state.seed_commitment and self._revealed_before(seed, state):
            raise SeedMismatch(state.seed_commitment, seed_commitment(seed), spent=True)
        self.execute(RevealSeed(seed=seed.hex()))
        return seed.hex()

    def spends_seed(self, command: Command, state: FightState | None = None) -> bool:
        """Whether ``command`` reveals this fight's own seed in a fight that goes on (at ``state``, by default the
        fight's now) and leaves the fresh seed to the fight's dice: then it commits to :meth:`SeededDice.successor`
        (C42). A caller that keeps seeds (the server) gives the dice their successor before executing it."""
        state = self._state if state is None else state
        return (isinstance(command, RevealSeed) and command.next_commitment is None and state.ending is None
                and isinstance(self.dice, SeededDice) and command.seed.lower() == self.dice.seed.hex())

    def _spent(self, command: Command, state: FightState, following: SeededDice | None
               ) -> tuple[Command, SeededDice | None]:
        """A ``reveal_seed`` of this fight's seed in a fight that goes on, with the fresh seed's commitment filled
        in (C42), and the source of that seed (the dice roll from it once the command is appended); any other
        command as it is."""
        if not self.spends_seed(command, state) or not isinstance(self.dice, SeededDice):
            return command, following
        fresh = self.dice.successor()
        return msgspec.structs.replace(command, next_commitment=fresh.commitment), fresh

    def _dice(self) -> DiceSource:
        return NoDice() if self._dice_source is None else self._dice_source

    def _seal(self, events: Sequence[Event], state: FightState | None = None) -> Sealed:
        """A batch's events sealed after ``state`` (default: the current one), each line encoded once."""
        state = self._state if state is None else state
        now, prev, seq, out = self.clock(), state.last_hash, state.version, Sealed()
        batch, size, fight_id, salts = seq + 1, len(events), self.fight_id, self.salts
        drawn = fresh_salts(size) if salts is random_salts else None  # random: the batch's drawn at once
        for i, event in enumerate(events):
            seq += 1
            salt = drawn[i] if drawn is not None else salts(fight_id, seq)
            rec, line = seal_line(fight_id, seq, now, prev, event, batch, size, salt)
            out.add(rec, line)
            prev = rec.hash
        return out

    def _do(self, command: Command, dice: Faces, by: str) -> list[StoredEvent]:
        """The façade's one path to :meth:`execute`: ``command`` carrying the faces ``dice`` (typed in from physical
        dice, in the order of C29; None: the fight's dice source rolls them), given by ``by``."""
        if dice is not None:
            if isinstance(dice, (str, bytes)) or not isinstance(dice, Sequence):
                raise InvalidArgument("dice", "a sequence of die faces (whole numbers, in the order of C29) or None",
                                      dice)
            command = msgspec.structs.replace(command, dice=tuple(dice))
        return self.execute(command, by)

    @staticmethod
    def _events(stored: list[StoredEvent]) -> list[Event]:
        """What a command produced: its events, without the ``command_issued`` record that opens the batch."""
        return [rec.event for rec in stored if type(rec.event) is not CommandIssued]

    @staticmethod
    def _last(stored: list[StoredEvent], kind: type[E]) -> E:
        """The command's last event of ``kind`` (a check's resolution, before any moment abilities answer, C38)."""
        return next(rec.event for rec in reversed(stored) if isinstance(rec.event, kind))
