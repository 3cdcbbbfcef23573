"""Shared helpers for the event store tests: chained events and a store of every backend."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from omen_core.events import (
    GENESIS_HASH,
    DiceRolled,
    Die,
    Event,
    Redone,
    SeedRevealed,
    StoredEvent,
    Undone,
    seal,
)
from omen_core.store import EventStore, JsonlStore, MemoryStore, PostgresStore, SqliteStore

BACKENDS = ("memory", "jsonl-dir", "jsonl-single", "sqlite", "postgres")


def make_event(fight_id: str, seq: int, prev_hash: str, tag: int = 0) -> StoredEvent:
    """One sealed event at ``seq``: a DiceRolled on odd seqs, a SeedRevealed on even ones."""
    if seq % 2:
        event: Event = roll(seq, tag)
    else:
        event = SeedRevealed(seed=f"{tag % 256:02x}{seq % 65536:04x}")
    return seal(fight_id, seq, 1000 * seq, prev_hash, event)


def make_events(fight_id: str, count: int, start_seq: int = 1, prev_hash: str = GENESIS_HASH,
                tag: int = 0) -> list[StoredEvent]:
    """``count`` events of ``fight_id`` chained from ``prev_hash``, seqs ``start_seq``, ``start_seq + 1``..."""
    events = []
    for seq in range(start_seq, start_seq + count):
        events.append(make_event(fight_id, seq, prev_hash, tag))
        prev_hash = events[-1].hash
    return events


def continue_from(events: list[StoredEvent], fight_id: str, count: int, tag: int = 0) -> list[StoredEvent]:
    """``count`` events chained after the last of ``events`` (or from genesis if there are none)."""
    if not events:
        return make_events(fight_id, count, tag=tag)
    return make_events(fight_id, count, events[-1].seq + 1, events[-1].hash, tag)


def chain(fight_id: str, events: list[Event], start_seq: int = 1, prev_hash: str = GENESIS_HASH) -> list[StoredEvent]:
    """``events`` sealed as ``fight_id``'s events from ``start_seq``, each linked to the one before."""
    sealed = []
    for seq, event in enumerate(events, start_seq):
        sealed.append(seal(fight_id, seq, 1000 * seq, prev_hash, event))
        prev_hash = sealed[-1].hash
    return sealed


def roll(seq: int, tag: int = 0) -> DiceRolled:
    """A plain die roll: an event that is no landmark."""
    return DiceRolled(counter=seq, purpose="hit", roller=f"r{tag}",
                      dice=(Die(pool="primary", sides=6, face=seq % 6 + 1),), source="scripted")


def with_landmarks(fight_id: str, start_seq: int = 1, prev_hash: str = GENESIS_HASH) -> list[StoredEvent]:
    """Eight events, the landmarks among them an undo (third), a redo of it (fifth), another undo (seventh) and
    the revealed seed (eighth); the others plain rolls. The store checks no rules, so the undos need not fit."""
    s = start_seq
    return chain(fight_id, [roll(s), roll(s + 1), Undone(from_seq=s + 1, to_seq=s + 1, reason="oops"),
                            roll(s + 3), Redone(undo_seq=s + 2, reason="no"), roll(s + 5),
                            Undone(from_seq=s + 5, to_seq=s + 5), SeedRevealed(seed="ab" * 16)],
                 start_seq, prev_hash)


def open_backend(kind: str, where: Path, pg_url: str = "") -> EventStore:
    """A fresh store of backend ``kind`` keeping its files under ``where`` (PostgreSQL: in the fresh schema
    ``pg_url`` names)."""
    if kind == "memory":
        return MemoryStore()
    if kind == "jsonl-dir":
        return JsonlStore(where / "fights")
    if kind == "jsonl-single":
        return JsonlStore.single(where / "fight.jsonl")
    if kind == "sqlite":
        return SqliteStore(where / "fights.db")
    if kind == "postgres":
        return PostgresStore(pg_url)
    raise ValueError(kind)


def close_backend(store: EventStore) -> None:
    """Close a store if its backend holds resources."""
    close = getattr(store, "close", None)
    if close is not None:
        close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The name of each backend in turn."""
    name: str = request.param
    return name


@pytest.fixture
def store_factory(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[[], EventStore]]:
    """Makes fresh, independent stores of the current backend (PostgreSQL: each in a schema of its own); closes
    them at teardown."""
    opened: list[EventStore] = []
    counter = itertools.count()
    postgres = request.getfixturevalue("postgres") if backend == "postgres" else None

    def factory() -> EventStore:
        where = tmp_path / f"store-{next(counter)}"
        where.mkdir()
        opened.append(open_backend(backend, where, postgres.fresh_url() if postgres else ""))
        return opened[-1]

    yield factory
    for store in opened:
        close_backend(store)


@pytest.fixture
def store(store_factory: Callable[[], EventStore]) -> EventStore:
    """A fresh store of the current backend."""
    return store_factory()
