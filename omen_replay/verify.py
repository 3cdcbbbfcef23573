"""Audit a fight log: the hash chain, the seed against its commitment, every seeded die, every check total.

Unlike live play, which raises at the first problem, the audit collects
every finding and reports them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from omen_core.content import CombatantSheet
from omen_core.dice import commitment, seeded_mismatches
from omen_core.events import (
    CombatantJoined,
    ContestResolved,
    DiceRolled,
    FightStarted,
    RollTotal,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    chain_breaks,
)
from omen_core.rules.checks import contest_winner, roll_total, save_succeeds, static_outcome

__all__ = ["Finding", "Report", "verify"]


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One problem: where (seq), which rule or check, what, and expected vs found."""

    seq: int
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

    @property
    def clean(self) -> bool:
        """True when nothing was found."""
        return not self.findings


class _Audit:
    """Walks a log once, remembering what later events are checked against."""

    def __init__(self) -> None:
        self.commitment: str | None = None
        self.seed: bytes | None = None
        self.sheets: dict[str, CombatantSheet] = {}
        self.rolls: dict[int, tuple[int, DiceRolled]] = {}
        self.seeded: list[tuple[int, str, DiceRolled]] = []

    def check(self, rec: StoredEvent) -> Iterator[Finding]:
        match rec.event:
            case FightStarted(seed_commitment=pledge):
                self.commitment = pledge
            case CombatantJoined(sheet=sheet):
                self.sheets[sheet.id] = sheet
            case DiceRolled() as rolled:
                yield from self._rolled(rec.seq, rolled)
                if rolled.source == "seeded":
                    self.seeded.append((rec.seq, rec.fight_id, rolled))
            case StaticCheckResolved(check=side, difficulty=d, outcome=outcome):
                yield from self._side(rec.seq, side)
                yield from _compare(rec.seq, "C16", "static check outcome",
                                    static_outcome(side.total, d), outcome)
            case ContestResolved(initiator=ini, defender=dfd):
                yield from self._side(rec.seq, ini)
                yield from self._side(rec.seq, dfd)
                side = contest_winner(ini.total, dfd.total)
                winner = ini.roller if side == "initiator" else dfd.roller
                yield from _compare(rec.seq, "C16", "contest winner", winner, rec.event.winner)
            case SaveResolved(saver=saver, opposing=opp, success=success):
                yield from self._side(rec.seq, saver)
                yield from self._side(rec.seq, opp)
                yield from _compare(rec.seq, "C15", "save outcome",
                                    save_succeeds(saver.total, opp.total), success)
            case SeedRevealed(seed=seed_hex):
                yield from self._revealed(rec.seq, seed_hex)

    def _rolled(self, seq: int, rolled: DiceRolled) -> Iterator[Finding]:
        if rolled.counter in self.rolls:
            yield Finding(seq=seq, rule="dice", what=f"roll counter {rolled.counter} used twice",
                          expected="a new counter", found=str(rolled.counter))
        self.rolls[rolled.counter] = (seq, rolled)
        for die in rolled.dice:
            if die.face > die.sides:
                yield Finding(seq=seq, rule="dice", what="die face larger than the die",
                              expected=f"1..{die.sides}", found=str(die.face))

    def _side(self, seq: int, side: RollTotal) -> Iterator[Finding]:
        """Recompute one side of a check or save from its roll and the roller's sheet (C1, C2)."""
        _, rolled = self.rolls.get(side.roll, (0, None))
        if rolled is None or rolled.roller != side.roller:
            yield Finding(seq=seq, rule="dice", what=f"{side.roller}'s roll #{side.roll} is not in the log")
        else:
            yield from _compare(seq, "dice", f"{side.roller}'s die face", rolled.dice[0].face, side.face)
        sheet = self.sheets.get(side.roller)
        if sheet is not None:
            yield from self._bonuses(seq, sheet, side)
        total = roll_total(side.face, side.attribute_bonus, side.skill_level,
                           (m.value for m in side.modifiers))
        yield from _compare(seq, "roll primitive", f"{side.roller}'s total", total, side.total)

    def _bonuses(self, seq: int, sheet: CombatantSheet, side: RollTotal) -> Iterator[Finding]:
        bonus = sheet.attributes[side.attribute].bonus
        yield from _compare(seq, "C1", f"{side.roller}'s {side.attribute} bonus", bonus,
                            side.attribute_bonus)
        if side.skill is not None:
            skill = sheet.skills.get(side.skill)
            level = skill.level if skill else None
            yield from _compare(seq, "C2", f"{side.roller}'s {side.skill} level", level, side.skill_level)

    def _revealed(self, seq: int, seed_hex: str) -> Iterator[Finding]:
        self.seed = bytes.fromhex(seed_hex)
        if self.commitment != commitment(self.seed):
            yield Finding(seq=seq, rule="dice", what="revealed seed does not match the commitment",
                          expected=str(self.commitment), found=commitment(self.seed))

    def seeded_findings(self) -> Iterator[Finding]:
        """After the walk: every seeded die recomputed from the revealed seed."""
        if self.seed is None:
            return
        for seq, fight_id, rolled in self.seeded:
            for index, found, expected in seeded_mismatches(self.seed, fight_id, rolled):
                yield Finding(seq=seq, rule="dice", what=f"seeded die {index} of roll #{rolled.counter}",
                              expected=str(expected), found=str(found))


def _compare(seq: int, rule: str, what: str, expected: object, found: object) -> Iterator[Finding]:
    if expected != found:
        yield Finding(seq=seq, rule=rule, what=what, expected=str(expected), found=str(found))


def verify(records: Iterable[StoredEvent], seed: bytes | None = None) -> Report:
    """Audit a whole log; ``seed`` (if given) is checked as though it had been revealed."""
    records = list(records)
    audit = _Audit()
    findings = [Finding(seq=seq, rule="chain", what=what) for seq, what in chain_breaks(records)]
    for rec in records:
        findings.extend(audit.check(rec))
    if seed is not None:
        findings.extend(audit._revealed(0, seed.hex()))
    findings.extend(audit.seeded_findings())
    return Report(fight_id=records[0].fight_id if records else "", events=len(records),
                  seeded_dice=sum(len(r.dice) for _, _, r in audit.seeded),
                  seed_revealed=audit.seed is not None, findings=tuple(findings))
