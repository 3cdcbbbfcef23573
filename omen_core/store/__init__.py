"""Event stores: the EventStore protocol and its memory, JSON Lines and SQLite backends."""

from .base import EventStore, check_batch, check_fight_id
from .memory import MemoryStore

__all__ = ["EventStore", "MemoryStore", "check_batch", "check_fight_id"]
