"""An error of ``omen`` as data: what ``--json`` prints on standard output, ``--log-format json`` on standard error."""

from __future__ import annotations

import re

import msgspec

from omen_core.dice import FacesNeeded, NeededDie, needed_dice
from omen_core.errors import ContentError, InvalidCommand, OmenError, RuleViolation

__all__ = ["ErrorFacts", "ErrorReport", "facts_of"]

#: A rule's id as an error's words lead with it: ``[C37] ``, ``[§Your Turn] ``, ``[setup] `` (after a lead such as
#: ``the rules refuse this combatant: ``).
_RULE_IN_WORDS = re.compile(r"^(?:[^\[]*: )?\[([^\]\s][^\]]*)\] ")


class ErrorFacts(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One refusal or failure of a command, as its one line on standard error says it, in fields: what kind of
    error, its words, the exit code, and where known the rule it breaks, the field, the file and line it is at,
    and what the command had written before it failed (exit 3)."""

    kind: str
    """The error's class (``RuleViolation``, ``ContentError``, ``FacesNeeded``, ``ConcurrencyError``...;
    ``BadInput`` for any other refusal of bad input, ``UsageError`` for a command line that does not parse,
    ``OutputFailed`` where standard output could not be written, ``Interrupted`` for a Ctrl-C, exit 130)."""
    message: str
    """The words of the one line on standard error, without its ``omen: error: ``."""
    exit: int
    """The exit code: 1 a lost race (nothing written: run it again), 2 refused (nothing written), 3 written, the
    report lost (``written`` says what)."""
    rule: str | None = None
    """The rule it breaks (``C8``, ``§Your Turn``), where it names one."""
    field: str | None = None
    """The JSON path of the field at fault in what was given (``$.dice[0]``, ``$.weapon``, ``$.conditions.Q``)."""
    file: str | None = None
    """The file it is in (a scenario, a sheet, a log, a command given with ``--file``; ``the command`` for one
    given as an argument or on standard input)."""
    line: int | None = None
    """The line of that file the field is written on (of a log: the line at fault)."""
    seq: int | None = None
    """The seq of the event it is about (a broken chain's, a seq the log has no event at, a key's command)."""
    written: str | None = None
    """What the command had written before it failed (exit 3): ``the command appended at seq 12 to 18 ...``."""
    needed_dice: tuple[NeededDie, ...] | None = None
    """``FacesNeeded``: the dice whose faces the command still needs, one at a time in C29 order (whose roll, what
    for, its pool and sides), as the server's problem gives them (a client had to read them out of ``message``)."""


class ErrorReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``omen <command> --json`` prints on standard output when the command fails: ``{"error": {...}}``."""

    error: ErrorFacts


def facts_of(message: str, code: int, error: OmenError | None = None, written: str = "",
             kind: str | None = None) -> ErrorFacts:
    """The facts of an error whose line says ``message`` and whose exit code is ``code``: from the exception where
    there is one (its rule, and the field, file, line and seq it names: a content or scenario error's ``source``,
    ``path`` and ``line``, a log's ``path`` and ``line``, a broken chain's ``where``, ``line`` and ``seq``); ``kind``
    names one without an exception (``UsageError``, ``OutputFailed``)."""
    rule = getattr(error, "rule", None)
    path = getattr(error, "path", None)
    field = path if isinstance(path, str) and path.startswith("$") else None
    file = getattr(error, "source", None) or getattr(error, "where", None) or (path if field is None else None)
    line, seq = getattr(error, "line", None), getattr(error, "seq", None)
    if isinstance(error, ContentError):
        named = _RULE_IN_WORDS.search(error.reason)  # a refusal placed where it is written: its rule in its words
        rule = rule or (named[1] if named else None)
    elif isinstance(error, InvalidCommand):
        field = error.path
    elif isinstance(error, RuleViolation):
        field = error.field_under("$")
    return ErrorFacts(kind=kind or (type(error).__name__ if error is not None else "BadInput"), message=message,
                      exit=code, rule=rule if isinstance(rule, str) and rule else None, field=field,
                      file=file if isinstance(file, str) and file else None,
                      line=line if isinstance(line, int) and not isinstance(line, bool) else None,
                      seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None, written=written or None,
                      needed_dice=needed_dice(error.needed) if isinstance(error, FacesNeeded) else None)
