"""Ambush difficulty and surprise tiers (combat.txt §Determine Ambush; C17, C18).

>>> ambush_difficulty([9, 14, 12], "under_a_minute")     # lowest 9 + 2
11
>>> ambush_difficulty([9, 14, 12], "one_to_two_minutes")  # average 11.67 rounded down + 3
14
>>> ambush_difficulty([9, 14, 12], "three_minutes_or_more")  # highest 14 + 4
18
>>> surprise_tier(roll=10, difficulty=15)   # the text's own example: Complete Surprise
'complete'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = ["TimeWaited", "SurpriseTier", "TIME_WAITED", "ambush_difficulty", "surprise_tier", "band",
           "PARTIAL_SURPRISE_INITIATIVE", "TIER_WORDS", "tier_range", "DIFFICULTY_RULES"]

TimeWaited = Literal["under_a_minute", "one_to_two_minutes", "three_minutes_or_more"]
SurpriseTier = Literal["alert", "partial", "complete"]

TIME_WAITED: tuple[TimeWaited, ...] = ("under_a_minute", "one_to_two_minutes", "three_minutes_or_more")

#: C18: a Partially Surprised character takes −5 to its Initiative Roll.
PARTIAL_SURPRISE_INITIATIVE = -5


def band(minutes: float) -> TimeWaited:
    """C30: the time-waited band of a number of minutes; the bands have no gap: under 1 minute; from 1 up to, not
    including, 3; 3 or more.

    >>> band(0.5), band(1), band(2.99), band(3)
    ('under_a_minute', 'one_to_two_minutes', 'one_to_two_minutes', 'three_minutes_or_more')
    """
    if minutes < 1:
        return "under_a_minute"
    return "one_to_two_minutes" if minutes < 3 else "three_minutes_or_more"


def ambush_difficulty(stealth_rolls: Sequence[int], time_waited: TimeWaited) -> int:
    """C17: less than a minute, lowest + 2; 1–2 minutes, average (rounded down) + 3; 3+ minutes, highest + 4."""
    if not stealth_rolls:
        raise ValueError("an ambush needs at least one ambusher's Stealth roll")
    match time_waited:
        case "under_a_minute":
            return min(stealth_rolls) + 2
        case "one_to_two_minutes":
            return sum(stealth_rolls) // len(stealth_rolls) + 3
        case "three_minutes_or_more":
            return max(stealth_rolls) + 4
    raise ValueError(f"unknown time waited {time_waited!r}")


def surprise_tier(roll: int, difficulty: int) -> SurpriseTier:
    """C18: roll > D is Alert; D − 4 ≤ roll ≤ D is Partial Surprise; roll ≤ D − 5 is Complete Surprise."""
    if roll > difficulty:
        return "alert"
    return "partial" if roll >= difficulty - 4 else "complete"


#: A surprise tier in the rules' words (C18).
TIER_WORDS: dict[str, str] = {"alert": "Alert", "partial": "Partial Surprise", "complete": "Complete Surprise"}

#: How each time-waited band sets the Ambush Difficulty (C17): from which Stealth roll, plus how much, in words.
DIFFICULTY_RULES: dict[str, tuple[str, int, str]] = {
    "under_a_minute": ("the lowest Stealth roll", 2, "under a minute"),
    "one_to_two_minutes": ("the average Stealth roll, rounded down", 3, "1 to 2 minutes"),
    "three_minutes_or_more": ("the highest Stealth roll", 4, "3 minutes or more"),
}


def tier_range(tier: str, difficulty: int) -> str:
    """The Perception rolls that give ``tier`` at ``difficulty`` (C18), in words.

    >>> tier_range("alert", 15), tier_range("partial", 15), tier_range("complete", 15)
    ('above 15', 'in 11 to 15', 'at 10 or less')
    """
    return {"alert": f"above {difficulty}", "partial": f"in {difficulty - 4} to {difficulty}",
            "complete": f"at {difficulty - 5} or less"}.get(tier, "")
