"""Writer processes for the concurrency tests (module level, so the "spawn" start method can import them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omen_core.errors import ConcurrencyError
from omen_core.events import GENESIS_HASH, DiceRolled, Die, StoredEvent, seal
from omen_core.store import EventStore, JsonlStore, PostgresStore, SqliteStore


def open_store(kind: str, where: str) -> EventStore:
    """Open the store a test shares between processes."""
    if kind == "jsonl-dir":
        return JsonlStore(Path(where))
    if kind == "jsonl-single":
        return JsonlStore.single(Path(where))
    if kind == "sqlite":
        return SqliteStore(where)
    if kind == "postgres":
        return PostgresStore(where)
    raise ValueError(kind)


def close_store(store: EventStore) -> None:
    """Close a store if its backend holds resources."""
    close = getattr(store, "close", None)
    if close is not None:
        close()


def writer_event(fight_id: str, seq: int, prev_hash: str, writer: str, counter: int) -> StoredEvent:
    """An event that says which writer wrote it and which of its events it is."""
    event = DiceRolled(counter=counter, purpose="initiative", roller=writer,
                       dice=(Die(pool="primary", sides=6, face=counter % 6 + 1),), source="scripted")
    return seal(fight_id, seq, counter, prev_hash, event)


def last_state(store: EventStore, fight_id: str) -> tuple[int, str]:
    """The fight's version and the hash of its event at that version (genesis if none)."""
    version = store.version(fight_id)
    if version == 0:
        return 0, GENESIS_HASH
    reading = store.read(fight_id, version - 1)
    try:
        last = next(reading)  # the event at ``version``, even if more arrived since
    finally:
        reading.close()  # type: ignore[attr-defined]
    return version, last.hash


def race_once(writer: str, barrier: Any, results: Any, kind: str, where: str, fight_id: str) -> None:
    """Read the version, wait for the other writer, then append one event; report the outcome."""
    store = open_store(kind, where)
    try:
        version, last_hash = last_state(store, fight_id)
        barrier.wait(timeout=20)
        try:
            store.append(fight_id, [writer_event(fight_id, version + 1, last_hash, writer, 1)], version)
            results.put((writer, "ok", version))
        except ConcurrencyError as exc:
            results.put((writer, "conflict", (exc.fight_id, exc.expected, exc.actual)))
    except BaseException as exc:  # report anything else so the test fails with a reason
        results.put((writer, "error", repr(exc)))
    finally:
        close_store(store)


def append_loop(writer: str, barrier: Any, results: Any, kind: str, where: str, fight_id: str,
                count: int) -> None:
    """Append ``count`` events one by one, retrying each on ConcurrencyError; report the retries."""
    store = open_store(kind, where)
    retries = 0
    try:
        barrier.wait(timeout=20)
        for counter in range(1, count + 1):
            while True:
                version, last_hash = last_state(store, fight_id)
                ev = writer_event(fight_id, version + 1, last_hash, writer, counter)
                try:
                    store.append(fight_id, [ev], version)
                    break
                except ConcurrencyError:
                    retries += 1
        results.put((writer, "ok", retries))
    except BaseException as exc:  # report anything else so the test fails with a reason
        results.put((writer, "error", repr(exc)))
    finally:
        close_store(store)


def append_batches(path: str, fight_id: str, ready: Any, kind: str = "jsonl-single") -> None:
    """Append batches of 2 to 8 large events (each event says its batch and the batch's size) to the store of
    ``kind`` at ``path`` (a single-file JSON Lines store by default), resuming after what is there, until killed."""
    store = open_store(kind, path)
    version, last_hash = last_state(store, fight_id)
    ready.set()
    while True:
        size = 2 + version % 7
        batch = []
        for seq in range(version + 1, version + size + 1):
            event = DiceRolled(counter=seq, purpose="hit", roller="crash",
                               dice=tuple(Die(pool="primary", sides=6, face=i % 6 + 1) for i in range(200)),
                               source="scripted")
            batch.append(seal(fight_id, seq, seq, last_hash, event, batch=version + 1, batch_size=size))
            last_hash = batch[-1].hash
        version = store.append(fight_id, batch, version)
