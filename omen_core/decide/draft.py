"""The Draft: a command's events in the making, each folded by the one ``evolve`` as it is emitted.

Every decision function writes through a :class:`Draft`. Each emitted event
is folded into the draft's state at the seq it will be stored at, by
:func:`omen_core.state.evolve`, which checks its order against the tables
derived from the lifecycle and phase machines: an out-of-order event is
impossible, and later steps see earlier ones (roll counters, Bonus Actions
spent, the frame of the action in progress). Nothing reaches the store until
the whole command has been decided, and the engine keeps the draft's state:
each event is folded once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

import msgspec

from ..content import CombatantSheet, Ruleset
from ..decisions import OPTIONS_HINT, legal_now, waiting_point
from ..dice import DiceSource, RollRequest, roll
from ..errors import RuleViolation, UnknownCombatant
from ..events import DiceRolled, DiceSourceChanged, Event, PoolTag, RollPurpose
from ..limits import MAX_FACES
from ..machine import ORDER, PHASE_ORDER, IllegalOrder, OutOfPhase, Phase, Step, legal_triggers
from ..state import CombatantState, FightState, condition_adjustment, effective_bonus, evolve, redoable

__all__ = ["Draft", "condition_adjustment", "effective_bonus", "helplessness", "require_turn"]

E = TypeVar("E", bound=Event)


class Draft:
    """A command's events in the making, with the state they lead to (``state``, at seq ``last_seq``)."""

    #: The command being decided (its tag), for refusals.
    command: str = ""

    def __init__(self, state: FightState, dice: DiceSource):
        self.state, self.dice = state, dice
        self.events: list[Event] = []
        self.batch = state.version + 1

    @property
    def next_seq(self) -> int:
        """The seq the next emitted event will be stored at."""
        return self.batch + len(self.events)

    @property
    def ruleset(self) -> Ruleset:
        """The fight's ruleset (set by its first event)."""
        if self.state.ruleset is None:
            raise RuleViolation("setup", "the fight has not started: start it first")
        return self.state.ruleset

    def require(self, trigger: str, rule: str = "lifecycle", why: str = "", reaction: bool = False) -> None:
        """Refuse the command unless ``trigger`` is legal now; name the step and the legal next steps.

        A new action (``declare``) is legal at rest; a ``reaction`` may also be
        declared nested in an action waiting at its reaction window.
        """
        step = self.state.step
        wanted = "nest" if trigger == "declare" and not self.state.at_rest and reaction else trigger
        if (step, wanted) not in ORDER:
            raise IllegalOrder(step, trigger, legal_triggers(step), rule=rule, why=why, command=self.command,
                               legal_now=legal_now(self.state))

    def require_phase(self, trigger: str) -> None:
        """Refuse the command unless the fight's phase allows ``trigger``; name the phase and what is legal."""
        if (self.state.phase, trigger) not in PHASE_ORDER:
            raise OutOfPhase(self.state.phase, trigger, without=not_now(self.state), waiting=self._waiting())

    def _waiting(self) -> list[str] | None:
        """What answers the decision waiting outside any action (an initiative tie among allies, C19), in the words
        of :func:`~omen_core.decisions.legal_now`; None when none waits."""
        return legal_now(self.state) if waiting_point(self.state) is not None else None

    def emit(self, event: E) -> E:
        """Add an event: fold it into the state at its seq (which checks its order), then keep it. An event out
        of order refuses the command in command words (no seq: nothing was written)."""
        try:
            self.state = evolve(self.state, event, self.batch + len(self.events), self.batch)
        except OutOfPhase as exc:
            raise OutOfPhase(exc.phase, exc.trigger, without=not_now(self.state), waiting=self._waiting()) from None
        except IllegalOrder as exc:
            raise IllegalOrder(exc.step, exc.trigger, exc.legal, rule=exc.rule, why=exc.why, command=self.command,
                               legal_now=legal_now(self.state)) from None
        self.events.append(event)
        return event

    def record(self, event: E) -> E:
        """Add an undo marker: it is not folded (the walk applies markers, :func:`omen_core.walk.after_marker`)."""
        self.events.append(event)
        return event

    def roll(self, purpose: RollPurpose, roller: str, pool: Iterable[tuple[PoolTag, int]],
             rerolls: tuple[int, int] | None = None, origins: tuple[str, ...] = (), about: str = "") -> DiceRolled:
        """Roll a pool (in C29 order) with the fight's dice source and emit the roll, tagged with its action.

        A source of another kind than the fight's current one (the GM typing
        in physical dice in a seeded fight, say) is recorded first, as a
        ``dice_source_changed`` event: dice are never relabelled silently.
        Faces the command carries need no such event: its ``command_issued``
        records them. ``about``: what the roll is for, in words, where its purpose alone does not say (C40:
        ``Burning damage``), for whoever is asked for its faces (:class:`~omen_core.dice.RollRequest`).
        """
        state = self.state
        request = RollRequest(state.fight_id, state.rolls + 1, purpose, roller, tuple(pool), about)
        if len(request.pool) > MAX_FACES:  # a roll past the bound would be a line no reader decodes
            raise RuleViolation("limits", f"{roller}'s {purpose.replace('_', ' ')} would roll "
                                          f"{len(request.pool):,} dice: more than the {MAX_FACES:,} one roll may "
                                          "hold (docs/rulings.md, \"Limits on dice\")")
        stack = state.stack
        rolled = roll(self.dice, request, stack[-1].action if stack else None)
        if rerolls is not None:  # a reroll (C39): which roll, and which of its dice
            rolled = msgspec.structs.replace(rolled, rerolls=rerolls[0], die=rerolls[1])
        if any(origins):  # the ability that added each die, where one did (C39)
            rolled = msgspec.structs.replace(rolled, dice=tuple(
                msgspec.structs.replace(d, origin=o or None) for d, o in zip(rolled.dice, origins, strict=True)))
        mode = state.dice_mode
        if mode is not None and rolled.source != mode and not getattr(self.dice, "carried", False):
            self.emit(DiceSourceChanged(before=mode, after=rolled.source, reason="the dice source given"))
        return self.emit(rolled)

    def combatant(self, who: str) -> CombatantState:
        """A joined combatant, or :class:`UnknownCombatant`."""
        try:
            return self.state.combatants[who]
        except KeyError:
            raise UnknownCombatant(who, list(self.state.combatants)) from None

    def present(self, who: str, what: str) -> CombatantState:
        """A joined combatant still in the fight; one that fled, yielded or died cannot ``what`` (C33)."""
        fighter = self.combatant(who)
        if fighter.left is not None:
            gone = "is dead" if fighter.left == "dead" else f"has {fighter.left}"
            raise RuleViolation("C33", f"{who!r} {gone} and is out of the fight: it cannot {what}")
        return fighter

    def able(self, who: str, what: str, *, incapacitated: bool = True) -> CombatantState:
        """A combatant in the fight (:meth:`present`) able to act: not at 0 HP (Dying, treated as Incapacitated:
        C36), and, when ``incapacitated``, not Incapacitated or Paralysed (C10); else a refusal naming why it
        cannot ``what``. Only ending the turn passes ``incapacitated=False``: C36 reads "treated as Incapacitated
        (C10)" as taking no action, reaction or ability use (a move, a draw, Disengage, a check and starting a
        contest are refused too), but an Incapacitated or Paralysed combatant's turn still comes (its conditions
        tick, C40) and it ends it; one at 0 HP takes no turn at all."""
        fighter = self.present(who, what)
        why = helplessness(fighter)
        if why is not None and (incapacitated or fighter.dying):
            raise RuleViolation(why[0], f"{who!r} {why[1]} and cannot {what}")
        return fighter

    def sheet(self, who: str) -> CombatantSheet:
        """A joined combatant's sheet."""
        return self.combatant(who).sheet

    @property
    def at_step(self) -> Step:
        """The lifecycle step of the innermost action in progress."""
        return self.state.step


def require_turn(draft: Draft, who: str, what: str) -> None:
    """In the rounds phase, only the turn's owner may act on its turn (§Your Turn)."""
    draft.combatant(who)
    state = draft.state
    if state.phase is Phase.ROUNDS and state.turn != who:
        now = f"it is {state.turn}'s turn" if state.turn is not None else "no one's turn has begun"
        hint = (f"legal now: {'; '.join(legal_now(state))}" if waiting_point(state) is not None
                else f"{state.turn} acts now ({OPTIONS_HINT})" if state.turn is not None else OPTIONS_HINT)
        raise RuleViolation("§Your Turn", f"{who!r} cannot {what}: {now} (round {state.round}); {hint}")


def helplessness(fighter: CombatantState) -> tuple[str, str] | None:
    """Why ``fighter`` can take no action, reaction or ability use and rolls no base defense die, as its rule and
    words (``is at 0 HP, Dying: treated as Incapacitated``), or None if it can act. At 0 HP is named first (C36):
    it holds whatever conditions the combatant has besides."""
    if fighter.dying:
        return "C36", "is at 0 HP, Dying: treated as Incapacitated"
    if fighter.helpless:
        return "C10", "is incapacitated or paralysed"
    return None


def not_now(state: FightState) -> tuple[str, ...]:
    """What a phase refusal does not offer: ``"reveal"`` when the fight has no seed left to reveal, ``"undo"`` when
    nothing can be undone or redone (every command is before a revealed seed, C42, or there is none)."""
    reveal = () if state.seed_commitment is not None and state.revealed_seed is None else ("reveal",)
    undoable = state.undo_point >= max(state.undo_floor, 1) or redoable(state) is not None
    return reveal + (() if undoable else ("undo",))
