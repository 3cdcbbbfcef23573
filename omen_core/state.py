"""Fight state and the projection that folds events into it (``evolve``), used live and in replay."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from msgspec.structs import replace

from .content import CombatantSheet
from .events import (
    GENESIS_HASH,
    CombatantJoined,
    DiceRolled,
    DiceSourceKind,
    Event,
    FightStarted,
    SeedRevealed,
    StoredEvent,
)

__all__ = ["CombatantState", "FightState", "evolve", "fold", "project"]


class CombatantState(msgspec.Struct, frozen=True, kw_only=True):
    """A combatant as the fight has left it: its sheet and current resources (C3)."""

    sheet: CombatantSheet
    hp: int
    will: int

    @property
    def id(self) -> str:
        """The combatant's id from its sheet."""
        return self.sheet.id


class FightState(msgspec.Struct, frozen=True, kw_only=True):
    """Everything derived from a fight's events so far. Never stored: always rebuilt by folding."""

    fight_id: str = ""
    version: int = 0
    last_hash: str = GENESIS_HASH
    started: bool = False
    title: str = ""
    ruleset: str = ""
    dice: DiceSourceKind | None = None
    seed_commitment: str | None = None
    revealed_seed: str | None = None
    rolls: int = 0
    combatants: dict[str, CombatantState] = {}


def evolve(state: FightState, event: Event) -> FightState:
    """Fold one event into the state. Pure; events with no lasting effect leave it unchanged."""
    match event:
        case FightStarted():
            return replace(state, started=True, title=event.title, ruleset=event.ruleset,
                           dice=event.dice, seed_commitment=event.seed_commitment)
        case CombatantJoined(sheet=sheet):
            joined = CombatantState(sheet=sheet, hp=sheet.hp, will=sheet.will)
            return replace(state, combatants={**state.combatants, sheet.id: joined})
        case DiceRolled():
            return replace(state, rolls=event.counter)
        case SeedRevealed():
            return replace(state, revealed_seed=event.seed)
    return state


def fold(state: FightState, stored: StoredEvent) -> FightState:
    """Fold one stored event: its payload through :func:`evolve`, plus the envelope's position."""
    state = evolve(state, stored.event)
    return replace(state, fight_id=stored.fight_id, version=stored.seq, last_hash=stored.hash)


def project(records: Iterable[StoredEvent], state: FightState | None = None) -> FightState:
    """Fold a stream of stored events, from the empty state or from ``state``."""
    state = FightState() if state is None else state
    for rec in records:
        state = fold(state, rec)
    return state
