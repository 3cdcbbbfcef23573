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
    SeedRevealed,
    StoredEvent,
    seal,
)
from omen_core.store import EventStore, JsonlStore, MemoryStore, SqliteStore

BACKENDS = ("memory", "jsonl-dir", "jsonl-single", "sqlite")


def make_event(fight_id: str, seq: int, prev_hash: str, tag: int = 0) -> StoredEvent:
    """One sealed event at ``seq``: a DiceRolled on odd seqs, a SeedRevealed on even ones."""
    if seq % 2:
        event = DiceRolled(counter=seq, purpose="hit", roller=f"r{tag}",
                           dice=(Die(pool="primary", sides=6, face=seq % 6 + 1),), source="scripted")
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


def open_backend(kind: str, where: Path) -> EventStore:
    """A fresh store of backend ``kind`` keeping its files under ``where``."""
    if kind == "memory":
        return MemoryStore()
    if kind == "jsonl-dir":
        return JsonlStore(where / "fights")
    if kind == "jsonl-single":
        return JsonlStore.single(where / "fight.jsonl")
    if kind == "sqlite":
        return SqliteStore(where / "fights.db")
    raise ValueError(kind)


def close_backend(store: EventStore) -> None:
    """Close a store if its backend holds resources."""
    close = getattr(store, "close", None)
    if close is not None:
        close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The name of each backend in turn."""
    return request.param


@pytest.fixture
def store_factory(backend: str, tmp_path: Path) -> Iterator[Callable[[], EventStore]]:
    """Makes fresh, independent stores of the current backend; closes them at teardown."""
    opened: list[EventStore] = []
    counter = itertools.count()

    def factory() -> EventStore:
        where = tmp_path / f"store-{next(counter)}"
        where.mkdir()
        opened.append(open_backend(backend, where))
        return opened[-1]

    yield factory
    for store in opened:
        close_backend(store)


@pytest.fixture
def store(store_factory: Callable[[], EventStore]) -> EventStore:
    """A fresh store of the current backend."""
    return store_factory()
