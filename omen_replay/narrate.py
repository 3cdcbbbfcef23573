"""Turn a fight log into a readable narrative: one small writer per event type, in a dispatch table.

The narrative is plain text tagged with a kind (``header``, ``roll``,
``result``, ``note``), so each output format (terminal, Markdown, HTML)
only decides how to style a kind, never how to describe an event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Literal

import msgspec

from omen_core.events import (
    CombatantJoined,
    ContestResolved,
    DiceRolled,
    EventBase,
    FightStarted,
    RollTotal,
    SaveResolved,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
)

__all__ = ["Line", "narrate", "describe_total"]

LineKind = Literal["header", "roll", "result", "note"]


class Line(msgspec.Struct, frozen=True):
    """One line of the narrative: the event it tells of, its kind, and the text."""

    seq: int
    kind: LineKind
    text: str


class _Names:
    """Combatant display names, learned as combatants join."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def __call__(self, cid: str) -> str:
        return self.names.get(cid, cid)


def describe_total(side: RollTotal, name: str) -> str:
    """``Vesh: Stealth d8 6 + AGI 2 + level 3 = 11``: the roll primitive, term by term."""
    label = side.skill or f"{side.attribute} check"
    terms = [f"{side.face} (die)", f"{_signed(side.attribute_bonus)} {side.attribute}"]
    if side.skill is not None:
        terms.append(f"{_signed(side.skill_level)} {side.skill} level")
    terms += [f"{_signed(m.value)} {m.source}" for m in side.modifiers]
    return f"{name} rolls {label}: {' '.join(terms)} = {side.total}"


def _signed(n: int) -> str:
    return f"+ {n}" if n >= 0 else f"- {-n}"


def _started(e: FightStarted, names: _Names) -> Iterator[tuple[LineKind, str]]:
    title = f" \u201c{e.title}\u201d" if e.title else ""
    yield "header", f"Fight{title} begins under ruleset {e.ruleset!r} with {e.dice} dice"
    if e.seed_commitment:
        yield "note", f"seed commitment sha256 {e.seed_commitment[:16]}\u2026 (the seed stays secret until revealed)"


def _joined(e: CombatantJoined, names: _Names) -> Iterator[tuple[LineKind, str]]:
    s = e.sheet
    names.names[s.id] = s.name
    yield "header", f"{s.name} joins for {s.side}: HP {s.hp}, Will {s.will}"


def _rolled(e: DiceRolled, names: _Names) -> Iterator[tuple[LineKind, str]]:
    dice = ", ".join(f"{d.pool} d{d.sides} \u2192 {d.face}" for d in e.dice)
    yield "roll", f"roll #{e.counter} ({e.purpose}, {e.source}) by {names(e.roller)}: {dice}"


def _static(e: StaticCheckResolved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "result", describe_total(e.check, names(e.check.roller))
    verdict = {"success": "succeeds", "tie": "ties (not a success; the GM decides what a tie means, C16)",
               "failure": "fails"}[e.outcome]
    yield "result", f"  against difficulty {e.difficulty}: {verdict}"


def _contest(e: ContestResolved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "result", describe_total(e.initiator, names(e.initiator.roller))
    yield "result", describe_total(e.defender, names(e.defender.roller))
    why = " (a tie favours the defender, C16)" if e.tie else ""
    yield "result", f"  {e.initiator.total} vs {e.defender.total}: {names(e.winner)} wins the contest{why}"


def _save(e: SaveResolved, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "result", describe_total(e.saver, names(e.saver.roller))
    yield "result", describe_total(e.opposing, names(e.opposing.roller))
    verdict = "saves" if e.success else "fails the save"
    tie = " (the saver wins ties, C15)" if e.saver.total == e.opposing.total else ""
    yield "result", (f"  {e.saver.total} vs {e.opposing.total}: {names(e.saver.roller)} {verdict} "
                     f"against {e.effect}{tie}")


def _revealed(e: SeedRevealed, names: _Names) -> Iterator[tuple[LineKind, str]]:
    yield "note", f"seed revealed: {e.seed[:16]}\u2026 (anyone can now recompute every seeded die)"


_WRITERS: dict[type[EventBase], Callable[..., Iterator[tuple[LineKind, str]]]] = {
    FightStarted: _started,
    CombatantJoined: _joined,
    DiceRolled: _rolled,
    StaticCheckResolved: _static,
    ContestResolved: _contest,
    SaveResolved: _save,
    SeedRevealed: _revealed,
}


def narrate(records: Iterable[StoredEvent]) -> Iterator[Line]:
    """The narrative of a log, line by line, in event order."""
    names = _Names()
    for rec in records:
        for kind, text in _WRITERS[type(rec.event)](rec.event, names):
            yield Line(rec.seq, kind, text)
