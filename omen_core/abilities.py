"""Abilities written as data (C37-C41), compiled into the rows an extension declares: terms, dice, overrides, windows.

A sheet lists an ability by id (from the shipped library
``omen_core/data/abilities.toml`` or a table's own library file, written
out in full when the fight records the sheet) or writes it out itself
(:class:`~omen_core.content.Ability`; docs/abilities.md). This module
turns each such ability into an :class:`~omen_core.hooks.Extension`, the
same rows a Python extension declares, so the engine runs a data ability
exactly as it runs Arcane Ward: a passive ability gives term handlers,
pool dice and eligibility overrides that apply while its ``when`` holds; a
triggered one a decision point at its trigger's moment (C38), offered to
each owner the trigger names who can use it (its ``when``, the outcome,
uses left, C41), whose ``use`` choice pays its cost and does its effects.

Rows read the state they are handed (typed only for the checker: this
module sits below the state).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeGuard

from .content import (
    ROUND_MOMENTS,
    Ability,
    AddDice,
    AllowDefense,
    ApplyCondition,
    ClearCondition,
    Consequence,
    ConvertToWill,
    DealDamage,
    Effect,
    Heal,
    MakeAttack,
    Modify,
    Reroll,
    Route,
    Trigger,
    When,
)
from .events import AttackDeclared, ConditionApplied, MomentReached, MovementDeclared, SaveCalled
from .hooks import (
    AttackOption,
    AutoReroll,
    Choice,
    Cost,
    DefenseOverride,
    Extension,
    Landing,
    Moment,
    PoolDice,
    Routing,
    TermHandler,
    Total,
    Window,
)
from .parts import Die, Modifier, PoolTag
from .rules import attack as rules

if TYPE_CHECKING:
    from .state import CombatantState, FightState, Frame

__all__ = ["USE", "PASS", "ON_TURN", "compile_ability", "fight_abilities", "holders", "uses_left", "effects_of",
           "consequences_of", "when_words", "trigger_words", "use_key", "on_turn_cost", "turn_cost", "target_refusal",
           "aim_refusal", "attack_weapon", "reroll_picks", "answer_target", "answered", "action_parties", "Answered"]

#: How an ability used on its owner's turn is used (C37), and the cost that way of using it takes.
ON_TURN = ("action", "bonus_action", "free")

#: The choice that uses a triggered ability, and the one that lets the moment go by.
USE, PASS = "use", "pass"


def fight_abilities(state: FightState) -> tuple[Ability, ...]:
    """Every data ability some combatant of the fight has, once each, in the order they joined (the state keeps
    them as the sheets join)."""
    return state.abilities


def holders(state: FightState, ability: Ability, written: bool = True) -> tuple[str, ...]:
    """Who has ``ability`` and is still in the fight: those whose sheet writes it out, or (``written`` False) those
    a shorthand key of whose stands for it. The two are compiled apart (a shorthand's dice record no origin), so
    each answers for its own holders only: one sheet's shorthand and another's listed id never double it."""
    ability_id = ability.id  # a written one: one id, one ability in a fight (checked at join); a shorthand's id may
    if written:              # stand for abilities of other values (each sheet's own rage dice): the value decides
        return tuple(who for who, c in state.combatants.items()
                     if c.left is None and ability_id in c.sheet.written_ids())
    return tuple(who for who, c in state.combatants.items() if c.left is None
                 and ability_id in c.sheet.shorthand_ids() and ability in c.sheet.shorthand_abilities())


def use_key(who: str, ability_id: str) -> str:
    """The key a combatant's uses of an ability are counted under (``FightState.uses``)."""
    return f"{who}/{ability_id}"


def uses_left(state: FightState, who: str, ability: Ability) -> int | None:
    """How many more times ``who`` may use ``ability`` now (C41), or None if it has no limit."""
    if ability.uses is None:
        return None
    turn, round_, fight = state.uses.get(use_key(who, ability.id), (0, 0, 0))
    used = {"turn": turn, "round": round_, "fight": fight}[ability.uses.per]
    return max(ability.uses.count - used, 0)


def uses_back(who: str, ability: Ability) -> str:
    """Until when ``who`` has no use of ``ability`` left, its uses spent (C41): per turn they come back as the
    owner's turn starts (not as another's does), per round as a round starts (the first too), per fight never."""
    per = ability.uses.per if ability.uses is not None else "fight"
    return {"turn": f"until {who}'s next turn starts", "round": "until the next round starts"}.get(per, "this fight")


def effects_of(ability: Ability, kind: type) -> tuple[Effect, ...]:
    """The ability's effects of one kind, in written order."""
    return tuple(e for e in ability.effects if isinstance(e, kind))


def consequences_of(ability: Ability) -> tuple[Consequence, ...]:
    """What an ability does at once when used (damage, healing, conditions), in written order (C25)."""
    return tuple(e for e in ability.effects if isinstance(e, (DealDamage, ApplyCondition, ClearCondition, Heal)))


def _holds(when: When, state: FightState, owner: CombatantState, decl: Answered) -> bool:
    """Whether every predicate of ``when`` holds for ``owner`` and the action ``decl`` (an attack; or a save, whose
    saver is the target its ``target_*`` read, and which no attack predicate names, as the format checks)."""
    target = state.combatants[action_parties(decl)[1]]
    if not (all(target.has(c) for c in when.target_has) and not any(target.has(c) for c in when.target_lacks)
            and _owner_holds(when, owner)):
        return False
    if not isinstance(decl, AttackDeclared):
        return True
    attacker = state.combatants[decl.attacker]
    weapon = attacker.sheet.weapon(decl.weapon) if decl.weapon else None
    props = weapon.properties if weapon is not None else frozenset()
    return ((not when.attack_kinds or decl.kind in when.attack_kinds)
            and all(p in props for p in when.weapon_properties)
            and (when.attacker_unseen is None or attacker.unseen == when.attacker_unseen)
            and (when.attack_option is None or bool(getattr(decl, when.attack_option))))


def _owner_holds(when: When, owner: CombatantState) -> bool:
    """Whether the predicates of ``when`` on the owner hold (its conditions, its HP)."""
    return (all(owner.has(c) for c in when.owner_has) and not any(owner.has(c) for c in when.owner_lacks)
            and (when.owner_hp_at_most is None or owner.hp <= when.owner_hp_at_most))


def when_words(when: When) -> str:
    """The predicates in words, for explain (``target Prone; finesse weapon``); "" if there are none."""
    parts = [
        *(["a " + " or ".join(k.replace("_", " ") for k in when.attack_kinds) + " attack"]
          if when.attack_kinds else []),
        *(f"{p} weapon" for p in when.weapon_properties),
        *(f"target {c}" for c in when.target_has),
        *(f"target not {c}" for c in when.target_lacks),
        *(["attacker Unseen" if when.attacker_unseen else "attacker seen"] if when.attacker_unseen is not None
          else []),
        *([f"declared with {when.attack_option}"] if when.attack_option else []),
        *(f"owner {c}" for c in when.owner_has),
        *(f"owner not {c}" for c in when.owner_lacks),
        *([f"owner at {when.owner_hp_at_most} HP or less"] if when.owner_hp_at_most is not None else []),
    ]
    return "; ".join(parts)


#: Whose attack, save or condition a trigger waits for, by its owner (C38), as :func:`trigger_words` says it.
_TRIGGER_SUBJECTS = {
    "attacker": "its attack", "target": "an attack on it", "ally_of_target": "an attack on an ally within its reach",
    "caller": "a save it calls", "saver": "its save", "ally_of_saver": "the save of an ally within its reach",
    "self": "its check", "afflicted": "it", "ally_of_afflicted": "an ally within its reach",
}
#: What happens to that subject at each moment, by outcome ("any": whatever it was).
_TRIGGER_VERBS = {
    "attack.declared": {"any": "is declared"}, "attack.rolled": {"any": "is rolled"},
    "attack.determined": {"any": "is decided", "hit": "hits", "miss": "misses", "crit": "is a crit"},
    "attack.damaged": {"any": "deals damage"},
    "save.resolved": {"any": "is resolved", "success": "is made", "failure": "fails"},
    "check.resolved": {"any": "is resolved", "success": "succeeds", "failure": "fails"},
}


def trigger_words(trigger: Trigger) -> str:
    """When a triggered ability is offered (C38), in words for a table: whose attack, save or check and what
    happened to it, or the moment of the round.

    >>> trigger_words(Trigger(moment="attack.determined", owner="attacker", outcome="hit"))
    'when its attack hits'
    >>> trigger_words(Trigger(moment="attack.rolled", owner="ally_of_target"))
    'when an attack on an ally within its reach is rolled'
    >>> trigger_words(Trigger(moment="condition.applied", owner="afflicted", condition="Prone"))
    'when Prone is applied to it'
    """
    moment, owner = trigger.moment, trigger.owner
    if moment in ROUND_MOMENTS:
        return {"turn.start": "at the start of its turn", "turn.end": "at the end of its turn",
                "round.end": "at the end of each round"}[moment]
    if moment == "move.left":
        return "when an enemy leaves its reach"
    if moment == "condition.applied":
        what = trigger.condition or "a condition"
        return f"when it applies {what}" if owner == "applier" else f"when {what} is applied to " + (
            "it" if owner == "afflicted" else "an ally within its reach")
    verbs = _TRIGGER_VERBS.get(moment, {"any": moment})
    return f"when {_TRIGGER_SUBJECTS.get(owner, owner)} {verbs.get(trigger.outcome, verbs['any'])}"


def _source(ability: Ability) -> str:
    """How a term of the ability names its source: the ability, and why it applied."""
    why = when_words(ability.when)
    return f"{ability.name} ({why})" if why else ability.name


def _passive_owners(state: FightState, ability: Ability, decl: AttackDeclared, total: Total,
                    written: bool = True) -> tuple[str, ...]:
    """The holders whose passive ``ability`` applies to ``total`` of the attack ``decl``: their own attacks (hit,
    damage) or defense; or, as an aura (``allies_in_reach``), an ally's within their reach (not their own).
    ``written``: as :func:`holders`."""
    subject = decl.target if total == "defense" else decl.attacker
    found = []
    for who in holders(state, ability, written):
        owner = state.combatants[who]
        if owner.down or owner.helpless:
            continue
        if ability.applies_to == "self":
            mine = who == subject
        else:
            mine = (who != subject and state.combatants[subject].side == owner.side
                    and state.engaged(who, subject))
        if mine and _holds(ability.when, state, owner, decl):
            found.append(who)
    return tuple(found)


def _passive(ability: Ability, named: bool) -> Extension:
    """A passive ability's rows: terms, pool dice, overrides, rerolls, routing, where damage lands and the attack
    option its ``when`` names, that apply while its ``when`` holds. ``named``: its dice record its name as their
    origin (a shorthand's record none, as the features always did, C37)."""
    source, origin = _source(ability), f"ability:{ability.name}"

    def terms_for(total: Total, value: int) -> Callable[[FightState, Frame], tuple[Modifier, ...]]:
        def terms(state: FightState, frame: Frame) -> tuple[Modifier, ...]:
            decl = frame.declaration
            holders = _passive_owners(state, ability, decl, total, named) if isinstance(decl, AttackDeclared) else ()
            if not holders:
                return ()  # an aura applies once, however many holders stand within reach (the first its owner)
            return (Modifier(source=source, value=value, origin=origin, owner=holders[0]),)
        return terms

    def dice_for(effect: AddDice) -> Callable[[FightState, Frame], tuple[tuple[PoolTag, int], ...]]:
        def dice(state: FightState, frame: Frame) -> tuple[tuple[PoolTag, int], ...]:
            decl = frame.declaration
            if not isinstance(decl, AttackDeclared) or not _passive_owners(state, ability, decl, "hit", named):
                return ()
            return ((_tag(effect), _sides(state, decl, effect)),) * effect.count
        return dice

    def allows_for(effect: AllowDefense) -> Callable[[FightState, AttackDeclared, str], bool]:
        def allows(state: FightState, decl: AttackDeclared, defense: str) -> bool:
            return defense == effect.defense and bool(_passive_owners(state, ability, decl, "defense", named))
        return allows

    def rerolls_for(effect: Reroll) -> Callable[[FightState, Frame], tuple[int, ...]]:
        def dice(state: FightState, frame: Frame) -> tuple[int, ...]:
            decl, roll = frame.declaration, getattr(frame, "hit_roll", None)
            if not isinstance(decl, AttackDeclared) or roll is None or not _passive_owners(
                    state, ability, decl, "hit", named):
                return ()
            return tuple(i for i, d in enumerate(roll.dice)
                         if d.pool == effect.pool and d.face in effect.faces and d.rerolled is None)
        return dice

    def routes(state: FightState, frame: Frame) -> bool:
        decl = frame.declaration
        return isinstance(decl, AttackDeclared) and bool(_passive_owners(state, ability, decl, "hit", named))

    def lands_for(effect: ConvertToWill) -> Callable[[FightState, str], Literal["will", "choice"] | None]:
        def lands(state: FightState, who: str) -> Literal["will", "choice"] | None:
            owner = state.combatants.get(who)
            if owner is None or owner.down or owner.helpless or who not in holders(state, ability, named) \
                    or not _owner_holds(ability.when, owner):
                return None  # an owner at 0 HP, Incapacitated or Paralysed gives nothing (C10, C36)
            return "choice" if effect.choice else "will"
        return lands

    def offered(state: FightState, who: str) -> bool:
        return who in holders(state, ability, named)

    option = ability.when.attack_option
    return Extension(
        id=ability.id, name=ability.name,
        terms=tuple(TermHandler(total=e.total, terms=terms_for(e.total, e.value))
                    for e in effects_of(ability, Modify) if isinstance(e, Modify)),
        pools=tuple(PoolDice(roll="damage" if e.pool == "damage" else "hit", dice=dice_for(e),
                             origin=ability.name if named else "")
                    for e in effects_of(ability, AddDice) if isinstance(e, AddDice)),
        routing=(Routing(routes=routes),) if effects_of(ability, Route) else (),
        landing=tuple(Landing(lands=lands_for(e)) for e in effects_of(ability, ConvertToWill)
                      if isinstance(e, ConvertToWill)),
        attack_options=(AttackOption(field=option, offered=offered, rule=ability.rule,
                                     refusal=lambda who: f"{who!r} has no {ability.name}"),) if option else (),
        overrides=tuple(DefenseOverride(allows=allows_for(e), name=ability.name)
                        for e in effects_of(ability, AllowDefense) if isinstance(e, AllowDefense)),
        rerolls=tuple(AutoReroll(origin=ability.name, dice=rerolls_for(e))
                      for e in effects_of(ability, Reroll) if isinstance(e, Reroll)))


def _tag(effect: AddDice) -> PoolTag:
    """The pool tag of dice an ability adds (C29)."""
    return "damage" if effect.pool == "damage" else effect.pool


def _sides(state: FightState, decl: AttackDeclared, effect: AddDice) -> int:
    """The size of an added die: the one named, else the pool's own (the primary attribute's die, the FCS die)."""
    if effect.die is not None:
        return int(effect.die[1:])
    attacker = state.combatants[decl.attacker].sheet
    if effect.pool == "fcs":
        return attacker.attributes.FCS.sides
    weapon = attacker.weapon(decl.weapon) if decl.weapon else None
    primary = rules.primary_attribute(decl.kind, weapon is not None and "finesse" in weapon.properties)
    return attacker.attributes[primary].sides


Answered = AttackDeclared | SaveCalled | MovementDeclared | MomentReached
"""The declarations of the actions whose moments an ability answers as one of their parties: an attack's, a save's
(one an action calls, or a save-ends save's ``save.resolved`` moment, C40), a move's."""


def unable_to_act(state: FightState, who: str) -> str | None:
    """Why ``who`` can answer no decision point now, or None: out of the fight (C33), at 0 HP, Dying, treated as
    Incapacitated (C36), Incapacitated or Paralysed (C10)."""
    fighter = state.combatants[who]
    if fighter.left is not None:
        return f"{who} is out of the fight ({fighter.left}, C33)"
    if fighter.hp == 0 or fighter.dying:
        return f"{who} is at 0 HP, Dying: treated as Incapacitated, no decision (C36)"
    if fighter.helpless:
        which = next((c for c in ("Incapacitated", "Paralysed") if fighter.has(c)), "helpless")
        return f"{who} is {which}: no decision (C10)"
    return None


def answered(decl: object) -> TypeGuard[Answered]:
    """Whether ``decl`` declares an action with two parties a trigger names (:data:`Answered`): an attack, a save
    (a save-ends save's moment included), a move; not an ability used on a turn, nor a moment of the round."""
    return isinstance(decl, (AttackDeclared, SaveCalled, MovementDeclared)) or (
        isinstance(decl, MomentReached) and decl.moment == "save.resolved")


def action_parties(decl: Answered) -> tuple[str, str]:
    """The two parties of an action a trigger names: the attacker and the target, the caller and the saver (at a
    save-ends save, who applied the condition and the saver, C40), or the mover (both: a move has no target; the
    ones it leaves are the owners)."""
    if isinstance(decl, AttackDeclared):
        return decl.attacker, decl.target
    if isinstance(decl, SaveCalled):
        return decl.caller, decl.saver
    if isinstance(decl, MomentReached):
        assert decl.who is not None and decl.other is not None
        return decl.other, decl.who
    return decl.who, decl.who


def _offered_to(state: FightState, ability: Ability, decl: Answered) -> tuple[str, ...]:
    """Whom the trigger names for this action: the attacker or the caller; the target or the saver; the allies of
    the target (the saver) within its reach; or the mover's enemies whose reach it left (C23)."""
    trigger = ability.trigger
    assert trigger is not None
    acting, target = action_parties(decl)
    if isinstance(decl, MovementDeclared):
        side = state.combatants[decl.who].side
        return tuple(w for w in decl.leaves if state.combatants[w].side != side)
    if trigger.owner in ("attacker", "caller"):
        return (acting,)
    if trigger.owner in ("target", "saver"):
        return (target,)
    side = state.combatants[target].side  # an ally of the target, never the one acting on it (attacking an ally)
    return tuple(who for who, c in state.combatants.items()
                 if who not in (target, acting) and c.side == side and state.engaged(who, target))


def _outcome_matches(ability: Ability, moment: Moment) -> bool:
    """Whether the action's outcome is the one the trigger waits for (C38: on a hit, a miss or a crit; a save made
    or failed); at ``attack.damaged``, whether the attack's damage reached its target (damage taken)."""
    trigger = ability.trigger
    assert trigger is not None
    if trigger.moment == "attack.damaged" and moment.damage <= 0:
        return False
    outcome = trigger.outcome
    return (outcome == "any" or (outcome == "hit" and moment.hit is True) or (outcome == "miss" and moment.hit is False)
            or (outcome == "crit" and moment.crit is True) or (outcome == "success" and moment.saved is True)
            or (outcome == "failure" and moment.saved is False))


def _can_change(ability: Ability, moment: Moment) -> bool:
    """A modifier to the hit total or the defense is offered only where it can change the outcome (C38): a
    defense bonus while the attack would hit, a hit bonus while it would miss; when the attack is only declared
    (its dice unrolled), nothing is known yet and it may matter either way."""
    if ability.trigger is not None and ability.trigger.moment == "attack.declared":
        return True
    totals = {e.total for e in effects_of(ability, Modify) if isinstance(e, Modify)}
    if effects_of(ability, Reroll):  # a reroll of one's hit dice can only turn a miss into a hit
        totals.add("hit")
    if "defense" in totals and moment.attack_total <= moment.defense_total:
        return False
    return not ("hit" in totals and moment.attack_total > moment.defense_total)


def offered_while(ability: Ability) -> str | None:
    """What an attack's outcome must be as it stands for ``ability`` to be offered after its dice (C38,
    :func:`_can_change`): ``"miss"`` for a hit modifier or a reroll of one's hit dice, ``"hit"`` for a defense
    modifier; None where its offer says nothing of it (at ``attack.declared`` nothing is rolled yet)."""
    if ability.trigger is not None and ability.trigger.moment == "attack.declared":
        return None
    totals = {e.total for e in effects_of(ability, Modify) if isinstance(e, Modify)}
    if effects_of(ability, Reroll) or "hit" in totals:
        return "miss"
    return "hit" if "defense" in totals else None


def reroll_picks(dice: Sequence[Die], rerolls: Sequence[Reroll]) -> tuple[int, ...] | None:
    """The index of the hit-roll die each chosen reroll rolls again, in order (C39): the lowest die of its pool not
    rerolled yet (of those showing one of its faces, if it names any) and not picked by an earlier one; None if
    one of them finds no such die (the ability then cannot do what it says, and is neither offered nor taken).

    >>> dice = (Die(pool="primary", sides=6, face=4), Die(pool="primary", sides=6, face=2, rerolled=1))
    >>> reroll_picks(dice, (Reroll(pool="primary"),)), reroll_picks(dice, (Reroll(pool="primary", faces=(1,)),))
    ((0,), None)
    """
    picked: list[int] = []
    for reroll in rerolls:
        found = [(d.face, i) for i, d in enumerate(dice) if i not in picked and d.pool == reroll.pool
                 and d.rerolled is None and (not reroll.faces or d.face in reroll.faces)]
        if not found:
            return None
        picked.append(min(found)[1])
    return tuple(picked)


def _rerolls_found(ability: Ability, frame: Frame) -> bool:
    """Whether each reroll the ability makes finds a die of the attack's hit roll to roll again (C39); true for an
    ability that makes none."""
    rerolls = [e for e in ability.effects if isinstance(e, Reroll)]
    roll = getattr(frame, "hit_roll", None)
    return not rerolls or (roll is not None and reroll_picks(roll.dice, rerolls) is not None)


def _restores_only(ability: Ability) -> bool:
    """Whether all a triggered ability does is restore: HP (``heal``) or the end of a condition (``clear``), each of
    which may find nothing to do (its deferred cost aside)."""
    return all(isinstance(e, (Heal, ClearCondition)) for e in ability.effects)


def _would_change(state: FightState, ability: Ability, frame: Frame, who: str) -> bool:
    """Whether a restoring ability answered by ``who`` would change something: one of its heals goes to a combatant
    below its sheet's HP, or one of its clears to one holding the condition (C38: a prompt only where it can change
    something; healing never goes above the sheet's HP). The target is the one
    :func:`~omen_core.decide.windows.answer_context` gives it."""
    for effect in ability.effects:
        whom = who if getattr(effect, "to", "actor") == "actor" else answer_target(state, ability, frame, who)
        fighter = state.combatants.get(whom) if whom is not None else None
        if fighter is None:
            return True
        if isinstance(effect, Heal) and fighter.hp < fighter.sheet.hp:
            return True
        if isinstance(effect, ClearCondition) and fighter.has(effect.condition):
            return True
    return False


def _nothing_to_restore(state: FightState, ability: Ability, frame: Frame, who: str) -> str:
    """Why a restoring ability answered by ``who`` would change nothing, effect by effect (C38): whose HP is at its
    sheet's already, who holds no such condition; said as the state stood when it was due (a hit's Second Wind is
    judged before the damage lands: it read "would restore nothing now" under the HP that fell: a tester)."""
    said: list[str] = []
    for effect in ability.effects:
        whom = who if getattr(effect, "to", "actor") == "actor" else answer_target(state, ability, frame, who)
        fighter = state.combatants.get(whom) if whom is not None else None
        if fighter is None:
            continue
        if isinstance(effect, Heal):
            said.append(f"{whom} was at its sheet's HP ({fighter.hp} of {fighter.sheet.hp}) when it was due, and "
                        "healing never goes above it")
        elif isinstance(effect, ClearCondition):
            said.append(f"{whom} held no {effect.condition} to clear")
    return f"{ability.name} would restore nothing: {'; '.join(dict.fromkeys(said)) or 'nothing to restore'} (C38)"


def answer_target(state: FightState, ability: Ability, frame: Frame, who: str) -> str | None:
    """The target of ``who``'s answer to ``ability`` (where its effects ``to = "target"`` land; explain names a
    heal's recipient by it): the afflicted or the applier at condition.applied, else the other party of the action
    (None if it has none here)."""
    if ability.trigger is not None and ability.trigger.moment == "condition.applied":
        return _condition_target(ability)(state, frame, who)
    decl = frame.declaration
    if not answered(decl):
        return None
    acting, target = action_parties(decl)
    return target if who == acting else acting


def _may_spend(state: FightState, who: str, ability: Ability) -> bool:
    """Whether ``who`` may spend the ability's Bonus Actions now: in the rounds, before its first turn they are
    for defence only (C20, §The First Round), so only an ability that does nothing but raise a defense may spend
    them then (as an Interrupt or an Attack of Opportunity may not)."""
    if not ability.cost.bonus_actions or state.round == 0 or state.had_a_turn(who):
        return True
    return all(isinstance(e, Modify) and e.total == "defense" for e in ability.effects)


def _armed(state: FightState, who: str, ability: Ability) -> bool:
    """Whether ``who`` can make the attack the ability makes, if it makes one: the weapon it names in hand (C35)."""
    attack = next((e for e in ability.effects if isinstance(e, MakeAttack)), None)
    if attack is None or attack.weapon is None:
        return True
    owner = state.combatants[who]
    return attack.weapon in owner.wielding and owner.sheet.weapon(attack.weapon) is not None


def attack_weapon(state: FightState, who: str, attack: MakeAttack) -> tuple[str | None, bool]:
    """The weapon an ability's attack is made with and whether it is unarmed: the one named, unarmed, or by
    default the first weapon in hand, else unarmed."""
    if attack.weapon is not None or attack.unarmed:
        return attack.weapon, attack.unarmed
    owner = state.combatants[who]
    held = next((w.id for w in owner.sheet.weapons if w.id in owner.wielding), None)
    return held, held is None


def _applications(ability: Ability, frame: Frame) -> tuple[ConditionApplied, ...]:
    """The conditions the action applied that the trigger waits for (its ``condition``, or any), in order."""
    trigger = ability.trigger
    assert trigger is not None
    return tuple(a for a in frame.applied if trigger.condition is None or a.condition == trigger.condition)


def _afflicted_for(state: FightState, ability: Ability, frame: Frame, who: str) -> str | None:
    """Whom a condition the trigger waits for was applied to, as ``who`` may answer it (C38): ``who`` itself (owner
    ``afflicted``), an ally within ``who``'s reach (``ally_of_afflicted``), anyone (``applier``, the action's
    actor); the first in the order applied, or None."""
    trigger = ability.trigger
    assert trigger is not None
    for applied in _applications(ability, frame):
        afflicted = applied.who
        if trigger.owner == "afflicted" and afflicted == who:
            return afflicted
        if trigger.owner == "applier" and who == frame.actor:
            return afflicted
        if trigger.owner == "ally_of_afflicted" and afflicted != who and afflicted in state.combatants \
                and state.combatants[afflicted].side == state.combatants[who].side and state.engaged(who, afflicted):
            return afflicted
    return None


def _condition_target(ability: Ability) -> Callable[[FightState, Frame, str], str]:
    """The target of an answer at ``condition.applied``: for the afflicted, the one whose action applied it; for its
    ally and for the applier, the afflicted."""
    def target(state: FightState, frame: Frame, who: str) -> str:
        afflicted = _afflicted_for(state, ability, frame, who)
        assert afflicted is not None
        return frame.actor if ability.trigger is not None and ability.trigger.owner == "afflicted" else afflicted
    return target


#: A triggered ability's gates, in the engine's order: each the reason it holds the ability back, or None.
Checks = tuple[Callable[[], str | None], ...]

#: Each of a triggered ability's gates by its place in docs/abilities.md's order (unable to act, its ``when``, its
#: uses; then, after :data:`COST_RANK` (a cost it cannot pay, the window's to judge), what it could change, a die to
#: roll again, something to restore, Bonus Actions before the first turn, the weapon in hand).
GATE_RANKS = (0, 1, 2, 4, 5, 6, 7, 8)
COST_RANK = 3


def _triggered(ability: Ability) -> Extension:
    """A triggered ability's rows: its decision point, and the terms and damage dice its uses add to the attack."""
    trigger = ability.trigger
    assert trigger is not None
    source, origin = ability.name, f"ability:{ability.name}"

    def responders(state: FightState, frame: Frame, moment: Moment) -> tuple[str, ...]:
        return tuple(who for who, why in judged(state, frame, moment) if why is None)

    def passed_over(state: FightState, frame: Frame, moment: Moment) -> tuple[tuple[str, str, int], ...]:
        return tuple((who, why[1], why[0]) for who, why in judged(state, frame, moment) if why is not None)

    def judged(state: FightState, frame: Frame, moment: Moment) -> tuple[tuple[str, tuple[int, str] | None], ...]:
        """Each holder the trigger names at this moment, and the first reason the ability's decision point is not
        offered to it (None: it is), in the order docs/abilities.md lists them (:func:`_gate`)."""
        decl = frame.declaration
        have = set(holders(state, ability))
        if trigger.moment == "condition.applied":  # whom the conditions the action applied name (C38)
            named = tuple(who for who in state.combatants if frame.applied and who in have
                          and _afflicted_for(state, ability, frame, who) is not None)
        elif isinstance(decl, MomentReached) and decl.moment == "check.resolved":  # each side of the check (C16)
            named = tuple(w for w, outcome in ((decl.who, decl.outcome),
                                               (decl.other, "failure" if decl.outcome == "success" else "success"))
                          if w is not None and trigger.outcome in ("any", outcome) and w in have)
        elif isinstance(decl, MomentReached) and decl.moment != "save.resolved":  # a moment of the round: the
            # turn's owner, or at its end everyone
            named = tuple(w for w in ((decl.who,) if decl.who is not None else tuple(state.order or state.combatants))
                          if w in have)
        elif not answered(decl) or not _outcome_matches(ability, moment):
            return ()
        else:
            return tuple((who, _gate(state, frame, who, moment, decl))
                         for who in _offered_to(state, ability, decl) if who in have)
        return tuple((who, _gate(state, frame, who, None, None)) for who in named)

    def _gate(state: FightState, frame: Frame, who: str, moment: Moment | None,
              decl: Answered | None) -> tuple[int, str] | None:
        """The first reason ``who`` is not offered the ability and its place in docs/abilities.md's order (its
        :data:`GATE_RANKS`), None if none holds it back: unable to act (C33, C36, C10); its ``when`` (on the owner,
        and in an action on the action); no use left (C41); [a cost it cannot pay: the window's to judge, C20, C22,
        C36, C41]; in an action (``decl``, ``moment``), an outcome it could not change as it stands (C38) or no die
        left to roll again (C39); nothing it would restore (C38); Bonus Actions before its first turn (C20); the
        weapon its attack is made with not in hand (C35)."""
        owner = state.combatants[who]
        every: Checks = (
            lambda: unable_to_act(state, who),
            lambda: None if (_holds(ability.when, state, owner, decl) if decl is not None
                             else _owner_holds(ability.when, owner)) else
            f"{ability.name} is offered only {'with' if decl is not None else 'while'} {when_words(ability.when)} "
            "(C37)",
            lambda: None if uses_left(state, who, ability) != 0 else
            f"{who} has no use of {ability.name} left {uses_back(who, ability)} (C41)",
            lambda: None if moment is None or _can_change(ability, moment) else
            f"the attack {'hits' if moment.attack_total > moment.defense_total else 'misses'} as it stands: "
            f"{ability.name} is offered only while it would {offered_while(ability)} (C38)",
            lambda: None if decl is None or _rerolls_found(ability, frame) else
            f"no die of the hit roll left that {ability.name} could roll again (C39)",
            lambda: None if not _restores_only(ability) or _would_change(state, ability, frame, who) else
            _nothing_to_restore(state, ability, frame, who),
            lambda: None if _may_spend(state, who, ability) else
            f"{who}'s first turn has not come yet: its Bonus Actions are for defence only until then (C20)",
            lambda: None if decl is None or _armed(state, who, ability) else
            f"the weapon {ability.name} attacks with is not in {who}'s hand (C35)")
        return next(((rank, why) for rank, check in zip(GATE_RANKS, every, strict=True)
                     if (why := check()) is not None), None)

    def terms_for(value: int) -> Callable[[FightState, Frame], tuple[Modifier, ...]]:
        def terms(state: FightState, frame: Frame) -> tuple[Modifier, ...]:
            return tuple(Modifier(source=source, value=value, origin=origin, owner=who)
                         for who in frame.chose(ability.id, USE))
        return terms

    def dice_for(effect: AddDice) -> Callable[[FightState, Frame], tuple[tuple[PoolTag, int], ...]]:
        def dice(state: FightState, frame: Frame) -> tuple[tuple[PoolTag, int], ...]:
            assert effect.die is not None
            uses = len(frame.chose(ability.id, USE))
            return (("damage", int(effect.die[1:])),) * (effect.count * uses)
        return dice

    c = ability.cost
    cost = Cost(actions=c.actions, movement=c.movement, bonus_actions=c.bonus_actions, hp=c.hp, will=c.will)
    window = Window(kind=ability.id, title=ability.name, rule=ability.rule, hook=trigger.moment,
                    choices=(Choice(USE, ability.summary or f"use {ability.name}", cost=cost,
                                    consequences=consequences_of(ability),
                                    rerolls=tuple(e for e in ability.effects if isinstance(e, Reroll)),
                                    attack=next((e for e in ability.effects if isinstance(e, MakeAttack)), None)),
                             Choice(PASS, "let it be")),
                    responders=responders, passed_over=passed_over,
                    target=_condition_target(ability) if trigger.moment == "condition.applied" else None)
    return Extension(
        id=ability.id, name=ability.name, windows=(window,),
        terms=tuple(TermHandler(total=e.total, terms=terms_for(e.value))
                    for e in effects_of(ability, Modify) if isinstance(e, Modify)),
        pools=tuple(PoolDice(roll="damage", dice=dice_for(e), origin=ability.name)
                    for e in effects_of(ability, AddDice) if isinstance(e, AddDice)))


def turn_cost(cost: Cost, in_rounds: bool) -> Cost:
    """What an action taken on one's turn costs (C20): outside the rounds no turn's Actions or Movement count."""
    return cost if in_rounds else Cost(bonus_actions=cost.bonus_actions, hp=cost.hp, will=cost.will)


def on_turn_cost(ability: Ability, in_rounds: bool = True, with_actions: bool = True) -> Cost:
    """What using ``ability`` on one's turn costs (C20, C22, C37): an Action or a Bonus Action as its ``use`` says,
    plus its ``cost``. Outside the rounds no turn's Actions or Movement are counted (as for an attack);
    ``with_actions`` False leaves the Actions out (a save pays them itself, C15)."""
    c = ability.cost
    actions = (1 if ability.use == "action" else 0) + c.actions
    return Cost(actions=actions if in_rounds and with_actions else 0, movement=c.movement if in_rounds else 0,
                bonus_actions=(1 if ability.use == "bonus_action" else 0) + c.bonus_actions, hp=c.hp, will=c.will)


def aim_refusal(state: FightState, who: str, target: str, aims: Literal["self", "ally", "enemy", "any"],
                within_reach: bool) -> str | None:
    """Why ``who`` may not use on ``target`` something that targets ``aims`` (and only within its reach), or None."""
    owner, other = state.combatants[who], state.combatants[target]
    allowed = {"self": target == who, "ally": other.side == owner.side,
               "enemy": other.side != owner.side, "any": True}[aims]
    if not allowed:
        return {"self": "it targets its owner only", "ally": "it targets an ally (or its owner)",
                "enemy": "it targets an enemy"}[aims]
    if within_reach and target != who and not state.engaged(who, target):
        return f"{target!r} is not within the reach of {who!r}"
    return None


def target_refusal(state: FightState, who: str, target: str, ability: Ability) -> str | None:
    """Why ``who`` may not use ``ability`` on ``target`` (its ``target``, ``within_reach`` and ``when``), or None."""
    why = aim_refusal(state, who, target, ability.target, ability.within_reach)
    if why is not None:
        return why
    owner, other = state.combatants[who], state.combatants[target]
    when = ability.when
    if not (all(other.has(c) for c in when.target_has) and not any(other.has(c) for c in when.target_lacks)
            and all(owner.has(c) for c in when.owner_has) and not any(owner.has(c) for c in when.owner_lacks)
            and (when.owner_hp_at_most is None or owner.hp <= when.owner_hp_at_most)):
        return f"its conditions do not hold ({when_words(when)})"
    return None


def compile_ability(ability: Ability, named: bool = True) -> Extension:
    """The rows that run ``ability`` (C37, C38); one used on its owner's turn needs none (``use_ability``).
    ``named`` False: the dice it adds record no origin (a shorthand's, recorded so before abilities were data).
    Compiled once per ability value: the rows are kept in the ability's own ``__dict__`` (a msgspec ``dict=True``
    struct: never encoded, compared or hashed), a memo the fight's state owns through it, not a module's."""
    memo = ability.__dict__
    key = "_rows" if named else "_rows_unnamed"
    rows = memo.get(key)
    if rows is None:
        rows = memo[key] = _compile(ability, named)
    return rows


def _compile(ability: Ability, named: bool) -> Extension:
    """The rows of ``ability``, compiled afresh."""
    if ability.use in ON_TURN:
        return Extension(id=ability.id, name=ability.name)
    return _passive(ability, named) if ability.use == "passive" else _triggered(ability)
