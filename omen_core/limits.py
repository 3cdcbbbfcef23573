"""The bounds on dice that every reader checks: the largest die, the most dice of one kind, the most faces a
command may carry (rulings, docs/rulings.md "Limits"; the rules set none).

The rules allow any dN (C1) and any number of dice; an engine must not. A
d(2^64 + 1) cannot be rolled without bias by the seeded dice (a face is drawn
from 64 bits), and a pool of 10^9 dice exhausts memory. The bounds are far
above any sheet of the rules: the largest die they name is a d20, the
largest pool a handful of dice.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["MAX_SIDES", "MAX_DICE", "MAX_FACES", "MAX_ROLL_OFFS", "MAX_LISTED", "DIE_PATTERN", "MAX_WHOLE",
           "beyond_whole", "first_leaf"]

MAX_SIDES = 1000
"""The largest die: d1000 (C1 allows any dN, N >= 2; a face must fit a seeded draw, and a person must roll it)."""

MAX_DICE = 100
"""The most dice of one kind on a sheet or in a ruleset (a weapon's damage dice, a rage's dice): 100."""

MAX_FACES = 10_000
"""The most faces one command may carry, and the most dice one recorded roll may hold."""

MAX_ROLL_OFFS = 100
"""The most roll-offs one command may make (C19, C32: tied foes roll off until the tie breaks): a dice source
that gives tied foes the same faces every time (a program answering every roll with one face) would make them
roll off forever; at this bound the command is refused and nothing is written. Fair dice tie 100 times running
with a probability far below one in 10^100."""

MAX_LISTED = 12
"""The most other combatants ``options()`` lists for one actor's command that names one (an attack's target, a
contest's or a save's other side, an engagement, a move's leaving): each listed is probed, so a fight of N
combatants costs N times this many probes, not N squared. The combatants not listed are said in the offer's note
(any of them may still be named: the rules check it when the command is given). The most orders an initiative
tie among allies offers is 2 (the tie as rolled, and reversed): any order of them is a command argument."""

DIE_PATTERN = r"^d([2-9]|[1-9][0-9]{1,2}|1000)$(?!\n)"
"""A die's name, d2 to d1000, matched whole (every pattern of omen's ends ``$(?!\n)``: msgspec searches with
Python's ``re``, where ``$`` alone also matches before a final newline; ECMAScript reads it the same way)."""

MAX_WHOLE = 2**53 - 1
"""The largest whole number a command may hold, either sign: 9,007,199,254,740,991, the largest that every JSON
reader holds exactly (I-JSON, RFC 7493; a JavaScript number): a log is read by tools in any language. Far above
any number of the rules (an HP total, a difficulty, a stack count, a seq)."""


def first_leaf(value: object, test: Callable[[object], bool], path: str = "$") -> tuple[str, object] | None:
    """The path and value of the first leaf of ``value`` (decoded JSON or TOML: dicts, lists, scalars), in
    document order, that ``test`` picks; None if none does. Keys are named (``$.a.b``), indexes bracketed."""
    if not isinstance(value, dict | list):
        return (path, value) if test(value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        found = first_leaf(item, test, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}")
        if found is not None:
            return found
    return None


def beyond_whole(value: object, path: str = "$") -> str | None:
    """The path of the first whole number in ``value`` (decoded JSON) beyond ±:data:`MAX_WHOLE`, or None."""
    found = first_leaf(value, lambda v: type(v) is int and abs(v) > MAX_WHOLE, path)
    return None if found is None else found[0]
