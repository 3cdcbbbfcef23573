"""What a fight waits for now, and what each actor may do: commands in the scenario vocabulary, each combination
of their arguments the rules accept here, and the dice each will roll.

Nothing here restates a rule: every offer is a command that :func:`omen_core.decide.decided` accepts in this
state. The candidates are built from the state (the combatants, what they hold, the open window, the ruleset) and
each is decided with probing dice; only those accepted are offered, with the dice the probes saw: those the
command rolls whatever the faces (``dice``) and those it may roll besides, depending on them (``may_roll``).
Arguments that take any value their schema allows (a modifier, a reason, a claimed high ground) are listed as
``free``, with what they take.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal

import msgspec

from .abilities import ON_TURN, holders, on_turn_cost, turn_cost, uses_left
from .commands import (
    ApplyConditionCommand,
    BeginAmbush,
    CallSave,
    CancelAction,
    CheckSpec,
    ClearConditionCommand,
    Command,
    Contest,
    DeclareAttack,
    Disengage,
    Draw,
    EndFight,
    EndTurn,
    Engage,
    LeaveFight,
    Move,
    Redo,
    RevealSeed,
    RollInitiative,
    StandUp,
    StaticCheck,
    Undo,
    UseAbility,
)
from .content import ATTRIBUTES, SaveEffect
from .decide import History, probe, shut_out
from .decisions import SITUATIONAL, arms, attack_variants, deferred_words, waiting_point
from .derive import defense_chance, hit_numbers
from .dice import RollRequest
from .extensions import turn_actions
from .hooks import extension_boundary
from .limits import MAX_LISTED
from .parts import DiceSourceKind
from .rules.ambush import TIME_WAITED
from .state import AttackFrame, FightState, Lasting

__all__ = ["PhaseName", "DieSpec", "DiceRoll", "Odds", "Choice", "Argument", "Offer", "Waiting", "Budget", "Options",
           "options", "odds_of", "waiting_point", "listed_others", "required_fields", "dice_roll"]


class DieSpec(msgspec.Struct, frozen=True):
    """One die to roll: its pool (C6) and its size."""

    pool: str
    sides: int


class DiceRoll(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One roll a command makes, in C29 order: who rolls, what for, and the dice; ``about``, where the purpose
    alone does not say what the roll is for, what it is for in words (C40: ``Burning damage``, ``RES save against
    Poisoned``, ``INT opposing the save against Poisoned``; left out otherwise)."""

    roller: str
    purpose: str
    dice: tuple[DieSpec, ...]
    about: str | None = None


class Odds(msgspec.Struct, frozen=True, kw_only=True):
    """An Active Defense answer's exact chances, from the dice (no sampling; C7, C8): ``miss``, that it turns the
    hit into a miss (its dice reach ``needs``: the attack total less the base defense, the defense's bonus and
    rating); ``crit``, whether the hit is a crit as it stands; ``removes_crit``, that it removes the crit (a miss
    cancels it, C7; "0" with no crit to remove). Fractions as text: "5/8", "0", "1"."""

    needs: int
    miss: str
    crit: bool
    removes_crit: str


class Choice(msgspec.Struct, frozen=True, kw_only=True):
    """One legal combination of an offer's arguments, the dice the command then rolls, and, for an answer to an
    Active Defense window, its exact odds (left out elsewhere)."""

    args: dict[str, Any]
    dice: tuple[DiceRoll, ...] = ()
    may_roll: tuple[DiceRoll, ...] = ()
    odds: Odds | msgspec.UnsetType = msgspec.UNSET


class Argument(msgspec.Struct, frozen=True, kw_only=True):
    """An argument left to the caller: its name, what it takes, and whether it is ``required`` (the command is
    refused without it: a field of the command with no default, :func:`required_fields`)."""

    name: str
    takes: str
    required: bool = False


def required_fields(kind: type) -> frozenset[str]:
    """The fields (as encoded) a command type is refused without: those with no default."""
    info = msgspec.inspect.type_info(kind)
    return frozenset(f.encode_name for f in info.fields if f.required) \
        if isinstance(info, msgspec.inspect.StructType) else frozenset()


def _marked(kind: type, free: tuple[Argument, ...]) -> tuple[Argument, ...]:
    """``free`` with each argument's ``required`` read from the command type ``kind``'s fields."""
    required = required_fields(kind)
    return tuple(msgspec.structs.replace(a, required=a.name in required) for a in free)


class Offer(msgspec.Struct, frozen=True, kw_only=True):
    """A command an actor may give now (``actor`` None: the GM's), the rule behind it, what it costs, each legal
    combination of its arguments, and the arguments left free."""

    command: str
    actor: str | None
    rule: str
    cost: str
    choices: tuple[Choice, ...]
    free: tuple[Argument, ...] = ()
    note: str = ""


#: A fight's phase as the options, the state views and the server name it (``omen_core.machine.Phase``'s values).
PhaseName = Literal["setup", "ambush", "initiative", "rounds", "ended"]


class Waiting(msgspec.Struct, frozen=True, kw_only=True):
    """The decision the fight waits on: its kind, who may answer, with which commands, the cost and the rule."""

    kind: str
    title: str
    rule: str
    who: tuple[str, ...]
    answers: tuple[str, ...]
    cost: str
    resumes: str
    action: int | None = None


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """A combatant's standing: its turn's Action and Movement Action left, Bonus Actions, what is in hand,
    ``left``: why it is out of the fight, if it is (fled, yielded, dead: C33); ``uses``: how many more times it may
    use each of its abilities that has a limit (C41), by id; ``deferred``: the deferred costs it has still to pay
    (C41), each as ``ability id: start_of_next_turn`` or ``end_of_next_turn``; ``remaining``: the ticks left of
    each condition that has a duration (C28); ``until``: each condition lasting until a named combatant's next
    turn, and which moment of it (C40)."""

    who: str
    name: str
    side: str
    turn: bool
    actions: int
    movement: int
    bonus_actions: int
    in_hand: tuple[str, ...]
    hp: int
    will: int
    conditions: dict[str, int]
    left: Literal["fled", "yielded", "dead"] | None = None
    uses: dict[str, int] = {}
    deferred: tuple[Annotated[str, msgspec.Meta(pattern=r"^.+: (start_of_next_turn|end_of_next_turn)$")], ...] = ()
    remaining: dict[str, int] = {}
    until: dict[str, Lasting] = {}


class Options(msgspec.Struct, frozen=True, kw_only=True):
    """What a fight waits for and who may do what: what ``omen status --json`` prints."""

    fight_id: str
    seq: int
    head: str
    phase: PhaseName
    round: int
    turn: str | None
    dice: DiceSourceKind | None
    waiting: Waiting | None
    combatants: tuple[Budget, ...]
    offers: tuple[Offer, ...]


# -- the waiting decision ---------------------------------------------------------------------------------------


def _waiting(state: FightState) -> Waiting | None:
    found = waiting_point(state)
    if found is None:
        return None
    point, who, action = found
    assert state.ruleset is not None
    answers = tuple(dict.fromkeys(str(a.command.__struct_config__.tag) for a in point.answers))
    return Waiting(kind=point.kind, title=point.title, rule=point.rule, who=who, answers=answers,
                   cost=point.cost(state.ruleset), resumes=point.resumes, action=action)


# -- probing ---------------------------------------------------------------------------------------------------


def dice_roll(request: RollRequest) -> DiceRoll:
    """A roll's request as the dice a command rolls (what options and the server's staged commands list)."""
    return DiceRoll(roller=request.roller, purpose=request.purpose,
                    dice=tuple(DieSpec(tag, sides) for tag, sides in request.pool), about=request.about or None)


def _try(state: FightState, command: Command, history: History | None) -> Choice | None:
    """The choice ``command`` makes if the rules accept it here (with the dice it rolls), else None."""
    ok, certain, maybe = probe(state, command, history)
    if not ok:
        return None
    args = {k: v for k, v in msgspec.to_builtins(command).items() if k != "command"}
    return Choice(args=args, dice=tuple(dice_roll(r) for r in certain),
                  may_roll=tuple(dice_roll(r) for r in maybe))


def _offer(state: FightState, history: History | None, tag: str, actor: str | None, rule: str, cost: str,
           candidates: Iterable[Command], free: tuple[Argument, ...] = (), note: str = "") -> Offer | None:
    listed = list(candidates)
    if not listed or shut_out(state, type(listed[0])):  # the lifecycle refuses them all: no need to probe each
        return None
    choices = tuple(c for c in (_try(state, cmd, history) for cmd in listed) if c is not None)
    if not choices:
        return None
    return Offer(command=tag, actor=actor, rule=rule, cost=cost, choices=choices, free=_marked(type(listed[0]), free),
                 note=note)


# -- the candidates, command by command --------------------------------------------------------------------------

_CHECK_FREE = (Argument(name="check.modifiers", takes="the check's situational modifiers: a list of {source, value} "
                                                     "(a field of the argument check)"),)
_CONTEST_FREE = tuple(Argument(name=f"{side}.modifiers", takes=f"the {side}'s situational modifiers: a list of "
                                                                f"{{source, value}} (a field of the argument {side})")
                      for side in ("initiator", "defender"))
_ATTACK_FREE = (
    Argument(name=SITUATIONAL[0], takes=SITUATIONAL[1]),
    Argument(name="damage_modifiers", takes="damage modifiers: a list of {source, value}"),
    Argument(name="branches", takes="consequences on_hit / on_miss / on_crit, in written order (C25)"),
)


def listed_others(state: FightState, who: str, unseen: frozenset[str] = frozenset()) -> tuple[list[str], str]:
    """The other combatants an offer of ``who``'s lists (at most :data:`~omen_core.limits.MAX_LISTED`: those
    engaged with it first, then its foes, then its allies, each in the order they joined), and the note for the
    rest: any of them may be named, the rules check it (issue #26: listing every pair of 300 combatants took
    minutes). ``unseen``: combatants the asking seat may not see, neither listed nor counted in the note (which
    of the others a list holds must not depend on them)."""
    others = [o for o in state.combatants if o != who and o not in unseen]
    left = len(others) - MAX_LISTED
    if left <= 0:
        return others, ""
    side = state.combatants[who].side
    near = set(state.engaged_with(who))
    chosen = set(sorted(others, key=lambda o: (o not in near, state.combatants[o].side == side))[:MAX_LISTED])
    note = f"{left} more combatant(s) not listed: name any (the rules check it when given)"
    return [o for o in others if o in chosen], note


def _noted(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _attacks(state: FightState, history: History | None, unseen: frozenset[str]) -> Iterator[Offer]:
    for who in state.combatants:
        candidates = []
        variants = attack_variants(state, who)
        targets, more = listed_others(state, who, unseen)
        for target in targets:
            for arm in arms(state, who):
                for variant in variants:
                    candidates.append(DeclareAttack(attacker=who, target=target, **arm, **variant))
        offer = _offer(state, history, "declare_attack", who, "§Resolving an Attack, C4-C13", "1 Action",
                       candidates, _ATTACK_FREE, _noted(more))
        if offer is not None:
            yield offer


def _answers(state: FightState, history: History | None, unseen: frozenset[str]) -> Iterator[Offer]:
    """The answers to the open decision, each as its point's candidates give them (:mod:`omen_core.decisions`),
    grouped by command, offered where the rules accept them."""
    found = waiting_point(state)
    if found is None:
        return
    point, who, _action = found
    assert state.ruleset is not None
    free = {a.command for a in point.answers if a.free}
    sampled = {a.command: (Argument(name=a.argument[0], takes=a.argument[1]),) for a in point.answers if a.argument}
    for responder in (None,) if point.step is None else who:
        by_tag: dict[str, list[Command]] = {}
        for command in point.candidates(state, responder):
            by_tag.setdefault(str(command.__struct_config__.tag), []).append(command)  # type: ignore[arg-type]
        for tag, candidates in by_tag.items():
            kind = type(candidates[0])
            cost = "free" if kind in free else point.cost(state.ruleset)
            for offer in _named(state, history, tag, responder, point.rule, cost, candidates, sampled.get(kind, ())):
                yield _with_odds(state, offer) if point.kind == "active_defense" else offer


def odds_of(state: FightState, defense: str | None, weapon: str | None, crit: bool | None = None) -> Odds:
    """The exact odds of answering the open Active Defense window with ``defense`` (None: declining; a Parry with
    ``weapon``) (:func:`omen_core.derive.defense_chance`; ``crit``, if the caller knows it already)."""
    frame = state.pending
    assert isinstance(frame, AttackFrame)
    chance = defense_chance(state, frame, defense, weapon, crit)
    return Odds(needs=chance.needs, miss=str(chance.miss), crit=chance.crit,
                removes_crit=str(chance.miss if chance.crit else 0))


def _with_odds(state: FightState, offer: Offer) -> Offer:
    """An Active Defense offer with each choice's exact odds."""
    frame = state.pending
    assert isinstance(frame, AttackFrame)
    crit = hit_numbers(state, frame)[2].exceeds
    choices = tuple(msgspec.structs.replace(c, odds=odds_of(state, c.args.get("defense"), c.args.get("weapon"), crit))
                    for c in offer.choices)
    return msgspec.structs.replace(offer, choices=choices)


def _cancel_note(state: FightState) -> str:
    """What ``cancel_action`` would call off, in words: the action waiting and what stays done (found by a tester:
    the GM's form named neither)."""
    frame = state.pending
    if frame is None:
        return ""
    kind = str(frame.declaration.__struct_config__.tag).replace("_", " ")
    by = f" by {frame.actor}" if frame.actor else ""
    if kind == "moment reached":
        return (f"calls off action {frame.action} (a moment{by} that abilities answer, C38): its decisions go "
                "unanswered and the fight goes on from it")
    return f"calls off action {frame.action} ({kind}{by}): the costs already paid stay paid"


def _named(state: FightState, history: History | None, tag: str, actor: str | None, rule: str, cost: str,
           candidates: Iterable[Command], free: tuple[Argument, ...] = (), note: str = "") -> Iterator[Offer]:
    offer = _offer(state, history, tag, actor, rule, cost, candidates, free, note)
    if offer is not None:
        yield offer


def _allies_matter(state: FightState) -> frozenset[str]:
    """The sides some combatant of which has an ability that answers for an ally within its reach or reaches its
    allies (an aura, ``applies_to = "allies_in_reach"``; a trigger whose owner is an ``ally_of_`` another, C38):
    their allies' positions change what the abilities do."""
    sides: set[str] = set()
    for ability in state.abilities:
        trigger = getattr(ability, "trigger", None)
        if getattr(ability, "applies_to", "self") == "allies_in_reach" or (
                trigger is not None and str(getattr(trigger, "owner", "")).startswith("ally_of_")):
            sides.update(state.combatants[who].side for who in holders(state, ability) if who in state.combatants)
    return frozenset(sides)


def _turn_commands(state: FightState, history: History | None, unseen: frozenset[str]) -> Iterator[Offer]:
    in_rounds = state.phase.name == "ROUNDS"
    for who, fighter in state.combatants.items():
        near = [other for other in state.engaged_with(who) if other not in unseen]
        moves = [Move(who=who), *(Move(who=who, leaves=(other,)) for other in near[:MAX_LISTED])]
        more = (f"{len(near) - MAX_LISTED} more combatant(s) it is engaged with not listed: name any (the rules "
                "check it when given)") if len(near) > MAX_LISTED else ""
        yield from _named(state, history, "move", who, "C20, C23", "1 Movement Action", moves,
                          note=_noted("leaves: any of the combatants listed in the choices, together" if near else "",
                                      more))
        if fighter.prone:
            yield from _named(state, history, "stand_up", who, "C20, C28", "1 Movement Action" if in_rounds else "free",
                              [StandUp(who=who)])
        yield from _named(state, history, "disengage", who, "C22, C23", "1 Bonus Action", [Disengage(who=who)])
        gear = [w.id for w in fighter.sheet.weapons] + ([fighter.sheet.shield.id] if fighter.sheet.shield else [])
        draws = [Draw(who=who, weapon=item) for item in gear if item not in fighter.wielding]
        cost = state.ruleset.economy.draw.replace("_", " ") if state.ruleset and in_rounds else "free"
        yield from _named(state, history, "draw", who, "§Preparing for Combat, C18, C35", cost, draws)
        yield from _abilities(state, history, who, unseen)
        yield from _named(state, history, "end_turn", who, "§Your Turn", "free", [EndTurn(who=who)])
        effect = SaveEffect(name="effect", save="AGI", against="AGI", action_cost=1)
        free_effect = SaveEffect(name="effect", save="AGI", against="AGI", action_cost=0)
        savers, more = listed_others(state, who, unseen)
        kept = {who, *savers}
        saves = [CallSave(caller=who, saver=other, effect=e) for other in state.combatants if other in kept
                 for e in (effect, free_effect)]
        offer = _offer(state, history, "call_save", who, "C15, C25", "the effect's cost in Actions (action_cost)",
                       saves, (Argument(name="effect", takes="the effect that calls for the save: save and against "
                                        "attributes, spell, action_cost, on_success / on_failure consequences (C25)"),))
        if offer is not None:  # the note says the action costs the choices show, not those refused (out of turn)
            shown = sorted({c.args["effect"].get("action_cost", 1) for c in offer.choices}, reverse=True)
            costs = " and ".join(map(str, shown))
            yield msgspec.structs.replace(offer, note=_noted(
                f"the choices show the effect with action_cost {costs}; any effect may be given", more))


def _abilities(state: FightState, history: History | None, who: str, unseen: frozenset[str]) -> Iterator[Offer]:
    """Each ability ``who`` uses on its turn (C37), one offer each: on every target it may be used on now, with
    what it costs (docs/abilities.md)."""
    usable = [a for a in state.combatants[who].sheet.written_abilities() if a.use in ON_TURN]
    actions = turn_actions(state, who)  # an extension's actions, used the same way (omen_core.hooks.TurnAction)
    if not usable and not actions:
        return
    listed, more = listed_others(state, who, unseen)
    in_rounds = state.phase.name == "ROUNDS"
    for ability in usable:
        cost = on_turn_cost(ability, in_rounds).words()
        if ability.deferred is not None:  # a cost that settles later is one of its costs (C37, C41)
            cost += f" now; {deferred_words(ability.deferred)}"
        candidates = [UseAbility(who=who, ability=ability.id, target=t) for t in (who, *listed)]
        yield from _named(state, history, "use_ability", who, ability.rule, cost, candidates,
                          note=_noted(f"{ability.name}: {ability.summary}" if ability.summary else ability.name, more))
    for extension in actions:
        act = extension.action
        assert act is not None
        candidates = [UseAbility(who=who, ability=extension.id, target=t) for t in (who, *listed)]
        yield from _named(state, history, "use_ability", who, act.rule, turn_cost(act.cost, in_rounds).words(),
                          candidates, note=_noted(f"{extension.name}: {act.summary}", more))


def _checks(state: FightState, history: History | None, unseen: frozenset[str]) -> Iterator[Offer]:
    assert state.ruleset is not None
    for who, fighter in state.combatants.items():
        skills = sorted({*fighter.sheet.skills, *state.ruleset.skill_attributes})
        specs = [CheckSpec(who=who, skill=s) for s in skills] + [CheckSpec(who=who, attribute=a) for a in ATTRIBUTES]
        yield from _named(state, history, "static_check", who, "C16", "free",
                          [StaticCheck(check=spec, difficulty=10) for spec in specs],
                          (*_CHECK_FREE, Argument(name="difficulty", takes="the difficulty set by the GM: an integer")),
                          note="the choices show difficulty 10; any difficulty may be set")
        others, more = listed_others(state, who, unseen)
        contests = [Contest(initiator=CheckSpec(who=who, skill=s), defender=CheckSpec(who=o, skill=s))
                    for o in others for s in skills[:1]]
        yield from _named(state, history, "contest", who, "C16", "free", contests, _CONTEST_FREE,
                          note=_noted("initiator and defender roll any skill or attribute their sheets allow (as "
                                      "for static_check)", more))


def _flow(state: FightState, history: History | None, unseen: frozenset[str]) -> Iterator[Offer]:
    names = list(state.combatants)
    sides: dict[str, list[str]] = {}
    for who, fighter in state.combatants.items():
        sides.setdefault(fighter.side, []).append(who)
    ambushes: list[Command] = []
    for _side, members in sides.items():
        others = [w for w in names if w not in members]
        if others:
            ambushes += [BeginAmbush(ambushers=tuple(members), defenders=tuple(others), time_waited=band)
                         for band in TIME_WAITED]
            ambushes.append(BeginAmbush(ambushers=tuple(members), defenders=tuple(others), difficulty=10))
    yield from _named(state, history, "begin_ambush", None, "C17, C18", "free", ambushes,
                      note="ambushers and defenders: any of the combatants shown, on opposing sides")
    yield from _named(state, history, "roll_initiative", None, "C19", "free", [RollInitiative()],
                      (Argument(name="modifiers", takes="per combatant, a list of {source, value}"),))
    pairs = dict.fromkeys((a, b) for a in names for b in listed_others(state, a, unseen)[0] if a < b)
    if len(names) > MAX_LISTED + 1:  # a pair listed only from its later name's side
        pairs.update(dict.fromkeys((b, a) for a in names for b in listed_others(state, a, unseen)[0] if b < a))
    # a pair not engaged may be engaged, an engaged one parted: the other way round changes nothing (a GM read
    # "engages" offered for a pair already engaged as if it meant something: a tester); allies are offered only
    # to be parted (reach and its reactions are between enemies, C23, C24; a GM tester read ally pairs as noise),
    # but where an ability of their side answers for an ally within reach (C37, C38: an aura, an `ally_of_` owner),
    # which without it a GM at the table could never bring about (a tester)
    near = _allies_matter(state)
    engages = [Engage(who=a, others=(b,), engaged=not state.engaged(a, b)) for a, b in pairs
               if state.engaged(a, b) or state.combatants[a].side != state.combatants[b].side
               or state.combatants[a].side in near]
    engages.sort(key=lambda e: not e.engaged)  # engaging first, parting after (a form's first choice parted a pair)
    more = ("each combatant's pairs list at most " f"{MAX_LISTED} others: any pair may be named (the rules check "
            "it when given)") if len(names) > MAX_LISTED + 1 else ""
    yield from _named(state, history, "engage", None, "positions (the GM's)", "free", engages,
                      note=_noted("each pair once, either way round the same engagement; `others` may name "
                                  "several combatants at once", more))


#: ``apply_condition``'s optional arguments of who applied it and how long it lasts (C40), not listed in the
#: choices but for ``by`` of a condition a save ends (:func:`_applied`): any combatant may be named; the rules check
#: it when given.
_CONDITION_FREE = (
    Argument(name="by", takes="who applied it, a combatant's id (left out: no one): needed for a condition a save "
                              "ends, whose die opposes the save, and then another than the afflicted (C15, C40); "
                              "the default of `of`"),
    Argument(name="until", takes="start_of_next_turn or end_of_next_turn (left out: it lasts until cleared, or "
                                 "as the ruleset says): it clears then, at the start or the end of the next turn "
                                 "of `of` (C40); needs `of` or `by`"),
    Argument(name="of", takes="whose next turn `until` counts, a combatant's id (left out: `by`); only with `until` "
                              "(C40)"),
)


def _applied(state: FightState, conditions: list[str], unseen: frozenset[str]) -> Iterator[ApplyConditionCommand]:
    """Each condition on each combatant; a condition a save ends needs ``by``, another than the afflicted (C15,
    C40): listed once with each other combatant :func:`listed_others` lists (it was left out, found by a tester)."""
    assert state.ruleset is not None
    for who in state.combatants:
        others = None
        for condition in conditions:
            if state.ruleset.conditions[condition].save_ends is None:
                yield ApplyConditionCommand(who=who, condition=condition)
                continue
            others = others if others is not None else listed_others(state, who, unseen)[0]
            yield from (ApplyConditionCommand(who=who, condition=condition, by=by) for by in others)


def _gm(state: FightState, history: History | None, unseen: frozenset[str]) -> Iterator[Offer]:
    assert state.ruleset is not None
    conditions = sorted(state.ruleset.conditions)  # a live ruleset keeps its file order, a stored one is sorted
    applied = [*_applied(state, conditions, unseen)]
    saved = [c for c in conditions if state.ruleset.conditions[c].save_ends is not None]
    yield from _named(state, history, "apply_condition", None, "C28", "free", applied,
                      (Argument(name="stacks", takes="how many stacks: 1 or more"),
                       Argument(name="reason", takes="free text"),
                       *_CONDITION_FREE),
                      note=f"{', '.join(saved)}: a save ends it (C40), listed with each `by` it may take" if saved
                      else "")
    cleared = [ClearConditionCommand(who=w, condition=c) for w, f in state.combatants.items() for c in f.conditions]
    yield from _named(state, history, "clear_condition", None, "C28", "free", cleared,
                      (Argument(name="reason", takes="free text"),))
    sides = sorted({f.side for f in state.combatants.values()})
    reasons: tuple[Literal["yielded", "fled", "defeated"], ...] = ("yielded", "fled", "defeated")
    leaving: tuple[Literal["fled", "yielded", "dead"], ...] = ("fled", "yielded", "dead")
    leaves = [LeaveFight(who=w, reason=r) for w in state.combatants for r in leaving]
    yield from _named(state, history, "leave_fight", None, "C33", "free", leaves,
                      (Argument(name="note", takes="free text"),))
    ends = [EndFight(reason="gm"), *(EndFight(reason=r, side=s) for r in reasons for s in sides)]
    yield from _named(state, history, "end_fight", None, "§Your Turn, C33", "free", ends,
                      (Argument(name="note", takes="free text"),))
    yield from _named(state, history, "cancel_action", None, "lifecycle", "free",
                      [CancelAction(reason="the GM calls it off")], (Argument(name="reason", takes="free text"),),
                      note=_cancel_note(state))
    if state.seed_commitment is not None and state.revealed_seed is None and state.at_rest:  # between actions
        yield Offer(command="reveal_seed", actor=None, rule="dice", cost="free",
                    choices=(Choice(args={}),), free=_marked(RevealSeed, (Argument(name="seed",
                                                                                   takes="the seed, in hex"),)),
                    note="the seed must hash to the commitment recorded at the start")
    yield from _named(state, history, "undo", None, "undo", "free", [Undo()],
                      (Argument(name="to_seq", takes="the seq of the first event to undo, with all after it (left "
                                                     "out: back to the last command begun with no action in "
                                                     "progress, a whole action with the answers inside it): the "
                                                     "first event of an earlier such command"),
                       Argument(name="reason", takes="free text")))
    yield from _named(state, history, "redo", None, "undo", "free", [Redo()],
                      (Argument(name="reason", takes="free text"),))


def options(state: FightState, history: History | None = None, offers_too: bool = True,
            unseen: frozenset[str] = frozenset()) -> Options:
    """What the fight in ``state`` waits for, and every command the rules accept now, by actor (``offers_too``
    False: where the fight stands and who may do what with what left, without the offers, which probe the
    rules for each actor: what ``omen do`` prints). ``unseen``: the combatants a seat may not see, left out of
    the lists of others an offer holds (a list holds at most :data:`~omen_core.limits.MAX_LISTED`, so a seat's
    list filtered from the GM's would shift with them); the seat's filter (``seat_options``) does the rest.
    An extension failing while its answers are probed is :class:`~omen_core.hooks.ExtensionFailed`."""
    offers: list[Offer] = []
    if state.started and offers_too:
        with extension_boundary():  # a broken extension's answer is its failure, never "not offered"
            if state.ending is None:
                for produce in (_answers, _attacks, _turn_commands, _checks, _flow, _gm):
                    offers.extend(produce(state, history, unseen))
            else:
                offers.extend(o for o in _gm(state, history, unseen) if o.command in ("reveal_seed", "undo", "redo"))
    budgets = tuple(
        Budget(who=who, name=f.sheet.name, side=f.side, turn=state.whose_turn == who,
               actions=state.turn_actions if state.whose_turn == who else 0,
               movement=state.turn_movement if state.whose_turn == who else 0, bonus_actions=f.bonus_actions,
               in_hand=f.held, hp=f.hp, will=f.will, conditions=dict(f.conditions), left=f.left,
               uses={a.id: left for a in f.sheet.written_abilities()
                     if (left := uses_left(state, who, a)) is not None},
               deferred=tuple(f"{p.ability}: {p.moment}" for p in state.deferred if p.who == who),
               remaining=f.ticks_left(), until=state.lasting(who))
        for who, f in state.combatants.items())
    return Options(fight_id=state.fight_id, seq=state.version, head=f"{state.version}:{state.last_hash}",
                   phase=state.phase.value, round=state.round, turn=state.whose_turn, dice=state.dice_mode,
                   waiting=_waiting(state) if state.started else None, combatants=budgets, offers=tuple(offers))
