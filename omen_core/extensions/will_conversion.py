"""Will conversion (C31, C37): physical damage lands on Will, what exceeds the Will left on HP; always, or by choice.

The sheet's ``features.will_conversion`` is the shorthand: ``true`` converts
every hit, ``"choice"`` asks the defender hit by hit (the Will-conversion
decision point).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..hooks import Extension, Landing

if TYPE_CHECKING:
    from ..state import FightState


def _lands(state: FightState, who: str) -> Literal["will", "choice"] | None:
    feature = state.combatants[who].sheet.features.will_conversion
    return "will" if feature is True else "choice" if feature == "choice" else None


EXTENSION = Extension(id="will_conversion", name="Will conversion", keys="features.will_conversion",
                      landing=(Landing(lands=_lands),))
