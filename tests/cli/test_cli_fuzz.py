"""A fuzz test of the omen command line: whatever the arguments and the files, exit 0, 1, 2 or 3 and never a
traceback; an error is one line, ``omen: error: ...``.

Argument lists are drawn from the real CLI (its subcommands and each one's options) and from values and
paths that break things: empty, huge and negative values, a directory, an empty file, NUL bytes (in files and in
arguments), random binary, invalid UTF-8, Unicode digits and bidi controls, deeply nested TOML and JSON, a
non-database behind ``sqlite:///``, a missing directory, a FIFO, devices (``/dev/full``, ``/dev/zero``,
``/dev/null``), a read-only directory, a symbolic link out of the folder, and a valid demo log and scenario. Most
cases run in process (typer's CliRunner); the few that need a real standard output run in a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omen_cli import app

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "fixtures" / "ember-ford" / "scenario.toml"
runner = CliRunner()
TRACEBACK = "Traceback (most recent call last)"


def _commands() -> dict[str, list[str]]:
    """Every subcommand of the real CLI (``fixtures check`` as two words) and the options it takes."""
    group: Any = typer.main.get_command(app)  # typer's own click: its groups are not click.Group
    found: dict[str, list[str]] = {}
    for name, command in group.commands.items():
        subs = getattr(command, "commands", None) or {"": command}
        for sub, leaf in subs.items():
            found[f"{name} {sub}".strip()] = [o for p in leaf.params for o in p.opts if o.startswith("-")]
    return found


COMMANDS = {name: options for name, options in _commands().items() if name != "serve"}
# (omen serve runs until it is stopped, so a valid draw would never return; its bad input is tested in
# tests/server/test_processes.py)
GLOBAL_OPTIONS = ["--log-format", "--log-level", "--version", "--help"]

PATHS = ["a-dir", "a-dir/", "empty.toml", "empty.jsonl", "nul.toml", "nul.jsonl", "random.bin", "random.jsonl",
         "badutf8.toml", "badutf8.json", "deep.toml", "deep-inline.toml", "deep.json", "deep.jsonl",
         "deep-sheet.toml", "sqlite:///notadb.db", "sqlite:///missing-dir/x.db", "missing-dir/x.jsonl",
         "missing-dir/", "missing-dir/x.html", "/dev/full", "/dev/null", "read-only/x.jsonl", "read-only/",
         "read-only/x.html", "demo.jsonl", "ember-ford/scenario.toml", "memory:", "sqlite::memory:", "out.html",
         "new.jsonl", "new-dir/", "fifo", "fifo.jsonl", "fifo.toml", "/dev/zero", "nul\x00.jsonl", "sqlite:///nul\x00.db",
         "\u00b2.jsonl", "\u202edemo.jsonl", "linked-out/", "logs/", "logs/demo.jsonl.snapshots"]


def _deep_toml(depth: int) -> bytes:
    return ("a = " + "[" * depth + "]" * depth + "\n").encode()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding every kind of file the fuzz test points the CLI at."""
    root = tmp_path_factory.mktemp("fuzz-base")
    (root / "a-dir").mkdir()
    (root / "empty.toml").write_bytes(b"")
    (root / "empty.jsonl").write_bytes(b"")
    (root / "nul.toml").write_bytes(b"\0" * 512)
    (root / "nul.jsonl").write_bytes(b"\0" * 512)
    (root / "random.bin").write_bytes(os.urandom(2048))
    (root / "random.jsonl").write_bytes(os.urandom(2048))
    (root / "badutf8.toml").write_bytes(b'[fight]\nid = "caf\xe9"\n')
    (root / "badutf8.json").write_bytes(b'{"command": "end_turn", "who": "\xe9"}')
    (root / "deep.toml").write_bytes(_deep_toml(500))
    (root / "deep-inline.toml").write_bytes(("a = " + "{b = " * 500 + "1" + "}" * 500 + "\n").encode())
    (root / "deep.json").write_bytes(b"[" * 5000 + b"]" * 5000)
    (root / "deep.jsonl").write_bytes(b"[" * 5000 + b"]" * 5000 + b"\n")
    (root / "sheets").mkdir()
    (root / "sheets" / "deep.toml").write_bytes(_deep_toml(500))
    (root / "deep-sheet.toml").write_text('[fight]\nid = "deep"\n\n[[combatants]]\nsheet = "sheets/deep.toml"\n')
    (root / "notadb.db").write_bytes(b"this is not a database\n" * 40)
    (root / "read-only").mkdir()
    shutil.copytree(SCENARIO.parent, root / "ember-ford")
    assert runner.invoke(app, ["demo", "--short", "--log", str(root / "demo.jsonl")]).exit_code == 0
    return root


@pytest.fixture(scope="module")
def workdirs(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """A fresh copy of ``base`` for each example, so one example's writes never change the next's files."""
    parent = tmp_path_factory.mktemp("fuzz-runs")
    count = iter(range(10**9))

    def make() -> Path:
        here = parent / f"run-{next(count)}"
        shutil.copytree(base, here, symlinks=True)
        (here / "read-only").chmod(0o555)
        for fifo in ("fifo", "fifo.jsonl", "fifo.toml"):
            os.mkfifo(here / fifo)
        (here / "elsewhere").mkdir()
        (here / "elsewhere" / "1.json").write_text("precious")
        (here / "logs").mkdir()
        shutil.copy(here / "demo.jsonl", here / "logs" / "demo.jsonl")
        (here / "logs" / "demo.jsonl.snapshots").symlink_to(here / "elsewhere")
        (here / "linked-out").mkdir()
        (here / "linked-out" / "demo.jsonl").symlink_to(here / "demo.jsonl")
        return here

    return make


VALUES = st.one_of(
    st.sampled_from(["", " ", "-1", "0", "1", "-99999999999999999999", "9" * 400, "nan", "abc", "zz", "00",
                     "0de0d1ce" * 4, "1:" + "0" * 64, ":", "{}", "{", '{"command": "end_turn", "who": "vesh"}',
                     'command = "end_turn"', "text", "md", "html", "event", "command", "options", "do",
                     "json", "console", "debug", "nope", "demo", "ember-ford", "\x1b[31m", "é", "\u202e",
                     "\u00b2", "1\u0663", "\u00b2:" + "a" * 64, "a\x00b", "\x00", "\u00b2" * 3]),
    st.text(max_size=20),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    """An argument list: maybe global options, a subcommand, then its options, paths and values in any order."""
    argv: list[str] = []
    if draw(st.booleans()) and draw(st.booleans()):
        argv += draw(st.lists(st.sampled_from(GLOBAL_OPTIONS[:2]), max_size=1))
        argv += [draw(VALUES)] if argv else []
    name = draw(st.sampled_from(sorted(COMMANDS)))
    argv += name.split()
    words = st.one_of(st.sampled_from(PATHS), st.sampled_from(COMMANDS[name] or ["--help"]), VALUES)
    argv += draw(st.lists(words, max_size=6))
    if name == "demo":
        argv.append("--short")  # the whole demo takes a second; its arguments are the same
    return argv


def _parses(line: str) -> bool:
    """Whether ``line`` is one JSON object."""
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _assert_no_crash(output: str, code: int, exception: BaseException | None, argv: list[str],
                     stderr: str = "") -> None:
    """No traceback, no uncaught exception, an exit code the CLI documents, and an error said in one line."""
    assert exception is None or isinstance(exception, SystemExit), (argv, repr(exception))
    assert TRACEBACK not in output, (argv, output)
    assert code in (0, 1, 2, 3), (argv, code, output)
    if code in (2, 3) and not stderr.startswith("Usage:"):  # (a group given alone prints its help)
        errors = [line for line in stderr.splitlines()  # (under --log-format json, an error is a JSON object)
                  if line.startswith(("omen: error: ", '{"event": "error"', '{"event":"error"'))]
        assert len(errors) == 1, (argv, stderr)
        if any(a == "--log-format=json" or (a == "--log-format" and argv[i + 1:i + 2] == ["json"])
               for i, a in enumerate(argv)):  # every line omen writes on stderr is JSON then (README)
            assert all(_parses(line) for line in stderr.splitlines()), (argv, stderr)
    assert (Path.cwd() / "elsewhere" / "1.json").read_text() == "precious", argv  # nothing followed the link


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(argv=argvs())
def test_any_arguments_exit_0_1_or_2_without_a_traceback(workdirs: Callable[[], Path], argv: list[str]) -> None:
    """Whatever the arguments and whatever the files they name, the CLI ends with exit 0, 1 or 2 and no traceback."""
    here = workdirs()
    previous = os.getcwd()
    os.chdir(here)
    try:
        result = runner.invoke(app, argv, catch_exceptions=True)
        _assert_no_crash(result.stdout + result.stderr, result.exit_code, result.exception, argv, result.stderr)
    finally:
        os.chdir(previous)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode),
                         st.sampled_from([b"[fight]\nid = 5\n", b"[fight]\nid = \"x\"\ncombatants = 3\n",
                                          b"[fight]\nid = \"x\"\n[[commands]]\ncommand = 1\n",
                                          b"commands = \"x\"\n[fight]\nid = \"x\"\n", b"\xff\xfe[\0f\0]\0"])),
       command=st.sampled_from(["run", "do"]))
def test_any_file_contents_exit_0_1_or_2_without_a_traceback(workdirs: Callable[[], Path], content: bytes,
                                                             command: str) -> None:
    """A scenario or a command file with any bytes in it is read, refused or run, never a traceback."""
    here = workdirs()
    (here / "fuzzed.toml").write_bytes(content)
    argv = (["run", "fuzzed.toml", "--log", "fuzzed.jsonl"] if command == "run"
            else ["do", "demo.jsonl", "--file", "fuzzed.toml"])
    previous = os.getcwd()
    os.chdir(here)
    try:
        result = runner.invoke(app, argv, catch_exceptions=True)
        _assert_no_crash(result.stdout + result.stderr, result.exit_code, result.exception, argv, result.stderr)
    finally:
        os.chdir(previous)


def omen_process(argv: list[str], cwd: Path,
                 stdout: int | IO[str] = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """Run ``python -m omen_cli`` in a real process (for what needs a real standard output)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "omen_cli", *argv], check=False, cwd=cwd, env=env, text=True,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=120)


@pytest.mark.parametrize("argv", [["log", "demo.jsonl"], ["log", "demo.jsonl", "--format", "html"],
                                  ["verify", "demo.jsonl"], ["verify", "demo.jsonl", "--json"],
                                  ["replay", "demo.jsonl", "--json"], ["schema"], ["--version"],
                                  ["status", "demo.jsonl"], ["--help"], ["verify", "--help"]])
def test_standard_output_to_dev_full_is_a_short_error(workdirs: Callable[[], Path], argv: list[str]) -> None:
    """Standard output on a full device is a one-line error naming standard output, exit 2, no traceback."""
    with open("/dev/full", "w") as full:
        done = omen_process(argv, workdirs(), stdout=full)
    assert done.returncode == 2, done.stderr
    assert TRACEBACK not in done.stderr and "Exception ignored" not in done.stderr
    assert "cannot write to standard output" in done.stderr


def test_a_scenario_refused_part_way_says_so_with_standard_output_full(tmp_path: Path) -> None:
    """``omen run SCENARIO > /dev/full`` where a command is refused: the refusal (file, line, rule, path) and what
    had been written are said on standard error, exit 3; the story that could not be printed does not hide them
    (it said only that standard output could not be written; found by a tester). Played in memory (no --log), the
    refusal is exit 2: nothing was kept (it said omen had written to "memory::")."""
    scenario = tmp_path / "refused.toml"
    scenario.write_text('[fight]\nid = "duel"\ndice = "manual"\n' + "".join(
        f'[[combatants]]\nid = "{who}"\nname = "{who}"\nside = "{side}"\nhp = 30\n'
        'attributes = { STR = { die = "d8" }, AGI = { die = "d6" }, INT = { die = "d4" }, RES = { die = "d6" }, '
        'FCS = { die = "d6" } }\n' for who, side in (("ash", "north"), ("bo", "south")))
        + '[[commands]]\ncommand = "roll_initiative"\ndice = [6, 1]\n'
        + '[[commands]]\ncommand = "pass_reaction"\nwho = "bo"\n')
    with open("/dev/full", "w") as full:
        done = omen_process(["run", str(scenario), "--log", str(tmp_path / "r.jsonl")], tmp_path, stdout=full)
    assert done.returncode == 3 and TRACEBACK not in done.stderr, done.stderr
    assert done.stderr.startswith("omen: error: ") and "pass_reaction: [C23] no reaction window is open" in \
        done.stderr and "(at $.commands[1])" in done.stderr and "but omen had written" in done.stderr

    in_memory = omen_process(["run", str(scenario)], tmp_path)  # no --log: played in memory, nothing kept
    assert in_memory.returncode == 2 and "pass_reaction: [C23]" in in_memory.stderr, in_memory.stderr
    assert "omen had written" not in in_memory.stderr and "memory:" not in in_memory.stderr  # (said "memory::")


@pytest.mark.parametrize("argv", [["run", "deep.toml"], ["run", "/dev/zero"], ["do", "demo.jsonl", "--file",
                                                                              "/dev/zero"],
                                  ["log", "demo.jsonl", "-o", "missing-dir/x.html"], ["run", "badutf8.toml"],
                                  ["verify", "sqlite:///notadb.db"], ["run", "deep-sheet.toml"]])
def test_real_processes_refuse_bad_input_without_a_traceback(workdirs: Callable[[], Path], argv: list[str]) -> None:
    """In a real process too, bad files and paths are a short error naming them (exit 2), never a traceback."""
    done = omen_process(argv, workdirs())
    assert done.returncode == 2, done.stderr
    assert TRACEBACK not in done.stderr and done.stderr.startswith("omen: error:")


def test_a_closed_pipe_ends_a_reader_without_a_word(workdirs: Callable[[], Path]) -> None:
    """``omen log LOG | head -1``: the closed pipe ends the command without a word (exit 2), never a
    BrokenPipeError traceback."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen([sys.executable, "-m", "omen_cli", "log", "demo.jsonl"], cwd=workdirs(), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()
        stderr = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
    assert code in (0, 2)  # 0 if everything fit in the pipe before it closed
    assert stderr == ""
