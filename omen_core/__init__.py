"""omen: an event-sourced combat engine for the tabletop RPG ØMEN: After Dragons.

The public API in one import: :class:`Fight`, the stores, the dice sources,
the command parts and :func:`command_from` (a command from data). Everything else lives in its own module.
"""

from .commands import command_from
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
    "command_from",
    "Modifier",
    "SeededDice",
    "ManualDice",
    "ScriptedDice",
    "EventStore",
    "MemoryStore",
    "OmenError",
    "system_clock",
]
