"""Tests for the CLI on bad input: output it cannot write, files it must not read whole, control characters in
names, bad seeds; each a short message naming what and where, exit 2, and nothing left behind."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
from typer.testing import CliRunner, Result

from omen_cli import MAX_COMMAND_BYTES, app
from omen_cli.console import fold_command
from omen_core.walk import CRLF_WORDS
from omen_replay.output import visible

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
HOSTILE = "V\x1b[31mRED\x1b]0;pwned\x07 <script>alert(1)</script> *b* \n\tx\x9b \u202eNAL\u2066x\u2069\u200f"
# every C0 and C1 control but the writer's own newline, the bidirectional controls, the line separators
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def omen(*args: str) -> Result:
    """Run the CLI in-process and return the result."""
    return runner.invoke(app, list(args))


def said(result: Result) -> str:
    """Everything the CLI printed, stdout and stderr, on one line."""
    return " ".join((result.stdout + result.stderr).split())


@pytest.fixture
def demo_log(tmp_path: Path) -> Path:
    """The short demo's log, before the GM ends the fight and reveals the seed: a fight that takes more commands,
    whose commands may be undone (C42: a reveal is never undone)."""
    from omen_core.store import JsonlStore
    from omen_replay.demo import run_demo

    path = tmp_path / "demo.jsonl"
    run_demo(JsonlStore.single(path), finish=False)
    return path


def _toml(text: str) -> str:
    """``text`` as a TOML basic string (control characters as \\u escapes)."""
    return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c in '"\\' else c
                         for c in text) + '"'


SHEET = ('attributes = {{ STR = {{ die = "d8", bonus = 2 }}, AGI = {{ die = "d6", bonus = 1 }}, '
         'INT = {{ die = "d4" }}, RES = {{ die = "d6", bonus = 1 }}, FCS = {{ die = "d6" }} }}\n'
         'weapons = [{{ id = "axe", weapon_damage = 4, damage_type = "slashing" }}]\n')


@pytest.fixture
def hostile_scenario(tmp_path: Path) -> Path:
    """A scenario whose title, a combatant's name, a condition's reason and a note carry escape sequences."""
    path = tmp_path / "hostile.toml"
    path.write_text(
        f'[fight]\nid = "hostile"\ntitle = {_toml("T" + HOSTILE)}\n\n'
        f'[[combatants]]\nid = "ash"\nname = {_toml(HOSTILE)}\nside = "north"\nhp = 12\n' + SHEET.format() +
        '\n[[combatants]]\nid = "bo"\nname = "Bo"\nside = "south"\nhp = 10\n' + SHEET.format() +
        f'\n[[commands]]\ncommand = "apply_condition"\nwho = "bo"\ncondition = "Prone"\nreason = {_toml(HOSTILE)}\n'
        f'\n[[commands]]\ncommand = "leave_fight"\nwho = "ash"\nreason = "fled"\nnote = {_toml(HOSTILE)}\n')
    return path


@pytest.fixture
def hostile_log(tmp_path: Path, hostile_scenario: Path) -> Path:
    """The log of the hostile scenario."""
    log = tmp_path / "hostile.jsonl"
    result = omen("run", str(hostile_scenario), "--log", str(log), "--quiet")
    assert result.exit_code == 0, said(result)
    return log


def leftovers(directory: Path) -> list[str]:
    """Temporary files an output left in ``directory``."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


class TestOutputFiles:
    @pytest.mark.parametrize("fmt", ["text", "md", "html"])
    def test_a_missing_directory_names_it(self, demo_log: Path, tmp_path: Path, fmt: str) -> None:
        """``-o`` into a directory that does not exist names the path and the directory, exit 2, creating nothing."""
        target = tmp_path / "nodir" / "x.out"
        result = omen("log", str(demo_log), "--format", fmt, "-o", str(target))
        assert result.exit_code == 2
        assert f"{target}: cannot write the session log: the directory {target.parent} does not exist" in said(result)
        assert not target.parent.exists()

    def test_a_directory_as_output_names_it(self, demo_log: Path, tmp_path: Path) -> None:
        """``-o`` naming a directory is bad input naming it, and the directory is untouched."""
        (tmp_path / "adir").mkdir()
        result = omen("log", str(demo_log), "-o", str(tmp_path / "adir"))
        assert result.exit_code == 2 and "adir: cannot write the session log: it is a directory" in said(result)
        assert list((tmp_path / "adir").iterdir()) == []

    @pytest.mark.parametrize("argv", [["log", "{log}", "-o", "/dev/full"], ["schema", "-o", "/dev/full"]])
    def test_a_full_device_is_named(self, demo_log: Path, argv: list[str]) -> None:
        """Writing to /dev/full is a short error naming it, exit 2."""
        result = omen(*[a.format(log=demo_log) for a in argv])
        assert result.exit_code == 2 and "/dev/full: cannot write" in said(result)
        assert "No space left on device" in said(result)

    def test_a_failed_render_leaves_no_file_and_keeps_the_old_one(self, tmp_path: Path) -> None:
        """A log that breaks mid-render leaves the earlier output file as it was and no temporary file."""
        torn = tmp_path / "torn.jsonl"
        torn.write_bytes(b"\0" * 64)
        target = tmp_path / "x.html"
        target.write_text("old")
        result = omen("log", str(torn), "--format", "html", "-o", str(target))
        assert result.exit_code == 2
        assert target.read_text() == "old" and leftovers(tmp_path) == []

    def test_a_written_file_replaces_the_old_one_whole(self, demo_log: Path, tmp_path: Path) -> None:
        """A good render replaces the output file and leaves no temporary file, with an ordinary file mode."""
        target = tmp_path / "x.md"
        target.write_text("old")
        assert omen("log", str(demo_log), "--format", "md", "-o", str(target)).exit_code == 0
        assert target.read_text().startswith("# ") and leftovers(tmp_path) == []
        assert target.stat().st_mode & 0o644 == 0o644

    def test_run_refuses_a_log_in_a_missing_directory(self, tmp_path: Path) -> None:
        """``run --log`` into a missing directory names it (exit 2) and creates nothing."""
        scenario = ROOT / "fixtures" / "ember-ford" / "scenario.toml"
        for log in (tmp_path / "nodir" / "f.jsonl", f"sqlite:///{tmp_path}/nodir/f.db", f"{tmp_path}/nodir/sub/"):
            result = omen("run", str(scenario), "--log", str(log), "--quiet")
            assert result.exit_code == 2, said(result)
            assert f"the directory {tmp_path / 'nodir'} does not exist" in said(result)
            assert not (tmp_path / "nodir").exists()

    def test_run_makes_a_directory_of_logs_whose_parent_exists(self, tmp_path: Path) -> None:
        """``run --log dir/`` makes the directory of logs, as docs/stores.md says, when its parent exists."""
        scenario = ROOT / "fixtures" / "ember-ford" / "scenario.toml"
        result = omen("run", str(scenario), "--log", f"{tmp_path}/logs/", "--quiet")
        assert result.exit_code == 0, said(result)
        assert (tmp_path / "logs" / "ember-ford.jsonl").is_file()

    def test_the_demo_still_makes_its_directory(self, tmp_path: Path) -> None:
        """The demo makes the directory of its log (its default is out/)."""
        result = omen("demo", "--short", "--log", str(tmp_path / "out" / "demo.jsonl"))
        assert result.exit_code == 0, said(result)
        assert (tmp_path / "out" / "demo.html").is_file()

    def test_run_on_a_file_that_is_not_a_database_names_it(self, tmp_path: Path) -> None:
        """``run --log sqlite:///x.db`` on a file that is no database names the file and what is wrong, exit 2."""
        (tmp_path / "x.db").write_bytes(b"not a database\n" * 100)
        url = f"sqlite:///{tmp_path}/x.db"
        result = omen("run", str(ROOT / "fixtures" / "ember-ford" / "scenario.toml"), "--log", url)
        assert result.exit_code == 2 and f"{tmp_path}/x.db" in said(result)
        assert "file is not a database" in said(result)


def _omen_process(argv: list[str], cwd: Path, stdout: int | IO[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "omen_cli", *argv], check=False, cwd=cwd, env=env, text=True,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=120)


def _closed_stdout(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``omen ARGV >&-``: the command run in a process started with no standard output at all."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "omen_cli", *argv], check=False,
                          cwd=cwd, env=env, text=True, stderr=subprocess.PIPE, timeout=120)


class TestStandardOutput:
    @pytest.mark.parametrize("argv", [["log", "demo.jsonl"], ["verify", "demo.jsonl"]])
    def test_a_full_standard_output_is_one_line_exit_2(self, demo_log: Path, argv: list[str]) -> None:
        """Standard output on /dev/full: one line saying so on stderr, exit 2, no traceback."""
        with open("/dev/full", "w") as full:
            done = _omen_process(argv, demo_log.parent, full)
        assert done.returncode == 2
        assert done.stderr.strip() == "omen: error: cannot write to standard output: No space left on device"


def _on_a_terminal(argv: list[str], cwd: Path, columns: int) -> str:
    """``omen ARGV`` with standard output and error on a terminal ``columns`` wide (a pseudo-terminal of that size,
    ``COLUMNS`` set as a shell sets it): what the terminal showed, colours left out, one ``\\n`` a line end."""
    import fcntl
    import pty
    import struct
    import termios

    main, other = pty.openpty()
    fcntl.ioctl(other, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}
    proc = subprocess.Popen([sys.executable, "-m", "omen_cli", *argv], cwd=cwd, env=env, stdout=other, stderr=other,
                            stdin=subprocess.DEVNULL)
    os.close(other)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal's other end is closed: the process is done
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert proc.wait(timeout=120) == 0, shown.decode(errors="replace")
    return re.sub(r"\x1b\[[0-9;]*m", "", shown.decode()).replace("\r\n", "\n")


def _too_wide(text: str, columns: int) -> list[str]:
    """The lines of ``text`` wider than ``columns`` cells that hold more than one word (a word wider than the
    terminal, a hash or a seed, is kept whole, for the terminal to show and to copy as one; so is a head, ``head
    SEQ:HASH``)."""
    from rich.cells import cell_len

    words = {line: re.sub(r"^head \d+:", "", line.strip()).removesuffix(" \\").split() for line in text.splitlines()}
    return [line for line, said in words.items() if cell_len(line) > columns and len(said) > 1]


def _pasted(status: str) -> list[list[object]]:
    """The arguments a shell passes to each ``omen`` command of a status's ``next:`` lines, pasted into it (a JSON
    argument decoded: white space between its members is JSON's own)."""
    block = status.split("next:", 1)[1].split("\nhead", 1)[0]
    script = "omen() { printf '%s\\0' \"$@\"; printf '\\036'; }\n" + block  # (an argument may hold a newline)
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    return [[json.loads(a) if a.startswith("{") else a for a in command.split("\0")[:-1]]
            for command in done.stdout.split("\036")[:-1]]


def _words(text: str, *dropped: str) -> list[str]:
    """The words of ``text``, without those of ``dropped`` (what folding adds: a rule, a continuation mark)."""
    return [word for word in text.split() if word not in dropped]


class TestTheTerminal:
    """Standard output is folded at a terminal's width (README), by omen status and omen log too: only when it
    is a terminal, and never inside a word (a command to paste, a head)."""

    COLUMNS = 40

    def test_status_is_folded_at_the_terminals_width(self, writable: Path) -> None:
        """``omen status`` on a terminal 40 columns wide: no line of several words is wider; it says the words
        it says through a pipe, in order; its ``next:`` commands, folded (`` \\`` at the end of a line, a JSON
        object cut between its members inside its quotes), give a shell the arguments they give it unfolded."""
        shown = _on_a_terminal(["status", "demo.jsonl"], writable, self.COLUMNS)
        piped = _omen_process(["status", "demo.jsonl"], writable, subprocess.PIPE).stdout
        assert len(shown.splitlines()) > len(piped.splitlines()) and _too_wide(shown, self.COLUMNS) == []
        assert max(len(line) for line in piped.splitlines()) > 2 * self.COLUMNS  # (a pipe: never folded)
        assert "".join(_words(shown, "\\", "#")) == "".join(_words(piped, "#"))
        assert any(line.endswith(" \\") for line in shown.splitlines())
        assert _pasted(shown) == _pasted(piped) and len(_pasted(piped)) == 1

    def test_a_json_command_is_cut_between_its_members(self) -> None:
        """A command whose JSON is wider than the terminal goes on inside its quotes after a member's comma, the
        lines outside the quotes ending in `` \\``, the comment on lines of its own; a shell reads the same
        arguments from it, and JSON the same object."""
        line = ('  omen do three.jsonl \'{"command":"declare_attack","attacker":"eli","target":"kael",'
                '"weapon":"dagger"}\' --seed 0de0d1ce0de0d1ce   # add "dice": the faces of eli\'s hit, d6')
        folded = fold_command(line, 40)
        assert folded == ["  omen do three.jsonl \\", "    \'{\"command\":\"declare_attack\",",
                          '    "attacker":"eli","target":"kael",', '    "weapon":"dagger"}\' \\',
                          "    --seed 0de0d1ce0de0d1ce", '    # add "dice": the faces of eli\'s', "    # hit, d6"]
        assert _pasted("next:\n" + "\n".join(folded) + "\nhead") == _pasted(f"next:\n{line}\nhead")
        assert fold_command(line, None) == [line] and fold_command(line, len(line)) == [line]

    def test_the_session_log_is_folded_at_the_terminals_width(self, writable: Path) -> None:
        """``omen log`` (text) on a terminal 40 columns wide: no line of several words is wider, a line goes on
        under its text (under its rule, for an explanation's), and the words are those it writes to a pipe."""
        shown = _on_a_terminal(["log", "demo.jsonl"], writable, self.COLUMNS)
        piped = _omen_process(["log", "demo.jsonl"], writable, subprocess.PIPE).stdout
        assert len(shown.splitlines()) > len(piped.splitlines()) and _too_wide(shown, self.COLUMNS) == []
        assert _words(shown, "\u2502") == _words(piped, "\u2502")
        ruled = [line for line in piped.splitlines() if line.startswith("      \u2502 ") and len(line) > self.COLUMNS]
        assert ruled and sum(line.startswith("      \u2502 ") for line in shown.splitlines()) > \
            sum(line.startswith("      \u2502 ") for line in piped.splitlines())

    def test_status_all_is_folded_between_words_as_plain_status_is(self, writable: Path) -> None:
        """``omen status --all`` on a terminal 40 columns wide: no line of several words is wider, none ends in a
        space, a line goes on indented under its own (never at column 0), the head stays whole, and the words are
        those it writes to a pipe."""
        shown = _on_a_terminal(["status", "demo.jsonl", "--all"], writable, self.COLUMNS)
        piped = _omen_process(["status", "demo.jsonl", "--all"], writable, subprocess.PIPE).stdout
        lines = shown.splitlines()
        assert len(lines) > len(piped.splitlines()) and _too_wide(shown, self.COLUMNS) == []
        assert [line for line in lines if line.endswith(" ")] == [] and _words(shown) == _words(piped)
        assert [line for line in lines if not line.startswith(" ")] == \
            [line for line in piped.splitlines() if not line.startswith(" ")]  # (the head among them, whole)

    def test_a_footer_command_with_a_quoted_path_goes_on_over_lines_ending_in_a_backslash(
            self, writable: Path) -> None:
        """The ``(omen status 'PATH' --all ...)`` after the head, for a path with spaces, is folded as the
        ``next:`` lines are: the head on its own line, the quoted path whole, `` \\`` ending each line of the
        command broken; pasted, a shell reads the command's own arguments."""
        (writable / "my table").mkdir()
        (writable / "my table" / "the demo.jsonl").write_bytes((writable / "demo.jsonl").read_bytes())
        for argv in (["status", "my table/the demo.jsonl"],
                     ["do", "my table/the demo.jsonl", '{"command": "apply_condition", "who": "kael", '
                                                       '"condition": "Prone"}']):
            shown = _on_a_terminal(argv, writable, self.COLUMNS)
            lines = shown.splitlines()
            footer = lines[max(n for n, line in enumerate(lines) if line.startswith("head ")):]
            assert " " not in footer[0][5:] and footer[1:] == [
                "  (omen status \\", "    'my table/the demo.jsonl' --all", "  lists every command accepted now)"]
            pasted = subprocess.run(["sh", "-c", "omen() { printf '%s|' \"$@\"; }\n"
                                     + "\n".join(footer[1:3]).replace("(omen", "omen")],
                                    capture_output=True, text=True, check=False).stdout
            assert pasted.startswith("status|my table/the demo.jsonl|--all|"), pasted

    @pytest.mark.parametrize("argv", [["undo", "demo.jsonl"], ["verify", "demo.jsonl"], ["replay", "demo.jsonl"]])
    def test_a_head_to_witness_is_never_parted(self, writable: Path, argv: list[str]) -> None:
        """``undo``, ``verify`` and ``replay`` on a terminal 60 columns wide: the head's ``SEQ:HASH`` is whole on
        one line (the ``--head`` to paste), and no line of several words is wider."""  # (SEQ:HASH below)
        shown = _on_a_terminal(argv, writable, 60)
        assert [line for line in _too_wide(shown, 60) if not line.startswith("undone: ")] == []
        assert re.search(r"head\s+\d+:[0-9a-f]{64}(\)|$)", shown, re.MULTILINE), shown
        # (undo's first line is left unwrapped on purpose: the `omen redo LOG` in it copies whole)

    def test_markdown_and_html_are_never_folded(self, writable: Path) -> None:
        """``omen log --format md`` (and html) on a terminal writes what it writes to a pipe, byte for byte."""
        for fmt in ("md", "html"):
            shown = _on_a_terminal(["log", "demo.jsonl", "--format", fmt], writable, self.COLUMNS)
            assert shown == _omen_process(["log", "demo.jsonl", "--format", fmt], writable, subprocess.PIPE).stdout


class TestAMissingLog:
    @pytest.mark.parametrize(("name", "said"), [
        ("no such/x y.jsonl", "omen: error: no such/x y.jsonl: no such log (omen run SCENARIO --log 'no such/x "
                              "y.jsonl' starts a fight there)"),
        ("e mpty.jsonl", "omen: error: e mpty.jsonl holds no fight yet (omen run SCENARIO --log 'e mpty.jsonl' "
                         "starts one)"),
    ])
    def test_the_command_that_starts_one_quotes_its_path(self, tmp_path: Path, name: str, said: str) -> None:
        """A log that is not there (or holds no fight) is said with the ``omen run`` that starts one, its path
        shell-quoted as every command omen suggests is, so it pastes; exit 2."""
        (tmp_path / "e mpty.jsonl").write_bytes(b"")
        done = _omen_process(["status", name], tmp_path, subprocess.PIPE)
        assert (done.returncode, done.stderr) == (2, said + "\n")


def _into_a_closed_pipe(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``omen ARGV | head -0``: standard output a pipe whose reader has closed it before the command writes."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return _omen_process(argv, cwd, writer)
    finally:
        os.close(writer)


class TestAClosedPipe:
    """A reader closing the pipe early (``omen status LOG | head -1``) is normal: a command that wrote nothing
    stops without a word, exit 2; one that wrote says what, exit 3 (issue 26)."""

    @pytest.mark.parametrize("argv", [["status", "demo.jsonl"], ["status", "demo.jsonl", "--all"],
                                      ["log", "demo.jsonl"], ["replay", "demo.jsonl", "--steps"],
                                      ["verify", "demo.jsonl"], ["explain", "demo.jsonl", "40"], ["schema"],
                                      ["--help"], ["verify", "--help"]])
    def test_a_reader_stops_without_a_word(self, writable: Path, argv: list[str]) -> None:
        """Exit 2 (nothing written), standard error empty, the log unchanged."""
        before = (writable / "demo.jsonl").read_bytes()
        done = _into_a_closed_pipe(argv, writable)
        assert (done.returncode, done.stderr) == (2, "")
        assert (writable / "demo.jsonl").read_bytes() == before

    @pytest.mark.parametrize("name", ["do", "undo", "run", "snapshot"])
    def test_a_writer_says_what_it_wrote(self, writable: Path, name: str) -> None:
        """Exit 3, one line on standard error naming the closed pipe and what was written."""
        done = _into_a_closed_pipe(_writers(writable)[name], writable)
        lines = done.stderr.splitlines()
        assert done.returncode == 3 and len(lines) == 1, done.stderr
        assert lines[0].startswith("omen: error: cannot write to standard output: Broken pipe; but omen had "
                                   "written: "), lines


    @pytest.mark.parametrize("name", ["do", "undo", "run", "snapshot"])
    def test_a_writer_into_a_pipe_closed_on_both_streams_exits_3(self, writable: Path, name: str) -> None:
        """``omen undo LOG 2>&1 | head -1``: standard error is the closed pipe too, so nothing can be said, but the
        exit code still says the command was written, 3 (it was 1, "nothing written": a script retried the undo
        and undid one command more each time, a tester)."""
        argv = _writers(writable)[name]
        files = {p: p.read_bytes() for p in writable.rglob("*") if p.is_file()}
        reader, writer = os.pipe()
        os.close(reader)
        try:
            done = subprocess.run([sys.executable, "-m", "omen_cli", *argv], check=False, cwd=writable,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=writer, stderr=writer,
                                  timeout=120)
        finally:
            os.close(writer)
        assert done.returncode == 3
        assert {p: p.read_bytes() for p in writable.rglob("*") if p.is_file()} != files  # it was written


class TestFixturesDir:
    def test_a_fixtures_dir_that_is_not_there_is_said_so(self, tmp_path: Path) -> None:
        """``omen fixtures check --dir nodir`` says there is no such directory, exit 2 (it said "no fixtures under
        nodir", as if the folder were there: a maintainer tester); a file given as --dir is not a directory."""
        missing = omen("fixtures", "check", "--dir", str(tmp_path / "nodir"))
        assert missing.exit_code == 2 and said(missing) == f"omen: error: {tmp_path / 'nodir'}: no such directory"
        (tmp_path / "file").write_text("x")
        a_file = omen("fixtures", "check", "--dir", str(tmp_path / "file"))
        assert a_file.exit_code == 2 and said(a_file) == f"omen: error: {tmp_path / 'file'}: not a directory"


class TestSqliteUrls:
    def test_a_relative_sqlite_path_whose_directory_is_missing_says_the_absolute_form(self, demo_log: Path,
                                                                                     tmp_path: Path) -> None:
        """``sqlite:///tmp/x/s.db`` is ``tmp/x/s.db`` from here: copying into it where ``tmp/x`` does not exist says
        the database's directory is missing and how an absolute path is written, exit 2, nothing made (it said "the
        fight's log", with no hint of the fourth slash: a maintainer tester)."""
        import os

        here = os.getcwd()
        os.chdir(tmp_path)
        try:
            result = omen("copy", str(demo_log), "sqlite:///nothere/s.db")
        finally:
            os.chdir(here)
        assert result.exit_code == 2
        assert said(result) == ("omen: error: nothere/s.db: cannot write the database: the directory nothere does not "
                                "exist (sqlite:///PATH is a path from here; an absolute one is sqlite:////nothere/s.db)")
        assert not (tmp_path / "nothere").exists()


class TestContentFiles:
    @pytest.mark.parametrize("command", ["run", "do"])
    def test_invalid_utf8_names_the_file_and_the_byte(self, demo_log: Path, tmp_path: Path, command: str) -> None:
        """A file with byte 0xE9 names the file, its line and the byte offset, exit 2."""
        bad = tmp_path / "bad.toml"
        bad.write_bytes(b'# ok\ncommand = "caf\xe9"\n')
        argv = ["run", str(bad)] if command == "run" else ["do", str(demo_log), "--file", str(bad)]
        result = omen(*argv)
        assert result.exit_code == 2
        assert f"{bad}:2: not valid UTF-8: byte 0xe9 at offset 19" in said(result)

    @pytest.mark.parametrize("body", ["a = " + "[" * 500 + "]" * 500, "a = " + "{b = " * 500 + "1" + "}" * 500])
    def test_deep_nesting_names_the_file(self, tmp_path: Path, body: str) -> None:
        """TOML arrays or inline tables nested 500 deep are "nested too deeply", naming the file, exit 2."""
        deep = tmp_path / "deep.toml"
        deep.write_text(body + "\n")
        result = omen("run", str(deep))
        assert result.exit_code == 2 and f"{deep}:1: not valid TOML: nested too deeply" in said(result)

    def test_a_deeply_nested_sheet_names_the_sheet(self, tmp_path: Path) -> None:
        """A scenario whose sheet file is nested 500 deep names the sheet file, exit 2."""
        (tmp_path / "sheet.toml").write_text("a = " + "[" * 500 + "]" * 500 + "\n")
        scenario = tmp_path / "s.toml"
        scenario.write_text('[fight]\nid = "s"\n\n[[combatants]]\nsheet = "sheet.toml"\n')
        result = omen("run", str(scenario))
        assert result.exit_code == 2 and "sheet.toml:1: not valid TOML: nested too deeply" in said(result)

    @pytest.mark.parametrize("where", ["/dev/zero", "adir"])
    def test_not_a_regular_file_is_refused_unread(self, demo_log: Path, tmp_path: Path, where: str) -> None:
        """A device or a directory given as a scenario or a command file is "not a regular file", never read."""
        (tmp_path / "adir").mkdir()
        path = where if where.startswith("/") else str(tmp_path / where)
        for argv in (["run", path], ["do", str(demo_log), "--file", path]):
            result = omen(*argv)
            assert result.exit_code == 2 and f"{path}: cannot read the file: not a regular file" in said(result)

    def test_a_scenario_over_16_mib_is_refused(self, tmp_path: Path) -> None:
        """A scenario file larger than 16 MiB is refused by size, naming it."""
        big = tmp_path / "big.toml"
        with big.open("wb") as f:
            f.truncate((16 << 20) + 1)
        result = omen("run", str(big))
        assert result.exit_code == 2 and f"{big}: cannot read the file: larger than 16 MiB" in said(result)

    def test_a_command_over_1_mib_is_refused(self, demo_log: Path, tmp_path: Path) -> None:
        """A command file or argument larger than 1 MiB is refused by size."""
        big = tmp_path / "big.json"
        big.write_text(" " * MAX_COMMAND_BYTES + "{}")
        result = omen("do", str(demo_log), "--file", str(big))
        assert result.exit_code == 2 and f"{big}: cannot read the file: larger than 1 MiB" in said(result)
        result = omen("do", str(demo_log), " " * MAX_COMMAND_BYTES + "{}")
        assert result.exit_code == 2 and "larger than 1 MiB" in said(result)

    def test_combatants_that_are_not_an_array_of_tables(self, tmp_path: Path) -> None:
        """``combatants = 5`` names the file, the line and the field, exit 2."""
        scenario = tmp_path / "s.toml"
        scenario.write_text('combatants = 5\n[fight]\nid = "s"\n')
        result = omen("run", str(scenario))
        assert result.exit_code == 2
        assert f"{scenario}:1: combatants must be an array of tables ([[combatants]]) (at $.combatants)" in said(result)


class TestControlCharacters:
    def test_visible_escapes_every_control_character(self) -> None:
        """C0, DEL and C1 characters are shown as \\xNN escapes; printable text (and non-ASCII letters) is kept."""
        assert visible("a\x1b[31m\x07\n\t\x7f\x9bé€") == "a\\x1b[31m\\x07\\x0a\\x09\\x7f\\x9bé€"

    def test_visible_escapes_every_bidirectional_control(self) -> None:
        """Issue #26: the bidirectional marks, embeddings, overrides and isolates (a name with U+202E shows
        reversed) and the line separators are shown as \\uNNNN escapes; Arabic and Hebrew letters are kept."""
        bidi = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"
        assert visible(bidi + "عبري") == "".join(f"\\u{ord(c):04x}" for c in bidi) + "عبري"

    @pytest.mark.parametrize("fmt", ["text", "md", "html"])
    def test_session_logs_carry_no_control_characters(self, hostile_log: Path, fmt: str) -> None:
        """Each session-log format, to stdout or a file, holds no control character but its own newlines."""
        result = omen("log", str(hostile_log), "--format", fmt)
        assert result.exit_code == 0 and "x1b" in result.stdout and "RED" in result.stdout
        assert not CONTROL.search(result.stdout)
        target = hostile_log.with_suffix("." + fmt)
        assert omen("log", str(hostile_log), "--format", fmt, "-o", str(target)).exit_code == 0
        assert not CONTROL.search(target.read_text())

    @pytest.mark.parametrize("argv", [["replay", "{log}"], ["replay", "{log}", "--steps"], ["verify", "{log}"],
                                      ["status", "{log}"], ["explain", "{log}", "4"]])
    def test_console_output_carries_no_control_characters(self, hostile_log: Path, argv: list[str]) -> None:
        """replay (table and steps), verify, status and explain print no control character but newlines."""
        result = omen(*[a.format(log=hostile_log) for a in argv])
        assert result.exit_code in (0, 2), said(result)
        assert not CONTROL.search(result.stdout + result.stderr)

    @pytest.mark.parametrize("argv", [["replay", "{log}", "--json"], ["status", "{log}", "--json"],
                                      ["verify", "{log}", "--json"], ["explain", "{log}", "4", "--json"]])
    def test_json_output_carries_no_control_characters_and_reads_back_the_same(self, hostile_log: Path,
                                                                                argv: list[str]) -> None:
        """README: control characters are escapes in every format: JSON escapes the C0 controls itself, and now DEL,
        the C1 controls, the bidirectional controls (U+202E reached the terminal raw) and the line separators too
        (``\\u202e``, the same string to a JSON reader: the hostile name reads back as written)."""
        result = omen(*[a.format(log=hostile_log) for a in argv])
        assert result.exit_code == 0, said(result)
        assert not CONTROL.search(result.stdout)
        if argv[0] == "replay":
            assert HOSTILE in [c["name"] for c in json.loads(result.stdout)["combatants"]]

    def test_run_narration_carries_no_control_characters(self, hostile_scenario: Path, tmp_path: Path) -> None:
        """``omen run`` narrates the hostile names visibly escaped, and its end-state table too."""
        result = omen("run", str(hostile_scenario), "--log", str(tmp_path / "r.jsonl"))
        assert result.exit_code == 0 and "\\x1b[31mRED\\x1b]0;pwned\\x07" in result.stdout
        assert not CONTROL.search(result.stdout)

    def test_an_error_message_shows_control_characters_escaped(self, tmp_path: Path) -> None:
        """A file name with an escape sequence in it is shown escaped in the error."""
        result = omen("run", str(tmp_path / "x\x1b]0;t\x07.toml"))
        assert result.exit_code == 2 and "\\x1b]0;t\\x07.toml" in result.stderr
        assert not CONTROL.search(result.stderr)

    def test_an_undo_reason_in_rich_markup_is_printed_as_written(self, demo_log: Path) -> None:
        """An undo reason that reads as console markup or an emoji code (``[/x] :100: [bold]b[/bold]``) is shown by
        verify as it was written: no markup error, nothing swallowed, no emoji; verify finds the log clean."""
        reason = "[/x] :100: [bold]b[/bold]"
        assert omen("undo", str(demo_log), "--reason", reason).exit_code == 0
        result = omen("verify", str(demo_log))
        assert result.exit_code == 0, said(result)
        assert f"({reason})" in result.stdout and "\U0001f4af" not in result.stdout

    def test_a_line_number_is_not_read_as_an_emoji_code(self, tmp_path: Path) -> None:
        """A TOML error on line 100 names ``x.toml:100:`` (``:100:`` is also an emoji code the console must not
        replace), and a combatant named ``:smile: [b]Ash[/b]`` is printed as written."""
        bad = tmp_path / "x.toml"
        bad.write_text("\n" * 99 + "x = \n")
        result = omen("run", str(bad))
        assert result.exit_code == 2 and "x.toml:100: not valid TOML" in said(result), said(result)
        named = tmp_path / "named.toml"
        named.write_text('[fight]\nid = "named"\n\n[[combatants]]\nid = "ash"\nname = ":smile: [b]Ash[/b]"\n'
                         'side = "north"\nhp = 12\n' + SHEET.format() + '\n[[combatants]]\nid = "bo"\nname = "Bo"\n'
                         'side = "south"\nhp = 10\n' + SHEET.format())
        result = omen("run", str(named), "--log", str(tmp_path / "named.jsonl"))
        assert result.exit_code == 0, said(result)
        assert ":smile: [b]Ash[/b]" in result.stdout and "\U0001f604" not in result.stdout

    def test_a_log_directory_named_over_a_file_is_blamed_on_the_log_not_the_scenario(self, tmp_path: Path) -> None:
        """``omen run S --log FILE/`` where FILE is a file: one line naming FILE (a directory of logs cannot be
        made there), exit 2; not an error at a line of the scenario; nothing written beside it."""
        (tmp_path / "d.jsonl").write_text("")
        scenario = ROOT / "fixtures" / "duel-interrupt-pass-dodge-miss" / "scenario.toml"
        result = omen("run", str(scenario), "--log", str(tmp_path / "d.jsonl") + "/")
        assert result.exit_code == 2
        assert said(result) == (f"omen: error: {tmp_path / 'd.jsonl'}: a file, not a directory: a log named with a "
                                "trailing '/' is a directory of fight logs")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl"]

    @pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
    def test_a_number_no_log_can_hold_is_named_where_it_is_written(self, tmp_path: Path, value: str) -> None:
        """TOML's inf and nan (a combatant's damage multiplier, say) are refused at their line and field, as what
        they are (not "got null": a log's JSON cannot hold them), in a scenario and in a sheet file."""
        sheet = 'id = "ash"\nname = "Ash"\nside = "north"\nhp = 12\n' + SHEET.format() + \
            f"incoming_damage = {{ multiply = {value} }}\n"
        scenario = tmp_path / "s.toml"
        scenario.write_text('[fight]\nid = "s"\n\n[[combatants]]\n' + sheet)
        result = omen("run", str(scenario))
        assert result.exit_code == 2
        assert said(result) == (f"omen: error: {scenario}:11: {value} is not a number a fight can use (write a "
                                "finite number) (at $.combatants[0].incoming_damage.multiply)")
        (tmp_path / "ash.toml").write_text(sheet)
        scenario.write_text('[fight]\nid = "s"\n\n[[combatants]]\nsheet = "ash.toml"\n')
        result = omen("run", str(scenario))
        assert result.exit_code == 2 and said(result).startswith(f"omen: error: {tmp_path / 'ash.toml'}:7: {value} is "
                                                                 "not a number"), said(result)

    def test_a_command_file_with_a_byte_order_mark_is_json_and_a_null_is_called_null(self, demo_log: Path,
                                                                                       tmp_path: Path) -> None:
        """A JSON command an editor saved with a byte-order mark first is read as JSON (and done); a command whose
        name is null is refused naming JSON's null, not a Python type."""
        command = tmp_path / "c.json"
        command.write_bytes(b'\xef\xbb\xbf{"command": "apply_condition", "who": "vesh", "condition": "Prone"}')
        assert omen("do", str(demo_log), "--file", str(command)).exit_code == 0
        before = demo_log.read_bytes()
        result = omen("do", str(demo_log), '{"command": null}')
        assert result.exit_code == 2 and "Expected `str`, got `null`" in said(result), said(result)
        assert demo_log.read_bytes() == before

    def test_a_command_giving_a_name_twice_is_refused_at_its_line_and_field(self, demo_log: Path,
                                                                             tmp_path: Path) -> None:
        """A JSON command naming ``who`` twice (readers differ on which counts: I-JSON) is refused naming the
        file, the line and ``$.who``, exit 2, nothing written; given on the command line, the same at ``$.who``."""
        command = tmp_path / "c.json"
        command.write_text('{"command": "apply_condition",\n "who": "vesh",\n "condition": "Prone", "who": "kael"}')
        before = demo_log.read_bytes()
        result = omen("do", str(demo_log), "--file", str(command))
        assert result.exit_code == 2
        assert said(result) == (f"omen: error: {command}:2: 'who' is given twice in one object (readers differ on "
                                "which counts: give it once) (at $.who)"), said(result)
        result = omen("do", str(demo_log), '{"command": "apply_condition", "command": "clear_condition"}')
        assert result.exit_code == 2 and said(result).endswith("give it once) (at $.command)"), said(result)
        assert demo_log.read_bytes() == before

    @pytest.mark.parametrize(("given", "kind"), [("[1, 2]", "an array"), ('"end_turn"', "a string"),
                                                 ("42", "a number"), ("null", "null")])
    def test_json_that_is_no_object_is_refused_as_such(self, demo_log: Path, given: str, kind: str) -> None:
        """A JSON array (or string, number, null) given as a command is refused saying a command is a JSON object or
        a TOML table, exit 2, nothing written (read as TOML it was "Expected ']' at the end of a table
        declaration")."""
        before = demo_log.read_bytes()
        result = omen("do", str(demo_log), given)
        assert result.exit_code == 2
        assert said(result) == ('omen: error: the command:1: a command is a JSON object ({"command": ...}) or a TOML '
                                f'table (command = "..."), not {kind} (at $)'), said(result)
        assert demo_log.read_bytes() == before

    @pytest.mark.parametrize("argv", [["status"], ["replay"], ["undo"], ["explain", "--", "3"]])
    def test_a_broken_chain_is_named_by_file_and_line(self, demo_log: Path, argv: list[str]) -> None:
        """A log whose line ends were rewritten (CRLF: every hash now covers other bytes) is refused by the commands
        that fold it, naming the file and the first line whose hash fails and that its line ending is why, exit 2;
        the log is not changed."""
        crlf = demo_log.with_name("crlf.jsonl")
        crlf.write_bytes(demo_log.read_bytes().replace(b"\n", b"\r\n"))
        before = crlf.read_bytes()
        result = omen(argv[0], str(crlf), *argv[1:])
        assert result.exit_code == 2
        assert said(result) == (f"omen: error: {crlf}:1: hash chain broken at seq 1: {CRLF_WORDS}"), said(result)
        assert crlf.read_bytes() == before

    def test_markdown_and_html_escape_markup(self, hostile_log: Path) -> None:
        """A ``<script>`` in a name is escaped in Markdown and HTML, never a tag."""
        md = omen("log", str(hostile_log), "--format", "md").stdout
        page = omen("log", str(hostile_log), "--format", "html").stdout
        assert "<script>" not in md and "&lt;script&gt;" in md and "\\*b\\*" in md
        assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


class TestSeeds:
    @pytest.mark.parametrize("seed", ["", " ", "zz", "abc"])
    @pytest.mark.parametrize("command", ["verify", "explain", "do"])
    def test_an_empty_or_not_hex_seed_is_bad_input(self, demo_log: Path, seed: str, command: str) -> None:
        """``--seed ""``, blanks or not hex are bad input (exit 2) saying what a seed is, before any finding."""
        argv = {"verify": ["verify", str(demo_log)], "explain": ["explain", str(demo_log), "5"],
                "do": ["do", str(demo_log), '{"command": "end_turn", "who": "vesh"}']}[command]
        result = omen(*argv, "--seed", seed)
        assert result.exit_code == 2, said(result)
        assert "--seed" in said(result) and "hex" in said(result) and "finding" not in said(result)


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that has not configured logging."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], check=False, cwd=cwd, env=env, text=True, capture_output=True,
                          timeout=120)


class TestQuiet:
    def test_importing_omen_core_prints_nothing(self, tmp_path: Path) -> None:
        """``import omen_core`` (and omen_replay's library modules) prints nothing to stdout or stderr."""
        done = _python("import omen_core, omen_core.content, omen_replay.render, omen_replay.scenario", tmp_path)
        assert done.returncode == 0 and (done.stdout, done.stderr) == ("", "")

    def test_the_readme_api_example_prints_nothing(self, tmp_path: Path) -> None:
        """The README's Python API tour, run where logging is not configured, prints nothing at all."""
        (block,) = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
        for sheet in (ROOT / "omen_replay" / "data").glob("*.toml"):
            (tmp_path / sheet.name).write_bytes(sheet.read_bytes())
        done = _python(block, tmp_path)
        assert done.returncode == 0, done.stderr
        assert (done.stdout, done.stderr) == ("", "")

    def test_version_prints_the_version_and_exits_0(self) -> None:
        """``omen --version`` prints omen's version and its log schema version, exit 0."""
        from omen_core import __version__
        from omen_core.events import SCHEMA_VERSION

        result = omen("--version")
        assert result.exit_code == 0
        assert result.stdout.strip() == f"omen {__version__} (log schema version {SCHEMA_VERSION})"


class TestUsageErrors:
    """Issue #26, item 7: typer's usage errors are one line, ``omen: error: ...``, exit 2, naming the ``--help``
    that says what the command takes (they were six-line boxes)."""

    @pytest.mark.parametrize(("argv", "words", "helped"), [
        (["veriffy"], "No such command 'veriffy'. Did you mean 'verify'?", "omen --help"),
        (["verify"], "Missing argument 'LOG'", "omen verify --help"),
        (["verify", "x.jsonl", "--bogus"], "No such option: --bogus", "omen verify --help"),
        (["replay", "x.jsonl", "--to", "\u00b2"],
         "omen: error: --to must be a whole number written as digits, not '\u00b2'", "omen replay --help"),
        (["explain", "x.jsonl", "abc"], "omen: error: SEQ must be a whole number written as digits, not 'abc'",
         "omen explain --help"),
        (["serve", "--port", "0"], "omen: error: --port must be at least 1, not 0", "omen serve --help"),
        (["simulate", "--until-ci", "x"], "omen: error: --until-ci must be a number, not 'x'", "omen simulate --help"),
        (["simulate", "--replay", "run.json", "abc"],  # the value of two that is wrong (it said --replay: a tester)
         "omen: error: INDEX (of --replay RUN INDEX) must be a whole number, not 'abc'", "omen simulate --help"),
        (["db", "frob"], "No such command 'frob'", "omen db --help"),
        (["options"], "No such command 'options': what a fight offers is 'omen status LOG --all' (every offer; "
                      "--json, the options document), and 'omen do LOG --options' after a command", "omen --help"),
        (["fixtures", "check", "--dir"], "Option '--dir' requires an argument", "omen fixtures check --help"),
        (["log", "x.jsonl", "--format", "json"], "Invalid value for '--format': 'json' is not one of 'text', 'md', "
                                                 "'html'", "omen log --help"),
        (["verify", "x.jsonl", "--head", "88:09ac"], "--head: a head is SEQ:HASH", "omen verify --help"),
        (["verify", "x.jsonl", "--seed", "zz"], "--seed must be hex (two digits a byte), got 'zz'",
         "omen verify --help"),
        (["status", "x.jsonl", "--seed", ""], "--seed is empty", "omen status --help"),
    ])
    def test_a_usage_error_is_one_line_naming_the_help_to_read(self, argv: list[str], words: str, helped: str) -> None:
        """The error is the only line on stderr, starts with ``omen: error:``, says what is wrong and which
        ``--help`` to read; exit 2; nothing on stdout."""
        result = omen(*argv)
        assert result.exit_code == 2 and result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("omen: error: ") and words in lines[0], lines
        assert lines[0].endswith(f"(see '{helped}')")

    @pytest.mark.parametrize(("argv", "words"), [
        (["replay", "x.jsonl", "--to", "77.0"], "--to must be a whole number written as digits, not '77.0'"),
        (["undo", "x.jsonl", "--to", "77.0"], "--to must be a whole number written as digits, not '77.0'"),
        (["copy", "x.jsonl", "y.jsonl", "--to", "77.0"], "--to must be a whole number written as digits, not '77.0'"),
        (["explain", "x.jsonl", "93.0"], "SEQ must be a whole number written as digits, not '93.0'"),
        (["replay", "x.jsonl", "--to", "1e2"], "--to must be a whole number written as digits, not '1e2'"),
        (["replay", "x.jsonl", "--to", "+7"], "--to must be a whole number written as digits, not '+7'"),
        (["replay", "x.jsonl", "--to", "7_0"], "--to must be a whole number written as digits, not '7_0'"),
        (["copy", "x.jsonl", "y.jsonl", "--to", "0"], "--to must be at least 1, not 0"),
    ])
    def test_a_seq_not_written_as_digits_is_a_usage_error(self, argv: list[str], words: str) -> None:
        """A seq is a whole number written as digits, as a log writes it: ``--to 77.0`` is refused (it was taken
        for 77), exit 2, one line naming the option, before any log is opened (x.jsonl does not exist)."""
        result = omen(*argv)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.splitlines() == [f"omen: error: {words} (see 'omen {argv[0]} --help')"]

    @pytest.mark.parametrize("seq", ["0", "-1"])
    def test_an_undo_to_before_the_first_seq_is_one_line(self, seq: str) -> None:
        """``omen undo --to 0`` (or -1) is refused in one line naming the option and what it takes, exit 2, before
        any log is opened (it printed the command decoder's "Expected `int` >= 1 (at $.to_seq)"; found by a
        tester)."""
        result = omen("undo", "x.jsonl", "--to", seq)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.splitlines() == [
            f"omen: error: --to must be at least 1 (the seq of the first event to undo), not {seq}"]

    def test_a_group_alone_prints_its_help(self) -> None:
        """``omen db`` with no subcommand prints the group's help (what it offers), exit 2."""
        result = omen("db")
        assert result.exit_code == 2 and "init" in result.stderr and "Usage: omen db" in result.stderr


def _writers(tmp: Path) -> dict[str, list[str]]:
    """Every kind of command that writes (issue #26, item 4), each ready to run in ``tmp`` (which holds a short
    demo log, ``demo.jsonl``, its fight in set-up, and a copy of the Ember Ford scenario)."""
    return {
        "do": ["do", "demo.jsonl", '{"command": "apply_condition", "who": "kael", "condition": "Prone"}'],
        "do --json": ["do", "demo.jsonl", '{"command": "apply_condition", "who": "kael", "condition": "Prone"}',
                      "--json"],
        "do --options": ["do", "demo.jsonl", '{"command": "apply_condition", "who": "kael", "condition": "Prone"}',
                         "--options"],
        "do with faces": ["do", "demo.jsonl", '{"command": "static_check", "check": {"who": "kael", "attribute": '
                          '"STR"}, "difficulty": 5, "dice": [4]}'],
        "undo": ["undo", "demo.jsonl"],
        "run": ["run", "ember/scenario.toml", "--log", "ran.jsonl"],
        "snapshot": ["snapshot", "demo.jsonl"],
        "snapshot --clear": ["snapshot", "demo.jsonl", "--clear"],
        "copy": ["copy", "demo.jsonl", "copies/"],
        "db init": ["db", "init", "sqlite:///new.db"],
        "demo": ["demo", "--short", "--log", "fresh.jsonl"],
        "log -o": ["log", "demo.jsonl", "-o", "page.html", "--format", "html"],
    }


@pytest.fixture
def writable(tmp_path: Path, demo_log: Path) -> Path:
    """A folder with a short demo log (``demo.jsonl``, in set-up, some commands undone-able) and the Ember Ford
    scenario."""
    import shutil

    shutil.copytree(ROOT / "fixtures" / "ember-ford", tmp_path / "ember")
    assert omen("do", str(demo_log), '{"command": "apply_condition", "who": "vesh", "condition": "Prone"}'
                ).exit_code == 0
    return tmp_path


class TestHonestExitCodes:
    """Issue #26, item 4: a command that wrote, and then could not report it (standard output full or closed),
    exits 3 and says on stderr what it wrote (the command appended at seq N with head H); a script retrying exit
    2 ("nothing written") would have done it twice."""

    @pytest.mark.parametrize("name", list(_writers(Path("."))))
    def test_a_writer_whose_report_cannot_be_written_exits_3_saying_what_it_wrote(self, writable: Path,
                                                                                 name: str) -> None:
        """With standard output on /dev/full: exit 3, one line on stderr saying standard output failed and what
        was written; and it was written (the log holds more events, or the file is there). (``snapshot --clear`` has
        a snapshot to delete: with none it writes nothing, and says so, exit 2.)"""
        if name == "snapshot --clear":
            assert omen("snapshot", str(writable / "demo.jsonl")).exit_code == 0
        before = (writable / "demo.jsonl").read_bytes()
        with open("/dev/full", "w") as full:
            done = _omen_process(_writers(writable)[name], writable, full)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 3, done.stderr
        assert len(lines) == 1 and lines[0].startswith("omen: error: cannot write to standard output: No space "
                                                       "left on device; but omen had written: "), lines
        if name.startswith(("do", "undo")):
            assert (writable / "demo.jsonl").read_bytes().startswith(before)
            head = (writable / "demo.jsonl").read_bytes().splitlines()[-1]
            found = re.search(rb'"seq":(\d+),.*"hash":"([0-9a-f]{64})"', head)
            assert found is not None, head
            seq, digest = found.groups()
            assert f"with head {seq.decode()}:{digest.decode()}" in lines[0]

    @pytest.mark.parametrize("name", ["do", "undo", "run", "demo"])
    def test_a_writer_started_without_standard_output_exits_3_saying_what_it_wrote(self, writable: Path,
                                                                                  name: str) -> None:
        """Started with standard output closed (``>&-``: no descriptor 1 at all): the command is done, then exit 3
        and one line on stderr saying standard output is closed and what was written; never a traceback."""
        before = (writable / "demo.jsonl").read_bytes()
        done = _closed_stdout(_writers(writable)[name], writable)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 3, done.stderr
        assert len(lines) == 1 and lines[0].startswith("omen: error: cannot write to standard output: it is "
                                                       "closed; but omen had written: "), lines
        if name in ("do", "undo"):
            assert (writable / "demo.jsonl").read_bytes() != before

    @pytest.mark.parametrize("argv", [["verify", "demo.jsonl"], ["status", "demo.jsonl"], ["log", "demo.jsonl"],
                                      ["schema"]])
    def test_a_reader_started_without_standard_output_exits_2(self, writable: Path, argv: list[str]) -> None:
        """A command that only reads, started with standard output closed: one line, exit 2 (nothing written)."""
        done = _closed_stdout(argv, writable)
        assert done.returncode == 2, done.stderr
        assert done.stderr == "omen: error: cannot write to standard output: it is closed\n"

    @pytest.mark.parametrize("stdout", ["/dev/full", "a closed pipe"])
    def test_a_scenario_is_played_whole_before_its_report(self, writable: Path, stdout: str) -> None:
        """omen run with standard output full or closed plays the whole scenario (found by a forging tester: it
        stopped after the set-up, 3 of 13 events, or at a random point behind `| head -2`, and a run again was
        refused, "already holds fight"), then exits 3 saying what it wrote: every event a run to a terminal writes,
        the log verifying."""
        whole = _omen_process(["run", "ember/scenario.toml", "--log", "whole.jsonl"], writable, subprocess.DEVNULL)
        assert whole.returncode == 0, whole.stderr
        events = len((writable / "whole.jsonl").read_bytes().splitlines())
        argv = ["run", "ember/scenario.toml", "--log", "ran.jsonl"]
        if stdout == "/dev/full":
            with open("/dev/full", "w") as full:
                done = _omen_process(argv, writable, full)
        else:
            done = _into_a_closed_pipe(argv, writable)
        log = (writable / "ran.jsonl").read_bytes().splitlines()
        assert done.returncode == 3 and len(log) == events, done.stderr
        assert f"but omen had written: fight 'ember-ford' written to ran.jsonl: appended at seq 1 to {events} " \
            in done.stderr
        assert omen("verify", str(writable / "ran.jsonl")).exit_code == 0

    def test_a_refused_command_still_exits_2_nothing_written(self, writable: Path) -> None:
        """A command the rules refuse, standard output full or not: exit 2, the log unchanged."""
        before = (writable / "demo.jsonl").read_bytes()
        with open("/dev/full", "w") as full:
            done = _omen_process(["do", "demo.jsonl", '{"command": "end_turn", "who": "kael"}'], writable, full)
        assert done.returncode == 2 and "but omen had written" not in done.stderr
        assert (writable / "demo.jsonl").read_bytes() == before

    def test_a_closed_pipe_after_an_append_is_exit_3(self, writable: Path) -> None:
        """``omen do ... | head -c 1``: the append stands, exit 3 names it."""
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        argv = [sys.executable, "-m", "omen_cli", "do", "demo.jsonl", '{"command": "apply_condition", "who": '
                '"kael", "condition": "Prone"}', "--options"]
        with subprocess.Popen(argv, cwd=writable, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()
            stderr = proc.stderr.read().decode()
            code = proc.wait(timeout=60)
        assert code == 3 and "Broken pipe; but omen had written: appended at seq" in stderr


class TestIdempotencyKeys:
    """Issue #26, item 4: ``omen do --idempotency-key K`` records K with the command, so a retry (after exit 3,
    or when unsure) finds it done and does not do it twice."""

    PRONE = '{"command": "apply_condition", "who": "kael", "condition": "Prone"}'

    def test_a_retry_after_exit_3_finds_the_command_done(self, writable: Path) -> None:
        """The first run's report is lost (exit 3); the retry with the same key says it was done, appends nothing
        and exits 0; the log holds the command once, its key recorded in its command_issued."""
        with open("/dev/full", "w") as full:
            first = _omen_process(["do", "demo.jsonl", self.PRONE, "--idempotency-key", "k-17"], writable, full)
        assert first.returncode == 3
        after_first = (writable / "demo.jsonl").read_bytes()
        again = omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "k-17")
        assert again.exit_code == 0 and "already done" in said(again)
        assert (writable / "demo.jsonl").read_bytes() == after_first
        assert after_first.count(b'"idempotency_key":"k-17"') == 1

    def test_json_says_already_done(self, writable: Path) -> None:
        """``--json`` of a retry gives the events of the first run and ``already_done`` true."""
        import json

        first = json.loads(omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "j",
                                "--json").stdout)
        again = json.loads(omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "j",
                                "--json").stdout)
        assert not first["already_done"] and again["already_done"] and again["events"] == first["events"]

    def test_a_key_given_to_another_command_is_refused(self, writable: Path) -> None:
        """A key already recorded for another command: exit 2, naming the seq of that command; nothing written."""
        assert omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "once").exit_code == 0
        before = (writable / "demo.jsonl").read_bytes()
        other = omen("do", str(writable / "demo.jsonl"), '{"command": "clear_condition", "who": "kael", '
                     '"condition": "Prone"}', "--idempotency-key", "once")
        assert other.exit_code == 2 and "was given to another command at seq" in other.stderr
        assert (writable / "demo.jsonl").read_bytes() == before

    def test_a_retry_by_another_name_is_the_same_command(self, writable: Path) -> None:
        """The key names the command; --by is only for the record: a retry with another --by is found done (it
        was refused "given to another command"), appends nothing and says who the command is recorded as given by."""
        assert omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "b",
                    "--by", "gm").exit_code == 0
        before = (writable / "demo.jsonl").read_bytes()
        again = omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "b", "--by", "alice")
        assert again.exit_code == 0, said(again)
        assert "nothing appended now (recorded as given by 'gm'; --by 'alice' now changes nothing: --by is only " \
               "for the record)" in said(again)
        assert (writable / "demo.jsonl").read_bytes() == before

    def test_a_retry_of_a_command_given_with_no_by_says_so_and_json_says_it_on_stderr(self, writable: Path) -> None:
        """docs/live.md: a retry with another --by is told who the command is recorded as given by: one given with
        no --by is said so (it read "given by ''"), and with --json the note is on standard error beside the JSON
        (it said nothing)."""
        assert omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "n").exit_code == 0
        again = omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "n", "--by", "alice")
        assert again.exit_code == 0 and "(recorded as given with no --by; --by 'alice' now changes nothing" \
            in said(again)
        as_json = omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "n", "--by", "alice",
                       "--json")
        assert as_json.exit_code == 0 and json.loads(as_json.stdout)["already_done"] is True
        assert "omen: note: the command was done before (recorded as given with no --by" in as_json.stderr

    def test_the_audit_decides_a_keyed_command_again(self, writable: Path) -> None:
        """A command carrying its key verifies clean: the key is recorded, not ruled on."""
        assert omen("do", str(writable / "demo.jsonl"), self.PRONE, "--idempotency-key", "v").exit_code == 0
        assert omen("verify", str(writable / "demo.jsonl"), "--strict").exit_code == 0


class TestRevealSeedByDo:
    """Issue #26, item 7: ``omen do LOG '{"command": "reveal_seed"}' --seed HEX`` reveals the seed given."""

    def test_the_seed_given_is_revealed(self, tmp_path: Path) -> None:
        """A seeded fight's seed, given with --seed: revealed (it was the hash of nothing before), and the log
        verifies with every seeded die checked."""
        from omen_core import Fight, SeededDice
        from omen_core.store import JsonlStore
        from tests.sheets import sheet

        seed = bytes(range(32))
        path = tmp_path / "seeded.jsonl"
        fight = Fight.start(JsonlStore.single(path), "seeded", dice=SeededDice(seed), combatants=[sheet("kael")])
        fight.apply_condition("kael", "Prone")
        fight.end_fight("gm")  # over: the reveal is the last word on the dice (mid-fight: tests/replay/test_cli_live)
        result = omen("do", str(path), '{"command": "reveal_seed"}', "--seed", seed.hex())
        assert result.exit_code == 0, said(result)
        assert f'"seed":"{seed.hex()}"'.encode() in path.read_bytes().splitlines()[-1]
        import json

        report = json.loads(omen("verify", str(path), "--json").stdout)
        assert report["clean"] and report["seed_revealed"]

    def test_no_seed_anywhere_is_bad_input(self, demo_log: Path) -> None:
        """reveal_seed with no seed in the command and no --seed: exit 2, saying where to give it."""
        result = omen("do", str(demo_log), '{"command": "reveal_seed"}')
        assert result.exit_code == 2 and "--seed HEX" in result.stderr


class TestLinksOutOfAStore:
    """Issue #26, item 6: no command follows a symbolic link out of a store or a snapshot folder (exit 2 naming
    the link; the files it points to keep their bytes)."""

    @pytest.fixture
    def elsewhere(self, tmp_path: Path) -> Path:
        """A folder outside any store, with files a link might lead to."""
        folder = tmp_path / "elsewhere"
        (folder / "demo").mkdir(parents=True)
        for name in ("1.json", "40.json"):
            (folder / name).write_text("precious")
            (folder / "demo" / name).write_text("precious")
        return folder

    @staticmethod
    def intact(folder: Path) -> bool:
        return all(p.read_text() == "precious" for p in folder.rglob("*.json"))

    @pytest.mark.parametrize("linked", ["LOG.snapshots", "LOG.snapshots/<fight>"])
    @pytest.mark.parametrize("clear", [True, False])
    def test_snapshot_through_a_linked_folder_is_refused(self, demo_log: Path, elsewhere: Path, linked: str,
                                                         clear: bool) -> None:
        """``omen snapshot LOG`` and ``omen snapshot LOG --clear`` with ``LOG.snapshots`` (or its fight's folder) a
        link to another folder: exit 2, one line naming the link; nothing there written or deleted."""
        import shutil

        snapshots = demo_log.with_name(demo_log.name + ".snapshots")
        shutil.rmtree(snapshots, ignore_errors=True)
        if linked == "LOG.snapshots":
            snapshots.symlink_to(elsewhere)
        else:
            snapshots.mkdir()
            (snapshots / "demo").symlink_to(elsewhere / "demo")
        result = omen("snapshot", str(demo_log), *(["--clear"] if clear else []))
        assert result.exit_code == 2 and "is a symbolic link" in result.stderr, said(result)
        assert len(result.stderr.strip().splitlines()) == 1 and self.intact(elsewhere)
        assert omen("replay", str(demo_log)).exit_code == 0  # reading ignores a linked cache

    def test_do_on_a_directory_store_whose_fight_file_links_outside_is_refused(self, demo_log: Path,
                                                                               tmp_path: Path) -> None:
        """A directory store holding ``demo.jsonl`` as a link to a log outside it: ``omen do`` exits 2 naming the
        link, and the log outside keeps its bytes."""
        store = tmp_path / "fights"
        store.mkdir()
        (store / "demo.jsonl").symlink_to(demo_log)
        before = demo_log.read_bytes()
        result = omen("do", f"{store}/", '{"command": "apply_condition", "who": "kael", "condition": "Prone"}',
                      "--fight", "demo")
        assert result.exit_code == 2 and "symbolic link" in result.stderr and "outside the store" in result.stderr
        assert demo_log.read_bytes() == before

    @pytest.mark.parametrize("fight", [[], ["--fight", "demo"]])
    def test_clearing_the_snapshots_of_a_fight_whose_file_links_outside_is_refused(self, demo_log: Path,
                                                                                   tmp_path: Path,
                                                                                   fight: list[str]) -> None:
        """docs/stores.md: such a link is refused for reading and writing alike; ``omen snapshot DIR/ --clear``
        too exits 2 naming it (it said "'demo' had no snapshots to delete", exit 0: a tester)."""
        store = tmp_path / "fights"
        store.mkdir()
        (store / "demo.jsonl").symlink_to(demo_log)
        result = omen("snapshot", f"{store}/", "--clear", *fight)
        assert result.exit_code == 2 and "symbolic link" in result.stderr and "outside the store" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


_BROKEN_EXTENSION = """
import pkgutil, sys, types
real = pkgutil.iter_modules
def listed(path=None, prefix=""):
    yield from real(path, prefix)
    if path and any(str(p).endswith("extensions") for p in path):
        yield pkgutil.ModuleInfo(None, "zz_broken", False)
pkgutil.iter_modules = listed
sys.modules["omen_core.extensions.zz_broken"] = types.ModuleType("omen_core.extensions.zz_broken")
from omen_cli.app import main
sys.argv = ["omen", *sys.argv[1:]]
main()
"""


def test_an_extension_that_cannot_be_loaded_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """An extension module that declares no EXTENSION (docs/extensions.md) fails as the command imports the engine:
    omen says so in one line naming the module, exit 2, no traceback (README: every error is an OmenError, said in
    one line); ``omen --help`` (no engine imported) is unaffected."""
    log = tmp_path / "demo.jsonl"
    assert omen("demo", "--short", "--log", str(log)).exit_code == 0
    done = subprocess.run([sys.executable, "-c", _BROKEN_EXTENSION, "status", str(log)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "omen_core.extensions.zz_broken" in done.stderr and "EXTENSION" in done.stderr
    helped = subprocess.run([sys.executable, "-c", _BROKEN_EXTENSION, "--help"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert helped.returncode == 0 and "Usage" in helped.stdout


def test_a_port_in_use_is_refused_before_a_store_is_made_or_a_link_printed(tmp_path: Path) -> None:
    """An operator tester started `omen serve` on a port another server held: it made the store's files, printed a
    set-up link that opened the other server, then failed in uvicorn's own words. Now the port is tried first:
    exit 2 in one line naming it, no file made, no link printed."""
    import socket

    from omen_cli import app

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--store", f"sqlite:///{tmp_path / 'other.db'}", "--port",
                                          str(port)])
    assert result.exit_code == 2, result.output
    assert f"omen: error: --host 127.0.0.1 --port {port}: cannot listen there (" in " ".join(result.output.split())
    assert "#create=" not in result.output and list(tmp_path.iterdir()) == []


def test_a_server_on_every_address_links_to_loopback() -> None:
    """docs/server.md (a TLS proxy before opening it to a network): a link to 0.0.0.0 opens nowhere, so the set-up
    link names loopback (an operator tester)."""
    from omen_server.serve import port_in_use, setup_link

    assert setup_link("0.0.0.0", 8000, "t") == "http://127.0.0.1:8000/#create=t"
    assert setup_link("::", 8000, "t") == "http://[::1]:8000/#create=t"
    assert port_in_use("192.0.2.1", 8000) is not None  # an address not this machine's (TEST-NET-1): said, not raised
