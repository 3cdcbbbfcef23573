"""Explain a roll, an attack, a save or a check: every die, every bonus and where it came from, every rule applied.

``explain(records, seq)`` looks at the event at ``seq``; if it belongs to an
attack or a save, the whole action is explained. Each part (hit total,
defense, crit portions, damage) lists its terms and their total, and the
terms add up to the total. Bonuses are split into the sheet's value and what
conditions changed (C28), so a disputed number can be traced to its source.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import NamedTuple

import msgspec

from omen_core.abilities import PASS, USE, answer_target
from omen_core.commands import EndFight, EndTurn
from omen_core.content import SHIPPED_ABILITIES, Ability, ConvertToWill, Heal, IncomingDamage, Weapon
from omen_core.decide import passed_over_at
from omen_core.decisions import deferred_words, waiting_point
from omen_core.derive import bonus_source, hit_numbers, override_allowing
from omen_core.dice import commitment, seeded_mismatches
from omen_core.errors import InvalidArgument, LogCorrupted, TornTail, UnknownSeq
from omen_core.events import (
    DEFERRED_SOURCE,
    DYING_REASON,
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
    CommandIssued,
    ConditionApplied,
    ConditionCleared,
    ConditionTicked,
    ContestResolved,
    CostPaid,
    DamageResolved,
    DecisionAnswered,
    DecisionClosed,
    DecisionOpened,
    DiceRolled,
    Die,
    Event,
    FightEnded,
    FightStarted,
    HitDetermined,
    InitiativeAgreed,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    InitiativeTied,
    MomentReached,
    MovementDeclared,
    ReactionPassed,
    ReactionWindowOpened,
    Redone,
    ResourceChanged,
    RollTotal,
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
    Undone,
    WillConversionChosen,
    decode_line,
    encode_line,
    is_undo_batch,
)
from omen_core.extensions import auto_rerolls
from omen_core.hooks import amount_of, moment_said
from omen_core.machine import Phase, action_of
from omen_core.parts import HALF_ON_SUCCESS
from omen_core.parts import Term as PartTerm
from omen_core.rules.ambush import DIFFICULTY_RULES, TIER_WORDS, ambush_difficulty, tier_range
from omen_core.rules.attack import is_thrown
from omen_core.rules.mitigation import exact
from omen_core.state import AttackFrame, CombatantState, FightState, Frame, effective_bonus
from omen_core.walk import Landmarks, LinesSource, Source, StopWalk, StoreSource, Visitor, Walk, tears, torn_batch, walk

from .narrate import BatchCommand, applied_reason, crit_outcome, hp_unmoved

__all__ = ["Term", "Part", "DieLine", "Explanation", "Derivations", "PassedOver", "owner_of", "explain",
           "explain_records", "passed_over", "command_said"]


class Term(msgspec.Struct, frozen=True):
    """One number that went into a total, and where it came from: ``source`` in words, ``origin`` as the recorded
    total's term says it (:class:`omen_core.parts.Term`: ``dice``, ``sheet``, ``condition``, ``weapon``,
    ``training``, ``situational``, ``ability:<name>``, ``rule``)."""

    label: str
    value: int
    source: str = ""
    origin: str = ""


#: How explain words each kind of a total's term (:meth:`omen_core.events.HitTotal.terms` and the others): its label
#: and its source, as templates filled from the term (``{label}``) and what the part knows (the attacker, the roll...).
#: The terms themselves, their values and how many, are the total's own: explain never rebuilds them.
_WORDS: dict[str, tuple[str, str]] = {
    "primary_die": ("primary die ({attribute})", "hit roll"),
    "fcs_die": ("FCS die", "hit roll"),
    "attribute_bonus": ("{label} bonus", "{who}'s sheet"),
    "fcs_bonus": ("{label} bonus", "{who}'s sheet"),
    "res_bonus": ("{label} bonus", "{who}'s sheet"),
    "active_bonus": ("{defense}: {label} bonus", "{who}'s sheet"),
    "conditions": ("{conditions}", "{held} (C28)"),
    "weapon_hit_bonus": ("weapon hit bonus", "{weapon}"),
    "training_bonus": ("training bonus", "{who}'s sheet (training)"),
    "situational": ("{label}", "situational"),
    "res_die": ("RES die", "base defense roll"),
    "no_res_die": ("no RES die", "incapacitated, paralysed or at 0 HP (C10, C36)"),
    "armor": ("armor", "{armor_note} (C11)"),
    "defense_modifier": ("{label}", "an ability's, part of the Defense Rating (C11)"),
    "active_die": ("{defense} die ({attribute})", "Active Defense roll (C8)"),
    "active_rating": ("{defense} rating", "Parry or Block Rating (§Active Defense)"),
    "damage_dice": ("{dice_label}", "{dice_source}"),
    "primary_bonus": ("primary bonus", "attribute bonus (none when unarmed, C12)"),
    "crit_bonus": ("crit bonus", "one extra primary bonus on a crit (C12)"),
    "sheet_primary_bonus": ("primary bonus", "{attribute} bonus, {who}'s sheet (C12)"),
    "primary_conditions": ("conditions", "{held} (C28)"),
    "sheet_crit_bonus": ("crit bonus", "one extra primary bonus on a crit: {attribute} bonus, {who}'s sheet (C12)"),
    "crit_conditions": ("crit bonus: conditions", "{held} (C28)"),
    "weapon_damage": ("Weapon Damage", "{damage_source}"),
    "ability_die": ("ability die", "a die {label} added to the damage (C12, C39)"),
    "damage_modifier": ("{label}", "{modifier_source}"),
    "raw_damage": ("raw damage", "C12"),
    "mitigation": ("{label}", "after: {after} (C13)"),
    "die": ("{attribute} die", "{where}"),
    "skill_level": ("{label}", "{who}'s sheet (C2)"),
    "modifier": ("{label}", "situational"),
}




#: The kinds of term that are a die of the hit roll, and the die's pool (a reroll changes one, C39).
_HIT_DICE = {"primary_die": "primary", "fcs_die": "fcs"}


#: The kinds of term a condition or an ability may add, named after it (C28: ``Marked x2``; C37: ``Battle Focus``).
_NAMED_KINDS = frozenset({"situational", "modifier", "defense_modifier", "damage_modifier"})


def _worded(terms: Iterable[PartTerm], **context: object) -> tuple[Term, ...]:
    """A total's terms in explain's words (:data:`_WORDS`), each with its origin; ``after`` may be a list, one per
    term (the damage after each mitigation step); ``named``: what a modifier named after a condition or an ability
    is (:func:`_origins`), said as its source instead of "situational" or "an ability's"; ``rerolled``: the dice
    of the hit roll a reroll changed, by pool and place in it (:func:`_rerolled`), said so (C39)."""
    afters = context.pop("afters", None)
    named = context.pop("named", None)
    rerolled = context.pop("rerolled", frozenset())
    worded = []
    seen: dict[str, int] = {}  # how many dice of each pool of the hit roll so far
    for i, t in enumerate(terms):
        label, source = _WORDS[t.kind]
        fill = {"conditions": "conditions", **context, "label": t.label,
                "after": afters[i] if isinstance(afters, list) and i < len(afters) else ""}
        said, origin = source.format(**fill), t.source
        if t.kind in _HIT_DICE:
            pool = _HIT_DICE[t.kind]
            seen[pool] = seen.get(pool, -1) + 1
            if isinstance(rerolled, frozenset) and (pool, seen[pool]) in rerolled:
                said += ", as rerolled (C39)"
        if isinstance(named, dict) and t.kind in _NAMED_KINDS:
            found = named.get(t.label) or named.get(t.label.rsplit(" x", 1)[0]) \
                or named.get(t.label.split(" (", 1)[0])  # "Marked x2", "Battle Focus (target Prone)"
            if found:
                whose, origin = found
                said = whose + (", part of the Defense Rating (C11)" if t.kind == "defense_modifier" else "")
        if isinstance(named, dict) and t.kind == "ability_die" and t.label in named:  # the ability and whose (C39)
            said = f"a die {named[t.label][0]} added to the damage (C12, C39)"
        elif t.kind == "ability_die" and t.label == "rage" and context.get("attacker"):  # a Brute's (recorded so)
            said = f"a die {context['attacker']}'s rage added to the damage (C12, C39)"
        worded.append(Term(label.format(**fill), t.value, said, origin=origin))
    return tuple(worded)


def _origins(state: FightState, *whos: str, answered: Iterable[tuple[str, str]] = ()) -> dict[str, tuple[str, str]]:
    """What each condition of the ruleset and each ability of ``whos``' sheets is, by the name a term carries: its
    source in words and its origin (``condition``, ``ability:<name>``; an event records such a term as
    ``situational`` or an ability's, whichever list it stands in); ``answered``: the abilities used in answer to
    the action's decision points (who, ability id: an ally's too, C38), each credited to its owner."""
    found = dict.fromkeys(state.ruleset.conditions if state.ruleset else (), ("a condition (C28)", "condition"))
    for who in whos:
        if who in state.combatants:
            found |= {a.name: (f"{who}'s ability {a.name} (C37)", f"ability:{a.name}")
                      for a in state.combatants[who].sheet.written_abilities()}
    for who, ability in answered:
        if who in state.combatants:
            found |= {a.name: (f"{who}'s ability {a.name} (C37)", f"ability:{a.name}")
                      for a in state.combatants[who].sheet.written_abilities() if a.id == ability}
    return found


def _answered(events: Iterable[tuple[StoredEvent, FightState]]) -> tuple[tuple[str, str], ...]:
    """Who answered which of an action's decision points with its ability (anything but passing, C38)."""
    return tuple((rec.event.who, rec.event.decision) for rec, _ in events
                 if isinstance(rec.event, DecisionAnswered) and rec.event.choice != PASS)


def _rerolled(events: Iterable[tuple[StoredEvent, FightState]]) -> frozenset[tuple[str, int]]:
    """The dice of an action's hit roll a reroll changed (C39), each by its pool and its place among that pool's
    dice (the order a hit total's terms list them in), and by its index in the roll (``("", i)``, as a routed die
    is named, C12)."""
    hits = {rec.event.counter: rec.event for rec, _ in events
            if isinstance(rec.event, DiceRolled) and rec.event.purpose == "hit"}
    found: set[tuple[str, int]] = set()
    for rec, _ in events:
        roll = hits.get(rec.event.rerolls) if isinstance(rec.event, DiceRolled) and rec.event.rerolls is not None \
            else None
        if roll is not None and isinstance(rec.event, DiceRolled) and rec.event.die is not None \
                and rec.event.die < len(roll.dice):
            i = rec.event.die
            pool = roll.dice[i].pool
            found |= {(pool, sum(1 for d in roll.dice[:i] if d.pool == pool)), ("", i)}
    return frozenset(found)


class Part(msgspec.Struct, frozen=True, kw_only=True):
    """A total and its terms (which add up to it), with the rule that governs it."""

    name: str
    terms: tuple[Term, ...]
    total: int
    rule: str = ""


class DieLine(msgspec.Struct, frozen=True, kw_only=True):
    """One die: the roll it belongs to (by the seq of its ``dice_rolled`` event; ``counter`` is the index its
    seeded faces derive from, which an undo rewinds), whose, its pool, size and face, its source, whether the
    seed confirms it, and its history as recorded (C39): the ability that added it (``origin``) and the face a
    reroll replaced (``rerolled``), each None when the die has none."""

    seq: int
    counter: int
    purpose: str
    roller: str
    pool: str
    sides: int
    face: int
    source: str
    seed_confirms: bool | None = None
    origin: str | None = None
    rerolled: int | None = None
    rerolled_by: str | None = None

    def history(self) -> str:
        """The die's history in words, empty if it has none: ``added by Lucky; rerolled by Lucky Aim (automatic,
        C39): 1, then 5``."""
        said = [f"added by {self.origin}"] if self.origin is not None else []
        if self.rerolled is not None:
            said.append(f"rerolled{' by ' + self.rerolled_by if self.rerolled_by else ''}: {self.rerolled}, then "
                        f"{self.face}")
        return "; ".join(said)


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """The derivation of one roll, attack, save or check. ``seq`` is the action's declaration (its id) or the
    event's own seq; ``undone`` says whether it is undone as the log stands."""

    seq: int
    kind: str
    title: str
    dice: tuple[DieLine, ...]
    parts: tuple[Part, ...]
    verdicts: tuple[str, ...]
    seed: str
    undone: bool = False


class _Seed:
    """Whether the seeded dice can be checked, and the seed to check them with: the seed of the commitment the dice
    are drawn under at the point explained (the fight's first, or a fresh one after a reveal, C42)."""

    def __init__(self, given: bytes | None):
        self.given = given
        self.revealed: dict[str, bytes] = {}  # every seed revealed in the log, by its commitment
        self.commitment: str | None = None
        self.started = False

    def status(self) -> tuple[str, bytes | None]:
        """The words on the seed and the seed to check the dice with: the seed given where it commits to the epoch
        the dice were drawn under, else that epoch's seed where the log reveals it (a seed given is used only for
        the epoch it commits to, C42: a fight that went on after a reveal is checked with its fresh seed)."""
        if not self.started or self.commitment is None:
            return "no seeded dice in this fight", None
        if self.given is not None and commitment(self.given) == self.commitment:
            return "seeded dice; the seed matches its commitment", self.given
        seed = self.revealed.get(self.commitment)
        if seed is not None and self.given is not None:
            return ("seeded dice; the seed revealed in the log matches their commitment (the seed given, --seed, does "
                    "NOT match the commitment these dice were drawn under: it checks only the dice of the commitment "
                    "it matches, C42)"), seed
        if seed is not None:
            return "seeded dice; the seed matches its commitment", seed
        if self.given is not None:
            return "the seed does NOT match the commitment these dice were drawn under", None
        return "seeded dice, seed not revealed yet: the faces cannot be checked", None


#: The events that set the initiative order beside its rolls (C19): explaining the order reads them all.
_INITIATIVE = (InitiativeRolled, InitiativeTied, InitiativeRollOff, InitiativeAgreed)


def _everyone(_who: str) -> bool:
    return True


class Derivations:
    """What explaining needs to know of a walk so far: the seed, the seqs undone as the log stands, and the rolls of
    the batch in progress (by counter). A visitor that explains (:class:`_Explainer`, the session log's cards)
    keeps one and calls :meth:`begin` and :meth:`see` as the walk goes."""

    def __init__(self, seed: bytes | None = None):
        self.seed = _Seed(seed)
        self.voided: frozenset[int] = frozenset()
        self.landmarks = Landmarks()
        self.batch_rolls: dict[int, StoredEvent] = {}
        self.initiative: list[tuple[StoredEvent, FightState]] = []  # its rolls, ties, roll-offs, agreements (C19)
        self.latest: StoredEvent | None = None  # the event seen last, and the one before it
        self.previous: StoredEvent | None = None
        self.batch = BatchCommand()  # what the batch's command says: a stand_up's movement, a turn ended by itself
        self.told: Callable[[str], bool] = _everyone  # whose decision points not offered are said (a seat's own)
        self.ambush: AmbushStarted | None = None  # the ambush begun last: the minutes waited, if given (C30)
        self.stood: dict[int, str] = {}  # an attack an undo took back before its hit was determined: its totals then

    def begin(self, walk: Walk) -> None:
        """The seqs undone and the seed revealed, as the walk knows them before its first event."""
        self.voided, self.landmarks = walk.voided, walk.landmarks
        for _seq, revealed in walk.landmarks.seeds:
            seed = bytes.fromhex(revealed)
            self.seed.revealed[commitment(seed)] = seed

    def see(self, rec: StoredEvent, before: FightState | None = None) -> None:
        """Each event, in order (with the state before it, if known): the seed commitment, the rolls of the batch in
        progress, and the events that set the initiative order (C19)."""
        self.previous, self.latest = self.latest, rec
        self.batch.see(rec.event)
        if before is not None and (isinstance(rec.event, _INITIATIVE) or (
                isinstance(rec.event, DiceRolled) and rec.event.purpose in ("initiative", "roll_off"))):
            self.initiative.append((rec, before))
        if isinstance(rec.event, AmbushStarted):
            self.ambush = rec.event
        if isinstance(rec.event, FightStarted):
            self.seed.started, self.seed.commitment = True, rec.event.seed_commitment
        elif isinstance(rec.event, SeedCommitted):
            self.seed.commitment = rec.event.commitment
        if rec.seq == rec.batch:
            self.batch_rolls = {}
        if isinstance(rec.event, DiceRolled):
            self.batch_rolls[rec.event.counter] = rec
        if isinstance(rec.event, Undone) and before is not None:  # what the undo found open, as it stood then
            for frame in before.stack:
                stands = _as_it_stands(before, frame)
                if stands and rec.event.from_seq <= frame.declared_at <= rec.event.to_seq:
                    self.stood.setdefault(frame.declared_at, stands)

    def action(self, events: list[tuple[StoredEvent, FightState]]) -> Explanation | None:
        """The explanation of an action from its events (each with the state before it), the declaration first."""
        first = events[0][0].event if events else None
        if isinstance(first, AttackDeclared):
            return self._undone_by(_attack(self, events))
        if isinstance(first, SaveCalled):
            return self._undone_by(_save(self, events))
        if isinstance(first, MovementDeclared):
            return self._undone_by(_movement(self, events))
        if isinstance(first, (AbilityUsed, MomentReached)):
            return self._undone_by(_ability(self, events))
        return None

    def single(self, rec: StoredEvent, state: FightState, followers: Sequence[StoredEvent] = ()) -> Explanation:
        """The explanation of an event outside any action (a roll, a check, a contest...), from the state before
        it and the rolls of its batch; ``followers``: what a damage outside any action moved (the target's Will
        and HP, Dying), the events right after it."""
        return self._undone_by(_single(self, rec, state, followers))

    def _undone_by(self, found: Explanation) -> Explanation:
        """An explanation of something undone, its last verdict naming the undo that took it back, the seqs it
        took and its reason (the title said "[undone]" alone: a tester), after a verdict for each earlier undo of
        it and the redo that took that back (it named the last undo alone: a GM); of something undone and redone, a
        verdict for each and that it stands; and of dice the seed does not confirm, a
        verdict saying so (a re-sealed log's edited face read beside the term it no longer makes: a tester)."""
        found = _with_dice_said(found)
        wrong = [d for d in found.dice if d.seed_confirms is False]
        if wrong:
            seqs = ", ".join(dict.fromkeys(str(d.seq) for d in wrong))
            found = msgspec.structs.replace(found, verdicts=(
                *found.verdicts, f"the log was changed: {len(wrong)} {'die is' if len(wrong) == 1 else 'dice are'} "
                                 f"not the seed's face (the roll at seq {seqs}), so the numbers here may not be those "
                                 "rolled; omen verify says what else differs"))
        history = [u for u in self.landmarks.undos if u.from_seq <= found.seq <= u.to_seq]
        if not history:
            return found
        stood = self.stood.get(found.seq, "")
        if stood:  # an attack undone before its hit was determined: its totals as they stood (a reviewer saw dice)
            then = "as it stood when undone: " + stood.removeprefix(" (as it stands: ").removesuffix(")")
            found = msgspec.structs.replace(found, verdicts=(*found.verdicts, then))
        said = []
        for undo in history:  # in the log's order: each undo, redone or standing (the last only, it said: a GM)
            reason = f": {undo.reason}" if undo.reason else ""
            taken = f"the undo at seq {undo.seq} (seqs {undo.from_seq} to {undo.to_seq}){reason}"
            said.append(f"undone by {taken}; redone at seq {undo.redone_at}" if undo.redone_at is not None else
                        f"UNDONE: taken back by {taken}")
        if not found.undone:
            said.append("it stands: every undo of it was redone")
        return msgspec.structs.replace(found, verdicts=(*found.verdicts, *said))


class _Explainer(Visitor):
    """Finds the event at ``seq``; if it belongs to an action, follows that action to its end. Keeps only the
    events of the actions open at each moment (with the state each was written in)."""

    def __init__(self, seq: int, seed: bytes | None, follow: bool = True):
        self.seq, self.known, self.follow = seq, Derivations(seed), follow
        self.open: dict[int, list[tuple[StoredEvent, FightState]]] = {}
        self.target: int | None = None  # the declaration seq of the action explained
        self.found: Explanation | None = None
        self.die: tuple[StoredEvent, FightState] | None = None  # a roll no action owns, asked about by its seq
        self.die_counter = 0
        self.landed: tuple[StoredEvent, FightState, list[StoredEvent]] | None = None  # damage outside any action
        self.command: tuple[StoredEvent, FightState] | None = None  # a command asked about by its seq: the action
        # its batch declares or answers is explained (the table page numbers an action's card by its command)
        self.via: StoredEvent | None = None  # that command, once it led to an action
        self.last = 0

    def begin(self, walk: Walk) -> None:
        self.known.begin(walk)

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        self.last = rec.seq
        if self.landed is not None:  # damage outside any action: what it moved follows it (C25, C28, C40, C41)
            damage, followers = self.landed[0], self.landed[2]
            assert isinstance(damage.event, DamageResolved)
            if rec.batch == damage.batch and _lands(damage.event, rec.event):
                followers.append(rec)
                return
            self._explain_landed()
            raise StopWalk
        self.known.see(rec, before)
        owner = owner_of(rec.event, before, after)
        if self.command is not None:  # the command asked about: the first action its batch is part of, if any
            if rec.batch == self.command[0].batch and owner is not None:
                self.target, self.via, self.command = owner, self.command[0], None
            elif rec.batch != self.command[0].batch:
                self.found = self.known.single(*self.command)
                raise StopWalk
        if owner is not None:
            self.open.setdefault(owner, []).append((rec, before))
        if isinstance(rec.event, AttackDeclared) and rec.event.reacting_to in self.open and owner != \
                rec.event.reacting_to:  # a reaction is told in the action it answers too (only its declaration)
            self.open[rec.event.reacting_to].append((rec, before))
        if self.die is not None:  # the die asked about: explain the result it feeds, if its batch has one
            if isinstance(rec.event, DamageResolved) and rec.seq == self.die[0].seq + 1:  # a condition's tick (C40)
                self.landed, self.die = (rec, before, []), None
                return
            if self.die_counter in _counters(rec.event):
                self.found = self.known.single(rec, before)
                raise StopWalk
            if rec.batch != self.die[0].batch:
                self.found = self.known.single(*self.die)
                raise StopWalk
        if rec.seq == self.seq:
            if owner is None:
                if isinstance(rec.event, DiceRolled):
                    self.die, self.die_counter = (rec, before), rec.event.counter
                    return
                if isinstance(rec.event, DamageResolved):  # a tick's or a deferred cost's: what it moves follows
                    self.landed = (rec, before, [])
                    return
                if isinstance(rec.event, CommandIssued) and rec.batch_size > 1 and self.follow:
                    self.command = (rec, before)
                    return
                self.found = self.known.single(rec, before)
                raise StopWalk
            self.target = owner
        if is_undo_batch(rec.event):
            return  # an undo takes frames away and a redo brings them back: an action ends only by its own events
        if self.target is not None and not any(f.declared_at == self.target for f in after.stack):
            self._explain_target()
            raise StopWalk
        for declared in [d for d in self.open if not any(f.declared_at == d for f in after.stack)]:
            del self.open[declared]

    def end(self, state: FightState) -> None:
        if self.found is None and self.command is not None:
            self.found = self.known.single(*self.command)
        if self.found is None and self.landed is not None:
            self._explain_landed()
        if self.found is None and self.die is not None:
            self.found = self.known.single(*self.die)
        if self.found is None and self.target is not None:
            self._explain_target()
            if self.found is not None and any(f.declared_at == self.target for f in state.stack):
                verdict = _unsettled(state, self.target)
                self.found = msgspec.structs.replace(self.found, verdicts=(*self.found.verdicts, verdict))

    def _explain_target(self) -> None:
        assert self.target is not None
        found = self.known.action(self.open.get(self.target, []))
        if found is not None and self.via is not None and isinstance(self.via.event, CommandIssued):
            said = (f"seq {self.via.seq} is {_command_told(self.via.event, self.via).partition(': it wrote')[0]}, "
                    f"part of the action declared at seq {self.target}: that action is explained here")
            found = msgspec.structs.replace(found, verdicts=(said, *found.verdicts))
        self.found = found

    def _explain_landed(self) -> None:
        assert self.landed is not None
        rec, before, followers = self.landed
        self.found = self.known.single(rec, before, tuple(followers))


def _unsettled(state: FightState, declared: int) -> str:
    """What an action still open at the log's end waits on, said after its explanation (which holds what has
    happened so far: the dice rolled, no total yet where none was determined): the decision point open, whose
    answer it is, or the action nested in it (a reaction) that must settle first."""
    point = waiting_point(state)
    top = state.stack[-1]
    if top.declared_at != declared:
        waits = f"the action declared at seq {top.declared_at}, nested in it, to settle"
    elif point is None:
        waits = "its next step"
    else:
        decision, who, _action = point
        waits = f"{decision.title} ({decision.rule}), {' or '.join(who) or 'no one'} to answer"
    frame = next(f for f in state.stack if f.declared_at == declared)
    return (f"NOT SETTLED: as the log stands this action waits on {waits}{_as_it_stands(state, frame)}; what it "
            "comes to is explained once it settles")


def _as_it_stands(state: FightState, frame: Frame) -> str:
    """An attack whose hit is rolled but not yet determined (an Active Defense window, an ability's decision at
    ``attack.rolled``): its totals as they stand, and its crit check, decided before any Active Defense (C7), as
    the engine reckons them (:func:`omen_core.derive.hit_numbers`); "" for anything else."""
    if not isinstance(frame, AttackFrame) or frame.hit_roll is None or frame.determination is not None:
        return ""
    if not {frame.declaration.attacker, frame.declaration.target} <= state.combatants.keys():
        return ""  # a view that left out a join (a seat's): the totals are not this reader's to reckon
    attack, defense, crit = hit_numbers(state, frame)
    critical = crit.fcs_portion > crit.res_portion
    return (f" (as it stands: hit total {attack.total} against defense {defense.total}, before any Active Defense, "
            f"C8; the crit check {'already succeeds' if critical else 'fails'}: FCS portion {crit.fcs_portion} "
            f"{'>' if critical else 'is not more than'} RES portion {crit.res_portion}, C7)")


def _lands(damage: DamageResolved, event: Event) -> bool:
    """Whether ``event`` is what ``damage`` outside any action moved, as the engine records it right after it: the
    target's Will and HP (C31), and Dying when its HP reached 0 (C28, C36)."""
    match event:
        case ResourceChanged(who=who, resource="hp" | "will"):
            return who == damage.target
        case ConditionApplied(who=who, condition="Dying", reason=reason):
            return who == damage.target and reason == DYING_REASON
    return False


def _counters(event: Event) -> set[int]:
    """The roll counters of the dice a result event's roll totals were rolled with (a check, a save, a contest,
    initiative, a roll-off, an ambush's Stealth)."""
    found: set[int] = set()
    for name in event.__struct_fields__:
        value = getattr(event, name)
        for total in value if isinstance(value, tuple) else (value,):
            if isinstance(total, RollTotal):
                found.add(total.counter)
    return found


def owner_of(event: Event, before: FightState, after: FightState) -> int | None:
    """The declaration seq of the action an event belongs to, if any (a declaration opens its own)."""
    if isinstance(event, (AttackDeclared, SaveCalled, MovementDeclared, AbilityUsed, MomentReached)):
        return after.stack[-1].declared_at if len(after.stack) > len(before.stack) else None
    action = action_of(event)
    if action is None:
        return None
    frame: Frame | None = next((f for f in reversed(before.stack) if f.action == action), None)
    return frame.declared_at if frame is not None else None


def explain(source: Source, seq: int, seed: bytes | None = None,
            owners: Callable[[str], bool] | None = None, *, follow: bool = True) -> Explanation:
    """Explain the event at ``seq`` of a log (the whole attack, save or movement it belongs to, if any), from
    one walk that stops once it has seen what it needs. ``owners``: whose triggered abilities not offered it says
    (a seat's own combatants: another's sheet, an ally's ability within reach, is not the seat's to read; C38);
    by default everyone's. ``follow``: the seq of a command whose batch declares or answers an action explains that
    action (the server follows only for a seat that sees the log whole: the command's own words are checked
    against what the seat is shown, the action's are not)."""
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidArgument("seq", "a seq (a whole number)", seq)
    if seed is not None and not isinstance(seed, bytes):
        raise InvalidArgument("seed", "the seed's bytes, or None", seed)
    torn = _torn_end(source)
    if torn is not None and seq >= torn.start:  # refused as replay and status refuse a torn log
        raise LogCorrupted(getattr(source, "where", "") or "this log", torn.line, torn.what)
    explainer = _Explainer(seq, seed, follow)
    if owners is not None:
        explainer.known.told = owners
    walk(source, explainer)
    if explainer.found is None:
        where = getattr(source, "where", "") or "this log"
        raise UnknownSeq(seq, 1, explainer.last, where)
    found = explainer.found
    if torn is None:
        return found
    note = f"the log is torn at seq {torn.start}: {torn.what}; this reads only the events before it"
    return msgspec.structs.replace(found, verdicts=(*found.verdicts, note))


def passed_over(source: Source, seq: int, owners: Callable[[str], bool]) -> tuple[PassedOver, ...]:
    """The triggered abilities' decision points the action declared at ``seq`` did not offer to ``owners`` (a
    seat's own combatants), and why (C38), as :func:`explain` says them, from the same one walk, without the rest
    of the explanation; none for an event that declares no action (an action still open: the hook points it has
    reached). The table page says them under its card of the action (docs/server.md)."""
    finder = _ActionEvents(seq)
    walk(source, finder)
    return tuple(_passed_over(finder.events, _action_hooks(finder.events), owners)) if finder.events else ()


class _ActionEvents(_Explainer):
    """The explainer's walk, keeping the events of the action declared at ``seq`` (each with the state before it)
    rather than explaining them; anything else is left unexplained."""

    def __init__(self, seq: int):
        super().__init__(seq, None)
        self.events: list[tuple[StoredEvent, FightState]] = []

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        if rec.seq == self.seq and owner_of(rec.event, before, after) != rec.seq:
            raise StopWalk  # not an action's declaration
        super().event(rec, before, after, voided)

    def end(self, state: FightState) -> None:
        if self.target is not None and not self.events:
            self._explain_target()

    def _explain_target(self) -> None:
        assert self.target is not None
        self.events = self.open.get(self.target, [])


class _Torn(NamedTuple):
    """Where a log cannot be read on: the first seq of the torn part (a last batch cut short, or a last line cut
    off mid-write), the line to name, and what it is, with the way out."""

    start: int
    line: int
    what: str


def _torn_end(source: Source) -> _Torn | None:
    """Whether the log ends torn, read from its last lines only (a store knows its last seq; lines held in memory
    are all at hand): a last line cut off mid-write (a torn tail) or a last batch with fewer events than its
    ``batch_size`` (:func:`omen_core.walk.torn_batch`). A log of schema version 1 records no batch size: only a torn
    line can be told there. Other damage is the walk's to report."""
    tail: TornTail | None = None
    after = 0
    if isinstance(source, StoreSource):
        try:
            after = max(source.store.version(source.fight_id) - 1, 0)
        except TornTail as exc:
            tail, after = exc, max(exc.line - 2, 0)
    last: bytes | None = None
    try:
        for chunk in source.lines(after):
            last = chunk[-1] if chunk else last
    except TornTail as exc:
        tail = exc
    try:
        rec = decode_line(last) if last is not None else None
    except msgspec.DecodeError:
        rec = None
    cut = rec is not None and rec.batch_size and rec.seq < rec.batch + rec.batch_size - 1
    if rec is not None and cut and tail is not None:
        return _Torn(rec.batch, tail.line, f"{tail.reason}; the command starting at seq {rec.batch} is cut short "
                                           "by it (omen repair removes it)")
    if rec is not None and cut:
        return _Torn(rec.batch, rec.seq, torn_batch(rec.batch, rec.seq, rec.batch + rec.batch_size - 1,
                                                    source.fight_id, tears(source)))
    if tail is not None:
        return _Torn(tail.line, tail.line, f"{tail.reason} (omen repair removes it)")
    return None


def explain_records(records: Iterable[StoredEvent], seq: int, seed: bytes | None = None) -> Explanation:
    """:func:`explain` over an in-memory log of decoded events (``records``: the stored events, ``fight.events``)."""
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise InvalidArgument("records", "the stored events (fight.events, or a store's read)", records)
    listed = list(records)
    if not all(isinstance(r, StoredEvent) for r in listed):
        wrong = next(r for r in listed if not isinstance(r, StoredEvent))
        raise InvalidArgument("records", "stored events (omen_core.events.StoredEvent)", wrong)
    return explain(LinesSource([encode_line(r) for r in listed], where="the events given"), seq, seed)


def _rerolls_by(events: Sequence[tuple[StoredEvent, FightState]]) -> dict[int, str]:
    """What made each reroll of an action's hit roll (C39), by the reroll's seq: ``Lucky Aim (automatic, C39)``,
    an ability's automatic reroll, as the engine picks it (each handler in turn, a die once); ``Second Look
    (chosen, C39)``, the answer to a decision point that came before it (the ability's name, by its id)."""
    found: dict[int, str] = {}
    auto: dict[tuple[int, int], str] = {}
    chosen: str | None = None
    for k, (rec, state) in enumerate(events):
        e = rec.event
        if isinstance(e, DiceRolled) and e.purpose == "hit" and k + 1 < len(events):
            after = events[k + 1][1]  # the state before the next event: the hit roll on the frame
            frame = after.pending
            if frame is not None and getattr(frame, "hit_roll", None) is not None:
                for handler in auto_rerolls(after):
                    for index in handler.dice(after, frame):
                        auto.setdefault((e.counter, index), handler.origin)
            chosen = None
        elif isinstance(e, DecisionAnswered):
            chosen = None if e.choice == PASS else _ability_name(state, e.who, e.decision)
        elif isinstance(e, DiceRolled) and e.rerolls is not None and e.die is not None:
            if chosen is not None:
                found[rec.seq] = f"{chosen} (chosen, C39)"
            elif (e.rerolls, e.die) in auto:
                found[rec.seq] = f"{auto[(e.rerolls, e.die)]} (automatic, C39)"
    return found


def _ability_name(state: FightState, who: str, ability_id: str) -> str:
    """The name of ``who``'s ability ``ability_id`` (the id if its sheet writes none of that id)."""
    fighter = state.combatants.get(who)
    written = fighter.sheet.written_abilities() if fighter is not None else ()
    return next((a.name for a in written if a.id == ability_id), ability_id)


def _dice(recs: Iterable[StoredEvent], seed: bytes | None, by: Mapping[int, str] | None = None) -> tuple[DieLine, ...]:
    """Every die of the rolls among ``recs``; a reroll's die (C39) carries the face it replaced, and what made it
    (``by``: :func:`_rerolls_by`)."""
    lines = []
    faces: dict[tuple[int, int], int] = {}
    for rec in recs:
        if not isinstance(rec.event, DiceRolled):
            continue
        rolled = rec.event
        checked = seed is not None and rolled.source == "seeded"
        wrong = {i for i, _, _ in seeded_mismatches(seed, rec.fight_id, rolled)} if checked and seed else set()
        for i, die in enumerate(rolled.dice):
            faces[(rolled.counter, i)] = die.face
            replaced = (faces.get((rolled.rerolls, rolled.die)) if rolled.rerolls is not None and rolled.die is not None
                        else die.rerolled)
            lines.append(DieLine(seq=rec.seq, counter=rolled.counter, purpose=rolled.purpose, roller=rolled.roller,
                                 pool=die.pool, sides=die.sides, face=die.face, source=rolled.source,
                                 seed_confirms=(i not in wrong) if checked else None, origin=die.origin,
                                 rerolled=replaced, rerolled_by=(by or {}).get(rec.seq)))
    return tuple(lines)


def _with_dice_said(found: Explanation) -> Explanation:
    """``found`` with its words on the dice saying, in a fight of seeded dice, how many of its dice were not drawn
    from the seed (typed by hand, ``[manual]``, or scripted): the seed's word covers the others alone."""
    drawn = {d.source for d in found.dice}
    if not found.seed.startswith("seeded dice") or drawn <= {"seeded"}:
        return found
    counts = Counter(d.source for d in found.dice if d.source != "seeded")
    typed = sum(counts.values())
    how = " and ".join(f"{n} {_NOT_SEEDED.get(source, source)}" for source, n in sorted(counts.items()))
    whole = ("the die here" if typed == 1 else f"all {typed} dice here") if typed == len(found.dice) \
        else f"{typed} of the {len(found.dice)} dice here"
    was, them = ("was", "it") if typed == 1 else ("were", "them")
    return msgspec.structs.replace(found, seed=f"{found.seed}; {whole} {was} not drawn from the seed ({how}): the "
                                                f"seed does not check {them}")


#: How a die not drawn from the seed came, by its roll's source.
_NOT_SEEDED = {"manual": "typed by hand [manual]", "scripted": "scripted [scripted]"}


def _split(state: FightState, who: str, attribute: str, effective: int) -> tuple[int, str]:
    """What conditions changed of an effective attribute bonus (C28: the effective bonus less the sheet's), for a
    total's terms to split it, and the conditions ``who`` held, in words."""
    source = bonus_source(state, who, attribute)
    return effective - source.sheet, source.held_words() or "none"


def _title(known: Derivations, seq: int, text: str) -> str:
    return ("[undone] " if seq in known.voided else "") + text


def _attack(known: Derivations, events: list[tuple[StoredEvent, FightState]]) -> Explanation:
    first = events[0][0]
    decl = first.event
    assert isinstance(decl, AttackDeclared)
    status, seed = known.seed.status()
    titles = _decision_titles(events)
    parts: list[Part] = []
    verdicts: list[str] = []
    reaction = (f", {_REACTIONS[decl.reaction][0]} answering the action at seq {decl.reacting_to} "
                f"({_REACTIONS[decl.reaction][1]})" if decl.reaction else "")
    title = _title(known, first.seq, f"{decl.attacker} attacks {decl.target} with "
                   f"{decl.weapon or 'no weapon'} ({decl.kind.replace('_', ' ')}), the action declared "
                   f"at seq {first.seq}{reaction}")
    hit = next(((rec, state) for rec, state in events if isinstance(rec.event, HitDetermined)), None)
    hd = hit[0].event if hit is not None else None
    answered, rerolled = _answered(events), _rerolled(events)
    # the verdicts in the order of the events they tell (the hit's where it was determined: it read before the
    # windows and the defense that led to it, a crit "cancelled by the Active Defense" before any was told)
    at: dict[int, list[str]] = {}
    if hit is not None:
        assert isinstance(hd, HitDetermined)
        parts += _hit_parts(hit[1], decl, hd, answered, rerolled)
        tie = " (a tie: the defender wins ties)" if hd.attack.total == hd.defense.total else ""
        c = hd.crit_check
        crit = crit_outcome(hd)
        why = ("an Active Defense that turns a hit into a miss cancels the crit" if crit.startswith("crit cancelled")
               else "a crit matters only if the attack hits" if c.exceeds and not hd.hit
               else "strictly more; ties are no crit")
        at[hit[0].seq] = [f"{'HIT' if hd.hit else 'MISS'}: {hd.attack.total} {'>' if hd.hit else 'is not >'} "
                          f"{hd.defense.total}{tie} (§Hit Determination)",
                          f"crit: FCS portion {c.fcs_portion} vs RES portion {c.res_portion}: {crit} (C7: {why})"]
    for rec, state in events:
        if isinstance(rec.event, ActiveDefenseChosen):
            chosen = rec.event
            allowed = override_allowing(state, decl, chosen.defense, chosen.weapon)
            if allowed is not None:
                at.setdefault(rec.seq, []).append(
                    f"{chosen.defender}'s {chosen.defense} against a {decl.kind.replace('_', ' ')} attack, which "
                    f"§Which Defenses Apply refuses, is allowed by {allowed} (an eligibility override, C37)")
    # on a hit, one damage is the weapon's (C12): the one its source names, whenever it comes (an ability may deal
    # its own before it, at the moment the hit is determined, C38); every other is a consequence's (C25)
    weapon_damage = isinstance(hd, HitDetermined) and hd.hit
    arm = events[0][1].combatants[decl.attacker].sheet.weapon(decl.weapon) if decl.weapon else None
    label = arm.label if arm is not None else "unarmed"
    lowered = _changed(hit[1], decl.attacker, hd, arm is not None) if hit is not None and isinstance(
        hd, HitDetermined) else None
    healing = _Healing()
    no_catch = _no_catch(events, arm)
    passed = _not_offered(events, known.told)
    for rec, state in events:
        verdicts += passed.get(rec.seq, [])
        verdicts += at.get(rec.seq, [])
        if no_catch is not None and rec.seq == no_catch[0]:
            verdicts.append(no_catch[1])
        if (healed := healing.see(rec, state)) is not None:
            parts.append(healed)
        if isinstance(rec.event, DamageResolved):
            dealt_by_weapon = weapon_damage and rec.event.source == label
            parts += _damage_parts(rec.event, consequence=not dealt_by_weapon,
                                   incoming=state.combatants[rec.event.target].sheet.incoming_damage,
                                   named=_origins(state, decl.attacker, decl.target, answered=answered),
                                   rerolled=rerolled, attacker=decl.attacker,
                                   lowered=lowered if dealt_by_weapon else None,
                                   crit=isinstance(hd, HitDetermined) and hd.crit,
                                   attribute=hd.attack.attribute if dealt_by_weapon and arm is not None
                                   and isinstance(hd, HitDetermined) else "")
            weapon_damage = weapon_damage and not dealt_by_weapon
            e = rec.event
            where = f"{e.target}'s {e.resource.upper()}"
            if e.overflow and e.overflow == e.final:  # converted with no Will left: all of it to HP (C31)
                where = f"{e.target}'s HP (converted to Will, but no Will is left: all of it to HP, C31)"
            elif e.overflow:
                where += f" ({e.final - e.overflow}; the {e.overflow} beyond the Will left to HP, C31)"
            elif e.resource == "hp":
                where += _conversion_idle(state, e.target, e.damage_type)
            verdicts.append(f"{e.final} {e.damage_type} damage to {where}")
            verdicts += _unmoved(e, state, "{who}: HP 0 -> 0")
        elif isinstance(rec.event, CatchWindowOpened):
            verdicts.append(f"a Catch window for {rec.event.target}: the thrown {label} about to hit may be caught "
                            "(C22)")
        elif isinstance(rec.event, CatchAnswered):
            verdicts.append(f"{rec.event.who} catches the {label}: no damage and no on-hit effects (C22)"
                            if rec.event.caught else f"{rec.event.who} does not catch the {label}: it hits (C22)")
        elif isinstance(rec.event, WillConversionChosen):
            verdicts.append(f"{rec.event.who} chose to take it on {'Will' if rec.event.convert else 'HP'} (C31)")
        elif isinstance(rec.event, ResourceChanged):
            verdicts.append(f"{rec.event.who}: {rec.event.resource.upper()} {rec.event.before} -> {rec.event.after}")
        elif rec is first:
            if decl.reaction is not None:  # a reaction explained itself: where the action it answers is (C23, C24, C38)
                verdicts.append(f"{decl.attacker} answers the action declared at seq {decl.reacting_to} with "
                                f"{_REACTIONS[decl.reaction][0]} on {decl.target} ({_REACTIONS[decl.reaction][1]}; "
                                "explain that action there)")
        elif (said := _also_told(rec.event, (decl.attacker, ("action",)), rec.seq, titles, state)) is not None:
            verdicts.append(said)
        verdicts += healing.said()
    left, healed_words = healing.finish()
    parts += left
    verdicts += healed_words
    return Explanation(seq=first.seq, kind="attack", title=title,
                       dice=_dice((r for r, _ in events), seed, _rerolls_by(events)),
                       parts=tuple(parts), verdicts=tuple(verdicts), seed=status, undone=first.seq in known.voided)


def _unmoved(event: DamageResolved, state: FightState, said: str) -> list[str]:
    """``said`` of the target, for damage that reached HP at 0 already (:func:`~omen_replay.narrate.hp_unmoved`:
    the engine records no change), else nothing."""
    target = state.combatants.get(event.target)
    return [said.format(who=event.target)] if hp_unmoved(event, target.hp if target else None) else []


#: Said of a Catch or an Attack of Opportunity window that did not open (C22, C23): the engine records none, so the
#: reason is derived here from the state the engine decided on, by the checks the rules state.
_DERIVED = "derived from the state before seq {seq}; the log records no skipped window"


def _cannot_react(state: FightState, who: str, cost: int, what: str, *, defensive: bool) -> str | None:
    """Why ``who`` could not answer with ``what`` (costing ``cost`` Bonus Actions) in ``state``, or None if it
    could: out of the fight (C33), unable to act (C10, C36), before its first turn unless the reaction is
    ``defensive`` (C20), or without the Bonus Actions (C22). The conditions the engine checks, in its order."""
    fighter = state.combatants[who]
    if fighter.out:
        return f"{who} is out of the fight ({fighter.left}, C33)"
    if fighter.dying:
        return f"{who} is at 0 HP, Dying: treated as Incapacitated, no reaction (C36)"
    helpless = next((c for c in ("Incapacitated", "Paralysed") if fighter.has(c)), None)
    if helpless is not None:
        return f"{who} is {helpless}: no reaction (C10)"
    if not defensive and not state.had_a_turn(who):
        return (f"{who}'s first turn has not come yet: its Bonus Actions are for defence only until then (C20), "
                f"and {what} is an attack")
    if fighter.bonus_actions < cost:
        left = "no Bonus Action left" if fighter.bonus_actions == 0 else f"{fighter.bonus_actions} Bonus Action left"
        return f"{who} has {left}, and {what} costs {amount_of('bonus_action', cost)} (C22)"
    return None


#: An attack's hook points, in the order it reaches them (docs/abilities.md, "Triggered abilities").
_ATTACK_HOOKS = ("attack.declared", "attack.rolled", "attack.determined", "attack.damaged", "condition.applied")

#: Said of a triggered ability's decision point not offered (C38): the engine records only those that open, so the
#: reason is derived here from the state the engine decided in, by the engine's own gates.
_NOT_OFFERED = "derived from the state before seq {seq}; the log records only the decision points that opened"

#: The hook points of an action (combat.txt §Resolving an Attack, §Resolving a Save), and what marks where the
#: action went on from each (the decision points due there having closed): the state before the first decision point
#: opened there, else before that mark, is the state they were judged in.
_HOOK_MARKS: dict[str, Callable[[Event], bool]] = {
    "attack.declared": lambda e: isinstance(e, DiceRolled) and e.purpose == "hit",
    "attack.rolled": lambda e: isinstance(e, (ActiveDefenseWindowOpened, ActiveDefenseWindowSkipped)),
    "attack.determined": lambda e: (isinstance(e, (RoutingWindowOpened, DamageResolved, ActionSettled))
                                    or (isinstance(e, DiceRolled) and e.purpose == "damage")),
    "attack.damaged": lambda e: isinstance(e, ActionSettled) or _opened_at(e, "condition.applied"),
    "save.resolved": lambda e: isinstance(e, ActionSettled) or _opened_at(e, "condition.applied"),
    "condition.applied": lambda e: isinstance(e, ActionSettled),
    "move.left": lambda e: isinstance(e, ActionSettled),
    **{moment: lambda e: isinstance(e, ActionSettled) for moment in ("turn.start", "turn.end", "round.end",
                                                                      "check.resolved")},
}


def _opened_at(event: Event, hook: str) -> bool:
    """Whether ``event`` opens a decision point at ``hook``."""
    return isinstance(event, DecisionOpened) and event.hook == hook


class PassedOver(msgspec.Struct, frozen=True, kw_only=True):
    """A triggered ability's decision point an action did not offer to an owner its trigger names, and why (C38):
    ``seq`` is the event to say it at (the state before it is the one judged), ``ability`` and ``rule`` the
    ability's name and rule id, ``who`` the owner passed over, ``hook`` the hook point, ``why`` the first gate that
    held it back (its ``when``, its uses, what it could change, Bonus Actions before its first turn; unable to act
    or pay), in the engine's words."""

    seq: int
    ability: str
    rule: str
    who: str
    hook: str
    why: str

    def said(self) -> str:
        """The finding as explain says it."""
        return (f"{self.ability} ({self.rule}) not offered to {self.who} at {self.hook} "
                f"({_NOT_OFFERED.format(seq=self.seq)}): {self.why}")


def _passed_over(events: list[tuple[StoredEvent, FightState]], hooks: Sequence[str],
                 told: Callable[[str], bool] = _everyone) -> list[PassedOver]:
    """Each triggered ability's decision point the action's ``hooks`` did not offer to an owner its trigger names,
    and why (C38: its ``when``, uses, Bonus Actions before its first turn, what it could change; unable to act or
    pay), in order; derived from the state at each hook point the action reached, by
    :func:`omen_core.decide.passed_over_at`. ``told``: whose to say (a seat's own combatants)."""
    action = events[0][0].seq
    offered = {(rec.event.decision, who) for rec, _ in events if isinstance(rec.event, DecisionOpened)
               for who in rec.event.responders}
    caught = any(isinstance(rec.event, CatchAnswered) and rec.event.caught for rec, _ in events)
    out: list[PassedOver] = [passed for passed in _interrupts_passed_over(events) if told(passed.who)]
    start = 0
    for hook in hooks:
        if hook == "attack.determined" and caught:  # a caught item has no on-hit effects (C22): no such moment
            continue
        if hook == "attack.determined":
            start = next((i + 1 for i, (rec, _) in enumerate(events) if isinstance(rec.event, HitDetermined)),
                         len(events))
        at = next((i for i in range(start, len(events)) if _opened_at(events[i][0].event, hook)
                   or _HOOK_MARKS[hook](events[i][0].event)), None)
        if at is None:
            continue  # the action did not reach it (cancelled, or caught)
        # each owner is judged at its place in C38's order: before the first decision point there, or after an
        # answer (which may change the totals, what is left to pay, HP): every such state, up to the action going on
        end = next((i for i in range(at, len(events)) if _HOOK_MARKS[hook](events[i][0].event)), len(events) - 1)
        places = [i for i in range(at, end + 1) if i in (at, end) or _opened_at(events[i][0].event, hook)]
        said: set[tuple[str, str]] = set()
        for i in places:
            rec, state = events[i]
            if state.pending is None or state.pending.action != action:
                continue
            for row, who, why in passed_over_at(state, hook):
                if (row.kind, who) not in offered and (row.kind, who) not in said and told(who):
                    said.add((row.kind, who))
                    out.append(PassedOver(seq=rec.seq, ability=row.title, rule=row.rule, who=who, hook=hook,
                                          why=why))
    return out


def _interrupts_passed_over(events: list[tuple[StoredEvent, FightState]]) -> list[PassedOver]:
    """The enemies within reach of an Action's actor that its declaration gave no Interrupt window to, and why
    (C24: each adjacent enemy may Interrupt; C20, C22, C10, C33, C36: :func:`_cannot_react`, as an Attack of
    Opportunity's is said), judged in the state right after the declaration; none for an action that spent no
    Action (a reaction, a Bonus Action's ability)."""
    if len(events) < 2:
        return []
    decl = events[0][0].event
    actor = (decl.attacker if isinstance(decl, AttackDeclared) and decl.reacting_to is None else
             decl.caller if isinstance(decl, SaveCalled) else decl.who if isinstance(decl, AbilityUsed) else None)
    if actor is None:
        return []
    windows = [rec.event for rec, _ in events if isinstance(rec.event, ReactionWindowOpened)
               and rec.event.reaction == "interrupt"]
    spent = any(isinstance(rec.event, CostPaid) and rec.event.resource == "action" and rec.event.who == actor
                for rec, _ in events)
    if not windows and not spent:
        return []
    asked = set(windows[0].responders) if windows else set()
    after, state = events[1]
    if state.phase is not Phase.ROUNDS:
        return []
    cost = state.ruleset.reaction_costs.interrupt if state.ruleset is not None else 2
    side = state.combatants[actor].side
    return [PassedOver(seq=after.seq, ability="Interrupt", rule="C24", who=who, hook="the declaration", why=why)
            for who in state.engaged_with(actor) if who not in asked and state.combatants[who].side != side
            and (why := _cannot_react(state, who, cost, "an Interrupt", defensive=False)) is not None]


def _not_offered(events: list[tuple[StoredEvent, FightState]],
                 told: Callable[[str], bool] = _everyone) -> dict[int, list[str]]:
    """:func:`_passed_over` at the action's own hook points (:func:`_action_hooks`), each said by the seq to say it
    at."""
    out: dict[int, list[str]] = {}
    for passed in _passed_over(events, _action_hooks(events), told):
        said = (f"no Interrupt window for {passed.who} ({_DERIVED.format(seq=passed.seq)}): {passed.why}"
                if passed.ability == "Interrupt" else passed.said())  # (as an Attack of Opportunity's is said)
        out.setdefault(passed.seq, []).append(said)
    return out


def _action_hooks(events: list[tuple[StoredEvent, FightState]]) -> tuple[str, ...]:
    """The hook points an action may reach, in order, by its declaration (docs/abilities.md, "Triggered
    abilities"): an attack's, a save's (its resolution, a condition it applied), a move's, an ability's used on
    one's turn or a moment's of the round (:func:`_ability_hooks`); none for anything else."""
    decl = events[0][0].event if events else None
    if isinstance(decl, AttackDeclared):
        return _ATTACK_HOOKS
    if isinstance(decl, SaveCalled):
        return ("save.resolved", "condition.applied")
    if isinstance(decl, MovementDeclared):
        return ("move.left",)
    if isinstance(decl, (AbilityUsed, MomentReached)):
        return _ability_hooks(decl, events)
    return ()


def _decided_after_hit(events: list[tuple[StoredEvent, FightState]]) -> tuple[StoredEvent, FightState] | None:
    """The event that came right after the hit was determined and the decision points due at that moment had
    closed (C38), with the state before it: the state the engine asked whether a Catch window opens in (C22)."""
    at = next((i for i, (rec, _) in enumerate(events) if isinstance(rec.event, HitDetermined)), None)
    if at is None:
        return None
    depth = 0
    for rec, state in events[at + 1:]:
        if isinstance(rec.event, DecisionOpened):
            depth += 1
        elif isinstance(rec.event, DecisionClosed):
            depth -= 1
        elif depth <= 0:
            return rec, state
    return None


def _no_catch(events: list[tuple[StoredEvent, FightState]], arm: Weapon | None) -> tuple[int, str] | None:
    """Why a thrown item that hit opened no Catch window for its target (C22), and the seq to say it at; None if
    the attack threw nothing, missed, or opened one. Derived from the state, which the engine does not record."""
    declared = events[0][0].event
    if arm is None or not isinstance(declared, AttackDeclared) or not is_thrown(arm.properties, declared.kind) \
            or any(isinstance(r.event, CatchWindowOpened) for r, _ in events):
        return None  # (a weapon marked thrown strikes in hand in a melee attack: nothing to catch)
    hit = next((r.event for r, _ in events if isinstance(r.event, HitDetermined)), None)
    after = _decided_after_hit(events)
    if hit is None or not hit.hit or after is None:
        return None
    rec, state = after
    target = declared.target
    costs = state.ruleset.reaction_costs if state.ruleset is not None else None
    why = _cannot_react(state, target, costs.catch if costs else 1, "a Catch", defensive=True)
    if why is None:
        return None
    return rec.seq, f"no Catch window for {target} ({_DERIVED.format(seq=rec.seq)}): {why}"


def _hit_parts(state: FightState, decl: AttackDeclared, hd: HitDetermined, answered: tuple[tuple[str, str], ...] = (),
               rerolled: frozenset[tuple[str, int]] = frozenset()) -> list[Part]:
    """The hit total, the total defense and the two crit portions, each its recorded total's own terms (split where
    conditions changed a bonus, C28), in explain's words; ``answered``: the abilities used in answer to the action's
    decision points (:func:`_answered`), named with their owners; ``rerolled``: the dice of the hit roll a reroll
    changed (:func:`_rerolled`, C39)."""
    a, d, c = hd.attack, hd.defense, hd.crit_check
    weapon = state.combatants[decl.attacker].sheet.weapon(decl.weapon) if decl.weapon else None
    attacker, held = _split(state, decl.attacker, a.attribute, a.attribute_bonus)
    named = _origins(state, decl.attacker, decl.target, answered=answered)
    hit_terms = _worded(a.terms(attacker), attribute=a.attribute, who=decl.attacker, held=held,
                        weapon=weapon.label if weapon else "unarmed", named=named, rerolled=rerolled)
    target, target_held = _split(state, decl.target, "RES", d.res_bonus)
    armor_note = ("no armor worn" if state.combatants[decl.target].sheet.armor is None
                  else "armor applies" if d.armor_applies
                  else "armor does not apply (mundane armor against a spell or non-physical attack, C13)")
    defense_terms = _worded(d.base_terms(target), who=decl.target, held=target_held, armor_note=armor_note,
                            named=named)
    if d.active is not None:
        x = d.active
        # a Dodge is AGI die + AGI bonus (rolls-and-resolution.txt §Active Defense): it has no rating to show
        own = tuple(t for t in x.terms(target) if not (t.kind == "active_rating" and x.defense == "dodge"))
        defense_terms += _worded(own, who=decl.target, held=target_held, defense=x.defense,
                                 attribute=x.attribute, conditions=f"{x.defense}: conditions")
    fcs, fcs_held = _split(state, decl.attacker, "FCS", c.fcs_bonus)
    fcs_terms = _worded(c.fcs_terms(fcs), who=decl.attacker, held=fcs_held, rerolled=rerolled)
    res, res_held = _split(state, decl.target, "RES", c.res_bonus)
    res_terms = _worded(c.res_terms(res), who=decl.target, held=res_held)
    return [Part(name="hit total", terms=hit_terms, total=a.total, rule="C5"),
            Part(name="total defense", terms=defense_terms, total=d.total, rule="C10, C11, §Active Defense"),
            Part(name="FCS portion", terms=fcs_terms, total=c.fcs_portion, rule="C7"),
            Part(name="RES portion", terms=res_terms, total=c.res_portion, rule="C7, C10")]


def _incoming(term: Term, before: int, incoming: IncomingDamage) -> Term:
    """The incoming-damage step in words: its exact fraction, what it adds and the one rounding down (C13 step 5,
    C34), so that the step's number can be checked by hand."""
    times = exact(incoming.multiply)
    exactly = before * times + incoming.add
    shown = str(exactly)
    if exactly.denominator != 1:
        rest = exactly.denominator
        for prime in (2, 5):
            while rest % prime == 0:
                rest //= prime
        shown += f" ({Decimal(exactly.numerator) / Decimal(exactly.denominator):f})" if rest == 1 else ""  # exact
    said = (f"{before} x {times}" if times != 1 else str(before)) + (
        f" {'+' if incoming.add > 0 else '-'} {abs(incoming.add)}" if incoming.add else "")
    return msgspec.structs.replace(term, source=f"{said} = {shown}, rounded down once, floor 0: after: "
                                                f"{before + term.value} (C13, C34)")


class _Changed(NamedTuple):
    """What conditions changed of the attacker's primary bonus as the hit recorded it (C28), for the weapon's
    damage to split its primary bonus and a crit's extra one the same way (C12): the attribute, the change, the
    conditions held in words, whether the attack is armed (unarmed damage has no primary bonus to split, C12) and
    whether it crit (only a crit adds the extra one, C7)."""

    attribute: str
    conditions: int
    held: str
    armed: bool
    crit: bool


def _changed(state: FightState, attacker: str, hd: HitDetermined, armed: bool) -> _Changed | None:
    """What conditions changed of ``attacker``'s primary bonus when the hit was determined (``state``: the state
    it was determined in, as :func:`_hit_parts` splits the hit total's); None if nothing did."""
    conditions, held = _split(state, attacker, hd.attack.attribute, hd.attack.attribute_bonus)
    return _Changed(hd.attack.attribute, conditions, held, armed, hd.crit) if conditions else None


def _split_bonus(terms: tuple[PartTerm, ...], changed: _Changed) -> tuple[PartTerm, ...]:
    """C12's terms with the primary bonus (armed) and a crit's extra one (on a crit), each the attacker's effective
    primary bonus, split into the sheet's value and what conditions changed (C28), as the hit total splits it."""
    split = {"primary_bonus": changed.armed, "crit_bonus": changed.crit}
    out: list[PartTerm] = []
    for t in terms:
        if split.get(t.kind):
            out += [PartTerm(t.label, t.value - changed.conditions, t.source, f"sheet_{t.kind}"),
                    PartTerm("conditions", changed.conditions, "condition", t.kind.replace("bonus", "conditions"))]
        else:
            out.append(t)
    return tuple(out)


def _damage_parts(event: DamageResolved, *, consequence: bool, incoming: IncomingDamage | None = None,
                  named: dict[str, tuple[str, str]] | None = None,
                  rerolled: frozenset[tuple[str, int]] = frozenset(), stacks: tuple[str, str] = ("", ""),
                  attacker: str = "", lowered: _Changed | None = None, answer: bool = False,
                  crit: bool = False, attribute: str = "") -> list[Part]:
    """C12's damage formula term by term (or a consequence's own damage roll, C25), then C13 step by step
    (``incoming``: the target's incoming-damage modifiers, to show step 5's arithmetic, C34; ``named``: what a
    modifier named after a condition or an ability is, :func:`_origins`; ``rerolled``: the dice of the hit roll a
    reroll changed, :func:`_rerolled`: the dice result is the hit roll's as rerolled, C39; ``stacks``: what a
    condition's tick took once per stack, its dice and its flat amount, :func:`_per_stack`, C40; ``attacker``:
    whose rage a rage die is, C12; ``lowered``: what conditions changed of the attacker's primary bonus, for the
    weapon's damage to split it, :func:`_split_bonus`, C28; ``answer``: a triggered ability's answer dealt it, C38,
    not the action's own consequence; ``crit``: the hit was a crit, else the crit's extra bonus, 0, is no term)."""
    t = event.terms
    afters = [t.raw, *(s.after for s in event.steps)]
    worded = _worded(event.mitigation_terms(), afters=["", *afters[1:]])
    if incoming is not None:
        worded = tuple(_incoming(term, afters[i - 1], incoming) if i and event.steps[i - 1].step == "incoming"
                       else term for i, term in enumerate(worded))
    mitigation = Part(name="after mitigation", total=event.final, terms=worded,
                      rule="C13: resistance, physical rollover, armor, floor 0, incoming")
    if consequence:  # a consequence's own roll and flat damage (its other terms are none: C25)
        own = [x for x in t.terms() if (x.kind == "damage_dice" and x.value) or x.kind == "damage_modifier" or x.value]
        terms = tuple(Term(x.label, x.value, "the save succeeded: half the damage, rounded down (C15, C25)",
                           origin=x.origin) if x.label == HALF_ON_SUCCESS else x for x in _worded(
            own, dice_label="damage dice", dice_source=f"the consequence's own {event.damage_type} damage roll"
            + stacks[0], modifier_source="the consequence's flat damage" + stacks[1], damage_source=event.source))
        if answer:
            return [Part(name=f"damage ({event.source}: a triggered ability's answer)", terms=terms, total=t.raw,
                         rule="C38"), mitigation]
        return [Part(name=f"damage ({event.source}: a consequence)", terms=terms, total=t.raw, rule="C25"),
                mitigation]
    dice_label = f"routed die #{t.routed_die} (C12)" if t.routed_die is not None else "primary dice result"
    changed = ("", t.routed_die) in rerolled if t.routed_die is not None else any(p == "primary" for p, _ in rerolled)
    dice_source = "the hit roll, as rerolled (C39)" if changed else "the hit roll"
    formula = tuple(x for x in t.terms() if crit or x.kind != "crit_bonus" or x.value)  # no crit: no such term
    if lowered is not None:
        formula = _split_bonus(formula, lowered)
    elif attribute:  # an armed attack's primary bonus, the sheet's as it stands: which attribute, whose (C12)
        formula = tuple(PartTerm(x.label, x.value, x.source, f"sheet_{x.kind}")
                        if x.kind in ("primary_bonus", "crit_bonus") else x for x in formula)
    terms = _worded(formula, dice_label=dice_label, dice_source=dice_source, damage_source=event.source,
                    modifier_source="damage modifier", named=named, attacker=attacker, who=attacker,
                    attribute=lowered.attribute if lowered else attribute, held=lowered.held if lowered else "")
    return [Part(name=f"damage ({event.source})", terms=terms, total=t.raw, rule="C12"), mitigation]


def _surprise_said(tier: str, total: int, difficulty: int) -> str:
    """A surprise verdict with C18's bands at its difficulty, so a reader sees why the tier is what it is.

    >>> _surprise_said("partial", 12, 15)
    'Partial Surprise against difficulty 15 (C18): 12 is in 11 to 15 (Alert above 15; Complete Surprise at 10 or less)'
    """
    others = "; ".join(f"{words} {tier_range(key, difficulty)}" for key, words in TIER_WORDS.items() if key != tier)
    return (f"{TIER_WORDS.get(tier, tier)} against difficulty {difficulty} (C18): {total} is "
            f"{tier_range(tier, difficulty)} ({others})")


def _side_part(name: str, side: RollTotal, state: FightState, rule: str, rolls: dict[int, int]) -> Part:
    where = f"roll at seq {rolls[side.counter]}" if side.counter in rolls else f"roll #{side.counter}"
    conditions, held = _split(state, side.roller, side.attribute, side.attribute_bonus)
    terms = _worded(side.terms(conditions), attribute=side.attribute, where=where, who=side.roller, held=held)
    return Part(name=name, terms=terms, total=side.total, rule=rule)


def _roll_seqs(recs: Iterable[StoredEvent]) -> dict[int, int]:
    """The seq of each roll, by its counter (within one command, where a roll total finds its roll)."""
    return {r.event.counter: r.seq for r in recs if isinstance(r.event, DiceRolled)}


def _save(known: Derivations, events: list[tuple[StoredEvent, FightState]]) -> Explanation:
    first = events[0][0]
    called = first.event
    assert isinstance(called, SaveCalled)
    status, seed = known.seed.status()
    titles = _decision_titles(events)
    rolls = _roll_seqs(r for r, _ in events)
    parts, verdicts = [], []
    healing = _Healing()
    answered = False  # a triggered ability answered (C38): the damage after it is its answer's, not the branch's
    passed = _not_offered(events, known.told)
    for rec, state in events:
        verdicts += passed.get(rec.seq, [])
        if (healed := healing.see(rec, state)) is not None:
            parts.append(healed)
        answered = answered or (isinstance(rec.event, DecisionAnswered) and rec.event.choice != PASS)
        if isinstance(rec.event, SaveResolved):
            e = rec.event
            parts += [_side_part(f"{e.saver.roller}'s save", e.saver, state, "C15", rolls),
                      _side_part(f"{e.opposing.roller}'s opposing roll", e.opposing, state, "C15", rolls)]
            verdicts.append(f"{'saved' if e.success else 'failed'}: {e.saver.total} "
                            f"{'>=' if e.success else '<'} {e.opposing.total} (C15: the saver wins ties)")
        elif isinstance(rec.event, DamageResolved):
            parts += _damage_parts(rec.event, consequence=True, answer=answered,
                                   incoming=state.combatants[rec.event.target].sheet.incoming_damage)
            verdicts.append(f"{rec.event.final} {rec.event.damage_type} damage to {rec.event.target}")
            verdicts += _unmoved(rec.event, state, "{who}: HP 0 -> 0")
        elif isinstance(rec.event, ResourceChanged):
            verdicts.append(f"{rec.event.who}: {rec.event.resource.upper()} {rec.event.before} -> {rec.event.after}")
        elif (said := _also_told(rec.event, (called.caller, ("action",)), rec.seq, titles, state)) is not None:
            verdicts.append(said)
        verdicts += healing.said()
    left, healed_words = healing.finish()
    parts += left
    verdicts += healed_words
    title = _title(known, first.seq, f"{called.caller}'s {called.effect.name}: {called.saver} saves with "
                   f"{called.effect.save}, the action declared at seq {first.seq}")
    return Explanation(seq=first.seq, kind="save", title=title, dice=_dice((r for r, _ in events), seed),
                       parts=tuple(parts), verdicts=tuple(verdicts), seed=status, undone=first.seq in known.voided)


def _movement(known: Derivations, events: list[tuple[StoredEvent, FightState]]) -> Explanation:
    first = events[0][0]
    decl = first.event
    assert isinstance(decl, MovementDeclared)
    status, seed = known.seed.status()
    leaving = f", leaving the reach of {', '.join(decl.leaves)}" if decl.leaves else ""
    moves = ("stands up from Prone (a Movement Action, C20, C28)" if known.batch.stands_up(decl.action)
             else f"moves{leaving}")
    title = _title(known, first.seq, f"{decl.who} {moves}, the action declared at seq {first.seq}")
    verdicts: list[str] = []
    titles = _decision_titles(events)
    passed = _not_offered(events, known.told)
    for rec, state in events:  # what an ability answering the move did (C38, move.left) said as it landed
        verdicts += passed.get(rec.seq, [])
        if isinstance(rec.event, (DamageResolved, ResourceChanged)) and rec.event.action == decl.action:
            verdicts += _landed(rec.event, state)
        elif (said := _also_told(rec.event, (decl.who, ("movement_action", "action")), rec.seq, titles,
                                 state)) is not None:
            verdicts.append(said)
    verdicts += _no_opportunity(events)
    return Explanation(seq=first.seq, kind="movement", title=title,
                       dice=_dice((r for r, _ in events if getattr(r.event, "action", None) == decl.action),
                                  seed),
                       parts=(), verdicts=tuple(verdicts), seed=status, undone=first.seq in known.voided)


def _no_opportunity(events: list[tuple[StoredEvent, FightState]]) -> list[str]:
    """Why each combatant whose reach a move leaves got no Attack of Opportunity window (C23): an ally, the mover
    Disengaged earlier this turn, or it could not react (:func:`_cannot_react`); a move that leaves no reach says
    so. Derived from the state before the declaration (the engine records only the windows it opens)."""
    first, state = events[0]
    decl = first.event
    assert isinstance(decl, MovementDeclared)
    if not decl.leaves:
        return [f"no Attack of Opportunity window: {decl.who} leaves no one's reach (C23)"]
    asked = {w for rec, _ in events if isinstance(rec.event, ReactionWindowOpened)
             and rec.event.reaction == "attack_of_opportunity" for w in rec.event.responders}
    cost = state.ruleset.reaction_costs.attack_of_opportunity if state.ruleset is not None else 1
    side = state.combatants[decl.who].side
    derived = _DERIVED.format(seq=first.seq)
    said = []
    for who in decl.leaves:
        if who in asked:
            continue
        if state.combatants[who].side == side:
            why: str | None = f"{who} is {decl.who}'s ally: an Attack of Opportunity is an enemy's (C23)"
        elif state.disengaged:
            why = f"{decl.who} Disengaged earlier this turn, which suppresses these windows (C23)"
        else:
            why = _cannot_react(state, who, cost, "an Attack of Opportunity", defensive=False)
        if why is not None:
            said.append(f"no Attack of Opportunity window for {who} ({derived}): {why}")
    return said


def moment_words(decl: MomentReached) -> str:
    """A moment abilities answer in words (:func:`omen_core.hooks.moment_said`), its combatants by id."""
    return moment_said(decl.moment, decl.round, decl.who or "", decl.other, decl.outcome, decl.condition)


#: A reaction in words, and its rule: a window's (C23, C24) or a triggered ability's attack (C38, docs/abilities.md).
_REACTIONS = {"interrupt": ("an Interrupt", "C24"), "attack_of_opportunity": ("an Attack of Opportunity", "C23"),
              "ability": ("an ability's attack", "C38")}


_NO_TITLES: Mapping[str, tuple[str, str]] = MappingProxyType({})


def _decision_titles(events: Iterable[tuple[StoredEvent, FightState]]) -> dict[str, tuple[str, str]]:
    """The title each decision point of an action was asked under and the rule it cites (its ``decision_opened``:
    an ability's ``rule``, C37 by default, as the narration and refusals cite it), by decision id."""
    return {rec.event.decision: (rec.event.title, rec.event.rule) for rec, _state in events
            if isinstance(rec.event, DecisionOpened)}


def _also_told(event: Event, own: tuple[str, tuple[str, ...]] | None = None, seq: int = 0,
               titles: Mapping[str, tuple[str, str]] = _NO_TITLES, state: FightState | None = None) -> str | None:
    """What an answer or an effect within an action did, in words: a decision answered (C38: named by its id and,
    from ``titles``, :func:`_decision_titles`, the title it was asked under), a cost paid (C20,
    C22, C41; but ``own``'s, an action's own Action or Movement, which its title says), a condition applied or
    cleared (C28), a reaction window and who answered it (C23, C24: the reaction, at ``seq``, is an action of its
    own), the action cancelled (C24). None for any other event."""
    match event:
        case ReactionWindowOpened(reaction=reaction, responders=responders):
            return f"{_REACTIONS[reaction][0]} window for {', '.join(responders)} ({_REACTIONS[reaction][1]})"
        case AttackDeclared(attacker=attacker, target=target, reaction=reaction) if reaction is not None:
            return (f"{attacker} answers with {_REACTIONS[reaction][0]} on {target}, the action declared at seq "
                    f"{seq} (explain it there)")
        case ReactionPassed(who=who):
            return f"{who} lets the window pass"
        case ActionCancelled(action=action, reason=reason):
            return f"CANCELLED: {reason}; what it paid stays paid (C24)" + _dropped(state, action)
        case DecisionAnswered(who=who, decision=decision, choice=choice):
            title, rule = titles.get(decision, ("", "C38"))
            owed = _owed(state, who, decision) if state is not None and choice != PASS else ""
            return (f"{who} answers {decision}: {choice} ({title + ', ' if title and title != decision else ''}{rule})"
                    + (f"; {owed}" if owed else ""))
        case CostPaid(who=who, resource=resource, amount=amount, purpose=purpose):
            if own is not None and who == own[0] and resource in own[1]:
                return None
            return f"{who} pays {amount_of(resource, amount)} for {_paid_for(purpose, resource)}"
        case ActiveDefenseWindowSkipped(defender=defender, reason=reason):
            return f"no Active Defense window for {defender} (C8): {reason}"
        case ActiveDefenseWindowOpened(defender=defender, eligible=eligible):
            may = f"{', '.join(eligible[:-1])} or {eligible[-1]}" if len(eligible) > 1 else "".join(eligible)
            return f"an Active Defense window for {defender} (C8): " + (f"may {may} or decline" if eligible else
                                                                         "may only decline")
        case ActiveDefenseDeclined(defender=defender):
            return f"{defender} declines the Active Defense (C8)"
        case ConditionApplied(who=who, condition=condition, stacks=stacks, until=until, of=of):
            lasts = (f", until the {'start' if until == 'start_of_next_turn' else 'end'} of {of}'s next turn (C40)"
                     if until is not None and of is not None else "")
            return f"{who} is {condition} ({stacks} stack{'s' if stacks != 1 else ''}, C28){lasts}"
        case ConditionCleared(who=who, condition=condition, reason=reason):
            return f"{who} is no longer {condition} ({reason})"
    return None


def _dropped(state: FightState | None, action: int) -> str:
    """The deferred cost an action cancelled had recorded (its ability's), dropped with it, in words: a cancelled
    ability's costs but its Action are not paid (C24), and its deferred cost never settles (C41); empty if none."""
    if state is None:
        return ""
    owed = [(p.who, a.deferred) for p in state.deferred if p.action == action
            for a in state.abilities if a.id == p.ability and a.deferred is not None]
    return "".join(f"; its deferred cost is dropped with it, never to settle: {deferred_words(deferred, who)}"
                   for who, deferred in owed)


def _owed(state: FightState, who: str, ability_id: str) -> str:
    """The deferred cost ``who``'s use of the ability ``ability_id`` records (C41: recorded when the ability is
    used, it settles at its moment), in words; empty if it has none."""
    ability = next((a for a in state.abilities if a.id == ability_id), None)
    if ability is None or ability.deferred is None:
        return ""
    return f"its deferred cost is recorded, to settle later: {deferred_words(ability.deferred, who)}"


#: What a cost the engine records was paid for (:class:`omen_core.events.CostPaid`'s ``purpose``) in words, and the
#: rule that sets it; any other purpose (an ability's name, a decision's title) is said as recorded, under C37 (what
#: an ability costs) and the rule of the resource paid (:data:`_LEDGER`).
_PURPOSES = {"Catch": ("the Catch", "C22"), "interrupt": ("the Interrupt", "C22, C24"),
             "attack of opportunity": ("the Attack of Opportunity", "C22, C23"), "attack": ("the attack", "C20"),
             "movement": ("the movement", "C20")}


#: The rule that says what a turn holds of each resource a cost may take (C20: an Action, a Movement Action, Bonus
#: Actions); HP and Will are C3's, and an ability's cost of them C37's alone (HP never down to 0, C36).
_LEDGER = {"action": "C20, ", "movement_action": "C20, ", "bonus_action": "C20, ", "hp": "C36, ", "will": ""}


def _paid_for(purpose: str, resource: str = "") -> str:
    """What a cost paid for, in words, with its rule: ``the Active Defense (dodge) (C8, C22)``, ``the Catch
    (C22)``, ``Second Try (use) (C37)`` (an ability's Will), ``Healing Word (C20, C37)`` (its Bonus Action)."""
    if purpose in _PURPOSES:
        said, rule = _PURPOSES[purpose]
        return f"{said} ({rule})"
    if purpose.startswith("Active Defense"):
        return f"the {purpose} (C8, C22)"
    return f"{purpose} ({_LEDGER.get(resource, '')}C37)"


def _ability(known: Derivations, events: list[tuple[StoredEvent, FightState]]) -> Explanation:
    """An ability used on its owner's turn (C37), or a moment of the round abilities answered (C38): what each
    answer chose, what it cost, its dice, and what each effect did, in order."""
    first = events[0][0]
    decl = first.event
    assert isinstance(decl, (AbilityUsed, MomentReached))
    status, seed = known.seed.status()
    titles = _decision_titles(events)
    if isinstance(decl, MomentReached):
        said = f"{moment_words(decl)}, a moment abilities answer (C38), recorded at seq {first.seq}"
    else:
        on = "" if decl.target == decl.who else f" on {decl.target}"
        said = f"{decl.who} uses {decl.name}{on} (C37), the action declared at seq {first.seq}"
    title = _title(known, first.seq, said)
    verdicts: list[str] = []
    parts: list[Part] = []
    healing = _Healing()
    passed = _not_offered(events, known.told)
    for rec, state in events:
        verdicts += passed.get(rec.seq, [])
        if (healed := healing.see(rec, state)) is not None:
            parts.append(healed)
        match rec.event:
            case DamageResolved() | ResourceChanged():
                verdicts += _landed(rec.event, state)
            case AbilityUsed(who=who, ability=ability, name=name) if rec is first and (
                    owed := _owed(state, who, ability)):
                verdicts.append(f"{who} uses {name}: {owed}")
            case _:
                if (also := _also_told(rec.event, seq=rec.seq, titles=titles, state=state)) is not None:
                    verdicts.append(also)
        verdicts += healing.said()
    left, healed_words = healing.finish()
    parts += left
    verdicts += healed_words
    return Explanation(seq=first.seq, kind="ability", title=title, dice=_dice((r for r, _ in events), seed),
                       parts=tuple(parts), verdicts=tuple(verdicts), seed=status, undone=first.seq in known.voided)


def _ability_hooks(decl: AbilityUsed | MomentReached, events: list[tuple[StoredEvent, FightState]]) -> tuple[str, ...]:
    """The hook points an ability used on one's turn reached (its save resolved, a condition it applied), or the
    moment of the round answered (C38): where :func:`_not_offered` looks for the owners passed over."""
    if isinstance(decl, MomentReached):
        return (decl.moment,)
    saved = any(isinstance(rec.event, SaveResolved) for rec, _ in events)
    return ("save.resolved", "condition.applied") if saved else ("condition.applied",)


def _landed(event: DamageResolved | ResourceChanged, state: FightState) -> list[str]:
    """What an ability's effect did, in words: the damage it dealt (C13) or the resource it moved."""
    if isinstance(event, DamageResolved):
        return [f"{event.target} takes {event.final} {event.damage_type} (raw {event.terms.raw}, C13)",
                *_unmoved(event, state, "{who}'s HP 0 -> 0")]
    return [f"{event.who}'s {event.resource.upper()} {event.before} -> {event.after}"]


class _Healing:
    """The heals of the abilities an action uses or answers with (C37, C38), each matched, as the events come, to
    its healing roll or, for a flat amount alone, to the HP it restores: its amount as a part, and what it restored
    to whom (its own recipient, ``to``: the owner or the target, not the ability's target as such), a heal that
    restored nothing included (C36: never above the sheet's HP, so no HP change is recorded)."""

    def __init__(self) -> None:
        self.heals: list[_AHeal] = []  # the heals of the ability used or answered with, not yet met
        self.waiting: tuple[str, int, str | None] | None = None  # a heal just rolled: (part name, amount, to whom)
        self.told: list[str] = []  # what the last events showed of a heal, to say as verdicts

    def said(self) -> list[str]:
        """What the heals have restored since last asked, as verdicts."""
        told, self.told = self.told, []
        return told

    def see(self, rec: StoredEvent, state: FightState) -> Part | None:
        """The part of a heal this event shows the amount of, if it does. A heal rolled restores HP in the event
        right after its roll, or none."""
        event = rec.event
        if self.waiting is not None:
            name, amount, whom = self.waiting
            self.waiting = None
            if isinstance(event, ResourceChanged) and event.resource == "hp" and event.after > event.before:
                self.told.append(_restored(name, amount, event.after - event.before, event.who, event.after))
                return None
            self.told.append(_restored(name, amount, 0, whom, None))
        match event:
            case AbilityUsed(who=who, ability=ability, target=target):
                self.heals = _heals(state, who, ability, target)
            case DecisionAnswered(who=who, decision=ability, choice=choice) if choice == USE:
                frame, written = state.pending, _written(state, who, ability)
                answered = answer_target(state, written, frame, who) if frame is not None and written else None
                self.heals = _heals(state, who, ability, answered)
            case SaveResolved(success=success):  # the branch not taken heals no one
                self.heals = [h for h in self.heals if h.branch != ("on_failure" if success else "on_success")]
            case DiceRolled(purpose="healing", dice=dice) if dice:
                found = next((h for h in self.heals if h.effect.dice is not None
                              and (h.effect.dice.count, h.effect.dice.sides) == (len(dice), dice[0].sides)), None)
                if found is None:
                    self.waiting = ("the healing rolled", sum(d.face for d in dice), None)
                    return None
                self.heals.remove(found)
                part = _heal_part((found.name, found.effect), dice)
                self.waiting = (part.name, part.total, found.whom)
                return part
            case ResourceChanged(resource="hp", who=who, before=was, after=now) if now > was:
                found = next((h for h in self.heals if h.effect.dice is None and h.whom in (None, who)), None)
                if found is not None:  # a heal of a flat amount alone rolls nothing
                    self.heals.remove(found)
                    part = _heal_part((found.name, found.effect), ())
                    self.told.append(_restored(part.name, part.total, now - was, who, now))
                    return part
        return None

    def finish(self) -> tuple[list[Part], list[str]]:
        """At the action's end: what the heals restored since last asked, and each heal of a flat amount alone
        that restored nothing (its recipient at the sheet's HP: no event records it), its part and its verdict."""
        if self.waiting is not None:
            name, amount, whom = self.waiting
            self.waiting = None
            self.told.append(_restored(name, amount, 0, whom, None))
        parts = [_heal_part((h.name, h.effect), ()) for h in self.heals if h.effect.dice is None]
        self.told += [_restored(p.name, p.total, 0, h.whom, None)
                      for p, h in zip(parts, [h for h in self.heals if h.effect.dice is None], strict=True)]
        self.heals = []
        return parts, self.said()


class _AHeal(msgspec.Struct, frozen=True):
    """A heal an ability writes: the ability's name, the effect, whom it heals (None if not known here) and the
    save's branch it is written in (None: the ability's own effects)."""

    name: str
    effect: Heal
    whom: str | None
    branch: str | None


def _restored(name: str, amount: int, restored: int, whom: str | None, now: int | None) -> str:
    """What a heal of ``amount`` restored to ``whom`` (C36, C37): all of it, part of it (``now``: its HP after,
    the sheet's), or nothing, its recipient at the sheet's HP already."""
    who = whom if whom is not None else "the one it heals"
    if restored == 0:
        return f"{name} ({amount}) restores 0 HP: {who} is at its sheet's HP already (healing never goes above it)"
    if restored < amount:
        return f"{name} ({amount}) restores {restored} HP of it to {who}: healing never goes above the sheet's HP " \
               f"({now})"
    return f"{name} ({amount}) restores {restored} HP to {who}"


def _written(state: FightState, who: str, ability_id: str) -> Ability | None:
    """``who``'s ability ``ability_id`` as its sheet writes it; None if it writes no such ability."""
    fighter = state.combatants.get(who)
    return next((a for a in fighter.sheet.written_abilities() if a.id == ability_id), None) \
        if fighter is not None else None


def _heals(state: FightState, who: str, ability_id: str, target: str | None) -> list[_AHeal]:
    """The heals ``who``'s ability ``ability_id`` writes (its effects and the branches of its save), in written
    order, each with the ability's name and whom it heals: ``to = "actor"`` the owner, ``"target"`` ``target``
    (a save's saver, the other party of a moment answered, C15, C38); none if its sheet writes no such ability."""
    ability = _written(state, who, ability_id)
    if ability is None:
        return []
    found: list[_AHeal] = []

    def visit(value: object, branch: str | None) -> None:
        if isinstance(value, Heal):
            found.append(_AHeal(ability.name, value, who if value.to == "actor" else target, branch))
        elif isinstance(value, tuple):
            for item in value:
                visit(item, branch)
        elif isinstance(value, msgspec.Struct):
            for field in value.__struct_fields__:
                visit(getattr(value, field), field if field in ("on_success", "on_failure") else branch)

    visit(ability.effects, None)
    return found


def _heal_part(heal: tuple[str, Heal], dice: Sequence[Die]) -> Part:
    """A heal's amount as the terms that add up to it: its dice and its flat amount (C37); the HP it restores is
    that amount, never above the sheet's HP."""
    name, effect = heal
    terms = [Term(f"heal {len(dice)}d{dice[0].sides}", sum(d.face for d in dice),
                  " + ".join(str(d.face) for d in dice), "dice")] if dice else []
    if effect.flat or not dice:
        terms.append(Term("flat", effect.flat, f"{name}'s flat amount", f"ability:{name}"))
    return Part(name=f"{name}'s healing", rule="C37", total=sum(t.value for t in terms), terms=tuple(terms))


def _single(known: Derivations, rec: StoredEvent, state: FightState,
            followers: Sequence[StoredEvent] = ()) -> Explanation:
    """A roll, a check or anything else: its dice and, for results, the roll primitive of each side; a damage
    outside any action (a condition's tick, C40; a deferred cost settling, C41) with what it moved
    (``followers``)."""
    status, seed = known.seed.status()
    rolls = {counter: r.seq for counter, r in known.batch_rolls.items()}
    event: Event = rec.event
    parts: list[Part] = []
    verdicts: list[str] = []
    recs = [rec]
    match event:
        case StaticCheckResolved(check=side):
            parts.append(_side_part(f"{side.roller}'s check", side, state, "C1, C2", rolls))
            verdicts.append(f"{event.outcome} against difficulty {event.difficulty} (C16: a tie is a tie)")
            recs = _rolls(known, [side])
        case ContestResolved(initiator=ini, defender=dfd):
            parts += [_side_part(f"{ini.roller} (initiator)", ini, state, "C16", rolls),
                      _side_part(f"{dfd.roller} (defender)", dfd, state, "C16", rolls)]
            verdicts.append(f"{event.winner} wins (C16: the initiator must be strictly higher)")
            recs = _rolls(known, [ini, dfd])
        case SurpriseDetermined(perception=side):
            parts.append(_side_part(f"{side.roller}'s Perception", side, state, "C18", rolls))
            verdicts.append(_surprise_said(event.tier, side.total, event.difficulty))
            recs = _rolls(known, [side])
        case AmbushDifficultySet(stealth=sides, time_waited=waited) if sides:
            parts += [_side_part(f"{side.roller}'s Stealth", side, state, "C17", rolls) for side in sides]
            if waited in DIFFICULTY_RULES:
                label, plus, words = DIFFICULTY_RULES[waited]
                totals = [s.total for s in sides]
                base = ambush_difficulty(totals, waited) - plus  # from the rolls: the roll the band takes (C17:
                # lowest, average, highest), recomputed, so a recorded difficulty that differs shows
                minutes = known.ambush.minutes if known.ambush is not None else None
                parts.append(Part(name="Ambush Difficulty", rule="C17", total=event.difficulty,
                                  terms=(Term(label, base, _stealth_taken(waited, totals)),
                                         Term(f"time waited: {words}", plus, _band_said(words, minutes)))))
            verdicts.append(f"Ambush Difficulty {event.difficulty} (C17)")
            recs = _rolls(known, list(sides))
        case AmbushDifficultySet():
            verdicts.append(f"Ambush Difficulty {event.difficulty}, set by the GM (C17)")
        case InitiativeRolled(check=side):
            parts.append(_side_part(f"{side.roller}'s initiative", side, state, "C19", rolls))
            recs = _rolls(known, [side])
        case InitiativeRollOff(group=group, rolls=sides):
            parts += [_side_part(f"{side.roller}'s roll-off", side, state, "C19, C32", rolls) for side in sides]
            verdicts.append(_roll_off_said(group, sides))
            recs = _rolls(known, list(sides))
        case InitiativeTied() | InitiativeAgreed() | InitiativeOrderSet():
            recs, parts, verdicts = _initiative_order(known, rec, state)
        case SaveResolved(saver=saver, opposing=opp):  # a condition's save at its timing (save ends, C40)
            parts += [_side_part(f"{saver.roller}'s save against {event.effect}", saver, state, "C15, C40", rolls),
                      _side_part(f"{opp.roller}'s opposing roll (who applied {event.effect})", opp, state, "C15",
                                 rolls)]
            verdicts.append(f"{'saved: ' + event.effect + ' ends' if event.success else 'failed'}: {saver.total} "
                            f"{'>=' if event.success else '<'} {opp.total} (C15: the saver wins ties; C40)")
            recs = _rolls(known, [saver, opp])
        case DamageResolved():  # a condition's damage as it ticks (C25, C40), or a deferred cost's as it settles (C41)
            recs = [r for r in known.batch_rolls.values() if r.seq == rec.seq - 1]
            parts += _damage_parts(event, consequence=True, stacks=_per_stack(state, event, recs),
                                   incoming=state.combatants[event.target].sheet.incoming_damage)
            owed = event.source.removesuffix(DEFERRED_SOURCE)
            verdicts.append(f"{event.final} {event.damage_type} damage to {event.target} from "
                            + (f"{owed}'s deferred cost as it settles (C41)" if owed != event.source
                               else f"{event.source} as it ticks (C25, C40)"))
            verdicts += _unmoved(event, state, "{who}: HP 0 -> 0")
            verdicts += [said for r in followers if (said := _moved(r.event) if isinstance(r.event, ResourceChanged)
                                                     else _also_told(r.event)) is not None]
        case ResourceChanged():  # outside any action: what a damage just before it moved (C40, C41)
            verdicts.append(_moved(event) + _moved_by(known.previous if known.latest is rec else None, event))
        case TurnSkipped(who=who, reason=reason):
            verdicts.append(f"{who} loses the turn: {reason}")
        case TurnEnded(who=who) if who in state.combatants:
            why = known.batch.ended_by_itself(event, state.combatants[who].dying)
            verdicts.append(f"{who}'s turn ends by itself: {why}" if why is not None else
                            f"{who} ends the turn (end_turn, the command at seq {rec.batch})"
                            if isinstance(known.batch.command, EndTurn) and known.batch.command.who == who else
                            f"{who}'s turn ends")
        case CommandIssued():
            verdicts.append(_command_told(event, rec))
        case FightEnded():
            verdicts += _fight_ended(event, state, rec, known.batch.command)
        case Undone(from_seq=first, to_seq=last, reason=reason):
            verdicts.append(f"undoes seq {first} to {last}" + (f": {reason}" if reason else " (no reason given)")
                            + "; those events stay in the log, and every projection skips them (docs/rulings.md)")
        case Redone(undo_seq=undo, reason=reason):
            verdicts.append(f"takes back the undo at seq {undo}: the events it undid count again"
                            + (f" ({reason})" if reason else ""))
        case ConditionTicked(who=who, condition=name, remaining=left):
            rule = state.ruleset.conditions.get(name) if state.ruleset is not None else None
            when = f", at {rule.tick.replace('_', ' ')}" if rule is not None else ""
            of = f" of its {rule.duration}" if rule is not None and rule.duration else ""
            verdicts.append(f"{who}'s {name} ticks{when} (C25, C40): {left} tick{'s' if left != 1 else ''}{of} left"
                            + ("; it ends now (a condition_cleared follows)" if left == 0 else ""))
        case BonusActionsRefilled(who=who, before=had, after=now):
            when = ("at the start of its turn" if state.turn == who else  # else: as the story says it (narrate)
                    "as the rounds begin (C20: everyone begins them with full Bonus Actions)"
                    if state.round <= 1 and state.turn is None and not state.turns_taken else
                    "when its skipped turn would have come (C21)")  # it said "at the start of its turn": a reviewer
            verdicts.append(f"{who}'s Bonus Actions refilled {when}: {had} -> {now} (C20: they do not accumulate, "
                            "C21)")
        case SeedRevealed():
            verdicts.append("the GM reveals the seed: every seeded die drawn under its commitment can be checked "
                            "against it (omen verify); a revealed seed is spent, and no undo reaches back past it "
                            "(C42)")
        case SeedCommitted():
            verdicts.append("the fight goes on with a fresh seed, committed to here (its sha256 is this event's "
                            "commitment): the seeded dice after it are drawn from that one (C42)")
        case ConditionApplied() | ConditionCleared():  # the GM's, a tick's, a deferred cost's (C41)
            told = _also_told(event, seq=rec.seq)
            reason = applied_reason(event, str) if isinstance(event, ConditionApplied) else ""
            if told is not None:
                verdicts.append(told + (f": {reason}" if reason else ""))
    said = (f"{event.source}: {event.damage_type} damage to {event.target} outside any action, at seq {rec.seq}"
            if isinstance(event, DamageResolved) and event.action is None  # a tick's, a deferred cost's (it was
            else f"{type(event).__struct_config__.tag} at seq {rec.seq}")   # headed "damage_resolved": a tester)
    title = _title(known, rec.seq, said)
    return Explanation(seq=rec.seq, kind=str(type(event).__struct_config__.tag), title=title,
                       dice=_dice(recs, seed), parts=tuple(parts), verdicts=tuple(verdicts), seed=status,
                       undone=rec.seq in known.voided)


def _fight_ended(event: FightEnded, state: FightState, rec: StoredEvent, command: object) -> list[str]:
    """Why the fight ended (C33): the GM's end (``end_fight``, with its reason and side), or a side found down
    after a command, each of its combatants as it stands (at 0 HP and Dying, dead, fled or yielded) and who is
    still standing."""
    gm = isinstance(command, EndFight)
    said = {"gm": "the GM ends the fight (C33: at any time)",
            "yielded": f"{event.side} yielded (C33)", "fled": f"{event.side} fled (C33)",
            "defeated": f"{event.side} is defeated (C33)"}[event.reason]
    told = [said + (f": the GM's end_fight, the command at seq {rec.batch}" if gm else
                    f": found after the command at seq {rec.batch}, every combatant of the side down (at 0 HP and "
                    "Dying, dead, fled or yielded; Incapacitated and Paralysed are not down)")]
    if event.note and gm:
        told.append(f"the GM's note: {event.note}")
    for side in sorted({f.side for f in state.combatants.values()}, key=lambda s: s != event.side):
        members = [f for f in state.combatants.values() if f.side == side]
        told.append(f"{side}: " + "; ".join(f"{f.id} {_standing(f)}" for f in members))
    return told


def _standing(fighter: CombatantState) -> str:
    """A combatant as the fight ends (C33): out (dead, fled, yielded), at 0 HP (Dying), or standing with its HP."""
    if fighter.left is not None:
        return f"{fighter.left} (out of the fight)"
    if fighter.hp == 0:
        return "at 0 HP, Dying (down)"
    return f"standing, HP {fighter.hp}/{fighter.sheet.hp}"


def _per_stack(state: FightState, event: DamageResolved, recs: Sequence[StoredEvent]) -> tuple[str, str]:
    """What a condition's tick took once per stack (C40: ``per_stack``), said after its dice and after its flat
    amount: ``: 2d6 for each of 3 stacks (6d6, C40)``; empty for a damage that is not such a tick (or whose roll
    does not hold that many dice)."""
    defined = state.ruleset.conditions.get(event.source) if state.ruleset is not None else None
    damage = defined.damage if defined is not None else None
    target = state.combatants.get(event.target)
    if damage is None or not damage.per_stack or target is None:
        return "", ""
    stacks = target.conditions.get(event.source, 0)
    each = f"for each of {stacks} stack{'' if stacks == 1 else 's'}"
    rolled = sum(len(r.event.dice) for r in recs if isinstance(r.event, DiceRolled))
    dice = (f": {damage.dice.count}{damage.dice.die} {each} ({damage.dice.count * stacks}{damage.dice.die}, C40)"
            if damage.dice is not None and rolled == damage.dice.count * stacks else "")
    flat = f": {damage.flat} {each} (C40)" if damage.flat and event.terms.modifiers and \
        event.terms.modifiers[0].value == damage.flat * stacks else ""
    return dice, flat


def _moved(event: ResourceChanged) -> str:
    """A resource moved, in words: ``cy: HP 10 -> 0``."""
    return f"{event.who}: {event.resource.upper()} {event.before} -> {event.after}"


def _moved_by(previous: StoredEvent | None, event: ResourceChanged) -> str:
    """What moved a resource outside any action, if the event before it says (a damage to the same combatant): its
    amount, source and seq, to explain there; else nothing."""
    if previous is None or not isinstance(previous.event, DamageResolved) or previous.event.target != event.who:
        return ""
    damage = previous.event
    owed = damage.source.removesuffix(DEFERRED_SOURCE)
    source = f"{owed}'s deferred cost, C41" if owed != damage.source else f"{damage.source}, C40"
    return f" (the {damage.final} {damage.damage_type} damage at seq {previous.seq}, from {source}; explain it there)"


def command_said(event: CommandIssued) -> str:
    """A command as given, in one line: its name, its fields but its faces (as JSON), how many faces it carried, by
    whom, and who typed its faces.

    >>> from omen_core.commands import EndTurn
    >>> command_said(CommandIssued(command=EndTurn(who="kael", dice=(3,)), by="gm"))
    'end_turn {"who":"kael"} with 1 face, given by gm'
    """
    given = {k: v for k, v in msgspec.to_builtins(event.command).items() if k not in ("command", "dice")}
    faces = len(event.command.dice or ())
    return (f"{type(event.command).__struct_config__.tag}"
            + (f" {msgspec.json.encode(given).decode()}" if given else "")
            + (f" with {faces} face{'' if faces == 1 else 's'}" if faces else "")
            + (f", given by {event.by}" if event.by else "")
            + (f"; its faces typed by {', then '.join(f'{r.by} ({r.faces})' for r in event.faces_by)}"
               if event.faces_by else ""))


def _conversion_idle(state: FightState, who: str, damage_type: str) -> str:
    """Why physical damage on ``who``'s HP was not converted to Will, where ``who`` holds a Will conversion (C31: its
    sheet's feature, or an ability's) and is helpless when it lands: `` (its Will conversion gives nothing while
    Paralysed: ...)``, naming the ruling (a rules lawyer read the damage on HP, nothing said); "" otherwise."""
    fighter = state.combatants.get(who)
    if fighter is None or state.ruleset is None or damage_type not in state.ruleset.damage_types.physical:
        return ""
    sheet = fighter.sheet  # a feature flag is the shorthand of a shipped ability (C37): read as that ability
    shipped = [SHIPPED_ABILITIES.get(a) for a in sheet.listed_by_id()]
    holds = any(isinstance(effect, ConvertToWill) for ability in (*sheet.written_abilities(),
                                                                  *sheet.shorthand_abilities(), *shipped)
                if ability is not None for effect in ability.effects)
    if not holds or not (fighter.helpless or fighter.down):
        return ""
    which = ("at 0 HP, Dying (C36)" if fighter.hp == 0 or fighter.dying else
             next((f"{c} (C10)" for c in ("Paralysed", "Incapacitated") if fighter.has(c)), "helpless (C10)"))
    return (f" (its Will conversion gives nothing while {which}: docs/rulings.md, \"Will conversion needs an owner "
            "able to act\")")


def _command_told(event: CommandIssued, rec: StoredEvent) -> str:
    """What a command at the head of its batch is: the command as given, by whom, how many faces it carried, and
    the seqs it wrote (their explanations are its rolls and results).

    >>> from omen_core.commands import EndTurn
    >>> rec = StoredEvent(fight_id="f", seq=5, batch=5, batch_size=3, recorded_at=0, schema_version=5,
    ...                   prev_hash="", hash="", event=CommandIssued(command=EndTurn(who="kael"), by="gm"))
    >>> _command_told(rec.event, rec)
    'the command end_turn {"who":"kael"}, given by gm: it wrote seqs 6 to 7 (explain each for its rolls and results)'
    """
    said = "the command " + command_said(event)
    last = rec.batch + rec.batch_size - 1
    wrote = (f"seq {last}" if last == rec.seq + 1 else f"seqs {rec.seq + 1} to {last}") if last > rec.seq else \
        "nothing else"
    return f"{said}: it wrote {wrote} (explain each for its rolls and results)"


def _rolls(known: Derivations, sides: list[RollTotal]) -> list[StoredEvent]:
    wanted = {s.counter for s in sides}
    return [r for counter, r in known.batch_rolls.items() if counter in wanted]


def _initiative_order(known: Derivations, rec: StoredEvent, state: FightState
                      ) -> tuple[list[StoredEvent], list[Part], list[str]]:
    """How the initiative order came to be, up to ``rec`` (C19): each combatant's roll, each tie and how it was
    settled (the AGI bonus as the engine compared it, after conditions, C28; then a roll-off, C32, or the allies'
    agreed order), and the order. From the initiative's events the walk has seen, as they stood at ``rec`` (those
    an undo had taken back by then left out)."""
    gone = known.landmarks.upto(rec.seq).voided()
    live = [(r, s) for r, s in known.initiative if r.seq <= rec.seq and r.seq not in gone]
    rolls = _roll_seqs(r for r, _ in live)
    rolled = [(r.event, s) for r, s in live if isinstance(r.event, InitiativeRolled)]
    parts = [_side_part(f"{e.who}'s initiative", e.check, s, "C19", rolls) for e, s in rolled]
    compared = rolled[-1][1] if rolled else state  # the order is ranked as the last roll comes in (conditions then)
    totals = {e.who: e.check.total for e, _ in rolled}
    verdicts = [_agi_compared(compared, [w for w in totals if totals[w] == total], total)
                for total in sorted(set(totals.values()), reverse=True)
                if sum(1 for w in totals if totals[w] == total) > 1]
    for r, s in live:
        match r.event:
            case InitiativeTied(group=group, allies=allies):
                verdicts.append(f"{_listed(group)} still tie: " + (
                    "allies, they may agree an order or roll off (C19)" if allies
                    else "they roll off, an AGI check each, until the tie breaks (C19, C32)"))
            case InitiativeRollOff(group=group, rolls=sides):
                parts += [_side_part(f"{side.roller}'s roll-off", side, s, "C19, C32", rolls) for side in sides]
                verdicts.append(_roll_off_said(group, sides))
            case InitiativeAgreed(order=order):
                verdicts.append(f"the allies agree the order {', '.join(order)} (C19: allies may agree instead of "
                                "rolling off)")
    if isinstance(rec.event, InitiativeOrderSet):
        verdicts.append(f"initiative order: {', '.join(rec.event.order)} (C19: the highest total first)")
    else:  # on the way to it: the order so far, those still tied joined by "="
        agreed = rec.event.order if isinstance(rec.event, InitiativeAgreed) else ()
        groups: list[tuple[str, ...]] = []
        for g in state.ranking:  # the state before an agreement: the agreed order breaks its group
            groups += [(w,) for w in agreed] if agreed and set(g) == set(agreed) else [g]
        said = ", ".join(" = ".join(g) for g in groups)
        verdicts.append(f"initiative order so far: {said} (C19: the highest total first; '=': still tied)")
    return [r for r, _ in live if isinstance(r.event, DiceRolled)], parts, verdicts


def _roll_off_said(group: Sequence[str], sides: Sequence[RollTotal]) -> str:
    """A roll-off's outcome (C19, C32): who goes first, or who ties again and rolls again; said where the roll-off
    is explained, and again where the order it leads to is."""
    said = ", ".join(f"{side.roller} {side.total}" for side in sides)
    top = max(side.total for side in sides)
    first = [side.roller for side in sides if side.total == top]
    return f"roll-off between {_listed(group)}: {said}: " + (
        f"{first[0]} first (C19, C32)" if len(first) == 1 else f"{_listed(first)} tie again and roll again (C32)")


def _stealth_taken(waited: str, totals: Sequence[int]) -> str:
    """How C17's band takes the ambushers' Stealth totals, worked: ``(9 + 4) / 2 = 6.5, rounded down``.

    >>> _stealth_taken("one_to_two_minutes", [9, 4]), _stealth_taken("under_a_minute", [9, 4])
    ('(9 + 4) / 2 = 6.5, rounded down: 6', 'the lowest of 9, 4')
    """
    listed = ", ".join(map(str, totals))
    if waited == "under_a_minute":
        return f"the lowest of {listed}"
    if waited == "three_minutes_or_more":
        return f"the highest of {listed}"
    if len(totals) == 1:
        return f"{totals[0]}, the one roll"
    mean = sum(totals) / len(totals)
    return (f"({' + '.join(map(str, totals))}) / {len(totals)} = {mean:g}"
            + (f", rounded down: {sum(totals) // len(totals)}" if mean != int(mean) else ""))


def _band_said(words: str, minutes: float | None) -> str:
    """The time-waited band as C17's table gives it, and the minutes that put it there (C30), where given.

    >>> _band_said("1 to 2 minutes", 2.5)
    "2.5 minutes: 1 to 2 minutes (C30: from 1 up to, not including, 3); C17's table"
    """
    bounds = {"under a minute": "under 1", "1 to 2 minutes": "from 1 up to, not including, 3",
              "3 minutes or more": "3 or more"}
    return (f"{minutes:g} minutes: {words} (C30: {bounds[words]}); C17's table" if minutes is not None
            else "C17's table")


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def _agi_compared(state: FightState, tied: list[str], total: int) -> str:
    """A tie on ``total`` settled, as far as it goes, by the AGI bonus (C19): each one's effective bonus (the
    sheet's, and what conditions changed of it, C28), and who goes first; those it leaves tied, said so."""
    bonus = {w: effective_bonus(state, w, "AGI") for w in tied}

    def said(who: str) -> str:
        source = bonus_source(state, who, "AGI")
        changed = (f" (sheet {source.sheet:+d}, {source.held_words()} {source.conditions:+d}, C28)"
                   if source.conditions else "")
        return f"{who} {bonus[who]:+d}{changed}"

    ranked = sorted(tied, key=lambda w: -bonus[w])
    groups = [[w for w in ranked if bonus[w] == b] for b in sorted(set(bonus.values()), reverse=True)]
    outcome = " before ".join(" = ".join(g) for g in groups) if len(groups) > 1 else "the same, so the tie stands"
    still = [g for g in groups if len(g) > 1] if len(groups) > 1 else []
    rest = "".join(f"; {_listed(g)} still tie on the same AGI bonus" for g in still)
    return (f"{_listed(tied)} tie at {total}: the higher AGI bonus goes first (C19; the bonus after conditions, "
            f"C28): {', '.join(said(w) for w in tied)}: {outcome}{rest}")
