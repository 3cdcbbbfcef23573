"""Audit a fight log: hash chain, event order, seed and seeded dice, and every derived number recomputed.

Unlike live play, which raises at the first problem, the audit collects
every finding and reports them all. It folds the log as it goes (the same
projection as live play), so each number is recomputed from the recorded
dice, the sheets and ruleset in the log, and the state at that point.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from omen_core.content import content_hash
from omen_core.decide.attack import damage_terms, hit_numbers
from omen_core.decide.effects import mitigation_for
from omen_core.dice import commitment, seeded_mismatches
from omen_core.errors import BadInput
from omen_core.events import (
    UNDO_MARKERS,
    AmbushDifficultySet,
    AmbushStarted,
    AttackDeclared,
    CombatantJoined,
    ContestResolved,
    DamageResolved,
    DiceRolled,
    FightStarted,
    HitDetermined,
    InitiativeOrderSet,
    InitiativeRolled,
    InitiativeRollOff,
    Redone,
    ResourceChanged,
    RollTotal,
    RoundStarted,
    SaveCalled,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    SurpriseDetermined,
    TurnSkipped,
    TurnStarted,
    Undone,
    chain_breaks,
    decode_line,
    encode_line,
)
from omen_core.machine import IllegalOrder, OutOfPhase
from omen_core.rules.ambush import (
    PARTIAL_SURPRISE_INITIATIVE,
    ambush_difficulty,
    surprise_tier,
)
from omen_core.rules.checks import (
    contest_winner,
    roll_total,
    save_succeeds,
    static_outcome,
)
from omen_core.state import (
    FightState,
    UndoRecord,
    effective_bonus,
    evolve,
    project,
    undo_history,
)

__all__ = ["Finding", "Report", "verify", "verify_lines"]


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One problem: where (seq, and the line for problems found in the raw bytes), which rule, what,
    and expected vs found."""

    seq: int
    line: int = 0
    rule: str
    what: str
    expected: str = ""
    found: str = ""


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """The audit of one log: how much was checked and every finding."""

    fight_id: str
    events: int
    seeded_dice: int
    seed_revealed: bool
    findings: tuple[Finding, ...]
    undone: tuple[UndoRecord, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """True when nothing was found."""
        return not self.findings


def _compare(seq: int, rule: str, what: str, expected: object, found: object) -> Iterator[Finding]:
    if expected != found:
        yield Finding(seq=seq, rule=rule, what=what, expected=_show(expected), found=_show(found))


def _show(value: object) -> str:
    if isinstance(value, msgspec.Struct):
        return msgspec.json.encode(value).decode()
    return str(value)


class _Audit:
    """Walks a log once, folding it, and checks each event against what the state says it should be."""

    def __init__(self) -> None:
        self.state = FightState()
        self.commitment: str | None = None
        self.seed: bytes | None = None
        self.rolls: dict[int, DiceRolled] = {}
        self.seeded: list[tuple[int, str, DiceRolled]] = []
        self.difficulty: int | None = None
        self.preset: int | None = None
        self.next_turn = 0

    def walk(self, rec: StoredEvent) -> Iterator[Finding]:
        """Check one event against the state before it, then fold it."""
        try:
            yield from self._check(rec)
        except Exception as exc:  # noqa: BLE001 - an audit of arbitrary input reports, never crashes
            yield Finding(seq=rec.seq, rule="audit", what=f"cannot recompute this event: {exc!r}")
        try:
            self.state = evolve(self.state, rec.event, rec.seq)
        except IllegalOrder as exc:
            yield Finding(seq=rec.seq, rule="lifecycle", what=f"{type(rec.event).__name__} out of order",
                          expected=" or ".join(exc.legal) or "nothing", found=exc.trigger)
        except OutOfPhase as exc:
            yield Finding(seq=rec.seq, rule="phase", what=f"{type(rec.event).__name__} out of phase",
                          expected=f"not in the {exc.phase.value} phase", found=exc.trigger)
        except Exception as exc:  # noqa: BLE001 - as above
            yield Finding(seq=rec.seq, rule="audit", what=f"cannot apply this event: {exc!r}")

    def reset(self, records: list[StoredEvent], voided: set[int]) -> Iterator[Finding]:
        """After an undo or redo: the state the live events leave, and whose turn comes next in the round."""
        live = [r for r in records if r.seq not in voided and not isinstance(r.event, UNDO_MARKERS)]
        try:
            self.state = project(records, voided=voided)
        except Exception as exc:  # noqa: BLE001 - a tampered log is reported, never crashes the audit
            yield Finding(seq=records[-1].seq, rule="audit", what=f"cannot rebuild the state after this undo or "
                                                                   f"redo: {exc}")
            return
        since_round = next((i for i in range(len(live) - 1, -1, -1) if isinstance(live[i].event, RoundStarted)), None)
        self.next_turn = 0 if since_round is None else sum(
            isinstance(r.event, (TurnStarted, TurnSkipped)) for r in live[since_round:])

    def _check(self, rec: StoredEvent) -> Iterator[Finding]:
        seq, event, state = rec.seq, rec.event, self.state
        match event:
            case FightStarted():
                self.commitment = event.seed_commitment
                yield from _compare(seq, "ruleset", "ruleset hash", event.ruleset.content_hash(),
                                    event.ruleset_hash)
            case CombatantJoined():
                yield from _compare(seq, "content", f"{event.sheet.id}'s sheet hash", content_hash(event.sheet),
                                    event.sheet_hash)
            case DiceRolled():
                yield from self._rolled(seq, rec.fight_id, event)
            case StaticCheckResolved(check=side, difficulty=d, outcome=outcome):
                yield from self._side(seq, side)
                yield from _compare(seq, "C16", "static check outcome", static_outcome(side.total, d), outcome)
            case ContestResolved(initiator=ini, defender=dfd):
                yield from self._side(seq, ini)
                yield from self._side(seq, dfd)
                side = contest_winner(ini.total, dfd.total)
                winner = ini.roller if side == "initiator" else dfd.roller
                yield from _compare(seq, "C16", "contest winner", winner, event.winner)
            case SaveResolved(saver=saver, opposing=opp, success=success):
                yield from self._side(seq, saver)
                yield from self._side(seq, opp)
                yield from _compare(seq, "C15", "save outcome", save_succeeds(saver.total, opp.total), success)
            case HitDetermined():
                yield from self._hit(seq, event)
            case DamageResolved():
                yield from self._damage(seq, event)
            case ResourceChanged():
                current = getattr(state.combatants[event.who], event.resource)
                yield from _compare(seq, "C3", f"{event.who}'s {event.resource} before", current, event.before)
                dealt = [d for d in state.pending.all(DamageResolved) if d.target == event.who] \
                    if state.pending else []
                if dealt:
                    yield from _compare(seq, "C13", f"{event.who}'s {event.resource} after the damage",
                                        max(event.before - dealt[-1].final, 0), event.after)
            case SeedRevealed(seed=seed_hex):
                yield from self.revealed(seq, bytes.fromhex(seed_hex))
            case AmbushStarted():
                self.preset = event.preset_difficulty
            case AmbushDifficultySet():
                yield from self._ambush(seq, event)
            case SurpriseDetermined():
                yield from self._side(seq, event.perception)
                yield from _compare(seq, "C18", f"{event.who}'s surprise tier",
                                    surprise_tier(event.perception.total, event.difficulty), event.tier)
                yield from _compare(seq, "C17", "Ambush Difficulty used", self.difficulty, event.difficulty)
            case InitiativeRolled():
                yield from self._side(seq, event.check)
                partial = any(m.value == PARTIAL_SURPRISE_INITIATIVE and "Partial" in m.source
                              for m in event.check.modifiers)
                yield from _compare(seq, "C18", f"{event.who}'s Partial Surprise -5",
                                    state.surprise.get(event.who) == "partial", partial)
            case InitiativeRollOff():
                for side in event.rolls:
                    yield from self._side(seq, side)
            case RoundStarted():
                self.next_turn = 0
            case TurnStarted() | TurnSkipped():
                order = state.order
                expected = order[self.next_turn] if self.next_turn < len(order) else None
                yield from _compare(seq, "C19", "whose turn it is in initiative order", expected, event.who)
                self.next_turn += 1
            case InitiativeOrderSet():
                expected = tuple(w for g in state.ranking for w in g)
                yield from _compare(seq, "C19", "initiative order", expected, event.order)

    def _ambush(self, seq: int, event: AmbushDifficultySet) -> Iterator[Finding]:
        """C17: the difficulty from the Stealth rolls by the time-waited table (or a preset, taken as given)."""
        for side in event.stealth:
            yield from self._side(seq, side)
        if event.stealth and event.time_waited is not None:
            expected = ambush_difficulty([s.total for s in event.stealth], event.time_waited)
            yield from _compare(seq, "C17", "Ambush Difficulty", expected, event.difficulty)
        else:
            yield from _compare(seq, "C17", "preset Ambush Difficulty", self.preset, event.difficulty)
        self.difficulty = event.difficulty

    def _rolled(self, seq: int, fight_id: str, rolled: DiceRolled) -> Iterator[Finding]:
        yield from _compare(seq, "dice", "roll counter", self.state.rolls + 1, rolled.counter)
        self.rolls[rolled.counter] = rolled
        if rolled.source == "seeded":
            self.seeded.append((seq, fight_id, rolled))
        for die in rolled.dice:
            if die.face > die.sides:
                yield Finding(seq=seq, rule="dice", what="die face larger than the die",
                              expected=f"1..{die.sides}", found=str(die.face))

    def _side(self, seq: int, side: RollTotal) -> Iterator[Finding]:
        """One side of a check or save, from its roll and the roller's sheet and conditions (C1, C2)."""
        rolled = self.rolls.get(side.roll)
        if rolled is None or rolled.roller != side.roller:
            yield Finding(seq=seq, rule="dice", what=f"{side.roller}'s roll #{side.roll} is not in the log")
        else:
            yield from _compare(seq, "dice", f"{side.roller}'s die face", rolled.dice[0].face, side.face)
        yield from _compare(seq, "C1", f"{side.roller}'s {side.attribute} bonus",
                            effective_bonus(self.state, side.roller, side.attribute), side.attribute_bonus)
        if side.skill is not None:
            skill = self.state.combatants[side.roller].sheet.skills.get(side.skill)
            yield from _compare(seq, "C2", f"{side.roller}'s {side.skill} level", skill.level if skill else 0,
                                side.skill_level)
        total = roll_total(side.face, side.attribute_bonus, side.skill_level, (m.value for m in side.modifiers))
        yield from _compare(seq, "roll primitive", f"{side.roller}'s total", total, side.total)

    def _hit(self, seq: int, event: HitDetermined) -> Iterator[Finding]:
        """Hit total (C5), defense (C10, C11, Active Defense), hit (ties to the defender) and crit (C7)."""
        attack, defense, crit = hit_numbers(self.state, self.state.pending)
        yield from _compare(seq, "C5", "hit total", attack, event.attack)
        yield from _compare(seq, "C11", "defense", defense, event.defense)
        yield from _compare(seq, "C7", "crit check", crit, event.crit_check)
        yield from _compare(seq, "§Hit Determination", "hit", attack.total > defense.total, event.hit)
        yield from _compare(seq, "C7", "crit", event.hit and crit.exceeds, event.crit)

    def _damage(self, seq: int, event: DamageResolved) -> Iterator[Finding]:
        """The damage formula (C12) for an attack's own damage, and mitigation (C13) for all damage."""
        pending = self.state.pending
        determined = pending.first(HitDetermined) if pending is not None else None
        if pending is not None and isinstance(pending.events[0], AttackDeclared) and determined is not None \
                and determined.hit and pending.first(DamageResolved) is None:
            yield from _compare(seq, "C12", "damage terms", damage_terms(self.state, pending), event.terms)
        raw = event.terms.raw
        total = (event.terms.dice + event.terms.primary_bonus + event.terms.crit_bonus + event.terms.weapon_damage
                 + sum(event.terms.ability_dice) + sum(m.value for m in event.terms.modifiers))
        yield from _compare(seq, "C12", "raw damage", total, raw)
        steps, final, resource = mitigation_for(self.state, event.target, raw, event.damage_type, spell=event.spell)
        yield from _compare(seq, "C13", "mitigation steps", list(steps), list(event.steps))
        yield from _compare(seq, "C13", "final damage", final, event.final)
        yield from _compare(seq, "C13", "resource hit", resource, event.resource)

    def revealed(self, seq: int, seed: bytes) -> Iterator[Finding]:
        """The seed against the commitment recorded at the start."""
        self.seed = seed
        if self.commitment != commitment(seed):
            yield Finding(seq=seq, rule="dice", what="revealed seed does not match the commitment",
                          expected=str(self.commitment), found=commitment(seed))

    def seeded_findings(self) -> Iterator[Finding]:
        """After the walk: every seeded die recomputed from the revealed seed."""
        if self.seed is None:
            return
        for seq, fight_id, rolled in self.seeded:
            for index, found, expected in seeded_mismatches(self.seed, fight_id, rolled):
                yield Finding(seq=seq, rule="dice", what=f"seeded die {index} of roll #{rolled.counter}",
                              expected=str(expected), found=str(found))


def verify_lines(lines: Iterable[bytes], seed: bytes | None = None) -> Report:
    """Audit a log from its raw JSON Lines bytes: every line must decode and be byte-for-byte canonical
    (so any edited byte is found even where the values would survive), then :func:`verify` runs on the rest."""
    records: list[StoredEvent] = []
    problems: list[Finding] = []
    count = 0
    for count, raw in enumerate(lines, 1):
        if not raw.endswith(b"\n"):
            problems.append(Finding(seq=len(records) + 1, line=count, rule="format",
                                    what="torn tail: the last line was cut off mid-write (omen repair sets it aside)"))
            continue
        line = raw[:-1]
        try:
            rec = decode_line(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            problems.append(Finding(seq=len(records) + 1, line=count, rule="format",
                                    what=f"not a stored event: {exc}"))
            continue
        if encode_line(rec) != line:
            problems.append(Finding(seq=rec.seq, line=count, rule="format",
                                    what="not in canonical form: its bytes were edited"))
        records.append(rec)
    if count and not records:
        raise BadInput("not a fight log: no line decodes as a stored event")
    report = verify(records, seed)
    return msgspec.structs.replace(report, findings=(*problems, *report.findings))


def verify(records: Iterable[StoredEvent], seed: bytes | None = None) -> Report:
    """Audit a whole log; ``seed`` (if given) is checked as though it had been revealed.

    Every event is checked in the state it was written in; an undo resets the
    state to before the undone range (which must start at a safe point), a
    redo restores it. Undone dice still count for the seed check.
    """
    records = list(records)
    audit = _Audit()
    findings = [Finding(seq=seq, rule="chain", what=what) for seq, what in chain_breaks(records)]
    voided: set[int] = set()
    for i, rec in enumerate(records):
        match rec.event:
            case Undone():
                findings.extend(_check_undo(records[:i], rec, voided))
            case Redone(undo_seq=target):
                if not any(r.seq == target and isinstance(r.event, Undone) for r in records[:i]):
                    findings.append(Finding(seq=rec.seq, rule="undo", what=f"seq {target} is not an undo"))
                    continue
            case _:
                findings.extend(audit.walk(rec))
                continue
        # an undo or a redo: what is undone now, and the state (and turn) it leaves
        voided = undo_history(records[:i + 1])[0]
        findings.extend(audit.reset(records[:i + 1], voided))
    if seed is not None:
        findings.extend(audit.revealed(0, seed))
    findings.extend(audit.seeded_findings())
    _, undos = undo_history(records)
    return Report(fight_id=records[0].fight_id if records else "", events=len(records),
                  seeded_dice=sum(len(r.dice) for _, _, r in audit.seeded),
                  seed_revealed=audit.seed is not None, findings=tuple(findings), undone=tuple(undos),
                  notes=tuple(_rerolls(records, undos)))


def _check_undo(before: list[StoredEvent], rec: StoredEvent, voided: set[int]) -> Iterator[Finding]:
    """An undo voids the live events from a command's start (a safe point) to the last one."""
    undo = rec.event
    assert isinstance(undo, Undone)
    live = [r for r in before if r.seq not in voided and not isinstance(r.event, UNDO_MARKERS)]
    start = next((r for r in live if r.seq == undo.from_seq), None)
    if start is None or start.batch != start.seq:
        yield Finding(seq=rec.seq, rule="undo", what=f"seq {undo.from_seq} does not start a live command")
    elif not _at_rest_before(before, undo.from_seq, voided):
        yield Finding(seq=rec.seq, rule="undo", what=f"seq {undo.from_seq} is half-way through an action")
    if not live or undo.to_seq != live[-1].seq:
        yield Finding(seq=rec.seq, rule="undo", what="an undo must reach the last live event",
                      expected=str(live[-1].seq if live else 0), found=str(undo.to_seq))


def _at_rest_before(before: list[StoredEvent], seq: int, voided: set[int]) -> bool:
    """Whether no action was in progress just before ``seq`` (a log that cannot be folded there: not at rest)."""
    try:
        return project([r for r in before if r.seq < seq], voided=voided).at_rest
    except Exception:  # noqa: BLE001 - a tampered log is reported by the walk, never crashes the audit
        return False


def _rerolls(records: list[StoredEvent], undos: Iterable[UndoRecord]) -> Iterator[str]:
    """Dice rolled again for the same declared action after an undo (worth a look, not a fault)."""
    for undo in undos:
        gone = [r for r in records if undo.from_seq <= r.seq <= undo.to_seq]
        for rec in gone:
            key = _declaration_key(rec.event)
            if key is None:
                continue
            again = next((r for r in records if r.seq > undo.seq and _declaration_key(r.event) == key), None)
            if again is not None:
                yield (f"after the undo at seq {undo.seq}, {key[0]} declared at seq {rec.seq} was declared "
                       f"again at seq {again.seq}: its dice were rolled again")


def _declaration_key(event: object) -> tuple | None:
    if isinstance(event, AttackDeclared):
        return ("the attack " + f"{event.attacker}->{event.target}", event.attacker, event.target, event.weapon)
    if isinstance(event, SaveCalled):
        return (f"the save {event.effect.name}", event.caller, event.saver, event.effect.name)
    return None
