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

__all__ = ["app", "main", "MAX_COMMAND_BYTES", "EXIT_CODES", "COMMANDS", "GROUPS"]

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

#: The groups of subcommands: ``omen db ...`` and ``omen fixtures ...``.
GROUPS: tuple[tuple[str, typer.Typer], ...] = (("db", serve.db_app), ("fixtures", fixtures.fixtures_app))

for _name, _command in COMMANDS:
    app.command(_name)(_command)
for _name, _group in GROUPS:
    app.add_typer(_group, name=_name)
