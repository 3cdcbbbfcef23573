"""One simulated fight on the real engine: seeded from the run's seed and its index, played by the sides' policies
through ``Fight``, summed up in a small record; and the same fight played again into a full log.

A fight's sources are derived, never drawn: its seed is ``HMAC-SHA256(run seed, "omen simulate fight INDEX")``,
its id ``sim-INDEX``, its clock the run's start time (every event records the same ``recorded_at``), its events'
salts keyed by ``HMAC(fight seed, "salts")``, the random source each side's policy is given ``HMAC(fight seed,
"policy SIDE")``. So fight INDEX is the same fight whoever plays it, in whichever batch, process or machine, and
``omen simulate --replay`` rebuilds its log byte for byte (:func:`sources` is where a fight's sources are made).

The loop (:func:`play`): the set-up commands, initiative (an initiative tie among allies is rolled off, C19), then
until a side is defeated (C33) or the last turn of round ``max_rounds`` ends (the fight is then ended as the GM's
call, a draw, in that round, in place of the command that would begin the next: :func:`_passes_limit`):
whoever must choose (the responder to the open decision, else the turn's owner) is asked by its side's policy,
given exactly the legal commands (:func:`.moves.legal_commands`) and its seat's view; its command goes through
``Fight.execute`` like any other, an attack with the C26 Encircled claim the engagement gives added
(:func:`encircled_claim`: positions are the GM's, and the simulator is its fights' GM). At the end the seed is
revealed, so ``omen verify`` checks every die.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from omen_core import Fight, MemoryStore, SeededDice
from omen_core.commands import (
    AnswerActiveDefense,
    AnswerDecision,
    Command,
    DeclareAttack,
    EndFight,
    EndTurn,
    RevealSeed,
    RollOff,
)
from omen_core.decide import decided
from omen_core.decisions import waiting_point
from omen_core.derive import hit_numbers
from omen_core.engine import CommandMemo, validated
from omen_core.errors import OmenError, RuleViolation
from omen_core.events import (
    AbilityUsed,
    AttackDeclared,
    CombatantLeft,
    DamageResolved,
    DecisionAnswered,
    DecisionClosed,
    DecisionOpened,
    ResourceChanged,
    RoundStarted,
    Salts,
    SaveCalled,
    StoredEvent,
    keyed_salts,
)
from omen_core.extensions import window
from omen_core.hooks import Cost, ExtensionCrash, ExtensionFailed
from omen_core.options import Odds, odds_of
from omen_core.parts import Encircled
from omen_core.rules.attack import attack_kind, is_ranged
from omen_core.rules.modifiers import encircled_bonus
from omen_core.seats import NAMING_FIELDS, HpDisplay, Sight, combatant_views, names_in, sight_of
from omen_core.state import AttackFrame, FightState

from .encounter import Encounter, is_surprised_draw
from .moves import legal_commands
from .policies import Decision, Policy, SeatView, load_policy, raised

__all__ = ["MOST_ROUNDS", "Ended", "FightSources", "sources", "fight_seed", "CombatantRecord", "FightRecord",
           "SimulationError", "Rules", "play", "Played", "encircled_claim"]


#: The highest round limit a run may set (``--max-rounds``): a stalemate plays every round it is allowed, and a
#: thousand rounds of a fight no side can win already take a second or so a fight.
MOST_ROUNDS = 1000


def fight_seed(run_seed: bytes, index: int) -> bytes:
    """The seed of fight ``index`` of a run: HMAC-SHA256 of the run's seed over ``omen simulate fight INDEX``."""
    return hmac.new(run_seed, b"omen simulate fight %d" % index, hashlib.sha256).digest()


@dataclass(frozen=True)
class FightSources:
    """Everything a simulated fight draws on, derived from the run: its id, its seed, its clock, its events' salts,
    and the random source of each side's policy."""

    fight_id: str
    seed: bytes
    clock_ms: int

    def rng(self, side: str) -> random.Random:
        """The random source the policy of ``side`` is given in this fight."""
        return random.Random(hmac.new(self.seed, b"policy " + side.encode(), hashlib.sha256).digest())

    def clock(self) -> int:
        """The fight's clock: the run's start, for every event."""
        return self.clock_ms

    @property
    def salts(self) -> Salts:
        """The salts of the fight's events (docs/events.md): keyed by ``HMAC-SHA256(fight seed, "salts")``, so the
        fight played again gets the same ones (they hide nothing a simulated fight has to hide: its seed, and so
        its key, is revealed at its end)."""
        return keyed_salts(hmac.new(self.seed, b"salts", hashlib.sha256).digest())


def sources(run_seed: bytes, index: int, clock_ms: int) -> FightSources:
    """The sources of fight ``index`` of a run started at ``clock_ms`` with ``run_seed``."""
    return FightSources(fight_id=f"sim-{index}", seed=fight_seed(run_seed, index), clock_ms=clock_ms)


#: How a simulated fight ended (a record's ``ended``): a side down and one standing, every side down, or the GM's
#: call at the round limit (docs/simulate.md).
Ended = Literal["defeated", "all_down", "round_limit"]


class CombatantRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One combatant at the end of a fight: HP and Will left, the damage it dealt and took (final damage, after
    mitigation, C13, wherever it landed), and the round it went down in (0 HP or out of the fight, C33), if it did."""

    hp: int
    will: int
    dealt: int
    taken: int
    down: int | None = None


class FightRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A simulated fight in brief: its index, the side that won (the only side standing when a side was defeated;
    None otherwise), the side defeated (the side the log's ``fight_ended`` names), how it ended (``defeated``: a
    side down, C33, and one side standing, the winner; ``all_down``: a side down and no side left standing, every
    side down in the same blow, no winner; ``round_limit``: ended as the GM's call at the end of the run's last
    round, a draw), the rounds (the round the log ends in), the first combatant down (the first the log takes to 0
    HP or out of the fight), each combatant (in the order of the run's combatants) and the commands and events it
    took."""

    index: int
    winner: str | None
    defeated: str | None
    ended: Ended
    rounds: int
    first_down: str | None
    combatants: tuple[CombatantRecord, ...]
    commands: int
    events: int


class SimulationError(OmenError):
    """A simulated fight that cannot go on: a policy gave a command the rules refuse, or offered none, or the
    fight ran past the safety limit of commands."""

    def __init__(self, index: int, message: str):
        self.index, self.message = index, message
        super().__init__(f"fight {index}: {message}")

    def __reduce__(self) -> tuple[type[SimulationError], tuple[int, str]]:
        """Pickled whole (a worker process or a Dask worker sends it back as it was raised)."""
        return type(self), (self.index, self.message)


@dataclass(frozen=True)
class Rules:
    """How a run plays its fights: the policy of each side (by name), the round limit, the HP display the
    players' seats see (docs/server.md), and the safety limit of commands per round."""

    policies: Mapping[str, str]
    max_rounds: int = 50
    hp_display: HpDisplay = "banded"
    default_policy: str = "aggressive"

    def policy(self, side: str) -> str:
        """The policy name of ``side``."""
        return self.policies.get(side, self.default_policy)


@dataclass
class _Tally:
    """What the record needs, gathered from the events as the fight goes (one pass over each command's events, in
    the log's order).

    Who dealt a blow: the damage of an action is its actor's (the attacker of ``attack_declared``, the caller of
    ``save_called``, the user of ``ability_used``), but for the damage a triggered ability (or an extension's
    decision point) deals as it is answered: that is the answerer's, the owner of the ability (C37, C38). Its
    consequences run as its decision closes, inside the action it answered, with the decision's title for their
    ``source``: a ``damage_resolved`` of that action whose source is the title of the decision last closed in it
    is the answerer's (Last Stand's 3 crushing to the attacker is its owner's, not the attacker's own).

    Who went down, and when: at the event that took it to 0 HP (``resource_changed``) or out of the fight
    (``combatant_left``), in the round then under way; the first down is the first in the log."""

    order: tuple[str, ...]
    actors: dict[int, str] = field(default_factory=dict)
    titles: dict[tuple[int, str], str] = field(default_factory=dict)
    answerer: dict[tuple[int, str], str] = field(default_factory=dict)
    answered: dict[int, tuple[str, str]] = field(default_factory=dict)
    dealt: dict[str, int] = field(default_factory=dict)
    taken: dict[str, int] = field(default_factory=dict)
    down: dict[str, int] = field(default_factory=dict)
    first_down: str | None = None
    round: int = 0
    commands: int = 0

    def saw(self, stored: list[StoredEvent]) -> None:
        self.commands += 1
        for rec in stored:
            event = rec.event
            if isinstance(event, AttackDeclared):
                self.actors[event.action] = event.attacker
            elif isinstance(event, SaveCalled):
                self.actors[event.action] = event.caller
            elif isinstance(event, AbilityUsed):
                self.actors[event.action] = event.who
            elif isinstance(event, DecisionOpened):
                self.titles[event.action, event.decision] = event.title
            elif isinstance(event, DecisionAnswered):
                self.answerer[event.action, event.decision] = event.who
            elif isinstance(event, DecisionClosed):
                who = self.answerer.get((event.action, event.decision))
                if who is not None:
                    self.answered[event.action] = (self.titles.get((event.action, event.decision), ""), who)
            elif isinstance(event, DamageResolved):
                self.taken[event.target] = self.taken.get(event.target, 0) + event.final
                dealer = self._dealer(event)
                if dealer is not None:
                    self.dealt[dealer] = self.dealt.get(dealer, 0) + event.final
            elif isinstance(event, RoundStarted):
                self.round = event.round
            elif (isinstance(event, ResourceChanged) and event.resource == "hp" and event.after == 0) \
                    or isinstance(event, CombatantLeft):
                self._fell(event.who)

    def _dealer(self, event: DamageResolved) -> str | None:
        """Who dealt ``event``'s damage: the answerer of the decision whose consequence it is, else the action's
        actor; None for a condition's damage as it ticks (no action)."""
        if event.action is None:
            return None
        answered = self.answered.get(event.action)
        if answered is not None and answered[0] == event.source:
            return answered[1]
        return self.actors.get(event.action)

    def _fell(self, who: str) -> None:
        if who not in self.down:
            self.down[who] = self.round
            if self.first_down is None:
                self.first_down = who


@dataclass
class Played:
    """A fight played: its record and the live ``Fight`` (its log in a memory store)."""

    record: FightRecord
    fight: Fight


def play(encounter: Encounter, rules: Rules, index: int, run_seed: bytes, clock_ms: int,
         policies: Mapping[str, Policy] | None = None, commands: CommandMemo | None = None) -> Played:
    """Play fight ``index`` of a run (see the module's docstring). ``policies`` by side (fresh ones, made from
    ``rules``, by default); ``commands``: a memo of validated commands the fights of a batch share (their sheets
    and set-up are the same), else the fight's own."""
    src = sources(run_seed, index, clock_ms)
    sides = encounter.sides
    chosen = dict(policies) if policies is not None else {s: load_policy(rules.policy(s)) for s in sides}
    rngs = {side: src.rng(side) for side in sides}
    fight = Fight.start(MemoryStore(), src.fight_id, dice=SeededDice(src.seed), clock=src.clock, salts=src.salts,
                        ruleset=encounter.ruleset, title=encounter.title, combatants=encounter.combatants,
                        commands=commands)
    tally = _Tally(order=tuple(s.id for s in encounter.combatants))
    sights: dict[tuple[str, frozenset[str]], Sight] = {}
    try:
        for command in encounter.setup:
            try:
                _give(fight, command, tally, "simulate")
            except RuleViolation as exc:
                if not is_surprised_draw(command, exc):
                    raise
                # a set-up draw the rules refuse in this fight (its drawer Completely Surprised, C18) is left out
        limit = 200 * (rules.max_rounds + 1) * len(encounter.combatants)
        while fight.state.ending is None:
            state = fight.state
            if state.round > rules.max_rounds:  # not reached: a command that would pass the limit is not given
                _give(fight, _gm_end(rules.max_rounds), tally, "simulate")
                break
            if state.tie_open:  # tied allies roll off (C19): the simulator does not agree orders for them
                _give(fight, RollOff(), tally, "simulate")
                continue
            if tally.commands > limit:
                raise SimulationError(index, f"more than {limit} commands: a policy that never ends its turns?")
            who, kind = _decider(state)
            side = state.combatants[who].side
            decision = _decision(state, who, side, kind, rules.hp_display, rngs[side], sights)
            if not decision.choices:
                raise SimulationError(index, f"{who} must decide ({kind}) but is offered nothing: a state the "
                                             "rules never leave a fight in, so a bug in omen; please report it "
                                             "with the run's seed and this fight's index")
            command = _claiming(state, _asked(chosen[side], decision, index, side))
            if state.round >= rules.max_rounds and (_last_turn_ends(state, command)
                                                    or _passes_limit(fight, command, rules.max_rounds)):
                _give(fight, _gm_end(rules.max_rounds), tally, "simulate")  # in the last round, before the next
                break
            try:
                _give(fight, command, tally, f"simulate:{chosen[side].name}")
            except ExtensionFailed as exc:  # not the policy's fault: the extension's code, named
                raise SimulationError(index, f"{exc} (deciding {who}'s {msgspec.json.encode(command).decode()}, "
                                             f"given by the {chosen[side].name!r} policy of {side})") from exc
            except OmenError as exc:
                raise SimulationError(index, f"the {chosen[side].name!r} policy of {side} gave {who}'s "
                                             f"{msgspec.json.encode(command).decode()}, refused: {exc}") from exc
        _give(fight, RevealSeed(seed=src.seed.hex()), tally, "simulate")
    except SimulationError:
        raise
    except OmenError as exc:
        raise SimulationError(index, str(exc)) from exc
    except ExtensionCrash as crash:  # an extension failed outside a command (the odds a policy is shown, say)
        raise SimulationError(index, str(crash.failed)) from crash
    return Played(_record(index, fight, tally, rules.max_rounds), fight)


def _asked(policy: Policy, decision: Decision, index: int, side: str) -> Command:
    """The policy's answer to ``decision``, which must be a command: what a policy raises, or gives that is not a
    command, stops the run naming the fight, the policy and the decision (a policy is code of the user's)."""
    whose = f"the {policy.name!r} policy of {side}, deciding for {decision.who} ({decision.kind})"
    try:
        command = policy.decide(decision)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's code: whatever it raises (SystemExit too) is said, not a traceback
        raise SimulationError(index, f"{whose}, raised {raised(exc)}") from exc
    if not isinstance(command, Command):
        shown = repr(command)
        raise SimulationError(index, f"{whose}, gave {shown[:80] + '...' if len(shown) > 80 else shown}, not a "
                                     "command: decide(decision) returns one of decision.choices or a command of "
                                     "omen_core.commands")
    return command


def encircled_claim(state: FightState, attack: DeclareAttack) -> Encircled | None:
    """C26 Encircled, as the simulator (the GM of its fights, who states positions) claims it for an attack: with
    A = the attacker's side adjacent to the target (the attacker included) and D = the target's side adjacent to
    the attacker (the target included), the claim (A, D) iff A >= 2·D (the bonus, min(6, 2·(A − D)) to hit, is the
    engine's to add). Adjacent is engaged in the fight state, a melee attack engaging the pair as its declaration
    will (docs/rulings.md); combatants down (0 HP or out, C33) are not counted, the attacker and the target always
    are. None when it does not apply, or the attacker is not within the target's reach (a ranged attack from
    afar), or they are on one side."""
    me, foe = state.combatants.get(attack.attacker), state.combatants.get(attack.target)
    if me is None or foe is None or me.side == foe.side:
        return None
    pair = (min(attack.attacker, attack.target), max(attack.attacker, attack.target))
    pairs = set(state.engagements)
    weapon = me.sheet.weapon(attack.weapon) if attack.weapon else None if attack.unarmed else next(
        (w for w in me.sheet.weapons if w.id in me.wielding), None)
    if attack.weapon and weapon is None:
        return None  # a weapon not on the sheet: the engine refuses the attack
    if not is_ranged(attack_kind(weapon.properties if weapon else None)):
        pairs.add(pair)  # declaring a melee attack engages the two (docs/rulings.md)
    if pair not in pairs:
        return None

    def adjacent(who: str, side: str) -> set[str]:
        return {x for p in pairs if who in p for x in p
                if x != who and state.combatants[x].side == side and not state.combatants[x].down}

    a = len(adjacent(attack.target, me.side) | {attack.attacker})
    d = len(adjacent(attack.attacker, foe.side) | {attack.target})
    return Encircled(attackers=a, defenders=d) if encircled_bonus(a, d) else None


def _claiming(state: FightState, command: Command) -> Command:
    """A policy's attack with the C26 claim :func:`encircled_claim` finds added (a claim of its own kept)."""
    if not isinstance(command, DeclareAttack) or command.situational.encircled is not None:
        return command
    claim = encircled_claim(state, command)
    if claim is None:
        return command
    return msgspec.structs.replace(command, situational=msgspec.structs.replace(command.situational,
                                                                                encircled=claim))


def _last_turn_ends(state: FightState, command: Command) -> bool:
    """Whether ``command`` ends the round's last turn (so the next round would start): the turn's owner ends its
    turn and everyone after it in the order takes none this round (out of the fight or at 0 HP, C33, C36; or
    Completely Surprised in round 1, C21)."""
    if not isinstance(command, EndTurn) or state.turn is None or command.who != state.turn:
        return False
    after = state.order[state.order.index(state.turn) + 1:]
    return all((c := state.combatants[w]).left is not None or c.dying
               or (state.round == 1 and state.surprise.get(w) == "complete") for w in after)


def _passes_limit(fight: Fight, command: Command, max_rounds: int) -> bool:
    """Whether ``command`` would start a round past ``max_rounds``: decided on the fight as it stands, with its own
    dice (seeded dice are a function of the roll counter: deciding spends nothing) and nothing written, its events
    begin round ``max_rounds + 1``. So it does when the round's last turn ends inside it by itself: its owner
    dropped to 0 HP on its own turn (by an Interrupt, say), the engine ends the turn and begins the next (C36). A
    command the rules refuse is left to ``Fight.execute`` to refuse, naming the rule."""
    if fight.dice is None:
        return False
    try:
        draft = decided(fight.state, validated(command, fight.commands), fight.dice)
    except OmenError:
        return False
    return draft.state.round > max_rounds


def _gm_end(max_rounds: int) -> EndFight:
    """The GM's end of a fight no side won in ``max_rounds`` rounds: a draw (C33)."""
    return EndFight(reason="gm", note=f"no side defeated in {max_rounds} round{'s' if max_rounds != 1 else ''}")


def _give(fight: Fight, command: Command, tally: _Tally, by: str) -> None:
    tally.saw(fight.execute(command, by=by))


def _decider(state: FightState) -> tuple[str, str]:
    """Who must choose now, and what: the first responder still to answer the open decision, else the turn's
    owner."""
    found = waiting_point(state)
    if found is not None:
        point, who, _action = found
        return who[0], point.kind
    assert state.turn is not None
    return state.turn, "turn"


def _decision(state: FightState, who: str, side: str, kind: str, hp: HpDisplay, rng: random.Random,
              sights: dict[tuple[str, frozenset[str]], Sight]) -> Decision:
    """What ``who``'s policy is asked: the legal commands and its side's seat's view (a player's seat owning
    the side's combatants, seeing the others as the HP display says; the Unseen hidden from it, C27). As a seat's
    options do (:func:`omen_core.seats.seat_options`), the choices leave out those naming a combatant the seat
    cannot see."""
    unseen = frozenset(w for w, c in state.combatants.items() if c.unseen)
    sight = sights.get((side, unseen))
    if sight is None:
        own = [w for w, c in state.combatants.items() if c.side == side]
        sight = sights[side, unseen] = sight_of("player", own, state, (), hp, {})
    views = combatant_views(state, sight)
    engaged = frozenset(pair for pair in state.engagements if sight.sees(pair[0]) and sight.sees(pair[1]))
    choices = tuple(c for c in legal_commands(state, who)  # as the seat's options: none naming whom it cannot see
                    if all(sight.sees(w) for w in names_in(getattr(c, f, None) for f in NAMING_FIELDS)))
    odds: tuple[Odds | None, ...] = ()
    rolled: tuple[int, ...] = ()
    frame = state.pending
    if kind == "active_defense" and isinstance(frame, AttackFrame):
        crit = hit_numbers(state, frame)[2].exceeds  # the same for every answer: worked out once
        odds = tuple(odds_of(state, c.defense, c.weapon, crit) if isinstance(c, AnswerActiveDefense) else None
                     for c in choices)
    elif kind == "routing" and isinstance(frame, AttackFrame) and frame.routing is not None:
        rolled = tuple(d.face for d in frame.routing.dice)
    costs = tuple(_cost(state, c) for c in choices) if kind not in ("turn", "active_defense") else ()
    view = SeatView(round=state.round, turn=state.turn if state.turn is None or sight.sees(state.turn) else None,
                    combatants=views, engaged=engaged, disengaged=state.disengaged and state.turn == who)
    return Decision(who=who, side=side, kind=kind, choices=choices, view=view,
                    sheet=state.combatants[who].sheet, rng=rng, odds=odds, rolled=rolled, costs=costs)


def _cost(state: FightState, command: Command) -> Cost | None:
    """What answering a decision point with ``command`` costs, as its window declares (an ability's, from the
    fight's data; an extension's): None for any other command."""
    if not isinstance(command, AnswerDecision):
        return None
    row = window(command.decision, state)
    choice = row.choice(command.choice) if row is not None else None
    return choice.cost if choice is not None else None


def _record(index: int, fight: Fight, tally: _Tally, max_rounds: int) -> FightRecord:
    """The record of a fight, read off its end as the log records it (``fight_ended``): ended by the GM (the
    simulator, at the round limit) is a draw, ``round_limit``; a side defeated (C33) with one side still standing is
    that side's win, ``defeated``; a side defeated with no side left standing (the last blow felled both, a
    triggered ability's damage striking back as the attack lands, say) is ``all_down``: no winner, the side the
    log names defeated. The rounds are the round the log ends in."""
    state = fight.state
    ending = state.ending
    assert ending is not None
    standing = list(dict.fromkeys(c.side for c in state.combatants.values() if not c.down))
    defeated = ending.side if ending.reason != "gm" else None
    winner = standing[0] if len(standing) == 1 and defeated is not None else None
    ended: Ended = "round_limit" if defeated is None else "all_down" if not standing else "defeated"
    combatants = tuple(CombatantRecord(hp=state.combatants[w].hp, will=state.combatants[w].will,
                                       dealt=tally.dealt.get(w, 0), taken=tally.taken.get(w, 0),
                                       down=tally.down.get(w)) for w in tally.order)
    return FightRecord(index=index, winner=winner, defeated=defeated, ended=ended, rounds=state.round,
                       first_down=tally.first_down, combatants=combatants, commands=tally.commands,
                       events=state.version)
