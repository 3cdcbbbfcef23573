"""The decision points: every place a fight waits for someone to choose, declared once, as data.

A decision point says where the fight waits (the lifecycle step, or outside
any action), which event opened it and where the frame keeps it, who may
answer, with which commands (and the lifecycle trigger each answer fires),
every answer each responder could give (``candidates``, which ``options()``
decides one by one), what answering costs, which rule governs it, and how the
action goes on. The
machine's window transitions (:mod:`omen_core.machine`), the engine's
``waiting_for`` and ``options()`` (:mod:`omen_core.options`) all read these
rows: adding a window means a row here, its rule in ``decide``, and its tests.

>>> list(dict.fromkeys(point.kind for point in DECISION_POINTS))
['active_defense', 'interrupt', 'attack_of_opportunity', 'catch', 'routing', 'will_conversion', 'initiative_tie']
>>> point_at("WINDOW_OPEN", None).rule
'C8'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .abilities import USE
from .commands import (
    AgreeInitiative,
    AnswerActiveDefense,
    AnswerCatch,
    AnswerDecision,
    ChooseWillConversion,
    CommandBase,
    PassReaction,
    React,
    RollOff,
    RouteDamage,
)
from .content import ApplyCondition, ClearCondition, DealDamage, Deferred, Heal, Ruleset
from .events import DecisionOpened
from .extensions import ATTACK_OPTION_FIELDS, attack_option_offered
from .hooks import HOOK_POINTS

__all__ = ["Answer", "DecisionPoint", "DECISION_POINTS", "REACTION_STEPS", "point_at", "waiting_point", "legal_now",
           "OPTIONS_HINT", "transitions", "arms", "attack_variants", "extension_point", "deferred_words"]


@dataclass(frozen=True)
class Answer:
    """One way to answer a decision point: the command, the lifecycle trigger its first event fires, and the
    step that leads to (None: the step stays, as when one responder of several passes)."""

    command: type[CommandBase]
    trigger: str
    to: str | None
    label: str
    free: bool = False
    argument: tuple[str, str] | None = None  # an argument the candidates only sample: (name, what it takes)


def _bonus(amount: Callable[[Ruleset], int]) -> Callable[[Ruleset], str]:
    def cost(ruleset: Ruleset) -> str:
        n = amount(ruleset)
        return f"{n} Bonus Action{'s' if n != 1 else ''}"
    return cost


@dataclass(frozen=True)
class DecisionPoint:
    """A place where a fight waits (see the module doc).

    ``step`` is the lifecycle step it waits at (None: outside any action),
    ``opened_by`` the trigger and the steps it opens from, ``window`` the field
    of the action's frame that holds the event that opened it, ``reaction`` the
    kind of reaction window it is (Interrupt and Attack of Opportunity share a
    step), ``responders`` who may answer, read off that event, and
    ``candidates`` every answer a responder could give (``(state, responder)``;
    responder None where one answer settles it for all, as an initiative tie),
    of which ``options()`` offers those the rules accept. ``cancellable``: the
    GM's ``cancel_action`` may call the action off while it waits here (ending
    the fight calls off any action, C33). ``closes_to``: the step a reaction
    window's closing goes to (where the action goes on).
    """

    kind: str
    title: str
    rule: str
    step: str | None
    opened_by: tuple[str, tuple[str, ...]] | None
    window: str | None
    answers: tuple[Answer, ...]
    cost: Callable[[Ruleset], str]
    responders: Callable[[Any], tuple[str, ...]]
    resumes: str
    candidates: Callable[[Any, str | None], Sequence[CommandBase]]
    reaction: str | None = None
    cancellable: bool = True
    closes_to: str | None = None


#: The argument a reaction's strike leaves free, as ``declare_attack`` does (C26, C27: they apply to any attack).
SITUATIONAL = ("situational", "claimed situational modifiers: {high_ground: bool, encircled: {attackers, defenders}} "
                              "(C26, C27)")


def arms(state: Any, who: str, melee_only: bool = False) -> list[dict[str, Any]]:
    """What ``who`` may attack with now, as command arguments: each weapon in hand and each spell (C35; melee
    only for a reaction's basic melee attack, C23, C24), and unarmed."""
    fighter = state.combatants[who]
    held = [w for w in fighter.sheet.weapons if w.id in fighter.wielding or "spell" in w.properties]
    out: list[dict[str, Any]] = [{"weapon": w.id} for w in held if not (melee_only and "ranged" in w.properties)]
    return [*out, {"unarmed": True}]


def attack_variants(state: Any, who: str) -> list[dict[str, Any]]:
    """The ways ``who`` may set the attack options the extensions give meaning to (Brute Rage's ``rage``): none set,
    then each one ``who`` is offered set on its own."""
    return [{}, *({field: True} for field in ATTACK_OPTION_FIELDS if attack_option_offered(state, who, field))]


def _defenses(state: Any, who: str | None) -> list[CommandBase]:
    assert who is not None
    parries = [None, *(a["weapon"] for a in arms(state, who) if "weapon" in a)]
    return [AnswerActiveDefense(defender=who, defense=None), AnswerActiveDefense(defender=who, defense="dodge"),
            AnswerActiveDefense(defender=who, defense="block"),
            *(AnswerActiveDefense(defender=who, defense="parry", weapon=w) for w in parries)]


def _reactions(state: Any, who: str | None) -> list[CommandBase]:
    assert who is not None
    return [PassReaction(who=who), *(React(who=who, **a) for a in arms(state, who, melee_only=True))]


def _routes(state: Any, who: str | None) -> list[CommandBase]:
    assert who is not None
    routing = getattr(state.pending, "routing", None)
    size = len(routing.dice) if routing is not None else 0
    return [RouteDamage(attacker=who, die=d) for d in (None, *range(size))]


def _orders(state: Any, who: str | None) -> list[CommandBase]:
    """Two orders for tied allies (the tie as rolled, and reversed) and the roll-off: any order of them is the
    ``order`` argument (checked when given), so none of the n! orders is made here (12 allies would be 479
    million)."""
    tied = tuple(state.tie_open)
    return [*(AgreeInitiative(order=order) for order in dict.fromkeys((tied, tied[::-1]))), RollOff()]


def _interrupt(step: str, opened_from: tuple[str, ...], closes_to: str, then: str) -> DecisionPoint:
    """The Interrupt window (C24) at one lifecycle step: opened from ``opened_from``, going on at ``closes_to``
    once every responder answered, where ``then`` happens; an Interrupt that hits cancels the Action instead."""
    return DecisionPoint(
        kind="interrupt", title="Interrupt", rule="C24", step=step,
        opened_by=("open_reactions", opened_from), window="reaction_window", reaction="interrupt",
        answers=(Answer(React, "nest", None, "strike (a melee attack)", argument=SITUATIONAL),
                 Answer(PassReaction, "pass_reaction", None, "let it pass", free=True)),
        cost=_bonus(lambda r: r.reaction_costs.interrupt),
        responders=lambda opened: tuple(opened.responders),
        resumes=f"once every responder has answered, {then}; an Interrupt that hits cancels it, its Action still "
                "spent",
        candidates=_reactions, closes_to=closes_to)


DECISION_POINTS: tuple[DecisionPoint, ...] = (
    DecisionPoint(
        kind="active_defense", title="Active Defense", rule="C8", step="WINDOW_OPEN",
        opened_by=("open_window", ("BASE_DEFENSE_ROLLED",)), window="window",
        answers=(Answer(AnswerActiveDefense, "choose_defense", "DEFENSE_CHOSEN", "Dodge, Parry or Block"),
                 Answer(AnswerActiveDefense, "decline", "WINDOW_CLOSED", "decline (defense left out)")),
        cost=_bonus(lambda r: r.reaction_costs.active_defense),
        responders=lambda opened: (opened.defender,),
        resumes="the Active Defense die is rolled (if one was chosen), then hit and crit are determined and the "
                "damage resolved",
        candidates=_defenses),
    _interrupt("REACTIONS_OPEN", ("DECLARED", "COSTS_PAID"), "REACTIONS_CLOSED",
               "the declared Action pays its cost and goes on"),
    # an ability used on one's turn for an Action (C37) is an Action declared, as an attack is (C24)
    _interrupt("ABILITY_REACTIONS_OPEN", ("ABILITY_USED",), "ABILITY_USED",
               "the ability pays its costs and does what it does"),
    DecisionPoint(
        kind="attack_of_opportunity", title="Attack of Opportunity", rule="C23", step="REACTIONS_OPEN",
        opened_by=("open_reactions", ("DECLARED", "COSTS_PAID")), window="reaction_window",
        reaction="attack_of_opportunity",
        answers=(Answer(React, "nest", None, "strike (a basic melee attack)", argument=SITUATIONAL),
                 Answer(PassReaction, "pass_reaction", None, "let it pass", free=True)),
        cost=_bonus(lambda r: r.reaction_costs.attack_of_opportunity),
        responders=lambda opened: tuple(opened.responders),
        resumes="once every responder has answered, the movement completes",
        candidates=_reactions, closes_to="REACTIONS_CLOSED"),
    DecisionPoint(
        kind="catch", title="Catch", rule="C22", step="CATCH_OPEN",
        opened_by=("open_catch", ("HIT_DETERMINED", "DAMAGE_RESOLVED")), window="catch_window",  # after an
        # ability's damage at attack.determined (C38) too, as the Will conversion and routing rows
        answers=(Answer(AnswerCatch, "catch", "CAUGHT", "catch it (no damage, no on-hit effects)"),
                 Answer(AnswerCatch, "decline_catch", "HIT_DETERMINED", "let it hit")),
        cost=_bonus(lambda r: r.reaction_costs.catch),
        responders=lambda opened: (opened.target,),
        resumes="a caught item settles the attack; one let through deals its damage",
        candidates=lambda state, who: [AnswerCatch(who=str(who), catch=c) for c in (True, False)]),
    DecisionPoint(
        kind="routing", title="Rogue routing", rule="C12", step="ROUTING_OPEN",
        opened_by=("open_routing", ("HIT_DETERMINED", "DAMAGE_RESOLVED")), window="routing",
        answers=(Answer(RouteDamage, "route", "HIT_DETERMINED", "choose the die that feeds damage"),),
        cost=lambda r: "free",
        responders=lambda opened: (opened.attacker,),
        resumes="the damage is resolved with the chosen die",
        candidates=_routes),
    DecisionPoint(
        kind="will_conversion", title="Will conversion", rule="C31", step="WILL_CHOICE_OPEN",
        opened_by=("offer_will_conversion", ("HIT_DETERMINED", "DAMAGE_RESOLVED", "SAVE_RESOLVED")),
        window="will_offer",
        answers=(Answer(ChooseWillConversion, "choose_will_conversion", "WILL_CHOSEN",
                        "convert to Will (what exceeds it goes to HP), or take it on HP"),),
        cost=lambda r: "free",
        responders=lambda opened: (opened.who,),
        resumes="the damage lands where chosen, then the action's remaining consequences follow in order (C25)",
        candidates=lambda state, who: [ChooseWillConversion(who=str(who), convert=c) for c in (True, False)],
        cancellable=False),
    DecisionPoint(
        kind="initiative_tie", title="an initiative tie among allies", rule="C19", step=None, opened_by=None,
        window=None,
        answers=(Answer(AgreeInitiative, "flow", None, "agree an order",
                        argument=("order", "any order of the tied allies (the choices list two), each once")),
                 Answer(RollOff, "flow", None, "roll off after all")),
        cost=lambda r: "free",
        responders=tuple,
        resumes="the initiative order is set and round 1 begins",
        candidates=_orders),
)


#: The lifecycle steps where an action waits on a reaction window (an Interrupt, an Attack of Opportunity).
REACTION_STEPS: frozenset[str] = frozenset(p.step for p in DECISION_POINTS if p.reaction is not None and p.step)


def point_at(step: str | None, reaction: str | None) -> DecisionPoint | None:
    """The decision point waiting at lifecycle step ``step`` (a reaction window also by its ``reaction``)."""
    for point in DECISION_POINTS:
        if point.step == step and point.step is not None and point.reaction in (None, reaction):
            return point
    return None


def deferred_words(deferred: Deferred, whose: str = "", *, current: bool = False) -> str:
    """A deferred cost in words (C41): what settles on the owner, and at which moment of its next turn (``whose``:
    the owner, to name; ``current``: that next turn has begun, so it is the turn under way).

    >>> deferred_words(Deferred(at="end_of_next_turn", effects=(ApplyCondition(to="actor", condition="Fatigued"),)))
    'Fatigued at the end of next turn (C41)'
    >>> burn = DealDamage(to="actor", flat=3, damage_type="arcane")
    >>> deferred_words(Deferred(at="start_of_next_turn", effects=(burn,)), "cy")
    "3 arcane damage at the start of cy's next turn (C41)"
    >>> deferred_words(Deferred(at="end_of_next_turn", effects=(burn,)), "cy", current=True)
    "3 arcane damage at the end of cy's current turn (C41)"
    """
    said = []
    for effect in deferred.effects:
        match effect:
            case DealDamage() | Heal():
                dice = f"{effect.dice.count}{effect.dice.die}" if effect.dice is not None else ""
                amount = "+".join(x for x in (dice, str(effect.flat) if effect.flat or not dice else "") if x)
                said.append(f"{amount} {effect.damage_type} damage" + (", halved" if effect.half else "")
                            if isinstance(effect, DealDamage) else f"{amount} HP healed")
            case ApplyCondition(condition=condition, stacks=stacks):
                said.append(condition + (f" x{stacks}" if stacks > 1 else ""))
            case ClearCondition(condition=condition):
                said.append(f"{condition} cleared")
    moment = "start" if deferred.at == "start_of_next_turn" else "end"
    owner = f"{whose}'s " if whose else ""
    return f"{' and '.join(said)} at the {moment} of {owner}{'current' if current else 'next'} turn (C41)"


def extension_point(opened: DecisionOpened, step: str, deferred: Deferred | None = None) -> DecisionPoint:
    """An extension's decision point (:mod:`omen_core.hooks`), open at lifecycle step ``step``, as its
    ``decision_opened`` event describes it: answered with ``answer_decision``, its cost per choice, going on from
    its hook point when it closes. ``deferred``: the deferred cost its ``use`` records (C41), said with that
    choice's cost (the event records only what is paid now)."""
    owed = {USE: f"now; {deferred_words(deferred)}"} if deferred is not None else {}
    costs = ", ".join(f"{name}: {cost or 'free'}" + (f" {owed[name]}" if name in owed else "")
                      for name, cost in zip(opened.choices, opened.costs, strict=False))
    labels = "; ".join(f"{name} ({label})" for name, label in zip(opened.choices, opened.labels, strict=False))
    return DecisionPoint(
        kind=opened.decision, title=opened.title or opened.decision, rule=opened.rule, step=step, opened_by=None,
        window="decision", answers=(Answer(AnswerDecision, "decide", None, labels or ", ".join(opened.choices)),),
        cost=lambda r: costs or "free", responders=lambda event: tuple(event.responders),
        resumes=HOOK_POINTS[opened.hook].then if opened.hook in HOOK_POINTS else "the action goes on",
        candidates=lambda state, who: [AnswerDecision(decision=opened.decision, who=str(who), choice=c)
                                       for c in opened.choices],
        cancellable=True)


def waiting_point(state: Any) -> tuple[DecisionPoint, tuple[str, ...], int | None] | None:
    """The decision point the fight waits on, who may still answer it, and the action it belongs to."""
    if state.tie_open:
        tie = next(p for p in DECISION_POINTS if p.kind == "initiative_tie")
        return tie, tuple(state.tie_open), None
    frame = state.pending
    if frame is None:
        return None
    opened_here = frame.decision
    if opened_here is not None:
        who = tuple(w for w in opened_here.responders if w not in frame.answered_decision(opened_here))
        ability = next((a for a in state.abilities if a.id == opened_here.decision), None)
        return (extension_point(opened_here, frame.step.name, ability.deferred if ability is not None else None), who,
                frame.action)
    opened = frame.reaction_window if frame.step.name in REACTION_STEPS else None
    point = point_at(frame.step.name, opened.reaction if opened is not None else None)
    if point is None or point.window is None:
        return None
    event = getattr(frame, point.window, None)
    if event is None:
        return None
    answered = frame.answered if point.reaction is not None else frozenset()  # who passed or reacted, there
    who = tuple(w for w in point.responders(event) if w not in answered)
    return point, who, frame.action


#: Where a refusal sends its reader for what is accepted now (the server says its own way: GET /options).
OPTIONS_HINT = "omen status, or Fight.options(), lists every command accepted now"


def legal_now(state: Any) -> list[str]:
    """What may be answered now, in command words: the open decision's answer commands and who gives them,
    then what the GM may do instead (how a refusal says "legal now", the same words as ``options()``)."""
    found = waiting_point(state)
    if found is None:
        return [f"no decision is open ({OPTIONS_HINT})"]
    point, who, _action = found
    tags = dict.fromkeys(str(a.command.__struct_config__.tag) for a in point.answers)
    by = f" by {', '.join(who)}" if who and point.step is not None else ""
    legal = [f"{' or '.join(tags)}{by} ({point.title}, {point.rule})"]
    if point.step is not None and point.cancellable and len(state.stack) <= 1:  # a reaction's window: the reaction
        legal.append("the GM's cancel_action")  # is finished or undone first (as options() offers it, a tester)
    return [*legal, "the GM's end_fight or undo"]


def transitions() -> list[dict[str, Any]]:
    """The lifecycle transitions the decision points declare: each opening, each answer, and the GM's cancel
    from the step each waits at (the GM's ``cancel_action`` is refused where a point is not ``cancellable``,
    but ending the fight calls off any action, C33). Rows shared by two points (Interrupt and Attack
    of Opportunity) come once."""
    rows: list[dict[str, Any]] = []
    for point in DECISION_POINTS:
        if point.step is None or point.opened_by is None:
            continue
        trigger, sources = point.opened_by
        rows.append({"trigger": trigger, "source": list(sources), "dest": point.step})
        rows += [{"trigger": a.trigger, "source": point.step, "dest": a.to or "="} for a in point.answers]
        rows.append({"trigger": "cancel", "source": point.step, "dest": "CANCELLED"})
        if point.closes_to is not None:
            rows.append({"trigger": "close_reactions", "source": point.step, "dest": point.closes_to})
    unique: list[dict[str, Any]] = []
    for row in rows:
        if row not in unique:
            unique.append(row)
    return unique
