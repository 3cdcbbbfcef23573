"""Action cards: a fight's session log as structured data, built by one walk of the events it is given.

The log is a stream of *entries*, in the order of their first event:

- a :class:`Card` per action (an attack, a save, a movement: the declaration
  and every event of the action to its end) and per roll outside an action (a
  check, a contest, a Perception roll against an ambush, an initiative roll, a
  roll-off, the Stealth rolls that set an Ambush Difficulty): each roll as a
  :class:`Roll` (``7 (d8) + 4 (d6) + 2 AGI + 1 weapon = 14``), the defense, hit
  or miss and the crit with the rule that decided a tie, damage with each
  mitigation step, resources and conditions after, every event as the
  narrative tells it, and the full :class:`~omen_replay.explain.Explanation`
  that ``omen explain SEQ`` gives for the card's seq;
- a :class:`RoundSummary` at each round's start (HP, Will, conditions and
  initiative of every combatant);
- a :class:`Note` for any other event (a join, a turn, a draw, an undo...).

Undone actions are cards like any other, marked ``undone``; nothing is left
out. Every entry carries the seq that anchors it (``#seq-N``), so the same
entry has the same anchor in every rendering of the log. :class:`CardBuilder`
is a visitor of the walk (:mod:`omen_core.walk`) that hands each entry to a
sink as soon as it and every entry before it are complete, keeping only the
actions still open; :func:`entries` builds them from an in-memory list of
events, which need not be a whole or sound log (a view with events left out
still gives its cards). The writers of :mod:`omen_replay.render` and the
templates in ``omen_replay/templates`` only decide how entries look.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from typing import Literal

import msgspec

from omen_core.content import IncomingDamage
from omen_core.derive import bonus_source
from omen_core.events import (
    AbilityUsed,
    ActionCancelled,
    ActionSettled,
    AmbushDifficultySet,
    AttackDeclared,
    CombatantJoined,
    ConditionApplied,
    ConditionCleared,
    ContestResolved,
    CostPaid,
    DamageResolved,
    DamageTerms,
    DiceRolled,
    Die,
    Event,
    HitDetermined,
    InitiativeRolled,
    InitiativeRollOff,
    MomentReached,
    Moved,
    MovementDeclared,
    ResourceChanged,
    RollTotal,
    RoundStarted,
    SaveCalled,
    SaveResolved,
    StaticCheckResolved,
    StoredEvent,
    SurpriseDetermined,
    encode_line,
    is_undo_batch,
)
from omen_core.parts import Term
from omen_core.state import FightState, Lasting
from omen_core.walk import LinesSource, Visitor, Walk, walk

from .explain import Derivations, Explanation, owner_of
from .narrate import (
    Line,
    Lowered,
    Narrator,
    applied_reason,
    crit_outcome,
    hp_unmoved,
    incoming_said,
    signed_steps,
    split_primary,
)

__all__ = ["RollTerm", "Roll", "Verdict", "Mitigation", "DamageLine", "ResourceLine", "ConditionLine", "Card",
           "Note", "CombatantRow", "RoundSummary", "Entry", "Series", "Chart", "CardBuilder", "entries",
           "roll_string"]

CardKind = Literal["attack", "save", "movement", "ability", "check", "contest", "surprise", "initiative", "roll_off",
                   "ambush"]


class RollTerm(msgspec.Struct, frozen=True):
    """One number of a roll: a die's face (``die`` its size, ``label`` its pool) or a flat bonus and its name."""

    value: int
    label: str
    die: str = ""


class Roll(msgspec.Struct, frozen=True, kw_only=True):
    """A total and the numbers that make it, in the order the rules add them; the terms add up to the total."""

    name: str
    terms: tuple[RollTerm, ...]
    total: int

    def text(self) -> str:
        """The roll string: ``7 (d8) + 4 (d6) + 2 AGI + 1 weapon = 14``."""
        return roll_string(self.terms, self.total)


def roll_string(terms: Iterable[RollTerm], total: int) -> str:
    """Terms and their total as one line: a die as ``face (dN)``, a bonus as ``value name``.

    >>> roll_string([RollTerm(7, "primary", "d8"), RollTerm(4, "FCS", "d6"), RollTerm(2, "AGI"),
    ...              RollTerm(-1, "slick stones")], 12)
    '7 (d8) + 4 (d6) + 2 AGI - 1 slick stones = 12'
    """
    pieces: list[str] = []
    for term in terms:
        body = f"{abs(term.value)} ({term.die})" if term.die else f"{abs(term.value)} {term.label}"
        sign = "-" if term.value < 0 else "+"
        pieces.append(f"{sign} {body}" if pieces else (f"-{body}" if term.value < 0 else body))
    return f"{' '.join(pieces) or '0'} = {total}"


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """What the numbers decided (``HIT``, ``no crit``, ``SAVED``...), on what numbers, and the rule that decided
    (naming the tie rule when there was a tie)."""

    label: str
    numbers: str
    rule: str = ""


class Mitigation(msgspec.Struct, frozen=True, kw_only=True):
    """One step of C13's mitigation: its change to the damage (as ``omen explain`` signs it) and the damage after."""

    step: str
    change: int
    after: int
    said: str = ""  # the step's arithmetic where it is not a plain subtraction: ``11 x 1/2, rounded down`` (C34)


class DamageLine(msgspec.Struct, frozen=True, kw_only=True):
    """Damage dealt: the raw damage term by term, each mitigation step, and where the final damage lands."""

    source: str
    damage_type: str
    raw: Roll
    steps: tuple[Mitigation, ...]
    final: int
    target: str
    target_name: str
    resource: str
    overflow: int = 0

    def text(self) -> str:
        """``11 piercing - 1 armor = 10 to Brin Hollowmere's HP``."""
        steps = "".join(f" {'-' if s.change < 0 else '+'} {abs(s.change)} {s.step}{f' ({s.said})' if s.said else ''}"
                        for s in self.steps if s.change)
        where = f"{self.target_name}'s {self.resource.upper()}"
        if self.overflow:
            where += f" ({self.final - self.overflow} on Will, {self.overflow} beyond it to HP, C31)"
        return f"{self.raw.total} {self.damage_type}{steps} = {self.final} to {where}"


class ResourceLine(msgspec.Struct, frozen=True, kw_only=True):
    """A combatant's HP or Will after the action, and before it."""

    who: str
    name: str
    resource: str
    before: int
    after: int


class ConditionLine(msgspec.Struct, frozen=True, kw_only=True):
    """A condition the action applied (with its stacks after) or cleared, and why."""

    who: str
    name: str
    condition: str
    applied: bool
    stacks: int = 0
    reason: str = ""


class Card(msgspec.Struct, frozen=True, kw_only=True, tag="card"):
    """One action, or one roll outside an action, from its first event to its last.

    ``seq`` is what ``omen explain SEQ`` explains (an action's declaration; a
    roll's result) and gives the card its anchor; ``first`` and ``last`` are
    its first and last events. ``story`` is every event of the card as the
    narrative tells it. ``settled`` is False for an action the log leaves open
    or an undo cut short (True for a roll). ``explanation`` is None only where the events given
    lack what explaining needs (a view without the combatants' sheets).
    """

    seq: int
    kind: CardKind
    first: int
    last: int
    round: int
    headline: str
    actor: str
    reaction: str = ""
    reacting_to: int | None = None
    reactions: tuple[int, ...] = ()
    costs: tuple[str, ...] = ()
    rolls: tuple[Roll, ...] = ()
    decisions: tuple[str, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    damage: tuple[DamageLine, ...] = ()
    resources: tuple[ResourceLine, ...] = ()
    conditions: tuple[ConditionLine, ...] = ()
    story: tuple[Line, ...] = ()
    undone: bool = False
    settled: bool = True
    explanation: Explanation | None = None

    @property
    def anchor(self) -> str:
        """The card's anchor in a page: ``seq-N``."""
        return f"seq-{self.seq}"

    def anchored_story(self) -> list[tuple[Line, str | None]]:
        """The story's lines, each event's first line with its anchor (``seq-N``; the card's own seq is the
        card's), so every seq of the card can be linked to."""
        seen = {self.seq}
        found: list[tuple[Line, str | None]] = []
        for line in self.story:
            found.append((line, None if line.seq in seen else f"seq-{line.seq}"))
            seen.add(line.seq)
        return found


class Note(msgspec.Struct, frozen=True, kw_only=True, tag="note"):
    """An event outside any action and any roll (a join, a turn, a draw, an undo...), as the narrative tells it."""

    seq: int
    lines: tuple[Line, ...]
    undone: bool = False

    @property
    def anchor(self) -> str:
        """The note's anchor in a page: ``seq-N``."""
        return f"seq-{self.seq}"


class CombatantRow(msgspec.Struct, frozen=True, kw_only=True):
    """A combatant at a round's start: resources, conditions with their stacks, initiative, surprise, out or not."""

    id: str
    name: str
    side: str
    hp: int
    hp_max: int
    will: int
    will_max: int
    conditions: dict[str, int]
    initiative: int | None = None
    surprise: str | None = None
    out: str | None = None
    remaining: dict[str, int] = {}
    until: dict[str, Lasting] = {}


class RoundSummary(msgspec.Struct, frozen=True, kw_only=True, tag="round"):
    """The fight at a round's start: every combatant, in initiative order (those not in the order after)."""

    seq: int
    round: int
    order: tuple[str, ...]
    rows: tuple[CombatantRow, ...]
    undone: bool = False

    @property
    def anchor(self) -> str:
        """The summary's anchor in a page: ``seq-N`` (a round undone and started again has two)."""
        return f"seq-{self.seq}"


Entry = Card | Note | RoundSummary


class Series(msgspec.Struct, frozen=True, kw_only=True):
    """One combatant's HP and Will at each of the chart's columns (None before it joined): by id, so same-named
    combatants stay apart."""

    id: str
    name: str
    side: str
    hp_max: int
    will_max: int
    hp: tuple[int | None, ...]
    will: tuple[int | None, ...]


class Chart(msgspec.Struct, frozen=True, kw_only=True):
    """HP and Will by round: the columns (``start``: as each combatant joined; ``round N``: at its start, rounds
    undone left out; ``end``) and a series per combatant."""

    columns: tuple[str, ...]
    series: tuple[Series, ...]


# -- building cards -----------------------------------------------------------------------------------------------

_TIERS = {"alert": "Alert", "partial": "Partially Surprised", "complete": "Completely Surprised"}
_ROLL_RESULTS = (StaticCheckResolved, ContestResolved, SurpriseDetermined, InitiativeRolled, InitiativeRollOff,
                 AmbushDifficultySet)


class _Draft:
    """A card in the making: its events so far, each with the state before it and its narrative lines."""

    def __init__(self, kind: CardKind, seq: int, round_: int):
        self.kind, self.seq, self.round = kind, seq, round_
        self.events: list[tuple[StoredEvent, FightState, tuple[Line, ...]]] = []
        self.owned: list[tuple[StoredEvent, FightState]] = []  # the action's own events, as explain takes them
        self.reactions: list[int] = []


class _Slot:
    """A place in the stream: an entry done, a card still open, or a roll still waiting for its result."""

    def __init__(self, entry: Entry | None = None, draft: _Draft | None = None, roll: Note | None = None):
        self.entry, self.draft, self.roll = entry, draft, roll
        self.done = entry is not None


class CardBuilder(Visitor):
    """The session log's entries, as a visitor of a timeline walk: each goes to ``sink`` once it and every entry
    before it are complete. Also keeps the chart (:attr:`chart`, complete at the end of the walk)."""

    def __init__(self, sink: Callable[[Entry], object], seed: bytes | None = None):
        self.sink = sink
        self.known = Derivations(seed)
        self.narrator = Narrator(sink=lambda line: None)
        self.queue: deque[_Slot] = deque()
        self.open: dict[int, tuple[_Slot, _Draft]] = {}
        self.rolls: dict[int, _Slot] = {}
        self.columns: list[str] = ["start"]
        self.points: dict[str, dict[int, tuple[int, int]]] = {}
        self.who: dict[str, tuple[str, str, int, int]] = {}
        self.chart = Chart(columns=(), series=())

    def begin(self, walk: Walk) -> None:
        """The seed and the seqs undone, for the explanations."""
        self.known.begin(walk)

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        """Place one event: in the card of its action, in a roll's card, as a round's summary, or as a note."""
        self.known.see(rec, before)
        if rec.seq == rec.batch:
            self._rolls_done()
        lines = tuple(self.narrator.tell(rec, before=before))
        event = rec.event
        owner = owner_of(event, before, after)
        innermost = after.stack[-1].declared_at if after.stack else None
        if isinstance(event, CombatantJoined):
            self._joined(after, event.sheet.id)
        if owner is not None:
            self._owned(owner, rec, before, lines)
        elif isinstance(event, RoundStarted):
            self._push(_Slot(entry=_round(rec.seq, event.round, after, voided)))
            if not voided:
                self._column(f"round {event.round}", after)
        elif isinstance(event, DiceRolled) and not is_undo_batch(event):
            slot = _Slot(roll=Note(seq=rec.seq, lines=lines, undone=voided))
            self.rolls[event.counter] = slot
            self._push(slot)
        elif isinstance(event, _ROLL_RESULTS) and _sides(event):
            self._roll_card(rec, before, lines, voided)
        elif innermost is not None and innermost in self.open and not is_undo_batch(event):
            self.open[innermost][1].events.append((rec, before, lines))
        elif lines:
            self._push(_Slot(entry=Note(seq=rec.seq, lines=lines, undone=voided)))
        if not is_undo_batch(event):
            live = {f.declared_at for f in after.stack}
            for declared in [d for d in self.open if d not in live]:
                self._close(declared)
        self._release()

    def end(self, state: FightState) -> None:
        """Close what the log leaves open (an action waiting at a window is a card, not settled) and the chart."""
        for declared in list(self.open):
            self._close(declared)
        self._rolls_done()
        self._release()
        self._column("end", state)
        self.chart = Chart(columns=tuple(self.columns), series=tuple(
            Series(id=cid, name=name, side=side, hp_max=hp_max, will_max=will_max,
                   hp=tuple(self.points[cid].get(i, (None, None))[0] for i in range(len(self.columns))),
                   will=tuple(self.points[cid].get(i, (None, None))[1] for i in range(len(self.columns))))
            for cid, (name, side, hp_max, will_max) in self.who.items()))

    # -- the stream -------------------------------------------------------------------------------------------

    def _push(self, slot: _Slot) -> None:
        self.queue.append(slot)

    def _release(self) -> None:
        while self.queue and self.queue[0].done:
            entry = self.queue.popleft().entry
            assert entry is not None
            self.sink(entry)

    def _owned(self, owner: int, rec: StoredEvent, before: FightState, lines: tuple[Line, ...]) -> None:
        if owner not in self.open:
            kind: CardKind = ("attack" if isinstance(rec.event, AttackDeclared) else
                              "save" if isinstance(rec.event, SaveCalled) else
                              "ability" if isinstance(rec.event, (AbilityUsed, MomentReached)) else "movement")
            draft = _Draft(kind, owner, before.round)
            slot = _Slot(draft=draft)
            self.open[owner] = (slot, draft)
            self._push(slot)
            parent = getattr(rec.event, "reacting_to", None)
            if parent in self.open:
                self.open[parent][1].reactions.append(owner)
                self.open[parent][1].owned.append((rec, before))  # told in the action it answers (as explain does)
        draft = self.open[owner][1]
        draft.events.append((rec, before, lines))
        draft.owned.append((rec, before))

    def _close(self, declared: int) -> None:
        slot, draft = self.open.pop(declared)
        slot.entry, slot.draft, slot.done = self._action_card(draft), None, True

    def _rolls_done(self) -> None:
        """Rolls no result took (the batch is over): notes where they stand."""
        for slot in self.rolls.values():
            slot.entry, slot.done = slot.roll, True
        self.rolls = {}

    def _roll_card(self, rec: StoredEvent, before: FightState, lines: tuple[Line, ...], voided: bool) -> None:
        sides = _sides(rec.event)
        taken = [self.rolls.pop(s.counter) for s in sides if s.counter in self.rolls]
        story = tuple(line for slot in taken if slot.roll is not None for line in slot.roll.lines) + lines
        dice = {c: r.event.dice for c, r in self.known.batch_rolls.items() if isinstance(r.event, DiceRolled)}
        first = min([rec.seq, *(s.roll.seq for s in taken if s.roll is not None)])
        card = self._single_card(rec, before, story, dice, voided, first)
        slot = taken[0] if taken else _Slot()
        slot.entry, slot.roll, slot.done = card, None, True
        for other in taken[1:]:
            self.queue.remove(other)
        if not taken:
            self._push(slot)

    # -- the chart --------------------------------------------------------------------------------------------

    def _joined(self, state: FightState, cid: str) -> None:
        fighter = state.combatants.get(cid)
        if fighter is None:
            return
        self.who.setdefault(cid, (fighter.sheet.name, fighter.side, fighter.sheet.hp, fighter.sheet.will))
        self.points.setdefault(cid, {})[0] = (fighter.hp, fighter.will)

    def _column(self, name: str, state: FightState) -> None:
        self.columns.append(name)
        for cid, fighter in state.combatants.items():
            if cid in self.who:
                self.points[cid][len(self.columns) - 1] = (fighter.hp, fighter.will)

    # -- cards ------------------------------------------------------------------------------------------------

    def _name(self, cid: str) -> str:
        return self.narrator.names(cid)

    def _action_card(self, draft: _Draft) -> Card:
        first, _state, first_lines = draft.events[0]
        decl = first.event
        story = tuple(line for _, _, lines in draft.events for line in lines)
        rolled = [rec.event for rec, _, _ in draft.events if isinstance(rec.event, DiceRolled)]
        dice: dict[str, tuple[Die, ...]] = {r.purpose: r.dice for r in rolled}
        counters = {r.counter: r.dice for r in rolled}
        rolls: list[Roll] = []
        verdicts: list[Verdict] = []
        damage: list[DamageLine] = []
        resources: list[ResourceLine] = []
        conditions: list[ConditionLine] = []
        damage_roll: list[Die] = []  # the dice of a damage roll not yet dealt (a consequence's own, C25)
        lowered: Lowered | None = None  # what conditions changed of the primary bonus, for the weapon's damage (C28)
        for rec, before, _lines in draft.events:
            event = rec.event
            if isinstance(event, DiceRolled) and event.purpose == "damage":
                damage_roll = list(event.dice)
            elif isinstance(event, HitDetermined):
                lowered = _lowered(event, before, decl) if isinstance(decl, AttackDeclared) else None
                guarded = _guarded(event, before, decl) if isinstance(decl, AttackDeclared) else 0
                rolls += _hit_rolls(event, dice, lowered.conditions if lowered is not None else 0, _replaced(rolled),
                                    guarded)
                verdicts += _hit_verdicts(event)
            elif isinstance(event, SaveResolved):
                rolls += [self._side_roll(f"{self._name(event.saver.roller)}'s {event.saver.attribute} save",
                                          event.saver, counters.get(event.saver.counter, ()), before),
                          self._side_roll(f"{self._name(event.opposing.roller)}'s {event.opposing.attribute} roll",
                                          event.opposing, counters.get(event.opposing.counter, ()), before)]
                tie = event.saver.total == event.opposing.total
                verdicts.append(Verdict(label="SAVED" if event.success else "FAILED",
                                        numbers=f"{event.saver.total} vs {event.opposing.total}",
                                        rule="C15: a tie goes to the saver" if tie else "C15"))
            elif isinstance(event, DamageResolved):
                weapons = lowered is not None and event.source == lowered.label  # the weapon's damage (C12)
                target = before.combatants.get(event.target)
                damage.append(self._damage(event, damage_roll, lowered if weapons else None,
                                           target.sheet.incoming_damage if target is not None else None))
                lowered = None if weapons else lowered
                damage_roll = []
                if hp_unmoved(event, before.combatants[event.target].hp if event.target in before.combatants
                              else None):  # at 0 HP already: no change recorded, shown as after every hit (C28)
                    resources.append(ResourceLine(who=event.target, name=self._name(event.target), resource="hp",
                                                  before=0, after=0))
            elif isinstance(event, ResourceChanged):
                resources.append(ResourceLine(who=event.who, name=self._name(event.who), resource=event.resource,
                                              before=event.before, after=event.after))
            elif isinstance(event, ConditionApplied):
                conditions.append(ConditionLine(who=event.who, name=self._name(event.who), condition=event.condition,
                                                applied=True, stacks=event.stacks,
                                                reason=applied_reason(event, self._name)))
            elif isinstance(event, ConditionCleared):
                conditions.append(ConditionLine(who=event.who, name=self._name(event.who), condition=event.condition,
                                                applied=False, reason=event.reason))
            elif isinstance(event, Moved):
                stood = self.known.batch.stands_up(event.action)  # a stand_up's movement (C20, C28)
                verdicts.append(Verdict(label="STOOD UP" if stood else "MOVED", numbers="",
                                        rule="C20, C28: a Movement Action" if stood else ""))
            elif isinstance(event, ActionCancelled):
                verdicts.append(Verdict(label="CANCELLED", numbers=event.reason, rule=""))
        actor = (decl.attacker if isinstance(decl, AttackDeclared) else decl.caller if isinstance(decl, SaveCalled)
                 else decl.who if isinstance(decl, (MovementDeclared, AbilityUsed)) else
                 decl.who or "" if isinstance(decl, MomentReached) else "")
        reaction = getattr(decl, "reaction", None) or ""
        explained = self._explained(lambda: self.known.action(draft.owned))
        healed = _healing(explained, self._name)  # a heal (C37): its amount term by term, what it restored
        rolls += [roll for roll, _ in healed]
        verdicts += [verdict for _, verdict in healed]
        return Card(seq=draft.seq, kind=draft.kind, first=first.seq, last=draft.events[-1][0].seq, round=draft.round,
                    headline=_headline(first_lines, first.seq), actor=actor,
                    reaction=_REACTION_WORDS.get(reaction, reaction.replace("_", " ")),
                    reacting_to=getattr(decl, "reacting_to", None),
                    reactions=tuple(draft.reactions),
                    costs=tuple(line.text.strip() for rec, _, lines in draft.events if isinstance(rec.event, CostPaid)
                                for line in lines),
                    rolls=tuple(rolls),
                    decisions=tuple(line.text.strip() for line in story if line.kind == "window"),
                    verdicts=tuple(verdicts), damage=tuple(damage), resources=tuple(resources),
                    conditions=tuple(conditions), story=story, undone=draft.seq in self.known.voided,
                    settled=any(isinstance(rec.event, (ActionSettled, ActionCancelled)) for rec, _ in draft.owned),
                    explanation=explained)

    def _single_card(self, rec: StoredEvent, before: FightState, story: tuple[Line, ...],
                     dice: dict[int, tuple[Die, ...]], voided: bool, first: int) -> Card:
        event = rec.event
        name = self._name
        sides = _sides(event)
        rolls = tuple(self._side_roll(f"{name(s.roller)}'s {s.skill or s.attribute}", s, dice.get(s.counter, ()),
                                      before) for s in sides)
        verdicts: tuple[Verdict, ...] = ()
        match event:
            case StaticCheckResolved(check=side, difficulty=difficulty, outcome=outcome):
                kind: CardKind = "check"
                headline = f"{name(side.roller)} rolls {side.skill or side.attribute + ' check'} against {difficulty}"
                verdicts = (Verdict(label=outcome.upper(), numbers=f"{side.total} vs {difficulty}",
                                    rule="C16: a tie is not a success" if outcome == "tie" else "C1, C2"),)
            case ContestResolved(initiator=ini, defender=dfd, winner=winner, tie=tie):
                kind = "contest"
                headline = (f"Contest: {name(ini.roller)}'s {ini.skill or ini.attribute} against "
                            f"{name(dfd.roller)}'s {dfd.skill or dfd.attribute}")
                verdicts = (Verdict(label=f"{name(winner)} wins", numbers=f"{ini.total} vs {dfd.total}",
                                    rule="C16: a tie goes to the defender" if tie else "C16"),)
            case SurpriseDetermined(perception=side, difficulty=difficulty, tier=tier):
                kind = "surprise"
                headline = f"{name(side.roller)} rolls Perception against the ambush ({difficulty})"
                verdicts = (Verdict(label=_TIERS.get(tier, tier), numbers=f"{side.total} vs {difficulty}",
                                    rule="C18"),)
            case InitiativeRolled(check=side):
                kind = "initiative"
                headline = f"{name(side.roller)} rolls initiative"
                verdicts = (Verdict(label="initiative", numbers=str(side.total), rule="C19"),)
            case InitiativeRollOff(group=group):
                kind = "roll_off"
                headline = f"Roll-off between {', '.join(map(name, group))}"
                verdicts = (Verdict(label="roll-off", numbers=" vs ".join(str(s.total) for s in sides), rule="C19"),)
            case _:
                assert isinstance(event, AmbushDifficultySet)
                kind = "ambush"
                headline = "Stealth rolls set the Ambush Difficulty"
                verdicts = (Verdict(label="Ambush Difficulty", numbers=str(event.difficulty), rule="C17"),)
        return Card(seq=rec.seq, kind=kind, first=first, last=rec.seq, round=before.round, headline=headline,
                    actor=sides[0].roller, rolls=rolls, verdicts=verdicts, story=story, undone=voided,
                    explanation=self._explained(lambda: self.known.single(rec, before)))

    @staticmethod
    def _explained(explaining: Callable[[], Explanation | None]) -> Explanation | None:
        """The explanation, unless the events given lack what it needs (a combatant's sheet left out of a view)."""
        try:
            return explaining()
        except LookupError:
            return None

    def _side_roll(self, label: str, side: RollTotal, dice: tuple[Die, ...], before: FightState) -> Roll:
        """One side of a check, a contest or a save: its die, its attribute bonus as the sheet's value and what
        conditions changed of it (C28, in the state it was rolled in: "+ 2 INT - 1 conditions", as the hit total
        and explain say it; it read "+ 1 INT", a sheet's +2 under Fatigued: a tester), its skill and modifiers."""
        sides = dice[0].sides if dice else None
        fighter = before.combatants.get(side.roller)
        sheet = fighter.sheet.attributes[side.attribute].bonus if fighter is not None else side.attribute_bonus
        terms = _card_terms(side.terms(side.attribute_bonus - sheet), {"die": [f"d{sides}" if sides else "die"]})
        return Roll(name=label, terms=_kept(terms), total=side.total)

    def _damage(self, event: DamageResolved, dice: list[Die], lowered: Lowered | None = None,
                incoming: IncomingDamage | None = None) -> DamageLine:
        steps = [Mitigation(step=s.step, change=change, after=s.after,
                            said=incoming_said(before, incoming) if s.step == "incoming" else "")
                 for s, change, before in signed_steps(event)]
        return DamageLine(source=event.source, damage_type=event.damage_type,
                          raw=Roll(name="damage", terms=_damage_terms(event.terms, dice, lowered),
                                   total=event.terms.raw),
                          steps=tuple(steps), final=event.final, target=event.target,
                          target_name=self._name(event.target), resource=event.resource, overflow=event.overflow)


def _healing(explained: Explanation | None, name: Callable[[str], str]) -> list[tuple[Roll, Verdict]]:
    """Each heal an ability's explanation shows (C37): its amount as a roll (``4 (d6) + 1 flat = 5``) and what it
    restored to whom (``HEALED``: ``5 HP to Bram``, or ``0 HP: Bram is at its sheet's HP already``), the one it
    heals by ``name``."""
    if explained is None:
        return []
    found = []
    heals = [p for p in explained.parts if p.name.endswith("'s healing")]
    for part in heals:
        terms = tuple(RollTerm(int(face), "heal", f"d{t.label.rsplit('d', 1)[-1]}") for t in part.terms
                      if t.origin == "dice" for face in t.source.split(" + ")) + \
            tuple(RollTerm(t.value, "flat") for t in part.terms if t.origin != "dice" and t.value)
        said = next((v for v in explained.verdicts if v.startswith(f"{part.name} ({part.total}) restores")), "")
        restored = _named_recipient(said.split(" restores ", 1)[1], name) if said else ""
        found.append((Roll(name=part.name, terms=terms, total=part.total),
                      Verdict(label="HEALED", numbers=restored, rule="C37")))
    return found


#: What explain says a heal restored, around whom it restored it to (an id): ``0 HP: bram is at its sheet's HP
#: already ...``, ``3 HP of it to bram: ...``, ``4 HP to bram``.
_RESTORED = (re.compile(r"(0 HP: )(\S+)( is at .*)"), re.compile(r"(\d+ HP(?: of it)? to )(\S+?)(: .*|)"))


def _named_recipient(restored: str, name: Callable[[str], str]) -> str:
    """What a heal restored, as explain says it, with whom it restored it to by ``name``."""
    found = next((m for m in (r.fullmatch(restored) for r in _RESTORED) if m is not None), None)
    return f"{found[1]}{name(found[2])}{found[3]}" if found is not None else restored


def _headline(lines: tuple[Line, ...], seq: int) -> str:
    return lines[0].text.strip() if lines else f"the action declared at seq {seq}"


def _sides(event: Event) -> tuple[RollTotal, ...]:
    """The roll totals a result event records (none for an Ambush Difficulty the GM set)."""
    match event:
        case StaticCheckResolved(check=side) | SurpriseDetermined(perception=side) | InitiativeRolled(check=side):
            return (side,)
        case ContestResolved(initiator=ini, defender=dfd):
            return (ini, dfd)
        case InitiativeRollOff(rolls=rolls):
            return rolls
        case AmbushDifficultySet(stealth=stealth):
            return stealth
    return ()


#: A card's word for a kind of term where it is not the total's own label (:meth:`omen_core.events.HitTotal.terms`
#: and the others); every other term is written with its own label.
_CARD_LABELS = {"damage_dice": "dice", "ability_die": "ability die"}


def _card_terms(terms: Iterable[Term], sizes: dict[str, list[str]]) -> list[RollTerm]:
    """A total's own terms as a card writes them: the card's word for the kind, or the term's label, and for a die
    its size (the next of its kind in ``sizes``, in the order rolled; "die" past the sizes known)."""
    out, seen = [], dict.fromkeys(sizes, 0)
    for t in terms:
        die = ""
        if t.kind in sizes:
            known, seen[t.kind] = sizes[t.kind], seen[t.kind] + 1
            die = known[seen[t.kind] - 1] if seen[t.kind] <= len(known) else "die"
        out.append(RollTerm(t.value, _CARD_LABELS.get(t.kind, t.label), die))
    return out


def _kept(terms: list[RollTerm]) -> tuple[RollTerm, ...]:
    """The terms worth writing: every die, and every bonus but a zero (a sheet's zero that conditions changed is
    kept beside the change: ``0 STR - 1 conditions``)."""
    return tuple(t for i, t in enumerate(terms) if t.die or t.value
                 or (i + 1 < len(terms) and terms[i + 1].label == "conditions"))


def _sizes(dice: tuple[Die, ...], pool: str) -> list[str]:
    return [f"d{d.sides}" for d in dice if d.pool == pool]


def _lowered(event: HitDetermined, before: FightState, decl: AttackDeclared) -> Lowered | None:
    """What conditions changed of the attacker's primary bonus as the hit was determined (C28: the effective bonus
    less the sheet's, in the state it was determined in), for the hit total and the weapon's damage to state it as
    the sheet's value and that change (C12), as explain does; None if nothing did."""
    fighter = before.combatants.get(decl.attacker)
    if fighter is None:
        return None
    conditions = event.attack.attribute_bonus - fighter.sheet.attributes[event.attack.attribute].bonus
    weapon = fighter.sheet.weapon(decl.weapon) if decl.weapon is not None else None
    label = weapon.label if weapon is not None else decl.weapon or "unarmed"
    return Lowered(conditions, label, decl.weapon is not None, event.crit) if conditions else None


def _guarded(event: HitDetermined, before: FightState, decl: AttackDeclared) -> int:
    """What conditions changed of the target's RES bonus as the hit was determined (C28: the effective bonus less
    the sheet's), for the defense total to state it as the sheet's value and that change, as explain does (the
    card folded it into the RES and Active Defense bonuses, or dropped a RES bonus they brought to 0: a tester)."""
    if decl.target not in before.combatants:
        return 0
    return event.defense.res_bonus - bonus_source(before, decl.target, "RES").sheet


def _replaced(rolled: list[DiceRolled]) -> dict[int, int]:
    """The faces a reroll replaced in the action's hit roll (C39: both recorded, the new one counts), by the die's
    index in that roll: the first face each die showed."""
    hit = next((r for r in reversed(rolled) if r.purpose == "hit"), None)
    if hit is None:
        return {}
    out: dict[int, int] = {}
    for r in rolled:
        if r.purpose == "reroll" and r.rerolls == hit.counter and r.die is not None and r.die < len(hit.dice):
            out.setdefault(r.die, hit.dice[r.die].face)
    return out


def _hit_rolls(event: HitDetermined, dice: dict[str, tuple[Die, ...]], conditions: int = 0,
               replaced: dict[int, int] | None = None, guarded: int = 0) -> list[Roll]:
    """The hit total (C5, its attribute bonus as the sheet's value and what ``conditions`` changed of it, C28) and
    the total defense (C10, C11, and any Active Defense; its bonuses as the sheet's values and what ``guarded``
    changed of them) as roll strings; a die a reroll changed says the face it replaced (``replaced``, by its index
    in the hit roll: "7 (d8, rerolled from 1)", C39)."""
    a, d = event.attack, event.defense
    hit_dice = dice.get("hit", ())
    said = [f"d{die.sides}" + (f", rerolled from {replaced[i]}" if replaced and i in replaced else "")
            for i, die in enumerate(hit_dice)]
    hit = _card_terms(a.terms(conditions), {
        "primary_die": [w for w, die in zip(said, hit_dice, strict=True) if die.pool == "primary"],
        "fcs_die": [w for w, die in zip(said, hit_dice, strict=True) if die.pool == "fcs"]})
    active = _sizes(dice.get("active_defense", ()), "active")
    defense = _card_terms(d.terms(guarded), {"res_die": _sizes(dice.get("base_defense", ()), "res")[:1],
                                             "active_die": [f"{active[0] if active else 'die'} {d.active.defense}"]
                                             if d.active is not None else []})
    kept_defense = tuple(t for i, t in enumerate(defense) if t.die or t.value or t.label.startswith("no RES")
                         or (i + 1 < len(defense) and defense[i + 1].label == "conditions"))  # as _kept, no RES too
    return [Roll(name="hit", terms=_kept(hit), total=a.total), Roll(name="defense", terms=kept_defense,
                                                                      total=d.total)]


#: A reaction kind in a card's words where its tag does not say it: an attack a triggered ability makes (C38).
_REACTION_WORDS = {"ability": "ability's attack"}


def _hit_verdicts(event: HitDetermined) -> list[Verdict]:
    """Hit or miss (a tie goes to the defender) and the crit (FCS portion strictly over the RES portion, C7)."""
    a, d, c = event.attack, event.defense, event.crit_check
    tie = a.total == d.total
    hit = Verdict(label="HIT" if event.hit else "MISS", numbers=f"{a.total} vs {d.total}",
                  rule="a tie goes to the defender (§Hit Determination)" if tie else "§Hit Determination")
    label = crit_outcome(event)
    crit = Verdict(label=label, numbers=f"FCS portion {c.fcs_portion}{_portion(c.fcs_terms())} vs RES portion "
                                        f"{c.res_portion}{_portion(c.res_terms())}",
                   rule="C7: a tie is no crit" if c.fcs_portion == c.res_portion else "C7")
    return [hit, crit]


#: How a crit portion's term is said, by its kind (C7): the FCS dice, the RES die, an attribute's bonus.
_PORTION_WORDS = {"fcs_die": "{label} dice", "res_die": "{label} die"}


def _portion(terms: Iterable[Term]) -> str:
    """A crit portion's terms in brackets (C7: ``(6 FCS dice + 2 FCS bonus)``), so that a bonus the hit roll does
    not show is seen where the portion counts it (the FCS bonus: a tester); "" where it is one term."""
    shown = [t for t in terms if t.value or t.kind in _PORTION_WORDS]
    if len(shown) < 2:
        return ""
    said = [(t.value, _PORTION_WORDS.get(t.kind, "{label} bonus").format(label=t.label)) for t in shown]
    return " (" + "".join(f"{value} {words}" if not i else f" {'-' if value < 0 else '+'} {abs(value)} {words}"
                          for i, (value, words) in enumerate(said)) + ")"  # ("1 FCS dice - 1 FCS bonus", not "+ -1")


def _damage_terms(t: DamageTerms, dice: list[Die], lowered: Lowered | None = None) -> tuple[RollTerm, ...]:
    """C12's damage formula (or a consequence's own roll, C25) term by term. ``dice`` is the damage roll the
    damage followed: an attack's holds only its ability dice (Brute rage's, C12), whose faces are the formula's
    ability dice, and its dice result is the primary dice of the hit roll (or the routed die); a consequence's
    holds the dice of its own damage roll, and no ability dice. ``lowered``: for a weapon's damage, what conditions
    changed of the primary bonus, stated beside the sheet's value (C28, :func:`~omen_replay.narrate.split_primary`)."""
    rolled = [d for d in dice if d.pool == "damage"]
    own, added = rolled[:len(rolled) - len(t.ability_dice)], rolled[len(rolled) - len(t.ability_dice):]
    sizes = {f"d{d.sides}" for d in own}
    die = (sizes.pop() if len(sizes) == 1 else "dice") if own else (
        "routed die" if t.routed_die is not None else "primary dice")
    names = list(t.ability_sources or ("rage",) * len(t.ability_dice))
    if len(added) == len(names):
        names = [f"d{d.sides} {name}" for d, name in zip(added, names, strict=True)]
    formula = t.terms() if lowered is None else split_primary(t.terms(), lowered)
    if not own and t.dice == 0 and t.routed_die is None:  # a consequence's flat damage: no dice at all (C25)
        formula = tuple(x for x in formula if x.kind != "damage_dice")
    terms = _card_terms(formula, {"damage_dice": [die], "ability_die": names})
    at = next((i for i, x in enumerate(formula) if x.kind == "damage_dice"), None)
    if at is not None and len(own) > 1 and sum(d.face for d in own) == terms[at].value:  # 2d6: each die its own
        terms[at:at + 1] = [RollTerm(d.face, terms[at].label, f"d{d.sides}") for d in own]
    return _kept(terms)


def _round(seq: int, number: int, state: FightState, voided: bool) -> RoundSummary:
    """Every combatant at a round's start, in initiative order."""
    ids = [*state.order, *(cid for cid in state.combatants if cid not in state.order)]
    rows = tuple(CombatantRow(id=c.id, name=c.sheet.name, side=c.side, hp=c.hp, hp_max=c.sheet.hp, will=c.will,
                              will_max=c.sheet.will, conditions=dict(c.conditions_applied()),
                              initiative=state.initiative.get(cid), surprise=state.surprise.get(cid),
                              out=c.left or ("down" if c.down else None), remaining=c.ticks_left(),
                              until=state.lasting(cid))
                 for cid in ids if (c := state.combatants.get(cid)) is not None)
    return RoundSummary(seq=seq, round=number, order=state.order, rows=rows, undone=voided)


def entries(records: Iterable[StoredEvent], seed: bytes | None = None) -> tuple[list[Entry], Chart]:
    """The entries and the chart of the events given, which need not be a whole or sound log: a lenient walk
    without the hash chain, so a view that leaves events out still gives its cards."""
    found: list[Entry] = []
    builder = CardBuilder(found.append, seed)
    walk(LinesSource([encode_line(r) for r in records], where="the events given"), builder, chain=False,
         strict=False)
    return found, builder.chart
