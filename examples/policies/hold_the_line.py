"""An example policy for ``omen simulate`` (docs/simulate.md): hold the line.

Each combatant of the side attacks the enemy in sight that looks healthiest (the biggest threat) with a weapon,
lets every Interrupt and Attack of Opportunity pass (keeping its Bonus Actions for defense), and defends only when
the odds of turning the hit into a miss are at least one in two.

Run it for one side of an encounter:

    omen simulate examples/encounters/ember-ford-2v2.toml --policy wardens=examples/policies/hold_the_line.py:HoldTheLine
"""  # noqa: E501 (the command line above is copied whole)

from __future__ import annotations

from fractions import Fraction

from omen_core.commands import AnswerActiveDefense, Command, DeclareAttack, EndTurn, PassReaction
from omen_replay.simulate.policies import Aggressive, Decision, best_defense, enemies_in_sight


class HoldTheLine:
    """A policy: a ``name`` and ``decide(decision) -> Command`` (omen_replay.simulate.policies.Policy)."""

    name = "hold-the-line"

    def decide(self, decision: Decision) -> Command:
        if decision.kind == "active_defense":
            best = best_defense(decision)
            if best is not None and best[1] >= Fraction(1, 2):
                return best[0]
            return next(c for c in decision.choices if isinstance(c, AnswerActiveDefense) and c.defense is None)
        if decision.kind in ("interrupt", "attack_of_opportunity"):
            return next(c for c in decision.choices if isinstance(c, PassReaction))
        if decision.kind != "turn":
            return Aggressive().decide(decision)  # catch, routing, Will: as the built-in does
        attacks = [c for c in decision.choices if isinstance(c, DeclareAttack)]
        for foe in reversed(enemies_in_sight(decision)):  # the healthiest-looking first
            on_it = [c for c in attacks if c.target == foe.id and not c.unarmed]
            if on_it:
                return on_it[0]
        return next(c for c in decision.choices if isinstance(c, EndTurn))
