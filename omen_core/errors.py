"""The one error root of omen and its narrow, structured subclasses.

Every error omen raises on purpose is an :class:`OmenError`. Each subclass
carries the facts a caller needs as attributes (which rule, which fight,
which file and line), and its message says what went wrong and where.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

__all__ = [
    "OmenError",
    "BadInput",
    "ContentError",
    "InvalidCommand",
    "InvalidArgument",
    "UnknownSeq",
    "NoStore",
    "KeyReused",
    "RuleViolation",
    "UnknownCombatant",
    "DiceError",
    "InvalidDieFace",
    "DiceExhausted",
    "SeedMismatch",
    "StoreError",
    "ConcurrencyError",
    "FightExists",
    "BadAppend",
    "UnknownFight",
    "StoreUnavailable",
    "InvalidFightId",
    "LogCorrupted",
    "NewerLog",
    "TornTail",
    "ChainBroken",
    "UnexpectedEvent",
]


class OmenError(Exception):
    """Root of every error omen raises on purpose.

    ``command_index``: where an error came from one command of a batch (:meth:`omen_core.engine.Fight.execute_all`),
    that command's index in it (0 the first); ``sheet_index``: where it came from the set-up's join of one of the
    sheets given to :meth:`omen_core.engine.Fight.start`, that sheet's index among them. Both None otherwise: a
    caller names the place in its own terms (``$.combatants[1].id``) from these and a rule's ``field`` fact.
    """

    command_index: int | None = None
    sheet_index: int | None = None


class BadInput(OmenError):
    """Input from outside (a file, a command, a log) is malformed; the CLI exits 2."""


class ContentError(BadInput):
    """A sheet, ruleset or scenario does not validate.

    ``source`` names the file (or ``<input>``), ``path`` the JSON path of the
    offending field, and ``line`` its line where known.
    """

    def __init__(self, source: str, path: str, reason: str, line: int | None = None):
        self.source, self.path, self.reason, self.line = source, path, reason, line
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {reason} (at {path})")


class InvalidCommand(BadInput):
    """A command whose arguments do not validate (the API checks them exactly as the JSON decoders do):
    ``command`` is its tag, ``path`` the field path, ``reason`` what is wrong."""

    def __init__(self, command: str, path: str, reason: str):
        self.command, self.path, self.reason = command, path, reason
        super().__init__(f"{command}: {reason} (at {path})")


class InvalidArgument(BadInput, TypeError):
    """A value of the wrong kind given to omen's Python API (``None`` for a store, a text for a dice source):
    ``parameter`` names it, ``expected`` says what it takes, ``given`` is the type given. Nothing was written."""

    def __init__(self, parameter: str, expected: str, given: object):
        self.parameter, self.expected, self.given = parameter, expected, type(given).__name__
        super().__init__(f"{parameter}: expected {expected}, not {self.given} ({given!r:.80})")


def expect(value: T, kinds: type | tuple[type, ...], parameter: str, expected: str) -> T:
    """``value`` if it is an instance of ``kinds``; :class:`InvalidArgument` naming ``parameter`` otherwise (the
    one check at the edge of the Python API, so that a wrong type fails there rather than deep inside)."""
    if not isinstance(value, kinds):
        raise InvalidArgument(parameter, expected, value)
    return value


class UnknownSeq(BadInput, ValueError):
    """A seq the fight's log has no event at: ``seq``, and the seqs it has, ``first`` to ``last`` (``last`` 0: no
    event yet); ``where`` names the log. Nothing was written."""

    def __init__(self, seq: int, first: int, last: int, where: str = "this log"):
        self.seq, self.first, self.last, self.where = seq, first, last, where
        held = f"seq {first} to {last}" if last >= first else "no event yet"
        super().__init__(f"{where}: no event with seq {seq} ({held})")


class NoStore(BadInput):
    """A store URL that names no store (a form omen does not know), or a store that is not there where it must be
    (a log, a database, a directory of logs, to read): ``url`` as given, ``reason`` why. Nothing was created."""

    def __init__(self, url: str, reason: str):
        self.url, self.reason = url, reason
        super().__init__(f"{url}: {reason}")


class KeyReused(BadInput):
    """An idempotency key the log already records for another command (a key names one command): ``key``, and
    the ``seq`` and ``command`` tag of the command that holds it."""

    def __init__(self, key: str, seq: int, command: str):
        self.key, self.seq, self.command = key, seq, command
        super().__init__(f"idempotency key {key!r} was given to another command at seq {seq} ({command}): a key "
                         "names one command")


class RuleViolation(OmenError):
    """A command breaks a rule; ``rule`` is the section or clarification id (e.g. ``C9``)."""

    def __init__(self, rule: str, message: str, **facts: object):
        self.rule, self.facts = rule, facts
        super().__init__(f"[{rule}] {message}")

    def field_under(self, where: str) -> str | None:
        """The path of the field the rule names (its ``field`` fact, a path in the command or the sheet refused:
        ``$.weapon``) within what holds that command or sheet at ``where`` (``$.command`` in a request,
        ``$.combatants[2]``, ``$.commands[5]``): ``$.command.weapon``; None if the rule names no field."""
        field = self.facts.get("field")
        return where + field[1:] if isinstance(field, str) and field.startswith("$") else None


def written_otherwise(given: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``given`` is but for case or Unicode normalization (``Ryu`` for ``ryu``; ``Café``
    written e + U+0301 for ``Café`` written U+00E9, as an editor on macOS may save it), or None: names are compared
    as written, code point for code point, and such a pair looks the same to a reader (a tester)."""
    def folded(text: str) -> str:
        return unicodedata.normalize("NFC", text).casefold()
    return next((k for k in known if k != given and folded(k) == folded(given)), None)


def otherwise_said(given: str, known: Iterable[str]) -> str:
    """``; did you mean 'ryu'? (...)`` for a name written otherwise than one ``known`` (:func:`written_otherwise`),
    saying how it differs; "" otherwise."""
    meant = written_otherwise(given, known)
    if meant is None:
        return ""
    how = ("the same letters in another case: names are compared as written"
           if unicodedata.normalize("NFC", meant) != unicodedata.normalize("NFC", given) else
           "the same text written with other code points (another Unicode normalization: save the file as NFC)")
    return f"; did you mean {meant!r}? ({how})"


class UnknownCombatant(RuleViolation):
    """A command names a combatant who has not joined the fight."""

    def __init__(self, combatant: str, known: list[str]):
        self.combatant, self.known = combatant, known
        names = ", ".join(known) or "none yet"
        super().__init__("setup", f"no combatant {combatant!r} in this fight (joined: {names}"
                                  f"{otherwise_said(combatant, known)})")


class DiceError(OmenError):
    """Something is wrong with the dice supplied for a roll. Where the command is written (``omen do``'s argument
    or file), :meth:`placed` names its ``source``, ``line`` and the ``path`` of its faces (``$.dice``, a face's
    ``$.dice[2]``), its kind kept (``FacesNeeded`` in ``--json``, as docs/live.md says)."""

    source: str | None = None
    path: str | None = None
    line: int | None = None

    def unplaced(self) -> str:
        """What is wrong, in words that name no place (the place is said once, by :meth:`placed`)."""
        return str(self)

    def placed(self, source: str, path: str, line: int | None, words: str | None = None) -> DiceError:
        """This refusal named where it is written: ``source:line: words (at path)`` (``words``: by default
        :meth:`unplaced`), with the ``source``, ``path`` and ``line`` the CLI's ``--json`` reports."""
        self.source, self.path, self.line = source, path, line
        where = f"{source}:{line}" if line else source
        self.args = (f"{where}: {words if words is not None else self.unplaced()} (at {path})",)
        return self


class InvalidDieFace(DiceError, BadInput):
    """A manual or scripted face is not a whole number in ``1..sides``; ``index``: its place in the command's
    ``dice`` when the command carried it (C29's order), so that the error says which face (``$.dice[2]``)."""

    def __init__(self, face: object, sides: int, roll: str, index: int | None = None, dice: str = "$.dice"):
        self.face, self.sides, self.roll, self.index = face, sides, roll, index
        at = f"at {dice}[{index}], " if index is not None else ""  # ``dice``: where the faces are (a request's)
        super().__init__(f"die face {face!r} is not possible on a d{sides} ({at}for {roll}); "
                         f"expected a whole number from 1 to {sides}")

    def unplaced(self) -> str:
        """The face, its die and its roll, its place in ``dice`` left to :meth:`placed` (said once, not twice)."""
        return (f"die face {self.face!r} is not possible on a d{self.sides} (for {self.roll}); expected a whole "
                f"number from 1 to {self.sides}")


class DiceExhausted(DiceError):
    """A scripted dice queue ran out; ``roll`` names the roll that needed a die (C29)."""

    def __init__(self, roll: str, needed: int, remaining: int):
        self.roll, self.needed, self.remaining = roll, needed, remaining
        super().__init__(f"scripted dice ran out: {roll} needs {needed} {'die' if needed == 1 else 'dice'}, "
                         f"{remaining} left in the script (order of C29)")


class SeedMismatch(DiceError):
    """A seed does not hash to the commitment the fight's seeded dice are drawn under now: a revealed one, or the
    seed of a :class:`~omen_core.dice.SeededDice` given to a fight (``given`` says which). ``spent``: the seed is
    one this fight has already revealed, public since (C42; ``rule`` is then ``"C42"``)."""

    def __init__(self, commitment: str | None, actual: str, *, given: str = "the revealed seed", spent: bool = False):
        self.commitment, self.actual, self.spent = commitment, actual, spent
        self.rule = "C42" if spent else None
        pledge = f"committed sha256 {commitment}" if commitment else "the fight has no seed commitment"
        why = (" — a seed this fight has already revealed: spent and public, no die may be drawn from it (C42); "
               "the dice roll from the fresh seed the reveal committed to" if spent else "")
        super().__init__(f"seed does not match its commitment: {pledge}, {given} hashes to {actual}{why}")


class StoreError(OmenError):
    """An event store cannot do what was asked."""


class ConcurrencyError(StoreError):
    """Optimistic concurrency: the fight moved on since the caller read it; nothing was written."""

    def __init__(self, fight_id: str, expected: int, actual: int):
        self.fight_id, self.expected, self.actual = fight_id, expected, actual
        super().__init__(f"fight {fight_id!r} is at version {actual}, not the expected "
                         f"{expected}; nothing was written (reload and try again)")


class FightExists(ConcurrencyError):
    """``Fight.start`` on a fight id the store already holds: the fight exists (open it with ``Fight.load``);
    nothing was written. A :class:`ConcurrencyError` (the fight is past version 0)."""

    def __init__(self, fight_id: str, actual: int):
        self.fight_id, self.expected, self.actual = fight_id, 0, actual
        StoreError.__init__(self, f"fight {fight_id!r} already exists (at version {actual}): open it with "
                                  "Fight.load; nothing was written")


class BadAppend(StoreError):
    """A batch handed to ``append`` does not continue the stream (wrong fight, seq or link)."""

    def __init__(self, fight_id: str, reason: str):
        self.fight_id, self.reason = fight_id, reason
        super().__init__(f"refused to append to fight {fight_id!r}: {reason}; nothing was written")


class UnknownFight(StoreError, BadInput):
    """No fight with this id is stored."""

    def __init__(self, fight_id: str, where: str):
        self.fight_id, self.where = fight_id, where
        super().__init__(f"no fight {fight_id!r} in {where}")


class StoreUnavailable(StoreError, BadInput):
    """A store's file, directory or database cannot be opened or used: ``path`` names it, ``reason`` says why
    (an operating system's words kept as they are, e.g. ``Is a directory``)."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{self.path!r}: {reason}" if "\x00" in self.path else f"{self.path}: {reason}")


class InvalidFightId(BadAppend, BadInput):
    """A fight id that is not ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}``: refused wherever it is given (``Fight.start``,
    a store's ``append``: a :class:`BadAppend` too) or reaches a place that builds a path from it (``where``)."""

    def __init__(self, fight_id: str, where: str = ""):
        self.fight_id, self.where = fight_id, where
        self.reason = f"a fight id is {_FIGHT_ID_WORDS}"
        OmenError.__init__(self, f"{fight_id!r} is not a fight id: {self.reason}; nothing was written"
                           + (f" (refused by {where})" if where else ""))


#: What a fight id is, in words (``omen_core.store.base.FIGHT_ID_WORDS``, as the stores name it).
_FIGHT_ID_WORDS = "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"


class LogCorrupted(StoreError, BadInput):
    """A stored log cannot be read as written: ``path`` and ``line`` say where."""

    def __init__(self, path: str | Path, line: int, reason: str):
        self.path, self.line, self.reason = str(path), line, reason
        super().__init__(f"{path}:{line}: {reason}")


class NewerLog(LogCorrupted):
    """A log a newer omen wrote (its first line's schema version is past this omen's): nothing in it can be read,
    or audited, here (an audit refuses it rather than reporting every line)."""


class TornTail(LogCorrupted):
    """The last line of a log file was cut off mid-write (a crash); earlier lines are intact.

    Nothing is dropped: ``omen repair`` (or ``JsonlStore.repair``) moves the
    torn bytes to a side file before anything new may be appended.
    """

    def __init__(self, path: str | Path, line: int, torn: bytes):
        self.torn = torn
        super().__init__(path, line, f"torn tail: the last line ({len(torn)} bytes) was cut off "
                                     "mid-write; earlier events are intact")


class ChainBroken(OmenError):
    """The hash chain of a log does not hold at ``seq``; ``where`` and ``line`` say where, when the log is a
    store's (its file and the line, or its database)."""

    def __init__(self, seq: int, reason: str, where: str = "", line: int | None = None):
        self.seq, self.reason, self.where, self.line = seq, reason, where, line
        at = f"{where}:{line}: " if where and line else f"{where}: " if where else ""
        super().__init__(f"{at}hash chain broken at seq {seq}: {reason}")


class UnexpectedEvent(OmenError, TypeError):
    """A stored event read as one type (``StoredEvent.as_``) holds another: ``seq`` says where, ``expected`` and
    ``actual`` name both types."""

    def __init__(self, seq: int, expected: str, actual: str):
        self.seq, self.expected, self.actual = seq, expected, actual
        super().__init__(f"the event at seq {seq} is a {actual}, not a {expected}")
