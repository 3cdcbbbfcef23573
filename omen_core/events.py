"""Every event type of a fight, the stored envelope around it, the hash chain that seals it, and upcasters.

Events are frozen, tagged msgspec Structs forming one union, :data:`Event`.
A stored event (:class:`StoredEvent`) wraps one in an envelope: fight id,
``seq`` (1, 2, 3... without gaps), ``batch`` and ``batch_size`` (the seq of
the first event of the command that wrote it, and how many events that
command wrote), ``recorded_at`` (integer milliseconds UTC from an injected
clock), schema version, ``prev_hash`` and ``hash``.

Every batch but a set-up one (``fight_started``, ``combatant_joined``, whose
event is its command) opens with :class:`CommandIssued`: the command that
produced it, in the scenario vocabulary, so an audit can decide it again.

The chain: ``hash = sha256(prev_hash || body)``, where ``prev_hash`` enters
as its 32 raw bytes (the first event's is :data:`GENESIS_HASH`, 32 zero
bytes) and the body is the stored line *without* its ``hash`` field. The body
holds the envelope's ``salt`` (schema version 4): 16 random bytes per event,
so that a hash is a *hiding* commitment: a seat shown an event with fields
withheld cannot confirm a guess of them by hashing candidates, because it is
never sent that event's salt (docs/events.md, "Why the salt"). A
line is written canonically (msgspec JSON, fields in declaration order, no
whitespace), with ``hash`` last, so the body is the line with
``,"hash":"..."`` cut out before the final ``}``: any tool can recompute the
chain from the raw lines (:func:`line_hash`), whatever schema version wrote
them.

>>> e = seal("demo", 1, 0, GENESIS_HASH, SeedRevealed(seed="00ff"), salt="5a" * 16)
>>> line = encode_line(e)
>>> line[:68]
b'{"fight_id":"demo","seq":1,"batch":1,"batch_size":1,"recorded_at":0,'
>>> decode_line(line) == e and hash_ok(e) and line_hash(GENESIS_HASH, line) == e.hash
True
>>> b'"salt":"5a5a' in line and len(fresh_salt()) == 2 * SALT_BYTES
True
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Annotated, Any, Literal, TypeVar, get_args

import msgspec

from .commands import UNDO_COMMANDS, Command
from .content import Branches, CombatantSheet, Ruleset, SaveEffect
from .defaults import settle_defaults
from .errors import ChainBroken, UnexpectedEvent
from .limits import MAX_FACES
from .parts import (
    DiceSourceKind,
    Die,
    Encircled,
    Modifier,
    Part,
    PoolTag,
    RollPurpose,
    RollTotal,
    Sequence_,
    Situational,
    Term,
    bonus_terms,
    modifier_terms,
)
from .rules.ambush import SurpriseTier, TimeWaited
from .rules.attack import ActiveDefense, AttackKind

Dice = Annotated[tuple[Die, ...], msgspec.Meta(max_length=MAX_FACES)]

__all__ = [
    "DYING_REASON",
    "DEFERRED_SOURCE",
    "SCHEMA_VERSION",
    "GENESIS_HASH",
    "SALT_BYTES",
    "Salts",
    "fresh_salt",
    "fresh_salts",
    "random_salts",
    "keyed_salts",
    "is_salt",
    "DiceSourceKind",
    "PoolTag",
    "RollPurpose",
    "Die",
    "Modifier",
    "RollTotal",
    "EventBase",
    "FightStarted",
    "CombatantJoined",
    "CommandIssued",
    "DiceSourceChanged",
    "DiceRolled",
    "StaticCheckResolved",
    "ContestResolved",
    "SaveResolved",
    "SeedRevealed",
    "SeedCommitted",
    "Encircled",
    "Situational",
    "AttackDeclared",
    "SaveCalled",
    "Ticking",
    "CostPaid",
    "ActiveDefenseWindowOpened",
    "ActiveDefenseWindowSkipped",
    "ActiveDefenseChosen",
    "ActiveDefenseDeclined",
    "HitTotal",
    "ActiveDefenseTotal",
    "DefenseTotal",
    "CritCheck",
    "HitDetermined",
    "RoutingWindowOpened",
    "DamageRouted",
    "WillConversionOffered",
    "WillConversionChosen",
    "MitigationStep",
    "DamageTerms",
    "DamageResolved",
    "ResourceChanged",
    "ConditionApplied",
    "ConditionCleared",
    "ActionSettled",
    "ActionCancelled",
    "AmbushStarted",
    "AmbushDifficultySet",
    "SurpriseDetermined",
    "InitiativeRolled",
    "InitiativeTied",
    "InitiativeRollOff",
    "InitiativeAgreed",
    "InitiativeOrderSet",
    "RoundStarted",
    "RoundEnded",
    "TurnStarted",
    "TurnSkipped",
    "TurnEnded",
    "BonusActionsRefilled",
    "ConditionTicked",
    "EngagementChanged",
    "WeaponDrawn",
    "Disengaged",
    "MovementDeclared",
    "AbilityUsed",
    "MomentReached",
    "Moved",
    "ReactionWindowOpened",
    "ReactionPassed",
    "ReactionWindowClosed",
    "CatchWindowOpened",
    "CatchAnswered",
    "DecisionOpened",
    "DecisionAnswered",
    "DecisionClosed",
    "CombatantLeft",
    "FightEnded",
    "Undone",
    "Redone",
    "UNDO_MARKERS",
    "RECORDS",
    "HEADER_EVENTS",
    "LANDMARKS",
    "Event",
    "EVENT_TYPES",
    "Unsealed",
    "StoredEvent",
    "is_hex64",
    "is_undo_batch",
    "canonical_body",
    "chain_hash",
    "line_hash",
    "line_body",
    "seal",
    "encode_line",
    "seal_line",
    "Sealed",
    "lines_of",
    "decode_line",
    "UPCASTERS",
    "upcast",
    "FacesGiven",
    "MODIFIER_ORIGINS",
    "as_written_by",
    "hash_ok",
    "chain_breaks",
    "verify_chain",
    "event_schema",
]

#: The format of the lines written now. Version 1 (issue 1 to 9) lacked ``batch_size`` and ``command_issued``
#: and called a roll total's ``counter`` ``roll``; version 2 lacked the fields and events C30-C35 added (all
#: with defaults); version 3 lacked the envelope's ``salt``; version 4 wrote every field, defaults included
#: (from version 5 a field at its default is left out); version 5 recorded no modifier's ``origin`` or ``owner``
#: (:class:`~omen_core.parts.Modifier`: a condition's or an ability's term read as situational, a defense's as an
#: ability's); :data:`UPCASTERS` read them all.
SCHEMA_VERSION = 6
#: The first schema version whose modifiers record their ``origin`` and ``owner``.
MODIFIER_ORIGINS = 6
GENESIS_HASH = "0" * 64
#: How many random bytes salt each event's hash (schema version 4): 16, so that no guess of an event's withheld
#: content can be confirmed against its hash without the salt (2**128 salts to try for each guess).
SALT_BYTES = 16

#: Where the salts of a fight's events come from: ``salts(fight_id, seq)`` gives the lowercase hex salt of the
#: event at ``seq``. A live fight's are random (:func:`random_salts`); tests, golden fixtures and simulated fights
#: that must come out the same every time derive theirs from a key (:func:`keyed_salts`).
Salts = Callable[[str, int], str]


def fresh_salt() -> str:
    """A new random salt, :data:`SALT_BYTES` bytes from the operating system's CSPRNG, as hex."""
    return secrets.token_hex(SALT_BYTES)


def random_salts(_fight_id: str, _seq: int) -> str:
    """The salts of a live fight: random, a new one for every event (:data:`Salts`)."""
    return fresh_salt()


def fresh_salts(count: int) -> list[str]:
    """``count`` new random salts, as :func:`fresh_salt` gives them, drawn from the CSPRNG at once (a batch's:
    one call to the operating system instead of one an event)."""
    pool = secrets.token_hex(SALT_BYTES * count)
    width = 2 * SALT_BYTES
    return [pool[i:i + width] for i in range(0, width * count, width)]


def keyed_salts(key: bytes) -> Salts:
    """Salts derived from ``key``: ``HMAC-SHA256(key, fight_id NUL seq)``, cut to :data:`SALT_BYTES`. The same
    fight gets the same salts every time (golden fixtures, simulated fights regenerated by index); they hide only
    from whoever does not hold ``key``, so a key that is public (a fixture's) hides nothing.

    >>> salts = keyed_salts(b"fixture")
    >>> salts("duel", 1) == salts("duel", 1) != salts("duel", 2)
    True
    """
    def salts(fight_id: str, seq: int) -> str:
        message = fight_id.encode() + b"\0" + str(seq).encode()
        return hmac.digest(key, message, "sha256")[:SALT_BYTES].hex()
    return salts


def is_salt(value: str) -> bool:
    """Whether ``value`` is a salt of the form schema version 4 requires: 16 to 64 bytes as lowercase hex (checked
    with string methods: every event of an audit is checked).

    >>> is_salt("5a" * 16), is_salt("5a" * 15), is_salt("5A" * 16), is_salt("5g" * 16)
    (True, False, False, False)
    """
    return 32 <= len(value) <= 128 and len(value) % 2 == 0 and not value.strip("0123456789abcdef")

Hex64 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$(?!\n)")]
_HEX64 = re.compile(r"[0-9a-f]{64}")


def is_hex64(value: str) -> bool:
    """Whether ``value`` is a sha256 digest in lowercase hex (checked where hashes are compared)."""
    return _HEX64.fullmatch(value) is not None


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class EventBase(msgspec.Struct, frozen=True, tag_field="type", tag=_snake,
                forbid_unknown_fields=True, kw_only=True, gc=False, omit_defaults=True):
    """Base of every event type; the ``type`` tag is the class name in snake_case.

    Events are immutable values (frozen, holding only values) that can form no reference cycle, so the garbage
    collector does not track them (``gc=False``, as for the envelope and the state): a fight's log in memory
    costs the collector nothing. An event is written without the fields at their defaults (schema version 5),
    so a field added with a default changes no bytes of an event that leaves it there; an event type with a
    default that an equal value may not be (a string, a struct) settles it in ``__post_init__``
    (:mod:`omen_core.defaults`)."""


class FightStarted(EventBase, frozen=True, kw_only=True):
    """A fight's header: the whole ruleset and its hash, the dice source and, for seeded dice, the seed commitment."""

    ruleset: Ruleset
    ruleset_hash: Hex64
    dice: DiceSourceKind
    seed_commitment: Hex64 | None = None
    title: str = ""


class CombatantJoined(EventBase, frozen=True, kw_only=True):
    """A combatant enters the fight; the whole sheet (and its hash) is recorded so the log stands alone."""

    sheet: CombatantSheet
    sheet_hash: Hex64


class FacesGiven(Part, frozen=True, kw_only=True):
    """A run of a command's faces (``dice``, in C29 order) and who typed them."""

    by: str
    faces: Annotated[int, msgspec.Meta(ge=1)]


class CommandIssued(EventBase, frozen=True, kw_only=True):
    """The command that produced this batch, as it was given (the scenario vocabulary), and who gave it.

    The first event of every batch but a set-up one; ``omen verify`` decides
    it again on the state before the batch and requires the same events.
    ``faces_by``: who typed the faces the command carries, run by run in their
    order, where not all were typed by ``by`` (a command a player staged whose
    dice the GM typed: docs/server.md, "Players roll their own dice"); empty
    otherwise (schema version 6).
    """

    command: Command
    by: str = ""
    faces_by: tuple[FacesGiven, ...] = ()


class DiceSourceChanged(EventBase, frozen=True, kw_only=True):
    """The fight's dice source changes (the GM switches from seeded to physical dice, say): the dice of
    another source than the fight's are only allowed after this event (or when a command carries its faces)."""

    before: DiceSourceKind
    after: DiceSourceKind
    reason: str = ""


class DiceRolled(EventBase, frozen=True, kw_only=True):
    """One roll: why, who, every die with its pool tag, and where the faces came from.

    ``counter`` numbers the rolls of a fight from 1; seeded faces are derived
    from (seed, fight id, counter, die index). A reroll (C39: purpose ``reroll``)
    is a roll of one die of its own, right after the roll it changes:
    ``rerolls`` is that roll's counter and ``die`` the index of the die whose
    face it replaces (both faces stay in the log; the new one counts).
    """

    counter: Sequence_
    purpose: RollPurpose
    roller: str
    dice: Dice
    source: DiceSourceKind
    action: Sequence_ | None = None
    rerolls: Sequence_ | None = None
    die: Annotated[int, msgspec.Meta(ge=0)] | None = None


class StaticCheckResolved(EventBase, frozen=True, kw_only=True):
    """A check against a set difficulty (C16): success iff total > difficulty; a tie is a tie."""

    check: RollTotal
    difficulty: int
    outcome: Literal["success", "tie", "failure"]


class ContestResolved(EventBase, frozen=True, kw_only=True):
    """A contested check (C16): the initiator wins iff its total is higher; ties go to the defender."""

    initiator: RollTotal
    defender: RollTotal
    winner: str
    tie: bool


class SaveResolved(EventBase, frozen=True, kw_only=True):
    """A save (C15): one die per side; the saver succeeds iff its total >= the opposing total. Outside any action
    (``action`` None) it is a condition's save at its timing (save ends, C40): ``effect`` names the condition."""

    action: Sequence_ | None
    effect: str
    saver: RollTotal
    opposing: RollTotal
    success: bool


# -- the action lifecycle (combat.txt §How a Single Action Resolves) -------------------------


class AttackDeclared(EventBase, frozen=True, kw_only=True):
    """An attack is declared: who, whom, with what (``weapon`` None = unarmed), the claims and branches."""

    action: Sequence_
    attacker: str
    target: str
    weapon: str | None
    kind: AttackKind
    situational: Situational = Situational()
    rage: bool = False
    damage_modifiers: tuple[Modifier, ...] = ()
    branches: Branches = Branches()
    reaction: Literal["attack_of_opportunity", "interrupt", "ability"] | None = None
    reacting_to: Sequence_ | None = None

    def __post_init__(self) -> None:
        settle_defaults(self)


class SaveCalled(EventBase, frozen=True, kw_only=True):
    """An effect calls for a save: the caller opposes, the saver rolls (C15, C25); ``ability``: the caller's ability
    (C37) whose effect it is, used on the caller's turn (absent: the effect given by the command)."""

    action: Sequence_
    caller: str
    saver: str
    effect: SaveEffect
    ability: str | None = None


class AbilityUsed(EventBase, frozen=True, kw_only=True):
    """An ability used on its owner's turn (C37: as an Action, a Bonus Action or a Free Action) on ``target``:
    an action of its own, whose costs and effects follow in written order (C25). ``ability`` is its id,
    ``name`` what the table calls it."""

    action: Sequence_
    who: str
    ability: str
    name: str
    target: str


class Ticking(Part, frozen=True, kw_only=True):
    """Where the conditions' tick a save-ends save was made in stands (C40): its ``timing``, and the conditions it
    has still to do, in the order they were applied: those whose application number is above ``after`` (the
    saved condition's) and at most ``through`` (the last applied when the tick began)."""

    timing: Literal["turn_start", "turn_end", "round_end"]
    after: int
    through: int


class MomentReached(EventBase, frozen=True, kw_only=True):
    """A moment that abilities answer outside any other action has come (C38): the start or the end of ``who``'s
    turn, the end of the round (``who`` None), a check resolved (C16): ``who``'s static check, or a contest
    ``who`` started against ``other``, with ``outcome`` ``who``'s (a tie is no success); or a save-ends save
    resolved as its condition ticked (C40, C15): ``who`` the saver, ``other`` who applied ``condition``,
    ``outcome`` the saver's, and ``ticking`` where the tick goes on once the moment settles. Recorded only when a
    triggered ability of that moment may be used then: an action of its own, whose decision points are offered
    one at a time (C38) and which settles once they close; the turn, the round, the tick or the fight then goes
    on."""

    action: Sequence_
    moment: Literal["turn.start", "turn.end", "round.end", "check.resolved", "save.resolved"]
    round: int
    who: str | None = None
    other: str | None = None
    outcome: Literal["success", "failure"] | None = None
    condition: str | None = None
    ticking: Ticking | None = None


class CostPaid(EventBase, frozen=True, kw_only=True):
    """A cost is paid through the ledger: an Action, a Movement Action, Bonus Actions (C20, C22), HP or Will (an
    extension's cost, C41), and what for."""

    action: Sequence_
    who: str
    resource: Literal["action", "movement_action", "bonus_action", "hp", "will"]
    amount: Annotated[int, msgspec.Meta(ge=0)]
    purpose: str


class ActiveDefenseWindowOpened(EventBase, frozen=True, kw_only=True):
    """The defender may answer with an Active Defense (C8): the totals it has seen and what it may choose."""

    action: Sequence_
    defender: str
    attack_total: int
    base_defense: int
    eligible: tuple[ActiveDefense, ...]
    ineligible: tuple[str, ...] = ()


class ActiveDefenseWindowSkipped(EventBase, frozen=True, kw_only=True):
    """No Active Defense window for this attack, and why (C8)."""

    action: Sequence_
    defender: str
    reason: str


class ActiveDefenseChosen(EventBase, frozen=True, kw_only=True):
    """The defender answers the window with Dodge, Parry (with a weapon) or Block (C8, C9)."""

    action: Sequence_
    defender: str
    defense: ActiveDefense
    weapon: str | None = None


class ActiveDefenseDeclined(EventBase, frozen=True, kw_only=True):
    """The defender lets the window pass without an Active Defense (C8)."""

    action: Sequence_
    defender: str


class HitTotal(Part, frozen=True, kw_only=True):
    """The attacker's side, term by term (C5): Σ primary + Σ FCS + static bonus + situational."""

    attribute: str
    primary_dice: tuple[int, ...]
    fcs_dice: tuple[int, ...]
    attribute_bonus: int
    weapon_hit_bonus: int
    training_bonus: int
    situational: tuple[Modifier, ...] = ()
    total: int

    def terms(self, conditions: int = 0) -> tuple[Term, ...]:
        """C5 term by term, adding up to ``total``: each primary and FCS die, the attribute bonus (split as
        :meth:`RollTotal.terms` does), the weapon's hit bonus, training, the situational modifiers."""
        return (*(Term("primary", face, "dice", "primary_die") for face in self.primary_dice),
                *(Term("FCS", face, "dice", "fcs_die") for face in self.fcs_dice),
                *bonus_terms(self.attribute, self.attribute_bonus, conditions),
                Term("weapon", self.weapon_hit_bonus, "weapon", "weapon_hit_bonus"),
                Term("training", self.training_bonus, "training", "training_bonus"),
                *modifier_terms(self.situational, "situational", "situational"))


class ActiveDefenseTotal(Part, frozen=True, kw_only=True):
    """An Active Defense's addition (§Active Defense): die + attribute bonus + Parry or Block Rating."""

    defense: ActiveDefense
    attribute: str
    die: int
    attribute_bonus: int
    rating: int = 0
    amount: int

    def terms(self, conditions: int = 0) -> tuple[Term, ...]:
        """§Active Defense term by term, adding up to ``amount``: the die, the attribute bonus, the Parry or Block
        Rating (of the weapon or shield)."""
        return (Term(self.defense, self.die, "dice", "active_die"),
                *bonus_terms(self.attribute, self.attribute_bonus, conditions, "active_bonus"),
                Term(f"{self.defense} rating", self.rating, "weapon", "active_rating"))


class DefenseTotal(Part, frozen=True, kw_only=True):
    """The defender's side: base defense (RES die + Defense Rating, C10, C11) plus any Active Defense.

    ``defense_rating = res_bonus + armor + Σ modifiers`` (C11: Defense Rating is RES bonus + armor rating +
    modifiers): a modifier contributed to the defense (an ally's ability adding its Block Rating, say) is part of
    the Defense Rating, so of ``base`` and ``total``, and it counts before the Active Defense window (C8); it is
    not part of the RES portion of the crit check (C7).
    """

    res_die: int | None
    res_bonus: int
    armor: int
    armor_applies: bool
    modifiers: tuple[Modifier, ...] = ()
    defense_rating: int
    base: int
    active: ActiveDefenseTotal | None = None
    total: int

    def base_terms(self, conditions: int = 0) -> tuple[Term, ...]:
        """The base defense term by term, adding up to ``base``: the RES die (none when helpless, C10), the RES
        bonus, the armor where it applies, the modifiers contributed to the defense (each an ability's, named by
        its source: ``ability:<source>``), C11. A helpless defender's missing die is a term of 0 (``no_res_die``)."""
        die = (Term("RES", self.res_die, "dice", "res_die") if self.res_die is not None
               else Term("no RES die (C10)", 0, "rule", "no_res_die"),)
        return (*die, *bonus_terms("RES", self.res_bonus, conditions, "res_bonus"),
                Term("armor", self.armor, "sheet", "armor"),
                *(Term(m.source, m.value, m.origin or f"ability:{m.source}", "defense_modifier")
                  for m in self.modifiers))

    def terms(self, conditions: int = 0) -> tuple[Term, ...]:
        """The total defense term by term, adding up to ``total``: :meth:`base_terms`, then any Active Defense's."""
        return (*self.base_terms(conditions), *(self.active.terms(conditions) if self.active is not None else ()))


class CritCheck(Part, frozen=True, kw_only=True):
    """C7: the FCS portion (Σ FCS dice + FCS bonus) against the RES portion (RES die + RES bonus)."""

    fcs_dice: tuple[int, ...]
    fcs_bonus: int
    fcs_portion: int
    res_die: int | None
    res_bonus: int
    res_portion: int
    exceeds: bool

    def fcs_terms(self, conditions: int = 0) -> tuple[Term, ...]:
        """The FCS portion term by term (C7), adding up to ``fcs_portion``: the FCS dice and the FCS bonus."""
        return (*(Term("FCS", face, "dice", "fcs_die") for face in self.fcs_dice),
                *bonus_terms("FCS", self.fcs_bonus, conditions, "fcs_bonus"))

    def res_terms(self, conditions: int = 0) -> tuple[Term, ...]:
        """The RES portion term by term (C7, C10), adding up to ``res_portion``: the RES die (if any) and bonus."""
        die = (Term("RES", self.res_die, "dice", "res_die"),) if self.res_die is not None else ()
        return (*die, *bonus_terms("RES", self.res_bonus, conditions, "res_bonus"))


class HitDetermined(EventBase, frozen=True, kw_only=True):
    """Hit iff attack total > total defense; crit iff the FCS portion exceeds the RES portion and it hits."""

    action: Sequence_
    attack: HitTotal
    defense: DefenseTotal
    hit: bool
    crit_check: CritCheck
    crit: bool


class RoutingWindowOpened(EventBase, frozen=True, kw_only=True):
    """A Rogue may route one rolled die of the hit pool to damage (C12); the attacker chooses."""

    action: Sequence_
    attacker: str
    dice: Dice


class DamageRouted(EventBase, frozen=True, kw_only=True):
    """The Rogue's choice: the index of the hit-pool die whose result feeds damage (None: the primary dice)."""

    action: Sequence_
    attacker: str
    die: int | None


#: How each step of C13 enters the damage as a term: the sign of its ``amount`` (the first three take it away; the
#: floor and the incoming modifiers record the change they made) and where it comes from.
MITIGATION_TERMS: dict[str, tuple[int, str]] = {
    "resistance": (-1, "sheet"), "physical rollover": (-1, "sheet"), "armor": (-1, "sheet"),
    "floor": (1, "rule"), "incoming": (1, "sheet")}


class MitigationStep(Part, frozen=True, kw_only=True):
    """One step of C13: its name, the amount it took away (or added), and the damage after it."""

    step: str
    amount: int
    after: int

    def terms(self) -> tuple[Term, ...]:
        """The step as a term of the damage: a subtraction is a term with a negative value (resistance 2 is
        ``-2``), so the raw damage and every step's terms add up to the final damage (:meth:`DamageResolved.
        mitigation_terms`)."""
        sign, source = MITIGATION_TERMS.get(self.step, (-1, "rule"))
        return (Term(self.step, sign * self.amount, source, "mitigation"),)


class DamageTerms(Part, frozen=True, kw_only=True):
    """C12's formula, term by term; ``raw`` is their sum. ``routed_die`` is the Rogue's chosen die."""

    dice: int
    routed_die: int | None = None
    primary_bonus: int = 0
    crit_bonus: int = 0
    weapon_damage: int = 0
    ability_dice: tuple[int, ...] = ()
    ability_sources: tuple[str, ...] = ()
    modifiers: tuple[Modifier, ...] = ()
    raw: int

    def terms(self) -> tuple[Term, ...]:
        """C12 term by term, adding up to ``raw``: the dice result (or the routed die), the primary bonus, the
        crit's extra bonus, WD, each ability damage die (named by ``ability_sources``, the ability that added it;
        Brute rage's, recorded without, as ``rage``), the damage modifiers."""
        dice = "routed die" if self.routed_die is not None else "dice"
        sources = self.ability_sources or ("rage",) * len(self.ability_dice)
        return (Term(dice, self.dice, "dice", "damage_dice"),
                Term("bonus", self.primary_bonus, "sheet", "primary_bonus"),
                Term("crit bonus", self.crit_bonus, "rule", "crit_bonus"),
                Term("WD", self.weapon_damage, "weapon", "weapon_damage"),
                *(Term(name, face, f"ability:{name}", "ability_die")
                  for face, name in zip(self.ability_dice, sources, strict=False)),
                *modifier_terms(self.modifiers, "situational", "damage_modifier"))


class DamageResolved(EventBase, frozen=True, kw_only=True):
    """Damage dealt to one combatant: the formula, each mitigation step (C13), the final amount and where it lands.

    With Will conversion (``resource`` "will") Will cannot go below 0: ``overflow`` is the part of the final
    damage beyond the Will left, which goes to HP (C31); ``final - overflow`` goes to Will. Outside any action
    (``action`` None) it is a condition's damage as it ticks (C25, C40): ``source`` names the condition.
    ``spell``: the damage is a spell's (C13 step 3: magical armor applies against it, mundane armor not); ``steps``:
    C13's steps in order (resistance, physical rollover, armor, floor, incoming), each with what it took away
    (or added) and the damage after it.
    """

    action: Sequence_ | None
    target: str
    damage_type: str
    source: str
    spell: bool = False
    terms: DamageTerms
    steps: tuple[MitigationStep, ...]
    final: int
    resource: Literal["hp", "will"]
    overflow: int = 0

    def mitigation_terms(self) -> tuple[Term, ...]:
        """C13 term by term, adding up to ``final``: the raw damage (C12's total), then each step's term (a
        subtraction negative: :meth:`MitigationStep.terms`)."""
        return (Term("raw damage", self.terms.raw, "rule", "raw_damage"), *(t for s in self.steps for t in s.terms()))


class WillConversionOffered(EventBase, frozen=True, kw_only=True):
    """A hit's physical damage may go to Will instead of HP, and the defender chooses (C31: a Will-conversion
    feature marked ``"choice"``). It holds the damage waiting to land (``terms``, its type and source, and
    ``final`` after mitigation, C13), the Will ``who`` has, and ``then``: the index, in the branch the action
    resolves (C25), of the consequence that comes after this damage (0: the branch's first, after a hit's own
    damage)."""

    action: Sequence_
    who: str
    damage_type: str
    source: str
    spell: bool = False
    terms: DamageTerms
    final: int
    will: int
    then: int


class WillConversionChosen(EventBase, frozen=True, kw_only=True):
    """The defender's answer to a Will-conversion choice (C31): ``convert`` sends the damage to Will (what
    exceeds it to HP), or not, to HP."""

    action: Sequence_
    who: str
    convert: bool


class ResourceChanged(EventBase, frozen=True, kw_only=True):
    """HP or Will moves (C3): before, after, and the action that caused it (None: the GM)."""

    action: Sequence_ | None
    who: str
    resource: Literal["hp", "will"]
    before: int
    after: int


#: Why Dying is applied when damage brings a combatant to 0 HP (C28, C36): the ``reason`` its ``condition_applied``
#: records.
DYING_REASON = "HP reached 0 (C28)"

#: How a deferred cost's damage names its source, after the ability's name (C41: it settles on its owner when its
#: moment comes, outside any action): ``Blood Price's deferred cost (C41)``.
DEFERRED_SOURCE = "'s deferred cost (C41)"


class ConditionApplied(EventBase, frozen=True, kw_only=True):
    """Stacks of a condition are added (C28); ``stacks`` is the total after, capped at the maximum. ``by``: who
    applied it, written for a condition a save ends (its die opposes the save, C15, C40); ``until`` and ``of``:
    it lasts until the start or end of ``of``'s next turn (C40)."""

    action: Sequence_ | None
    who: str
    condition: str
    added: int
    stacks: int
    reason: str = ""
    by: str | None = None
    until: Literal["start_of_next_turn", "end_of_next_turn"] | None = None
    of: str | None = None


class ConditionCleared(EventBase, frozen=True, kw_only=True):
    """A condition ends for a combatant, and why."""

    action: Sequence_ | None
    who: str
    condition: str
    reason: str = ""


class ActionSettled(EventBase, frozen=True, kw_only=True):
    """The action is over: every result has been applied."""

    action: Sequence_


class ActionCancelled(EventBase, frozen=True, kw_only=True):
    """The action ends before resolving (e.g. an Interrupt hit, C24); costs already paid stay paid."""

    action: Sequence_
    reason: str


class SeedRevealed(EventBase, frozen=True, kw_only=True):
    """The secret seed of the seeded dice, disclosed so anyone can recompute every seeded die drawn under its
    commitment."""

    seed: Annotated[str, msgspec.Meta(pattern=r"^([0-9a-f]{2})+$(?!\n)")]


class SeedCommitted(EventBase, frozen=True, kw_only=True):
    """A revealed seed is spent (C42): a fight that goes on after the reveal commits to a fresh seed, whose hash this
    is; every seeded die from here on is drawn from it, until it too is revealed."""

    commitment: Hex64


# -- the fight flow (combat.txt §Preparing for Combat to §Your Turn; C17-C24) -------------


class AmbushStarted(EventBase, frozen=True, kw_only=True):
    """An ambush: who lies in wait, who is ambushed, and how long the ambushers waited (C17: its band, and the
    ``minutes`` if they were given, C30), or the Ambush Difficulty the GM set instead (``preset_difficulty``: no
    Stealth is rolled)."""

    ambushers: tuple[str, ...]
    defenders: tuple[str, ...]
    time_waited: TimeWaited | None = None
    preset_difficulty: int | None = None
    minutes: float | None = None


class AmbushDifficultySet(EventBase, frozen=True, kw_only=True):
    """The Ambush Difficulty: from the ambushers' Stealth rolls by the time-waited table (C17), or preset."""

    stealth: tuple[RollTotal, ...] = ()
    time_waited: TimeWaited | None = None
    difficulty: int


class SurpriseDetermined(EventBase, frozen=True, kw_only=True):
    """One defender's Perception against the Ambush Difficulty, and its tier (C18)."""

    who: str
    perception: RollTotal
    difficulty: int
    tier: SurpriseTier


class InitiativeRolled(EventBase, frozen=True, kw_only=True):
    """One combatant's Initiative: an AGI check with its modifiers (C19; −5 for Partial Surprise, C18)."""

    who: str
    check: RollTotal


class InitiativeTied(EventBase, frozen=True, kw_only=True):
    """Combatants still tied after the AGI bonus (C19): allies may agree an order, or all roll off. ``allies``:
    whether they are all on one side (only then may they agree instead of rolling off)."""

    group: tuple[str, ...]
    allies: bool


class InitiativeRollOff(EventBase, frozen=True, kw_only=True):
    """A roll-off among tied combatants: each rolls an AGI check again (C19)."""

    group: tuple[str, ...]
    rolls: tuple[RollTotal, ...]


class InitiativeAgreed(EventBase, frozen=True, kw_only=True):
    """Tied allies agree who goes first instead of rolling (C19)."""

    order: tuple[str, ...]


class InitiativeOrderSet(EventBase, frozen=True, kw_only=True):
    """The initiative order for the whole fight, highest first."""

    order: tuple[str, ...]


class RoundStarted(EventBase, frozen=True, kw_only=True):
    """A round begins."""

    round: Sequence_


class RoundEnded(EventBase, frozen=True, kw_only=True):
    """A round ends (conditions that tick at round end tick now, C25)."""

    round: Sequence_


class TurnStarted(EventBase, frozen=True, kw_only=True):
    """A combatant's turn begins: 1 Action, 1 Movement Action (C20)."""

    round: Sequence_
    who: str


class TurnSkipped(EventBase, frozen=True, kw_only=True):
    """A combatant loses its turn, and why, in words (``reason``, free text, one of three causes): Completely
    Surprised in the first round (C18, C21: ``Completely Surprised: loses its first-round turn (C18, C21)``), out of
    the fight (C33: ``fled: out of the fight (C33)``, and likewise ``yielded``, ``dead``), or at 0 HP (C36: ``at 0
    HP, Dying: treated as Incapacitated (C36)``)."""

    round: Sequence_
    who: str
    reason: str


class TurnEnded(EventBase, frozen=True, kw_only=True):
    """A combatant's turn ends."""

    round: Sequence_
    who: str


class BonusActionsRefilled(EventBase, frozen=True, kw_only=True):
    """Bonus Actions refilled at the start of the owner's turn; they do not accumulate (C20, C21)."""

    who: str
    before: int
    after: int


class ConditionTicked(EventBase, frozen=True, kw_only=True):
    """A condition with a duration ticks at its timing (C25, C28): ``remaining`` ticks are left after this one
    (at 0 the condition ends: a ``condition_cleared`` follows)."""

    who: str
    condition: str
    remaining: int


class EngagementChanged(EventBase, frozen=True, kw_only=True):
    """Who is within reach of (adjacent to) whom, as stated by the GM: positions are abstract. ``engaged`` true:
    ``who`` is now engaged with each of ``others`` (both ways); false: no longer."""

    who: str
    others: tuple[str, ...]
    engaged: bool


class WeaponDrawn(EventBase, frozen=True, kw_only=True):
    """A combatant draws a weapon or its shield (``weapon``: the id) into hand (§Preparing for Combat, C35), at
    the ruleset's ``cost`` on its own turn ("free" before the rounds); not while Completely Surprised (C18)."""

    who: str
    weapon: str
    cost: Literal["free", "bonus_action", "movement_action", "action"] = "free"

    def __post_init__(self) -> None:
        settle_defaults(self)


class Disengaged(EventBase, frozen=True, kw_only=True):
    """Disengage (1 Bonus Action, C22): the Movement Action that follows this turn provokes no AoO (C23)."""

    who: str
    cost: int


class MovementDeclared(EventBase, frozen=True, kw_only=True):
    """A Movement Action, and whose reach it leaves (C23)."""

    action: Sequence_
    who: str
    leaves: tuple[str, ...] = ()


class Moved(EventBase, frozen=True, kw_only=True):
    """The movement completes; the mover is no longer engaged with those whose reach it left."""

    action: Sequence_
    who: str
    left: tuple[str, ...] = ()


class ReactionWindowOpened(EventBase, frozen=True, kw_only=True):
    """A window for reactions to an action (C23 Attacks of Opportunity, C24 Interrupts): who may respond."""

    action: Sequence_
    reaction: Literal["attack_of_opportunity", "interrupt"]
    responders: tuple[str, ...]


class ReactionPassed(EventBase, frozen=True, kw_only=True):
    """A responder lets the reaction window pass."""

    action: Sequence_
    who: str


class ReactionWindowClosed(EventBase, frozen=True, kw_only=True):
    """Every responder has answered (or the action was cancelled); the action goes on."""

    action: Sequence_


class CatchWindowOpened(EventBase, frozen=True, kw_only=True):
    """A thrown item is about to hit: its target may Catch it (1 Bonus Action, C22)."""

    action: Sequence_
    target: str


class CatchAnswered(EventBase, frozen=True, kw_only=True):
    """The target catches the thrown item (no damage) or lets it hit."""

    action: Sequence_
    who: str
    caught: bool


class DecisionOpened(EventBase, frozen=True, kw_only=True):
    """A decision point an extension declares (a row of :mod:`omen_core.hooks`) opens at a hook point of the action:
    ``responders`` may each answer with one of ``choices``, one at a time (C38); the action waits until it closes.

    ``decision`` is the row's kind, ``hook`` the hook point it opened at (where the action goes on from),
    ``rule`` the rule or ability that governs it; ``title``, and per choice what it does (``labels``) and what it
    costs in words (``costs``), so that a reader needs nothing but the log to say what was asked."""

    action: Sequence_
    decision: str
    hook: str
    responders: tuple[str, ...]
    choices: tuple[str, ...]
    rule: str
    title: str = ""
    labels: tuple[str, ...] = ()
    costs: tuple[str, ...] = ()


class DecisionAnswered(EventBase, frozen=True, kw_only=True):
    """One responder's answer to the open decision point: the choice it made (its cost, if any, is a ``cost_paid``
    after it)."""

    action: Sequence_
    decision: str
    who: str
    choice: str
    label: str = ""


class DecisionClosed(EventBase, frozen=True, kw_only=True):
    """The open decision point closes (every responder answered, or a choice that closes it was made); the action
    goes on from the hook point it opened at. ``responders``: who it asked (a seat that does not see them sees
    neither the decision nor its closing)."""

    action: Sequence_
    decision: str
    responders: tuple[str, ...] = ()


class CombatantLeft(EventBase, frozen=True, kw_only=True):
    """A combatant is out of the fight (C33): it fled, yielded or died, as the GM records. It takes no more
    turns, cannot act or be targeted, leaves every engagement, and counts as down for its side's defeat."""

    who: str
    reason: Literal["fled", "yielded", "dead"]
    note: str = ""


class FightEnded(EventBase, frozen=True, kw_only=True):
    """The fight is over (§Your Turn): the GM ended it, or a side yielded, fled or was defeated (``side``; none
    for the GM's end); ``note``: the GM's words, free text."""

    reason: Literal["gm", "yielded", "fled", "defeated"]
    side: str | None = None
    note: str = ""


# -- undo (history is never rewritten: undo is an event that voids a range) --------------


class Undone(EventBase, frozen=True, kw_only=True):
    """Events ``from_seq`` to ``to_seq`` are undone: the projection skips them; they stay in the log."""

    from_seq: Sequence_
    to_seq: Sequence_
    reason: str = ""


class Redone(EventBase, frozen=True, kw_only=True):
    """The undo recorded at ``undo_seq`` is taken back: its events count again."""

    undo_seq: Sequence_
    reason: str = ""


#: The undo markers: not steps of any action or phase; the walk (:mod:`omen_core.walk`) applies them.
UNDO_MARKERS = (Undone, Redone)
#: Events that record rather than happen: no step of any action or phase, no effect on the fight itself.
RECORDS = (CommandIssued, Undone, Redone)
#: The set-up events that are their own command: their batches need no ``command_issued``.
HEADER_EVENTS = (FightStarted, CombatantJoined)
#: What a store indexes for a reader to know before it reads a log: the undo markers and the revealed seed.
LANDMARKS = (Undone, Redone, SeedRevealed)


Event = (FightStarted | CombatantJoined | CommandIssued | DiceSourceChanged | DiceRolled | StaticCheckResolved
         | ContestResolved | SaveResolved | SeedRevealed | SeedCommitted | AttackDeclared | SaveCalled | CostPaid
         | ActiveDefenseWindowOpened | ActiveDefenseWindowSkipped | ActiveDefenseChosen
         | ActiveDefenseDeclined | HitDetermined | RoutingWindowOpened | DamageRouted
         | WillConversionOffered | WillConversionChosen
         | DamageResolved | ResourceChanged | ConditionApplied | ConditionCleared
         | ActionSettled | ActionCancelled | AmbushStarted | AmbushDifficultySet | SurpriseDetermined
         | InitiativeRolled | InitiativeTied | InitiativeRollOff | InitiativeAgreed | InitiativeOrderSet
         | RoundStarted | RoundEnded | TurnStarted | TurnSkipped | TurnEnded | BonusActionsRefilled
         | ConditionTicked | EngagementChanged | WeaponDrawn | Disengaged | MovementDeclared | Moved | AbilityUsed
         | MomentReached
         | ReactionWindowOpened | ReactionPassed | ReactionWindowClosed | CatchWindowOpened | CatchAnswered
         | DecisionOpened | DecisionAnswered | DecisionClosed | CombatantLeft | FightEnded | Undone | Redone)
EVENT_TYPES: tuple[type[EventBase], ...] = get_args(Event)
#: One event type, as :meth:`StoredEvent.as_` is asked for it.
E = TypeVar("E", bound=EventBase)
M = TypeVar("M", bound=msgspec.Struct)


def is_undo_batch(event: Event) -> bool:
    """Whether an event belongs to an undo or redo batch (the marker, or the command that opens it)."""
    return isinstance(event, UNDO_MARKERS) or (isinstance(event, CommandIssued)
                                                and isinstance(event.command, UNDO_COMMANDS))


class Unsealed(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False,
               omit_defaults=True):
    """An envelope before sealing: everything the hash covers, in canonical field order.

    ``batch`` is the seq of the first event appended together with this one
    and ``batch_size`` how many were: the events of one command share them,
    which makes commands the unit of undo and lets a reader tell a batch cut
    short by a crash (0 in schema version 1: unknown). ``salt`` (schema
    version 4; empty in older lines) makes the hash a hiding commitment to the
    event. Fields at their defaults are left out of the line, so a line of an
    older version, which has neither, is written back as it was.
    """

    fight_id: str
    seq: Sequence_
    batch: Sequence_
    batch_size: Annotated[int, msgspec.Meta(ge=0)] = 0
    recorded_at: int
    schema_version: int
    prev_hash: str
    salt: Annotated[str, msgspec.Meta(description=(
        "schema version 4: 16 to 64 random bytes as lowercase hex that the hash covers with the event, so that the "
        "hash hides the event's content (absent in older lines)"))] = ""
    event: Event


class StoredEvent(Unsealed, frozen=True, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """A sealed event as stored: the envelope plus ``hash`` (always the last field).

    The hashes are plain strings here: their form is checked where they are
    compared (the chain check), not on every decode.
    """

    hash: str

    def unsealed(self) -> Unsealed:
        """The envelope without its hash, as it was hashed."""
        return Unsealed(fight_id=self.fight_id, seq=self.seq, batch=self.batch, batch_size=self.batch_size,
                        recorded_at=self.recorded_at, schema_version=self.schema_version,
                        prev_hash=self.prev_hash, salt=self.salt, event=self.event)

    def as_(self, kind: type[E]) -> E:
        """The event, typed as ``kind``; :class:`~omen_core.errors.UnexpectedEvent` (naming the seq and both
        types) if it is another type."""
        if not isinstance(self.event, kind):
            raise UnexpectedEvent(self.seq, kind.__name__, type(self.event).__name__)
        return self.event


_ENCODER = msgspec.json.Encoder(order="deterministic")
_DECODER = msgspec.json.Decoder(StoredEvent)
_HASH_TAIL = len(',"hash":""}') + 64
_STAND_IN = "0" * 64  #: the hash a line is encoded with before it is known (:func:`seal_line`)


def canonical_body(envelope: Unsealed) -> bytes:
    """The canonical bytes the hash covers: compact msgspec JSON, fields in declaration order."""
    if isinstance(envelope, StoredEvent):
        envelope = envelope.unsealed()
    return _ENCODER.encode(envelope)


def chain_hash(prev_hash: str, body: bytes) -> str:
    """``sha256(prev_hash || body)`` as lowercase hex, ``prev_hash`` entering as raw bytes."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + body).hexdigest()


def line_body(line: bytes) -> bytes | None:
    """The body the hash of a stored line covers (the line without its ``,"hash":"..."``), or None if the line
    does not end in a hash field."""
    line = line.rstrip(b"\n")
    if len(line) < _HASH_TAIL or not line.endswith(b'"}') or line[-_HASH_TAIL:-66] != b',"hash":"':
        return None
    return line[:-_HASH_TAIL] + b"}"


def line_hash(prev_hash: str, line: bytes) -> str | None:
    """The hash a stored line should carry after ``prev_hash``, from its raw bytes (any schema version), or
    None if the line has no hash field to cut out or ``prev_hash`` is not hex."""
    body = line_body(line)
    if body is None or not is_hex64(prev_hash):
        return None
    return chain_hash(prev_hash, body)


def seal(fight_id: str, seq: int, recorded_at: int, prev_hash: str, event: Event,
         batch: int | None = None, batch_size: int = 1, salt: str | None = None) -> StoredEvent:
    """Wrap ``event`` in its envelope and compute its hash; ``batch`` defaults to ``seq`` (a batch of one) and
    ``salt`` to a fresh random one (:func:`fresh_salt`)."""
    return seal_line(fight_id, seq, recorded_at, prev_hash, event, batch, batch_size, salt)[0]


def seal_line(fight_id: str, seq: int, recorded_at: int, prev_hash: str, event: Event,
              batch: int | None = None, batch_size: int = 1, salt: str | None = None) -> tuple[StoredEvent, bytes]:
    """:func:`seal`, and the event's line as stored (:func:`encode_line`'s bytes: its hashed body with the hash
    put in, so the line is encoded once, while sealing)."""
    batch = seq if batch is None else batch
    salt = fresh_salt() if salt is None else salt
    # One envelope, encoded once: with a stand-in hash, cut out for the body the hash covers, then the real one put
    # in its place (the hash is the last field: the canonical form, the module doc), byte for byte.
    stored = StoredEvent(fight_id=fight_id, seq=seq, batch=batch, batch_size=batch_size, recorded_at=recorded_at,
                         schema_version=SCHEMA_VERSION, prev_hash=prev_hash, salt=salt, event=event,
                         hash=_STAND_IN)
    line = _ENCODER.encode(stored)
    digest = chain_hash(prev_hash, line[:-_HASH_TAIL] + b"}")
    msgspec.structs.force_setattr(stored, "hash", digest)
    return stored, line[:-66] + digest.encode() + b'"}'


class Sealed(list[StoredEvent]):
    """Events sealed together (one append's), with their lines as stored: a store writes :attr:`lines` without
    encoding the events again (:func:`lines_of`). An explicit object handed from the sealer to the store, in place
    of a module-level table of sealed lines."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[bytes] = []

    def add(self, stored: StoredEvent, line: bytes) -> None:
        """One more sealed event and its line."""
        self.append(stored)
        self.lines.append(line)

    def extend_sealed(self, other: Sealed) -> None:
        """The events of another :class:`Sealed`, and their lines."""
        self.extend(other)
        self.lines.extend(other.lines)


def lines_of(events: Sequence[StoredEvent]) -> list[bytes]:
    """The lines of ``events`` as stored (without newlines): a :class:`Sealed`'s own, else each encoded."""
    if isinstance(events, Sealed) and len(events.lines) == len(events):
        return events.lines
    return [_ENCODER.encode(ev) for ev in events]


def encode_line(stored: StoredEvent) -> bytes:
    """One JSON Lines record (without the newline): the event's canonical bytes."""
    return _ENCODER.encode(stored)


# -- upcasters: older lines read as today's events ----------------------------------------------------------

_ROLL_TOTALS = {"static_check_resolved": ("check",), "contest_resolved": ("initiator", "defender"),
                "save_resolved": ("saver", "opposing"), "surprise_determined": ("perception",),
                "initiative_rolled": ("check",), "ambush_difficulty_set": ("stealth",),
                "initiative_roll_off": ("rolls",)}


def _v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 1 to 2: a roll total's ``roll`` is renamed ``counter``; ``batch_size`` is new (0: unknown)."""
    event = raw.get("event")
    if isinstance(event, dict):
        for name in _ROLL_TOTALS.get(event.get("type", ""), ()):
            value = event.get(name)
            for total in value if isinstance(value, list) else [value]:
                if isinstance(total, dict) and "roll" in total:
                    total["counter"] = total.pop("roll")
    return raw


def _v2_to_v3(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 2 to 3: nothing to rename. Version 3 added, each with a default a version-2 line reads as:
    ``ambush_started.minutes`` (None), ``damage_resolved.overflow`` (0), ``weapon_drawn.cost`` ("free"), the
    events ``will_conversion_offered``, ``will_conversion_chosen`` and ``combatant_left``; in content, a
    shield's ``id`` ("shield"), ``economy.draw`` ("free"), ``will_conversion = "choice"`` and exact
    multipliers. A version-2 line is not held to version 3's canonical form (its bytes keep their hash)."""
    return raw


def _v3_to_v4(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 3 to 4: nothing to rename. Version 4 added the envelope's ``salt``; a version-3 line has none (it
    reads as ``""``), so its hash commits to its content without hiding it (docs/events.md)."""
    return raw


def _v4_to_v5(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 4 to 5: nothing to rename. Version 5 leaves out every field at its default, in events, their parts,
    commands and content (:mod:`omen_core.defaults`); a version-4 line, which writes them all, reads the same, and
    keeps its own bytes and hash: it is not held to version 5's written form (its content hashes are of the
    content as it records it)."""
    return raw


def _v5_to_v6(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 5 to 6: nothing to rename. Version 6 records a modifier's ``origin`` (``condition``,
    ``ability:<name>``) and ``owner`` where the engine made it; a version-5 modifier has neither, and reads as it
    did (a hit or damage modifier as situational, a defense modifier as an ability's: docs/events.md)."""
    return raw


def as_written_by(made: M, version: int) -> M:
    """An event or a part of one (``made`` as the rules decide it now) as an omen writing schema ``version``
    recorded it: before version 6 (:data:`MODIFIER_ORIGINS`) no modifier recorded its ``origin`` or ``owner``.
    ``omen verify`` holds a line to what its own version recorded when it decides its command again."""
    if version >= MODIFIER_ORIGINS:
        return made
    data = msgspec.to_builtins(made)
    if not _drop_origins(data):
        return made
    return msgspec.convert(data, type(made))


def _drop_origins(value: Any) -> bool:
    """Drop every modifier's ``origin`` and ``owner`` in ``value`` (builtins), in place; whether one was there. A
    modifier is an object with a ``source`` and a ``value`` (a die's ``origin``, in an object with a ``pool``, is
    version 5's own: C39)."""
    found = False
    if isinstance(value, dict):
        if "source" in value and "value" in value and "pool" not in value:
            found = value.pop("origin", None) is not None
            found = value.pop("owner", None) is not None or found
        for item in value.values():
            found = _drop_origins(item) or found
    elif isinstance(value, (list, tuple)):
        for item in value:
            found = _drop_origins(item) or found
    return found


#: ``UPCASTERS[v]`` turns a decoded line of schema version ``v`` into one of version ``v + 1``. A line keeps
#: the ``schema_version`` it was written with (its hash covers it): upcasting changes what it reads as.
UPCASTERS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4,
                                                                    4: _v4_to_v5, 5: _v5_to_v6}


def upcast(raw: dict[str, Any]) -> dict[str, Any]:
    """A decoded line of any known schema version, as today's fields (its ``schema_version`` unchanged)."""
    version = raw.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        return raw
    for step in range(max(version, 1), SCHEMA_VERSION):
        raw = UPCASTERS[step](raw)
    return raw


def decode_line(line: bytes | str) -> StoredEvent:
    """Decode one JSON Lines record, upcasting an older schema version; raises ``msgspec.DecodeError`` (or
    ``ValidationError``) if malformed."""
    try:
        return _DECODER.decode(line)
    except msgspec.ValidationError:
        raw = msgspec.json.decode(line)
        if not isinstance(raw, dict) or not isinstance(raw.get("schema_version"), int) \
                or raw["schema_version"] >= SCHEMA_VERSION:
            raise
        return msgspec.convert(upcast(raw), StoredEvent)


def hash_ok(stored: StoredEvent) -> bool:
    """Whether ``stored.hash`` is the hash of its own body and ``prev_hash`` (a line of today's schema; the
    chain of older lines is checked on their raw bytes, :func:`line_hash`)."""
    return is_hex64(stored.prev_hash) and chain_hash(stored.prev_hash, canonical_body(stored)) == stored.hash


def chain_breaks(records: Iterable[StoredEvent], fight_id: str | None = None,
                 head: str | None = None, prev_hash: str = GENESIS_HASH, first_seq: int = 1,
                 lines: Sequence[bytes] | None = None) -> Iterator[tuple[int, str]]:
    """Every place the chain of decoded events does not hold, as ``(seq, what)``; empty for a sound log.

    Finds changed events (hash mismatch), dropped, inserted or reordered
    events (seq out of step, or a ``prev_hash`` that is not the previous
    event's hash) and events of another fight. A chain cannot know its own
    end: a log cut after any event is a sound prefix. Pass ``head``, the
    hash of the last event as known from elsewhere (a store's version, a
    published head), to catch a dropped tail too. ``prev_hash`` and
    ``first_seq`` check a suffix that continues a known event (a snapshot's).
    With ``lines``, the records' lines as stored, each hash is checked on its
    line's own bytes (:func:`line_hash`: a line of any schema version), not
    on the record written again in today's form.
    The walk (:mod:`omen_core.walk`) checks stored lines the same way, from
    their bytes.
    """
    expected_seq, batch = first_seq, (0 if first_seq == 1 else None)
    for n, rec in enumerate(records):
        fight_id = rec.fight_id if fight_id is None else fight_id
        if rec.fight_id != fight_id:
            yield rec.seq, f"belongs to fight {rec.fight_id!r}, expected {fight_id!r}"
        if rec.seq != expected_seq:
            yield rec.seq, f"seq {rec.seq} where {expected_seq} was expected"
        if rec.prev_hash != prev_hash:
            yield rec.seq, f"prev_hash {rec.prev_hash[:12]}... is not the previous hash {prev_hash[:12]}..."
        if not (hash_ok(rec) if lines is None else line_hash(rec.prev_hash, lines[n]) == rec.hash):
            yield rec.seq, "hash does not match the event's content"
        if rec.batch != rec.seq and batch is not None and rec.batch != batch:
            yield rec.seq, f"batch {rec.batch} is neither its own seq nor the batch of the event before it"
        if rec.schema_version > SCHEMA_VERSION:
            yield rec.seq, f"schema version {rec.schema_version} is newer than {SCHEMA_VERSION}"
        prev_hash, expected_seq, batch = rec.hash, rec.seq + 1, rec.batch
    if head is not None and head != prev_hash:
        yield expected_seq - 1, f"the log ends at seq {expected_seq - 1}, but its known head is {head[:12]}..."


def verify_chain(records: Iterable[StoredEvent], fight_id: str | None = None,
                 head: str | None = None, prev_hash: str = GENESIS_HASH, first_seq: int = 1) -> int:
    """Raise :class:`ChainBroken` at the first break; return the number of events checked."""
    count = 0

    def counted() -> Iterator[StoredEvent]:
        nonlocal count
        for count, rec in enumerate(records, 1):  # noqa: B007 - count is read after the loop
            yield rec

    for seq, what in chain_breaks(counted(), fight_id, head, prev_hash, first_seq):
        raise ChainBroken(seq, what)
    return count


def event_schema() -> dict[str, Any]:
    """The JSON Schema of a stored event (envelope and the whole event union)."""
    return msgspec.json.schema(StoredEvent)
