"""omen_cli/__init__.py: importing the CLI registers every command and imports nothing it runs on (``omen --help``
stays fast: the engine, the stores, Rich and structlog wait for the command that needs them)."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from omen_cli import COMMANDS, GROUPS, app

#: Packages a bare ``import omen_cli`` must not load (each command imports what it needs when it runs).
HEAVY = ("omen_core", "omen_replay", "omen_server", "rich", "structlog", "msgspec", "litestar", "jinja2")


def test_importing_the_cli_loads_no_engine_store_or_console() -> None:
    """A fresh interpreter importing omen_cli holds none of omen's other packages, Rich, structlog or msgspec."""
    code = "import json, sys, omen_cli; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []
    assert "omen_cli.simulate" in loaded  # the commands themselves are registered, only their imports wait


def test_every_command_of_the_table_is_in_the_help_in_its_order() -> None:
    """``omen --help`` lists the commands of COMMANDS, then the groups of GROUPS, in the tables' order."""
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == [name for name, _ in COMMANDS] + [name for name, _ in GROUPS]


def test_python_dash_m_omen_cli_runs_the_cli() -> None:
    """``python -m omen_cli --version`` prints omen's version and the log's schema version."""
    done = subprocess.run([sys.executable, "-m", "omen_cli", "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("omen ") and "log schema version" in done.stdout
