"""Dice sources (seeded, manual, scripted), the seed commitment, and the standalone seeded-die function.

The rules never call ``random``: every roll asks an injected
:class:`DiceSource` for faces. Three sources:

- :class:`SeededDice` derives each die from a secret seed with HMAC-SHA256
  over (fight id, roll counter, die index), without modulo bias. The log
  records only ``sha256(seed)`` at fight start; once the seed is revealed
  anyone can recompute every seeded die with :func:`seeded_face`.
- :class:`ManualDice` takes faces typed in from physical dice.
- :class:`ScriptedDice` replays a queue of faces (tests, fixtures), consumed
  in the order of CLARIFICATIONS C29.

>>> seed = bytes.fromhex("00" * 32)
>>> [seeded_face(seed, "demo", 1, i, 20) for i in range(3)]
[4, 5, 9]
>>> commitment(seed)[:16]
'66687aadf862bd77'
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol

import msgspec

from .errors import BadInput, DiceError, DiceExhausted, InvalidArgument, InvalidDieFace, expect
from .events import DiceRolled, DiceSourceKind, Die, PoolTag, RollPurpose

__all__ = [
    "RollRequest",
    "NeededDie",
    "needed_dice",
    "DiceSource",
    "SeededDice",
    "ManualDice",
    "FacesThenSource",
    "ScriptedDice",
    "NoDice",
    "CommandFaces",
    "RecordedDice",
    "FacesNeeded",
    "SurplusFaces",
    "Stop",
    "describe_dice",
    "describe_rolls",
    "purpose_words",
    "seeded_face",
    "face_from_uint64",
    "commitment",
    "roll",
    "seeded_mismatches",
    "seeded_faces",
]


def seeded_face(seed: bytes, fight_id: str, counter: int, index: int, sides: int) -> int:
    """The face of seeded die ``index`` (0-based) of roll ``counter`` of ``fight_id`` on a d``sides``.

    Standalone on purpose (only ``hmac`` and ``hashlib``), so anyone holding a
    log and its revealed seed can copy it and check every seeded die:
    ``HMAC-SHA256(key=seed, msg="<fight_id>|<counter>|<index>|<attempt>")``
    for ``attempt`` = 0, 1, 2..., the first 8 bytes of the digest read as a
    big-endian integer, until :func:`face_from_uint64` accepts one.
    """
    return _first_face(lambda msg: hmac.digest(seed, msg, "sha256"), f"{fight_id}|{counter}|", index, sides)


def _first_face(mac: Callable[[bytes], bytes], stem: str, index: int, sides: int) -> int:
    """The first accepted draw of die ``index``: ``mac`` (HMAC-SHA256 with the seed) of ``"<stem><index>|<attempt>"``
    for attempt 0, 1, 2..., read as :func:`seeded_face` says. A die past d2^64 cannot be drawn from 64 bits (every
    draw would be rejected): refused, as a die under d2 is."""
    if not 2 <= sides <= 1 << 64:
        raise DiceError(f"a seeded die is a d2 to a d2^64 (drawn from 64 bits), not a d{sides}")
    attempt = 0
    while True:
        face = face_from_uint64(int.from_bytes(mac(f"{stem}{index}|{attempt}".encode())[:8], "big"), sides)
        if face is not None:
            return face
        attempt += 1


def _pad_mac(key: bytes) -> Callable[[bytes], bytes]:
    """HMAC-SHA256 with ``key``, from its inner and outer hashes with the key's pads fed in once (RFC 2104: a key
    longer than the 64-byte block is hashed first), copied for each message: ``outer(inner(msg))``."""
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    key = key.ljust(64, b"\0")
    inner, outer = hashlib.sha256(bytes(b ^ 0x36 for b in key)), hashlib.sha256(bytes(b ^ 0x5C for b in key))

    def mac(msg: bytes) -> bytes:
        h, o = inner.copy(), outer.copy()
        h.update(msg)
        o.update(h.digest())
        return o.digest()

    return mac


def face_from_uint64(x: int, sides: int) -> int | None:
    """Map a 64-bit number to a face without modulo bias: ``x % sides + 1``, or None (reject).

    Numbers at or above the largest multiple of ``sides`` not above 2**64 are
    rejected, so that every face has exactly the same number of preimages.

    >>> face_from_uint64(0, 6), face_from_uint64(2**64 - 1, 6)
    (1, None)
    """
    limit = (1 << 64) - (1 << 64) % sides
    return x % sides + 1 if x < limit else None


def commitment(seed: bytes) -> str:
    """The seed commitment recorded at fight start: ``sha256(seed)`` as hex."""
    return hashlib.sha256(seed).hexdigest()


def describe_dice(requests: Sequence[RollRequest]) -> str:
    """The dice of some rolls in C29 order, as a person reads them: ``vesh's hit: primary d8, fcs d6; ...``."""
    return describe_rolls((r.roller, purpose_words(r.purpose, r.about), r.pool) for r in requests)


def purpose_words(purpose: str, about: str | None = None) -> str:
    """What a roll is for, in words: what it is about where it says (C40: ``Burning damage``), else its purpose
    (``base defense``); what every reader of a roll's request says (the refusals, the table's roll boxes)."""
    return about or purpose.replace("_", " ")


def describe_rolls(rolls: Iterable[tuple[str, str, Iterable[tuple[str, int]]]]) -> str:
    """:func:`describe_dice` of rolls given as (roller, purpose, pool) (what a log's ``dice_rolled`` records)."""
    return "; ".join(f"{roller}'s {purpose.replace('_', ' ')}: " + ", ".join(f"{tag} d{sides}" for tag, sides in pool)
                     for roller, purpose, pool in rolls)


class NeededDie(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One die a command still needs the face of: whose roll (``roller``), what for (``purpose``, as the options
    name it: ``base_defense``; ``about``, as they say it, what it is for in words where the purpose does not say:
    ``Burning damage``, ``INT opposing the save against Poisoned``, C40), its pool and its sides."""

    roller: str
    purpose: str
    pool: str
    sides: int
    about: str | None = None


def needed_dice(requests: Iterable[RollRequest]) -> tuple[NeededDie, ...]:
    """The dice of some rolls one at a time, in C29 order (what :class:`FacesNeeded` waits for, as data)."""
    return tuple(NeededDie(roller=r.roller, purpose=r.purpose, pool=pool, sides=sides, about=r.about or None)
                 for r in requests for pool, sides in r.pool)


class FacesNeeded(DiceError, BadInput):
    """A command needs the faces of dice it was not given: ``needed`` are the rolls it makes, in C29 order, up
    to the first that found no face (faces given: ``given``). Give them in the command's ``dice``."""

    rule = "C29"  # the faces a command carries go to its dice in C29 order

    def __init__(self, needed: Sequence[RollRequest], given: int, then: Sequence[RollRequest] = (),
                 whole: bool = False):
        self.needed, self.given, self.then, self.whole = list(needed), given, list(then), whole
        count = sum(len(r.pool) for r in self.needed)
        more = f"; then, depending on the dice: {describe_dice(self.then)}" if self.then else ""
        if whole:  # faces then the seed: the faces stopped inside a roll, which is typed whole or rolled whole
            last = self.needed[-1]
            short = count - given
            super().__init__(
                f"the {_faces(given)} given {'stops' if given == 1 else 'stop'} inside a roll of "
                f"{_dice(len(last.pool))} ({describe_dice([last])}): a roll is typed whole or rolled whole from the "
                f"seed (C29); give "
                f"{short} more, or leave out its {len(last.pool) - short} (the seed then rolls it); the faces in "
                f"this order: {describe_dice(self.needed)}")
            return
        # too few faces: the faces given decide which rolls follow, so the count is of the rolls they lead to (up
        # to the first they do not reach, and those rolled whatever the faces); faces for those may lead to more
        rolls = (f"this command rolls {_dice(count)} and 0 faces were given" if not given else
                 f"this command rolls at least {_dice(count)} as the {_faces(given)} given "
                 f"{'falls' if given == 1 else 'fall'}")
        super().__init__(f"{rolls}; give the faces in the command's dice, in this order (C29): "
                         f"{describe_dice(self.needed)}{more}")


class Stop(NamedTuple):
    """The decision a command's events leave the fight waiting at: its title and rule, who answers it (none: the
    GM) and with which commands."""

    title: str
    rule: str
    who: tuple[str, ...]
    answers: tuple[str, ...]

    def words(self, who: Sequence[str] | None = None) -> str:
        """``the Interrupt window (C24), where kael answers with react or pass_reaction``; ``who``: those to name
        (default, every one)."""
        named = self.who if who is None else tuple(who)
        return (f"the {self.title} window ({self.rule}), where {', '.join(named) or 'the GM'} "
                f"{'answer' if len(named) > 1 else 'answers'} with {' or '.join(self.answers)}")


class SurplusFaces(DiceError, BadInput):
    """A command carried more faces than it rolls: nothing is appended (faces are never carried over). ``stop``: the
    decision it stops at first, if it does (its dice after it are the answer's); ``physical``: the faces went to
    the physical dice of a seeded fight alone, every other die the seed's."""

    rule = "C29"

    def __init__(self, rolled: Sequence[RollRequest], given: int, stop: Stop | None = None, physical: bool = False):
        stops = stop.words() if stop is not None else ""
        self.rolled, self.given, self.stop, self.stops = list(rolled), given, stop, stops
        self.physical = physical  # the faces went to physical dice alone (in a seeded fight, C29)
        used = sum(len(r.pool) for r in self.rolled)
        what = describe_dice(self.rolled) if self.rolled else "no dice"
        then = "it stops first at" if not used else \
            f"once {'it is' if used == 1 else 'they are'} rolled, it stops at"  # (read as rolling none: a tester)
        why = (f": {then} {stops}, and the dice after it are rolled by the command that answers it "
               "(give the faces there);") if stops else ":"
        rolls = ("the physical dice of this command (its others are the fight's own dice) are" if physical
                 else "this command rolls")
        super().__init__(f"{_faces(given)} given, but {rolls} {used} ({what}){why} "
                         f"{_faces(given - used)} too many; nothing was written")


def _dice(n: int) -> str:
    """``1 die``, ``2 dice``."""
    return f"{n} {'die' if n == 1 else 'dice'}"


def _faces(n: int) -> str:
    """``1 face``, ``2 faces``."""
    return f"{n} {'face' if n == 1 else 'faces'}"


class RollRequest(msgspec.Struct, frozen=True, gc=False):
    """What a roll needs: whose, why, and the pool as ``(tag, sides)`` pairs in C29 order (a struct: one is made
    at every roll); ``about``, where the purpose alone does not say what the roll is for, what it is for in words:
    a condition's damage as it ticks, a save-ends save or the die opposing it (C40: ``Burning damage``, ``RES save
    against Poisoned``, ``INT opposing the save against Poisoned``; public, as condition names are)."""

    fight_id: str
    counter: int
    purpose: RollPurpose
    roller: str
    pool: tuple[tuple[PoolTag, int], ...]
    about: str = ""

    def describe(self) -> str:
        """A human name for the roll, used in error messages: ``roll #3 (check by kael: check d8)``."""
        dice = ", ".join(f"{tag} d{sides}" for tag, sides in self.pool)
        return f"roll #{self.counter} ({self.purpose} by {self.roller}: {dice})"


class DiceSource(Protocol):
    """Supplies faces for a roll. ``checkpoint``/``restore`` undo consumption when a command fails."""

    kind: DiceSourceKind

    def faces(self, request: RollRequest) -> Sequence[int]: ...

    def checkpoint(self) -> object: ...

    def restore(self, mark: object) -> None: ...


class SeededDice:
    """Counter-based seeded dice: a pure function of (seed, fight id, roll counter, die index).

    A revealed seed is spent (C42): a fight that goes on after the reveal rolls
    from :meth:`successor`, a fresh seed (random, or the next of ``successors``
    where runs must come out the same every time: a scenario's, a simulated
    fight's)."""

    kind: DiceSourceKind = "seeded"

    def __init__(self, seed: bytes, successors: Iterable[bytes] = ()):
        expect(seed, bytes, "SeededDice's seed", "the seed's bytes (bytes.fromhex of a hex seed)")
        if len(seed) < 16:
            raise DiceError("a dice seed must be at least 16 bytes")
        self._seed = seed
        self._commitment = commitment(seed)  # checked against the fight's before every command (C42): hashed once
        self._mac = _pad_mac(seed)
        self._successors = iter(successors)

    def successor(self) -> SeededDice:
        """The source of the seed that follows this one once it is revealed: the next of ``successors`` if any is
        left, else 32 fresh random bytes (the successors after it carried along)."""
        following = next(self._successors, None)
        return SeededDice(following if following is not None else secrets.token_bytes(32), self._successors)

    @property
    def seed(self) -> bytes:
        """The secret seed (revealed at the end: ``reveal_seed``)."""
        return self._seed

    @classmethod
    def fresh(cls) -> SeededDice:
        """A new source with 32 random bytes from the operating system as its seed."""
        return cls(secrets.token_bytes(32))

    @property
    def commitment(self) -> str:
        """``sha256(seed)``, safe to publish before the fight."""
        return self._commitment

    def faces(self, request: RollRequest) -> list[int]:
        """Derive one face per die of the pool: :func:`seeded_face`'s faces, from the seed's HMAC pads hashed once
        (the same digests; the tests hold the two to each other)."""
        stem = f"{request.fight_id}|{request.counter}|"
        return [_first_face(self._mac, stem, i, sides) for i, (_, sides) in enumerate(request.pool)]

    def checkpoint(self) -> object:
        """Nothing to save: the roll counter comes from the log."""
        return None

    def restore(self, mark: object) -> None:
        """Nothing to restore."""


class ManualDice:
    """Faces typed in from physical dice. With ``ask``, it is called once per roll with its request (a
    convenience for a program that can wait, like a terminal); without, a command must carry its faces
    (``dice``), and one that does not is refused with the list of the dice to roll."""

    kind: DiceSourceKind = "manual"

    def __init__(self, ask: Callable[[RollRequest], Sequence[int]] | None = None):
        if ask is not None and not callable(ask):
            raise InvalidArgument("ManualDice's ask", "a function of a roll's request giving its faces, or None", ask)
        self.ask = ask

    def faces(self, request: RollRequest) -> Sequence[int]:
        """Ask for the faces of this roll (they are validated by :func:`roll`); without ``ask``, FacesNeeded."""
        if self.ask is None:
            raise FacesNeeded([request], 0)
        given = self.ask(request)
        if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
            raise InvalidArgument("ManualDice's ask", "a sequence of faces (whole numbers) for the roll", given)
        return given

    def checkpoint(self) -> object:
        """Nothing to save: typed-in faces are not replayed."""
        return None

    def restore(self, mark: object) -> None:
        """Nothing to restore."""


class ScriptedDice:
    """A queue of faces consumed in the order of C29; running out names the roll that needed a die.

    >>> dice = ScriptedDice([4, 2])
    >>> dice.faces(RollRequest("f", 1, "check", "kael", (("check", 6),)))
    [4]
    >>> dice.remaining
    1
    """

    kind: DiceSourceKind = "scripted"

    def __init__(self, faces: Iterable[int]):
        if isinstance(faces, (str, bytes)):
            raise InvalidArgument("ScriptedDice's faces", "an iterable of faces (whole numbers), not text", faces)
        self._faces = list(expect(faces, Iterable, "ScriptedDice's faces", "an iterable of faces (whole numbers)"))
        self._pos = 0

    @property
    def remaining(self) -> int:
        """How many scripted faces are left."""
        return len(self._faces) - self._pos

    def feed(self, faces: Iterable[int]) -> None:
        """Queue more faces behind the ones left."""
        self._faces.extend(faces)

    def faces(self, request: RollRequest) -> list[int]:
        """Take the next ``len(pool)`` faces from the queue."""
        n = len(request.pool)
        if self.remaining < n:
            raise DiceExhausted(request.describe(), n, self.remaining)
        taken = self._faces[self._pos:self._pos + n]
        self._pos += n
        return taken

    def checkpoint(self) -> object:
        """The queue position, to rewind to if the command fails."""
        return self._pos

    def restore(self, mark: object) -> None:
        """Rewind the queue to a checkpoint."""
        assert isinstance(mark, int)
        self._pos = mark


class CommandFaces:
    """The faces a command carries (``dice``), consumed in the order of C29; recorded as ``kind`` (manual, or
    scripted in a scripted fight). Running out is :class:`FacesNeeded`, naming every roll so far and the one
    that found no face; :attr:`surplus` says what was left unrolled."""

    carried = True  # these faces come with the command: no change of the fight's dice source to record

    def __init__(self, faces: Sequence[int], kind: DiceSourceKind = "manual"):
        self._faces, self._pos, self.kind = list(faces), 0, kind
        self.requests: list[RollRequest] = []
        #: the dice after these faces roll from a source (:class:`FacesThenSource`): faces that stop inside a roll
        #: are said as such (a roll is typed whole or rolled whole), not as too few
        self.whole = False

    @property
    def surplus(self) -> int:
        """How many faces no roll took."""
        return len(self._faces) - self._pos

    def faces(self, request: RollRequest) -> list[int]:
        """The next ``len(pool)`` faces."""
        n = len(request.pool)
        taken = self._faces[self._pos:self._pos + n]
        for i, ((_tag, sides), face) in enumerate(zip(request.pool, taken, strict=False)):
            if type(face) is not int or not 1 <= face <= sides:  # said at its place in the command's dice, before
                raise InvalidDieFace(face, sides, request.describe(), self._pos + i)  # any count (a tester's 99)
        if len(taken) < n:
            raise FacesNeeded([*self.requests, request], len(self._faces), whole=self.whole and bool(taken))
        self.requests.append(request)
        self._pos += n
        return taken

    def checkpoint(self) -> object:
        """The position in the faces."""
        return self._pos, len(self.requests)

    def restore(self, mark: object) -> None:
        """Go back to a checkpoint."""
        assert isinstance(mark, tuple)
        self._pos, count = mark
        del self.requests[count:]


class FacesThenSource:
    """A command's faces, then a fight's own source (C29): a player types the faces of its own dice in a seeded
    fight, and the dice after them (the GM's, another player's) are the fight's to roll. Each roll is whole from
    one or the other: while faces are left it takes its faces (recorded as ``manual``; too few for it is
    :class:`FacesNeeded`), once none are left it rolls from ``then`` (recorded as that source's kind).

    ``typed`` says instead which rolls take the command's faces, wherever they come: the rolls of combatants whose
    dice are physical in a seeded fight (the others' from the seed, before and after them), or, deciding a command
    again, the rolls its batch recorded as typed."""

    def __init__(self, faces: CommandFaces, then: DiceSource, typed: Callable[[RollRequest], bool] | None = None):
        self.given, self.then, self.typed = faces, then, typed
        faces.whole = typed is None
        #: the kind of the roll last rolled, and whether it came with the command (no change of the fight's dice
        #: source to record)
        self.kind: DiceSourceKind = faces.kind
        self.carried = True

    @property
    def requests(self) -> list[RollRequest]:
        """The rolls the command's faces rolled."""
        return self.given.requests

    @property
    def surplus(self) -> int:
        """How many faces no roll took."""
        return self.given.surplus

    def faces(self, request: RollRequest) -> Sequence[int]:
        """The command's next faces for this roll while any are left, else the source's; with ``typed``, the
        command's faces for the rolls it names (too few: :class:`FacesNeeded`), the source's for the others."""
        self.carried = self.given.surplus > 0 if self.typed is None else self.typed(request)
        self.kind = self.given.kind if self.carried else self.then.kind
        return self.given.faces(request) if self.carried else self.then.faces(request)

    def checkpoint(self) -> object:
        """Both positions."""
        return self.given.checkpoint(), self.then.checkpoint(), self.kind, self.carried

    def restore(self, mark: object) -> None:
        """Go back to a checkpoint of both."""
        assert isinstance(mark, tuple)
        given, then, self.kind, self.carried = mark
        self.given.restore(given)
        self.then.restore(then)


class NoDice:
    """The source of a fight loaded without dice: a roll needs faces carried by its command; other commands
    work."""

    kind: DiceSourceKind = "manual"

    def faces(self, request: RollRequest) -> Sequence[int]:
        """Refuse: there is nothing to roll with (a command may still carry its own faces)."""
        raise FacesNeeded([request], 0)

    def checkpoint(self) -> object:
        """Nothing to save."""
        return None

    def restore(self, mark: object) -> None:
        """Nothing to restore."""


class RecordedDice:
    """The rolls a batch recorded, handed back in order with their own sources: how an audit decides a command
    again (C29 order, as it was rolled). Running out names the roll the rules call for that the log lacks."""

    def __init__(self, rolls: Iterable[DiceRolled]):
        self._rolls = list(rolls)
        self._pos = 0
        self.kind: DiceSourceKind = self._rolls[0].source if self._rolls else "manual"

    @property
    def remaining(self) -> int:
        """How many recorded rolls are left."""
        return len(self._rolls) - self._pos

    def faces(self, request: RollRequest) -> list[int]:
        """The next recorded roll's faces (its source becomes :attr:`kind` for this roll)."""
        if self._pos >= len(self._rolls):
            raise DiceExhausted(request.describe(), len(request.pool), 0)
        rolled = self._rolls[self._pos]
        self._pos += 1
        self.kind = rolled.source
        return [d.face for d in rolled.dice]

    def checkpoint(self) -> object:
        """The position in the recorded rolls."""
        return self._pos

    def restore(self, mark: object) -> None:
        """Go back to a checkpoint."""
        assert isinstance(mark, int)
        self._pos = mark


def roll(source: DiceSource, request: RollRequest, action: int | None = None) -> DiceRolled:
    """Roll ``request`` with ``source`` and return the roll event (of ``action``, if it belongs to one); invalid
    faces record nothing."""
    faces = list(source.faces(request))
    pool = request.pool
    if len(faces) != len(pool):
        raise DiceError(f"{request.describe()} needs {_faces(len(pool))}, got {len(faces)}")
    dice = tuple([_die(tag, sides, face, request) for (tag, sides), face in zip(pool, faces, strict=False)])
    return DiceRolled(counter=request.counter, purpose=request.purpose, roller=request.roller,
                      dice=dice, source=source.kind, action=action)


def _die(tag: PoolTag, sides: int, face: object, request: RollRequest) -> Die:
    if type(face) is not int or not 1 <= face <= sides:
        raise InvalidDieFace(face, sides, request.describe())
    return Die(pool=tag, sides=sides, face=face)


def seeded_faces(seed: bytes) -> Callable[[str, int, int, int], int]:
    """:func:`seeded_face` for one seed, ``(fight_id, counter, index, sides) -> face``, from the seed's HMAC pads
    hashed once (the same faces: a test holds the two to each other): how an audit checks many dice."""
    mac = _pad_mac(seed)

    def face(fight_id: str, counter: int, index: int, sides: int) -> int:
        return _first_face(mac, f"{fight_id}|{counter}|", index, sides)

    return face


def seeded_mismatches(seed: bytes, fight_id: str, rolled: DiceRolled) -> list[tuple[int, int, int]]:
    """For a seeded roll, every die whose face is not the seed's: ``(index, recorded, expected)``."""
    if rolled.source != "seeded":
        return []
    return [(i, d.face, want) for i, d in enumerate(rolled.dice)
            if d.face != (want := seeded_face(seed, fight_id, rolled.counter, i, d.sides))]
