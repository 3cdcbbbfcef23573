"""The bounds on dice that every reader checks: the largest die, the most dice of one kind, the most faces a
command may carry (rulings, docs/rulings.md "Limits"; the rules set none); and what a command's JSON, and a log's,
must be to read the same in every language (I-JSON: whole numbers within 2**53 - 1, each name once in an object).

The rules allow any dN (C1) and any number of dice; an engine must not. A
d(2^64 + 1) cannot be rolled without bias by the seeded dice (a face is drawn
from 64 bits), and a pool of 10^9 dice exhausts memory. The bounds are far
above any sheet of the rules: the largest die they name is a d20, the
largest pool a handful of dice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

__all__ = ["MAX_SIDES", "MAX_DICE", "MAX_MULTIPLY", "MAX_DAMAGE_MODIFIER", "MAX_FACES", "MAX_ROLL_OFFS", "MAX_LISTED",
           "DIE_PATTERN", "MAX_WHOLE", "beyond_whole", "digit_run", "first_leaf", "named_twice", "bound_wholes",
           "json_error_words"]

MAX_SIDES = 1000
"""The largest die: d1000 (C1 allows any dN, N >= 2; a face must fit a seeded draw, and a person must roll it)."""

MAX_DICE = 100
"""The most dice of one kind on a sheet or in a ruleset (a weapon's damage dice, a rage's dice): 100."""

MAX_MULTIPLY = 1000
"""The largest incoming-damage multiplier a sheet may write (C13 step 5, C34): 1000, far above any of the rules'
(a vulnerability's 2, a resistance's 1/2). A sheet that multiplied by 1e300 was taken, and the first hit on its
combatant made a damage total no log can hold: every answer to that attack was refused (a tester)."""

MAX_DAMAGE_MODIFIER = 1000
"""The largest damage modifier an attack may be given, either way (C12): 1000, far above any of the rules' numbers,
as :data:`MAX_MULTIPLY` is (a GM's form took 1e9 and dealt it: a tester)."""

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
any number of the rules (an HP total, a difficulty, a stack count, a seq). It bounds what a log records too: the
totals made of numbers within it (sums; products such as stacks times a per-stack modifier) may pass it, and a
command whose events would record one is refused (``omen_core.engine``)."""


#: Every digit made a ``9`` and any other byte an ``x`` (``bytes.translate``): 16 digits in a row are then sixteen
#: ``9``s, found by a plain search, many times faster than a pattern (3 us a stored line).
_DIGITS = bytes(0x39 if 0x30 <= b <= 0x39 else 0x78 for b in range(256))
_SIXTEEN = b"9" * 16  # MAX_WHOLE has 16 digits: a shorter run is within it


def digit_run(data: bytes) -> bool:
    """Whether ``data`` holds 16 digits in a row: perhaps a whole number past :data:`MAX_WHOLE` (a run may also be
    in a string: read the JSON to know); none, and no whole number in it passes the bound.

    >>> digit_run(b'{"hp": 9007199254740991}'), digit_run(b'{"hp": 900719925474099}')
    (True, False)
    """
    return _SIXTEEN in data.translate(_DIGITS)


def bound_wholes(schema: object) -> None:
    """Bound every integer of a JSON Schema (in place) to ±:data:`MAX_WHOLE` where it states no bound of its own on
    that side, so the documents say what the decoders take: a command or sheet holding a number past it is refused.

    >>> doc = {"properties": {"hp": {"type": "integer", "minimum": 0}, "to": {"type": ["integer", "null"]}}}
    >>> bound_wholes(doc); doc["properties"]["hp"], doc["properties"]["to"]["minimum"]
    ({'type': 'integer', 'minimum': 0, 'maximum': 9007199254740991}, -9007199254740991)
    """
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
            if "minimum" not in schema and "exclusiveMinimum" not in schema:
                schema["minimum"] = -MAX_WHOLE
            if "maximum" not in schema and "exclusiveMaximum" not in schema:
                schema["maximum"] = MAX_WHOLE
        for value in schema.values():
            bound_wholes(value)
    elif isinstance(schema, list):
        for value in schema:
            bound_wholes(value)


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


class _Members(dict[str, object]):
    """An object's members as JSON gave them, and the first name it gave twice (``None``: each name once)."""

    twice: str | None = None


def _members(pairs: list[tuple[str, object]]) -> _Members:
    members = _Members(pairs)
    if len(members) < len(pairs):
        seen: set[str] = set()
        for name, _value in pairs:
            if name in seen:
                members.twice = name
                break
            seen.add(name)
    return members


def named_twice(text: str | bytes) -> str | None:
    """The path of the first member of a JSON object whose name the object gives twice (``$.command.who``), or
    None. Such a document is no I-JSON (RFC 7493: names are unique): readers disagree on which value counts (the
    first, the last, an error), so a command or a request holding one is refused rather than read one way. Outer
    objects are looked at before inner ones. A text that is not JSON is None here (its decoder says why).

    >>> named_twice('{"command": "end_turn", "who": "kael", "who": "vesh"}')
    '$.who'
    >>> named_twice('{"combatants": [{"id": "a"}, {"id": "b", "hp": 1, "hp": 2}]}')
    '$.combatants[1].hp'
    >>> named_twice('{"a": {"b": 1}, "c": [{"b": 2}]}') is None
    True
    """
    try:
        value = json.loads(text, object_pairs_hook=_members)
    except (ValueError, RecursionError):
        return None
    return _first_twice(value, "$")


def _first_twice(value: object, path: str) -> str | None:
    if isinstance(value, _Members):
        if value.twice is not None:
            return f"{path}.{value.twice}"
        items: Iterable[tuple[str, object]] = ((f"{path}.{key}", item) for key, item in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{n}]", item) for n, item in enumerate(value))
    else:
        return None
    for where, item in items:
        found = _first_twice(item, where)
        if found is not None:
            return found
    return None


_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                        rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def json_error_words(message: str, data: bytes | str) -> str:
    """msgspec's words for JSON it could not read, made plain where they mislead: a lone surrogate escape
    (``\\ud800`` with no other half: half of a character, which no JSON text may name alone, I-JSON) reads
    "Input data was truncated" there."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    found = _SURROGATE.search(raw) if "truncated" in message or "surrogate" in message else None
    if found is None:
        return message
    return (f"{found.group().decode()} at byte {found.start()} is half of a surrogate pair, with no other half: a "
            "\\u escape must name a whole character")
