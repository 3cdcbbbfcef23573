"""Event stores: the EventStore protocol and its memory, JSON Lines, SQLite and PostgreSQL backends."""

from .base import EventStore, check_batch, check_fight_id
from .jsonl import JsonlStore
from .memory import MemoryStore
from .postgres import PostgresStore
from .snapshots import FileSnapshots, MemorySnapshots, PostgresSnapshots, SnapshotStore, SqliteSnapshots
from .sqlite import SqliteStore
from .url import open_existing_store, open_snapshots, open_store

__all__ = ["EventStore", "JsonlStore", "MemoryStore", "SqliteStore", "PostgresStore", "check_batch", "check_fight_id",
           "open_store", "open_existing_store", "open_snapshots", "SnapshotStore", "MemorySnapshots",
           "FileSnapshots", "SqliteSnapshots", "PostgresSnapshots"]
