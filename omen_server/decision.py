"""The numbers behind the open decision, as the table page's decision box shows them to one seat.

For an Active Defense: the attack's total against the defense as it stands, and for each defense the seat may
choose, what it adds (its attribute's die and bonus and the Parry or Block Rating, labelled by weapon or shield)
and the face that die needs to turn the hit (the defender wins ties: §Hit Determination). For an Interrupt or an
Attack of Opportunity: what is being declared and what each strike rolls. For a Catch, a Will conversion, a
routing choice, an initiative tie: the facts each choice turns on. Every number comes from the engine's own
functions (:mod:`omen_core.derive`) on the fight's state, and only what the seat may see: a defender's base
defense and dice are its owner's and the GM's; a player deciding for its own combatant sees that combatant's
numbers. ``odds``: an Active Defense choice's exact odds as ``options()`` gives them (docs/live.md), in words
("turns the hit into a miss on 3/4 of its rolls; removes the crit on 3/4"); empty for any other choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omen_core.abilities import USE, fight_abilities, offered_while, uses_left
from omen_core.decide.attack import damage_taken
from omen_core.decisions import deferred_words
from omen_core.derive import Standing, active_defense_adds, bonus_source, hit_total, standing_hit, strike_bonus
from omen_core.hooks import moment_said
from omen_core.options import Choice, Odds, Offer, Waiting
from omen_core.state import AttackFrame, FightState

from .views import Sight

__all__ = ["ChoiceFacts", "DecisionFacts", "decision_facts", "needed_face", "a_or_an", "odds_said"]


@dataclass(frozen=True)
class ChoiceFacts:
    """One answer's numbers: what it adds or rolls (``adds``), what it does to the outcome (``turns``), and its
    exact odds in words (``odds``: an Active Defense's, as ``options()`` gives them; empty elsewhere)."""

    adds: str = ""
    turns: str = ""
    odds: str = ""


@dataclass
class DecisionFacts:
    """The decision box's facts: lines of what stands (``facts``), and per answer (command, its actor, index of its
    choice: two responders' Strikes at one Interrupt are two offers of one command, and the second's numbers stood
    on the first's buttons, a tester) its numbers."""

    facts: list[str] = field(default_factory=list)
    choices: dict[tuple[str, str | None, int], ChoiceFacts] = field(default_factory=dict)


#: What an Active Defense that turns the hit on any face needs (:func:`needed_face`).
ALWAYS = "turns the hit whatever the die shows"


def needed_face(attack_total: int, defense: int, adds: int, sides: int) -> str:
    """The die face an Active Defense needs to turn a hit: total defense must reach the attack total (the defender
    wins ties, §Hit Determination).

    >>> needed_face(15, 9, 3, 8)
    'turns the hit on a 3 or more on the d8'
    >>> needed_face(15, 9, 9, 6)
    'turns the hit whatever the die shows'
    >>> needed_face(15, 9, 1, 4)
    'cannot turn the hit (it would need 5 on a d4)'
    """
    need = attack_total - defense - adds
    if need <= 1:
        return ALWAYS
    if need > sides:
        return f"cannot turn the hit (it would need {need} on a d{sides})"
    return f"turns the hit on {a_or_an(need)} {need} or more on the d{sides}"


def odds_said(odds: Odds) -> str:
    """An Active Defense answer's exact odds (``options()``: docs/live.md) in words: how often it turns the hit into
    a miss, and, when the hit is a crit as it stands (C7), how often it removes the crit.

    >>> odds_said(Odds(needs=7, miss="1/4", crit=True, removes_crit="1/4"))
    'turns the hit into a miss on 1/4 of its rolls; removes the crit on 1/4'
    >>> odds_said(Odds(needs=9, miss="0", crit=False, removes_crit="0"))
    'never turns the hit'
    >>> odds_said(Odds(needs=1, miss="1", crit=True, removes_crit="1"))
    'always turns the hit; always removes the crit'
    >>> odds_said(Odds(needs=9, miss="0", crit=True, removes_crit="0"))
    'never turns the hit; the crit stays'
    """
    said = {"0": "never turns the hit", "1": "always turns the hit"}.get(
        odds.miss, f"turns the hit into a miss on {odds.miss} of its rolls")
    if odds.crit:
        said += "; " + {"0": "the crit stays", "1": "always removes the crit"}.get(
            odds.removes_crit, f"removes the crit on {odds.removes_crit}")
    return said


def a_or_an(number: int) -> str:
    """The article a number takes by its sound: "an" for 8, 11, 18, 80-89 and 800-899 (eight, eleven, eighteen,
    eighty..., eight hundred...), "a" for the rest.

    >>> [a_or_an(n) for n in (1, 3, 8, 11, 12, 18, 80, 100)]
    ['a', 'a', 'an', 'an', 'a', 'an', 'an', 'a']
    """
    return "an" if number in (8, 11, 18) or 80 <= number <= 89 or 800 <= number <= 899 else "a"


def _signed(value: int, label: str) -> str:
    return f"{'+' if value >= 0 else '−'} {abs(value)} {label}"


def _names(state: FightState, sight: Sight) -> dict[str, str]:
    return {who: c.sheet.name for who, c in state.combatants.items() if sight.sees(who)}


def decision_facts(state: FightState, waiting: Waiting | None, answers: list[Offer], sight: Sight) -> DecisionFacts:
    """The facts of the open decision for the seat of ``sight``, its answers as its options give them."""
    found = DecisionFacts()
    if waiting is None:
        return found
    names = _names(state, sight)
    frame = state.pending
    if waiting.kind == "active_defense" and frame is not None and getattr(frame, "window", None) is not None:
        _active_defense(state, frame, answers, sight, names, found)
    elif waiting.kind in ("interrupt", "attack_of_opportunity") and frame is not None:
        _reaction(state, frame, waiting, answers, sight, names, found)
    elif waiting.kind == "catch" and isinstance(frame, AttackFrame) and frame.determination is not None:
        hit, decl = frame.determination, frame.declaration
        if sight.sees(decl.attacker) and sight.sees(decl.target):  # hit_determined's totals, public where it is seen
            found.facts.append(f"{names[decl.attacker]}'s thrown attack hits: {hit.attack.total} against defense "
                               f"{hit.defense.total}")
        else:  # an attacker (or a target) the seat does not see: its events are withheld, and so are their numbers
            found.facts.append(f"someone's thrown attack hits {names.get(decl.target, 'someone')}")
        for offer in answers:
            for i, choice in enumerate(offer.choices):
                found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(
                    adds="1 Bonus Action" if choice.args.get("catch") else "free",
                    turns="no damage, no on-hit effects" if choice.args.get("catch") else "it hits: damage follows")
    elif waiting.kind == "will_conversion" and frame is not None:
        _will(state, frame, answers, sight, found)
    elif waiting.kind == "routing" and frame is not None and getattr(frame, "routing", None) is not None:
        _routing(frame, answers, sight, found)
    elif frame is not None and frame.decision is not None:
        _extension(state, frame, waiting, answers, sight, names, found)
    elif waiting.kind == "initiative_tie":
        seen = [names[w] for w in state.tie_open if w in names]  # a tie with one the seat does not see is not shown
        if seen and len(seen) == len(state.tie_open):
            found.facts.append("tied: " + ", ".join(seen) + " (allies may agree an order, or roll off, C19)")
    return found


def _extension(state: FightState, frame: Any, waiting: Waiting, answers: list[Offer], sight: Sight,
               names: dict[str, str], found: DecisionFacts) -> None:
    """An extension's decision point (:mod:`omen_core.hooks`): who is asked, and per choice its cost and what it
    does, as the row says; to the GM, during an attack, the hit total against the defense it turns on."""
    opened = frame.decision
    costs = dict(zip(opened.choices, opened.costs, strict=False))
    asked = ", ".join(names.get(w, "someone") for w in waiting.who)
    target, saver = getattr(frame.declaration, "target", None), getattr(frame.declaration, "saver", None)
    actor = names.get(frame.actor, "someone")
    decl = frame.declaration
    alone = waiting.who[0] if len(waiting.who) == 1 else None  # one asked: "their own" where the action is theirs
    own = {who: "their own" if who == alone else f"{names.get(str(who), 'someone')}'s" for who in (frame.actor, saver)}
    during = (f"{own[frame.actor]} attack on {names.get(target, 'someone')}" if target
              else f"{own[saver]} save, called by {actor}" if saver
              else _moment(decl, names) if getattr(decl, "moment", None) else f"{own[frame.actor]} action")
    found.facts.append(f"{asked} may answer, during {during}")  # (it read "Tamsin may answer, during Tamsin's
    # attack on Grukk": a tester)
    standing = standing_hit(state, frame)
    if standing is not None:
        found.facts += _standing_said(standing, sight, names)
    ability = next((a for a in fight_abilities(state) if a.id == opened.decision), None)
    needs = offered_while(ability) if ability is not None and standing is not None and not standing.determined \
        else None
    if needs is not None and ability is not None and standing is not None \
            and any(sight.owns(w) for w in waiting.who) and not sight.owns(standing.defender) \
            and sight.sees(standing.attacker) and sight.sees(standing.defender):
        # the offer itself tells its owner the outcome as it stands (C38): said, as the defense it does not see
        # would say it (a player asked to reroll read "hit total 5, as it stands" and not why: found by a tester)
        found.facts.append(f"as it stands the attack {'misses' if needs == 'miss' else 'hits'}: {ability.name} is "
                           f"offered only then (C38)")
    if opened.hook == "condition.applied":  # C38: the conditions the action applied, which the answer is about
        found.facts.append("it applied " + ", ".join(f"{a.condition} to {names.get(a.who, 'someone')}"
                                                      for a in frame.applied))
    if opened.hook == "attack.damaged" and isinstance(frame, AttackFrame) and target is not None \
            and (sight.owns(target) or sight.hp == "exact"):  # C38 "damage taken": how much, as its HP is seen
        found.facts.append(f"{names.get(target, 'someone')} took {damage_taken(frame)} damage from the attack (C13)")
    for who in waiting.who:  # C41: the uses it has left, to the seat that owns the one asked (its sheet's)
        left = uses_left(state, who, ability) if ability is not None and sight.owns(who) else None
        if left is not None and ability is not None and ability.uses is not None:
            found.facts.append(f"{ability.name}: {left} use{'s' if left != 1 else ''} left this "
                               f"{ability.uses.per} (C41)")
    for offer in answers:
        if offer.command != "answer_decision":
            continue
        for i, answer in enumerate(offer.choices):
            cost = costs.get(str(answer.args.get("choice")), "")
            owed = ""  # C41: a use's deferred cost, with its button (the button read "free" alone: a tester)
            if answer.args.get("choice") == USE and ability is not None and ability.deferred is not None:
                whose = names.get(offer.actor or "", "")
                owed = f"{cost or 'free'} now; then {deferred_words(ability.deferred, whose)}"
            found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(adds=owed or cost,
                                                            turns=_budget(state, offer.actor, cost, sight))


def _standing_said(standing: Standing, sight: Sight, names: dict[str, str]) -> list[str]:
    """The hit total against the defense a decision inside an attack turns on, as much of it as the seat sees
    (docs/server.md, "The decision box"): nothing unless it sees both the attacker and the target; once the hit is
    determined, both totals (``hit_determined``'s are public); before it (``attack.rolled``), the defense only to
    the defender's owner and the GM (``active_defense_window_opened``'s ``base_defense`` is ``own:defender``), the
    hit total to the rest."""
    if not (sight.sees(standing.attacker) and sight.sees(standing.defender)):
        return []
    attacker, defender = names.get(standing.attacker, "someone"), names.get(standing.defender, "someone")
    if standing.determined or sight.owns(standing.defender):
        return [standing.said(attacker, defender)]
    return [f"{attacker}'s hit total {standing.attack}, as it stands; {defender}'s defense is its owner's and the "
            "GM's to see"]


def _budget(state: FightState, who: str | None, cost: str, sight: Sight) -> str:
    """An answer's cost in Bonus Actions against those its responder has left (:func:`budget_said`), to the seat
    that owns the responder; "" for an answer that costs none, or to another seat."""
    if who is None or "Bonus Action" not in cost or not sight.owns(who) or who not in state.combatants:
        return ""
    return budget_said(state.combatants[who].bonus_actions, _count(cost), state)


def _moment(decl: Any, names: dict[str, str]) -> str:
    """A moment abilities answer (C38), as the decision box says it: a turn's start or end, the round's end, a
    check made or failed (whose, against whom), a save-ends save made or failed (whose, against which condition)."""
    return moment_said(decl.moment, decl.round, names.get(decl.who or "", "someone"),
                       names.get(decl.other, "someone") if decl.other else None, decl.outcome, decl.condition)


def _active_defense(state: FightState, frame: Any, answers: list[Offer], sight: Sight, names: dict[str, str],
                    found: DecisionFacts) -> None:
    window = frame.window
    defender = window.defender
    attacker = frame.declaration.attacker
    mine = sight.owns(defender)
    unseen = not sight.sees(attacker)  # its events are withheld from the seat, the totals too (the odds are not)
    if mine and unseen:
        found.facts.append(f"someone's attack hits {names.get(defender, defender)}'s base defense: it hits unless "
                           "an Active Defense raises the defense enough (each choice says the face it needs)")
    elif mine:
        found.facts.append(f"{names.get(attacker, 'someone')}'s attack {window.attack_total} against "
                           f"{names.get(defender, defender)}'s defense {window.base_defense}: it hits unless an "
                           f"Active Defense raises the defense to {window.attack_total} or more")
    if (sight.gm or (sight.owns(attacker) and sight.sees(defender))) and frame.hit_roll is not None:
        # the hit total's terms, to the seats that see them (the GM's claims, high ground, Encircled, checked before
        # the defender spends a Bonus Action: the box said the total alone, a tester); not against a target the seat
        # does not see (a prone target's term is the target's state)
        found.facts.append(_hit_said(state, frame))
        claimed = frame.declaration.damage_modifiers  # the GM's too: checked before the hit lands (a tester)
        if claimed:
            found.facts.append("on a hit the damage adds " + " ".join(
                _signed(m.value, m.source) for m in claimed))
    crit = any(isinstance(c.odds, Odds) and c.odds.crit for o in answers if o.command == "answer_active_defense"
               for c in o.choices)
    if mine and crit:  # C7: decided before the window, from the FCS and RES portions
        found.facts.append("its crit check already succeeds (C7: the FCS portion beats the RES portion, both rolled): "
                           "if it still hits it is a crit; an Active Defense that turns the hit cancels the crit too")
    if mine:
        budget = state.combatants[defender].bonus_actions
        found.facts.append(f"{names.get(defender, defender)} has {budget} Bonus Action{'s' if budget != 1 else ''}")
    elif unseen or not sight.sees(defender):  # the action's events are withheld from this seat: its numbers too
        found.facts.append(f"{names.get(attacker, 'someone')}'s attack hits {names.get(defender, 'someone')}'s "
                           "base defense")
    else:
        found.facts.append(f"{names.get(attacker, 'someone')}'s attack {window.attack_total} hits "
                           f"{names.get(defender, 'someone')}'s base defense")
    if not mine:
        return
    for offer in answers:
        if offer.command != "answer_active_defense":
            continue
        for i, choice in enumerate(offer.choices):
            found.choices[(offer.command, offer.actor, i)] = _defense_choice(state, defender, window, choice, unseen)


def _hit_said(state: FightState, frame: AttackFrame) -> str:
    """The hit total term by term (C5), as the attacker's seat and the GM see it: the dice, then every term that is
    not 0, each by its source ("the hit total 15 = 3 primary + 4 FCS + 2 STR + 2 high ground (C27) + ...")."""
    total = hit_total(state, frame)
    sheet = bonus_source(state, frame.declaration.attacker, total.attribute).sheet
    terms = [t for t in total.terms(total.attribute_bonus - sheet) if t.source == "dice" or t.value]
    said = " ".join(_signed(t.value, t.label) for t in terms)
    return f"the hit total {total.total} = {said.removeprefix('+ ')}"


def _defense_choice(state: FightState, defender: str, window: Any, choice: Choice, unseen: bool = False
                    ) -> ChoiceFacts:
    defense = choice.args.get("defense")
    odds = odds_said(choice.odds) if isinstance(choice.odds, Odds) else ""
    if isinstance(choice.odds, Odds) and choice.odds.miss == "0":  # "cannot turn the hit" says the rest already
        odds = "the crit stays" if choice.odds.crit else ""
    if defense is None:
        return ChoiceFacts(adds="keeps the Bonus Action",
                           turns="it hits" if unseen else f"defense stays {window.base_defense}: it hits", odds=odds)
    adds = active_defense_adds(state, defender, str(defense), choice.args.get("weapon"))
    source = bonus_source(state, defender, adds.attribute)  # the bonus as it stands, split into the sheet's and
    parts = [f"+ d{adds.sides} {adds.attribute}", _signed(source.sheet, f"{adds.attribute} bonus")]  # what
    if adds.bonus != source.sheet:  # conditions changed (C28), named, as explain says it (it read "+ 0 AGI bonus"
        held = source.held_words()  # on a sheet's +1 under Fatigued)
        parts.append(_signed(adds.bonus - source.sheet, f"conditions ({held})" if held else "conditions"))
    if adds.rating:
        parts.append(_signed(adds.rating, "Parry Rating" if defense == "parry" else "Block Rating"))
    turns = needed_face(window.attack_total, window.base_defense, adds.bonus + adds.rating, adds.sides)
    if turns == ALWAYS and odds.startswith("always turns the hit"):  # the odds say it: said once
        turns = ""
    return ChoiceFacts(adds=" ".join(parts), turns=turns, odds=odds)


def _strike(state: FightState, who: str, weapon: str | None) -> str:
    n = strike_bonus(state, who, weapon)
    # the damage reuses the hit's primary dice (C12): "damage d10 + 2 bonus" read as a roll of its own (a tester)
    damage = (f"damage the same d{n.primary_sides} {_signed(n.damage_bonus, 'bonus')} "
              f"{_signed(n.weapon_damage, 'WD')} (C12)" if weapon else f"damage the same d{n.primary_sides} (unarmed, "
                                                                      "C12)")
    return f"hit d{n.primary_sides} {n.attribute} + d{n.fcs_sides} FCS {_signed(n.hit_bonus, 'bonus')}; {damage}"


def _reaction(state: FightState, frame: Any, waiting: Waiting, answers: list[Offer], sight: Sight,
              names: dict[str, str], found: DecisionFacts) -> None:
    decl = frame.declaration
    actor = names.get(frame.actor, "someone")
    if waiting.kind == "interrupt":
        target = names.get(getattr(decl, "target", "") or getattr(decl, "saver", ""), "")
        found.facts.append(f"{actor} declares an Action{' against ' + target if target else ''}: an Interrupt "
                           "strikes first, and on a hit the Action is cancelled, its Action still spent (C24)")
    else:
        found.facts.append(f"{actor} moves out of reach: an Attack of Opportunity strikes before the move "
                           "completes (C23)")
    for offer in answers:
        who = offer.actor
        if who is None or not sight.owns(who):
            continue
        have = state.combatants[who].bonus_actions
        for i, choice in enumerate(offer.choices):
            if offer.command == "react":
                weapon = choice.args.get("weapon")
                found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(
                    adds=_strike(state, who, str(weapon) if weapon else None),
                    turns=f"costs {waiting.cost} ({budget_said(have, _count(waiting.cost), state)})")
            else:
                found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(
                    adds="free", turns="the Action goes on" if waiting.kind == "interrupt" else "the move completes")


def _count(cost: str) -> int:
    """The number of Bonus Actions a cost says (``"2 Bonus Actions"``: 2); 1 where it says none."""
    head = cost.split(maxsplit=1)[0] if cost else ""
    return int(head) if head.isdigit() else 1


def budget_said(have: int, cost: int, state: FightState) -> str:
    """A reaction's cost against the Bonus Actions left, in words: how many there are now, of how many, and what is
    left after it for an Active Defense (1 Bonus Action) until the owner's next turn refills them (C20).

    >>> from omen_core.state import FightState
    >>> budget_said(2, 2, FightState())
    '2 of 2 Bonus Actions left now; none left after it for an Active Defense until its next turn (C20)'
    >>> budget_said(2, 1, FightState())
    '2 of 2 Bonus Actions left now; 1 left after it, enough for an Active Defense'
    """
    most = state.ruleset.economy.bonus_actions if state.ruleset is not None else 2
    after = have - cost
    tail = (f"{after} left after it, enough for an Active Defense" if after >= 1
            else "none left after it for an Active Defense until its next turn (C20)")
    return f"{have} of {most} Bonus Actions left now; {tail}"


def _will(state: FightState, frame: Any, answers: list[Offer], sight: Sight, found: DecisionFacts) -> None:
    offer_event = getattr(frame, "will_offer", None)
    if offer_event is None or not sight.owns(offer_event.who):
        return
    fighter = state.combatants[offer_event.who]
    final, will = offer_event.final, offer_event.will
    found.facts.append(f"{final} {offer_event.damage_type} damage after mitigation (C13)")
    on_will = min(final, will)
    for offer in answers:
        for i, choice in enumerate(offer.choices):
            if choice.args.get("convert"):
                found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(
                    adds=f"Will {will} → {will - on_will}", turns=f"HP {fighter.hp} → {fighter.hp - (final - on_will)}"
                    + (f" ({final - on_will} beyond Will, C31)" if final > on_will else ""))
            else:
                found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(adds=f"Will stays {will}",
                                                                turns=f"HP {fighter.hp} → {fighter.hp - final}")


def _routing(frame: Any, answers: list[Offer], sight: Sight, found: DecisionFacts) -> None:
    if not sight.owns(frame.declaration.attacker):
        return
    dice = frame.routing.dice
    found.facts.append("the hit pool: " + ", ".join(f"{d.face} ({d.pool} d{d.sides})" for d in dice))
    for offer in answers:
        for i, choice in enumerate(offer.choices):
            index = choice.args.get("die")
            if isinstance(index, int) and 0 <= index < len(dice):
                die = dice[index]
                found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(
                    adds=f"{die.face} ({die.pool} d{die.sides}) feeds damage")
            else:
                found.choices[(offer.command, offer.actor, i)] = ChoiceFacts(adds="the primary dice feed damage")
