"""omen_cli: the ``omen`` command line, above omen_replay and omen_server, one module per group of commands.

Importing it registers every command on :data:`app` (the table below, in the order ``omen --help`` lists them);
each command imports what it runs on when it runs, so ``omen --help`` imports typer and this package alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from . import fixtures, live, logs, play, schema, serve, simulate
from .app import EXIT_CODES, app, main
from .live import MAX_COMMAND_BYTES

__all__ = ["app", "main", "MAX_COMMAND_BYTES", "EXIT_CODES", "COMMANDS", "GROUPS", "SUMMARIES"]

#: Every command: its name and the function typer reads its arguments, options and help from.
COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("simulate", simulate.simulate_command),
    ("demo", play.demo),
    ("schema", schema.schema),
    ("verify", logs.verify_cmd),
    ("repair", logs.repair),
    ("run", play.run),
    ("replay", logs.replay_cmd),
    ("explain", logs.explain_cmd),
    ("log", logs.log_cmd),
    ("snapshot", logs.snapshot),
    ("status", live.status),
    ("do", live.do_cmd),
    ("undo", live.undo),
    ("redo", live.redo),
    ("serve", serve.serve),
    ("copy", logs.copy_cmd),
)

#: What ``omen --help`` says of each command and group, in a line it shows whole (each ``--help`` says the rest).
SUMMARIES: dict[str, str] = {
    "simulate": "Play an encounter many times; who wins, with intervals.",
    "demo": "Play the sample fight, print it, write and verify its log.",
    "schema": "Print the JSON Schema of an event, a command or another format.",
    "verify": "Audit a log: its chain, its dice, every command and total.",
    "repair": "Move what a crash left at a log's end to a side file.",
    "run": "Run a scenario file: play its fight and write the log.",
    "replay": "Rebuild a fight's state from its log, or step through it.",
    "explain": "Explain a roll, an attack, a save or a check, term by term.",
    "log": "Write a fight's session log: text, Markdown or HTML.",
    "snapshot": "Save a snapshot of the state beside the log (or clear them).",
    "status": "Where a fight is, what it waits for, the commands to give.",
    "do": "Give one command to a stored fight.",
    "undo": "Undo the last command (or back to --to SEQ) by an event.",
    "redo": "Take back the last undo, if nothing was done since.",
    "serve": "Serve fights over HTTP: the table page and the API.",
    "copy": "Copy fights between stores, byte for byte, chain checked.",
    "db": "The tables of a database store (PostgreSQL, SQLite).",
    "fixtures": "Golden fixtures: recorded fights replayed under the rules.",
}

#: The groups of subcommands: ``omen db ...`` and ``omen fixtures ...``.
GROUPS: tuple[tuple[str, typer.Typer], ...] = (("db", serve.db_app), ("fixtures", fixtures.fixtures_app))

for _name, _command in COMMANDS:
    app.command(_name, short_help=SUMMARIES[_name])(_command)
for _name, _group in GROUPS:
    app.add_typer(_group, name=_name, short_help=SUMMARIES[_name])
