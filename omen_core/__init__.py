"""omen: an event-sourced combat engine for the tabletop RPG ØMEN: After Dragons.

The public API in one import: :class:`Fight`, the stores, the dice sources
and the command parts. Everything else lives in its own module.
"""

from .decide import CheckSpec
from .dice import ManualDice, ScriptedDice, SeededDice
from .engine import Fight, system_clock
from .errors import OmenError
from .events import Modifier
from .store import EventStore, MemoryStore

__version__ = "0.1.0"

__all__ = [
    "Fight",
    "CheckSpec",
    "Modifier",
    "SeededDice",
    "ManualDice",
    "ScriptedDice",
    "EventStore",
    "MemoryStore",
    "OmenError",
    "system_clock",
]
