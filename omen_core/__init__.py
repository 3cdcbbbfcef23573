"""omen: an event-sourced combat engine for the tabletop RPG ØMEN: After Dragons."""

__version__ = "0.1.0"
