"""omen_cli/__init__.py: importing the CLI registers every command and imports nothing it runs on (``omen --help``
stays fast: the engine, the stores, Rich and structlog wait for the command that needs them); each command's help
names what it takes as the README does."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from typer.testing import CliRunner

from omen_cli import COMMANDS, GROUPS, SUMMARIES, app

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


def test_omen_help_shows_each_commands_summary_whole() -> None:
    """``omen --help`` gives each command and group its one-line summary (SUMMARIES), none cut short with '...'."""
    result = CliRunner().invoke(app, ["--help"])
    rows = [line.split(None, 1) for line in result.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert {row[0]: row[1] for row in rows} == SUMMARIES
    for group in ("db", "fixtures"):
        listed = CliRunner().invoke(app, [group, "--help"]).stdout.split("Commands:")[1]
        assert "..." not in listed and listed.strip()


def _helps() -> dict[str, str]:
    """Every command's ``--help`` (``fixtures check`` as two words)."""
    runner = CliRunner()
    names = [name for name, _ in COMMANDS] + ["db init", "fixtures check", "fixtures record"]
    return {name: runner.invoke(app, [*name.split(), "--help"]).stdout for name in names}


def test_each_help_names_what_it_takes_in_capitals() -> None:
    """Each ``--help`` names its arguments as the README does (``omen explain [OPTIONS] {LOG} {SEQ}``, ``omen db
    init [OPTIONS] {URL}``), each option's value in capitals (``--head SEQ:HASH``, ``--port PORT``) or as the
    choices it takes (``--format <text|md|html>``), never a type of the code's (``<list[str]>``, ``<int range>``);
    a flag has no ``--no-`` twin; no stray markup or dots (``postgresql://....``, ``omen\\[dask]``)."""
    usages = {}
    for name, text in _helps().items():
        usage = text.splitlines()[0]
        usages[name] = usage.split("[OPTIONS]")[1].split()
        options = text.split("Options:")[1]
        assert re.findall(r"^  (?:-\w, )?--\S+ <(?![\w-]+(?:\|[\w-]+)+>)[^>]*>", options, re.M) == [], name
        assert " / --no-" not in options and "....:" not in text and "...." not in text and "\\[" not in text, name
    assert usages["run"] == ["{SCENARIO}"] and usages["explain"] == ["{LOG}", "{SEQ}"]
    assert usages["do"] == ["{LOG}", "[COMMAND]"] and usages["fixtures record"] == ["[NAME]..."]
    assert usages["db init"] == ["{URL}"] and usages["copy"] == ["{SRC}", "{DST}"]
    helps = _helps()
    assert "--head SEQ:HASH" in helps["verify"] and "--port PORT" in helps["serve"]
    assert "--format <text|md|html>" in helps["log"] and "--policy SIDE=NAME" in helps["simulate"]
