"""Every event type of a fight, the stored envelope around it, and the hash chain that seals it.

Events are frozen, tagged msgspec Structs forming one union, :data:`Event`.
A stored event (:class:`StoredEvent`) wraps one in an envelope: fight id,
``seq`` (1, 2, 3... without gaps), ``recorded_at`` (integer milliseconds UTC
from an injected clock), schema version, ``prev_hash`` and ``hash``.

The chain: ``hash = sha256(prev_hash || canonical body)``, where
``prev_hash`` enters as its 32 raw bytes (the first event's is
:data:`GENESIS_HASH`, 32 zero bytes) and the canonical body is the msgspec
JSON of the envelope *without* its ``hash`` field, fields in declaration
order, no whitespace. Because ``hash`` is the envelope's last field, a
stored line is its body with ``,"hash":"..."`` spliced in before the final
``}``; any tool can recompute the chain from the raw lines.

>>> e = seal("demo", 1, 0, GENESIS_HASH, SeedRevealed(seed="00ff"))
>>> line = encode_line(e)
>>> line[:60]
b'{"fight_id":"demo","seq":1,"recorded_at":0,"schema_version":'
>>> decode_line(line) == e and hash_ok(e)
True
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from typing import Annotated, Literal

import msgspec

from .content import CombatantSheet
from .errors import ChainBroken

__all__ = [
    "SCHEMA_VERSION",
    "GENESIS_HASH",
    "DiceSourceKind",
    "PoolTag",
    "RollPurpose",
    "Die",
    "Modifier",
    "RollTotal",
    "EventBase",
    "FightStarted",
    "CombatantJoined",
    "DiceRolled",
    "StaticCheckResolved",
    "ContestResolved",
    "SaveResolved",
    "SeedRevealed",
    "Event",
    "EVENT_TYPES",
    "Unsealed",
    "StoredEvent",
    "canonical_body",
    "chain_hash",
    "seal",
    "encode_line",
    "decode_line",
    "hash_ok",
    "chain_breaks",
    "verify_chain",
    "event_schema",
]

SCHEMA_VERSION = 1
GENESIS_HASH = "0" * 64

DiceSourceKind = Literal["seeded", "manual", "scripted"]
PoolTag = Literal["primary", "fcs", "res", "active", "damage", "check", "save"]
RollPurpose = Literal[
    "hit", "base_defense", "active_defense", "damage",
    "check", "save", "stealth", "perception", "initiative", "roll_off",
]
Hex64 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
Sequence_ = Annotated[int, msgspec.Meta(ge=1)]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class _Part(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Base of the value objects that events are made of."""


class Die(_Part, kw_only=True):
    """One rolled die: the pool it belongs to (C6), its size and the face that came up."""

    pool: PoolTag
    sides: Annotated[int, msgspec.Meta(ge=2)]
    face: Annotated[int, msgspec.Meta(ge=1)]


class Modifier(_Part, kw_only=True):
    """A situational or other bonus added to a total, and where it came from."""

    source: str
    value: int


class RollTotal(_Part, kw_only=True):
    """One side of a check or save: the roll primitive, term by term.

    ``total = face + attribute_bonus + skill_level + sum(modifiers)``
    (rolls-and-resolution.txt §The Roll Primitive; C1, C2). ``roll`` is the
    counter of the :class:`DiceRolled` event whose die gave ``face``.
    """

    roller: str
    attribute: str
    skill: str | None = None
    roll: Sequence_
    face: int
    attribute_bonus: int
    skill_level: int = 0
    modifiers: tuple[Modifier, ...] = ()
    total: int


class EventBase(msgspec.Struct, frozen=True, tag_field="type", tag=_snake,
                forbid_unknown_fields=True, kw_only=True):
    """Base of every event type; the ``type`` tag is the class name in snake_case."""


class FightStarted(EventBase, kw_only=True):
    """A fight's header: ruleset, dice source and, for seeded dice, the seed commitment."""

    ruleset: str
    ruleset_hash: str = ""
    dice: DiceSourceKind
    seed_commitment: Hex64 | None = None
    title: str = ""


class CombatantJoined(EventBase, kw_only=True):
    """A combatant enters the fight; the whole sheet is recorded so the log stands alone."""

    sheet: CombatantSheet


class DiceRolled(EventBase, kw_only=True):
    """One roll: why, who, every die with its pool tag, and where the faces came from.

    ``counter`` numbers the rolls of a fight from 1; seeded faces are derived
    from (seed, fight id, counter, die index).
    """

    counter: Sequence_
    purpose: RollPurpose
    roller: str
    dice: tuple[Die, ...]
    source: DiceSourceKind


class StaticCheckResolved(EventBase, kw_only=True):
    """A check against a set difficulty (C16): success iff total > difficulty; a tie is a tie."""

    check: RollTotal
    difficulty: int
    outcome: Literal["success", "tie", "failure"]


class ContestResolved(EventBase, kw_only=True):
    """A contested check (C16): the initiator wins iff its total is higher; ties go to the defender."""

    initiator: RollTotal
    defender: RollTotal
    winner: str
    tie: bool


class SaveResolved(EventBase, kw_only=True):
    """A save (C15): one die per side; the saver succeeds iff its total >= the opposing total."""

    effect: str
    saver: RollTotal
    opposing: RollTotal
    success: bool


class SeedRevealed(EventBase, kw_only=True):
    """The secret seed of the seeded dice, disclosed so anyone can recompute every seeded die."""

    seed: Annotated[str, msgspec.Meta(pattern=r"^([0-9a-f]{2})+$")]


Event = (FightStarted | CombatantJoined | DiceRolled | StaticCheckResolved
         | ContestResolved | SaveResolved | SeedRevealed)
EVENT_TYPES: tuple[type[EventBase], ...] = (
    FightStarted, CombatantJoined, DiceRolled, StaticCheckResolved,
    ContestResolved, SaveResolved, SeedRevealed,
)


class Unsealed(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An envelope before sealing: everything the hash covers, in canonical field order."""

    fight_id: str
    seq: Sequence_
    recorded_at: int
    schema_version: int
    prev_hash: Hex64
    event: Event


class StoredEvent(Unsealed, frozen=True, forbid_unknown_fields=True):
    """A sealed event as stored: the envelope plus ``hash`` (always the last field)."""

    hash: Hex64

    def unsealed(self) -> Unsealed:
        """The envelope without its hash, as it was hashed."""
        return Unsealed(self.fight_id, self.seq, self.recorded_at, self.schema_version,
                        self.prev_hash, self.event)


_ENCODER = msgspec.json.Encoder(order="deterministic")
_DECODER = msgspec.json.Decoder(StoredEvent)


def canonical_body(envelope: Unsealed) -> bytes:
    """The canonical bytes the hash covers: compact msgspec JSON, fields in declaration order."""
    return _ENCODER.encode(envelope if type(envelope) is Unsealed else envelope.unsealed())


def chain_hash(prev_hash: str, body: bytes) -> str:
    """``sha256(prev_hash || body)`` as lowercase hex, ``prev_hash`` entering as raw bytes."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + body).hexdigest()


def seal(fight_id: str, seq: int, recorded_at: int, prev_hash: str, event: Event) -> StoredEvent:
    """Wrap ``event`` in its envelope and compute its hash."""
    env = Unsealed(fight_id, seq, recorded_at, SCHEMA_VERSION, prev_hash, event)
    return StoredEvent(fight_id, seq, recorded_at, SCHEMA_VERSION, prev_hash, event,
                       chain_hash(prev_hash, canonical_body(env)))


def encode_line(stored: StoredEvent) -> bytes:
    """One JSON Lines record (without the newline)."""
    return _ENCODER.encode(stored)


def decode_line(line: bytes | str) -> StoredEvent:
    """Decode one JSON Lines record; raises ``msgspec.DecodeError`` (or ValidationError) if malformed."""
    return _DECODER.decode(line)


def hash_ok(stored: StoredEvent) -> bool:
    """Whether ``stored.hash`` is the hash of its own body and ``prev_hash``."""
    return chain_hash(stored.prev_hash, canonical_body(stored)) == stored.hash


def chain_breaks(records: Iterable[StoredEvent], fight_id: str | None = None,
                 head: str | None = None) -> Iterator[tuple[int, str]]:
    """Every place the chain does not hold, as ``(seq, what)``; empty for a sound log.

    Finds changed events (hash mismatch), dropped, inserted or reordered
    events (seq out of step, or a ``prev_hash`` that is not the previous
    event's hash) and events of another fight. A chain cannot know its own
    end: a log cut after any event is a sound prefix. Pass ``head``, the
    hash of the last event as known from elsewhere (a store's version, a
    published head), to catch a dropped tail too.
    """
    prev_hash, expected_seq = GENESIS_HASH, 1
    for rec in records:
        fight_id = rec.fight_id if fight_id is None else fight_id
        if rec.fight_id != fight_id:
            yield rec.seq, f"belongs to fight {rec.fight_id!r}, expected {fight_id!r}"
        if rec.seq != expected_seq:
            yield rec.seq, f"seq {rec.seq} where {expected_seq} was expected"
        if rec.prev_hash != prev_hash:
            yield rec.seq, f"prev_hash {rec.prev_hash[:12]}... is not the previous hash {prev_hash[:12]}..."
        if not hash_ok(rec):
            yield rec.seq, "hash does not match the event's content"
        if rec.schema_version > SCHEMA_VERSION:
            yield rec.seq, f"schema version {rec.schema_version} is newer than {SCHEMA_VERSION}"
        prev_hash, expected_seq = rec.hash, rec.seq + 1
    if head is not None and head != prev_hash:
        yield expected_seq - 1, f"the log ends at seq {expected_seq - 1}, but its known head is {head[:12]}..."


def verify_chain(records: Iterable[StoredEvent], fight_id: str | None = None,
                 head: str | None = None) -> int:
    """Raise :class:`ChainBroken` at the first break; return the number of events checked."""
    count = 0

    def counted() -> Iterator[StoredEvent]:
        nonlocal count
        for count, rec in enumerate(records, 1):  # noqa: B007 - count is read after the loop
            yield rec

    for seq, what in chain_breaks(counted(), fight_id, head):
        raise ChainBroken(seq, what)
    return count


def event_schema() -> dict:
    """The JSON Schema of a stored event (envelope and the whole event union)."""
    return msgspec.json.schema(StoredEvent)
