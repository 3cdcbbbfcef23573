"""Extensions' decision points in decide: open each at its hook point, take its answer and cost, resume (C38).

An extension declares its windows as rows (:mod:`omen_core.hooks`); this
module is all the engine does with them. At a hook point, :func:`open_window`
offers the first window someone may answer, to one combatant at a time (C38:
the acting combatant first, then initiative order; each decision resolves
completely before the next is offered), each window at most once per
combatant and action. :func:`answer_decision` records the answer and its cost
and closes the decision; the caller then offers the next one or resumes the
action from the hook point (``decide``'s ``RESUMES`` table).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Literal

from ..abilities import PASS, action_parties, answered, reroll_picks, unable_to_act
from ..commands import AnswerDecision
from ..decisions import legal_now
from ..errors import RuleViolation
from ..events import (
    ActionSettled,
    AttackDeclared,
    CostPaid,
    DecisionAnswered,
    DecisionClosed,
    DecisionOpened,
    MomentReached,
    Ticking,
)
from ..extensions import window, windows_at
from ..hooks import Choice, Moment, Window
from ..ledger import shortfall
from ..machine import Step
from ..state import FightState, Frame, MomentFrame
from .draft import Draft
from .effects import Context, run_consequences
from .rerolls import chosen_reroll

__all__ = ["open_window", "open_moment", "moment_known", "answer_decision", "nothing_rolled", "settle_pending",
           "settle", "Resume", "answer_context", "RESUMES", "not_offered", "cannot_pay"]

#: A hook point's row in ``decide``'s table: what is known there (its :class:`~omen_core.hooks.Moment`), and how
#: the action goes on from it once its decision points have closed.
Resume = tuple[Callable[[Draft], Moment], Callable[[Draft], None]]


def _turn_key(state: FightState, frame: Frame) -> Callable[[str], tuple[bool, int, str]]:
    """Where a combatant comes in C38's order: the acting combatant first, then the others in initiative order
    (those without a place in it last, by id)."""
    order = {c: i for i, c in enumerate(state.order)}
    return lambda c: (c != frame.actor, order.get(c, len(order)), c)


def open_window(draft: Draft, hook: str, known: Callable[[Draft], Moment]) -> bool:
    """Offer the next decision point due at ``hook``: of every window there, the combatants it may be offered to
    and has not been in this action, the first in C38's order (the acting combatant first, then initiative order;
    one combatant's several windows in the order the rows come), one at a time; True if one opened (the action
    waits on it). ``known`` gives what is known at the hook point (asked only if some window opens there)."""
    rows = windows_at(draft.state, hook)
    if not rows:
        return False
    frame = draft.state.pending
    assert frame is not None
    if isinstance(frame.declaration, AttackDeclared) and frame.declaration.reaction == "ability":
        return False  # C38: nothing a triggered ability does opens a decision point for another
    moment = known(draft)
    due: list[tuple[str, int, Window]] = []  # every (combatant, row) still to be offered, across the rows
    for index, row in enumerate(rows):
        offered = {who for d in frame.decisions if d.decision == row.kind for who in d.responders}
        due += [(w, index, row) for w in row.responders(draft.state, frame, moment)
                if w not in offered and _offerable(draft.state, w, row)]
    key = _turn_key(draft.state, frame)
    asked = [d for d in frame.decisions if d.hook == hook]
    if asked:  # C38's order is one pass: none before the one last asked here (one who could not answer then waits
        floor = key(asked[-1].responders[0])  # no second turn), its own further windows and those after it
        due = [d for d in due if key(d[0]) >= floor]
    if not due:
        return False
    who, _index, row = min(due, key=lambda d: (key(d[0]), d[1]))  # C38: the acting combatant first, then
    draft.emit(DecisionOpened(action=frame.action, decision=row.kind, hook=hook, responders=(who,),  # initiative
                              choices=tuple(c.name for c in row.choices), rule=row.rule, title=row.title,
                              labels=tuple(c.label for c in row.choices),
                              costs=tuple(c.cost.words() for c in row.choices)))
    return True


def open_moment(draft: Draft, moment: Literal["turn.start", "turn.end", "round.end", "check.resolved", "save.resolved"],
                who: str | None, *, other: str | None = None, outcome: Literal["success", "failure"] | None = None,
                condition: str | None = None, ticking: Ticking | None = None) -> bool:
    """A moment outside any other action that abilities answer (C38: a turn's start or end, the round's end, a
    check resolved, ``other`` the contest's other side and ``outcome`` ``who``'s; a save-ends save resolved as
    ``condition`` ticked, ``other`` its applier and ``ticking`` where the tick goes on, C40): if some combatant's
    triggered ability may be used now, the moment is recorded as an action of its own (``moment_reached``) and
    its first decision point offered; True if so (the turn, the round, the tick or the fight waits on it).
    Otherwise nothing is recorded."""
    rows = windows_at(draft.state, moment)
    if not rows:
        return False
    event = MomentReached(action=draft.next_seq, moment=moment, round=draft.state.round, who=who, other=other,
                          outcome=outcome, condition=condition, ticking=ticking)
    would = MomentFrame(action=event.action, declared_at=event.action, step=Step.MOMENT, declaration=event)
    known = moment_known(event)
    if not any(_offerable(draft.state, w, row) for row in rows for w in row.responders(draft.state, would, known)):
        return False
    draft.emit(event)
    opened = open_window(draft, moment, lambda _draft: known)
    assert opened, f"the moment {moment} was recorded for a decision point that did not open"
    return True


def moment_known(reached: MomentReached) -> Moment:
    """What is known at a moment outside any other action: nothing rolled matters to what answers it, but at a
    save-ends save's ``save.resolved``, whether the saver succeeded (C15)."""
    if reached.moment == "save.resolved":
        return Moment(attack_total=0, defense_total=0, saved=reached.outcome == "success")
    return _NOTHING_ROLLED


#: What is known at a hook point where nothing is rolled (a move, a moment of the round): no attack, no save.
_NOTHING_ROLLED = Moment(attack_total=0, defense_total=0)


def nothing_rolled(_draft: Draft) -> Moment:
    """What is known at a hook point where nothing is rolled: no attack, no save."""
    return _NOTHING_ROLLED


def settle_pending(draft: Draft) -> None:
    """The action in progress settles (its decision points closed, nothing of it left to do)."""
    frame = draft.state.pending
    assert frame is not None
    draft.emit(ActionSettled(action=frame.action))


def settle(draft: Draft) -> None:
    """The action in progress has done everything else: if it applied a condition, the decision points due at the
    hook point ``condition.applied`` are offered first (C38); then it settles."""
    frame = draft.state.pending
    assert frame is not None
    if frame.applied and open_window(draft, "condition.applied", nothing_rolled):
        return
    settle_pending(draft)


#: The hook point every action with a condition applied passes before it settles: what it knows (nothing rolled
#: matters to it), and how the action goes on once its decision points have closed.
RESUMES: dict[str, Resume] = {"condition.applied": (nothing_rolled, settle)}


def _offerable(state: FightState, who: str, row: Window) -> bool:
    """Whether ``row`` may be offered to ``who``: able to act (C10, C36) and able to pay for some choice (C38)."""
    return not_offered(state, who, row) is None


def not_offered(state: FightState, who: str, row: Window) -> str | None:
    """Why ``row`` may not be offered to ``who`` whatever its trigger says: out of the fight (C33), at 0 HP, Dying
    (C36), Incapacitated or
    Paralysed (C10), or unable to pay for any choice besides passing (C38: the first choice's shortfall); None if
    it may."""
    return unable_to_act(state, who) or cannot_pay(state, who, row)


def cannot_pay(state: FightState, who: str, row: Window) -> str | None:
    """Why ``who`` can pay for no choice of ``row`` besides passing (C38: the first choice's shortfall, C20, C22,
    C36, C41), or None if it can pay for one."""
    short = [choice_shortfall(state, who, c) for c in row.choices if c.name != PASS]
    return None if any(s is None for s in short) else next((s for s in short if s is not None), None)


def choice_shortfall(state: FightState, who: str, choice: Choice) -> str | None:
    """Why ``who`` may not make ``choice`` now (None: it may): it cannot pay its cost (:func:`shortfall`), or it
    pays Bonus Actions before ``who``'s first turn, when they are for defence only (C20, §The First Round), for a
    choice that acts on another (its consequences, the dice it rerolls, the attack it makes) rather than through a
    total's terms alone (an extension's Spite dealt 2 fire before its owner's first turn, where the same ability
    written as data is not offered: a maintainer)."""
    short = shortfall(state, who, choice.cost)
    if short is not None or not choice.cost.bonus_actions or state.round == 0 or state.had_a_turn(who):
        return short
    if choice.consequences or choice.rerolls or choice.attack is not None:
        return f"{who}'s first turn has not come yet: its Bonus Actions are for defence only until then (C20)"
    return None


def answer_decision(draft: Draft, cmd: AnswerDecision) -> str | None:
    """Record ``cmd``'s answer to the open decision point and pay its cost (C22); the hook point to go on from if
    that closed it (every responder answered, or a closing choice), else None."""
    draft.require("decide", rule="C38", why="no decision point is open")
    frame = draft.state.pending
    opened = frame.decision if frame is not None else None
    if frame is None or opened is None:
        raise RuleViolation("C38", f"no decision point is open; legal now: {'; '.join(legal_now(draft.state))}")
    if cmd.decision != opened.decision:
        raise RuleViolation(opened.rule, f"the open decision point is {opened.decision!r}, not {cmd.decision!r}")
    row = window(opened.decision, draft.state)
    if row is None:
        raise RuleViolation(opened.rule, f"no extension declares the decision point {opened.decision!r}")
    waiting = [w for w in opened.responders if w not in frame.answered_decision(opened)]
    if cmd.who not in waiting:
        raise RuleViolation(opened.rule, f"{row.title} is {' or '.join(waiting)}'s to answer, not {cmd.who}'s")
    choice = row.choice(cmd.choice)
    if choice is None:  # the choices sorted, and a close one named (docs/content.md: as a field of fixed values)
        names = sorted(c.name for c in row.choices)
        close = difflib.get_close_matches(cmd.choice, names, n=1)
        raise RuleViolation(opened.rule, f"{row.title} has no choice {cmd.choice!r} (choices: {', '.join(names)})"
                            + (f"; did you mean {close[0]!r}?" if close else ""), field="$.choice")
    why = choice_shortfall(draft.state, cmd.who, choice)
    if why is not None:
        raise RuleViolation(opened.rule, f"{row.title}, {cmd.choice}: {why}")
    hit_roll = getattr(frame, "hit_roll", None)
    if choice.rerolls and (hit_roll is None or reroll_picks(hit_roll.dice, choice.rerolls) is None):
        raise RuleViolation("C39", f"{row.title}, {cmd.choice}: no die of the hit roll is left that it could roll "
                                   "again (a die is rerolled once; of its pool, showing one of the faces it names)")
    draft.emit(DecisionAnswered(action=opened.action, decision=opened.decision, who=cmd.who, choice=cmd.choice,
                                label=choice.label))
    for resource, amount in choice.cost.entries():
        draft.emit(CostPaid(action=opened.action, who=cmd.who, resource=resource,  # type: ignore[arg-type]
                            amount=amount, purpose=f"{row.title} ({cmd.choice})"))
    if choice.closes or len(waiting) == 1:
        draft.emit(DecisionClosed(action=opened.action, decision=opened.decision, responders=opened.responders))
        for reroll in choice.rerolls:  # the dice it rolls again (C39), before anything else it does
            chosen_reroll(draft, reroll)
        if choice.consequences:  # what the choice does at once, now that the decision has closed (C25)
            run_consequences(draft, answer_context(frame, cmd.who, row.title, row, draft.state), choice.consequences,
                             offer_will=False)
        return opened.hook
    return None


def answer_context(frame: Frame, who: str, source: str, row: Window | None = None, state: FightState | None = None
                   ) -> Context:
    """The consequences of ``who``'s answer: its actor, and its target the one the decision row names (``row``'s
    ``target``, read in ``state``), else the other party of the action (the attack's target if ``who`` is the
    attacker, else the attacker)."""
    if row is not None and row.target is not None and state is not None:
        return Context(action=frame.action, actor=who, target=row.target(state, frame, who), spell=False,
                       source=source)
    acting, target = action_parties(frame.declaration) if answered(frame.declaration) else (frame.actor, frame.actor)
    other = target if who == acting else acting
    return Context(action=frame.action, actor=who, target=other, spell=False, source=source)
