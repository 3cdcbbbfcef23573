"""The bounds on dice that every reader checks: the largest die, the most dice of one kind, the most faces a
command may carry (rulings, docs/rulings.md "Limits"; the rules set none).

The rules allow any dN (C1) and any number of dice; an engine must not. A
d(2^64 + 1) cannot be rolled without bias by the seeded dice (a face is drawn
from 64 bits), and a pool of 10^9 dice exhausts memory. The bounds are far
above any sheet of the rules: the largest die they name is a d20, the
largest pool a handful of dice.
"""

from __future__ import annotations

__all__ = ["MAX_SIDES", "MAX_DICE", "MAX_FACES", "DIE_PATTERN"]

MAX_SIDES = 1000
"""The largest die: d1000 (C1 allows any dN, N >= 2; a face must fit a seeded draw, and a person must roll it)."""

MAX_DICE = 100
"""The most dice of one kind on a sheet or in a ruleset (a weapon's damage dice, a rage's dice): 100."""

MAX_FACES = 10_000
"""The most faces one command may carry, and the most dice one recorded roll may hold."""

DIE_PATTERN = r"^d([2-9]|[1-9][0-9]{1,2}|1000)$"
"""A die's name, d2 to d1000."""
