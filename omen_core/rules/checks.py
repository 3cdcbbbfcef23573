"""The roll primitive, static and contested checks, and saves (rolls-and-resolution.txt; C1, C2, C15, C16).

Pure functions on integers: no dice sources, no events, no state.

>>> roll_total(face=7, attribute_bonus=2, skill_level=3, modifiers=(-1,))
11
>>> static_outcome(total=12, difficulty=12)
'tie'
>>> contest_winner(initiator_total=10, defender_total=10)
'defender'
>>> save_succeeds(saver_total=10, opposing_total=10)
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

__all__ = [
    "StaticOutcome",
    "ContestSide",
    "roll_total",
    "static_outcome",
    "contest_winner",
    "save_succeeds",
]

StaticOutcome = Literal["success", "tie", "failure"]
ContestSide = Literal["initiator", "defender"]


def roll_total(face: int, attribute_bonus: int, skill_level: int = 0,
               modifiers: Iterable[int] = ()) -> int:
    """Attribute die result + applicable bonus(es) + situational (§The Roll Primitive).

    An attribute check is the die + the attribute bonus + situational (C1);
    a skill roll adds the skill level (C2).
    """
    return face + attribute_bonus + skill_level + sum(modifiers)


def static_outcome(total: int, difficulty: int) -> StaticOutcome:
    """A static check (C16): success iff total > difficulty; a tie is recorded as a tie, not a success."""
    if total > difficulty:
        return "success"
    return "tie" if total == difficulty else "failure"


def contest_winner(initiator_total: int, defender_total: int) -> ContestSide:
    """A contested check (C16): the initiator must be strictly higher; ties favour the defender."""
    return "initiator" if initiator_total > defender_total else "defender"


def save_succeeds(saver_total: int, opposing_total: int) -> bool:
    """A save (C15, §Saves and Opposed Checks): the saver succeeds iff its total meets or exceeds."""
    return saver_total >= opposing_total
