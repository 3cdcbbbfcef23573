"""Audit a fight log: hash chain, framing and batches, event order, every command decided again, the seed and
every seeded die, every derived number recomputed, the dice sources, undos and their re-rolls, witnessed heads.

The audit is a visitor over the one walk (:mod:`omen_core.walk`), which reads
the log once, streaming, and hands it each event with the state just before
and after it as they stood then. Unlike live play, which raises at the first
problem, the audit collects every finding and reports them all:

- **re-decision**: each batch records the command that produced it; the
  audit runs ``decide`` again on the state before the batch, with the
  batch's own recorded dice, and requires the very same events, byte for
  byte. An event the rules would not have produced, or one missing, is a
  finding naming its seq and rule;
- **per-event recomputation**: each check, save, hit, defense, crit, damage
  and mitigation step recomputed from the sheets, the conditions and the
  dice (the only numeric check for logs of schema version 1, which recorded
  no commands);
- **witnessed heads** (``heads``): the log must pass through every
  ``(seq, hash)`` seen earlier (a cut tail is caught too);
- **dice sources**: in a seeded fight a die of another source needs a
  recorded ``dice_source_changed``; a die labelled seeded needs a commitment;
  every seeded die is recomputed from the seed, taken from the
  ``seed_revealed`` the walk meets in the log (or given), never from an index
  (:class:`SeedCheck`: dice met before the reveal are checked when it comes);
- **dice provenance**: the fight states its dice at the start; every die of
  another source (faces typed into a seeded fight's command, say) and every
  change of the dice source is a finding of its own kind
  (``dice provenance``);
- **undo re-rolls**: every undo that voided rolled dice is a finding of its
  own kind (``undo re-roll``): the voided faces beside the faces rolled next
  by the same roller for the same purpose and check, on the same dice.

Provenance and re-roll findings do not make the log unsound (the engine
allows both, and the GM may have had a good reason); they are listed so
nobody can choose a roll unseen, and ``--strict`` fails on them.

What the audit proves is written in docs/verify.md.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from omen_core.commands import Command, Join, StartFight
from omen_core.decide import Target, decided
from omen_core.decide.flow import DYING_TURN
from omen_core.derive import damage_terms, hit_numbers, landing, mitigation_for
from omen_core.dice import RecordedDice, RollRequest, commitment, seeded_faces
from omen_core.errors import BadInput, DiceExhausted, OmenError, RuleViolation, TornTail
from omen_core.events import (
    SCHEMA_VERSION,
    AmbushDifficultySet,
    AmbushStarted,
    BonusActionsRefilled,
    CombatantJoined,
    CommandIssued,
    ContestResolved,
    CostPaid,
    DamageResolved,
    DiceRolled,
    DiceSourceChanged,
    Event,
    FightStarted,
    HitDetermined,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    Redone,
    ResourceChanged,
    RollTotal,
    RoundStarted,
    SaveResolved,
    SeedCommitted,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    SurpriseDetermined,
    TurnSkipped,
    TurnStarted,
    Undone,
    as_written_by,
    encode_line,
)
from omen_core.machine import Step
from omen_core.rules.ambush import PARTIAL_SURPRISE_INITIATIVE, ambush_difficulty, surprise_tier
from omen_core.rules.checks import contest_winner, roll_total, save_succeeds, static_outcome
from omen_core.state import AttackFrame, FightState, effective_bonus, is_undo_point
from omen_core.walk import (
    NO_EVENT,
    Finding,
    LinesSource,
    Source,
    StoreSource,
    UndoRecord,
    Visitor,
    Walk,
    walk,
)

__all__ = ["Finding", "Head", "Report", "Audit", "SeedCheck", "REROLL", "PROVENANCE", "READING", "verify",
           "verify_lines", "verify_store", "parse_head", "finding_words"]

#: The kind of finding an undo that voided rolled dice gets (see the module doc).
REROLL = "undo re-roll"
#: The kind of finding a die from another source than the fight's stated dice gets, and a change of the dice source.
PROVENANCE = "dice provenance"
#: The kinds of finding that do not make a log unsound (``--strict`` counts them too).
NOTICES = (REROLL, PROVENANCE)
#: The rules of the findings made reading the log's lines (a line that does not decode or is not canonical, a hash
#: chain that does not hold, a seq out of place, another fight's event, a torn batch): a log with one cannot be
#: replayed (``omen replay`` refuses it), whatever the rules say.
READING = frozenset({"format", "chain", "batch"})

#: The rule each event type's numbers come from, for a finding of the re-decision.
_RULES: dict[str, str] = {
    "hit_determined": "§Hit Determination, C5, C7, C11", "damage_resolved": "C12, C13",
    "resource_changed": "C3, C13", "save_resolved": "C15", "static_check_resolved": "C16",
    "contest_resolved": "C16", "active_defense_window_opened": "C8", "active_defense_window_skipped": "C8",
    "surprise_determined": "C18", "ambush_difficulty_set": "C17", "initiative_rolled": "C19",
    "initiative_order_set": "C19", "condition_applied": "C25, C28", "condition_cleared": "C25, C28",
    "reaction_window_opened": "C23, C24", "cost_paid": "C20, C22", "turn_started": "C20",
    "turn_skipped": "C21", "bonus_actions_refilled": "C20, C21", "fight_ended": "§Your Turn",
    "undone": "undo", "redone": "undo", "dice_rolled": "C29", "catch_window_opened": "C22",
    "routing_window_opened": "C12",
}
_EVENT_JSON = msgspec.json.Encoder(order="deterministic")


class Head(msgspec.Struct, frozen=True, kw_only=True):
    """A point of the chain: a seq and the hash of the event there (a head a client witnessed)."""

    seq: int
    hash: str


def parse_head(text: str) -> Head:
    """``SEQ:HASH`` as a :class:`Head` (its hex digits in either case, kept in lower case as a log writes them, as
    ``--seed`` takes either case, and white space around it, as ``--seed`` does: a head pasted from a page);
    :class:`BadInput` otherwise."""
    seq, _, digest = text.strip().partition(":")
    digest = digest.lower()
    hexed = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
    if not (seq.isascii() and seq.isdigit()) or int(seq) < 1 or not hexed:
        raise BadInput(f"a head is SEQ:HASH (a seq from 1, the first event, and the 64 hex digits of its hash), "
                       f"not {text!r}")
    return Head(seq=int(seq), hash=digest)


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """The audit of one log: how much was checked, where it ends, and every finding (``findings`` in the log's
    order: by seq, then by line).

    ``clean`` means no integrity finding: undo re-rolls (kind ``"undo re-roll"``) and dice of another source than
    the fight's stated dice (kind ``"dice provenance"``) are listed in ``findings`` too but do not make a log
    unsound; ``strict_clean`` means no finding at all (what ``omen verify --strict`` requires).
    ``seeded_dice`` counts the dice labelled seeded, ``seeded_checked`` those checked against a seed that
    matched the commitment (``seed_revealed``: the audit knew the seed of every epoch, C42, from the log or
    given; ``seed_given``: the auditor's seed, ``--seed``, matched one of them; ``seeded_checked_given``: of the
    dice checked, those drawn under a seed only ``--seed`` gave, the log not revealing it; the rest were checked
    against seeds the log reveals; ``seed_given_revealed``, only where ``seed_given`` (left out of the JSON
    otherwise): whether the log reveals the seed given too, false for the fresh seed of a fight that went on after
    a reveal, C42, not revealed yet).
    ``redecided`` counts the batches decided again (set-up events are their own commands), ``event_by_event``
    those that record no command (schema version 1, or a batch whose command line is missing or unreadable: a
    finding says which), audited event by event only; ``audit`` says which the log got, in words:
    ``"decided again"``, ``"event by event (schema version 1: no commands recorded)"``, or both with how many of
    each
    (docs/verify.md says what a re-sealed log of schema version 1 can fake).
    """

    fight_id: str
    events: int
    seeded_dice: int
    seed_revealed: bool
    findings: tuple[Finding, ...]
    undone: tuple[UndoRecord, ...] = ()
    notes: tuple[str, ...] = ()
    head: Head | None = None
    redecided: int = 0
    schema_versions: tuple[int, ...] = ()
    dice: str | None = None
    seeded_checked: int = 0
    seed_given: bool = False
    seeded_checked_given: int = 0
    event_by_event: int = 0
    audit: str = ""
    seed_given_revealed: bool | msgspec.UnsetType = msgspec.UNSET

    @property
    def clean(self) -> bool:
        """True when there is no integrity finding (undo re-rolls and dice provenance aside)."""
        return not self.problems

    @property
    def strict_clean(self) -> bool:
        """True when there is no finding of any kind."""
        return not self.findings

    @property
    def problems(self) -> tuple[Finding, ...]:
        """The integrity findings."""
        return tuple(f for f in self.findings if f.kind not in NOTICES)

    @property
    def rerolls(self) -> tuple[Finding, ...]:
        """The undo re-roll findings."""
        return tuple(f for f in self.findings if f.kind == REROLL)

    @property
    def provenance(self) -> tuple[Finding, ...]:
        """The dice provenance findings: each die of another source than the fight's dice, each change of source."""
        return tuple(f for f in self.findings if f.kind == PROVENANCE)

    def seeded_words(self) -> str:
        """What the audit says of the seeded dice, in words (the CLI's summary, the session log's verdict): all
        checked, some checked and the rest drawn under a seed not revealed yet (a fight that went on after a
        reveal, C42), none checked, or some not drawn under any seed revealed; and of a seed given (``--seed``)
        that the log does not reveal and no die was drawn under yet, that it is so."""
        seeded, checked = self.seeded_dice, self.seeded_checked
        if not seeded:
            return "no seeded dice" + (f" ({self.dice} dice)" if self.dice else "")
        if self.seed_revealed and checked == seeded:
            return f"{seeded} seeded dice all match {self._against('the revealed seed')}{self._given_unused()}"
        if self.seed_revealed:
            return (f"{checked} of {seeded} seeded dice match {self._against('the revealed seed')} (the others were "
                    f"not drawn under it){self._given_unused()}")
        if checked == seeded:
            return (f"{seeded} seeded dice all match {self._against('the seed revealed')}; none was drawn yet under "
                    "the fresh seed committed to after it, not revealed yet (C42)")
        if checked:
            return (f"{checked} of {seeded} seeded dice match {self._against('the seed revealed')}; {seeded - checked} "
                    "not checked: drawn under a seed not revealed yet (C42)")
        return f"{seeded} seeded dice not checked: the seed has not been revealed"

    def _against(self, revealed: str) -> str:
        """Which seeds the checked dice match, with how many each where they are of both sources: the seed given
        (``--seed``) that the log does not reveal, and the seeds the log reveals (``revealed``, the words for them
        alone; the seed given may be one of them, and then it is said so)."""
        given, shown = self.seeded_checked_given, self.seeded_checked - self.seeded_checked_given
        if given and shown:
            return f"their seeds: {shown} a seed revealed in the log, {given} the seed given (--seed)"
        if given:
            return "the seed given (--seed)"
        return revealed + (" (the seed given, --seed, is one the log reveals)" if self.seed_given_revealed is True
                           else "")

    def _given_unused(self) -> str:
        """Of a seed given (``--seed``) that checked no die and that the log does not reveal: the fresh seed of a
        fight that went on after a reveal (C42), no die drawn under it yet (nothing to say otherwise)."""
        if self.seed_given_revealed is not False or self.seeded_checked_given:
            return ""
        return ("; the seed given (--seed) matches the fresh commitment after the reveal (C42), which the log does "
                "not reveal: no die was drawn under it yet")


def _by_seq(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Findings in the log's order: by seq, then by line (one in the raw bytes names its line; one the rules found
    names none and comes after those at its seq, as reading the line comes before checking its event). The sort is
    stable: findings at one place keep the order the audit found them in. The audit finds some late (a seeded die
    is checked when the reveal comes, an undo's re-rolls at the end), so the order it found them in is not the
    log's."""
    return tuple(sorted(findings, key=lambda f: (f.seq, f.line or _NO_LINE)))


#: Where a finding that names no line (``line`` 0) sorts among the findings at its seq: after those that do.
_NO_LINE = 2 ** 63


def finding_words(finding: Finding) -> str:
    """A finding as ``omen verify`` says it: ``seq N, line L [rule] what (expected E, found F)``, the line and
    the values where the finding has them; one about the log as a whole (seq 0: a seed given that matches no
    commitment) says so, not "seq 0", which no log holds (found by a tester); an empty line by its line
    alone (it takes no seq)."""
    if not finding.seq:
        where = "the log as a whole"
    elif finding.line and finding.what in NO_EVENT:  # a line that holds no event takes no seq (docs/verify.md)
        where = f"line {finding.line}"
    else:
        where = f"seq {finding.seq}" + (f", line {finding.line}" if finding.line else "")
    said = [f"{word} {value}" for word, value in (("expected", finding.expected), ("found", finding.found)) if value]
    detail = f" ({', '.join(said)})" if said else ""
    return f"{where} [{finding.rule}] {finding.what}{detail}"


def _compare(seq: int, rule: str, what: str, expected: object, found: object) -> Iterator[Finding]:
    if expected != found:
        yield Finding(seq=seq, rule=rule, what=what, expected=_show(expected), found=_show(found))


def _show(value: object) -> str:
    if isinstance(value, msgspec.Struct):
        return msgspec.json.encode(value).decode()
    return str(value)


#: The most characters of an event's JSON a finding quotes, around where the two sides first differ.
CLIP = 400


def _clipped(text: str, other: str) -> str:
    """``text`` as a finding quotes it: whole if short, else :data:`CLIP` characters around where it first differs
    from ``other``, each end cut marked with "…" (it was cut at 400 characters, mid-object and unmarked, before
    the difference: a tester)."""
    if len(text) <= CLIP:
        return text
    at = next((i for i, (a, b) in enumerate(zip(text, other, strict=False)) if a != b), min(len(text), len(other)))
    start = max(0, min(at - CLIP // 4, len(text) - CLIP))
    return ("…" if start else "") + text[start:start + CLIP] + ("…" if start + CLIP < len(text) else "")


class _Batch:
    """One command's events as they come, the state before the first, and the events whose numbers are recomputed
    one by one if deciding the command again does not give the very same events (``held``: each with the state
    before it and, for a turn, the turn the order expected then)."""

    def __init__(self, first: StoredEvent, before: FightState):
        self.records: list[StoredEvent] = [first]
        self.before = before
        self.held: list[tuple[StoredEvent, FightState, str | None]] = []
        self.by_event = _command_of(first.event) is None  # no command recorded (schema version 1): event by event
        self.lost = self.by_event and first.schema_version >= 2  # its command line is missing or unreadable


#: What a roll was for, to pair a voided roll with the one made again: its roller, its purpose, the check it was
#: (the skill, or the attribute, a total of its batch names for its counter; None where no total names it: a hit or
#: damage roll), its dice (their sizes, in order) and the kind of the event whose total names it ("" where none
#: does: a contest's Stealth beside the next contest's, not beside a static Stealth check rolled in between; a hit
#: roll beside the next hit roll on the same dice, whichever command made it, the declaration or the answer to a
#: window that resumes the attack).
RollKind = tuple[str, str, str | None, tuple[int, ...], str]


class _Reroll:
    """Dice an undo voided, by what each roll was for (:data:`RollKind`), waiting for the faces the same roller
    rolls next for the same purpose and the same check, on the same dice (a Perception check beside the next
    Perception check, not beside a Stealth check rolled in between); ``loose``: the next roll of the same roller and
    purpose whatever it was, named where no roll of the same kind came."""

    def __init__(self, undo: UndoRecord):
        self.undo = undo
        self.voided: dict[RollKind, list[tuple[int, tuple[int, ...]]]] = {}
        self.next: dict[RollKind, tuple[int, tuple[int, ...]]] = {}
        self.loose: dict[tuple[str, str], tuple[int, tuple[int, ...], str | None, tuple[int, ...]]] = {}


#: What :meth:`Audit._check` does for each event type as it comes (the other types need nothing then).
_AS_IT_COMES: dict[type, Callable[[Audit, StoredEvent, FightState], Iterable[Finding]]] = {}

#: The event types whose numbers :meth:`Audit._recompute` recomputes one by one.
_RECOMPUTED = frozenset({StaticCheckResolved, ContestResolved, SaveResolved, HitDetermined, DamageResolved,
                         ResourceChanged, AmbushDifficultySet, SurpriseDetermined, InitiativeRolled,
                         InitiativeRollOff, TurnStarted, TurnSkipped, InitiativeOrderSet})


class _Epoch:
    """The seeded dice drawn under one commitment (C42): the commitment, the faces once its seed is known, and the
    dice met before that (compactly: seq, counter, index, sides, face each)."""

    __slots__ = ("checked", "commitment", "faces", "given", "held", "revealed", "revealed_at")

    def __init__(self, pledge: str | None):
        self.commitment = pledge
        self.faces: Callable[[str, int, int, int], int] | None = None
        self.held = array("q")
        self.checked = 0
        self.given = self.revealed = False  # whose seed matched: the auditor's (--seed), the log's reveal
        self.revealed_at = 0  # the seq of the log's reveal of this epoch's seed


class SeedCheck:
    """Every seeded die against the seed it was drawn under: the one place an audit handles seeds.

    It learns the commitments and the revealed seeds from the events as the
    walk meets them (never from an index beside the log), or a seed the
    auditor gives. A fight's dice are drawn under the commitment at its start
    and, after a reveal in a fight that goes on, under each fresh commitment
    that follows (``seed_committed``, C42): each is an epoch, and a seed
    revealed is the current epoch's. A seed is used only once it hashes to its
    epoch's commitment; a seeded die met before its epoch's seed is known is
    held and checked when the seed is revealed, one met after is checked at
    once. A seed the auditor gives is used for whichever epoch it commits to.
    """

    def __init__(self, given: bytes | None):
        self.given = given
        self.fight_id = ""
        self.epochs: list[_Epoch] = []
        self.given_used = False
        self.seeded = self.checked = 0

    @property
    def commitment(self) -> str | None:
        """The commitment the dice are drawn under now (None: the fight's dice are not seeded)."""
        return self.epochs[-1].commitment if self.epochs else None

    @property
    def known(self) -> bool:
        """Whether the seed of every epoch is known (each matching its commitment)."""
        return bool(self.epochs) and all(e.faces is not None for e in self.epochs if e.commitment is not None)

    def committed(self, fight_id: str, pledge: str | None) -> Iterator[Finding]:
        """The fight's first commitment (its first event)."""
        self.fight_id = fight_id
        yield from self._begin(0, pledge)

    def recommitted(self, seq: int, pledge: str) -> Iterator[Finding]:
        """A fresh commitment after a reveal (``seed_committed``, C42): the dice from here on are its epoch's."""
        current = self.epochs[-1] if self.epochs else None
        if current is None or current.commitment is None or current.faces is None:
            yield Finding(seq=seq, rule="C42", what="a fresh seed committed to where no seed was revealed first")
        spent = next((e for e in self.epochs if e.revealed and e.commitment == pledge), None)
        if spent is not None:  # the engine refuses it: a log that has it was written otherwise (forged, or edited)
            yield Finding(seq=seq, rule="C42", what=f"the fresh seed committed to is the seed revealed at seq "
                                                    f"{spent.revealed_at}: a revealed seed is spent, and every die "
                                                    "drawn under it again was predictable by anyone holding the log",
                          expected="the commitment of a seed not revealed", found=pledge)
        yield from self._begin(seq, pledge)
        if spent is not None:  # the log reveals this epoch's seed: its dice are checked against it
            epoch = self.epochs[-1]
            epoch.faces = epoch.faces or spent.faces
            epoch.revealed, epoch.revealed_at = True, spent.revealed_at
            yield from self._check_held(epoch)

    def _begin(self, seq: int, pledge: str | None) -> Iterator[Finding]:
        self.epochs.append(_Epoch(pledge))
        if self.given is not None and pledge is not None and commitment(self.given) == pledge:
            self.given_used = self.epochs[-1].given = True
            yield from self._learn(seq, self.given, "the seed given (--seed)")

    def revealed(self, seq: int, seed_hex: str) -> Iterator[Finding]:
        """A ``seed_revealed`` met in the log: the seed of the current epoch."""
        try:
            seed = bytes.fromhex(seed_hex)
        except ValueError:
            yield Finding(seq=seq, rule="dice", what="the revealed seed is not hex", found=seed_hex[:80])
            return
        yield from self._learn(seq, seed, "the revealed seed")
        if self.epochs and self.epochs[-1].commitment == commitment(seed):
            self.epochs[-1].revealed, self.epochs[-1].revealed_at = True, seq

    @property
    def given_revealed(self) -> bool:
        """Whether the log reveals the seed the auditor gave (``--seed``) too: its epoch's seed was revealed."""
        return any(e.revealed for e in self.epochs if e.given)

    @property
    def checked_given(self) -> int:
        """The dice checked against a seed only the auditor gave (``--seed``): the log does not reveal it."""
        return sum(e.checked for e in self.epochs if e.given and not e.revealed)

    def _learn(self, seq: int, seed: bytes, what: str) -> Iterator[Finding]:
        epoch = self.epochs[-1] if self.epochs else _Epoch(None)
        if epoch.commitment != commitment(seed):
            yield Finding(seq=seq, rule="dice", what=f"{what} does not match the commitment: no die is checked "
                                                     "against it", expected=str(epoch.commitment),
                          found=commitment(seed))
            return
        if epoch.faces is None:
            epoch.faces = seeded_faces(seed)
            yield from self._check_held(epoch)

    def rolled(self, seq: int, rolled: DiceRolled) -> Iterator[Finding]:
        """A roll labelled seeded: its epoch's (the current one); checked now if its seed is known, else held."""
        self.seeded += len(rolled.dice)
        epoch = self.epochs[-1]
        for index, die in enumerate(rolled.dice):
            epoch.held.extend((seq, rolled.counter, index, die.sides, die.face))
        if epoch.faces is not None:
            yield from self._check_held(epoch)

    def finish(self) -> Iterator[Finding]:
        """After the last event: a seed the auditor gave that commits to none of the fight's epochs."""
        if self.given is not None and not self.given_used:
            pledges = [e.commitment for e in self.epochs if e.commitment is not None]
            yield Finding(seq=0, rule="dice", what="the seed given (--seed) matches no commitment of this fight: "
                                                   "no die is checked against it",
                          expected=", ".join(str(p) for p in pledges) or "no commitment",
                          found=commitment(self.given))

    def _check_held(self, epoch: _Epoch) -> Iterator[Finding]:
        faces, held, fight_id = epoch.faces, epoch.held, self.fight_id
        assert faces is not None
        for at in range(0, len(held), 5):
            seq, counter, index, sides, face = held[at:at + 5]
            expected = faces(fight_id, counter, index, sides)
            if expected != face:
                yield Finding(seq=seq, rule="dice", what=f"seeded die {index + 1} of roll #{counter} (seeded_face's "
                                                     f"counter {counter}, index {index}: docs/dice.md)",
                              expected=str(expected), found=str(face))
        self.checked += len(held) // 5
        epoch.checked += len(held) // 5
        epoch.held = array("q")


def _not_provided(joined: CombatantJoined, seq: int) -> list[str]:
    """A note where a joining sheet lists an ability by an id that no shipped ability nor extension installed here
    provides (an ability written as data is recorded whole): the fight used a Python extension this omen does not
    have, and the findings it leads to (the roster refused, decisions decided otherwise) read like tampering unless
    said (docs/extensions.md, "Verifying and replaying a fight with an extension")."""
    from omen_core.content import SHIPPED_ABILITIES
    from omen_core.extensions import BY_ID

    missing = [a for a in joined.sheet.abilities if isinstance(a, str) and a not in SHIPPED_ABILITIES.abilities
               and a not in BY_ID]
    if not missing:
        return []
    listed = ", ".join(repr(a) for a in missing)
    return [f"{joined.sheet.id}'s sheet (seq {seq}) lists {listed}, which neither a shipped ability nor an "
            "extension installed here provides: a fight that used a Python extension verifies only where the same "
            "extension is installed (docs/extensions.md); the findings from this seq on may come from its absence "
            "alone"]


class Audit(Visitor):
    """The audit, as a visitor of a lenient timeline walk (see the module doc)."""

    def __init__(self, seed: bytes | None = None, heads: Iterable[Head] = ()):
        self.heads = {h.seq: h.hash for h in heads}
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.count = 0
        self.last: StoredEvent | None = None
        self.seeds = SeedCheck(seed)
        self.started_dice: str | None = None
        self.redecided = 0
        self.versions: set[int] = set()
        self.newest = 0  # the newest schema version met so far
        self.batch: _Batch | None = None
        self.batch_rolls: dict[int, tuple[int, DiceRolled]] = {}
        self.batch_faces = False
        self.faces_left = 0  # of the faces the batch's command carried, those no roll has taken yet
        self.targets: dict[int, Target] = {}
        self.wanted: frozenset[int] = frozenset()
        self.voided_now: set[int] = set()
        self.rerolls: list[_Reroll] = []
        self.open_rerolls: list[_Reroll] = []
        self.difficulty: int | None = None
        self.preset: int | None = None
        self.next_turn = 0
        self.switched_at: list[int] = []
        self.walk_info: Walk | None = None
        self.commands = 0  # batches opened by a recorded command (command_issued), decided again
        self.by_event = 0  # batches audited event by event only (no command recorded: schema version 1)
        self.lost = 0  # of those, batches of a later version whose command line is missing or unreadable
        self.previous: Event | None = None  # the event before this one (for a refill's place, C20)
        self.refill_due: tuple[int, str] | None = None  # a turn started (seq, whose): its refill comes next (C20)
        self.costs: dict[tuple[int, str, str, str], int] = {}  # each cost an action paid, and the seq it was paid at

    # -- the walk -----------------------------------------------------------------------------------------------

    def begin(self, walk: Walk) -> None:
        """Note what the log's undo markers say (the walk read them from the log itself): the undo targets to
        keep, the undos whose re-rolls to list. The seed is learnt from the events (:class:`SeedCheck`)."""
        self.walk_info = walk
        self.wanted = frozenset(u.from_seq for u in walk.landmarks.undos)
        self.rerolls = [_Reroll(u) for u in walk.landmarks.undos if u.redone_at is None]

    def problem(self, finding: Finding) -> None:
        """A finding of the walk itself (format, chain, batch, order, an undo it could not apply)."""
        self.findings.append(finding)

    def line(self, rec: StoredEvent, raw: bytes) -> None:
        """A set-up event's content hash is checked on the content as recorded (its own bytes), so a log stays
        verifiable when the content schema gains a field."""
        if isinstance(rec.event, (FightStarted, CombatantJoined)):
            self.findings.extend(_recorded_hash(rec, raw))

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        """Check one event in the state it was written in; batch by batch, decide each command again."""
        self.count += 1
        self.last = rec
        if rec.schema_version != self.newest:
            if rec.schema_version < self.newest:  # no writer appends under an older version than the log's
                self.findings.append(Finding(seq=rec.seq, rule="format", what=f"schema version "
                                             f"{rec.schema_version} after {self.newest}: a log's versions never go "
                                             "back"))
            if rec.schema_version <= SCHEMA_VERSION:  # a line newer than this omen is one finding (the walk's);
                self.newest = max(self.newest, rec.schema_version)  # the lines after it compare with the last good
        self.versions.add(rec.schema_version)
        if rec.seq in self.heads and self.heads[rec.seq] != rec.hash:
            self.findings.append(Finding(seq=rec.seq, rule="chain", what="not the head witnessed at this seq",
                                         expected=self.heads[rec.seq], found=rec.hash))
        if rec.seq == rec.batch or self.batch is None:
            self._flush()
            self.batch = _Batch(rec, before)
            self.batch_rolls = {}
            self.batch_faces = isinstance(rec.event, CommandIssued) and rec.event.command.dice is not None
            self.faces_left = len(rec.event.command.dice or ()) if isinstance(rec.event, CommandIssued) else 0
        else:
            self.batch.records.append(rec)
        if self.batch.by_event:
            self.findings.extend(self._by_event(rec, before, after))
        self.previous = rec.event
        if isinstance(rec.event, CombatantJoined) and not voided:
            self.notes.extend(_not_provided(rec.event, rec.seq))
        if rec.seq in self.wanted:
            self.targets[rec.seq] = Target(before=before, event=rec.event, seq=rec.seq, batch=rec.batch, live=True)
        try:
            self.findings.extend(self._check(rec, before))
        except Exception as exc:
            self.findings.append(Finding(seq=rec.seq, rule="audit", what=f"cannot recompute this event: {exc!r}"))
        if type(rec.event) in _RECOMPUTED:
            self.batch.held.append((rec, before, self._turn_expected(rec.event, before)))
        if isinstance(rec.event, (Undone, Redone)):
            self.next_turn = _next_turn(after)
        if rec.batch_size and rec.seq == rec.batch + rec.batch_size - 1:
            self._flush()  # the batch is whole: decide it again now, before an undo in it takes effect

    def undone(self, record: UndoRecord) -> None:
        """An undo: its range is void from now on (unless a redo takes it back)."""
        self.voided_now.update(range(record.from_seq, record.to_seq + 1))
        for r in self.rerolls:
            if r.undo.seq == record.seq and r.voided:
                self.open_rerolls.append(r)

    def end(self, state: FightState) -> None:
        """The last batch, witnessed heads past the end, and the undo re-rolls."""
        self._flush(at_end=True)
        self.findings.extend(self._refilled(None, state))
        last = self.last
        for seq, digest in sorted(self.heads.items()):
            if last is None or seq > last.seq:
                end = last.seq if last is not None else 0
                self.findings.append(Finding(seq=end, rule="chain", what=f"the log ends at seq {end}, but a head "
                                             f"was witnessed at seq {seq}: events are missing (cut from its end, or "
                                                  f"dropped and the chain sealed again)",
                                             expected=f"{seq}:{digest}", found=f"{end}:{last.hash if last else ''}"))
        for r in self.rerolls:
            self.findings.extend(_reroll_findings(r))
        self.findings.extend(self.seeds.finish())

    # -- re-decision --------------------------------------------------------------------------------------------

    def _flush(self, at_end: bool = False) -> None:
        """Decide the batch's command again; where that does not give the very same events (or the batch records
        no command: a log of schema version 1), recompute each number of the batch event by event, for findings
        that say which number and rule (where it does, those numbers are the rules' own: the same functions on the
        same state and dice gave them). A batch cut short at the log's end (``at_end``: a torn batch, or a store
        that cannot read on) is not decided again: the rules would go on where the log stops, and the walk's finding
        says so; its events are recomputed one by one."""
        batch, self.batch = self.batch, None
        if batch is None:
            return
        if self.rerolls:
            self._rerolled(batch)
        self.by_event += batch.by_event
        self.lost += batch.lost
        count = len(self.findings)
        first = batch.records[0]
        torn = at_end and len(batch.records) < first.batch_size  # cut short at the log's end: its torn batch says it
        if not torn:
            self._redecide(batch)
        if torn or len(self.findings) > count or _command_of(first.event) is None:
            for rec, before, turn in batch.held:
                try:
                    self.findings.extend(self._recompute(rec, before, turn))
                except Exception as exc:
                    self.findings.append(Finding(seq=rec.seq, rule="audit",
                                                 what=f"cannot recompute this event: {exc!r}"))

    def _redecide(self, batch: _Batch) -> None:
        command = _command_of(batch.records[0].event)
        if command is None:
            return
        self.redecided += 1
        first = batch.records[0]
        self.commands += isinstance(first.event, CommandIssued)
        by = first.event.by if isinstance(first.event, CommandIssued) else ""
        rolls = [r.event for r in batch.records if isinstance(r.event, DiceRolled)]
        history = _Targets(self.targets, self.voided_now)
        carried = "scripted" if batch.before.dice_mode == "scripted" else "manual"
        # faces the command carried and the fight's own dice (a player's own faces in a seeded fight, C29; the dice
        # of combatants whose dice are physical, wherever they come): the command is decided again the same way,
        # each roll the batch recorded as typed from the command's faces, the others from the rolls the fight's
        # dice made, in the order they were recorded
        typed: Callable[[RollRequest], bool] | None = None
        if command.dice is not None and any(r.source != carried for r in rolls):
            given = len(command.dice or ())
            taken, rest, flags = 0, [], []
            for r in rolls:
                flags.append(taken < given and r.source == carried)
                if flags[-1]:
                    taken += len(r.dice)
                else:
                    rest.append(r)
            rolls, each = rest, iter(flags)
            typed = lambda _request: next(each, False)  # noqa: E731 - one call a roll, in order (decide restores none)
        try:
            draft = decided(batch.before, command, RecordedDice(rolls), history, by, typed=typed)
        except RuleViolation as exc:
            self.findings.append(Finding(seq=first.seq, rule=exc.rule, what=f"the rules refuse this command here: "
                                         f"{exc}", expected="a command the rules accept here",
                                         found=str(type(command).__struct_config__.tag)))
            return
        except DiceExhausted as exc:  # (the recorded dice are read back as a script: say it in the log's terms)
            self.findings.append(Finding(seq=first.seq, rule="re-decision", what=f"this command cannot be decided "
                                         f"again with the dice the batch recorded: it rolls more than the batch "
                                         f"records ({exc.roll} needs {exc.needed} "
                                         f"{'die' if exc.needed == 1 else 'dice'}, {exc.remaining} recorded left, "
                                         f"in the order of C29)"))
            return
        except OmenError as exc:
            self.findings.append(Finding(seq=first.seq, rule="re-decision", what=f"this command cannot be decided "
                                         f"again with the dice the batch recorded: {exc}"))
            return
        except Exception as exc:
            self.findings.append(Finding(seq=first.seq, rule="re-decision", what=f"this command cannot be decided "
                                         f"again in the state the log leaves before it: {exc!r}"))
            return
        typists = first.event.faces_by if isinstance(first.event, CommandIssued) else ()
        if typists and draft.events and isinstance(draft.events[0], CommandIssued):  # who typed the faces: the
            # record's word, as ``by`` is (the rules decide the same events whoever typed them), but it must
            # account for every face the command carries
            draft.events[0] = msgspec.structs.replace(draft.events[0], faces_by=typists)
            counted = sum(r.faces for r in typists)
            if counted != len(command.dice or ()):
                self.findings.append(Finding(seq=first.seq, rule="dice", what=(
                    f"faces_by says who typed {counted} face(s), but the command carries {len(command.dice or ())}"),
                    expected=str(len(command.dice or ())), found=str(counted)))
        self.findings.extend(_differences(batch.records, [_recorded_hashes(e, batch.records) for e in draft.events]))

    # -- rolls and re-rolls -------------------------------------------------------------------------------------

    def _rerolled(self, batch: _Batch) -> None:
        """The batch's rolls (once it is whole: the totals that name each roll's check come after the roll), each
        voided by an undo or made after one, by what it was for (:data:`RollKind`)."""
        rolls = [(rec.seq, rec.event) for rec in batch.records if isinstance(rec.event, DiceRolled)]
        if not rolls:
            return
        checks = {total.counter: (total.skill or total.attribute, _tag(rec.event)) for rec in batch.records
                  for total in _totals(rec.event)}
        for seq, rolled in rolls:
            faces = tuple(d.face for d in rolled.dice)
            check, named_by = checks.get(rolled.counter, (None, ""))
            sides = tuple(d.sides for d in rolled.dice)
            kind = (rolled.roller, rolled.purpose, check, sides, named_by)
            for r in self.rerolls:
                if r.undo.from_seq <= seq <= r.undo.to_seq:
                    r.voided.setdefault(kind, []).append((seq, faces))
            for r in self.open_rerolls:
                if seq > r.undo.seq:
                    if kind in r.voided and kind not in r.next:
                        r.next[kind] = (seq, faces)
                    r.loose.setdefault(kind[:2], (seq, faces, check, sides))

    # -- each event ---------------------------------------------------------------------------------------------

    def _check(self, rec: StoredEvent, state: FightState) -> Iterable[Finding]:
        """What every event needs as it comes: the dice and their sources, the seed, the ambush's difficulty,
        the turn order, undo and redo (:data:`_AS_IT_COMES`, by type: most events need nothing)."""
        check = _AS_IT_COMES.get(type(rec.event))
        return () if check is None else check(self, rec, state)

    def _started(self, rec: StoredEvent, state: FightState) -> Iterator[Finding]:
        event = rec.event
        assert isinstance(event, FightStarted)
        self.started_dice = event.dice
        yield from self.seeds.committed(rec.fight_id, event.seed_commitment)

    def _dice_rolled(self, rec: StoredEvent, state: FightState) -> Iterator[Finding]:
        assert isinstance(rec.event, DiceRolled)
        yield from self._rolled(rec.seq, rec.event, state)

    def _source_changed(self, rec: StoredEvent, state: FightState) -> Iterator[Finding]:
        event = rec.event
        assert isinstance(event, DiceSourceChanged)
        yield Finding(seq=rec.seq, rule="dice", kind=PROVENANCE,
                      what=f"the dice source changed from {event.before} to {event.after} ({event.reason}) in a "
                           f"fight whose dice are {self.started_dice}",
                      expected=str(event.before), found=str(event.after))

    def _seed(self, rec: StoredEvent, state: FightState) -> Iterator[Finding]:
        assert isinstance(rec.event, SeedRevealed)
        yield from self.seeds.revealed(rec.seq, rec.event.seed)

    def _recommitted(self, rec: StoredEvent, state: FightState) -> Iterator[Finding]:
        assert isinstance(rec.event, SeedCommitted)
        yield from self.seeds.recommitted(rec.seq, rec.event.commitment)

    def _note(self, rec: StoredEvent, state: FightState) -> Iterator[Finding]:
        """What an ambush and a round leave for later checks, and what a redo takes back."""
        event = rec.event
        if isinstance(event, AmbushStarted):
            self.preset = event.preset_difficulty
        elif isinstance(event, AmbushDifficultySet):
            self.difficulty = event.difficulty
        elif isinstance(event, RoundStarted):
            self.next_turn = 0
        elif isinstance(event, Redone):
            self.voided_now.difference_update(_range_of(self.walk_info, event.undo_seq))
        return iter(())

    # -- event by event: what deciding a command again proves, for a batch that records none (schema version 1) --

    def _by_event(self, rec: StoredEvent, before: FightState, after: FightState) -> Iterator[Finding]:
        """The checks of a batch that records no command (a log of schema version 1), where nothing can be decided
        again: each event a legal next step of its action (an event of an action that is not in progress, C24),
        no cost paid twice for one action (C20, C22), a turn's refill where the turn starts and nothing else
        (C20), and no turn for a Dying combatant (C36). (Each number is recomputed too: :meth:`_recompute`.)"""
        seq, event = rec.seq, rec.event
        yield from self._refilled(rec, before)
        action = getattr(event, "action", None)
        if isinstance(action, int) and action not in _actions(before) and action not in _actions(after):
            yield Finding(seq=seq, rule="lifecycle", what=f"a {_tag(event)} of action {action}, which is not in "
                                                          "progress here (it settled, or was never declared)",
                          expected=f"an action in progress: {sorted(_actions(before)) or 'none'}", found=str(action))
        if isinstance(event, CostPaid):
            key = (event.action, event.who, event.resource, event.purpose)
            if key in self.costs:
                yield Finding(seq=seq, rule="C20, C22", what=f"{event.who} pays the {event.purpose} cost of action "
                                                             f"{event.action} ({event.amount} {event.resource}) a "
                                                             f"second time (first paid at seq {self.costs[key]})")
            self.costs.setdefault(key, seq)
            yield from _affordable(seq, event, before)
        if self.costs:  # an action settled, cancelled or undone pays afresh if declared again (an undo rewinds ids)
            going = _actions(after)
            self.costs = {k: at for k, at in self.costs.items() if k[0] in going}
        elif isinstance(event, TurnStarted):
            fighter = before.combatants.get(event.who)
            if fighter is not None and fighter.dying:  # (worded as the re-decision words it, for a later log)
                skipped = TurnSkipped(round=event.round, who=event.who, reason=DYING_TURN)
                yield Finding(seq=seq, rule="C36", what="the rules give turn_skipped here where the log has "
                                                        "turn_started", expected=_EVENT_JSON.encode(skipped).decode(),
                              found=_EVENT_JSON.encode(event).decode())
            self.refill_due = (seq, event.who)
        elif isinstance(event, BonusActionsRefilled):
            yield from self._refill_numbers(seq, event, before)

    def _refill_numbers(self, seq: int, event: BonusActionsRefilled, state: FightState) -> Iterator[Finding]:
        """A refill (C20): at its owner's turn start (or, before the first turn of the fight's first round, when
        the round starts or a Completely Surprised turn is lost, C21), from the Bonus Actions they had to full."""
        fighter = state.combatants.get(event.who)
        full = state.ruleset.economy.bonus_actions if state.ruleset is not None else 0
        previous = self.previous
        at_start = isinstance(previous, TurnStarted) and previous.who == event.who
        if not at_start and not (state.round <= 1 and not state.had_a_turn(event.who)):
            yield Finding(seq=seq, rule="C20", what=f"{event.who}'s Bonus Actions refilled where {event.who}'s turn "
                                                    "does not start", expected=f"after {event.who}'s turn_started",
                          found=f"after {_tag(previous)}" if previous else "first")
        if fighter is not None:
            yield from _compare(seq, "C20", f"{event.who}'s Bonus Actions before the refill", fighter.bonus_actions,
                                event.before)
        yield from _compare(seq, "C20", f"{event.who}'s Bonus Actions after the refill", full, event.after)

    def _refilled(self, rec: StoredEvent | None, state: FightState) -> Iterator[Finding]:
        """After a turn started, the next event refills its owner's Bonus Actions when they are not full (C20);
        ``rec`` None: the log ended."""
        due, self.refill_due = self.refill_due, None
        if due is None or rec is None:  # the log ends after the turn_started: a version-1 batch cut short (its lines
            return                      # carry no batch_size, so a torn batch cannot be told), not a breach of C20
        started, who = due
        event = rec.event if rec is not None else None
        if isinstance(event, BonusActionsRefilled) and event.who == who:
            return
        fighter = state.combatants.get(who)
        full = state.ruleset.economy.bonus_actions if state.ruleset is not None else 0
        if fighter is not None and fighter.bonus_actions != full:
            yield Finding(seq=started, rule="C20", what=f"{who}'s turn starts with {fighter.bonus_actions} Bonus "
                                                        f"Action(s) of {full}, and no bonus_actions_refilled follows",
                          expected="bonus_actions_refilled", found=_tag(event) if event is not None else "nothing")

    def _turn_expected(self, event: Event, state: FightState) -> str | None:
        """Whose turn the initiative order gives next, for a turn started or skipped (the order moves on)."""
        if not isinstance(event, (TurnStarted, TurnSkipped)):
            return None
        order = state.order
        expected = order[self.next_turn] if self.next_turn < len(order) else None
        self.next_turn += 1
        return expected

    def _recompute(self, rec: StoredEvent, state: FightState, turn: str | None) -> Iterator[Finding]:
        """Each number of one event recomputed from the sheets, the conditions as they stood and the recorded
        dice (C1-C19; for a turn, ``turn`` is whose the order gave)."""
        seq, event = rec.seq, rec.event
        match event:
            case StaticCheckResolved(check=side, difficulty=d, outcome=outcome):
                yield from self._side(seq, side, state)
                yield from _compare(seq, "C16", "static check outcome", static_outcome(side.total, d), outcome)
            case ContestResolved(initiator=ini, defender=dfd):
                yield from self._side(seq, ini, state)
                yield from self._side(seq, dfd, state)
                winner = contest_winner(ini.total, dfd.total)
                yield from _compare(seq, "C16", "contest winner",
                                    ini.roller if winner == "initiator" else dfd.roller, event.winner)
            case SaveResolved(saver=saver, opposing=opp, success=success):
                yield from self._side(seq, saver, state)
                yield from self._side(seq, opp, state)
                yield from _compare(seq, "C15", "save outcome", save_succeeds(saver.total, opp.total), success)
            case HitDetermined():
                yield from self._hit(seq, event, state, rec.schema_version)
            case DamageResolved():
                yield from self._damage(seq, event, state, rec.schema_version)
            case ResourceChanged():
                yield from self._resource(seq, event, state)
            case AmbushDifficultySet():
                yield from self._ambush(seq, event, state)
            case SurpriseDetermined():
                yield from self._side(seq, event.perception, state)
                yield from _compare(seq, "C18", f"{event.who}'s surprise tier",
                                    surprise_tier(event.perception.total, event.difficulty), event.tier)
                yield from _compare(seq, "C17", "Ambush Difficulty used", self.difficulty, event.difficulty)
            case InitiativeRolled():
                yield from self._side(seq, event.check, state)
                partial = any(m.value == PARTIAL_SURPRISE_INITIATIVE and "Partial" in m.source
                              for m in event.check.modifiers)
                yield from _compare(seq, "C18", f"{event.who}'s Partial Surprise -5",
                                    state.surprise.get(event.who) == "partial", partial)
            case InitiativeRollOff():
                for side in event.rolls:
                    yield from self._side(seq, side, state)
            case TurnStarted() | TurnSkipped():
                yield from _compare(seq, "C19", "whose turn it is in initiative order", turn, event.who)
            case InitiativeOrderSet():
                expected = tuple(w for g in state.ranking for w in g)
                yield from _compare(seq, "C19", "initiative order", expected, event.order)
            case _:
                return

    def _undo(self, rec: StoredEvent, state: FightState) -> Iterator[Finding]:
        """C-undo: an undo voids the live events from a safe point to the last live one."""
        undo = rec.event
        assert isinstance(undo, Undone)
        target = self.targets.get(undo.from_seq)
        if target is None or undo.from_seq in self.voided_now:
            yield Finding(seq=rec.seq, rule="undo", what=f"seq {undo.from_seq} does not start a live command")
        elif not is_undo_point(target.before, target.event, target.seq, target.batch):
            yield Finding(seq=rec.seq, rule="undo", what=f"seq {undo.from_seq} is not a point an undo may go back "
                                                         "to (a command's first event, no action in progress)")
        yield from _compare(rec.seq, "undo", "an undo reaches the last live event", state.live_seq, undo.to_seq)

    def _ambush(self, seq: int, event: AmbushDifficultySet, state: FightState) -> Iterator[Finding]:
        """C17: the difficulty from the Stealth rolls by the time-waited table (or a preset, taken as given)."""
        for side in event.stealth:
            yield from self._side(seq, side, state)
        if event.stealth and event.time_waited is not None:
            expected = ambush_difficulty([s.total for s in event.stealth], event.time_waited)
            yield from _compare(seq, "C17", "Ambush Difficulty", expected, event.difficulty)
        else:
            yield from _compare(seq, "C17", "preset Ambush Difficulty", self.preset, event.difficulty)
        self.difficulty = event.difficulty

    def _rolled(self, seq: int, rolled: DiceRolled, state: FightState) -> Iterator[Finding]:
        """The roll counter, the faces, the dice-source policy and the die's provenance; a seeded die against its
        seed (:class:`SeedCheck`)."""
        yield from _compare(seq, "dice", "roll counter", state.rolls + 1, rolled.counter)
        self.batch_rolls[rolled.counter] = (seq, rolled)
        for die in rolled.dice:
            if die.face > die.sides:
                yield Finding(seq=seq, rule="dice", what="die face larger than the die",
                              expected=f"1..{die.sides}", found=str(die.face))
        mode = state.dice_mode
        carried = "scripted" if mode == "scripted" else "manual"  # faces the command carries (its command_issued)
        if rolled.source == "seeded" and self.seeds.commitment is None:
            yield Finding(seq=seq, rule="dice", what="a die labelled seeded in a fight without a seed commitment",
                          expected=str(mode), found="seeded")
        elif self.batch_faces and self.faces_left and rolled.source not in (carried, mode):
            # while faces are left a die is typed (the faces') or the fight's own: a die of a combatant whose dice
            # are not physical, rolled from the seed between typed ones (docs/server.md, "Physical dice")
            yield Finding(seq=seq, rule="dice", what=f"a {rolled.source} die while faces the command carried were "
                          f"left, in a fight whose dice are {mode} (relabelled?)",
                          expected=carried if carried == mode else f"{carried} or {mode}",
                          found=rolled.source)
        elif self.batch_faces and not self.faces_left and rolled.source != mode:  # after the faces: the fight's (C29)
            yield Finding(seq=seq, rule="dice", what=f"a {rolled.source} die after the faces the command carried ran "
                          f"out, in a fight whose dice are {mode}", expected=str(mode), found=rolled.source)
        elif not self.batch_faces and mode is not None and rolled.source != mode:
            yield Finding(seq=seq, rule="dice", what=f"a {rolled.source} die in a fight whose dice are {mode}: no "
                          "dice_source_changed recorded a switch", expected=mode, found=rolled.source)
        typed = self.batch_faces and self.faces_left > 0
        self.faces_left = max(0, self.faces_left - len(rolled.dice)) if typed and rolled.source == carried \
            else self.faces_left
        if self.started_dice is not None and rolled.source != self.started_dice:
            how = "its faces came with the command" if typed else f"the fight's dice were {mode} then"
            faces = [d.face for d in rolled.dice]
            yield Finding(seq=seq, rule="dice", kind=PROVENANCE,
                          what=f"{rolled.roller}'s {rolled.purpose.replace('_', ' ')} roll {faces} is "
                               f"{rolled.source} in a fight whose dice are {self.started_dice} ({how})",
                          expected=self.started_dice, found=rolled.source)
        if rolled.source == "seeded":
            yield from self.seeds.rolled(seq, rolled)

    def _side(self, seq: int, side: RollTotal, state: FightState) -> Iterator[Finding]:
        """One side of a check or save, from its roll and the roller's sheet and conditions (C1, C2)."""
        found = self.batch_rolls.get(side.counter)
        rolled = found[1] if found is not None else None
        if rolled is None or rolled.roller != side.roller:
            yield Finding(seq=seq, rule="dice", what=f"{side.roller}'s roll #{side.counter} is not in this command")
        else:
            yield from _compare(seq, "dice", f"{side.roller}'s die face", rolled.dice[0].face, side.face)
        yield from _compare(seq, "C1", f"{side.roller}'s {side.attribute} bonus",
                            effective_bonus(state, side.roller, side.attribute), side.attribute_bonus)
        if side.skill is not None:
            skill = state.combatants[side.roller].sheet.skills.get(side.skill)
            yield from _compare(seq, "C2", f"{side.roller}'s {side.skill} level", skill.level if skill else 0,
                                side.skill_level)
        total = roll_total(side.face, side.attribute_bonus, side.skill_level, (m.value for m in side.modifiers))
        yield from _compare(seq, "roll primitive", f"{side.roller}'s total", total, side.total)

    def _hit(self, seq: int, event: HitDetermined, state: FightState, version: int) -> Iterator[Finding]:
        """Hit total (C5), defense (C10, C11, Active Defense), hit (ties to the defender) and crit (C7); the totals
        as the line's schema ``version`` recorded them (:func:`~omen_core.events.as_written_by`)."""
        frame = state.pending
        if not isinstance(frame, AttackFrame) or frame.hit_roll is None:
            yield Finding(seq=seq, rule="lifecycle", what="a hit determined outside an attack with a hit roll")
            return
        attack, defense, crit = hit_numbers(state, frame)
        yield from _compare(seq, "C5", "hit total", as_written_by(attack, version), event.attack)
        yield from _compare(seq, "C11", "defense", as_written_by(defense, version), event.defense)
        yield from _compare(seq, "C7", "crit check", crit, event.crit_check)
        yield from _compare(seq, "§Hit Determination", "hit", attack.total > defense.total, event.hit)
        yield from _compare(seq, "C7", "crit", event.hit and crit.exceeds, event.crit)

    def _damage(self, seq: int, event: DamageResolved, state: FightState, version: int) -> Iterator[Finding]:
        """The damage formula (C12) for an attack's own damage (as the line's schema ``version`` recorded it), and
        mitigation (C13) for all damage."""
        frame = state.pending
        if isinstance(frame, AttackFrame) and frame.determination is not None and frame.determination.hit:
            # the attack's own damage is the first its weapon names (an ability answering the hit may deal its own
            # before it, C38; a branch's consequences come after it, C25): that one is C12's formula
            own = frame.weapon.label if frame.weapon is not None else "unarmed"
            if event.source == own and not any(d.source == own for d in frame.damage):
                yield from _compare(seq, "C12", "damage terms", as_written_by(damage_terms(state, frame), version),
                                    event.terms)
        t = event.terms
        total = (t.dice + t.primary_bonus + t.crit_bonus + t.weapon_damage + sum(t.ability_dice)
                 + sum(m.value for m in t.modifiers))
        yield from _compare(seq, "C12", "raw damage", total, t.raw)
        steps, final = mitigation_for(state, event.target, t.raw, event.damage_type, spell=event.spell)
        yield from _compare(seq, "C13", "mitigation steps", list(steps), list(event.steps))
        yield from _compare(seq, "C13", "final damage", final, event.final)
        chosen = frame.will_choice.convert if frame is not None and frame.step is Step.WILL_CHOSEN \
            and frame.will_choice is not None else None
        resource, overflow = landing(state, event.target, event.damage_type, final, chosen)
        yield from _compare(seq, "C13", "resource hit", resource, event.resource)
        yield from _compare(seq, "C31", "damage beyond the Will left (to HP)", overflow, event.overflow)

    def _resource(self, seq: int, event: ResourceChanged, state: FightState) -> Iterator[Finding]:
        current = getattr(state.combatants[event.who], event.resource)
        yield from _compare(seq, "C3", f"{event.who}'s {event.resource} before", current, event.before)
        frame = state.pending
        dealt = [d for d in frame.damage if d.target == event.who] if frame is not None else []
        if dealt:
            last = dealt[-1]
            converted = last.resource == "will"
            if event.resource == "will":
                amount = last.final - last.overflow if converted else 0
            else:
                amount = last.overflow if converted else last.final
            yield from _compare(seq, "C31" if converted else "C13", f"{event.who}'s {event.resource} after the "
                                f"damage", max(event.before - amount, 0), event.after)

    def report(self) -> Report:
        """The audit's report."""
        info = self.walk_info
        undone = info.landmarks.undos if info is not None else ()
        last = self.last
        audit = _audit_words(self.commands, self.by_event - self.lost, self.lost)
        notes = list(self.notes)
        if self.by_event > self.lost:  # batches of a log of schema version 1 (no command recorded)
            notes.append(f"audited {audit}; docs/verify.md says what a re-sealed log of schema version 1 can fake")
        elif self.lost:  # only batches whose command line is lost
            notes.append(f"audited {audit}")
        return Report(fight_id=info.fight_id if info is not None else "", events=self.count,
                      seeded_dice=self.seeds.seeded, seed_revealed=self.seeds.known, findings=_by_seq(self.findings),
                      undone=tuple(undone), notes=tuple(notes), event_by_event=self.by_event, audit=audit,
                      head=Head(seq=last.seq, hash=last.hash) if last is not None else None,
                      redecided=self.redecided, schema_versions=tuple(sorted(self.versions)),
                      dice=self.started_dice, seeded_checked=self.seeds.checked, seed_given=self.seeds.given_used,
                      seeded_checked_given=self.seeds.checked_given,
                      seed_given_revealed=self.seeds.given_revealed if self.seeds.given_used else msgspec.UNSET)


_AS_IT_COMES.update({FightStarted: Audit._started, DiceRolled: Audit._dice_rolled,
                     DiceSourceChanged: Audit._source_changed, SeedRevealed: Audit._seed,
                     SeedCommitted: Audit._recommitted, Undone: Audit._undo,
                     AmbushStarted: Audit._note, AmbushDifficultySet: Audit._note, RoundStarted: Audit._note,
                     Redone: Audit._note})


class _Targets:
    """The audit's history for an undo back to a chosen seq: the targets it kept as it passed them, live unless
    an undo in force voids them."""

    def __init__(self, targets: dict[int, Target], voided: set[int]):
        self.targets, self.voided = targets, voided

    def target(self, seq: int) -> Target | None:
        found = self.targets.get(seq)
        return msgspec.structs.replace(found, live=seq not in self.voided) if found is not None else None


class _RecordedRuleset(msgspec.Struct):
    ruleset: msgspec.Raw
    ruleset_hash: str


class _RecordedSheet(msgspec.Struct):
    sheet: msgspec.Raw
    sheet_hash: str


class _Line(msgspec.Struct):
    event: msgspec.Raw


def _recorded_hash(rec: StoredEvent, raw: bytes) -> Iterator[Finding]:
    """The ruleset's or sheet's hash against the sha256 of its bytes as the line records them (the canonical
    encoding a writer hashed: :func:`omen_core.content.content_hash`)."""
    try:
        body = msgspec.json.decode(raw, type=_Line).event
        if isinstance(rec.event, FightStarted):
            started = msgspec.json.decode(body, type=_RecordedRuleset)
            what, recorded, found = "ruleset hash", bytes(started.ruleset), started.ruleset_hash
        else:
            joined = msgspec.json.decode(body, type=_RecordedSheet)
            what, recorded, found = "sheet hash", bytes(joined.sheet), joined.sheet_hash
    except msgspec.DecodeError as exc:
        yield Finding(seq=rec.seq, rule="content", what=f"cannot read the recorded content: {exc}")
        return
    yield from _compare(rec.seq, "content", what, hashlib.sha256(recorded).hexdigest(), found)


def _recorded_hashes(event: Event, records: Iterable[StoredEvent]) -> Event:
    """A decided set-up event with the content hash its recorded twin holds: that hash is checked on the bytes the
    line records (:func:`_recorded_hash`), so a log written before the content schema gained a field still agrees."""
    if not isinstance(event, (FightStarted, CombatantJoined)):
        return event
    for rec in records:
        if isinstance(event, FightStarted) and isinstance(rec.event, FightStarted):
            return msgspec.structs.replace(event, ruleset_hash=rec.event.ruleset_hash)
        if isinstance(event, CombatantJoined) and isinstance(rec.event, CombatantJoined):
            return msgspec.structs.replace(event, sheet_hash=rec.event.sheet_hash)
    return event


def _command_of(event: Event) -> Command | None:
    """The command a batch records: its ``command_issued``, or a set-up event that is its own command."""
    if isinstance(event, CommandIssued):
        return event.command
    if isinstance(event, FightStarted):
        return StartFight(ruleset=event.ruleset, dice_source=event.dice, seed_commitment=event.seed_commitment,
                          title=event.title)
    if isinstance(event, CombatantJoined):
        return Join(sheet=event.sheet)
    return None


def _tag(event: Event) -> str:
    return str(type(event).__struct_config__.tag)


def _rule_of(event: Event) -> str:
    """The rule an event's numbers come from (:data:`_RULES`), for a finding of the re-decision: HP or Will that
    goes up is a heal or a restoring effect (C3, C37), not damage's mitigation (C13)."""
    if isinstance(event, ResourceChanged) and event.after > event.before:
        return "C3, C37"
    return _RULES.get(_tag(event), "re-decision")


def _differences(records: list[StoredEvent], produced: list[Event]) -> Iterator[Finding]:
    """Where a batch differs from what the rules produce for its command: the first differing event, and any
    event missing or extra."""
    for rec, made in zip(records, produced, strict=False):
        want = made if rec.event == made else as_written_by(made, rec.schema_version)  # as the line's own version
        if rec.event == want:  # the same typed values (each side decoded or built through the same types)
            continue
        have = _EVENT_JSON.encode(rec.event)
        wanted = _EVENT_JSON.encode(want)
        if have != wanted:
            tag, found = _tag(want), _tag(rec.event)
            rule = _rule_of(want if found == tag else rec.event)
            yield Finding(seq=rec.seq, rule=rule,
                          what=f"the rules give a different {tag} here than the log records"
                               if found == tag else f"the rules give {tag} here where the log has {found}",
                          expected=_clipped(wanted.decode(), have.decode()),
                          found=_clipped(have.decode(), wanted.decode()))
            return
    if len(records) > len(produced):
        extra = records[len(produced)]
        yield Finding(seq=extra.seq, rule=_rule_of(extra.event),
                      what=f"the rules would not produce this {_tag(extra.event)} (nor the "
                           f"{len(records) - len(produced) - 1} event(s) after it in this command)",
                      found=_tag(extra.event))
    elif len(produced) > len(records):
        missing = produced[len(records)]
        yield Finding(seq=records[-1].seq, rule=_rule_of(missing),
                      what=f"the command's events stop short: the rules go on with {_tag(missing)} "
                           f"({len(produced) - len(records)} event(s) missing after this one)",
                      expected=_tag(missing), found="nothing (the batch ends here)")


def _totals(event: Event) -> Iterator[RollTotal]:
    """The totals an event records (a check's, a contest's two sides, a save's, an initiative's): each names the
    counter of the roll it took its face from, and the skill or attribute of the check."""
    for name in event.__struct_fields__:
        value = getattr(event, name)
        if isinstance(value, RollTotal):
            yield value


def _reroll_findings(r: _Reroll) -> Iterator[Finding]:
    for kind, gone in r.voided.items():
        roller, purpose, check, sides, _named_by = kind
        voided = "; ".join(f"{list(faces)} at seq {seq}" for seq, faces in gone)
        rolled = r.next.get(kind)
        what = (f"{check} " if check else "") + purpose.replace("_", " ")
        if rolled is not None:
            after = f"{roller}'s next {what} roll: {list(rolled[1])} at seq {rolled[0]}"
        else:
            after = f"{roller} made no {what} roll" + ("" if check else " on the same dice") + " after it"
            other = r.loose.get(kind[:2])
            if other is not None:
                article = "an" if str(other[2] or "")[:1].upper() in tuple("AEIOU") else "a"  # an AGI check
                kind_of = f"{article} {other[2]} {purpose.replace('_', ' ')}, " if other[2] else ""
                elsewhere = "" if other[2] or other[3] == sides else ", on other dice"
                after += (f" ({roller}'s next {purpose.replace('_', ' ')} roll: {kind_of}{list(other[1])} at seq "
                          f"{other[0]}{elsewhere})")
        yield Finding(seq=r.undo.seq, rule="undo", kind=REROLL,
                      what=f"the undo at seq {r.undo.seq} voided {roller}'s {what} roll {voided}; {after}",
                      expected=voided, found=f"{list(rolled[1])} at seq {rolled[0]}" if rolled
                      else "no such roll after it")


def _range_of(info: Walk | None, undo_seq: int) -> range:
    if info is None:
        return range(0)
    undo = next((u for u in info.landmarks.undos if u.seq == undo_seq), None)
    return range(undo.from_seq, undo.to_seq + 1) if undo is not None else range(0)


def _audit_words(commands: int, by_event: int, lost: int = 0) -> str:
    """Which audit a log got: its commands decided again, or (a log of schema version 1, which records no commands)
    its events checked one by one (its set-up, which is its own command, decided again); a log continued under a
    later version got both. ``lost``: batches of a later version audited event by event because the line of their
    command is missing or could not be read (a finding says which)."""
    words = "decided again" if not by_event and not lost else f"decided again ({commands} commands)" if commands else ""
    if by_event:
        v1 = ("schema version 1: no commands recorded" if not commands and not lost else
              f"{by_event} batch{'es' if by_event != 1 else ''} of schema version 1: no commands recorded")
        words = f"{words} and event by event ({v1})" if words else f"event by event ({v1})"
    if lost:
        told = (f"event by event ({lost} batch{'es' if lost != 1 else ''} whose command line is missing or "
                "unreadable: see the findings)")
        words = f"{words} and {told}" if words else told
    return words


def _affordable(seq: int, event: CostPaid, state: FightState) -> Iterator[Finding]:
    """A cost its payer has left to pay (C20, C22): Bonus Actions, HP and Will of its own; an Action or a Movement
    Action of its own turn (one paid off-turn, by a reaction, takes nothing from a turn)."""
    fighter = state.combatants.get(event.who)
    if event.resource in ("bonus_action", "hp", "will") and fighter is not None:
        left = {"bonus_action": fighter.bonus_actions, "hp": fighter.hp, "will": fighter.will}[event.resource]
    elif event.resource == "action" and state.turn == event.who:
        left = state.turn_actions
    elif event.resource == "movement_action" and state.turn == event.who:
        left = state.turn_movement
    else:
        return
    if event.amount > left:
        yield Finding(seq=seq, rule="C20, C22", what=f"{event.who} pays {event.amount} {event.resource} for "
                                                     f"{event.purpose} with {left} left", expected=f"at most {left}",
                      found=str(event.amount))


def _actions(state: FightState) -> set[int]:
    """The actions in progress in ``state`` (their ids, as their events carry them)."""
    return {frame.action for frame in state.stack}


def _next_turn(state: FightState) -> int:
    """Where the turn order stands in ``state`` (an undo or redo moved it): the index of the next turn to start
    in the round, the turn's owner being the one whose turn it is."""
    return state.order.index(state.turn) + 1 if state.turn in state.order else 0


# -- entry points ---------------------------------------------------------------------------------------------


def _audit(source: Source, seed: bytes | None, heads: Iterable[Head], canonical: bool) -> Report:
    audit = Audit(seed, heads)
    walk(source, audit, strict=False, canonical=canonical)
    return audit.report()


def verify_store(store: Any, fight_id: str, seed: bytes | None = None, heads: Iterable[Head] = ()) -> Report:
    """Audit a stored fight (one streaming pass over its lines; each line's bytes checked canonical)."""
    return _audit(StoreSource(store, fight_id), seed, heads, canonical=True)


class _TornLines(LinesSource):
    """Lines whose last was cut off mid-write (no newline), read as a store reads such a file: the intact lines,
    then :class:`~omen_core.errors.TornTail`, so the audit says it in the same words, at the same seq and line, as
    ``omen verify`` says it of the file (docs/fixtures.md quotes it)."""

    def __init__(self, lines: list[bytes], torn: bytes):
        super().__init__(lines)
        self.intact, self.torn = len(lines), torn

    def lines(self, after_seq: int) -> Iterator[list[bytes]]:
        """The intact lines after ``after_seq``, then the torn tail raised."""
        yield from super().lines(after_seq)
        raise TornTail(self.where, self.intact + 1, self.torn)


def verify_lines(lines: Iterable[bytes], seed: bytes | None = None, heads: Iterable[Head] = ()) -> Report:
    """Audit a log from its raw JSON Lines bytes: every line must decode and be written canonically (so any
    edited byte is found even where the values would survive), then every other check; a last line without its
    newline is a torn tail, found as the audit of a file finds it."""
    held = list(lines)
    torn = held.pop() if held and not held[-1].endswith(b"\n") else None
    source = _TornLines(held, torn) if torn is not None else LinesSource(held)
    if held and not source.fight_id:
        raise BadInput("not a fight log: its first line does not name a fight")
    return _audit(source, seed, heads, canonical=True)


def verify(records: Iterable[StoredEvent], seed: bytes | None = None, heads: Iterable[Head] = ()) -> Report:
    """Audit a log of decoded events (they are encoded again, so this is the audit of the log they make)."""
    return verify_lines([encode_line(r) + b"\n" for r in records], seed, heads)

