"""Deciding reaction windows: who may Interrupt (C24) or make an Attack of Opportunity (C23), movement, passing.

A reaction is an action of its own, nested in the action it answers; the
window stays open until every responder has reacted or passed (or an
Interrupt has hit), and the fight cannot move on while it is open.
"""

from __future__ import annotations

from ..commands import Move, PassReaction, StandUp
from ..decisions import REACTION_STEPS, legal_now
from ..errors import RuleViolation
from ..events import (
    ConditionCleared,
    CostPaid,
    Moved,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowClosed,
    ReactionWindowOpened,
)
from ..hooks import Cost
from ..ledger import shortfall
from ..machine import Phase
from ..state import FightState, MoveFrame
from .draft import Draft, require_turn
from .windows import Resume, nothing_rolled, open_window, settle_pending

__all__ = ["open_interrupts", "move", "stand_up", "STOOD_UP", "finish_move", "pass_reaction", "reaction_window",
           "close_window"]


def _enemies(state: FightState, who: str, among: list[str]) -> list[str]:
    side = state.combatants[who].side
    return [w for w in among if state.combatants[w].side != side]


def _can_strike(state: FightState, who: str, cost: int) -> bool:
    """Whether ``who`` may answer with an attack (an Interrupt or an Attack of Opportunity): able to act (not
    Incapacitated or Paralysed, C10, nor at 0 HP, C36), with the Bonus Actions, and past the start of its first
    turn, since before it they are for defence only (C20, §The First Round: "available to use defensively before
    their first turn")."""
    fighter = state.combatants[who]
    return not fighter.helpless and not fighter.out and fighter.bonus_actions >= cost and state.had_a_turn(who)


def open_interrupts(draft: Draft, actor: str) -> bool:
    """C24: when an Action is declared in the rounds, each adjacent enemy with 2 Bonus Actions gets a window
    before its costs are paid. Returns whether a window opened."""
    state = draft.state
    if state.phase is not Phase.ROUNDS:
        return False
    cost = draft.ruleset.reaction_costs.interrupt
    responders = tuple(w for w in _enemies(state, actor, state.engaged_with(actor)) if _can_strike(state, w, cost))
    if not responders:
        return False
    assert state.pending is not None
    draft.emit(ReactionWindowOpened(action=state.pending.action, reaction="interrupt", responders=responders))
    return True


def move(draft: Draft, cmd: Move) -> None:
    """A Movement Action (C20); leaving an enemy's reach opens an Attack of Opportunity window for each such
    enemy able to react, unless the mover Disengaged earlier this turn (C23)."""
    draft.able(cmd.who, "move")  # C33, C36 before the step and the turn: the refusal names them
    draft.require("declare")
    require_turn(draft, cmd.who, "move")
    state = draft.state
    if state.phase is Phase.ROUNDS and state.turn_movement < 1:
        raise RuleViolation("C20", f"{cmd.who!r} has no Movement Action left this turn (1 per turn)")
    for other in cmd.leaves:
        draft.combatant(other)
        if other == cmd.who:
            raise RuleViolation("C23", f"{cmd.who!r} cannot leave its own reach: leaves names the others whose reach "
                                       "it leaves")
        if not state.engaged(cmd.who, other):
            raise RuleViolation("C23", f"{cmd.who!r} is not within {other}'s reach, so cannot leave it")
    action = draft.next_seq
    draft.emit(MovementDeclared(action=action, who=cmd.who, leaves=cmd.leaves))
    draft.emit(CostPaid(action=action, who=cmd.who, resource="movement_action", amount=1, purpose="movement"))
    cost = draft.ruleset.reaction_costs.attack_of_opportunity
    responders = () if draft.state.disengaged else tuple(
        w for w in _enemies(draft.state, cmd.who, list(cmd.leaves)) if _can_strike(draft.state, w, cost))
    if responders:
        draft.emit(ReactionWindowOpened(action=action, reaction="attack_of_opportunity", responders=responders))
        return
    finish_move(draft)


#: Why standing up clears Prone: the core ruleset's ``cleared_by`` for Prone (docs/rulings.md).
STOOD_UP = "stood up (a Movement Action)"


def stand_up(draft: Draft, cmd: StandUp) -> None:
    """A Prone combatant able to act (C10, C33, C36) stands up, between actions: the core ruleset's Prone is cleared
    by "standing up (a Movement Action)". In the rounds, on its own turn, it is its Movement Action (C20), paid
    through the ledger as a movement that leaves no one's reach (so no Attack of Opportunity, C23); outside the
    rounds it is free, as drawing is, and belongs to no action."""
    fighter = draft.able(cmd.who, "stand up")
    draft.require("declare", why="standing up is taken between actions")
    require_turn(draft, cmd.who, "stand up")
    if not fighter.prone:
        raise RuleViolation("C28", f"{cmd.who!r} is not Prone: there is nothing to stand up from (standing up clears "
                                   "Prone)")
    if draft.state.phase is not Phase.ROUNDS:
        draft.emit(ConditionCleared(action=None, who=cmd.who, condition="Prone",
                                    reason="stood up (free outside the rounds)"))
        return
    short = shortfall(draft.state, cmd.who, Cost(movement=1))
    if short is not None:
        raise RuleViolation("C20", f"standing up is a Movement Action: {short}")
    action = draft.next_seq
    draft.emit(MovementDeclared(action=action, who=cmd.who))
    draft.emit(CostPaid(action=action, who=cmd.who, resource="movement_action", amount=1, purpose="standing up"))
    draft.emit(Moved(action=action, who=cmd.who))
    draft.emit(ConditionCleared(action=action, who=cmd.who, condition="Prone", reason=STOOD_UP))
    settle_pending(draft)


def finish_move(draft: Draft) -> None:
    """The movement completes: the mover leaves the reach it said it would leave; the decision points due at the
    hook point ``move.left`` are offered (C38: an enemy leaving reach), then the move settles."""
    frame = draft.state.pending
    assert isinstance(frame, MoveFrame)
    decl = frame.declaration
    draft.emit(Moved(action=decl.action, who=decl.who, left=decl.leaves))
    if decl.leaves and open_window(draft, "move.left", nothing_rolled):
        return
    settle_pending(draft)


#: The hook point of a move: what it knows, and how the move goes on once its decision points have closed.
RESUMES: dict[str, Resume] = {"move.left": (nothing_rolled, settle_pending)}


def _window(draft: Draft, who: str, rule: str) -> ReactionWindowOpened:
    """The open reaction window ``who`` may answer, or a RuleViolation saying why not."""
    frame = draft.state.pending
    opened = frame.reaction_window if frame is not None else None
    if frame is None or opened is None or draft.state.step.name not in REACTION_STEPS:
        outer = next((f for f in reversed(draft.state.stack) if f.reaction_window is not None
                      and who in f.reaction_window.responders and who not in f.answered), None)
        why = "no reaction window is open"
        if outer is not None and outer.reaction_window is not None:  # asked, but an action inside it goes first
            interrupt = outer.reaction_window.reaction == "interrupt"
            rule = "C24" if interrupt else "C23"
            why = (f"{who!r} answers the {'Interrupt' if interrupt else 'Attack of Opportunity'} window after the "
                   "action in progress inside it")
        raise RuleViolation(rule, f"{why}; legal now: {'; '.join(legal_now(draft.state))}")
    now = f"legal now: {'; '.join(legal_now(draft.state))}"
    if who not in opened.responders:
        raise RuleViolation(rule, f"{who!r} may not answer this window (responders: {', '.join(opened.responders)})")
    if who in frame.answered:
        raise RuleViolation(rule, f"{who!r} has already answered this window; {now}")
    return opened


def pass_reaction(draft: Draft, cmd: PassReaction) -> None:
    """A responder lets the window pass."""
    opened = reaction_window(draft, cmd.who)
    draft.emit(ReactionPassed(action=opened.action, who=cmd.who))


def reaction_window(draft: Draft, who: str) -> ReactionWindowOpened:
    """The window a React command answers (rule C24 for Interrupts, C23 for Attacks of Opportunity)."""
    frame = draft.state.pending
    opened = frame.reaction_window if frame is not None else None
    return _window(draft, who, "C24" if opened and opened.reaction == "interrupt" else "C23")


def close_window(draft: Draft) -> None:
    """Close the innermost action's reaction window."""
    assert draft.state.pending is not None
    draft.emit(ReactionWindowClosed(action=draft.state.pending.action))
