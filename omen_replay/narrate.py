"""Turn a fight log into a readable narrative: one small writer per event type, in a dispatch table.

The narrative is plain text tagged with a kind (``round``, ``header``,
``roll``, ``result``, ``window``, ``note``, ``undone``), so each output format
(terminal, Markdown, HTML) only decides how to style a kind, never how to
describe an event. :class:`Narrator` is a visitor of the walk
(:mod:`omen_core.walk`); it also narrates events handed to it piece by piece,
as a live fight goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any, Literal, NamedTuple

import msgspec

from omen_core.commands import ApplyConditionCommand, Command, EndTurn, StandUp
from omen_core.content import ATTRIBUTES, CORE_RULESET, CombatantSheet, IncomingDamage, ReactionCosts, condition_held
from omen_core.derive import bonus_source
from omen_core.events import (
    DEFERRED_SOURCE,
    AbilityUsed,
    ActionCancelled,
    ActionSettled,
    ActiveDefenseChosen,
    ActiveDefenseDeclined,
    ActiveDefenseWindowOpened,
    ActiveDefenseWindowSkipped,
    AmbushDifficultySet,
    AmbushStarted,
    AttackDeclared,
    BonusActionsRefilled,
    CatchAnswered,
    CatchWindowOpened,
    CombatantJoined,
    CombatantLeft,
    CommandIssued,
    ConditionApplied,
    ConditionCleared,
    ConditionTicked,
    ContestResolved,
    CostPaid,
    DamageResolved,
    DamageRouted,
    DecisionAnswered,
    DecisionClosed,
    DecisionOpened,
    DiceRolled,
    DiceSourceChanged,
    Die,
    Disengaged,
    EngagementChanged,
    EventBase,
    FightEnded,
    FightStarted,
    HitDetermined,
    InitiativeAgreed,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    InitiativeTied,
    MitigationStep,
    MomentReached,
    Moved,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowClosed,
    ReactionWindowOpened,
    Redone,
    ResourceChanged,
    RollTotal,
    RoundEnded,
    RoundStarted,
    RoutingWindowOpened,
    SaveCalled,
    SaveResolved,
    SeedCommitted,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    SurpriseDetermined,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    Undone,
    WeaponDrawn,
    WillConversionChosen,
    WillConversionOffered,
    encode_line,
)
from omen_core.hooks import amount_of, moment_said
from omen_core.parts import Term
from omen_core.rules.mitigation import exact
from omen_core.rules.modifiers import encircled_bonus
from omen_core.state import AttackFrame, FightState
from omen_core.walk import LinesSource, Visitor, walk

__all__ = ["Line", "LineKind", "Narrator", "BatchCommand", "narrate", "describe_total", "crit_outcome", "hp_unmoved",
           "applied_reason", "GM_APPLIED", "Lowered", "split_primary"]

LineKind = Literal["round", "header", "roll", "result", "window", "note", "undone"]


class BatchCommand:
    """What the command at the head of the batch in progress says of the events it wrote, read one way for the
    narrative, explain and the session log's cards: which Movement Actions are a Prone combatant standing up (a
    ``stand_up``, C20, C28), and whether a turn ended by its owner's own ``end_turn`` or by itself (C36). Call
    :meth:`see` with each event in order."""

    def __init__(self) -> None:
        self.command: Command | None = None
        self.standing: set[int] = set()  # the actions (their declaration seqs) that are a stand_up's movement
        self.ending: dict[str, bool] = {}  # whose turn.end moment (C38) is waiting: whether its own end_turn opened it

    def see(self, event: object) -> None:
        """One event, in log order."""
        if isinstance(event, CommandIssued):
            self.command = event.command
        elif isinstance(event, MovementDeclared) and isinstance(self.command, StandUp) \
                and self.command.who == event.who:
            self.standing.add(event.action)
        elif isinstance(event, MomentReached) and event.moment == "turn.end" and event.who is not None:
            self.ending[event.who] = self._ends_own(event.who)

    def _ends_own(self, who: str) -> bool:
        """Whether the batch's command is ``who``'s own ``end_turn``."""
        return isinstance(self.command, EndTurn) and self.command.who == who

    def stands_up(self, action: int) -> bool:
        """Whether this Movement Action is its mover standing up from Prone (C20, C28)."""
        return action in self.standing

    def ended_by_itself(self, event: TurnEnded, dying: bool) -> str | None:
        """Why a turn ended though its owner gave no ``end_turn`` (``dying``: its owner at 0 HP as it ended), or
        None if its owner ended it or the log does not say: a Dying combatant takes no more of its turn (C36). A
        turn whose end abilities answered (C38: ``turn.end``) was ended by the command that opened that moment,
        though it ends in a later batch (an answer there may have brought its owner to 0 HP)."""
        own = self.ending.pop(event.who, None)
        if own is None:
            own = self._ends_own(event.who)
        if not dying or self.command is None or own:
            return None
        return "at 0 HP, Dying: a combatant takes no more of its turn (C36)"


class Line(msgspec.Struct, frozen=True):
    """One line of the narrative: the event it tells of, its kind, and the text."""

    seq: int
    kind: LineKind
    text: str


class _Names:
    """Combatant display names, learned as combatants join; and whose turn it is (for rule citations)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.turn: str | None = None
        self.opening = False  # the first round has started and no turn in it has begun or been skipped yet
        self.damage_roll: tuple[Die, ...] = ()  # the dice of the last damage roll, for the damage it deals (C25)
        self.bonuses: dict[str, dict[str, int]] = {}  # each combatant's sheet attribute bonuses, as it joined
        self.labels: dict[str, dict[str, str]] = {}  # each combatant's weapons' labels, by id
        self.armored: dict[str, bool] = {}  # whether each combatant's sheet wears armor (C11, C13)
        self.incoming: dict[str, IncomingDamage] = {}  # each combatant's incoming-damage modifiers (C13 step 5)
        self.attacks: dict[int, tuple[str, str, str]] = {}  # each attack declared: its attacker, weapon's label, target
        self.lowered: dict[int, Lowered] = {}  # what conditions changed of an attack's primary bonus, by action
        self.command: Any = None  # the command whose events are being told (its own ``command_issued``'s)
        self.initiatives: dict[str, RollTotal] = {}  # the initiatives rolled, until the order is set (C19)
        self.tied: set[str] = set()  # those still tied after the AGI bonus, until the order is set (C19)
        self.rolled: dict[int, DiceRolled] = {}  # every roll, by its counter: what a reroll changed (C39)
        self.rolled_at: dict[int, int] = {}  # the seq of every roll, by its counter
        self.seq = 0  # the seq of the event being told
        self.costs = ReactionCosts()  # what each reaction costs under the fight's ruleset (C22), once it is known
        self.standing: FightState | None = None  # the state before the event being told, where the walk knows it

    def __call__(self, cid: str) -> str:
        return self.names.get(cid, cid)

    def join(self, sheet: CombatantSheet) -> None:
        """A combatant's name and sheet bonuses, as it joins (or as the fight already under way holds it)."""
        self.names[sheet.id] = sheet.name
        self.bonuses[sheet.id] = {name: sheet.attributes[name].bonus for name in ATTRIBUTES}
        self.labels[sheet.id] = {w.id: w.label for w in sheet.weapons}
        self.armored[sheet.id] = sheet.armor is not None
        self.incoming[sheet.id] = sheet.incoming_damage

    def weapon(self, who: str, weapon: str) -> str:
        """``who``'s weapon (or shield) by its sheet's name (its id where it has none, or the sheet is not known)."""
        return self.labels.get(who, {}).get(weapon, weapon)

    def declared(self, action: int, attacker: str, weapon: str | None, target: str) -> None:
        """An attack declared at ``action``: whose, with which weapon (by its label, as the damage names it), and on
        whom (whose sheet the defense's bonuses are told against, C28)."""
        label = self.labels.get(attacker, {}).get(weapon, weapon) if weapon is not None else "unarmed"
        self.attacks[action] = (attacker, label, target)

    def held(self, who: str, attribute: str) -> str:
        """The conditions that change ``who``'s ``attribute`` bonus as the event being told comes (C28: ``Poisoned
        x2``), where the state before it is known; "" otherwise (the narrative then says "conditions" alone)."""
        state = self.standing
        if state is None or who not in state.combatants:
            return ""
        return bonus_source(state, who, attribute).held_words()

    def lowered_by(self, who: str, attribute: str, bonus: int) -> int:
        """What conditions changed of ``who``'s ``attribute`` bonus, a roll's ``bonus`` against its sheet's (C28); 0
        for a sheet not known."""
        sheet = self.bonuses.get(who, {}).get(attribute)
        return bonus - sheet if sheet is not None else 0


class Lowered(NamedTuple):
    """What conditions changed of an attacker's primary bonus as its hit was determined (C28), for the weapon's
    damage to state its primary bonus (armed) and a crit's extra one (on a crit) as the sheet's value and that change,
    as the hit total does and as explain splits them (C12): the change, the weapon's label (the damage's source),
    whether it is armed and whether it crit."""

    conditions: int
    label: str
    armed: bool
    crit: bool
    held: str = ""  # the conditions that changed it, in words (``Poisoned x2``), where known


def describe_total(side: RollTotal, name: str, kind: str = "check", conditions: int = 0, held: str = "") -> str:
    """``Vesh rolls Stealth: 6 (die) + 2 AGI + 3 Stealth level = 11``: the roll primitive, term by term;
    ``conditions``: what conditions changed of the attribute bonus (C28), said apart (``+ 2 AGI - 2 conditions``),
    and ``held``, which conditions they are (``- 2 conditions (Poisoned x2)``)."""
    label = side.skill or (f"{side.attribute} {kind}" if kind != "to oppose it" else f"{side.attribute}, to oppose it")
    die, *rest = side.terms(conditions)
    terms = [f"{die.value} (die)", *(f"{_signed(t.value)} {_conditions_word(t, held)}" for t in rest)]
    return f"{name} rolls {label}: {' '.join(terms)} = {side.total}"


def _conditions_word(t: Term, held: str) -> str:
    """A term's word, the conditions' naming them where known (``conditions (Poisoned x2)``, as a decision box and
    explain name them: the save's narrative said "- 2 conditions" where the attack's named its Hexed x2, a tester)."""
    return f"conditions ({held})" if held and t.kind == "conditions" else t.label


def _signed(n: int) -> str:
    return f"+ {n}" if n >= 0 else f"- {-n}"


def _said(side: RollTotal, names: _Names, kind: str = "check") -> str:
    """:func:`describe_total` of a roll, its attribute bonus split where conditions changed it from the roller's
    sheet (C28: initiative read "+ 1 AGI" while the attack beside it said "+ 2 STR - 2 conditions": a tester)."""
    sheet = names.bonuses.get(side.roller, {}).get(side.attribute)
    conditions = side.attribute_bonus - sheet if sheet is not None else 0
    held = names.held(side.roller, side.attribute) if conditions else ""
    return describe_total(side, names(side.roller), kind, conditions, held)


def _started(e: FightStarted, names: _Names) -> Iterator[tuple[LineKind, str]]:
    title = f" \u201c{e.title}\u201d" if e.title else ""
    names.costs = e.ruleset.reaction_costs
    # a house ruleset copied from the core one and still named after it (a tester): said, for the auditor
    house = (" (not the core ruleset this omen ships: a ruleset of its own under that name)"
             if e.ruleset.name == CORE_RULESET.name and e.ruleset != CORE_RULESET else "")
    yield "header", f"Fight{title} begins under ruleset {e.ruleset.name!r}{house} with {e.dice} dice"
    if e.seed_commitment:
        yield "note", f"seed commitment sha256 {e.seed_commitment[:16]}\u2026 (the seed stays secret until revealed)"


def _joined(e: CombatantJoined, names: _Names) -> Iterator[tuple[LineKind, str]]:
    s = e.sheet
    names.join(s)
    yield "header", f"{s.name} joins for {s.side}: HP {s.hp}, Will {s.will}"


def _rolled(e: DiceRolled, names: _Names) -> Iterator[tuple[LineKind, str]]:
    dice = ", ".join(f"{d.pool} d{d.sides} \u2192 {d.face}" for d in e.dice)
    again = ""
    if e.rerolls is not None and e.die is not None:
        first = names.rolled.get(e.rerolls)
        was = first.dice[e.die] if first is not None and e.die < len(first.dice) else None
        what = (f"{names(first.roller)}'s {first.purpose.replace('_', ' ')} {was.pool} d{was.sides}, which showed "
                f"{was.face}: " if first is not None and was is not None else "")
        at = names.rolled_at.get(e.rerolls)
        which = f"the roll at #{at}" if at is not None else f"roll {e.rerolls} (by its counter)"
        again = (f" (rerolls {what}die {e.die} of {which}, dice counted from 0 as route_damage counts them; C39: the "
                 "new face counts)")
    names.rolled[e.counter] = e
    names.rolled_at[e.counter] = names.seq
    if e.purpose == "damage":
        names.damage_roll = tuple(d for d in e.dice if d.pool == "damage")
    yield "roll", f"roll ({e.purpose}, {e.source}) by {names(e.roller)}: {dice}{again}"


def _issued(e: CommandIssued, names: _Names) -> Iterator[tuple[LineKind, str]]:
    names.command = e.command  # what was asked, for what the events say of it (stacks capped, C28)
    return iter(())  # the command is the record; what happened is told by the events it produced


def _switched(e: DiceSourceChanged, names: _Names) -> Iterator[tuple[LineKind, str]]:
    why = f": {e.reason}" if e.reason else ""
    yield "note", f"the dice change from {e.before} to {e.after}{why}"


def _static(e: StaticCheckResolved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "result", _said(e.check, names)
    verdict = {"success": "succeeds", "tie": "ties (not a success; the GM decides what a tie means, C16)",
               "failure": "fails"}[e.outcome]
    yield "result", f"  against difficulty {e.difficulty}: {verdict}"


def _contest(e: ContestResolved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "result", _said(e.initiator, names)
    yield "result", _said(e.defender, names)
    why = " (a tie favours the defender, C16)" if e.tie else ""
    yield "result", f"  {e.initiator.total} vs {e.defender.total}: {names(e.winner)} wins the contest{why}"


def _save(e: SaveResolved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "result", _said(e.saver, names, "save")
    yield "result", _said(e.opposing, names, "to oppose it")
    verdict = "saves" if e.success else "fails the save"
    tie = " (the saver wins ties, C15)" if e.saver.total == e.opposing.total else ""
    yield "result", (f"  {e.saver.total} vs {e.opposing.total}: {names(e.saver.roller)} {verdict} "
                     f"against {e.effect}{tie}")


def _committed(e: SeedCommitted, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", (f"the revealed seed is spent: the dice from here on come from a fresh seed, committed to as "
                   f"{e.commitment[:16]}\u2026 (C42)")


def _revealed(e: SeedRevealed, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"seed revealed: {e.seed[:16]}\u2026 (anyone can now recompute every seeded die rolled under it)"


def _declared(e: AttackDeclared, names: _Names) -> Iterator[tuple[LineKind, str]]:
    claims = []
    if e.situational.high_ground:
        claims.append("from high ground")
    circle = e.situational.encircled
    if circle:  # a claim that is not 2 to 1 gives no bonus, and is not said as encircling (C26)
        claims.append(f"encircling ({circle.attackers} vs {circle.defenders})"
                      if encircled_bonus(circle.attackers, circle.defenders) else
                      f"not encircling: {circle.attackers} vs {circle.defenders} is not 2 to 1, no bonus (C26)")
    if e.rage:
        claims.append("raging")
    extra = f", {', '.join(claims)}" if claims else ""
    with_what = f"with {names.weapon(e.attacker, e.weapon)}" if e.weapon else "unarmed"  # (by its name, as the
    # damage line says it: it read "with sverd" beside "Sverð: 7 slashing"; a tester)
    yield "header", f"{names(e.attacker)} attacks {names(e.target)} {with_what} ({e.kind.replace('_', ' ')}{extra})"


def _save_called(e: SaveCalled, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "header", (f"{names(e.caller)}'s {e.effect.name} calls for {names(e.saver)}'s {e.effect.save} save "
                     f"against {e.effect.against}")


def _paid(e: CostPaid, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"  {names(e.who)} spends {amount_of(e.resource, e.amount)} ({e.purpose})"


def _window(e: ActiveDefenseWindowOpened, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", (f"  Active Defense window for {names(e.defender)}: attack {e.attack_total} beats base "
                     f"defense {e.base_defense}; may {', '.join(e.eligible)} or decline (C8)")


def _skipped(e: ActiveDefenseWindowSkipped, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"  no Active Defense window: {e.reason}"


def _chosen(e: ActiveDefenseChosen, names: _Names) -> Iterator[tuple[LineKind, str]]:
    verb = {"dodge": "dodges", "parry": "parries", "block": "blocks"}[e.defense]
    weapon = f" with {names.weapon(e.defender, e.weapon)}" if e.weapon else ""
    yield "window", f"  {names(e.defender)} {verb}{weapon}"


def _declined(e: ActiveDefenseDeclined, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", f"  {names(e.defender)} declines an Active Defense"


#: How the narrative words a total's own terms (:meth:`omen_core.events.HitTotal.terms` and the others): a die of a
#: pool as ``7 (primary)``, some kinds by another word than their label, and which are written even at 0.
_POOLED = frozenset({"primary_die", "fcs_die", "ability_die"})
_WORDS = {"damage_dice": "die", "active_die": "die", "active_rating": "rating", "res_die": "RES die",
          "no_res_die": "no die (C10)"}
_EVEN_ZERO = frozenset({"damage_dice", "res_die"})


def _terms(terms: Iterable[Term], every: bool = False, held: str = "") -> str:
    """A total's terms as a sum: ``7 (primary) + 2 STR + 1 weapon``; a zero left out unless ``every`` (or its kind
    is always written, or it is a sheet's value that conditions changed: ``0 STR - 1 conditions``); ``+ -`` folded
    to ``-``; ``held``: the conditions that changed it, named (``- 2 conditions (Poisoned x2)``)."""
    parts: list[str] = []
    listed = list(terms)
    for i, t in enumerate(listed):
        word = _WORDS.get(t.kind, _conditions_word(t, held))
        split = i + 1 < len(listed) and listed[i + 1].kind == "conditions"  # a sheet's 0 that conditions changed
        if t.kind == "no_res_die":
            parts.append(word)
        elif t.kind in _POOLED:
            parts.append(f"{t.value} ({word})")
        elif every or t.value or split or t.kind in _EVEN_ZERO:
            parts.append(f"{t.value} {word}")
    joined = " + ".join(parts)
    return joined.replace("+ -", "- ")


def crit_outcome(e: HitDetermined) -> str:
    """The crit of an attack in words (C7): ``CRITICAL``; ``no crit`` (the FCS portion is not strictly over the RES
    portion); ``no crit: the attack missed`` (it was, but a crit matters only on a hit); ``crit cancelled by the
    Active Defense`` (it was, and the attack beat the base defense, but an Active Defense turned the hit into a
    miss)."""
    if e.crit:
        return "CRITICAL"
    if not e.crit_check.exceeds:
        return "no crit"
    if e.defense.active is not None and e.attack.total > e.defense.base:
        return "crit cancelled by the Active Defense"
    return "no crit: the attack missed"


#: Why worn armor adds nothing to a defense (C11, C13), as explain says it.
_ARMOR_OUT = "its armor does not apply: mundane armor against a spell or a non-physical attack, C13"


def _hit(e: HitDetermined, names: _Names) -> Iterator[tuple[LineKind, str]]:
    a, d, c = e.attack, e.defense, e.crit_check
    attacker, label, target = names.attacks.pop(e.action, ("", "", ""))  # kept no longer: none past its hit
    conditions = names.lowered_by(attacker, a.attribute, a.attribute_bonus)  # C28: what conditions changed of it
    held = names.held(attacker, a.attribute) if conditions else ""
    if conditions and e.hit:
        names.lowered[e.action] = Lowered(conditions, label, label != "unarmed", e.crit, held)
    yield "result", f"  hit total {a.total} = {_terms(a.terms(conditions), held=held)}"
    res = names.lowered_by(target, "RES", d.res_bonus)
    die, *rating = d.base_terms(res)  # the defender's too (C28)
    active = ""
    if d.active:
        x = d.active
        changed = names.lowered_by(target, x.attribute, x.attribute_bonus)
        own = [t for t in x.terms(changed) if not (t.kind == "active_rating" and x.defense == "dodge")]  # no Dodge
        # rating
        active = (f" + {x.defense} {x.amount} "
                  f"({_terms(own, every=True, held=names.held(target, x.attribute) if changed else '')})")
    if not d.armor_applies and names.armored.get(target):  # worn, but not against this attack (a tester read
        rating = [Term(f"armor ({_ARMOR_OUT})", t.value, t.source, t.kind) if t.kind == "armor" else t
                  for t in rating]  # "0 armor", no why)
    said = _terms(rating, every=True, held=names.held(target, "RES") if res else "")
    yield "result", f"  defense {d.total} = {_terms([die])} + Defense Rating {d.defense_rating} ({said}){active}"
    verdict = "HIT" if e.hit else "MISS"
    tie = " (a tie goes to the defender)" if a.total == d.total else ""
    crit = f"; crit check: FCS {c.fcs_portion} vs RES {c.res_portion} \u2192 {crit_outcome(e)}"
    yield "result", f"  {a.total} vs {d.total}: {verdict}{tie}{crit} (C7)"


def _routing(e: RoutingWindowOpened, names: _Names) -> Iterator[tuple[LineKind, str]]:
    dice = ", ".join(f"{i}: {d.pool} {d.face}" for i, d in enumerate(e.dice))
    yield "window", f"  {names(e.attacker)} may route a rolled die to damage (C12): {dice}"


def _routed(e: DamageRouted, names: _Names) -> Iterator[tuple[LineKind, str]]:
    choice = f"die {e.die}" if e.die is not None else "the primary dice as rolled"
    yield "window", f"  {names(e.attacker)} routes {choice} to damage"


def _will_offered(e: WillConversionOffered, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", (f"  {names(e.who)} may take {e.final} {e.damage_type} on Will ({e.will} left; the rest to HP) "
                     f"or on HP (C31)")


def _will_chosen(e: WillConversionChosen, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", f"  {names(e.who)} takes it on {'Will' if e.convert else 'HP'}"


def _split_bonus(e: DamageResolved, names: _Names) -> tuple[tuple[Term, ...], str]:
    """C12's terms of a damage; the weapon's damage of an attack whose primary bonus conditions changed (C28) states
    its primary bonus (armed) and a crit's extra one (on a crit) as the sheet's value and that change, as explain
    does (its first damage named after the weapon: any other is a consequence's, C25); and the conditions that
    changed it, in words, where known."""
    action = e.action
    lowered = names.lowered.get(action) if action is not None else None
    if action is None or lowered is None or e.source != lowered.label:
        return e.terms.terms(), ""
    del names.lowered[action]
    return split_primary(e.terms.terms(), lowered), lowered.held


def split_primary(terms: Iterable[Term], lowered: Lowered) -> tuple[Term, ...]:
    """A weapon's damage terms (C12) with its primary bonus (armed) and a crit's extra one (on a crit) each stated
    as the sheet's value and what conditions changed (C28, ``lowered``), as the hit total states the attribute bonus
    and as explain splits them."""
    split = {"primary_bonus": lowered.armed, "crit_bonus": lowered.crit}
    out: list[Term] = []
    for t in terms:
        if split.get(t.kind):
            out += [Term(t.label, t.value - lowered.conditions, t.source, t.kind),
                    Term("conditions", lowered.conditions, "condition", "conditions")]
        else:
            out.append(t)
    return tuple(out)


def _damage(e: DamageResolved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    t = e.terms
    terms, held = _split_bonus(e, names)
    raw = _terms([x for x in terms if x.kind != "damage_dice" or x.value] or terms, held=held)  # flat: no "0 (dice)"
    rolled, names.damage_roll = names.damage_roll, ()
    if len(rolled) > 1 and sum(d.face for d in rolled) == t.dice and not t.ability_dice and t.routed_die is None:
        sizes = {d.sides for d in rolled}  # a consequence's own damage roll (C25): each die, as 3 + 4 (2d6)
        pool = f"{len(rolled)}d{sizes.pop()}" if len(sizes) == 1 else "dice"
        raw = raw.replace(f"{t.dice} die", f"{' + '.join(str(d.face) for d in rolled)} ({pool})", 1)
    steps = _steps(e, names.incoming.get(e.target))
    where = f"{names(e.target)}'s {e.resource.upper()}"
    # outside any action: a deferred cost's damage (C41) or a condition's as it ticks (C25, C40), mitigated by C13;
    # C12 is an attack's damage formula (a tester read "C12" under Burning's damage)
    rules = ("C41, C13" if e.source.endswith(DEFERRED_SOURCE) else "C25, C40, C13") if e.action is None \
        else "C12, C13"
    if e.overflow and e.overflow == e.final:  # converted with no Will left: all of it to HP (C31)
        where = f"{names(e.target)}'s HP (converted to Will, but no Will is left: all of it to HP)"
        rules += ", C31"
    elif e.overflow:
        where = (f"{names(e.target)}'s WILL, {e.final - e.overflow} of it, and {e.overflow} beyond the Will left "
                 "to HP")
        rules += ", C31"
    yield "result", (f"  {e.source}: {t.raw} {e.damage_type} ({raw}) {steps} = {e.final} "
                     f"to {where} ({rules})").replace("  =", " =")


def _steps(e: DamageResolved, incoming: IncomingDamage | None) -> str:
    """The mitigation steps that changed the damage, in order (C13): ``- 2 armor``, ``(floored at 0)``, and the
    incoming-damage step with its multiplier where it has one, ``- 6 incoming (13 x 1/2, rounded down)`` (C34), so
    the line can be checked by hand as explain's can."""
    return " ".join(_step(s.step, s.amount, before, incoming) for s, _change, before in signed_steps(e) if s.amount)


def signed_steps(e: DamageResolved) -> Iterator[tuple[MitigationStep, int, int]]:
    """Each mitigation step of a damage (C13) with its change to the damage as explain signs it (a floor and the
    incoming step add their amount, the others take it off) and the damage before it."""
    now = e.terms.raw
    for s in e.steps:
        change = s.amount if s.step in ("floor", "incoming") else -s.amount
        yield s, change, now
        now += change


def _step(step: str, amount: int, before: int, incoming: IncomingDamage | None) -> str:
    if step == "floor":
        return "(floored at 0)"
    if step == "incoming":
        said = incoming_said(before, incoming)
        return f"{_signed(amount)} incoming ({said})" if said else f"{_signed(amount)} incoming"
    return f"- {amount} {step}"


def incoming_said(before: int, incoming: IncomingDamage | None) -> str:
    """The incoming-damage step's arithmetic where it multiplies (C13 step 5, C34), ``11 x 1/2, rounded down``
    (``13 x 7/5 + 1, rounded down``); empty where it only adds, or there is no multiplier to show."""
    times = exact(incoming.multiply) if incoming is not None else Fraction(1)
    if incoming is None or times == 1:
        return ""
    add = f" {'+' if incoming.add > 0 else '-'} {abs(incoming.add)}" if incoming.add else ""
    return f"{before} x {times}{add}, rounded down"


def hp_unmoved(e: DamageResolved, hp: int | None) -> bool:
    """Whether damage that reached HP left it where it was, its target (at ``hp`` before it) at 0 HP already: HP
    does not go below 0 (C28), a Dying combatant can still be hit (C36), and the engine records no change of HP
    (no ``resource_changed``). The story, explain and the cards then say ``HP 0 -> 0``, as after every other hit."""
    reached = e.overflow if e.resource == "will" else e.final
    return reached > 0 and hp == 0


def _resource(e: ResourceChanged, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "result", f"  {names(e.who)}: {e.resource.upper()} {e.before} \u2192 {e.after}"


#: The reason ``apply_condition`` records when the GM gives none (:mod:`omen_core.decide.setup`): the GM gave the
#: command, but where it names who applied the condition (``by``), that combatant applied it.
GM_APPLIED = "applied by the GM"


def applied_reason(e: ConditionApplied, name: Callable[[str], str]) -> str:
    """Why a condition was applied, in words: its recorded reason, and who applied it where ``by`` names a
    combatant (docs/scenarios.md: ``by`` is who applied it), named by ``name``: ``applied by Ash`` for the GM's
    command given no reason, ``tripped on the ford stones (applied by Ash)`` for one given a reason."""
    if e.by is None:
        return _branch_words(e.reason)
    by = f"applied by {name(e.by)}"
    if not e.reason or e.reason == GM_APPLIED:
        return by
    return e.reason if by in e.reason else f"{e.reason} ({by})"


#: The reason an attack's branches record (:func:`omen_core.decide.attack.branch_source`): ``attack <its seq>``.
_BRANCH = re.compile(r"attack (\d+)")


def _branch_words(reason: str) -> str:
    """A recorded reason in words: an attack's branch (``attack 154``) as ``the attack at #154 (C25)``, where it
    read as a bare number; any other reason as it is."""
    found = _BRANCH.fullmatch(reason)
    return f"the attack at #{found.group(1)} (C25)" if found else reason


def _applied(e: ConditionApplied, names: _Names) -> Iterator[tuple[LineKind, str]]:
    stacks = f" ({e.stacks} stacks)" if e.stacks > 1 else ""
    reason = applied_reason(e, names)
    why = f": {reason}" if reason else ""
    until = ""
    if e.until is not None and e.of is not None:  # C40: it clears at that moment of that combatant's next turn
        until = f", until the {'start' if e.until == 'start_of_next_turn' else 'end'} of {names(e.of)}'s next turn"
    if e.added <= 0:  # at its max_stacks: no stack added, the condition renewed (docs/rulings.md, C28, C40)
        yield "result", f"  {names(e.who)}'s {e.condition}{stacks} is renewed (at its most stacks: none added, its " \
                        f"duration starts again){why}{until}"
        return
    asked = names.command
    capped = ""
    if isinstance(asked, ApplyConditionCommand) and (asked.who, asked.condition) == (e.who, e.condition) \
            and asked.stacks > e.added:  # C28: stacks past the condition's most are not added
        capped = f" (its most: {e.added} of the {asked.stacks} stacks given added)"
    yield "result", f"  {names(e.who)} {condition_held(e.condition)}{stacks}{capped}{why}{until}"


def _cleared(e: ConditionCleared, names: _Names) -> Iterator[tuple[LineKind, str]]:
    """A condition cleared and why; a reason that says again that it is no longer held ("raised above 0 HP by Mend:
    no longer Dying (C36)", the engine's words) is said once ("Bo is no longer Dying: raised above 0 HP by Mend
    (C36)": it read "... by Mend: no longer Dying (C36)", a tester)."""
    why = f": {e.reason.replace(f': no longer {e.condition}', '')}" if e.reason else ""
    yield "result", f"  {names(e.who)} {condition_held(e.condition, held=False)}{why}"


def _settled(e: ActionSettled, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "roll", f"  (the action of #{e.action} settled)"


def _cancelled(e: ActionCancelled, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"  the action of #{e.action} is cancelled: {e.reason}"


def _ambush(e: AmbushStarted, names: _Names) -> Iterator[tuple[LineKind, str]]:
    waited = f" after waiting {e.time_waited.replace('_', ' ')}" if e.time_waited else ""
    lie = "lies" if len(e.ambushers) == 1 else "lie"
    yield "header", (f"Ambush! {', '.join(map(names, e.ambushers))} {lie} in wait for "
                     f"{', '.join(map(names, e.defenders))}{waited}")


def _difficulty(e: AmbushDifficultySet, names: _Names) -> Iterator[tuple[LineKind, str]]:
    for side in e.stealth:
        yield "result", "  " + _said(side, names)
    how = "set by the GM" if not e.stealth else f"from the Stealth rolls, {str(e.time_waited).replace('_', ' ')} (C17)"
    yield "result", f"  Ambush Difficulty {e.difficulty}, {how}"


def _surprise(e: SurpriseDetermined, names: _Names) -> Iterator[tuple[LineKind, str]]:
    tier = {"alert": "Alert", "partial": "Partially Surprised (-5 initiative, may draw)",
            "complete": "Completely Surprised (loses the first-round turn)"}[e.tier]
    yield "result", f"  {_said(e.perception, names)} vs {e.difficulty}: {tier} (C18)"


def _initiative(e: InitiativeRolled, names: _Names) -> Iterator[tuple[LineKind, str]]:
    names.initiatives[e.who] = e.check
    yield "result", "  initiative: " + _said(e.check, names)


def _tied(e: InitiativeTied, names: _Names) -> Iterator[tuple[LineKind, str]]:
    names.tied.update(e.group)
    what = "allies: they may agree an order or roll off" if e.allies else "they roll off"
    yield "window", f"  initiative tie between {', '.join(map(names, e.group))} ({what}, C19)"


def _roll_off(e: InitiativeRollOff, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"  roll-off between {', '.join(map(names, e.group))} (C19)"
    for side in e.rolls:
        yield "result", "  roll-off: " + _said(side, names)


def _agreed(e: InitiativeAgreed, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", f"  the allies agree: {', '.join(map(names, e.order))}"


def _order(e: InitiativeOrderSet, names: _Names) -> Iterator[tuple[LineKind, str]]:
    """The order, after a line for each tie the AGI bonus settled (C19: equal totals, the higher AGI bonus first;
    it went untold, only ``omen explain`` said it: a tester)."""
    by_total: dict[int, list[str]] = {}
    for who in e.order:
        check = names.initiatives.get(who)
        if check is not None:
            by_total.setdefault(check.total, []).append(who)
    for total, group in by_total.items():
        bonus = {w: names.initiatives[w].attribute_bonus for w in group}
        if len(set(bonus.values())) < 2:
            continue  # one AGI bonus: the roll-off (or the allies' agreement) settled it, and says so
        if not any(w in names.tied for w in group):
            bonuses = " against ".join(f"{bonus[w]:+d}" for w in group)
            yield "note", (f"  {' and '.join(map(names, group))} tied at {total}: {names(group[0])} goes first, on "
                           f"the higher AGI bonus ({bonuses}, C19)")
            continue
        # some of them tied on the AGI bonus too: each bonus in its turn, those who shared one settled otherwise (it
        # said the pair the bonus settled alone, and not where the others stood: a rules tester)
        tiers: list[list[str]] = []
        for w in group:
            if tiers and bonus[tiers[-1][0]] == bonus[w]:
                tiers[-1].append(w)
            else:
                tiers.append([w])
        said = ", then ".join(" and ".join(map(names, tier)) + f" ({bonus[tier[0]]:+d}"
                              + (", in the order their tie was settled" if len(tier) > 1 else "") + ")"
                              for tier in tiers)
        everyone = [names(w) for w in group]
        yield "note", (f"  {', '.join(everyone[:-1])} and {everyone[-1]} tied at {total}: by the higher AGI bonus, "
                       f"{said} (C19)")
    names.initiatives, names.tied = {}, set()
    yield "header", f"Initiative order: {', '.join(map(names, e.order))}"


def _round(e: RoundStarted, names: _Names) -> Iterator[tuple[LineKind, str]]:
    names.opening = e.round == 1
    yield "round", f"\u2500\u2500 Round {e.round} \u2500\u2500"


def _round_end(e: RoundEnded, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "roll", f"(round {e.round} ends)"


def _turn(e: TurnStarted, names: _Names) -> Iterator[tuple[LineKind, str]]:
    names.turn, names.opening = e.who, False
    yield "header", f"{names(e.who)}'s turn"


def _skipped_turn(e: TurnSkipped, names: _Names) -> Iterator[tuple[LineKind, str]]:
    names.opening = False
    yield "note", f"{names(e.who)} loses the turn: {e.reason}"


def _turn_end(e: TurnEnded, names: _Names) -> Iterator[tuple[LineKind, str]]:
    names.turn = None
    yield "roll", f"  ({names(e.who)} ends the turn)"


def _refilled(e: BonusActionsRefilled, names: _Names) -> Iterator[tuple[LineKind, str]]:
    rule = ("C20" if names.turn == e.who else "C20: everyone begins the rounds with full Bonus Actions"
            if names.opening else "C21: when the skipped turn would have come")
    yield "note", f"  {names(e.who)}'s Bonus Actions refill: {e.before} \u2192 {e.after} ({rule})"


def _ticked(e: ConditionTicked, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"  {names(e.who)}'s {e.condition} ticks: {e.remaining} left"


def _engaged(e: EngagementChanged, names: _Names) -> Iterator[tuple[LineKind, str]]:
    verb = "is now within reach of" if e.engaged else "is no longer within reach of"
    yield "note", f"{names(e.who)} {verb} {', '.join(map(names, e.others))}"


def _drawn(e: WeaponDrawn, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"  {names(e.who)} draws {e.weapon}"


def _disengaged(e: Disengaged, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"  {names(e.who)} disengages ({e.cost} Bonus Action, C22)"


def _moving(e: MovementDeclared, names: _Names) -> Iterator[tuple[LineKind, str]]:
    leaving = f", leaving the reach of {', '.join(map(names, e.leaves))}" if e.leaves else ""
    yield "header", f"{names(e.who)} moves{leaving}"


def _ability_used(e: AbilityUsed, names: _Names) -> Iterator[tuple[LineKind, str]]:
    on = "" if e.target == e.who else f" on {names(e.target)}"
    yield "header", f"{names(e.who)} uses {e.name}{on} (C37)"


def _moment_reached(e: MomentReached, names: _Names) -> Iterator[tuple[LineKind, str]]:
    when = moment_said(e.moment, e.round, names(e.who or ""), names(e.other) if e.other else None, e.outcome,
                       e.condition)
    yield "header", f"{when[0].upper()}{when[1:]}: abilities answer it (C38)"


def _moved(e: Moved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "roll", f"  ({names(e.who)} completes the move)"


def _reactions(e: ReactionWindowOpened, names: _Names) -> Iterator[tuple[LineKind, str]]:
    costs = names.costs  # the ruleset's (C22): a house rule may make an Interrupt cost 1
    what = {"interrupt": f"Interrupt ({amount_of('bonus_action', costs.interrupt)}, C24)",
            "attack_of_opportunity": "Attack of Opportunity "
                                     f"({amount_of('bonus_action', costs.attack_of_opportunity)}, C23)"}[e.reaction]
    yield "window", f"  {what} window for {', '.join(map(names, e.responders))}"


def _passed(e: ReactionPassed, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", f"  {names(e.who)} lets it pass"


def _closed(e: ReactionWindowClosed, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "roll", "  (reaction window closed)"


def _catch_window(e: CatchWindowOpened, names: _Names) -> Iterator[tuple[LineKind, str]]:
    cost = amount_of("bonus_action", names.costs.catch)
    yield "window", f"  {names(e.target)} may Catch the thrown item ({cost}, C22)"


def _caught(e: CatchAnswered, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", f"  {names(e.who)} {'catches it: no damage' if e.caught else 'lets it hit'}"


def _decision(e: DecisionOpened, names: _Names) -> Iterator[tuple[LineKind, str]]:
    title = e.title or e.decision
    who = ", ".join(names(w) for w in e.responders)
    yield "window", f"  {title} ({e.rule}): {who} may answer ({', '.join(e.choices)})"


def _decided(e: DecisionAnswered, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "window", f"  {names(e.who)}: {e.choice}{f' ({e.label})' if e.label else ''}"


def _decision_closed(e: DecisionClosed, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "roll", "  (decision closed: the action goes on)"


def _left(e: CombatantLeft, names: _Names) -> Iterator[tuple[LineKind, str]]:
    how = {"fled": "flees", "yielded": "yields", "dead": "is dead"}[e.reason]
    note = f" ({e.note})" if e.note else ""
    yield "result", f"{names(e.who)} {how}: out of the fight (C33){note}"


def _ended(e: FightEnded, names: _Names) -> Iterator[tuple[LineKind, str]]:
    how = {"gm": "the GM ends the fight", "yielded": f"{e.side} yield", "fled": f"{e.side} flee",
           "defeated": f"{e.side} are defeated"}[e.reason]
    note = f" ({e.note})" if e.note else ""
    yield "header", f"The fight is over: {how}{note}"


def _undone(e: Undone, names: _Names) -> Iterator[tuple[LineKind, str]]:
    why = f": {e.reason}" if e.reason else ""
    yield "header", f"UNDO of seq {e.from_seq} to {e.to_seq}{why} (the events stay in the log, marked undone)"


def _redone(e: Redone, names: _Names) -> Iterator[tuple[LineKind, str]]:
    why = f": {e.reason}" if e.reason else ""
    yield "header", f"REDO: the undo at seq {e.undo_seq} is taken back{why}"


_WRITERS: dict[type[EventBase], Callable[..., Iterator[tuple[LineKind, str]]]] = {
    FightStarted: _started,
    CombatantJoined: _joined,
    CommandIssued: _issued,
    DiceSourceChanged: _switched,
    DiceRolled: _rolled,
    StaticCheckResolved: _static,
    ContestResolved: _contest,
    SaveResolved: _save,
    SeedRevealed: _revealed,
    SeedCommitted: _committed,
    AttackDeclared: _declared,
    SaveCalled: _save_called,
    CostPaid: _paid,
    ActiveDefenseWindowOpened: _window,
    ActiveDefenseWindowSkipped: _skipped,
    ActiveDefenseChosen: _chosen,
    ActiveDefenseDeclined: _declined,
    HitDetermined: _hit,
    RoutingWindowOpened: _routing,
    DamageRouted: _routed,
    WillConversionOffered: _will_offered,
    WillConversionChosen: _will_chosen,
    DamageResolved: _damage,
    ResourceChanged: _resource,
    ConditionApplied: _applied,
    ConditionCleared: _cleared,
    ActionSettled: _settled,
    ActionCancelled: _cancelled,
    AmbushStarted: _ambush,
    AmbushDifficultySet: _difficulty,
    SurpriseDetermined: _surprise,
    InitiativeRolled: _initiative,
    InitiativeTied: _tied,
    InitiativeRollOff: _roll_off,
    InitiativeAgreed: _agreed,
    InitiativeOrderSet: _order,
    RoundStarted: _round,
    RoundEnded: _round_end,
    TurnStarted: _turn,
    TurnSkipped: _skipped_turn,
    TurnEnded: _turn_end,
    BonusActionsRefilled: _refilled,
    ConditionTicked: _ticked,
    EngagementChanged: _engaged,
    WeaponDrawn: _drawn,
    Disengaged: _disengaged,
    MovementDeclared: _moving,
    AbilityUsed: _ability_used,
    MomentReached: _moment_reached,
    Moved: _moved,
    ReactionWindowOpened: _reactions,
    ReactionPassed: _passed,
    ReactionWindowClosed: _closed,
    CatchWindowOpened: _catch_window,
    CatchAnswered: _caught,
    DecisionOpened: _decision,
    DecisionAnswered: _decided,
    DecisionClosed: _decision_closed,
    CombatantLeft: _left,
    FightEnded: _ended,
    Undone: _undone,
    Redone: _redone,
}


class Narrator(Visitor):
    """Narrates a log, as a visitor of the walk or in pieces (as a live fight goes on), remembering who is who.

    Undone events are told too, marked as undone: never hidden. Lines go to
    ``sink`` if given, else they are kept in :attr:`told`.
    """

    def __init__(self, sink: Callable[[Line], object] | None = None, state: FightState | None = None) -> None:
        """``state``: a fight already under way (its combatants' names are known from it)."""
        self.names = _Names()
        self.hp: dict[str, int] = {}  # each combatant's HP as the log stands, for a hit at 0 HP (hp_unmoved)
        if state is not None:
            if state.ruleset is not None:
                self.names.costs = state.ruleset.reaction_costs
            for c in state.combatants.values():
                self.names.join(c.sheet)
            for frame in state.stack:  # the attacks in progress, for the hit they await (C28: _hit)
                if isinstance(frame, AttackFrame):
                    self.names.declared(frame.declared_at, frame.declaration.attacker, frame.declaration.weapon,
                                        frame.declaration.target)
            self.names.turn = state.turn
            self.hp = {cid: c.hp for cid, c in state.combatants.items()}
        self.told: list[Line] = []
        self.sink: Callable[[Line], object] = sink if sink is not None else self.told.append
        self.batch = BatchCommand()  # what the batch's command says: a stand_up's movement, a turn ended by itself

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        """Tell one event of a walk."""
        for line in self.tell(rec, voided, before):
            self.sink(line)

    def tell(self, rec: StoredEvent, undone: bool = False, before: FightState | None = None) -> Iterator[Line]:
        """The narrative of one event, line by line; ``before``, the state before it, if known (else the HP this
        narrator has followed through the events it told, those undone left out)."""
        event = rec.event
        self.names.standing = before
        self.names.seq = rec.seq
        if isinstance(event, AttackDeclared):
            self.names.declared(rec.seq, event.attacker, event.weapon, event.target)
        elif isinstance(event, (ActionSettled, ActionCancelled)):  # an action over: nothing of it is kept
            self.names.attacks.pop(event.action, None)
            self.names.lowered.pop(event.action, None)
        said = self._standing_up(event, before)
        if said is None:
            said = list(_WRITERS[type(event)](event, self.names))
        if isinstance(event, DamageResolved):
            hp = (before.combatants[event.target].hp if before is not None and event.target in before.combatants
                  else self.hp.get(event.target))
            if hp_unmoved(event, hp):
                said.append(("result", f"  {self.names(event.target)}: HP 0 \u2192 0"))
        if not undone:
            if isinstance(event, CombatantJoined):
                self.hp[event.sheet.id] = event.sheet.hp
            elif isinstance(event, ResourceChanged) and event.resource == "hp":
                self.hp[event.who] = event.after
        for kind, text in said:
            if undone:
                yield Line(rec.seq, "undone", f"[undone] {text.strip()}")
            else:
                yield Line(rec.seq, kind, text)

    def _standing_up(self, event: Any, before: FightState | None) -> list[tuple[LineKind, str]] | None:
        """A stand_up's movement told as standing up, not as a move (C20, C23), and a turn that ended by itself
        as such (C36), as the batch's command says (:class:`BatchCommand`); None for any other event."""
        self.batch.see(event)
        if isinstance(event, MovementDeclared) and self.batch.stands_up(event.action):
            return [("header", f"{self.names(event.who)} stands up from Prone (a Movement Action, C20)")]
        if isinstance(event, Moved) and self.batch.stands_up(event.action):
            return [("roll", "  (standing up leaves no one's reach: no Attack of Opportunity, C23)")]
        if isinstance(event, TurnEnded):
            dying = before.combatants[event.who].dying if before is not None and event.who in before.combatants \
                else self.hp.get(event.who) == 0
            why = self.batch.ended_by_itself(event, dying)
            if why is not None:
                self.names.turn = None
                return [("roll", f"  ({self.names(event.who)}'s turn ends by itself: {why})")]
        return None

    def recall(self, records: Iterable[StoredEvent]) -> None:
        """Remember the rolls among events told before (not telling them): a reroll told next names the die it
        rerolls and its face, as the whole log's narrative does (C39; ``omen do`` said "die 0 of roll 6" alone:
        a rules tester)."""
        for rec in records:
            if isinstance(rec.event, DiceRolled):
                self.names.rolled[rec.event.counter] = rec.event
                self.names.rolled_at[rec.event.counter] = rec.seq

    def lines(self, records: Iterable[StoredEvent]) -> Iterator[Line]:
        """The narrative of these events (none of them undone), line by line: for a fight as it goes on."""
        for rec in records:
            yield from self.tell(rec)


def narrate(records: Iterable[StoredEvent]) -> list[Line]:
    """The narrative of a whole in-memory log, line by line, in event order (undone events marked)."""
    narrator = Narrator()
    walk(LinesSource([encode_line(r) for r in records], where="the events given"), narrator, chain=False,
         strict=False)  # a broken log is still told, event by event (omen verify says what is wrong with it)
    return narrator.told
