"""The commands one combatant may give now, read off the state: exactly what ``options()`` offers it, without probing.

``options()`` finds what the rules accept by deciding every candidate command with probing dice (several runs a
command): right for a table, a few milliseconds a head, too slow for a policy choosing thousands of times a
second. :func:`legal_commands` builds the same candidates the same way (``arms``, each decision point's
``candidates``, the same order) and keeps those the rules accept, judged by the refusals the handlers in
:mod:`omen_core.decide` make, read as predicates on the state: whose turn it is, the step of the action in
progress and the phase (the lifecycle and phase tables of :mod:`omen_core.machine`), what is left of the turn,
Bonus Actions, who is out of the fight or helpless, gear in hand, the defenses allowed (C9).

It restates those refusals, so it is held to ``options()``: a property test (tests/replay/simulate/test_moves.py)
compares the two, choice for choice and in order, at every state of random fights and of simulated ones, for every
combatant. Only a player's commands are listed (:data:`omen_core.seats.PLAYER_COMMANDS`): the GM's (an
initiative tie, positions, conditions, the end) are the simulator's, not a policy's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omen_core.abilities import ON_TURN, on_turn_cost, target_refusal, uses_left
from omen_core.commands import (
    AnswerActiveDefense,
    AnswerCatch,
    AnswerDecision,
    ChooseWillConversion,
    Command,
    CommandBase,
    DeclareAttack,
    Disengage,
    Draw,
    EndTurn,
    Move,
    PassReaction,
    React,
    RouteDamage,
    StandUp,
    UseAbility,
)
from omen_core.content import Save
from omen_core.decisions import arms, attack_variants, waiting_point
from omen_core.derive import defense_ineligibility
from omen_core.extensions import window
from omen_core.ledger import shortfall
from omen_core.machine import ORDER, PHASE_ORDER, Phase
from omen_core.options import listed_others
from omen_core.rules.attack import attack_kind, is_ranged
from omen_core.state import AttackFrame, FightState

__all__ = ["legal_commands"]


def legal_commands(state: FightState, who: str) -> list[Command]:
    """Every command ``who`` may give in ``state`` (a player's commands only), in the order ``options()`` lists
    them: the answers to the open decision, then attacks, moves, standing up, Disengage, draws and ending the
    turn."""
    if not state.started or state.ending is not None or who not in state.combatants:
        return []
    return [*_answers(state, who), *_attacks(state, who), *_turn(state, who)]


# -- answers to the open decision ---------------------------------------------------------------------------------


def _answers(state: FightState, who: str) -> list[Command]:
    found = waiting_point(state)
    if found is None:
        return []
    point, responders, _action = found
    if point.step is None or who not in responders:  # an initiative tie is the GM's to settle
        return []
    return [c for c in point.candidates(state, who) if _ACCEPTS[type(c)](state, c)]  # type: ignore[misc]


def _defense_allowed(state: FightState, cmd: AnswerActiveDefense) -> bool:
    """C8, C9: declining is always allowed; a defense unless the table of §Which Defenses Apply refuses it."""
    frame = state.pending
    assert isinstance(frame, AttackFrame)
    return cmd.defense is None or defense_ineligibility(state, frame.declaration, cmd.defense, cmd.weapon) is None


def _reaction_allowed(state: FightState, cmd: React) -> bool:
    """C22-C24: a responder with the Bonus Actions the reaction costs, able to act, strikes the one acting (in the
    fight, not itself); its weapon is one in hand (``arms``), melee (C23, C24)."""
    frame = state.pending
    assert frame is not None and frame.reaction_window is not None and state.ruleset is not None
    costs = state.ruleset.reaction_costs
    cost = costs.interrupt if frame.reaction_window.reaction == "interrupt" else costs.attack_of_opportunity
    me, target = state.combatants[cmd.who], state.combatants.get(frame.actor)
    return (me.bonus_actions >= cost and me.left is None and not me.helpless and target is not None
            and target.left is None and cmd.who != frame.actor)


def _always(_state: FightState, _cmd: Any) -> bool:
    """Every candidate the decision point lists for a responder still to answer is accepted (pass, catch or not,
    route a die of the pool, convert or not)."""
    return True


def _decision_allowed(state: FightState, cmd: AnswerDecision) -> bool:
    """An answer to an extension's decision point (C38): one of its row's choices the responder can pay (C22)."""
    row = window(cmd.decision, state)
    choice = row.choice(cmd.choice) if row is not None else None
    return choice is not None and shortfall(state, cmd.who, choice.cost) is None


_ACCEPTS: dict[type[CommandBase], Callable[[FightState, Any], bool]] = {
    AnswerActiveDefense: _defense_allowed,
    React: _reaction_allowed,
    PassReaction: _always,
    AnswerCatch: _always,
    RouteDamage: _always,
    ChooseWillConversion: _always,
    AnswerDecision: _decision_allowed,
}


# -- a turn's own commands ---------------------------------------------------------------------------------------


def _at(state: FightState, trigger: str, phase_trigger: str) -> bool:
    """The innermost action's step takes ``trigger`` and the fight's phase ``phase_trigger`` (the machine's tables)."""
    return (state.step, trigger) in ORDER and (state.phase, phase_trigger) in PHASE_ORDER


def _turn_is(state: FightState, who: str) -> bool:
    """§Your Turn: in the rounds only the turn's owner acts (before them, anyone: the GM resolves single actions)."""
    return state.phase is not Phase.ROUNDS or state.turn == who


def _attacks(state: FightState, who: str) -> list[Command]:
    """C20, C33, C10, C36: a new action at rest, on one's turn with its Action left, by one in the fight and able to
    act (not at 0 HP, Incapacitated or Paralysed), on another in the fight; each weapon in hand or spell, unarmed,
    with and without rage dice."""
    me = state.combatants[who]
    rounds = state.phase is Phase.ROUNDS
    if (not _at(state, "declare", "act") or not _turn_is(state, who) or (rounds and state.turn_actions < 1)
            or me.left is not None or me.helpless):
        return []
    variants = attack_variants(state, who)
    closes_in = not (rounds and state.turn_movement < 1)  # docs/rulings.md: closing in is movement (C20)
    return [DeclareAttack(attacker=who, target=target, **arm, **variant)
            for target, foe in state.combatants.items() if target != who and foe.left is None
            for arm in arms(state, who) if closes_in or state.engaged(who, target) or _ranged(state, who, arm)
            for variant in variants]


def _ranged(state: FightState, who: str, arm: dict[str, Any]) -> bool:
    """Whether the attack ``arm`` names (a weapon or a spell; unarmed is melee) is ranged (C4): made from afar, it
    needs no closing in."""
    weapon = state.combatants[who].sheet.weapon(arm["weapon"]) if "weapon" in arm else None
    return weapon is not None and is_ranged(attack_kind(weapon.properties))


def _turn(state: FightState, who: str) -> list[Command]:
    """C20-C23, C35: moving, standing up, Disengage, drawing and ending the turn, by one in the fight (C33) and not
    at 0 HP (C36: Dying, treated as Incapacitated, it takes no turn and no action); an Incapacitated or Paralysed
    combatant takes no action either (C10, C36), and only ends its turn."""
    me = state.combatants[who]
    if me.left is not None or me.dying or not _turn_is(state, who):
        return []
    assert state.ruleset is not None
    rounds = state.phase is Phase.ROUNDS
    out: list[Command] = []
    if me.helpless:
        return [EndTurn(who=who)] if rounds and (state.step, "flow") in ORDER else []
    if _at(state, "declare", "act") and not (rounds and state.turn_movement < 1):  # C20, C23
        out += [Move(who=who), *(Move(who=who, leaves=(other,)) for other in state.engaged_with(who))]
    if me.prone and not me.helpless and (state.step, "declare") in ORDER \
            and not (rounds and state.turn_movement < 1):  # C10, C20, C28: standing up, a Movement Action
        out.append(StandUp(who=who))
    if (_at(state, "flow", "act") and me.bonus_actions >= state.ruleset.reaction_costs.disengage  # C22
            and not state.disengaged  # once a turn, with a Movement Action after it (C20, C23) in the rounds
            and (state.phase is not Phase.ROUNDS or state.turn_movement >= 1)):
        out.append(Disengage(who=who))
    out += _draws(state, who)
    out += _abilities(state, who)
    if rounds and (state.step, "flow") in ORDER:
        out.append(EndTurn(who=who))
    return out


def _abilities(state: FightState, who: str) -> list[Command]:
    """C37, C41: each ability written as data that ``who`` uses on its turn, at rest, on its turn, able to act
    (C10, C36), with a use left and its cost payable (C20, C22), on each target it allows now (itself first, then
    the others as options() lists them; a save never on itself, C15)."""
    me = state.combatants[who]
    usable = [a for a in me.sheet.written_abilities() if a.use in ON_TURN]
    if not usable or not _at(state, "declare", "act") or not _turn_is(state, who) or me.left is not None \
            or me.helpless:
        return []
    rounds = state.phase is Phase.ROUNDS
    listed, _more = listed_others(state, who)
    out: list[Command] = []
    for ability in usable:
        if uses_left(state, who, ability) == 0 or shortfall(state, who, on_turn_cost(ability, rounds)) is not None:
            continue
        saves = any(isinstance(e, Save) for e in ability.effects)
        out += [UseAbility(who=who, ability=ability.id, target=target) for target in (who, *listed)
                if state.combatants[target].left is None and not (saves and target == who)
                and target_refusal(state, who, target, ability) is None]
    return out


def _draws(state: FightState, who: str) -> list[Command]:
    """C35, C18: gear the sheet carries and the hand does not hold, drawn between actions, at the ruleset's cost on
    one's turn (free before the rounds), not by one Completely Surprised before its first turn."""
    me = state.combatants[who]
    assert state.ruleset is not None
    if not _at(state, "flow", "draw") or (state.surprise.get(who) == "complete" and not state.had_a_turn(who)):
        return []
    cost = state.ruleset.economy.draw if state.phase is Phase.ROUNDS else "free"
    if ((cost == "action" and state.turn_actions < 1) or (cost == "movement_action" and state.turn_movement < 1)
            or (cost == "bonus_action" and me.bonus_actions < 1)):
        return []
    sheet = me.sheet
    gear = [w.id for w in sheet.weapons if "spell" not in w.properties] + ([sheet.shield.id] if sheet.shield else [])
    return [Draw(who=who, weapon=item) for item in gear if item not in me.wielding]
