"""Deciding the fight's flow: ambush (C17, C18), initiative (C19), rounds and turns (C20, C21), the end.

Also the GM's statements about positions (who is within whose reach), drawing
weapons, Disengage, and the check after each command that ends a fight when a
side is defeated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from ..commands import (
    AgreeInitiative,
    BeginAmbush,
    CheckSpec,
    Disengage,
    Draw,
    EndFight,
    EndTurn,
    Engage,
    LeaveFight,
    RollInitiative,
    RollOff,
)
from ..errors import RuleViolation
from ..events import (
    ActionCancelled,
    AmbushDifficultySet,
    AmbushStarted,
    BonusActionsRefilled,
    CombatantLeft,
    Disengaged,
    EngagementChanged,
    FightEnded,
    InitiativeAgreed,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    InitiativeTied,
    Modifier,
    MomentReached,
    ResourceChanged,
    RoundEnded,
    RoundStarted,
    SurpriseDetermined,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    WeaponDrawn,
)
from ..hooks import Moment
from ..limits import MAX_ROLL_OFFS
from ..machine import Phase
from ..rules.ambush import PARTIAL_SURPRISE_INITIATIVE, ambush_difficulty, band, surprise_tier
from ..state import MomentFrame, deferred_due, side_down, sides_standing
from .checks import roll_side
from .conditions import Timing, clear_until, settle_deferred, tick
from .draft import Draft, require_turn
from .windows import Resume, moment_known, nothing_rolled, open_moment, settle_pending

__all__ = ["begin_ambush", "roll_initiative", "agree_initiative", "roll_off", "end_turn", "engage", "draw",
           "disengage", "end_fight", "require_turn", "check_defeat", "end_dying_turn", "settle_the_rounds",
           "DYING_TURN", "tick"]


# -- ambush ---------------------------------------------------------------------------------


def begin_ambush(draft: Draft, cmd: BeginAmbush) -> None:
    """C17: each ambusher rolls Stealth (declared order) for the difficulty, unless the GM presets it;
    then each defender rolls Perception against it (C18, C29)."""
    draft.require_phase("ambush")
    if (cmd.time_waited is None) == (cmd.difficulty is None):
        raise RuleViolation("C17", "give either the time the ambushers waited or a preset difficulty")
    _distinct(draft, [*cmd.ambushers, *cmd.defenders], "an ambush")
    if not cmd.ambushers or not cmd.defenders:
        raise RuleViolation("C17", "an ambush needs ambushers and defenders")
    for who in [*cmd.ambushers, *cmd.defenders]:
        draft.present(who, "take part in an ambush")
    sides = {draft.combatant(w).side for w in cmd.ambushers}
    if len(sides) > 1:
        raise RuleViolation("C17", f"the ambushers lie in wait together, on one side (they are on {sorted(sides)})")
    if any(draft.combatant(w).side in sides for w in cmd.defenders):
        raise RuleViolation("C17", "a defender is on the ambushers' side")
    minutes = cmd.time_waited if isinstance(cmd.time_waited, (int, float)) else None
    waited = band(minutes) if minutes is not None else cmd.time_waited
    draft.emit(AmbushStarted(ambushers=cmd.ambushers, defenders=cmd.defenders, time_waited=waited,  # type: ignore[arg-type]
                             preset_difficulty=cmd.difficulty, minutes=minutes))
    if waited is not None:
        stealth = tuple(roll_side(draft, CheckSpec(who=who, skill="Stealth"), "stealth", "check")
                        for who in cmd.ambushers)
        difficulty = ambush_difficulty([s.total for s in stealth], waited)  # type: ignore[arg-type]
        draft.emit(AmbushDifficultySet(stealth=stealth, time_waited=waited, difficulty=difficulty))  # type: ignore[arg-type]
    else:
        assert cmd.difficulty is not None
        difficulty = cmd.difficulty
        draft.emit(AmbushDifficultySet(difficulty=difficulty))
    for who in cmd.defenders:
        perception = roll_side(draft, CheckSpec(who=who, skill="Perception"), "perception", "check")
        draft.emit(SurpriseDetermined(who=who, perception=perception, difficulty=difficulty,
                                      tier=surprise_tier(perception.total, difficulty)))


def _distinct(draft: Draft, who: Iterable[str], what: str) -> None:
    seen: set[str] = set()
    for w in who:
        draft.combatant(w)
        if w in seen:
            raise RuleViolation("setup", f"{w!r} is named twice in {what}")
        seen.add(w)


# -- initiative -----------------------------------------------------------------------------


def roll_initiative(draft: Draft, cmd: RollInitiative) -> None:
    """C19: everyone rolls an AGI check (in the order they joined, C29), Partial Surprise at −5 (C18)."""
    draft.require_phase("initiative")
    if draft.state.initiative:
        raise RuleViolation("C19", "initiative has already been rolled")
    for who in cmd.modifiers:
        draft.combatant(who)
    present = [w for w, f in draft.state.combatants.items() if not f.out]
    if len(present) < 2:
        raise RuleViolation("C19", "a fight needs at least two combatants in it")
    for who in present:  # C33: one that left the fight rolls no initiative and takes no turn
        mods = tuple(cmd.modifiers.get(who, ()))
        if draft.state.surprise.get(who) == "partial":
            mods += (Modifier(source="Partial Surprise (C18)", value=PARTIAL_SURPRISE_INITIATIVE),)
        check = roll_side(draft, CheckSpec(who=who, attribute="AGI", modifiers=mods), "initiative", "check")
        draft.emit(InitiativeRolled(who=who, check=check))
    _settle_ties(draft)


def _settle_ties(draft: Draft) -> None:
    """Roll off tied groups of foes until broken; stop at a tied group of allies, who may agree (C19); refuse the
    command after :data:`~omen_core.limits.MAX_ROLL_OFFS` roll-offs (dice that tie foes every time)."""
    roll_offs = 0
    while True:
        tied = next((g for g in draft.state.ranking if len(g) > 1), None)
        if tied is None:
            break
        allies = len({draft.combatant(w).side for w in tied}) == 1
        draft.emit(InitiativeTied(group=tied, allies=allies))
        if allies:
            return
        if roll_offs == MAX_ROLL_OFFS:
            raise RuleViolation("C32", f"{', '.join(tied)} still tie after {MAX_ROLL_OFFS} roll-offs: the dice given "
                                       "tie them every time; nothing was written")
        roll_offs += 1
        _roll_off(draft, tied)
    draft.emit(InitiativeOrderSet(order=tuple(w for g in draft.state.ranking for w in g)))
    _start_round(draft, 1)


def _roll_off(draft: Draft, group: tuple[str, ...]) -> None:
    """C32: the tied combatants roll their initiative roll again, with the same modifiers (Partial Surprise's
    −5 and any modifier given with their initiative roll)."""
    mods = draft.state.initiative_modifiers
    rolls = tuple(roll_side(draft, CheckSpec(who=w, attribute="AGI", modifiers=mods.get(w, ())), "roll_off", "check")
                  for w in group)
    draft.emit(InitiativeRollOff(group=group, rolls=rolls))


def agree_initiative(draft: Draft, cmd: AgreeInitiative) -> None:
    """C19: tied allies may simply agree who goes first."""
    group = _open_tie(draft)
    if sorted(cmd.order) != sorted(group):
        raise RuleViolation("C19", f"the agreed order must list exactly the tied allies {list(group)}")
    draft.emit(InitiativeAgreed(order=cmd.order))
    _settle_ties(draft)


def roll_off(draft: Draft, cmd: RollOff) -> None:
    """C19: tied allies roll off after all."""
    _roll_off(draft, _open_tie(draft))
    _settle_ties(draft)


def _open_tie(draft: Draft) -> tuple[str, ...]:
    if not draft.state.tie_open:
        raise RuleViolation("C19", "no initiative tie among allies is waiting for a decision")
    return draft.state.tie_open


# -- rounds and turns -----------------------------------------------------------------------


def _start_round(draft: Draft, number: int) -> None:
    """A round starts; the first one with every combatant's Bonus Actions full (C20: before their first turn
    everyone has 2, for defence, whatever was spent before the rounds), then the first turn begins."""
    draft.emit(RoundStarted(round=number))
    if number == 1:
        for who in draft.state.order:
            if not draft.combatant(who).out:
                _refill(draft, who)
    _begin_turn(draft, 0)


#: Why a combatant at 0 HP takes no turn (C36), as its ``turn_skipped`` event says.
DYING_TURN = "at 0 HP, Dying: treated as Incapacitated (C36)"


def _begin_turn(draft: Draft, index: int) -> None:
    """A turn begins: Bonus Actions refill (C20); a Completely Surprised combatant loses its first-round
    turn but its Bonus Actions still refill when the turn would have come (C21); turn-start conditions tick.
    One out of the fight (C33) or at 0 HP (C36) takes no turn: skipped, nothing refills or ticks. When nobody
    left could take a turn, or a side is down, none begins: the check after the command ends the fight (C33)."""
    state = draft.state
    if not any(not c.out and not c.dying for c in state.combatants.values()) or side_down(state):
        return
    if index >= len(state.order):
        _end_round(draft)
        return
    who = state.order[index]
    fighter = draft.combatant(who)
    gone = fighter.left
    if gone is not None or fighter.dying:
        reason = DYING_TURN if gone is None else f"{gone}: out of the fight (C33)"
        draft.emit(TurnSkipped(round=state.round, who=who, reason=reason))
        clear_until(draft, who, None)
        _begin_turn(draft, index + 1)
        return
    skipped = state.round == 1 and state.surprise.get(who) == "complete"
    due = deferred_due(state, who, "start_of_next_turn") if state.deferred and not skipped else ()
    if not skipped:
        draft.emit(TurnStarted(round=state.round, who=who))
    _refill(draft, who)
    if skipped:
        draft.emit(TurnSkipped(round=state.round, who=who,
                               reason="Completely Surprised: loses its first-round turn (C18, C21)"))
        clear_until(draft, who, None)
        _begin_turn(draft, index + 1)
        return
    clear_until(draft, who, "start_of_next_turn")
    settle_deferred(draft, due)
    if not tick(draft, "turn_start", who):
        _turn_ticked(draft, who)


def _turn_ticked(draft: Draft, who: str | None) -> None:
    """The conditions due at the start of ``who``'s turn have ticked: its abilities answer the start of its turn
    (C38; the turn waits on them)."""
    open_moment(draft, "turn.start", who)


def _refill(draft: Draft, who: str) -> None:
    fighter = draft.combatant(who)
    full = draft.ruleset.economy.bonus_actions
    if fighter.bonus_actions != full:
        draft.emit(BonusActionsRefilled(who=who, before=fighter.bonus_actions, after=full))


def _end_round(draft: Draft) -> None:
    """The round ends: first the abilities that answer its end (C38), then its conditions tick (C40)."""
    if open_moment(draft, "round.end", None):
        return
    _close_round(draft)


def _close_round(draft: Draft) -> None:
    if not tick(draft, "round_end"):
        _round_ticked(draft, None)


def _round_ticked(draft: Draft, _who: str | None) -> None:
    """The conditions due at the round's end have ticked: the round ends and the next one starts, unless they
    took the last of a side down (C33: the check after the command ends the fight; no round starts first)."""
    number = draft.state.round
    draft.emit(RoundEnded(round=number))
    if not side_down(draft.state):
        _start_round(draft, number + 1)


def end_turn(draft: Draft, cmd: EndTurn) -> None:
    """The owner ends its turn: turn-end conditions tick, the next combatant begins (or the round ends). One out of
    the fight (C33) or at 0 HP (C36) has no turn to end: refused naming that rule before whose turn it is. (A log
    recorded before C36 holds Dying combatants' turns, which they ended themselves: on its own turn it still may.)"""
    if draft.state.turn != cmd.who:
        draft.able(cmd.who, "end the turn", incapacitated=False)
    require_turn(draft, cmd.who, "end the turn")
    draft.require("flow", why="the turn cannot end while an action is in progress")
    _end_turn(draft, cmd.who)


def _end_turn(draft: Draft, who: str) -> None:
    """The turn ends: first the owner's abilities that answer its end (C38), then what ends with it."""
    if open_moment(draft, "turn.end", who):
        return
    _close_turn(draft, who)


def _close_turn(draft: Draft, who: str) -> None:
    clear_until(draft, who, "end_of_next_turn")
    settle_deferred(draft, deferred_due(draft.state, who, "end_of_next_turn"))
    if not tick(draft, "turn_end", who):
        _turn_end_ticked(draft, who)


def _turn_end_ticked(draft: Draft, who: str | None) -> None:
    """The conditions due at the end of ``who``'s turn have ticked: the turn ends and the next begins."""
    assert who is not None
    draft.emit(TurnEnded(round=draft.state.round, who=who))
    _begin_turn(draft, draft.state.order.index(who) + 1)


def end_dying_turn(draft: Draft) -> bool:
    """After a command in the rounds: a combatant brought to 0 HP on its own turn takes no more of it (C36).
    Once no action is in progress, its turn ends as at ``end_turn`` (turn-end conditions tick) and the next
    begins; a fight that has ended is left as it is. True if it ended a turn."""
    state = draft.state
    if state.phase is not Phase.ROUNDS or state.stack or state.turn is None or not draft.combatant(state.turn).dying:
        return False
    _end_turn(draft, state.turn)
    return True


def settle_the_rounds(draft: Draft) -> None:
    """After a command in the rounds: the fight ends if a side is down (C33); a combatant at 0 HP on its own turn
    has its turn ended (C36), and what the next turn's start did (a tick taking the last of a side down, or its
    owner to 0 HP) is judged the same way, until neither applies (a turn ended by itself began one whose Burning
    downed the last foe, and the fight went on: a tester's simulation)."""
    check_defeat(draft)
    while end_dying_turn(draft):
        check_defeat(draft)


# -- positions, gear, Disengage, the end ----------------------------------------------------


def engage(draft: Draft, cmd: Engage) -> None:
    """The GM states who is within whose reach; positions are abstract (no grid)."""
    draft.present(cmd.who, "be engaged")
    for other in cmd.others:
        draft.present(other, "be engaged")
        if other == cmd.who:
            raise RuleViolation("setup", f"{cmd.who!r} cannot be engaged with itself")
    draft.emit(EngagementChanged(who=cmd.who, others=cmd.others, engaged=cmd.engaged))


def draw(draft: Draft, cmd: Draw) -> None:
    """C35: draw a weapon or the shield the sheet carries into hand: before initiative, or on one's own turn
    at the ruleset's cost (default free); a Completely Surprised combatant not until its first turn (C18). A spell
    is never drawn: it needs no hand (docs/rulings.md)."""
    fighter = draft.able(cmd.who, "draw")
    sheet, state = fighter.sheet, draft.state
    if not sheet.carries(cmd.weapon):
        gear = [w.id for w in sheet.weapons] + ([sheet.shield.id] if sheet.shield is not None else [])
        raise RuleViolation("C35", f"{cmd.who!r} carries no weapon or shield {cmd.weapon!r} "
                                   f"(carries: {', '.join(gear) or 'nothing'})")
    if "spell" in getattr(sheet.weapon(cmd.weapon), "properties", ()):
        raise RuleViolation("C35", f"{cmd.who!r} cannot draw {cmd.weapon!r}: it is a spell, no gear; it needs no hand "
                                   "and is never drawn (docs/rulings.md, \"A spell needs no hand\")")
    if cmd.weapon in fighter.wielding:
        raise RuleViolation("C35", f"{cmd.who!r} already holds {cmd.weapon!r}")
    if state.surprise.get(cmd.who) == "complete" and not state.had_a_turn(cmd.who):
        raise RuleViolation("C18", f"{cmd.who!r} is Completely Surprised and cannot draw equipment that was "
                                   "not already equipped until its first turn")
    require_turn(draft, cmd.who, "draw a weapon or shield")
    cost = draft.ruleset.economy.draw if state.phase is Phase.ROUNDS else "free"
    if cost == "action" and state.turn_actions < 1:
        raise RuleViolation("C35", f"{cmd.who!r} has no Action left to draw (the ruleset's draw cost)")
    if cost == "movement_action" and state.turn_movement < 1:
        raise RuleViolation("C35", f"{cmd.who!r} has no Movement Action left to draw (the ruleset's draw cost)")
    if cost == "bonus_action" and fighter.bonus_actions < 1:
        raise RuleViolation("C35", f"{cmd.who!r} has no Bonus Action left to draw (the ruleset's draw cost)")
    draft.emit(WeaponDrawn(who=cmd.who, weapon=cmd.weapon, cost=cost))


def disengage(draft: Draft, cmd: Disengage) -> None:
    """C22: 1 Bonus Action; the movement that follows this turn provokes no Attack of Opportunity (C23). Taken
    once a turn, and only with a Movement Action left to take "right after" (combat.txt §Reactions)."""
    draft.able(cmd.who, "Disengage")
    require_turn(draft, cmd.who, "Disengage")
    draft.require("flow", why="Disengage is taken between actions")
    if draft.state.disengaged:
        raise RuleViolation("C23", f"{cmd.who!r} has Disengaged this turn already: its movement this turn provokes no "
                                   "Attack of Opportunity")
    if draft.state.phase is Phase.ROUNDS and draft.state.turn_movement < 1:
        raise RuleViolation("C20", f"{cmd.who!r} has no Movement Action left this turn: Disengage holds only for a "
                                   "Movement Action taken right after it (combat.txt §Reactions)")
    cost = draft.ruleset.reaction_costs.disengage
    if draft.combatant(cmd.who).bonus_actions < cost:
        raise RuleViolation("C22", f"{cmd.who!r} has no Bonus Action left for Disengage (costs {cost})")
    draft.emit(Disengaged(who=cmd.who, cost=cost))


def end_fight(draft: Draft, cmd: EndFight) -> None:
    """The GM ends the fight at any time (C33), or records that a side yielded, fled or was defeated; an action
    in progress (and any reaction to it) is called off first, innermost first, costs paid staying paid."""
    sides = sorted({c.side for c in draft.state.combatants.values()})
    listed = ", ".join(sides) or "none"
    if cmd.side is not None and cmd.side not in sides:
        raise RuleViolation("§Your Turn", f"no side {cmd.side!r} in this fight (sides: {listed})")
    if cmd.reason != "gm" and cmd.side is None:
        raise RuleViolation("§Your Turn", f"say which side has {cmd.reason} (side: one of {listed})")
    for frame in reversed(draft.state.stack):
        draft.emit(ActionCancelled(action=frame.action, reason="the fight ended (C33)"))
    draft.emit(FightEnded(reason=cmd.reason, side=cmd.side, note=cmd.note))


def leave_fight(draft: Draft, cmd: LeaveFight) -> None:
    """C33: the GM records that one combatant fled, yielded or died; it is out of the fight. On its own turn,
    the turn ends and the next begins. Between actions only."""
    draft.present(cmd.who, "leave the fight again")
    draft.require("flow", why="a combatant leaves the fight between actions (cancel the action first)")
    draft.emit(CombatantLeft(who=cmd.who, reason=cmd.reason, note=cmd.note))
    state = draft.state
    if state.phase is Phase.ROUNDS and state.turn == cmd.who:
        clear_until(draft, cmd.who, "end_of_next_turn")
        draft.emit(TurnEnded(round=state.round, who=cmd.who))
        _begin_turn(draft, state.order.index(cmd.who) + 1)


def check_defeat(draft: Draft) -> None:
    """After a command in the rounds: a side whose every combatant is down is defeated and the fight ends
    (C33: at 0 HP, dead, fled or yielded; Incapacitated and Paralysed are not down). A side that all fled, or
    all yielded, ended that way. When the command left several sides down (a triggered ability striking back as
    the blow lands), the side defeated is the one all of whose combatants were down first, in the log's order
    (:func:`_all_down_at`; docs/rulings.md)."""
    state = draft.state
    if state.phase is not Phase.ROUNDS or state.stack:
        return
    up = sides_standing(state)
    beaten = [side for side, still in up.items() if not still]
    if beaten and len(up) > 1:
        if len(beaten) > 1:
            beaten.sort(key=lambda side: _all_down_at(draft, side))  # stable: ties stay in the order met
        standing = [side for side, still in up.items() if still]
        note = f"every combatant of {beaten[0]} is down" + (f"; {standing[0]} still standing"
                                                             if len(standing) == 1 else "") + \
            (f"; then every combatant of {', '.join(beaten[1:])} too" if len(beaten) > 1 else "")
        gone = {f.left for f in state.combatants.values() if f.side == beaten[0]}
        reason: Literal["fled", "yielded", "defeated"] = gone.pop() if gone in ({"fled"}, {"yielded"}) \
            else "defeated"  # type: ignore[assignment]
        draft.emit(FightEnded(reason=reason, side=beaten[0], note=note))


def _all_down_at(draft: Draft, side: str) -> int:
    """When the last of ``side`` went down in the command being decided: the position, among its events, of the
    last event that took one of its combatants down (HP to 0, or out of the fight); -1 if every one of them was
    down before the command (C33)."""
    members = {who for who, c in draft.state.combatants.items() if c.side == side}
    at = -1
    for i, event in enumerate(draft.events):
        if (isinstance(event, ResourceChanged) and event.resource == "hp" and event.after == 0
                and event.who in members) or (isinstance(event, CombatantLeft) and event.who in members):
            at = i
    return at


# -- the moments of the round abilities answer (C38) ------------------------------------------


def _settled(draft: Draft) -> MomentReached:
    """The moment waiting on its decision points settles once they have closed; the moment it was."""
    frame = draft.state.pending
    assert isinstance(frame, MomentFrame)
    settle_pending(draft)
    return frame.declaration


#: How each tick goes on once its conditions have ticked (C40): whose turn or the round, as it was before the tick.
_TICKED: dict[Timing, Callable[[Draft, str | None], None]] = {
    "turn_start": _turn_ticked, "turn_end": _turn_end_ticked, "round_end": _round_ticked}


def after_moment(draft: Draft, reached: MomentReached) -> None:
    """How the fight goes on once a moment outside any action is over (C38), its decision points closed or called
    off by the GM (``cancel_action``): at a turn's start the turn is its owner's to play and after a check the
    fight is where the check left it (nothing to do); at a turn's end what ends with it goes and the next turn
    begins; at the round's end its conditions tick and the next round starts; after a save-ends save the tick it
    was made in goes on with the conditions after the saved one (C40), then the turn or the round as the tick
    would have."""
    if reached.moment == "turn.end":
        assert reached.who is not None
        _close_turn(draft, reached.who)
    elif reached.moment == "round.end":
        _close_round(draft)
    elif reached.moment == "save.resolved":
        ticking = reached.ticking
        assert ticking is not None
        whose = None if ticking.timing == "round_end" else reached.who
        if not tick(draft, ticking.timing, whose, after=ticking.after, through=ticking.through):
            _TICKED[ticking.timing](draft, whose)


def _after(draft: Draft) -> None:
    """The moment waiting on its decision points settles once they have closed, and the fight goes on from it."""
    after_moment(draft, _settled(draft))


def _saved_in_tick(draft: Draft) -> Moment:
    """What is known at a save-ends save's ``save.resolved``: whether the saver succeeded (C15)."""
    frame = draft.state.pending
    assert isinstance(frame, MomentFrame)
    return moment_known(frame.declaration)


#: The moments of the round: what they know, and how the turn or the round goes on once their decision points
#: have closed (``decide``'s ``_answer_decision``).
RESUMES: dict[str, Resume] = {"turn.start": (nothing_rolled, _after), "turn.end": (nothing_rolled, _after),
                               "round.end": (nothing_rolled, _after)}

#: The hook points a moment of the round shares with an action (its frame a ``moment``, not the action's): a
#: save-ends save's ``save.resolved`` (C40), which goes on with the tick rather than settling a save.
MOMENT_RESUMES: dict[str, Resume] = {"save.resolved": (_saved_in_tick, _after)}

