"""The one reader of a log: it reads a fight's stored lines once, in order, streaming; decodes them; checks the
hash chain, the framing and the batches; applies undo and redo; folds every event with the one ``evolve``; and
calls visitors. Every surface that reads a log (replay, state at a seq, step-through, snapshots, verify,
explain, the narrative, the session log) is a visitor over it, the way python-chess's ``read_game(handle,
Visitor=...)`` drives its builders and exporters.

Undo markers come after the events they void, so before reading a log the
walk asks its source for the log's *landmarks* (the undo and redo markers and
the revealed seed, which every store indexes): it knows from the start which
events are undone, which states an undo or redo will go back to (it keeps
those few states as it passes them), and the seed.

Two ways through a log:

- **timeline** (:func:`walk` with visitors that want events, and
  :func:`step_through`): every event in order with the state just before and
  after it, *as it stood when the event was written* (an undone event is folded
  where it was written; at its undo marker the state goes back), and whether
  the event is undone as the log stands now;
- **state only** (:func:`replay`, :func:`state_at`): the state at the end (or
  at a seq), undone events skipped. The state fold says which event types it
  needs whole (:data:`NEEDS_BODY`); the driver decodes the others into
  stand-ins holding the envelope and the few fields the order checks read, as
  python-chess's visitors skip what they do not need.

Either way the lines go through one driver (``_Reader``: decoding, framing,
the hash chain, batches, the landmarks met), and undo follows one rule each
for its safe points and its redo stack (:func:`omen_core.state.opens_undo_point`,
:func:`omen_core.state.redo_stack_after`).

A strict walk (live play, replay) raises at the first problem: a
:class:`~omen_core.errors.LogCorrupted` (a line that is not the next sound
event), a :class:`~omen_core.errors.ChainBroken`, an
:class:`~omen_core.machine.IllegalOrder`. A lenient walk (the audit) reports
every problem to its visitors as a :class:`Finding` and goes on.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, Union

import msgspec
from msgspec.structs import replace

from .commands import UNDO_COMMANDS, Command, RevealSeed
from .errors import ChainBroken, KeyReused, LogCorrupted, NewerLog, OmenError
from .events import (
    EVENT_TYPES,
    HEADER_EVENTS,
    LANDMARKS,
    SCHEMA_VERSION,
    UNDO_MARKERS,
    AttackDeclared,
    CommandIssued,
    Redone,
    SeedRevealed,
    StoredEvent,
    Undone,
    decode_line,
    encode_line,
    is_hex64,
    is_salt,
    line_hash,
)
from .limits import named_twice
from .logs import get_logger
from .machine import (
    DONE,
    OPENING,
    ORDER,
    PHASE_ORDER,
    UNORDERED,
    IllegalOrder,
    OutOfPhase,
    Phase,
    phase_trigger_for,
    trigger_for,
    trigger_of,
)
from .machine import Step as LifeStep
from .state import EFFECTS, FightState, Frame, _stack, evolve, opens_undo_point, redo_stack_after, redoable
from .store.jsonl import JsonlStore
from .store.snapshots import MAX_TRIES, STATE_FORMAT, Snapshot, SnapshotStore

log = get_logger(__name__)

__all__ = ["Finding", "UndoRecord", "Landmarks", "Source", "StoreSource", "LinesSource", "Visitor", "Walk",
           "StopWalk", "walk", "step_through", "replay", "project", "state_at", "after_marker", "landmarks_of",
           "scan_landmarks", "keyed_batch", "done_under_key", "usable_snapshot", "Step", "torn_batch", "tears"]


#: What a line that holds no event is called in its finding (it takes no seq: the finding's ``seq`` is the next
#: event's, for its order, and the finding is said by its line alone).
NO_EVENT = ("empty line", "a line of white space only")


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One problem an audit found: where (seq, and the line for problems found in the raw bytes), which rule,
    what, and expected vs found. ``kind`` sets apart what is not a fault of the log: ``"undo re-roll"``, dice
    rolled again after an undo voided dice (worth a look, see ``omen verify``)."""

    seq: int
    line: int = 0
    rule: str
    what: str
    expected: str = ""
    found: str = ""
    kind: str = "integrity"


class UndoRecord(msgspec.Struct, frozen=True, kw_only=True):
    """An undo as the log records it: where, which range, why, and whether it was redone later (and where)."""

    seq: int
    batch: int
    from_seq: int
    to_seq: int
    reason: str
    redone_at: int | None = None


class Landmarks(msgspec.Struct, frozen=True, kw_only=True):
    """What a reader knows of a log before reading it: its undos (in order) and the revealed seeds: the first
    (``seed``, at ``seed_seq``) and every one in order (``seeds``: after a reveal, a fight that goes on rolls from
    a fresh seed, revealed in its turn, C42)."""

    undos: tuple[UndoRecord, ...] = ()
    redos: tuple[tuple[int, int], ...] = ()  # (seq of the redo, seq of the undo it takes back)
    seed: str | None = None
    seed_seq: int | None = None
    seeds: tuple[tuple[int, str], ...] = ()  # (seq, seed) of every seed revealed

    def upto(self, seq: int | None) -> Landmarks:
        """The landmarks as they stood after ``seq`` (everything later not yet written)."""
        if seq is None:
            return self
        redos = tuple(r for r in self.redos if r[0] <= seq)
        back = {undo: at for at, undo in redos}
        undos = tuple(replace(u, redone_at=back.get(u.seq)) for u in self.undos if u.seq <= seq)
        revealed = self.seed_seq is not None and self.seed_seq <= seq
        return Landmarks(undos=undos, redos=redos, seed=self.seed if revealed else None,
                         seed_seq=self.seed_seq if revealed else None,
                         seeds=tuple(s for s in self.seeds if s[0] <= seq))

    def voided(self) -> frozenset[int]:
        """The seqs undone now: every undo's range, unless it was redone."""
        return frozenset(seq for u in self.undos if u.redone_at is None for seq in range(u.from_seq, u.to_seq + 1))


def landmarks_of(records: Iterable[StoredEvent]) -> Landmarks:
    """The landmarks of a log from its landmark events (the undo and redo markers and the seed revealed), as a
    store's :meth:`landmarks` returns them; other events are ignored."""
    undos: dict[int, UndoRecord] = {}
    redos: list[tuple[int, int]] = []
    seed = seed_seq = None
    seeds: list[tuple[int, str]] = []
    for rec in records:
        match rec.event:
            case Undone(from_seq=start, to_seq=end, reason=reason):
                undos[rec.seq] = UndoRecord(seq=rec.seq, batch=rec.batch, from_seq=start, to_seq=end, reason=reason)
            case Redone(undo_seq=target) if target in undos:
                undos[target] = replace(undos[target], redone_at=rec.seq)
                redos.append((rec.seq, target))
            case SeedRevealed(seed=revealed):
                seeds.append((rec.seq, revealed))
                if seed is None:
                    seed, seed_seq = revealed, rec.seq
    return Landmarks(undos=tuple(undos.values()), redos=tuple(redos), seed=seed, seed_seq=seed_seq,
                     seeds=tuple(seeds))


# -- where the lines come from ----------------------------------------------------------------------------------


class Source(Protocol):
    """What the walk reads: a fight's stored lines, and its landmark events."""

    fight_id: str
    where: str

    def lines(self, after_seq: int) -> Iterator[list[bytes]]:
        """The stored lines with seq > ``after_seq``, in order, in chunks (a store's ``read_lines``)."""
        ...

    def landmarks(self) -> list[StoredEvent]:
        """The landmark events (:data:`omen_core.events.LANDMARKS`) of the whole log, in order, as an index kept
        beside the log lists them: fast, and only a cache (the walk checks it against the lines it reads)."""
        ...

    def log_landmarks(self) -> list[StoredEvent]:
        """The landmark events found by reading the log's own lines (one pass): what the index should say."""
        ...


class StoreSource:
    """A fight in an event store: its ``read_lines`` and its ``landmarks`` index (read once: a source serves one
    reading, such as a snapshot's lookup and the walk after it, or a catch-up's check and its fold). Once the
    log's own landmarks are read (:meth:`log_landmarks`), they are what :meth:`landmarks` gives."""

    def __init__(self, store: Any, fight_id: str):
        self.store, self.fight_id = store, fight_id
        of = getattr(store, "location_of", None)  # a store keeping each fight in its own file names the file
        self.where = of(fight_id) if callable(of) else getattr(store, "location", None) or repr(store)
        self._landmarks: list[StoredEvent] | None = None
        self._from_log: list[StoredEvent] | None = None

    def lines(self, after_seq: int) -> Iterator[list[bytes]]:
        """The store's lines after ``after_seq``."""
        chunks: Iterator[list[bytes]] = self.store.read_lines(self.fight_id, after_seq)
        return chunks

    def landmarks(self) -> list[StoredEvent]:
        """The store's landmark index, as it stood at this source's first look."""
        if self._landmarks is None:
            self._landmarks = self.store.landmarks(self.fight_id)
        return self._landmarks

    def log_landmarks(self) -> list[StoredEvent]:
        """The landmarks found in the store's lines themselves (a torn or damaged end is the reader's to report:
        the scan stops there)."""
        if self._from_log is None:
            self._from_log = self._landmarks = scan_landmarks(_lines_until_damage(self.store.read_lines(
                self.fight_id), maybe_landmarks=True))
        return self._from_log


def _lines_until_damage(chunks: Iterator[list[bytes]], maybe_landmarks: bool = False) -> Iterator[bytes]:
    """Every line of ``chunks``, up to a torn tail or missing rows (the walk's reader reports them); with
    ``maybe_landmarks``, only the chunks that hold a landmark's tag somewhere (one search over each chunk's bytes:
    landmarks are rare)."""
    try:
        for chunk in chunks:
            if not maybe_landmarks or _MAYBE_LANDMARK.search(b"".join(chunk)) is not None:
                yield from chunk
    except LogCorrupted:
        return


class LinesSource:
    """Stored lines held by the caller (a file read for an audit, an in-memory log): landmarks are found by
    decoding the lines that may be landmarks."""

    def __init__(self, lines: Sequence[bytes], fight_id: str | None = None, where: str = "the log"):
        self._lines = lines
        self.where = where
        self.fight_id = fight_id if fight_id is not None else _first_fight(lines)

    def lines(self, after_seq: int) -> Iterator[list[bytes]]:
        """The lines after ``after_seq`` (line N holds seq N in a sound log)."""
        yield list(self._lines[after_seq:])

    def landmarks(self) -> list[StoredEvent]:
        """The landmark events among the lines (there is no index: the lines are the log)."""
        return scan_landmarks(self._lines)

    def log_landmarks(self) -> list[StoredEvent]:
        """The landmark events among the lines."""
        return scan_landmarks(self._lines)


def _first_fight(lines: Sequence[bytes]) -> str:
    for line in lines[:1]:
        try:
            return str(msgspec.json.decode(line, type=_Head).fight_id)
        except msgspec.DecodeError:
            return ""
    return ""


class _Head(msgspec.Struct):
    fight_id: str


class _TypeOnly(msgspec.Struct):
    type: str


class _EventType(msgspec.Struct):
    event: _TypeOnly


_LANDMARK_TAGS = frozenset(kind.__struct_config__.tag for kind in LANDMARKS)
_LANDMARK_KINDS = frozenset(LANDMARKS)
_decode_type = msgspec.json.Decoder(_EventType).decode
#: A landmark's tag as it stands in a line (a quote inside a JSON string is escaped, so free text cannot hold it).
_MAYBE_LANDMARK = re.compile(b"|".join(re.escape(f'"type":"{tag}"'.encode())
                                       for tag in sorted(map(str, _LANDMARK_TAGS))))


def scan_landmarks(lines: Iterable[bytes]) -> list[StoredEvent]:
    """The landmark events among stored lines: a line holding a landmark's tag is decoded, and kept if its event
    is one (lines that do not decode are left to the walk, which reports them)."""
    found = []
    maybe = _MAYBE_LANDMARK.search
    for line in lines:
        if maybe(line) is None:
            continue
        try:
            if _decode_type(line).event.type in _LANDMARK_TAGS:
                found.append(decode_line(line.rstrip(b"\n")))
        except msgspec.DecodeError:
            continue
    return found


def keyed_batch(source: Source, key: str, shown: Callable[[StoredEvent], bool] | None = None) -> list[StoredEvent]:
    """The batch of the command recorded with idempotency key ``key`` (its ``command_issued`` first), found in the
    log's own lines (a line holding the key is decoded; the first whose command carries it is the one); empty if
    no command carries it. ``shown``: only a ``command_issued`` it says yes to counts (a seat's search among the
    commands whose key it is shown: the server's). One pass, stopping at the batch's end."""
    needle = b'"idempotency_key":' + msgspec.json.encode(key)
    found: list[StoredEvent] = []
    for line in _lines_until_damage(source.lines(0)):
        if found:
            rec = decode_line(line.rstrip(b"\n"))
            if rec.batch != found[0].seq:
                break
            found.append(rec)
        elif needle in line:
            with contextlib.suppress(msgspec.DecodeError):
                rec = decode_line(line.rstrip(b"\n"))
                if isinstance(rec.event, CommandIssued) and rec.event.command.idempotency_key == key \
                        and (shown is None or shown(rec)):
                    found.append(rec)
    return found


def done_under_key(source: Source, command: Command, by: str | None = None,
                   shown: Callable[[StoredEvent], bool] | None = None) -> list[StoredEvent]:
    """The batch ``command`` appended before, if the log records it under its ``idempotency_key`` (the same
    command, and given by ``by`` if that is given): a retry finds it done. Empty if it carries no key or the key
    is unused; :class:`~omen_core.errors.KeyReused` if another command holds the key. ``shown``: only the commands
    it says yes to are looked at (:func:`keyed_batch`)."""
    key = command.idempotency_key
    if key is None:
        return []
    batch = keyed_batch(source, key, shown)
    if not batch:
        return []
    first = batch[0].event
    assert isinstance(first, CommandIssued)
    recorded = first.command
    if isinstance(recorded, RevealSeed) and isinstance(command, RevealSeed) and command.next_commitment is None:
        recorded = msgspec.structs.replace(recorded, next_commitment=None)  # the fresh seed's commitment is the
        # engine's, filled in as the reveal was done (C42): a retry gives the command as it was given, without it
    if recorded != command or (by is not None and first.by != by):
        raise KeyReused(key, batch[0].seq, str(type(first.command).__struct_config__.tag))
    return batch


# -- visitors -----------------------------------------------------------------------------------------------------


class StopWalk(Exception):
    """Raised by a visitor that has seen what it needed: the walk ends there (``end`` is still called)."""


class Walk(msgspec.Struct, frozen=True, kw_only=True):
    """What a visitor knows when a walk begins: the fight, its undos as they stand at the walk's end, the
    seqs undone then, the revealed seed (if it is revealed by then) and where the walk stops."""

    fight_id: str
    landmarks: Landmarks
    voided: frozenset[int]
    to_seq: int | None = None
    start_seq: int = 0


class Visitor:
    """A reader of a walk; override what you need. ``wants_events`` False: only ``begin`` and ``end`` are called,
    and the walk takes the fast state-only way."""

    wants_events = True

    def begin(self, walk: Walk) -> None:
        """Before the first event."""

    def line(self, rec: StoredEvent, raw: bytes) -> None:
        """Each event's line as stored, just before :meth:`event` (for a visitor that checks bytes: the audit)."""

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        """Each event, with the state just before and after it as they stood then, and whether it is undone now."""

    def undone(self, record: UndoRecord) -> None:
        """After the event of an undo marker: the undo it records (``redone_at`` as the log stands at the end)."""

    def problem(self, finding: Finding) -> None:
        """A problem found while reading (lenient walks only; a strict walk raises)."""

    def end(self, state: FightState) -> None:
        """After the last event: the state the walk leaves."""


class Step(msgspec.Struct, frozen=True):
    """One event of a timeline walk, as :func:`step_through` yields it (``raw``: its line as stored)."""

    rec: StoredEvent
    before: FightState
    after: FightState
    voided: bool
    raw: bytes = b""


# -- bodies: which events a state-only walk decodes in full ------------------------------------------------------
#
# python-chess's visitors skip what they do not need (``begin_variation`` returns ``SKIP``); here the state fold
# says which event types it needs whole (:data:`NEEDS_BODY`), and the driver decodes the others into stand-ins
# holding the envelope and the few fields the order checks read.

#: The fields of an event its stand-in keeps: the action it belongs to, and what the order checks read (a roll's
#: purpose, a Catch's answer, the action a reaction answers). A trigger rule that one day reads another field finds
#: it missing: the light fold fails on it and the exact fold (every body decoded) reads the log again.
SKIM_FIELDS = ("action", "purpose", "caught", "reacting_to")

#: The event types the state fold needs whole: those with an effect on the state, and the undo markers.
NEEDS_BODY = frozenset(EFFECTS) | frozenset(UNDO_MARKERS)


class _CommandTag(msgspec.Struct, frozen=True, gc=False):
    """Just the tag of the command a ``command_issued`` records (an undo's or a redo's batch is told by it)."""

    command: str


def _stand_in(kind: type) -> type:
    """A struct with ``kind``'s tag and only its :data:`SKIM_FIELDS` (``command_issued``: its command's tag)."""
    fields = {f.name: f for f in msgspec.structs.fields(kind)}
    spec: list[Any] = []
    if kind is CommandIssued:
        spec.append(("command", _CommandTag))
    for name in SKIM_FIELDS:
        if name in fields:
            f = fields[name]
            spec.append((name, f.type) if f.required else (name, f.type, f.default))
    config = kind.__struct_config__  # type: ignore[attr-defined]  # every event type is a tagged Struct
    return msgspec.defstruct(f"Skim{kind.__name__}", spec, tag_field=config.tag_field, tag=config.tag,
                             frozen=True, kw_only=True, gc=False, module=__name__,
                             namespace=None if "action" in fields else {"action": None})


_SKIM_TYPES: dict[type, type] = {kind: kind if kind in NEEDS_BODY else _stand_in(kind) for kind in EVENT_TYPES}
#: The event type of every class a record's event may have: an event type itself, or its stand-in.
_REAL: dict[type, type] = {**{kind: kind for kind in EVENT_TYPES}, **{s: kind for kind, s in _SKIM_TYPES.items()}}
_SkimEvent: Any = Union[tuple(_SKIM_TYPES.values())]  # noqa: UP007 - a runtime union of a computed tuple


def _skim_envelope() -> type:
    """:class:`StoredEvent`'s fields in its order (defaults kept), the event skimmed."""
    spec: list[Any] = []
    for f in msgspec.structs.fields(StoredEvent):
        kind = _SkimEvent if f.name == "event" else f.type
        spec.append((f.name, kind) if f.required else (f.name, kind, f.default))
    return msgspec.defstruct("SkimStored", spec, frozen=True, kw_only=True, forbid_unknown_fields=True, gc=False,
                             module=__name__)


_decode_skim: Callable[[bytes], Any] = msgspec.json.Decoder(_skim_envelope()).decode


def _classes(kinds: Iterable[type]) -> frozenset[type]:
    """The classes a record's event has when its type is one of ``kinds``: the type, and its stand-in."""
    return frozenset(cls for cls, kind in _REAL.items() if kind in kinds)


_OPENS = _classes({CommandIssued, *HEADER_EVENTS})  # what opens a batch (schema version 2 on)
_COMMANDS = _classes({CommandIssued})
_MARKS = _classes(LANDMARKS)


# -- reading lines ------------------------------------------------------------------------------------------------


class _Reader:
    """THE one driver of a walk: turns a source's lines into decoded, checked records: framing, hash chain,
    batches, the landmarks met (one pass, streaming). Every way through a log reads its lines here.

    ``skim`` (a state-only walk) is the decoder that decodes in full only the
    bodies the fold needs (:data:`NEEDS_BODY`), the others into stand-ins: a line
    it does not take, or of an older schema version, is decoded in full (and
    upcast) instead. A skimmed line's salt is checked for its length only (the
    hash covers its bytes); a line decoded in full, as every line of a timeline
    walk is, has it checked in full (:func:`omen_core.events.is_salt`).
    ``met`` gets the (seq, hash) of every landmark read.
    Strict: raises at the first problem. Lenient: reports each to ``report`` and
    carries on (an undecodable line is skipped; a record out of place is kept).
    """

    def __init__(self, source: Source, after_seq: int, prev_hash: str, report: Callable[[Finding], None] | None,
                 chain: bool, canonical: bool, skim: Callable[[bytes], Any] | None = None,
                 met: list[tuple[int, str]] | None = None):
        self.source, self.report, self.chain, self.canonical = source, report, chain, canonical
        self.skim, self.met = skim, met
        self.raw = b""
        self.expected, self.prev = after_seq + 1, prev_hash
        self.prev_raw: bytes | None = bytes.fromhex(prev_hash) if is_hex64(prev_hash) else None
        self.batch = self.batch_end = 0
        self.last: StoredEvent | None = None
        self.line_no = after_seq
        self.damaged = False  # a problem reported: a torn batch after it is no crash's, for repair to remove
        self.crlf: list[tuple[int, int]] = []  # (seq, line) of each line ending in CR LF, its hash holding without
        # the CR: the first is reported where it stands, the others as one finding at the end

    def _problem(self, finding: Finding, error: OmenError) -> None:
        if self.report is None:
            raise error
        self.damaged = True
        self.report(finding)

    def records(self, to_seq: int | None) -> Iterator[StoredEvent]:
        """Each decoded record (its line as stored in :attr:`raw`), up to ``to_seq``; a lenient reader reports a
        torn tail or missing rows (which the source raises after the lines before them) as a finding and stops there.

        The one loop over a log's lines. Each check has its fast way here (the
        usual case: the next sound event) and, where it fails, the method that
        says what is wrong (:meth:`_decode`, :meth:`_misplaced`,
        :meth:`_check_chain`, :meth:`_check_batch`): the reader's fields are set
        from the loop's before such a call, and read back after it.
        """
        skim, chain, canonical = self.skim, self.chain, self.canonical
        met = self.met if self.met is not None else []
        stop: float = to_seq if to_seq is not None else math.inf  # to the end, however large a seq a line claims
        fight_id, sha, opens, commands, marks, version = (self.source.fight_id, hashlib.sha256, _OPENS, _COMMANDS,
                                                          _MARKS, SCHEMA_VERSION)
        expected, prev, prev_raw, line_no = self.expected, self.prev, self.prev_raw, self.line_no
        batch_no, batch_end, last = self.batch, self.batch_end, self.last
        try:
            for chunk in self.source.lines(expected - 1):
                for raw in chunk:
                    line_no += 1
                    rec: Any = None
                    if skim is not None:  # a body only where the fold needs it; any other line decoded in full
                        try:
                            rec = skim(raw)
                        except msgspec.DecodeError:
                            rec = None
                        else:
                            if rec.schema_version != version:
                                rec = None  # an older version's line: read through the upcasters
                    skimmed = rec is not None
                    if rec is None:
                        self.expected, self.prev, self.prev_raw, self.line_no = expected, prev, prev_raw, line_no
                        self.batch, self.batch_end = batch_no, batch_end
                        rec = self._decode(raw)
                        expected, prev, prev_raw = self.expected, self.prev, self.prev_raw
                        batch_no, batch_end = self.batch, self.batch_end
                        if rec is None:
                            continue
                    seq = rec.seq
                    if seq > stop:
                        return
                    if seq != expected or rec.fight_id != fight_id or rec.schema_version > version:
                        self.expected, self.line_no = expected, line_no
                        self._misplaced(rec)
                    if len(rec.salt) < 32 if skimmed else (rec.schema_version >= 4 and not is_salt(rec.salt)):
                        self.line_no = line_no
                        self._unsalted(rec)
                    if chain:
                        digest = None
                        if rec.prev_hash == prev and prev_raw is not None:
                            line = raw[:-1] if raw[-1] == 10 else raw  # (10: the newline)
                            if line[-_TAIL:-66] == b',"hash":"' and line[-2:] == b'"}':
                                digest = sha(prev_raw + line[:-_TAIL] + b"}").digest()
                                if digest.hex() != rec.hash:
                                    digest = None
                        if digest is None:
                            self.prev, self.prev_raw, self.line_no = prev, prev_raw, line_no
                            self._check_chain(rec, raw)
                            prev_raw = self.prev_raw
                        else:
                            prev_raw = digest
                    cls = rec.event.__class__
                    batch = rec.batch
                    if last is None and batch < seq:  # the walk starts part-way through a batch (a snapshot)
                        batch_no, batch_end = batch, (batch + rec.batch_size - 1 if rec.batch_size else 0)
                    elif batch == seq and not (batch_end and seq <= batch_end) and cls in opens:
                        batch_no, batch_end = seq, (seq + rec.batch_size - 1 if rec.batch_size else 0)
                    elif batch == seq or batch != batch_no or (batch_end and seq > batch_end) or cls in commands:
                        self.batch, self.batch_end, self.last, self.line_no = batch_no, batch_end, last, line_no
                        self._check_batch(rec)
                        batch_no, batch_end = self.batch, self.batch_end
                    if canonical and rec.schema_version == version and not _same_line(encode_line(rec), raw):
                        self.line_no = line_no
                        self._edited(rec)
                    elif canonical and rec.schema_version != version and (twice := named_twice(raw)) is not None:
                        self.line_no = line_no
                        self._named_twice(rec, twice)
                    expected, prev, last = seq + 1, rec.hash, rec
                    if cls in marks:
                        met.append((seq, rec.hash))
                    self.raw = raw
                    yield rec
                    if seq >= stop:
                        return
        except LogCorrupted as exc:
            if self.report is None or isinstance(exc, NewerLog):
                raise
            what = exc.reason if exc.reason.startswith("torn tail") else f"the store cannot read on: {exc.reason}"
            self.report(Finding(seq=expected, line=exc.line, rule="format", what=what))
        finally:
            self.expected, self.prev, self.prev_raw, self.line_no = expected, prev, prev_raw, line_no
            self.batch, self.batch_end, self.last = batch_no, batch_end, last

    def _decode(self, raw: bytes) -> StoredEvent | None:
        try:
            return decode_line(raw)  # a line's newline is JSON's white space
        except msgspec.DecodeError as exc:
            line = raw.rstrip(b"\n")
            where, n = self.source.where, self.line_no
            if not line.strip():  # an empty line, or white space only: it holds no event, so takes no seq
                what = NO_EVENT[0] if not line else NO_EVENT[1]
                self._problem(Finding(seq=self.expected, line=n, rule="format", what=what),
                              LogCorrupted(where, n, what))
                return None
            self._problem(Finding(seq=self.expected, line=n, rule="format", what=f"not a stored event: {exc}"),
                          LogCorrupted(where, n, f"not a valid stored event: {exc}"))
            self.expected += 1
            tail = line[-66:-2].decode("ascii", "replace") if len(line) > 66 else ""
            self.prev = tail if is_hex64(tail) else ""  # the hash it claims, if one can be read; else unknown
            self.prev_raw = bytes.fromhex(tail) if is_hex64(tail) else None
            self.batch, self.batch_end = _LOST, 0  # which batch the lines after it belong to is their own word
            return None

    def _unsalted(self, rec: StoredEvent) -> None:
        what = "no salt, or not 16 to 64 bytes of lowercase hex: from schema version 4 every event's hash is salted"
        n = self.line_no
        self._problem(Finding(seq=rec.seq, line=n, rule="format", what=what), LogCorrupted(self.source.where, n, what))

    def _edited(self, rec: StoredEvent) -> None:
        what = "not in canonical form: its bytes were edited"
        n = self.line_no
        self._problem(Finding(seq=rec.seq, line=n, rule="format", what=what), LogCorrupted(self.source.where, n, what))

    def _named_twice(self, rec: StoredEvent, path: str) -> None:
        """A line of an older schema version (not held to today's written form, which it predates) giving a name
        twice in one object: JSON readers differ on which value counts (RFC 7493), so its content is not one thing."""
        what = (f"{path} is given twice in one object (readers differ on which counts): a line of schema version "
                f"{rec.schema_version} is not held to today's written form, but to one value per name")
        n = self.line_no
        self._problem(Finding(seq=rec.seq, line=n, rule="format", what=what), LogCorrupted(self.source.where, n, what))

    def _misplaced(self, rec: StoredEvent) -> None:
        """A record out of place: another seq than the next, another fight's, a newer schema."""
        where, n = self.source.where, self.line_no
        if rec.seq != self.expected:
            what = f"seq {rec.seq} where {self.expected} was expected (events missing, repeated or out of order)"
            self._problem(Finding(seq=rec.seq, line=n, rule="chain", what=what), LogCorrupted(where, n, what))
        if rec.fight_id != self.source.fight_id:
            what = f"event of fight {rec.fight_id!r} in the log of fight {self.source.fight_id!r}"
            self._problem(Finding(seq=rec.seq, line=n, rule="chain", what=what), LogCorrupted(where, n, what))
        if rec.schema_version > SCHEMA_VERSION:
            what = f"schema version {rec.schema_version} is newer than {SCHEMA_VERSION}: upgrade omen to read it"
            if n == 1:  # a log a newer omen wrote: nothing here can be checked, in an audit either (not a finding)
                raise NewerLog(where, n, what)
            self._problem(Finding(seq=rec.seq, line=n, rule="format", what=what), LogCorrupted(where, n, what))

    def _check_chain(self, rec: StoredEvent, raw: bytes) -> None:
        """The link to the previous hash, and the hash of the line's own bytes: ``sha256(prev ‖ the line without
        its hash field)``, hashed from the previous digest and the raw line (no copy of either)."""
        linked = rec.prev_hash == self.prev
        if not linked and self.prev:  # (no previous hash: the line before could not be read, and its finding says so)
            what = f"prev_hash {rec.prev_hash[:12]}... is not the previous hash {self.prev[:12]}..."
            self._problem(Finding(seq=rec.seq, line=self.line_no, rule="chain", what=what),
                          ChainBroken(rec.seq, what, self.source.where, self.line_no))
        end = _body_end(raw)
        if linked and self.prev_raw is not None and end > 0:
            digest = hashlib.sha256(self.prev_raw)
            digest.update(memoryview(raw)[:end])
            digest.update(b"}")
            raw_hash = digest.digest()
            computed: str | None = raw_hash.hex()
        else:
            computed, raw_hash = line_hash(rec.prev_hash, raw), None
        if computed != rec.hash and linked and raw.endswith(b"\r\n") and line_hash(rec.prev_hash, raw[:-2]) == rec.hash:
            self.crlf.append((rec.seq, self.line_no))  # its line ending converted, nothing else: said once
            if len(self.crlf) == 1:
                self._problem(Finding(seq=rec.seq, line=self.line_no, rule="chain", what=CRLF_WORDS),
                              ChainBroken(rec.seq, CRLF_WORDS, self.source.where, self.line_no))
            raw_hash = bytes.fromhex(rec.hash)
        elif computed != rec.hash:  # (a hash that is not hex never equals a digest)
            what = "hash does not match the event's content"
            self._problem(Finding(seq=rec.seq, line=self.line_no, rule="chain", what=what),
                          ChainBroken(rec.seq, what, self.source.where, self.line_no))
            raw_hash = bytes.fromhex(rec.hash) if is_hex64(rec.hash) else None
        self.prev_raw = raw_hash if raw_hash is not None else (bytes.fromhex(rec.hash) if is_hex64(rec.hash)
                                                               else None)

    def _check_batch(self, rec: StoredEvent) -> None:
        """A batch starts at its own seq, holds ``batch_size`` events (when known) and, from schema version 2,
        opens with the command that produced it (a set-up event being its own command)."""
        n, where = self.line_no, self.source.where
        if (self.last is None or self.batch == _LOST) and rec.batch < rec.seq:
            # the walk starts part-way through a batch (a snapshot), or goes on after a line it could not read (its
            # finding said so): the batch is the record's own word, and the command opening it is what was lost
            self.batch, self.batch_end = rec.batch, (rec.batch + rec.batch_size - 1 if rec.batch_size else 0)
            return
        if rec.batch == rec.seq:
            if self.batch_end and rec.seq <= self.batch_end:
                what = (f"a new batch starts at seq {rec.seq}, inside the batch of seq {self.batch} "
                        f"(to {self.batch_end})")
                self._problem(Finding(seq=rec.seq, line=n, rule="batch", what=what), LogCorrupted(where, n, what))
            self.batch, self.batch_end = rec.seq, (rec.seq + rec.batch_size - 1 if rec.batch_size else 0)
            opens = type(rec.event) in _OPENS
            if rec.schema_version >= 2 and not opens:
                what = f"a batch opens with {type(rec.event).__struct_config__.tag}, not with the command_issued"
                self._problem(Finding(seq=rec.seq, line=n, rule="batch", what=what), LogCorrupted(where, n, what))
        elif rec.batch != self.batch or (self.batch_end and rec.seq > self.batch_end):
            what = f"batch {rec.batch} is not the batch in progress (seq {self.batch}, to {self.batch_end or '?'})"
            self._problem(Finding(seq=rec.seq, line=n, rule="batch", what=what), LogCorrupted(where, n, what))
        elif type(rec.event) in _COMMANDS:
            what = "a command_issued inside a batch: a command opens its own batch"
            self._problem(Finding(seq=rec.seq, line=n, rule="batch", what=what), LogCorrupted(where, n, what))

    def finish(self, to_seq: int | None) -> None:
        """After the last record: a batch cut short by a crash is a torn batch; the lines ending in CR LF after the
        first (reported where it stands) are one finding."""
        if len(self.crlf) > 1 and self.report is not None:
            more = self.crlf[1:]
            what = (f"1 more line ends in CR LF (line {more[0][1]}), its hash holding without the CR" if len(more) == 1
                    else f"{len(more)} more lines end in CR LF (the first at line {more[0][1]}, the last at line "
                         f"{more[-1][1]}), each hash holding without the CR")
            self.report(Finding(seq=more[0][0], line=more[0][1], rule="chain", what=what))
        last = self.last
        if last is None or to_seq is not None or not self.batch_end or last.seq >= self.batch_end:
            return
        torn = tears(self.source)  # repair would remove it, were it the log's only damage (a maintainer tester)
        after = self.damaged and torn is True
        what = torn_batch(self.batch, last.seq, self.batch_end, self.source.fight_id, None if after else torn,
                          after_damage=after)
        self._problem(Finding(seq=last.seq, line=self.line_no, rule="batch", what=what),
                      LogCorrupted(self.source.where, self.line_no, what))


def _body_end(raw: bytes) -> int:
    """Where the hash field of a stored line starts (its ``,"hash":"...``), or -1 if the line does not end in one
    (:func:`omen_core.events.line_body`, without copying the line)."""
    n = len(raw)
    while n and raw[n - 1] == 0x0A:
        n -= 1
    if n < _TAIL or raw[n - 2:n] != b'"}' or raw[n - _TAIL:n - 66] != b',"hash":"':
        return -1
    return n - _TAIL


def _same_line(encoded: bytes, raw: bytes) -> bool:
    """Whether a stored line ``raw`` is ``encoded`` and its newline (a CR before it is the chain's finding, said once:
    :data:`CRLF_WORDS`), without copying the line."""
    return raw.startswith(encoded) and not raw[len(encoded):].strip(b"\r\n")


#: A line whose only change is its line ending, CR LF where omen writes LF (a text editor's or a text-mode copy's).
CRLF_WORDS = ("the line ends in CR LF where omen writes LF (its line endings were converted: a text editor, a "
              "text-mode copy); the hash holds without the CR, but covers the bytes as written: convert the line "
              "endings back to LF (dos2unix) and verify again")


def torn_batch(batch: int, last: int, batch_end: int, fight_id: str, tears: bool | None,
               after_damage: bool = False) -> str:
    """What a batch cut short at the log's end is called, and what to do about it. In a JSON Lines log a crash
    mid-write leaves one, and ``omen repair`` removes it (``tears`` True) as long as every line from the batch's
    first to the log's end is the batch's own; one with a line inside or after it that is not (``tears`` None: an
    edit, damage) is not a crash's doing, and repair refuses it, so the words do not send the reader there. A store
    that appends each batch in one transaction (SQLite, PostgreSQL; ``tears`` False) cannot be left so by a crash:
    its rows were removed or edited outside omen. Either way what works is to copy the whole commands before it out
    (``omen copy --to``, if there are any) or to restore a backup."""
    told = (f"torn batch: the command starting at seq {batch} wrote {last - batch + 1} of its "
            f"{batch_end - batch + 1} events")
    if tears:
        return f"{told} (a crash mid-write; omen repair removes it)"
    keep = (f"copy the whole commands before it to another store (omen copy SRC DST --fight {fight_id} --to "
            f"{batch - 1}) or restore this store from a backup" if batch > 1 else "restore this store from a backup")
    if tears is None and after_damage:
        return (f"{told}, after the damage found above: no crash leaves that (the log was edited or damaged), and "
                f"omen repair removes neither; {keep}")
    if tears is None:
        return (f"{told}, and a line inside it or after it is not one of its events: no crash leaves that (the log "
                f"was edited or damaged), so omen repair does not remove it; {keep}")
    return (f"{told}: this store writes each command's events in one transaction, so no crash leaves part of one: "
            f"its rows were removed or edited outside omen (omen repair is for JSON Lines logs); {keep}")


def tears(source: Source) -> bool | None:
    """Whether a crash mid-write can have left ``source`` the torn batch it ends with, for ``omen repair`` to
    remove: True for a JSON Lines log (lines read from a file or held, or a
    :class:`~omen_core.store.jsonl.JsonlStore`) whose lines from the batch's first to its end are all the batch's
    own (repair would remove them whole); None for one where a line there is not (repair refuses it); False for a
    store that appends in a transaction."""
    from .store.jsonl import removes_whole

    if isinstance(source, StoreSource) and not isinstance(source.store, JsonlStore):
        return False
    if isinstance(source, StoreSource):
        try:
            return True if source.store.repair_log(source.fight_id, dry_run=True).line else None
        except OmenError:
            return None
    held = getattr(source, "_lines", None)  # a LinesSource: the lines it holds (a torn last line held apart)
    return True if held is None or removes_whole(held, source.fight_id) else None


# -- undo: the states markers go back to ---------------------------------------------------------------------------


def _needed(marks: Landmarks) -> frozenset[int]:
    """The seqs after which the timeline keeps the state: before each undone range, and before each undo batch
    (where a redo goes back to)."""
    return frozenset({u.from_seq - 1 for u in marks.undos} | {u.batch - 1 for u in marks.undos})


def after_marker(state: FightState, rec: StoredEvent, back_to: Callable[[int], FightState | None],
                 batch_of: Callable[[int], int | None]) -> FightState:
    """The state after an undo or redo marker ``rec``, from ``state`` (the state just before it).

    ``back_to(seq)`` is the state just after ``seq`` as the log stood then (a
    state the walk kept, or one rebuilt from a snapshot), ``batch_of(seq)`` the
    batch of the undo at ``seq``. An undo goes back to the state before its
    range, with the undo on the redo stack; a redo goes back to the state just
    before the undo's batch. Raises :class:`LogCorrupted` if that cannot be.
    """
    event = rec.event
    if isinstance(event, Redone):
        batch = batch_of(event.undo_seq)
        if batch is None or redoable(state) != event.undo_seq:
            raise LogCorrupted("the log", rec.seq, f"seq {event.undo_seq} is not an undo a redo may take back now")
        back = back_to(batch - 1)
        if back is None:
            raise LogCorrupted("the log", rec.seq, f"cannot rebuild the state before the undo at seq {event.undo_seq}")
        return replace(back, fight_id=rec.fight_id, version=rec.seq, last_hash=rec.hash)
    assert isinstance(event, Undone)
    back = back_to(event.from_seq - 1)
    if back is None:
        raise LogCorrupted("the log", rec.seq, f"cannot rebuild the state before seq {event.from_seq} for this undo")
    return replace(back, fight_id=rec.fight_id, version=rec.seq, last_hash=rec.hash,
                   redo_stack=redo_stack_after(state.redo_stack, Undone, rec.seq, rec.batch, True))


# -- the timeline: every event with its states ----------------------------------------------------------------------


def _timeline(source: Source, marks: Landmarks, *, to_seq: int | None, start: FightState | None,
              report: Callable[[Finding], None] | None, chain: bool, canonical: bool) -> Iterator[Step]:
    """Every event in order with the state before and after it as it stood then, and whether it is undone now."""
    state = start if start is not None else FightState(fight_id=source.fight_id)
    marks_now = marks.upto(to_seq)
    voided = marks_now.voided()
    needed = _needed(marks)
    kept: dict[int, FightState] = {state.version: state} if state.version in needed or not state.version else {}
    batches = {u.seq: u.batch for u in marks.undos}
    reader = _Reader(source, state.version, state.last_hash, report, chain, canonical)

    for rec in reader.records(to_seq):
        raw = reader.raw
        before = state
        try:
            if isinstance(rec.event, UNDO_MARKERS):
                state = after_marker(state, rec, kept.get, batches.get)
            else:
                state = _folded(state, rec, source.where)
                state = replace(state, fight_id=rec.fight_id, version=rec.seq, last_hash=rec.hash)
        except (IllegalOrder, OutOfPhase, LogCorrupted) as exc:
            if report is None:
                raise
            report(_fold_finding(rec, exc))
            state = replace(before, version=rec.seq, last_hash=rec.hash)
        if rec.seq in needed:
            kept[rec.seq] = state
        yield Step(rec, before, state, rec.seq in voided, raw)
    reader.finish(to_seq)


def _folded(state: FightState, rec: StoredEvent, where: str) -> FightState:
    """``evolve`` on a stored event; an event that cannot be folded at all in the state before it (it names a
    combatant who never joined, say: a tampered log) is a :class:`LogCorrupted`, never a raw error."""
    try:
        return evolve(state, rec.event, rec.seq, rec.batch)
    except OmenError:
        raise
    except Exception as exc:
        raise LogCorrupted(where, rec.seq, f"this {type(rec.event).__struct_config__.tag} cannot be applied in "
                                           f"the state before it: {exc!r}") from None


def _fold_finding(rec: StoredEvent, exc: Exception) -> Finding:
    name = type(rec.event).__struct_config__.tag
    if isinstance(exc, IllegalOrder):
        return Finding(seq=rec.seq, rule="lifecycle", what=f"{name} out of order",
                       expected=" or ".join(exc.legal) or "nothing", found=exc.trigger)
    if isinstance(exc, OutOfPhase):
        return Finding(seq=rec.seq, rule="phase", what=f"{name} out of phase",
                       expected=f"not in the {exc.phase.value} phase", found=exc.trigger)
    reason = exc.reason if isinstance(exc, LogCorrupted) else str(exc)
    return Finding(seq=rec.seq, rule="undo" if isinstance(rec.event, UNDO_MARKERS) else "audit", what=reason)


# -- the walk -----------------------------------------------------------------------------------------------------


def walk(source: Source, visitors: Visitor | Sequence[Visitor], *, to_seq: int | None = None,
         start: FightState | None = None, strict: bool = True, chain: bool = True,
         canonical: bool = False, skim: bool = True) -> FightState:
    """Read ``source`` once and drive ``visitors``; return the state the walk leaves.

    ``to_seq`` stops after that event (undo markers after it do not count);
    ``start`` is a state to start from (a snapshot's: the walk reads the lines
    after its version and checks they continue its hash). ``strict`` raises at
    the first problem, otherwise visitors get every :class:`Finding`.
    ``chain`` checks the hash chain from the raw bytes; ``canonical`` also
    checks each line is written exactly as today's encoder writes it.
    ``skim`` (state-only walks) decodes in full only what the fold needs;
    False decodes every event in full (the same state, or the same error).

    The landmarks come from the log, never on trust from an index: a timeline
    walk (visitors that want events) reads them from the log's own lines
    first (:meth:`Source.log_landmarks`); a state-only walk takes the index's
    and checks it against every landmark it reads (:func:`_checked_fold`).
    """
    group = [visitors] if isinstance(visitors, Visitor) else list(visitors)

    def report(finding: Finding) -> None:
        for v in group:
            v.problem(finding)

    if not any(v.wants_events for v in group):
        state, marks = _checked_fold(source, to_seq=to_seq, start=start, report=None if strict else report,
                                     chain=chain, skim=skim)
        info = _info(source, marks, to_seq, state if state.version else None, start)
        for v in group:
            v.begin(info)
        for v in group:
            v.end(state)
        return state
    marks = landmarks_of(source.log_landmarks())
    info = _info(source, marks, to_seq, None, start)
    for v in group:
        v.begin(info)
    state = start if start is not None else FightState(fight_id=source.fight_id)
    try:
        for step in _timeline(source, marks, to_seq=to_seq, start=start, report=None if strict else report,
                              chain=chain, canonical=canonical):
            state = step.after
            for v in group:
                v.line(step.rec, step.raw)
                v.event(step.rec, step.before, step.after, step.voided)
                if isinstance(step.rec.event, Undone):
                    record = next((u for u in info.landmarks.undos if u.seq == step.rec.seq), None)
                    if record is not None:
                        v.undone(record)
    except StopWalk:
        pass
    for v in group:
        v.end(state)
    return state


def _info(source: Source, marks: Landmarks, to_seq: int | None, end: FightState | None,
          start: FightState | None) -> Walk:
    """What a visitor is told when a walk begins."""
    now = marks.upto(to_seq)
    return Walk(fight_id=source.fight_id, landmarks=now, voided=now.voided(), to_seq=to_seq,
                start_seq=start.version if start is not None else 0)


def _checked_fold(source: Source, *, to_seq: int | None, start: FightState | None,
                  report: Callable[[Finding], None] | None, chain: bool, skim: bool) -> tuple[FightState, Landmarks]:
    """The state-only fold with the index's landmarks, checked: every landmark the fold reads (after ``start``)
    must be one the index lists, and every one it lists there must be read. If they differ, the index is a cache
    that lies (edited, truncated, left behind by another writer): the log is read for its own landmarks and the
    fold done again from the beginning (a start state was chosen by the index too). Returns the state and the
    landmarks it was folded with."""
    listed = source.landmarks()
    marks = landmarks_of(listed)
    met: list[tuple[int, str]] = []
    try:
        state = _fold_state(source, marks, to_seq=to_seq, start=start, report=report, chain=chain, skim=skim,
                            met=met)
    except OmenError:
        if _same_marks(listed, source.log_landmarks()):
            raise  # the index is right: the error is the log's
        state = start if start is not None else FightState(fight_id=source.fight_id)
        met = [(-1, "")]  # a stale index: fold again below, from the log's own
    after = start.version if start is not None else 0
    expected = {(r.seq, r.hash) for r in listed if after < r.seq <= state.version}
    if expected == set(met):
        return state, marks
    log.warning("landmark_index_stale", fight_id=source.fight_id, where=source.where, listed=len(expected),
                read=len(met))
    marks = landmarks_of(source.log_landmarks())
    state = _fold_state(source, marks, to_seq=to_seq, start=None, report=report, chain=chain, skim=skim)
    return state, marks


def _same_marks(listed: list[StoredEvent], found: list[StoredEvent]) -> bool:
    """Whether an index lists exactly the landmarks found in the log."""
    return [(r.seq, r.hash) for r in listed] == [(r.seq, r.hash) for r in found]


def _fold_state(source: Source, marks: Landmarks, *, to_seq: int | None, start: FightState | None,
                report: Callable[[Finding], None] | None, chain: bool, skim: bool = True,
                met: list[tuple[int, str]] | None = None) -> FightState:
    """The state at the end (or after ``to_seq``): every live event folded, undone events skipped, markers
    only moving the redo stack (the state an undo goes back to is the fold of the live events). ``met`` gets
    the (seq, hash) of every landmark read.

    A strict walk folds light (``skim``): the driver decodes in full only the
    bodies the fold needs. Anything the light fold does not take (a problem the
    driver finds, an event out of order, an effect that fails, a frame that does
    not rebuild) has the log read again by the exact fold, every body decoded and folded by ``evolve``,
    from the state it started from, which raises the reference error or folds on.
    """
    marks = marks.upto(to_seq)
    voided = marks.voided()
    state = start if start is not None else FightState(fight_id=source.fight_id)
    found: list[tuple[int, str]] = [] if met is None else met
    if report is None and skim:
        try:
            return _fold(source, state, voided, to_seq, None, chain, found, light=True)
        except Exception:  # the exact fold says what is wrong (a line the stand-ins took may not decode whole)
            del found[:]
    return _fold(source, state, voided, to_seq, report, chain, found, light=False)


class _Unsure(Exception):
    """The light fold met what it does not take: the exact fold reads the log again."""


def _undo_batch(ev: Any, kind: type) -> bool:
    """Whether an event (or its stand-in) belongs to an undo or redo batch (:func:`omen_core.events.is_undo_batch`)."""
    if kind is CommandIssued:
        command = ev.command
        return command.command in _UNDO_TAGS if command.__class__ is _CommandTag else isinstance(command, UNDO_COMMANDS)
    return kind in UNDO_MARKERS


def _fold(source: Source, state: FightState, voided: frozenset[int], to_seq: int | None,
          report: Callable[[Finding], None] | None, chain: bool, met: list[tuple[int, str]], *,
          light: bool) -> FightState:
    """The state-only fold from ``state`` on, over the driver's records: the undo bookkeeping
    (:func:`~omen_core.state.redo_stack_after`, :func:`~omen_core.state.opens_undo_point`) for every event,
    then the fold of each live one.

    ``light``: the events come skimmed (stand-ins where the body is not
    needed); the order is checked against the same tables (``ORDER``,
    ``PHASE_ORDER``) and triggers (``trigger_for``, ``phase_trigger_for``) as
    ``evolve``, the actions in progress followed as (action, step) only, and the
    effects (``EFFECTS``) applied to events decoded whole; at the end the frames
    of the actions still in progress are rebuilt by ``evolve``'s own frame fold.
    Otherwise every event is decoded whole and folded by ``evolve``.
    """
    reader = _Reader(source, state.version, state.last_hash, report, chain, False, _decode_skim if light else None,
                     met)
    live_seq, undo_point, redo_stack = state.live_seq, state.undo_point, state.redo_stack
    phase = state.phase
    frames = [(f.action, f.step, f.declared_at) for f in state.stack]  # (action, step, declared at)
    open_from = state.stack[0].declared_at if state.stack else None
    specs, next_steps, next_phases, where = _SPECS, _NEXT_STEP, _NEXT_PHASE, source.where
    phase_next = next_phases[phase]
    for rec in reader.records(to_seq):
        ev: Any = rec.event
        seq, batch = rec.seq, rec.batch
        kind, trigger, phase_trigger, effect, unordered, marker = specs[ev.__class__]
        undo_batch = (ev.command.command in _UNDO_TAGS if ev.__class__ is _SKIM_COMMAND else _undo_batch(ev, kind)) \
            if unordered else False
        if marker or (redo_stack and seq == batch):  # (the rule moves an empty stack at a marker only)
            redo_stack = redo_stack_after(redo_stack, kind, seq, batch, undo_batch)
        if marker or (voided and seq in voided):
            continue
        if not light:
            if state.redo_stack != redo_stack or state.live_seq != live_seq or state.undo_point != undo_point:
                state = replace(state, redo_stack=redo_stack, live_seq=live_seq, undo_point=undo_point)
            try:
                state = _folded(state, rec, where)  # evolve keeps the undo fields itself, by the same rules
            except (IllegalOrder, OutOfPhase, LogCorrupted) as exc:
                if report is None:
                    raise
                report(_fold_finding(rec, exc))
            live_seq, undo_point, redo_stack = state.live_seq, state.undo_point, state.redo_stack
            continue
        rest_before = not frames
        if not unordered:
            if trigger is None:
                trigger = trigger_for(kind, ev)
            if phase_trigger is None:
                phase_trigger = phase_trigger_for(kind, ev)
            next_phase = phase_next[phase_trigger]
            if trigger in OPENING:  # an action begins (a declaration, an ability used on one's turn, a moment)
                if frames and ("nest" not in next_steps[frames[-1][1]] or kind is not AttackDeclared
                               or ev.reacting_to != frames[-1][0]):
                    raise _Unsure
                if not frames:
                    open_from = seq
                frames.append((ev.action or seq, next_steps[LifeStep.IDLE][trigger][0], seq))
            elif frames:
                action, step, declared = frames[-1]
                dest, finished = next_steps[step][trigger]
                if ev.action is not None and ev.action != action:
                    raise _Unsure
                if finished:
                    frames.pop()
                    if not frames:
                        open_from = None
                else:
                    frames[-1] = (action, dest, declared)
            elif trigger not in next_steps[LifeStep.IDLE]:
                raise _Unsure
            if next_phase is not phase:
                phase, phase_next = next_phase, next_phases[next_phase]
        if effect is not None:
            state = effect(state, ev)
            if kind is SeedRevealed:  # evolve's undo floor (C42)
                state = replace(state, undo_floor=seq + 1)
        if not undo_batch:
            live_seq = seq
        if seq == batch and opens_undo_point(seq, batch, rest_before, undo_batch):
            undo_point = seq
    reader.finish(to_seq)
    last = reader.last
    changes: dict[str, Any] = {"live_seq": live_seq, "undo_point": undo_point, "redo_stack": redo_stack}
    if light:
        changes.update(phase=phase, stack=_held(source, state, frames, open_from, last, voided))
    if last is not None:
        changes.update(fight_id=last.fight_id, version=last.seq, last_hash=last.hash)
    return replace(state, **changes)


_NOTHING = object()


def _static(rule: Callable[[type, Any], str], kind: type) -> str | None:
    """The trigger of ``kind`` if it does not depend on the event's fields, else None (read per event)."""
    try:
        return rule(kind, _NOTHING)
    except AttributeError:
        return None


def _spec(kind: type) -> tuple[Any, ...]:
    """(type, trigger or None, phase trigger or None, effect or None, unordered, undo marker) for one event type."""
    if kind in UNORDERED:
        return kind, None, None, EFFECTS.get(kind), True, kind in UNDO_MARKERS
    return kind, _static(trigger_for, kind), _static(phase_trigger_for, kind), EFFECTS.get(kind), False, False


_SPECS: dict[type, tuple[Any, ...]] = {cls: _spec(kind) for cls, kind in _REAL.items()}
_NEXT_STEP: dict[LifeStep, dict[str, tuple[LifeStep, bool]]] = {step: {} for step in LifeStep}
for (_step, _trigger), _dest in ORDER.items():
    _NEXT_STEP[_step][_trigger] = (_dest, _dest in DONE)
_NEXT_PHASE: dict[Phase, dict[str, Phase]] = {phase: {t: d for (p, t), d in PHASE_ORDER.items() if p is phase}
                                               for phase in Phase}
_UNDO_TAGS = frozenset(kind.__struct_config__.tag for kind in UNDO_COMMANDS)
_SKIM_COMMAND: Any = _SKIM_TYPES[CommandIssued]
_TAIL = len(',"hash":""}') + 64
#: The batch in progress after a line that could not be read: unknown, the next record's own (``_Reader._decode``).
_LOST = -1


def _held(source: Source, state: FightState, frames: list[tuple[int, LifeStep, int]], open_from: int | None,
          last: StoredEvent | None, voided: frozenset[int]) -> tuple[Frame, ...]:
    """The frames of the actions still in progress after the light fold, rebuilt by ``evolve``'s own frame fold
    from their events read in full (they must be the actions the light fold followed)."""
    stack: tuple[Frame, ...] = ()
    if open_from is not None and last is not None:
        holder = replace(state, stack=())
        for chunk in source.lines(open_from - 1):
            for raw in chunk:
                rec = decode_line(raw.rstrip(b"\n"))
                if rec.seq > last.seq:
                    break
                if rec.seq in voided or isinstance(rec.event, UNORDERED):
                    continue
                holder = replace(holder, stack=_stack(holder, rec.event, rec.seq, trigger_of(rec.event)))
            else:
                continue
            break
        stack = holder.stack
    if [(f.action, f.step) for f in stack] != [(a, s) for a, s, _ in frames]:
        raise _Unsure(f"the light fold and evolve disagree on the actions in progress: {frames} against {stack}")
    return stack


def step_through(source: Source, *, to_seq: int | None = None, strict: bool = True) -> Iterator[Step]:
    """The timeline as a generator: each event with its states (see :class:`Step`), for a reader that pulls (the
    landmarks read from the log itself, as for any timeline walk)."""
    marks = landmarks_of(source.log_landmarks())

    def ignore(finding: Finding) -> None:
        return None

    yield from _timeline(source, marks, to_seq=to_seq, start=None, report=None if strict else ignore, chain=True,
                         canonical=False)


class _Keep(Visitor):
    wants_events = False


def replay(source: Source, *, to_seq: int | None = None, start: FightState | None = None,
           chain: bool = True, skim: bool = True) -> FightState:
    """The state after ``to_seq`` (default: the end), undos applied: the walk's state-only way."""
    return walk(source, _Keep(), to_seq=to_seq, start=start, chain=chain, skim=skim)


def project(records: Iterable[StoredEvent], to_seq: int | None = None) -> FightState:
    """The state of an in-memory log of decoded events (tests, tools): encoded again and walked, so it is the
    same as reading the stored log. The hash chain is not checked here (the events may be built by hand)."""
    lines = [encode_line(rec) for rec in records]
    source = LinesSource(lines, where="the events given")
    return replay(source, to_seq=to_seq, chain=False)


def state_at(source: Source, snapshots: SnapshotStore | None, to_seq: int | None = None,
             chain: bool = True) -> FightState:
    """The state after ``to_seq`` (default: the end), from the latest usable snapshot in ``snapshots`` (a
    :class:`~omen_core.store.snapshots.SnapshotStore`, or None). With a usable snapshot only the events after it
    are folded; without one this is a plain replay plus the snapshot lookup (measured in docs/performance.md).

    A snapshot is usable if it was taken under this schema and state format,
    at an event still in the log (same hash), and no undo or redo later in the
    log (up to ``to_seq``) reaches back across it.
    """
    start = usable_snapshot(source, snapshots, to_seq) if snapshots is not None else None
    return replay(source, to_seq=to_seq, start=start, chain=chain)


def usable_snapshot(source: Source, snapshots: SnapshotStore, to_seq: int | None = None) -> FightState | None:
    """The state of the latest snapshot a walk of ``source`` to ``to_seq`` may start from, or None.

    A snapshot is usable if it was taken under this schema and state format,
    at an event that is still the one in the log (same hash), and no undo or
    redo written after it (up to ``to_seq``) reaches back before it: then the
    snapshot no longer describes the log, and an earlier one is tried.
    """
    marks = landmarks_of(source.landmarks()).upto(to_seq)
    limit = to_seq if to_seq is not None else 1 << 62
    for _ in range(MAX_TRIES):
        snapshot = snapshots.latest(source.fight_id, limit) if limit > 0 else None
        if snapshot is None:
            return None
        reach = _reach(marks, snapshot.seq)
        if reach is not None:
            limit = reach - 1
            continue
        if snapshot.schema_version != SCHEMA_VERSION or snapshot.state_format != STATE_FORMAT \
                or not _same_event(source, snapshot):
            limit = snapshot.seq - 1
            continue
        return snapshot.state
    return None


def _reach(marks: Landmarks, seq: int) -> int | None:
    """How far back an undo or redo written after ``seq`` reaches, if it reaches back to ``seq`` or before."""
    reaches = [u.from_seq for u in marks.undos if u.seq > seq >= u.from_seq]
    undone = {u.seq: u for u in marks.undos}
    reaches += [undone[target].from_seq for at, target in marks.redos if at > seq >= target]
    return min(reaches) if reaches else None


class _Position(msgspec.Struct):
    seq: int
    hash: str


_POSITION = msgspec.json.Decoder(_Position).decode


def _same_event(source: Source, snapshot: Snapshot) -> bool:
    """Whether the event at the snapshot's seq is still the one it was taken after."""
    for chunk in source.lines(snapshot.seq - 1):
        for line in chunk[:1]:
            try:
                at = _POSITION(line)
            except msgspec.DecodeError:
                return False
            return at.seq == snapshot.seq and at.hash == snapshot.event_hash
    return False
