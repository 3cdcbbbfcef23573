"""Deciding rerolls (C39): one die of an attack's hit roll rolled again, right after the roll or once chosen.

A reroll is a roll of one die of its own (purpose ``reroll``), naming the
roll it changes and the die; the fold puts its face on that die of the
attack's frame, keeping the old face (``rerolled``), so every number after
it is computed with the new face, and the log keeps both.
"""

from __future__ import annotations

from ..abilities import reroll_picks
from ..content import Reroll
from ..extensions import auto_rerolls
from ..state import AttackFrame
from .draft import Draft

__all__ = ["reroll_die", "auto_reroll", "chosen_reroll"]


def _frame(draft: Draft) -> AttackFrame:
    frame = draft.state.pending
    assert isinstance(frame, AttackFrame) and frame.hit_roll is not None
    return frame


def reroll_die(draft: Draft, index: int) -> None:
    """Roll die ``index`` of the attack's hit roll again (C39): a one-die roll right after the roll it changes."""
    roll = _frame(draft).hit_roll
    assert roll is not None
    die = roll.dice[index]
    draft.roll("reroll", roll.roller, [(die.pool, die.sides)], rerolls=(roll.counter, index))


def auto_reroll(draft: Draft) -> None:
    """The automatic rerolls abilities make right after the hit roll ("reroll 1s"), each die at most once (C39)."""
    handlers = auto_rerolls(draft.state)
    if not handlers:
        return
    done: set[int] = set()
    for handler in handlers:
        for index in handler.dice(draft.state, _frame(draft)):
            if index not in done:
                done.add(index)
                reroll_die(draft, index)


def chosen_reroll(draft: Draft, reroll: Reroll) -> None:
    """A reroll its owner chose (C39): the lowest die of the pool not rerolled yet (of those showing one of its
    faces, if it names any). The answer that chose it was refused if no die was left (:func:`reroll_picks`)."""
    roll = _frame(draft).hit_roll
    assert roll is not None
    picks = reroll_picks(roll.dice, (reroll,))
    assert picks is not None, "a reroll with no die left is refused before it is answered"
    reroll_die(draft, picks[0])
