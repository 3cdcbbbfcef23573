"""The table's log as readable cards, built from the events as one seat sees them (never from anything else).

Every seat, the GM's included, gets the same cards from its own :class:`~omen_server.views.SeenEvent` views: a
card per action (an attack, a save, a movement: every event of it, across the commands that answer its windows)
and a card per other command (initiative, the end of a turn, a check, a condition, an undo), each as a headline,
the lines of what happened and the verdict (HIT, MISS, SAVED...). A field the seat may not see is left out of the
line that would show it (the HP of a foe under a banded display is its band; a die's faces are their roller's);
an event it may not see at all is no line. An undone card is marked, and so is the card an undo or redo names.
The card of the last command is the table's top card: the outcome of the action just taken.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from omen_core.content import condition_held
from omen_core.events import DEFERRED_SOURCE, MITIGATION_TERMS, CritCheck, DefenseTotal, HitTotal
from omen_core.hooks import amount_of, moment_said
from omen_core.parts import RollTotal
from omen_core.rules.ambush import DIFFICULTY_RULES, TIER_WORDS, tier_range
from omen_core.seats import PLAYER_COMMANDS

from .views import MODIFIER_LISTS, TOLD_REASONS, UNNAMED_DECISION, UNNAMED_EFFECT, SeenEvent

__all__ = ["SHIELD", "StoryCard", "story", "top_card", "card_said"]


@dataclass
class StoryCard:
    """One card of the log: its first seq (its anchor), kind, headline, lines, verdict, and whether it is undone
    (``undone``: the undo's reason, or ``""`` with ``struck`` True)."""

    seq: int
    kind: str
    headline: str
    lines: list[str] = field(default_factory=list)
    verdict: str = ""
    struck: bool = False
    undone: str = ""
    seqs: list[int] = field(default_factory=list)
    batches: set[int] = field(default_factory=set)
    round: int = 0
    outcome: list[str] = field(default_factory=list)
    by: str = ""  # whose roll the verdict is (the attacker, the saver), and against whom: its colour is the viewer's
    against: str = ""
    answered: StoryCard | None = field(default=None, repr=False, compare=False)  # a reaction's: the action's card
    rolled: bool = False  # whether dice the seat sees were rolled in it (an undo of it rewinds a seeded fight's dice)
    news: list[str] = field(default_factory=list)  # what it did to whom (damage, conditions, leaving): announced


#: The cards of the GM's condition commands: announced by what they did ("Kael Arden is Prone"), not by their
#: headline ("A condition: Kael Arden"; a player's: "A condition"), which names no condition.
CONDITION_CARDS = frozenset({"apply_condition", "clear_condition"})


#: The events whose lines say what a card did to whom, announced after its headline (:func:`card_said`).
_NEWS = frozenset({"damage_resolved", "condition_applied", "condition_cleared", "combatant_left"})
#: The most of them an announcement says: a screen reader's line stays short (the card holds them all).
NEWS_SAID = 3


def card_said(card: StoryCard) -> str:
    """A card's verdict and headline, a condition's card by its lines (``Kael Arden is Prone``), then what it did to
    whom, the first :data:`NEWS_SAID` of its damage, condition and leaving lines (``HIT: Kael Arden attacks Skarn
    Gutterjaw. Skarn Gutterjaw takes 9 ...; Skarn Gutterjaw is Dying``; an end of turn's ``Kael Arden is no longer
    Fatigued``: a keyboard tester heard only the headline)."""
    headline = "; ".join(card.lines) if card.kind in CONDITION_CARDS and card.lines else card.headline
    said = f"{card.verdict}: {headline}" if card.verdict else headline
    news = [line for line in card.news if line != headline][:NEWS_SAID]
    return f"{said}. {'; '.join(news)}" if news and card.kind not in CONDITION_CARDS else said


Names = Mapping[str, str]
#: Weapons and shields by the names their sheets give them, keyed by (combatant, id): a seat's own combatants'.
Gear = Mapping[tuple[str, str], str]

#: The key of a combatant's shield in the gear a story is given (beside its id): a Block names no shield in its
#: event (a sheet has one), so its line names it from here ("chooses Block with Tower shield").
SHIELD = "(shield)"


def _gear(gear: Gear, who: Any, item: Any) -> str:
    """A weapon or shield as a line names it: by its sheet's name where the seat has it, else its id."""
    return gear.get((str(who), str(item)), str(item))



def _n(names: Names, who: Any) -> str:
    return names.get(str(who), str(who))


def _roll(total: Any) -> str:
    """A total as the line says it: with its terms where the seat sees them (a roll's terms are its roller's seat's:
    ``11 (7 RES die + 2 RES bonus + 2 armor)``), else the number alone."""
    if not isinstance(total, dict):
        return "?"
    terms = _terms_of(total)
    return f"{total.get('total')} ({terms})" if terms else str(total.get("total"))


#: The kind of total a roll's fields make, by a field only it has.
_TOTALS: tuple[tuple[str, type[Any]], ...] = (("primary_dice", HitTotal), ("res_die", DefenseTotal),
                                              ("face", RollTotal))
_DIE_KINDS = {"die": "{attribute} die", "primary_die": "primary die", "fcs_die": "FCS die", "res_die": "RES die",
              "active_die": "{label} die"}
_BONUS_KINDS = frozenset({"attribute_bonus", "res_bonus", "active_bonus", "fcs_bonus"})


def _terms_of(total: dict[str, Any]) -> str:
    """A total's terms that are not 0, in words (``7 RES die + 2 RES bonus + 2 armor``; a die alone, ``3 AGI die``,
    so that every total the seat sees the terms of says them); "" when the seat sees the total alone."""
    kind = next((t for key, t in _TOTALS if key in total), None)
    if kind is None:
        return _own_terms(total)
    try:
        part = msgspec.convert({k: v for k, v in total.items() if k not in ("type", "_conditions")}, kind)
    except msgspec.ValidationError:
        return ""
    shift = total.get("_conditions", 0)
    terms = [t for t in part.terms(shift if isinstance(shift, int) else 0) if t.value or t.kind == "no_res_die"]
    if not terms:
        return ""
    words = [(_DIE_KINDS[t.kind].format(attribute=total.get("attribute", ""), label=t.label)
              if t.kind in _DIE_KINDS else f"{t.label} bonus" if t.kind in _BONUS_KINDS else t.label, t.value)
             for t in terms]
    return " ".join((f"{_signed(v)} " if i else "" if t.kind == "no_res_die" else f"{v} ") + label
                    for i, ((label, v), t) in enumerate(zip(words, terms, strict=True)))


def _own_terms(total: dict[str, Any]) -> str:
    """The terms of another's total the seat is shown, its own abilities' (``of which + 2 Arcane Ward, yours``:
    omen_server.views shows a seat its own terms in a total whose other terms it may not see, C37); "" if none."""
    mine = [m for field in MODIFIER_LISTS if isinstance(total.get(field), (list, tuple)) for m in total[field]
            if isinstance(m, dict) and isinstance(m.get("value"), int)]
    if not mine:
        return ""
    return "of which " + ", ".join(f"{_signed(m['value'])} {m.get('source', '')}" for m in mine) + ", yours"


def _hp(value: Any) -> str:
    return str(value)


def _faces(dice: Any) -> str:
    if not isinstance(dice, (list, tuple)):
        return ""
    return ", ".join(f"{d.get('face')} (d{d.get('sides')})" for d in dice if isinstance(d, dict))


def _attack(e: dict[str, Any], n: Callable[[Any], str], gear: Gear) -> str:
    weapon = f" with {_gear(gear, e.get('attacker'), e['weapon'])}" if e.get("weapon") else ""
    what = {"interrupt": "Interrupt: ", "attack_of_opportunity": "Attack of Opportunity: "}.get(
        str(e.get("reaction") or ""), "")
    return f"{what}{n(e['attacker'])} attacks {n(e['target'])}{weapon}"


def _hit(e: dict[str, Any]) -> tuple[str, str]:
    verdict = "HIT" if e.get("hit") else "MISS"
    if e.get("hit") and e.get("crit"):
        verdict += ", CRITICAL"
    return f"attack {_roll(e.get('attack'))} against defense {_roll(e.get('defense'))}: {verdict}", verdict


def _crit_said(e: dict[str, Any]) -> str:
    """Why a hit is critical (C7): the FCS portion (FCS dice + FCS bonus) strictly more than the RES portion (the
    defender's RES die + RES bonus), with both portions where the seat sees them (both sheets': the GM's)."""
    check = e.get("crit_check")
    if not isinstance(check, dict) or "fcs_portion" not in check:
        return ("critical (C7): the FCS portion (FCS dice + FCS bonus) is more than the RES portion (RES die + RES "
                "bonus)")
    try:
        part = msgspec.convert({k: v for k, v in check.items() if k != "type"}, CritCheck)
    except msgspec.ValidationError:
        return "critical (C7)"
    def said(terms: Sequence[Any]) -> str:
        shown = [t for t in terms if t.value]
        return " + ".join(f"{t.value} {_DIE_KINDS.get(t.kind, '{attribute} die').format(attribute='', label='')}"
                          if t.kind in _DIE_KINDS else f"{t.value} {t.label} bonus" for t in shown)
    fcs, res = said(part.fcs_terms()), said(part.res_terms())
    return (f"critical (C7): FCS portion {part.fcs_portion}{f' ({fcs})' if fcs else ''} is more than RES portion "
            f"{part.res_portion}{f' ({res})' if res else ''}")


def _damage(e: dict[str, Any], n: Callable[[Any], str]) -> str:
    amount = f"{e['final']} " if "final" in e else ""
    where = "Will" if e.get("resource") == "will" else "HP"
    why = _damage_why(e)
    # outside any action the damage says what dealt it: a condition as it ticks (C40), a deferred cost (C41)
    source = f"{e['source']}: " if e.get("action") is None and e.get("source") else ""
    line = f"{source}{amount}{e.get('damage_type', '')} damage to {n(e['target'])}'s {where}".replace("  ", " ")
    # the amount withheld (the HP display: banded or hidden): the line starts with a word, capitalised ("slashing
    # damage to ..." read as a sentence cut short in an announcement: an accessibility tester)
    return (line[:1].upper() + line[1:] if not amount and not source else line) + (f" ({why})" if why else "")


_DAMAGE_TERMS = (("dice", "on the primary dice"), ("primary_bonus", "bonus"), ("crit_bonus", "crit bonus"),
                 ("weapon_damage", "WD"))


#: An ability's answer (C38) as a story line says it: "Ana uses it", "Ana lets it be"; another choice by its id.
_ANSWER_WORDS = {"use": "uses it", "pass": "lets it be"}


def _signed(value: int) -> str:
    return f"+ {value}" if value >= 0 else f"\u2212 {-value}"


def _damage_why(e: dict[str, Any]) -> str:
    """Why the damage is what it is, as far as the seat sees the event (C12, C13): C12's terms that are not 0
    (``5 dice + 2 bonus + 3 WD = 10``: the dealer's), then each mitigation step (``armor \u2212 2 = 8``: the
    target's); "" if both are withheld. Where the seat sees the steps alone (the target's player), the first says
    the amount it starts from (``9 dealt, armor − 2 = 7``: it read ``armor − 2 = 7``, found by a tester)."""
    text = _damage_terms(e.get("terms"))
    for step in e.get("steps") or []:  # the target's to see (its armor, its resistances): its owner's and the GM's
        if isinstance(step, dict) and step.get("amount"):
            sign, _source = MITIGATION_TERMS.get(str(step.get("step")), (-1, "rule"))
            said = f"{step.get('step')} {_signed(sign * int(step['amount']))} = {step.get('after')}"
            if not text and isinstance(step.get("after"), int):
                said = f"{step['after'] - sign * int(step['amount'])} dealt, {said}"
            text = f"{text}, {said}" if text else said
    raw, final = (e.get("terms") or {}).get("raw") if isinstance(e.get("terms"), dict) else None, e.get("final")
    if text and "steps" not in e and isinstance(raw, int) and isinstance(final, int) and raw != final:
        # the dealer's seat sees the terms and the amount, not the target's steps: the gap said as one (it read
        # "... = 7" beside 6 dealt, which did not add up: a tester)
        text += f", the target's mitigation {_signed(final - raw)} = {final}"
    elif text and "steps" not in e and "final" not in e and isinstance(raw, int):
        # the final amount withheld too (the HP display: banded or hidden): "= 12" read as the damage taken, where
        # armor took 1 of it (a tester)
        text += ", before the target's mitigation (C13)"
    return text


def _damage_terms(terms: Any) -> str:
    """C12's terms of a damage that are not 0, as the dealer's seat sees them: ``5 on the primary dice + 2 bonus + 3
    WD = 10`` (the sum of the faces of the hit's primary dice, C12; the story says "die" where it saw one)."""
    if not isinstance(terms, dict) or not isinstance(terms.get("raw"), int):
        return ""
    parts = [(label if key != "dice" or terms.get("routed_die") is None else "on the routed die", terms.get(key))
             for key, label in _DAMAGE_TERMS]
    parts += [("ability die", d) for d in terms.get("ability_dice") or [] if isinstance(d, int)]
    parts += [(str(m.get("source", "modifier")), m.get("value")) for m in terms.get("modifiers") or []
              if isinstance(m, dict)]
    said = [(label, v) for label, v in parts if isinstance(v, int) and v]
    text = " ".join(f"{_signed(v) if i else v} {label}" for i, (label, v) in enumerate(said))
    if len(said) > 1:
        text += f" = {terms['raw']}"
    return text


def _dice_said(dice: Any) -> str:
    """A damage roll's dice as a line names them: ``d6``, ``2d6``; ``dice`` where the seat does not see them."""
    if not isinstance(dice, (list, tuple)) or not dice or not all(isinstance(d, dict) for d in dice):
        return "dice"
    sides = {d.get("sides") for d in dice}
    if len(sides) != 1:
        return "dice"
    return f"{len(dice) if len(dice) > 1 else ''}d{sides.pop()}"


def _reroll_said(e: dict[str, Any], rolled: Mapping[int, dict[str, Any]], names: Names) -> str | None:
    """A reroll's dice line with the die it rolled again and the face it replaced, as far as the seat saw that roll
    (C39: both faces kept, the new one counts): "Kael Arden's reroll of the hit d8, which showed 1: 3 (d8)" (it read
    "Kael Arden's reroll: 3 (d8)": a tester); None for any other roll, or a reroll of a roll the seat did not see."""
    if e.get("purpose") != "reroll" or not isinstance(e.get("rerolls"), int) or not isinstance(e.get("die"), int):
        return None
    first = rolled.get(int(e["rerolls"]))
    dice = first.get("dice") if first is not None else None
    faces = _faces(e.get("dice"))
    if not isinstance(dice, (list, tuple)) or not 0 <= int(e["die"]) < len(dice) or not faces or first is None:
        return None
    was = dice[int(e["die"])]
    purpose = str(first.get("purpose", "")).replace("_", " ")
    return f"{_n(names, e.get('roller'))}'s reroll of the {purpose} d{was.get('sides')}, which showed " \
           f"{was.get('face')}: {faces}"


def _own_dice(e: dict[str, Any]) -> bool:
    """Whether a damage's dice term is its source's own roll (an ability's or a consequence's damage, C25; a
    condition's tick, C40), not the hit's primary dice (C12): it has a source the seat sees, and no ability dice
    beside it (Brute Rage's damage roll is added to the hit's)."""
    terms = e.get("terms")
    return isinstance(e.get("source"), str) and isinstance(terms, dict) and not terms.get("ability_dice")


def _resource(e: dict[str, Any], n: Callable[[Any], str]) -> str | None:
    name = "HP" if e.get("resource") == "hp" else "Will"
    if "before" in e and "after" in e:
        return f"{n(e['who'])}'s {name}: {_hp(e['before'])} → {_hp(e['after'])}"
    return f"{n(e['who'])}'s {name} changes"


def _line(kind: str, e: dict[str, Any], names: Names, gear: Gear) -> tuple[str | None, str]:
    """One event as a line of its card, and the verdict it gives (``""``: none)."""
    def n(who: Any) -> str:
        return _n(names, who)

    match kind:
        case "attack_declared":
            return _attack(e, n, gear), ""
        case "dice_rolled":
            faces = _faces(e.get("dice"))
            purpose = str(e.get("purpose", "")).replace("_", " ")
            return (f"{n(e['roller'])}'s {purpose}: {faces}" if faces else None), ""
        case "active_defense_window_opened":
            base = f" against base defense {e['base_defense']}" if "base_defense" in e else ""
            return f"Active Defense window for {n(e['defender'])}: attack {e.get('attack_total')}{base}", ""
        case "active_defense_window_skipped":  # why: the engine's reason, the GM's and the defender's seat's to see
            why = f": {e['reason']}" if e.get("reason") else ""
            return f"no Active Defense for {n(e['defender'])}{why}", ""
        case "active_defense_chosen":
            weapon = f" with {_gear(gear, e.get('defender'), e['weapon'])}" if e.get("weapon") else ""
            if e.get("defense") == "block" and (str(e.get("defender")), SHIELD) in gear:  # as Parry names its weapon
                weapon = f" with {gear[str(e.get('defender')), SHIELD]}"  # (a tester read Block without its shield)
            # the defense by the name its button gives it: "chooses Parry with Curved knife"
            return f"{n(e['defender'])} chooses {str(e.get('defense', '')).capitalize()}{weapon}", ""
        case "active_defense_declined":
            return f"{n(e['defender'])} declines an Active Defense", ""
        case "hit_determined":
            return _hit(e)
        case "damage_resolved":
            return _damage(e, n), ""
        case "resource_changed":
            return _resource(e, n), ""
        case "condition_applied":
            stacks = f" ×{e['stacks']}" if int(e.get("stacks", 1) or 1) > 1 else ""
            # C40; the combatant whose turn it waits for withheld from this seat: "another combatant", as the
            # chip says (the line said nothing of it, as if it lasted until cleared: a durations tester)
            until = (f" until the {'start' if e['until'] == 'start_of_next_turn' else 'end'} of "
                     f"{n(e['of']) if e.get('of') else 'another combatant'}'s next turn"
                     if e.get("until") in ("start_of_next_turn", "end_of_next_turn") else "")
            by = (f" (applied by {n(e['by'])})" if isinstance(e.get("by"), str) and e["by"] != e.get("who")
                  else "")  # whose save-ends condition it is (C40), where the seat sees who (a tester: never said)
            return f"{n(e['who'])} {condition_held(str(e.get('condition')))}{stacks}{by}{until}", ""
        case "condition_cleared":
            return f"{n(e['who'])} {condition_held(str(e.get('condition')), held=False)}", ""
        case "condition_ticked":
            return f"{n(e['who'])}'s {e.get('condition')}: {e.get('remaining')} left", ""
        case "save_called":
            effect = e.get("effect") or {}
            name = effect.get("name", "an effect")
            against = "" if name == UNNAMED_EFFECT else f" against {name}"  # a name this seat may not see: none
            return f"{n(e['caller'])} calls for {n(e['saver'])}'s {effect.get('save', '')} save{against}", ""
        case "save_resolved":
            said = "SAVED" if e.get("success") else "FAILED"
            ends = f"against {e['effect']} (save ends, C40): " if e.get("action") is None and e.get("effect") else ""
            # a save-ends save's badge heads its turn's card: "FAILED End of turn: Kael" read as if the turn failed
            verdict = "SAVE FAILED" if ends and not e.get("success") else said  # (a tester)
            return f"save {ends}{_roll(e.get('saver'))} against {_roll(e.get('opposing'))}: {said}", verdict
        case "cost_paid" if e.get("resource") in ("will", "hp") and isinstance(e.get("amount"), int):
            # what an ability cost beyond the turn's Actions (C41: "2 Will" went 8 → 6 unsaid: a GM tester), as the
            # session log says it; what for where the seat sees it
            why = f" ({e['purpose']})" if e.get("purpose") else ""
            return f"{n(e.get('who'))} spends {amount_of(str(e['resource']), e['amount'])}{why}", ""
        case "ability_used":
            on = "" if e.get("target") == e.get("who") else f" on {n(e['target'])}"
            return f"{n(e['who'])} uses {e.get('name', 'an ability')}{on}", ""
        case "moment_reached":
            when = moment_said(str(e.get("moment")), e.get("round"), n(e.get("who")),
                               n(e.get("other")) if e.get("other") else None, e.get("outcome"), e.get("condition"))
            return f"{when[0].upper()}{when[1:]}: abilities answer it", ""
        case "movement_declared":
            away = f" away from {', '.join(n(w) for w in e.get('leaves') or [])}" if e.get("leaves") else ""
            return f"{n(e['who'])} moves{away}", ""
        case "moved":
            return f"{n(e['who'])} has moved", "MOVED"
        case "reaction_window_opened":
            what = str(e.get("reaction", "")).replace("_", " ")
            who = ", ".join(n(w) for w in e.get("responders") or []) or "someone"
            return f"{what.capitalize()} window for {who}", ""
        case "reaction_passed":
            return f"{n(e['who'])} lets it pass", ""
        case "catch_window_opened":
            return f"{n(e['target'])} may catch it", ""
        case "catch_answered":
            return f"{n(e['who'])} {'catches it' if e.get('caught') else 'lets it hit'}", (
                "CAUGHT" if e.get("caught") else "")
        case "decision_opened":  # its name withheld from the seat (another's ability: views.py), said as such
            who = ", ".join(n(w) for w in e.get("responders") or []) or "someone"
            title = e.get("title") or str(e.get("decision", "")).replace("_", " ")
            if title == UNNAMED_DECISION:
                return f"{who} may answer with something this seat is not shown", ""
            return f"{who} may answer {title}", ""
        case "decision_answered":  # "Ana: use" read as a field's value (found by a tester): said in words
            said = _ANSWER_WORDS.get(str(e.get("choice", "")), f"answers {e.get('choice', '')}")
            return f"{n(e['who'])} {said}" + (f" ({e['label']})" if e.get("label") else ""), ""
        case "routing_window_opened":
            return f"{n(e['attacker'])} chooses the die that feeds damage", ""
        case "damage_routed":
            return f"{n(e['attacker'])} routes a die to damage", ""
        case "will_conversion_offered":
            return f"{n(e['who'])} may take the damage on Will", ""
        case "will_conversion_chosen":
            return f"{n(e['who'])} takes it on {'Will' if e.get('convert') else 'HP'}", ""
        case "action_cancelled":
            reason = str(e.get("reason") or "").strip()  # the GM's (free text); another seat's card says why below
            return f"the action is cancelled: {reason}" if reason else "the action is cancelled", "CANCELLED"
        case "initiative_rolled":
            return f"{n(e['who'])}: initiative {_roll(e.get('check'))}", ""
        case "initiative_tied":
            return f"tie between {', '.join(n(w) for w in e.get('group') or [])}", ""
        case "initiative_roll_off":
            return "roll-off: " + ", ".join(f"{n(r.get('roller'))} {r.get('total')}" for r in e.get("rolls") or []), ""
        case "initiative_order_set":
            return "order: " + ", ".join(n(w) for w in e.get("order") or []), ""
        case "initiative_agreed":  # one tie's settling, not the order (a GM tester read it as the order, C19)
            return "agreed among the tied: " + ", ".join(n(w) for w in e.get("order") or []), ""
        case "round_started":
            return f"Round {e.get('round')}", ""
        case "turn_started":
            return f"{n(e['who'])}'s turn", ""
        case "turn_skipped":
            return f"{n(e['who'])}'s turn is skipped", ""
        case "turn_ended":
            return f"{n(e['who'])} ends the turn", ""
        case "static_check_resolved":
            check = e.get("check") or {}
            return (f"{n(check.get('roller'))}'s check: {_roll(check)} against {e.get('difficulty')}: "
                    f"{str(e.get('outcome', '')).upper()}"), str(e.get("outcome", "")).upper()
        case "contest_resolved":
            return (f"contest: {n((e.get('initiator') or {}).get('roller'))} {_roll(e.get('initiator'))} against "
                    f"{n((e.get('defender') or {}).get('roller'))} {_roll(e.get('defender'))}: {n(e.get('winner'))} "
                    "wins"), f"{n(e.get('winner'))} wins"
        case "surprise_determined":  # the tier with its range at the difficulty (C18: a tie is Partial Surprise)
            tier, difficulty = str(e.get("tier", "")), int(e.get("difficulty", 0))
            return (f"{n(e['who'])}: Perception {_roll(e.get('perception'))} against {difficulty}: "
                    f"{TIER_WORDS.get(tier, tier)} (C18: {tier_range(tier, difficulty)})"), ""
        case "ambush_started":
            return "Ambush!", ""
        case "ambush_difficulty_set":  # how it was reached (C17): the Stealth totals shown, the band's rule
            rule = DIFFICULTY_RULES.get(str(e.get("time_waited")))
            if rule is None:
                return f"Ambush Difficulty {e.get('difficulty')}, set by the GM (C17)", ""
            label, plus, words = rule
            totals = ", ".join(f"{n(r.get('roller'))} {r.get('total')}" for r in e.get("stealth") or ()
                               if isinstance(r, dict))
            return (f"Ambush Difficulty {e.get('difficulty')}: {label} + {plus}, {words} waited (C17)"
                    + (f"; Stealth: {totals}" if totals else "")), ""
        case "weapon_drawn":
            drawn = _gear(gear, e.get("who"), e["weapon"]) if e.get("weapon") else "a weapon"
            return f"{n(e['who'])} draws {drawn}", ""
        case "disengaged":
            return f"{n(e['who'])} disengages", ""
        case "engagement_changed":
            others = ", ".join(n(w) for w in e.get("others") or [])
            return f"{n(e['who'])} {'engages' if e.get('engaged') else 'leaves'} {others}", ""
        case "bonus_actions_refilled":
            return None, ""
        case "combatant_left":
            return f"{n(e['who'])} leaves the fight ({e.get('reason')})", ""
        case "fight_ended":
            side = f": {e['side']}" if e.get("side") else ""
            note = str(e.get("note") or "").strip()  # the GM's words (the GM's to see: views.py)
            return f"The fight is over ({e.get('reason')}{side})" + (f". The GM's note: {note}" if note else ""), \
                "THE END"
        case "seed_revealed":  # the seed itself only where the seat sees it (the GM's until published: views.py)
            seed = e.get("seed")
            if isinstance(seed, str) and seed:
                return f"The seed is revealed ({seed}): every seeded die rolled under it can be checked", ""
            return ("The seed is revealed to the GM: every seeded die rolled under it can be checked with the log "
                    "once the GM publishes it (the seed comes with it)"), ""
        case "seed_committed":
            return ("The revealed seed is spent (C42): the dice from here on come from a fresh seed, committed to "
                    "now and revealed in its turn"), ""
        case "combatant_joined":
            sheet = e.get("sheet") or {}
            return f"{sheet.get('name', sheet.get('id', 'someone'))} joins ({sheet.get('side', '')})", ""
        case "fight_started":
            return f"The fight begins{': ' + str(e['title']) if e.get('title') else ''}", ""
    return None, ""


_TITLES = {"roll_initiative": "Initiative", "end_turn": "End of turn", "apply_condition": "A condition",
           "clear_condition": "A condition ends", "undo": "Undo", "redo": "Redo", "reveal_seed": "The seed",
           "end_fight": "The GM ends the fight", "static_check": "A check", "contest": "A contest", "draw": "Draw",
           "disengage": "Disengage", "engage": "Positions", "leave_fight": "Leaving", "begin_ambush": "Ambush",
           "agree_initiative": "Initiative", "roll_off": "Roll-off", "start_fight": "The fight",
           "join": "A combatant joins"}


def _kind_of(command: dict[str, Any] | None) -> str:
    return str((command or {}).get("command", ""))


#: Said after a player's own combatant's command the GM gave (the GM may give any seat's: docs/server.md).
GM_GAVE = " (given by the GM)"

#: The commands that answer inside an action (a window, a decision point): their first line says the answer.
_ANSWERS = frozenset({"answer_active_defense", "react", "pass_reaction", "answer_catch", "answer_decision",
                      "route_damage", "choose_will_conversion"})


def _actor(command: dict[str, Any]) -> str | None:
    """The combatant a player's command (as the scenario vocabulary writes it) acts for; None for a GM's."""
    field_name = PLAYER_COMMANDS.get(str(command.get("command")))
    return None if field_name is None else str(command.get(field_name))


def story(seen: Iterable[SeenEvent], names: Names, gear: Gear | None = None,
          felt: Mapping[int, Sequence[tuple[str, int, int]]] | None = None,
          own: Collection[str] | None = None) -> list[StoryCard]:
    """The cards of the events as one seat saw them, in the order of their first event; ``names``: the combatants'
    names the seat sees, ``gear``: its own combatants' weapons and shields by their sheets' names (a line names a
    weapon only where the seat sees it, which is its wielder's seat); ``felt``: its own combatants' HP before and
    after each batch it saw only in part (``{batch: [(who, before, after)]}``, its own state at those heads), said
    where the events it saw do not say it (an attack by a hidden combatant: "Kael Arden takes damage: 24 → 9 HP");
    ``own``: the combatants whose commands the seat sees whole (None: every one's, the GM's), which a command's
    card says what it chose of (:func:`_headline`)."""
    gear = gear or {}
    abilities: dict[tuple[str, str], str] = {}  # the abilities of the sheets the seat sees, by (owner, id): names
    owing: dict[tuple[str, str], str] = {}  # their deferred costs in words (C41), by (owner, id)
    dying: set[str] = set()  # those the seat saw made Dying at some point (C36)
    hp_seen: dict[tuple[int, str], Any] = {}  # the last HP the seat saw a combatant's change to, in a batch
    cards: list[StoryCard] = []
    by_action: dict[int, StoryCard] = {}
    by_batch: dict[int, StoryCard] = {}
    undos: dict[int, tuple[int, int, str]] = {}
    undo_cards: dict[int, int] = {}  # an undo's `undone` seq: its card's number (its command's seq)
    brought: tuple[int, int, str] | None = None  # the range (and reason) a redo brings back
    reactions: dict[int, tuple[int, str, str]] = {}  # a reaction's action: the action it answers, who, what
    changes: list[tuple[int, str, str, bool]] = []  # the conditions seen applied (True) and cleared: seq, who, which
    sides: dict[Any, tuple[str, str]] = {}  # an action's attacker and target, or saver and caller
    primaries: dict[Any, int] = {}  # how many primary dice an action's hit rolled, where the seat sees them
    healing = _Healing()  # the heals of the abilities used or answered with, as the seat sees them (C36, C37)
    rolled: dict[Any, str] = {}  # an action's (or a condition's tick's: None) damage roll not yet dealt: "d6", "2d6"
    defended: dict[Any, str] = {}  # an action's Active Defense as the seat saw it chosen: "Vesh's Dodge"
    reasons: dict[int, tuple[str, str]] = {}  # a batch's GM condition command as the seat sees it: whom, the reason
    inits: dict[int, list[tuple[str, dict[str, Any]]]] = {}  # a batch's initiatives as the seat sees them (C19)
    tied: dict[int, set[str]] = {}  # a batch's combatants still tied after the AGI bonus (C19)
    by_counter: dict[int, dict[str, Any]] = {}  # every roll the seat saw, by its counter: what a reroll replaced (C39)
    standing: set[int] = set()  # the batches of a stand_up: their Movement Action is standing up (C20, C28)
    gm_ends: set[int] = set()  # the batches of the GM's end_fight: any other end is the engine's (C33), its note too
    titles: dict[int, str] = {}  # an action's decision point's title, where the seat sees it (an ability's name)
    bonuses: dict[str, dict[str, int]] = {}  # the attribute bonuses of the sheets the seat sees, by owner
    gm_answered: set[int] = set()  # the batches of answers the GM gave for the seat's own combatants
    joined: dict[str, None] = {}  # the sides of the combatants the seat saw join, in the order they joined
    for rec in seen:
        e = rec.event
        if e is None:  # withheld whole: the seat learns that something happened, not what
            continue
        kind = str(e.get("type", ""))
        action = e.get("action") if isinstance(e.get("action"), int) else None
        if kind == "command_issued":
            command = e.get("command") if isinstance(e.get("command"), dict) else None
            headline = _headline(command, names, gear, own, abilities)
            if own is not None and command and e.get("by") == "gm" and _actor(command) in own:
                headline += GM_GAVE  # the seat's own combatant's command, given by the GM (a player saw an answer
                if command.get("command") in _ANSWERS:  # hers as if she had chosen it: a tester)
                    gm_answered.add(rec.batch)
            card = StoryCard(seq=rec.seq, kind=_kind_of(command), headline=headline, round=0)
            if command and command.get("command") in TOLD_REASONS and str(command.get("reason") or "").strip():
                reasons[rec.batch] = (str(command.get("who")), str(command["reason"]).strip())
            if command and command.get("command") == "stand_up":
                standing.add(rec.batch)
            if command and command.get("command") == "end_fight":
                gm_ends.add(rec.batch)
            by_batch[rec.batch] = card
            cards.append(card)
            card.seqs.append(rec.seq)
            card.batches.add(rec.batch)
            continue
        if kind == "combatant_joined":
            if isinstance(e.get("sheet"), dict) and e["sheet"].get("side"):
                joined.setdefault(str(e["sheet"]["side"]))
            abilities.update(_abilities_of(e.get("sheet")))
            owing.update(_deferred_of(e.get("sheet"), names))
            bonuses.update(_bonuses_of(e.get("sheet")))
        if bonuses and kind in _TOTALLED:
            e = _with_conditions(e, sides.get(action), bonuses)
        if kind == "initiative_rolled" and isinstance(e.get("check"), dict):
            inits.setdefault(rec.batch, []).append((str(e.get("who")), e["check"]))
        elif kind == "initiative_tied":
            tied.setdefault(rec.batch, set()).update(str(w) for w in e.get("group") or ())
        if kind == "undone":
            undos[rec.seq] = (int(e.get("from_seq", 0)), int(e.get("to_seq", 0)), str(e.get("reason") or ""))
            undo_cards[rec.seq] = rec.batch
        elif kind == "redone":
            brought = undos.pop(int(e.get("undo_seq", 0)), None)  # what the redo brings back, said on its card
        text, verdict = _line(kind, e, names, gear)
        if kind == "dice_rolled":
            text = _reroll_said(e, by_counter, names) or text
            by_counter[int(e.get("counter", 0))] = e
        if kind == "decision_opened" and action is not None and e.get("title") not in (None, "", UNNAMED_DECISION):
            titles[action] = str(e["title"])
        elif kind == "decision_answered" and action in titles and e.get("choice") in ("use", "pass"):
            # an ability's answer by its name, where the seat sees it (C38): "Ana uses Second Wind", not "Ana: use"
            text = (f"{_n(names, e.get('who'))} uses {titles[action]}" if e["choice"] == "use"
                    else f"{_n(names, e.get('who'))} lets {titles[action]} pass")
        if rec.batch in standing and kind in ("movement_declared", "moved"):  # a stand_up's Movement Action (C20)
            text, verdict = ((f"{_n(names, e.get('who'))} stands up from Prone (a Movement Action)", "")
                             if kind == "movement_declared" else (f"{_n(names, e.get('who'))} is on its feet",
                                                                  "STOOD UP"))
        if kind == "fight_ended" and text and rec.batch not in gm_ends:  # the engine's words on an end it made (C33)
            text = text.replace(". The GM's note: ", ": ", 1)
        if kind == "fight_ended" and text and e.get("side") and e.get("reason") in ("defeated", "yielded", "fled") \
                and len(left := [side for side in joined if side != e["side"]]) == 1 \
                and f"{left[0]} still standing" not in text:  # (the engine's end says so already, C33)
            # the side still standing, where the seat saw it join (a spectator read the side that lost alone: a
            # tester); a fight ends on such a reason when one side is left (C33), so it is the one
            text = text.replace("The fight is over (", f"The fight is over, {left[0]} won (", 1)
        if kind in ("condition_applied", "condition_cleared"):
            changes.append((rec.seq, str(e.get("who")), str(e.get("condition")), kind == "condition_applied"))
            if kind == "condition_applied" and e.get("condition") == "Dying":
                dying.add(str(e.get("who")))  # (whose held conditions are worth reading back at a hit)
            why = reasons.get(rec.batch)
            if text and why is not None and why[0] == str(e.get("who")):
                text = f"{text}: {why[1]}"  # the reason the GM gave for the table to see
            elif text and kind == "condition_applied" and str(e.get("reason", "")).endswith(DEFERRED_SOURCE):
                text = f"{text}: {e['reason']}"  # a deferred cost's (C41), as the seat may see it (views.py)
        elif kind == "active_defense_window_skipped" and (own is not None or "reason" not in e):
            # a player's seat: the defender made helpless, in the words of what it saw (C10, C36); else the
            # engine's reason where it is the defender's own seat's to see (views.py), else none
            bare = f"no Active Defense for {_n(names, e.get('defender'))}"
            text = _helpless_said(bare, str(e.get("defender")), changes, undos, names) or text
        if kind == "attack_declared" and action is not None:
            sides[action] = (str(e.get("attacker", "")), str(e.get("target", "")))
        elif kind == "save_called" and action is not None:
            sides[action] = (str(e.get("saver", "")), str(e.get("caller", "")))
        if kind == "active_defense_chosen" and action is not None:
            defended[action] = f"{_n(names, e.get('defender'))}'s {str(e.get('defense', '')).capitalize()}"
        if kind == "hit_determined" and isinstance((e.get("attack") or {}).get("primary_dice"), (list, tuple)):
            primaries[action] = len(e["attack"]["primary_dice"])
        healing.see(kind, e, action, sides.get(action))
        if healing.flat and text:  # a heal's flat amount, where the seat sees the sheet that writes it (C37)
            total = sum(d.get("face", 0) for d in e.get("dice") or () if isinstance(d, dict)) + healing.flat
            text = f"{text} + {healing.flat} flat = {total}"
        if kind == "dice_rolled" and e.get("purpose") == "damage":
            rolled[action] = _dice_said(e.get("dice"))
        if kind == "damage_resolved" and text and action in rolled and _own_dice(e):
            text = text.replace("on the primary dice", f"on {e['source']}'s {rolled.pop(action)}", 1)
        elif kind == "damage_resolved" and text and primaries.get(action) == 1:
            text = text.replace("on the primary dice", "on the primary die", 1)
        if kind == "damage_resolved" and text and e.get("resource") != "will" and str(e.get("target")) in dying \
                and "Dying" in _held(str(e.get("target")), changes, undos):  # no HP change is recorded at 0 (C36)
            text = f"{text}; {_n(names, e.get('target'))} is Dying: its HP stays at 0 (C36)"
        if kind == "hit_determined" and text and action in defended and not _terms_of(e.get("defense") or {}):
            total = (e.get("defense") or {}).get("total")  # the die is its roller's: the defense it came from is said
            text = text.replace(f"against defense {total}:", f"against defense {total} (with {defended[action]}):", 1)
        if kind == "attack_declared" and isinstance(e.get("reacting_to"), int) and action is not None:
            reactions[action] = (e["reacting_to"], _n(names, e.get("attacker")), str(e.get("reaction") or ""))
        if text and rec.batch in gm_answered:  # the answer's own line, the first of its batch: said the GM's
            gm_answered.discard(rec.batch)
            text += GM_GAVE
        cancelling = _cancelling(action, reactions, by_action) if kind == "action_cancelled" and action is not None \
            else []
        told = _cancelled(cancelling)
        if action is not None:
            found = by_action.get(action)
            if found is None:
                card = StoryCard(seq=rec.seq, kind="action", headline=text or "an action")
                by_action[action] = card
                batch_card = by_batch.get(rec.batch)
                if batch_card is not None and batch_card.kind != "action" and batch_card in cards \
                        and kind != "moment_reached":  # (a moment the command came to is a card of its own: an
                    # end of turn's save and tick stay under it, not under the next turn's start: found by a tester)
                    cards.remove(batch_card)  # the command's card is the action's: what came before it leads
                    if batch_card.headline.endswith(GM_GAVE) and not card.headline.endswith(GM_GAVE):
                        card.headline += GM_GAVE  # the action the GM declared for the seat's own combatant (an
                        # attack the GM gave for a player's read as hers: a tester)
                    card.seq, card.lines, card.news = batch_card.seq, list(batch_card.lines), list(batch_card.news)
                    card.seqs, card.batches = list(batch_card.seqs), set(batch_card.batches)
                    card.rolled = batch_card.rolled
                cards.append(card)
                by_batch[rec.batch] = card
            else:
                card = found
                batch_card = by_batch.get(rec.batch)
                if batch_card is not None and batch_card is not card and batch_card.kind != "action":
                    if batch_card in cards:  # the answer's command card is the action's card now
                        cards.remove(batch_card)
                    card.lines += batch_card.lines
                    card.news += batch_card.news
                    card.rolled = card.rolled or batch_card.rolled
                by_batch[rec.batch] = card
        else:
            card = by_batch.get(rec.batch) or _loose(cards, by_batch, rec)
        card.seqs.append(rec.seq)
        card.batches.add(rec.batch)
        card.rolled = card.rolled or kind == "dice_rolled"
        if (action is None and kind == "damage_resolved") or kind == "save_resolved":
            _condition_rolls(card.lines, kind, e, names)  # a save called in an action too: its caller's die was
            # "Brin's save" to Brin's own seat (found by a tester)
        if kind == "attack_declared" and action in reactions:
            card.answered = by_action.get(reactions[action][0])
        owed = owing.get((str(e.get("who")), str(e.get("ability") if kind == "ability_used" else e.get("decision"))))
        if owed and (kind == "ability_used" or (kind == "decision_answered" and e.get("choice") == "use")):
            told = [*told, text, f"owed: {owed}"] if text and text != card.headline else [*told, f"owed: {owed}"]
        if told:
            card.lines += told
            # what the reactions that cancelled an action did is announced with it (it said "CANCELLED: ..." and
            # no word of the Interrupt's damage: a tester)
            card.news += [line for reacted, _who, _kind in cancelling for line in reacted.news
                          if line not in card.news]
        elif text and text != card.headline:
            card.lines.append(text)
            if kind in _NEWS:
                card.news.append(text.removesuffix(GM_GAVE))
            if kind in _OUTCOME or (kind == "decision_answered" and e.get("choice") == "use"):
                card.outcome.append(text)  # an answer used is of the outcome: the damage after it is its (a tester)
            if kind == "hit_determined" and e.get("hit") and e.get("crit"):
                card.lines.append(_crit_said(e))
                card.outcome.append(card.lines[-1])
            if kind == "initiative_order_set":
                card.lines += _ties_by_agi(inits.get(rec.batch, []), tied.get(rec.batch, set()), e, names)
        if verdict == "CAUGHT":  # a caught weapon is no hit (C22): the card's verdict, its sides the attack's
            card.verdict = verdict
        elif verdict and (not card.verdict or (kind in ("hit_determined", "save_resolved") and action is not None
                                                and card.verdict != "CANCELLED")):
            # a save or hit of the card's own action decides it; a condition's save at a turn's end in the same
            # batch (action None) does not ("SAVED" led a cancelled attack's card: found by a tester), nor
            # anything after the action was cancelled
            card.verdict = verdict
            card.by, card.against = sides.get(action, ("", "")) if kind in ("hit_determined", "save_resolved") \
                else ("", "")
        if kind == "undone":
            card.headline = f"Undo: {text_of_reason(e)}"
        elif kind == "redone":  # its reason, as the undo's, and what it brings back (it read "Redo" alone)
            card.headline = f"Redo: {text_of_reason(e)}"
            undo_seq = int(e.get("undo_seq", 0))  # the undo's `undone` event: its card is numbered by its command
            back = f" (#{brought[0]} to #{brought[1]})" if brought is not None else ""
            undo_at = f"the undo at #{undo_cards.get(undo_seq, undo_seq)}"
            words = "; ".join(f"#{c.seq} {card_said(c)}" for c in cards if brought is not None and c is not card
                              and brought[0] <= c.seq <= brought[1])
            # what it brings back in words, as the undo's preview said what it would take (a GM could not tell at a
            # glance that Kael was Prone again: a tester); the seqs where the seat is shown no card of them
            card.lines.append(f"brings back what {undo_at} took back{back}")
            if words:
                card.lines.append(f"back: {words}")
        if kind == "resource_changed" and e.get("resource") == "hp":
            hp_seen[rec.batch, str(e.get("who"))] = e.get("after")
    for action, whom in healing.finish():
        if action in by_action:
            by_action[action].lines.append(_at_full(None if whom is None else _n(names, whom),
                                                    healing.sheet_hp.get(str(whom))))
    for batch, hurt in (felt or {}).items():
        said = [_felt(_n(names, who), hp_seen.get((batch, who), before), after) for who, before, after in hurt
                if hp_seen.get((batch, who), before) != after]
        told_in = by_batch.get(batch)
        if told_in is not None:
            told_in.lines += said
        elif said:  # the command too was withheld whole: a card of its own, at the batch's first seq
            card = StoryCard(seq=batch, kind="unseen", headline=said[0], lines=said[1:], seqs=[batch],
                             batches={batch})
            cards.insert(next((i for i, c in enumerate(cards) if c.seq > batch), len(cards)), card)
    _tell_reactions(cards)
    _strike(cards, undos)
    for card in cards:
        if not card.headline and card.lines:
            card.headline = card.lines.pop(0)
    return [c for c in cards if c.lines or c.kind in ("undo", "redo") or c.headline]


def _reaction_line(reaction: StoryCard) -> str:
    """A reaction's outcome as the card of the action it answered tells it, at its window: ``MISS: Interrupt: Sly
    attacks Tarn (#59)``, the reaction's own card named by its seq."""
    return f"{reaction.verdict}: {reaction.headline} (#{reaction.seq})"


def _tell_reactions(cards: list[StoryCard]) -> None:
    """Each resolved reaction (an Interrupt, an Attack of Opportunity) told in the card of the action it answered,
    after the line of its window, in the order it came: the action's card went from the window to its own hit, and
    read newest first the reaction's own card stood above it, as if it came after (a tester). The reaction keeps its
    own card, with its dice and lines; a cancelled action's card tells it already (:func:`_cancelled`)."""
    told: dict[int, set[str]] = {}  # the reaction lines told so far in each action's card (by the card's id)
    for reaction in cards:
        action = reaction.answered
        if action is None or not reaction.verdict or any(reaction.headline in line for line in action.lines):
            continue
        windows = [i for i, line in enumerate(action.lines) if _WINDOW_LINE.search(line)]
        earlier = sum(1 for other in cards if other.answered is action and other.verdict and other.seq < reaction.seq)
        at = windows[min(earlier, len(windows) - 1)] + 1 if windows else 0  # the n-th reaction: the n-th window
        said = told.setdefault(id(action), set())
        while at < len(action.lines) and action.lines[at] in said:  # after those told at that window before it
            at += 1  # (two Interrupts answering one window read in the wrong order: a tester)
        line = _reaction_line(reaction)
        action.lines.insert(at, line)
        said.add(line)


#: The dice of a heal the seat knows by its roll alone (it does not see the sheet that writes it): any roll.
_ANY_DICE = (0, 0)

#: A heal an ability writes, as a seat knows it: to whom (None: not known here), the count and sides of its dice
#: (None: a flat amount alone; :data:`_ANY_DICE`: known by its roll alone), the save's branch it is written in, and
#: its flat amount (None: the seat does not see the sheet that writes it).
_AHeal = tuple[str | None, tuple[int, int] | None, str | None, int | None]


class _Healing:
    """The heals of the abilities an action uses or answers with (C37, C38), as one seat sees them, to say each
    that restored nothing (C36: never above the sheet's HP, so no HP change is recorded) and to whom: its own
    recipient (``to``: the owner or the target, not the ability's target as such), as omen_replay/explain.py says
    it. A heal's recipient and whether it rolls are read from the sheet that writes the ability, where the seat
    sees it (its owner's seat, the GM); elsewhere a heal is known by its roll alone, and its recipient is named only
    where the ability went on its user (then the owner and the target are one)."""

    def __init__(self) -> None:
        self.sheet_hp: dict[str, int] = {}  # the sheets' HP the seat sees (its own combatants', all to the GM)
        self.written: dict[tuple[str, str], Any] = {}  # the abilities' effects of the sheets the seat sees
        self.heals: dict[Any, list[_AHeal]] = {}  # an action's heals
        # not yet met: (to whom, (count, sides) of its dice or None, the save's branch it is written in)
        self.waiting: dict[Any, str | None] = {}  # an action's heal just rolled: to whom (restored in the next event)
        self.none: list[tuple[Any, str | None]] = []  # (action, to whom): the heals seen to restore nothing
        self.last: dict[Any, str] = {}  # an action's last event seen
        self.flat: int | None = None  # the flat amount of the heal whose dice were the last event seen, if known

    def see(self, kind: str, e: dict[str, Any], action: Any, parties: tuple[str, str] | None) -> None:
        """Follow one event the seat sees (``parties``: its action's attacker and target, or saver and caller)."""
        self.flat = None
        if kind == "combatant_joined":
            self._joined(e.get("sheet"))
        if action is None:
            return
        if action in self.waiting:  # a heal rolled restores HP in the event right after its roll, or none
            whom = self.waiting.pop(action)
            if not self._gain(kind, e, action, whom):
                self.none.append((action, whom))
        elif kind == "resource_changed" and e.get("resource") == "hp":
            flat = next((h for h in self.heals.get(action, []) if h[1] is None and h[0] in (None, e.get("who"))), None)
            if flat is not None and self._gain(kind, e, action, flat[0]):
                self.heals[action].remove(flat)  # a heal of a flat amount alone rolls nothing
        match kind:
            case "ability_used":
                self._use(action, str(e.get("who")), e.get("ability"), e.get("target"))
            case "decision_answered" if e.get("choice") == "use":
                who = str(e.get("who"))
                other = None if parties is None else parties[1] if who == parties[0] else parties[0]
                self._use(action, who, e.get("decision"), other, answered=True)
            case "save_resolved":  # the branch not taken heals no one
                dropped = "on_failure" if e.get("success") else "on_success"
                self.heals[action] = [h for h in self.heals.get(action, []) if h[2] != dropped]
            case "dice_rolled" if e.get("purpose") == "healing":
                self._rolled(action, e.get("dice"))
        self.last[action] = kind

    def finish(self) -> list[tuple[Any, str | None]]:
        """Each heal seen to restore nothing, as (action, to whom: None where the seat cannot tell), in order: those
        rolled, then those of a flat amount alone never met by an HP change."""
        for action, whom in self.waiting.items():
            self.none.append((action, whom))
        self.waiting = {}
        self.none += [(action, h[0]) for action, heals in self.heals.items() for h in heals if h[1] is None]
        self.heals = {}
        return self.none

    def _joined(self, sheet: Any) -> None:
        if not isinstance(sheet, dict):
            return
        if isinstance(sheet.get("hp"), int):
            self.sheet_hp[str(sheet.get("id"))] = sheet["hp"]
        for ability in sheet.get("abilities") or ():
            if isinstance(ability, dict) and "id" in ability:
                self.written[str(sheet.get("id")), str(ability["id"])] = ability.get("effects") or ()

    def _use(self, action: Any, who: str, ability: Any, target: Any, answered: bool = False) -> None:
        """An ability used (on ``target``) or answered with (``target``: the other party of the action, if any):
        its heals, each with its own recipient, where the seat sees the sheet that writes it; else one unknown
        heal, met by its roll (on oneself, its recipient is its user either way)."""
        effects = self.written.get((who, str(ability)))
        target = str(target) if isinstance(target, str) else None
        if effects is None:
            self.heals.setdefault(action, []).append((None if answered or target != who else who, _ANY_DICE, None,
                                                      None))
            return
        found: list[_AHeal] = []
        _heals_in(effects, who, target, None, found)
        self.heals.setdefault(action, []).extend(found)

    def _rolled(self, action: Any, dice: Any) -> None:
        heals = self.heals.get(action, [])
        size = (len(dice), dice[0].get("sides")) if isinstance(dice, (list, tuple)) and dice \
            and isinstance(dice[0], dict) else None
        found = next((h for h in heals if h[1] is not None and (size is None or h[1] in (size, _ANY_DICE))), None)
        if found is not None and found[1] != _ANY_DICE:
            heals.remove(found)
        self.flat = None if found is None else found[3]
        self.waiting[action] = None if found is None else found[0]

    def _gain(self, kind: str, e: dict[str, Any], action: Any, whom: str | None) -> bool:
        """Whether this event restores HP to ``whom`` (None: to anyone): an HP change up, or one whose numbers the
        seat does not see that no damage came before."""
        if kind != "resource_changed" or e.get("resource") != "hp" or whom not in (None, e.get("who")):
            return False
        if isinstance(e.get("before"), int) and isinstance(e.get("after"), int):
            return bool(e["after"] > e["before"])
        return self.last.get(action) != "damage_resolved"


def _heals_in(value: Any, who: str, target: str | None, branch: str | None,
              found: list[_AHeal]) -> None:
    """The heals an ability's effects write, in written order, as a sheet's JSON holds them (its defaults left
    out: ``to`` the target, a die's ``count`` 1): to whom (``to = "actor"``: ``who``; else ``target``), the count
    and sides of its dice (None: a flat amount alone) and the save's branch it is written in."""
    if isinstance(value, dict) and value.get("kind") == "heal":
        dice = value.get("dice")
        size = (int(dice.get("count", 1)), int(str(dice.get("die", "d0"))[1:] or 0)) if isinstance(dice, dict) \
            else None
        flat = value.get("flat", 0)
        found.append((who if value.get("to") == "actor" else target, size, branch, flat if isinstance(flat, int)
                      else None))
    elif isinstance(value, dict):
        for key, inner in value.items():
            _heals_in(inner, who, target, key if key in ("on_success", "on_failure") else branch, found)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            _heals_in(inner, who, target, branch, found)


def _condition_rolls(lines: list[str], kind: str, e: dict[str, Any], names: Names) -> None:
    """The dice lines before a condition's damage as it ticks, or a save (its save-ends save outside any action, C40,
    or a save an effect calls in one, C15), said as that condition's or effect's: "Kael Arden's Burning damage: 3
    (d4)" (it read "Kael Arden's damage", as if Kael dealt it: a tester), "Kael Arden's save against Poisoned: 6
    (d6)", "Vesh's die against Kael Arden's save (Poisoned): 1 (d8)" (it read "Vesh's save", as if Vesh saved)."""
    def named(who: Any, purpose: str, said: str) -> None:
        start = f"{_n(names, who)}'s {purpose}: "
        for i in range(len(lines) - 1, -1, -1):
            if lines[i].startswith(start):
                lines[i] = f"{_n(names, who)}'s {said}: {lines[i][len(start):]}"
                return

    if kind == "damage_resolved" and e.get("source"):
        named(e.get("target"), "damage", f"{e['source']} damage")
    elif kind == "save_resolved" and isinstance(e.get("saver"), dict) and isinstance(e.get("opposing"), dict):
        condition = str(e.get("effect") or "")
        condition = "" if condition == UNNAMED_EFFECT else condition  # "Vesh's save (a save)" says nothing more
        saver = e["saver"].get("roller")
        named(e["opposing"].get("roller"), "save",
              f"die against {_n(names, saver)}'s save" + (f" ({condition})" if condition else ""))
        if condition:
            named(saver, "save", f"save against {condition}")


def _bonuses_of(sheet: Any) -> dict[str, dict[str, int]]:
    """The attribute bonuses of a joined sheet as the seat sees it (whole to its owner's seat and the GM; to the
    others, none), by owner: what a total of its own is split against (:func:`_with_conditions`)."""
    if not isinstance(sheet, dict) or not isinstance(sheet.get("attributes"), dict):
        return {}
    return {str(sheet.get("id")): {str(k): int(v.get("bonus", 0)) for k, v in sheet["attributes"].items()
                                   if isinstance(v, dict) and isinstance(v.get("bonus", 0), int)}}


#: The events that hold totals of rolls (C1, C5, C10, C15): their terms split the conditions' part of a bonus.
_TOTALLED = frozenset({"hit_determined", "save_resolved", "static_check_resolved", "contest_resolved",
                       "initiative_rolled", "surprise_determined"})

#: The totals of an event whose roller is a party of its action, not named in the total (C5, C10): by field.
_PARTY_TOTALS = {"attack": 0, "defense": 1}


def _with_conditions(e: dict[str, Any], parties: tuple[str, str] | None,
                     bonuses: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """``e`` with each total the seat sees the terms of, whose roller's sheet it holds, marked with what conditions
    changed its attribute bonus by (``_conditions``: the effective bonus less the sheet's, C28; the same for every
    attribute): its terms then say the sheet's bonus and the conditions' apart ("2 RES die + 2 RES bonus - 1
    conditions": a player read "+ 1 RES bonus" against a sheet saying +2, Poisoned's -1 folded in: a tester)."""
    marked: dict[str, Any] | None = None
    for key, total in e.items():
        if not isinstance(total, dict):
            continue
        roller = total.get("roller") if key not in _PARTY_TOTALS or parties is None else parties[_PARTY_TOTALS[key]]
        sheet = bonuses.get(str(roller)) if roller is not None else None
        effective, attribute = ((total.get("res_bonus"), "RES") if "res_bonus" in total
                                else (total.get("attribute_bonus"), total.get("attribute")))
        if sheet is None or not isinstance(effective, int) or str(attribute) not in sheet:
            continue
        shift = effective - sheet[str(attribute)]
        if shift:
            marked = marked if marked is not None else dict(e)
            marked[key] = {**total, "_conditions": shift}
    return e if marked is None else marked


def _abilities_of(sheet: Any) -> dict[tuple[str, str], str]:
    """The abilities a joined sheet writes out, as the seat sees it (whole to its owner's seat and the GM; its name
    and side alone to the others: none), by (owner, id): their names."""
    if not isinstance(sheet, dict) or not isinstance(sheet.get("abilities"), (list, tuple)):
        return {}
    return {(str(sheet.get("id")), str(a["id"])): str(a.get("name") or a["id"]) for a in sheet["abilities"]
            if isinstance(a, dict) and "id" in a}


def _deferred_of(sheet: Any, names: Names) -> dict[tuple[str, str], str]:
    """The deferred costs (C41) of the abilities a joined sheet lists (written out, or shipped by id), as the seat
    sees the sheet (whole to its owner's seat and the GM; to the others, none), in words, by (owner, id)."""
    from omen_core.content import SHIPPED_ABILITIES, Ability
    from omen_core.decisions import deferred_words

    if not isinstance(sheet, dict) or not isinstance(sheet.get("abilities"), (list, tuple)):
        return {}
    owner = str(sheet.get("id"))
    found: dict[tuple[str, str], str] = {}
    for entry in sheet["abilities"]:
        try:
            ability = msgspec.convert(entry, Ability) if isinstance(entry, dict) else SHIPPED_ABILITIES.get(entry)
        except msgspec.ValidationError:
            continue
        if ability is not None and ability.deferred is not None:
            found[owner, ability.id] = deferred_words(ability.deferred, _n(names, owner))
    return found


def _at_full(name: str | None, hp: int | None) -> str:
    """A heal that restored nothing: its recipient was at the sheet's HP already (C36), with the number where the
    seat sees the sheet; ``name`` None: a recipient the seat cannot tell."""
    if name is None:
        return "the heal restores none: the one it heals is at the sheet's HP already"
    return (f"{name}'s HP {hp} → {hp}: at the sheet's HP already, the heal restores none" if hp is not None
            else f"{name}'s HP: at the sheet's HP already, the heal restores none")


def _felt(name: str, before: Any, after: int) -> str:
    """A change of one's own HP that the events one saw do not tell, said with no more than the HP itself."""
    return f"{name} {'takes damage' if not isinstance(before, int) or after < before else 'regains HP'}: " \
           f"{before} \u2192 {after} HP"


#: The lines that tell what came of an action (a reaction's, told again on the card of the action it cancelled): the
#: defender's answer, the hit (and its crit line), the damage and what it did.
_OUTCOME = frozenset({"active_defense_chosen", "active_defense_declined", "active_defense_window_skipped",
                      "hit_determined", "damage_resolved", "resource_changed", "condition_applied", "combatant_left"})


def _plus(value: int) -> str:
    return f"+{value}" if value >= 0 else f"\u2212{-value}"


def _ties_by_agi(rolled: Sequence[tuple[str, dict[str, Any]]], still: set[str], e: dict[str, Any],
                 names: Names) -> list[str]:
    """The initiative ties the AGI bonus settled (C19: equal totals, the higher AGI bonus first), one line each, as
    the order says them: "Kael Arden and Vesh the Cinder-Hand tied at 3: Vesh the Cinder-Hand goes first, on the
    higher AGI bonus (+2 against +1, C19)" (the bonuses where the seat sees every one's terms). Ties still open
    after the bonus (a roll-off or an agreement settles them) are not said here."""
    order = [str(w) for w in e.get("order") or ()]
    by_total: dict[Any, list[tuple[str, dict[str, Any]]]] = {}
    for who, check in rolled:
        if who not in still and who in order:
            by_total.setdefault(check.get("total"), []).append((who, check))
    lines = []
    for total, group in by_total.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda g: order.index(g[0]))
        bonuses = [b for g in group if isinstance(b := g[1].get("attribute_bonus"), int)]
        said = (" (" + " against ".join(_plus(b) for b in bonuses) + ", C19)" if len(bonuses) == len(group)
                else " (C19)")
        lines.append(f"{' and '.join(_n(names, g[0]) for g in group)} tied at {total}: {_n(names, group[0][0])} goes "
                     f"first, on the higher AGI bonus{said}")
    return lines


_REACTIONS = {"interrupt": "Interrupt", "attack_of_opportunity": "Attack of Opportunity"}


def _cancelled(cancelling: list[tuple[StoryCard, str, str]]) -> list[str]:
    """Why an action is cancelled, from the events the seat saw (C24: an Interrupt that hits cancels the Action it
    answered, which is still spent): each reaction to it that hit (:func:`_cancelling`), told with its hit and what
    it did, then the line that says so; none when the seat saw no reaction to it hit (the GM's reason says why
    then, to the GM)."""
    told: list[str] = []
    for card, who, kind in cancelling:
        what = _REACTIONS.get(kind, kind.replace("_", " "))
        spent = "; its Action is still spent" if kind == "interrupt" else ""
        told += [card.headline, *card.outcome,
                 f"the action is cancelled: {who}'s {what} hit{' (C24)' if kind == 'interrupt' else ''}{spent}"]
    return told


def _cancelling(action: int, reactions: Mapping[int, tuple[int, str, str]],
                by_action: Mapping[int, StoryCard]) -> list[tuple[StoryCard, str, str]]:
    """The cards of the reactions to ``action`` that hit (C24), each with its attacker's name and its kind, in the
    order they came: what cancelled it, as the seat saw it."""
    found = []
    for reaction, (answered, who, kind) in reactions.items():
        card = by_action.get(reaction)
        if answered == action and card is not None and card.verdict.startswith("HIT"):
            found.append((card, who, kind))
    return found


#: The conditions that leave a defender no base defense die and no Active Defense, and their rule (C10, C36).
_HELPLESS = {"Dying": "C36", "Incapacitated": "C10", "Paralysed": "C10"}


def _helpless_said(line: str, who: str, changes: list[tuple[int, str, str, bool]],
                   undos: Mapping[int, tuple[int, int, str]], names: Names) -> str:
    """A skipped Active Defense window's line with why, where the seat saw the defender made helpless (C10, C36:
    Paralysed, Incapacitated, Dying, each applied and not cleared nor undone since); "" when it saw no such
    condition (the engine's reason is the GM's to see)."""
    held = _held(who, changes, undos)
    found = [c for c in _HELPLESS if c in held]
    if not found:
        return ""
    return (f"{line}: {_n(names, who)} is {' and '.join(found)}: no base defense die and no Active Defense "
            f"({_HELPLESS[found[0]]})")


def _held(who: str, changes: list[tuple[int, str, str, bool]], undos: Mapping[int, tuple[int, int, str]]
          ) -> frozenset[str]:
    """The conditions the seat saw applied to ``who`` and not cleared nor undone since."""
    held: dict[str, bool] = {}
    for seq, whom, condition, applied in changes:
        if whom == who and not any(a <= seq <= b for a, b, _r in undos.values()):
            held[condition] = applied
    return frozenset(c for c, on in held.items() if on)


def text_of_reason(e: dict[str, Any]) -> str:
    """An undo's reason as the card says it."""
    reason = str(e.get("reason") or "").strip()
    return reason or "no reason given"


def _loose(cards: list[StoryCard], by_batch: dict[int, StoryCard], rec: SeenEvent) -> StoryCard:
    """The card of an event whose command this seat did not see (the set-up's own events)."""
    card = StoryCard(seq=rec.seq, kind=rec.type or "", headline="")
    by_batch[rec.batch] = card
    cards.append(card)
    return card


def _headline(command: dict[str, Any] | None, names: Names, gear: Gear | None = None,
              own: Collection[str] | None = None, abilities: Mapping[tuple[str, str], str] | None = None) -> str:
    """A command's card's headline, in words, from the command as the seat sees it (an action's card takes its
    first event's line instead, where the seat sees it): ``Kael Arden chooses Block with Warden's kite shield``,
    ``End of turn: Kael Arden``. ``own``: the combatants whose commands the seat sees whole (None: every one, the
    GM's); another's answer is said without what it chose, which the seat sees nothing of."""
    kind = _kind_of(command)
    if not command:
        return ""
    who = next((command[k] for k in ("who", "attacker", "defender", "caller") if isinstance(command.get(k), str)),
               None)
    if kind in _SAID and who is not None:
        whole = own is None or who in own
        return _SAID[kind](command if whole else {}, _n(names, who), _Said(str(who), gear or {}, abilities or {}))
    title = _TITLES.get(kind, kind.replace("_", " ").capitalize())
    return f"{title}: {_n(names, who)}" if who and kind not in ("undo", "redo") else title


@dataclass(frozen=True)
class _Said:
    """What a headline names beside the command: its actor's id, its gear and abilities by their sheets' names."""

    who: str
    gear: Gear
    abilities: Mapping[tuple[str, str], str]


def _defense_said(c: dict[str, Any], name: str, said: _Said) -> str:
    if "defense" not in c:
        return f"{name} declines an Active Defense" if c else f"{name} answers an Active Defense window"
    defense = str(c.get("defense") or "").capitalize()
    weapon = f" with {_gear(said.gear, said.who, c['weapon'])}" if c.get("weapon") else ""
    return f"{name} chooses {defense}{weapon}"


def _decision_said(c: dict[str, Any], name: str, said: _Said) -> str:
    ability = said.abilities.get((said.who, str(c.get("decision"))))
    if ability and c.get("choice") == "use":
        return f"{name} uses {ability}"
    if ability and c.get("choice") == "pass":
        return f"{name} lets {ability} be"
    return f"{name} answers a decision"


#: The headline of a command an action's card may not take over (its events withheld from the seat: an attack by a
#: hidden combatant), by command: from the command (``{}`` where the seat sees its name alone) and its actor's name.
_SAID: dict[str, Callable[[dict[str, Any], str, _Said], str]] = {
    "answer_active_defense": _defense_said,
    "answer_catch": lambda c, name, _s: (f"{name} answers a Catch window" if "catch" not in c
                                          else f"{name} {'catches it' if c['catch'] else 'lets it hit'}"),
    "choose_will_conversion": lambda c, name, _s: (f"{name} chooses between Will and HP" if "convert" not in c
                                                   else f"{name} takes it on {'Will' if c['convert'] else 'HP'}"),
    "react": lambda c, name, s: f"{name} strikes in reaction" + (
        f" with {_gear(s.gear, s.who, c['weapon'])}" if c.get("weapon") else ""),
    "pass_reaction": lambda c, name, _s: f"{name} lets the chance to react pass",
    "route_damage": lambda c, name, _s: f"{name} chooses the die that feeds damage",
    "answer_decision": _decision_said,
    "declare_attack": lambda c, name, _s: f"{name} attacks",
    "use_ability": lambda c, name, _s: f"{name} uses an ability",
    "move": lambda c, name, _s: f"{name} moves",
    "stand_up": lambda c, name, _s: f"{name} stands up",
    "call_save": lambda c, name, _s: f"{name} calls for a save",
}


def _strike(cards: list[StoryCard], undos: Mapping[int, tuple[int, int, str]]) -> None:
    for _at, (first, last, reason) in undos.items():
        for card in cards:
            if card.kind in ("undo", "redo"):
                continue
            if card.seqs and first <= card.seqs[0] <= last:
                card.struck, card.undone = True, reason or "no reason given"


def top_card(cards: list[StoryCard], last_batch: int | None) -> StoryCard | None:
    """The card of the last command: the action it belongs to (of several, as when an Interrupt resolves and the
    action it answered goes on, the one that ended last), or, after an undo, the card it struck through (its reason
    said; of a reaction struck with the action it answered, the action's: the undo's preview named it, and the top
    card named the Interrupt: found by a tester), after a redo the card it brought back. An action resolved after a
    reaction to it resolved, in an earlier command, still says the reaction's outcome first (the card said "Interrupt
    window for Vesh" and nothing of the Interrupt's miss: a tester)."""
    if not cards:
        return None
    touched = [c for c in cards if last_batch is not None and last_batch in c.batches]
    last: StoryCard = max(touched, key=lambda c: max(c.seqs, default=c.seq)) if touched else cards[-1]
    if last.kind == "undo":
        struck = [c for c in cards if c.struck]
        if struck:
            target = struck[-1]
            if target.answered is not None and target.answered.struck:
                target = target.answered
            return StoryCard(seq=target.seq, kind=target.kind, headline=target.headline, lines=target.lines,
                             verdict=target.verdict, struck=True, undone=target.undone, seqs=target.seqs,
                             batches=target.batches)
    reaction = next((c for c in (cards if last.verdict else touched) if c is not last and c.answered is last
                     and c.verdict and c.headline not in last.lines), None)  # a cancelled action's card tells its
    return last if reaction is None else _with_reaction(reaction, last)  # reaction already


#: A card's line telling a reaction window opening (an Interrupt's, an Attack of Opportunity's, C23, C24).
_WINDOW_LINE = re.compile(r"\b(Interrupt|Attack of opportunity|reaction) window\b", re.I)


def _with_reaction(reaction: StoryCard, action: StoryCard) -> StoryCard:
    """The top card when the last command resolved a reaction (an Interrupt, an Attack of Opportunity) and the action
    it answered went on: the reaction's outcome with the action, whole. The reaction leads while the action has no
    verdict yet (it waits for an Active Defense: "MISS Interrupt: Brin attacks Vesh", then the attack); once the
    action too is resolved, the action leads. Either way the reaction is told where it came: after the line of
    the window it answered ("Attack of opportunity window for Skarn"), before what the action did next (it led the
    lines, and the window read after its own result: a tester); first, where no such line is. Its news (what the
    announcement says after the headline) is the reaction's, then the action's."""
    said = _reaction_line(reaction)
    if said in action.lines:  # the action's card tells it at its window already (_tell_reactions): told whole there
        at = action.lines.index(said)
        rest = action.lines[at + 1:]
    else:
        at = next((i + 1 for i, line in enumerate(action.lines) if _WINDOW_LINE.search(line)), 0)
        rest = action.lines[at:]
    if action.verdict:
        lead = action
        lines = [*action.lines[:at], f"{reaction.verdict}: {reaction.headline}", *reaction.outcome, *rest]
    else:
        lead = reaction
        lines = [*action.lines[:at], *reaction.lines, f"the action it answered goes on: {action.headline}", *rest]
    news = [*reaction.news, *(line for line in action.news if line not in reaction.news)]  # in the order they came
    return StoryCard(seq=lead.seq, kind=lead.kind, headline=lead.headline, lines=lines, verdict=lead.verdict,
                     struck=lead.struck, undone=lead.undone, seqs=sorted({*reaction.seqs, *action.seqs}),
                     batches=reaction.batches | action.batches, round=lead.round, outcome=lead.outcome, by=lead.by,
                     against=lead.against, news=news)
