"""What the commands print with: the consoles (made on first use: Rich is imported only by a command that prints),
standard output and error as they stand now, user text made safe for the terminal, the narrative's lines."""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    from rich.console import Console

    from omen_replay.narrate import Line

__all__ = ["out", "unwrapped", "err", "console", "stdout", "escape", "visible", "masked", "plain", "print_lines",
           "STYLE", "Stderr", "StdoutFailed", "terminal_width", "fold", "fold_command", "fold_footer", "say",
           "FoldedLines"]

def _console(**kwargs: Any) -> Console:
    """A Rich console that shows the control characters of the text it is given as escapes (:func:`visible`):
    a name from a sheet never reaches the terminal raw. Rich's own styling is added after."""
    from rich.console import Console

    class _Console(Console):
        def print(self, *objects: Any, **options: Any) -> None:
            super().print(*(visible(masked(o)) if isinstance(o, str) else o for o in objects), **options)

        def on_broken_pipe(self) -> None:
            """A pipe its reader closed is an error of the stream written to, as any other write's (Rich's own
            way, exit 1 and standard output pointed at the null device whichever stream it was, turned an undo
            appended and reported into a pipe closed on both streams into "exit 1, nothing written": a tester)."""
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return _Console(highlight=False, emoji=False, **kwargs)  # ":100:" in a path or a name stays as written


class _Lazy:
    """An object made on first use (a console: Rich is imported only by a command that prints)."""

    def __init__(self, make: Any) -> None:
        self._make, self._made = make, None

    def made(self) -> Any:
        """The object itself, made now if it was not yet (where a proxy will not do: a context manager, an
        argument checked by type)."""
        if self._made is None:
            self._made = self._make()
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)


def escape(text: str) -> str:
    """Text made safe inside Rich markup (:func:`rich.markup.escape`)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def visible(text: str) -> str:
    """User text with its control characters shown as escapes (:func:`omen_replay.output.visible`)."""
    from omen_replay.output import visible as shown

    return shown(text)


def masked(text: str) -> str:
    """Text with the password of every store URL in it shown as ``***`` (:func:`omen_replay.output.masked`): every
    line a command prints goes through it."""
    from omen_replay.output import masked as hidden

    return hidden(text)


class StdoutFailed(OSError):
    """Standard output could not be written (a full disk, a closed pipe)."""


#: What a JSON encoder writes raw inside a string that a terminal acts on: DEL and the C1 controls (U+009B is a
#: CSI), the bidirectional controls, the line and paragraph separators (the C0 controls JSON escapes itself).
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _escaped(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


class _Stdout:
    """Standard output as it stands now (a test swaps ``sys.stdout``), whose write errors say they are its own.
    What it writes shows the characters a terminal acts on as ``\\u202e`` escapes (the other formats have done so
    already, :func:`visible`): in JSON, where only a string may hold one, the same string to a JSON reader."""

    def write(self, text: str) -> int:
        text = masked(text)
        if _RAW_IN_JSON.search(text):
            text = _RAW_IN_JSON.sub(_escaped, text)
        try:
            return sys.stdout.write(text)
        except OSError as exc:
            raise StdoutFailed(exc.errno, exc.strerror) from None

    def flush(self) -> None:
        try:
            sys.stdout.flush()
        except OSError as exc:
            raise StdoutFailed(exc.errno, exc.strerror) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stdout, name)


stdout = cast(TextIO, _Stdout())


class Stderr:
    """Standard error as it stands when a line is written (omen's log lines go there: a program that runs commands
    in process, as the tests do, swaps it between commands)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stderr, name)


def _stdout_console() -> Console:
    """Standard output's console: wrapped at a terminal's width, but never wrapped when standard output is not a
    terminal (a file, a pipe): an ``omen do`` command, a head or a URL copies whole from it (:data:`unwrapped`)."""
    return _console(file=stdout) if sys.stdout.isatty() else _console(file=stdout, soft_wrap=True, width=10_000)


out = cast("Console", _Lazy(_stdout_console))
err = cast("Console", _Lazy(lambda: _console(stderr=True, soft_wrap=True)))  # an error is one line: a path copies
#: Standard output laid out as no terminal limits it: a line never wrapped, a table never narrowed (for a report
#: sent to a file or a pipe, whose commands and paths must copy whole and whose names stay on their rows).
unwrapped = cast("Console", _Lazy(lambda: _console(file=stdout, soft_wrap=True, width=10_000)))


def terminal_width() -> int | None:
    """The width standard output is wrapped at: its terminal's (``COLUMNS`` if set, as Rich reads it); None when it
    is no terminal (a file, a pipe: never wrapped)."""
    if not sys.stdout.isatty():
        return None
    return int(console().width)


#: A word of a line to fold: a head and its value are one (``head 74:2cdb...``), as are an option and its value
#: (``--seed HEX``), never parted.
_WORD = re.compile(r"head \d+:[0-9a-f]+|--[\w-]+ [^\s-]\S*|\S+")


def fold(line: str, width: int | None, hang: str = "") -> list[str]:
    """``line`` in lines of at most ``width`` cells, broken only between words, each line after the first starting
    with ``hang``; a word wider than that (a command's JSON, a hash) is kept whole, for the terminal to show and to
    copy as one. The line as it is when ``width`` is None (standard output is no terminal) or when it fits."""
    from rich.cells import cell_len

    if width is None or cell_len(line) <= width:
        return [line]
    words: list[tuple[str, str]] = []  # (the space before, the word)
    end = 0
    for match in _WORD.finditer(line):
        first, _, second = match.group().partition(" ")
        kept = not second or first == "head" or cell_len(hang + match.group()) <= width  # (a head: never parted)
        words += [(line[end:match.start()], match.group())] if kept else [(line[end:match.start()], first),
                                                                          (" ", second)]
        end = match.end()
    lines: list[str] = []
    current = ""
    for gap, word in words:
        if current.strip() and cell_len(current + gap + word) > width:
            lines.append(current)
            current = hang + word
        else:
            current += gap + word
    return [*lines, current]


def fold_command(line: str, width: int | None, hang: str = "    ") -> list[str]:
    """A shell command (and its ``   # comment``) to paste, in lines of at most ``width`` cells where its words
    allow: broken between the shell's words, a line so broken ending in `` \\`` (pasted, it is still one
    command), and inside a JSON object given in single quotes between its members (JSON's own white space, which
    the quotes keep); an option stays with its value where they fit on a line; the comment on lines of its own
    after it, each starting with ``#``. As it is when it fits or ``width`` is None."""
    import shlex

    from rich.cells import cell_len

    if width is None or cell_len(line) <= width:
        return [line]
    shell, _, comment = line.partition("   # ")
    lead = shell[:len(shell) - len(shell.lstrip(" "))]
    room = width - 2 - len(hang)  # what a continued line holds, before its " \\"
    pieces: list[tuple[str, str]] = []  # (what goes before it on a line: " " between words, "" inside quotes; it)
    for word in [shlex.quote(word) for word in shlex.split(shell)]:
        if pieces and pieces[-1][1].startswith("--") and " " not in pieces[-1][1] and not word.startswith("-") \
                and cell_len(f"{pieces[-1][1]} {word}") <= room:
            pieces[-1] = (pieces[-1][0], f"{pieces[-1][1]} {word}")  # --seed HEX, kept together
            continue
        members = _json_members(word) if cell_len(word) > room else [word]
        pieces += [(" ", members[0]), *(("", member) for member in members[1:])]
    lines: list[str] = []
    current = lead + pieces[0][1]
    for gap, piece in pieces[1:]:
        if cell_len(current + gap + piece) <= width - 2:
            current += gap + piece
            continue
        lines.append(current + (" \\" if gap else ""))
        current = hang + piece
    return [*lines, current, *(fold(f"{hang}# {comment}", width, f"{hang}# ") if comment else [])]


def fold_footer(head: str, command: str, said: str, width: int | None) -> list[str]:
    """``head HEAD  (COMMAND SAID)`` in lines of at most ``width`` cells where its words allow: as it is when it
    fits; else the head on a line of its own (``SEQ:HASH`` whole), then the command to paste folded as the
    ``next:`` lines are (:func:`fold_command`: broken between the shell's words, a quoted path whole, each line so
    broken ending in `` \\``), then what it says, between words."""
    from rich.cells import cell_len

    line = f"head {head}  ({command} {said})"
    if width is None or cell_len(line) <= width:
        return [line]
    folded = fold_command(f"   {command}", width)  # its lead, three columns: "  (" in their place
    folded[0] = f"  ({folded[0][3:]}"
    if cell_len(f"{folded[-1]} {said})") <= width:
        folded[-1] = f"{folded[-1]} {said})"
    else:
        folded += fold(f"  {said})", width, "  ")
    return [f"head {head}", *folded]


def say(markup: str, hang: str = "  ") -> None:
    """A line of Rich markup to standard output, folded at the terminal's width as :func:`fold` folds (between
    words only, each line after the first starting with ``hang``, a head ``SEQ:HASH``, a hash, a seed left whole),
    its styles kept; as it is when standard output is no terminal."""
    from rich.text import Text

    text = Text.from_markup(visible(markup))
    pieces = fold(text.plain, terminal_width(), hang)
    at = 0
    for n, piece in enumerate(pieces):
        body = piece[len(hang):] if n else piece
        start = text.plain.index(body, at) if body else at
        shown = text[start:start + len(body)]
        at = start + len(body)
        out.print(Text(hang) + shown if n else shown, soft_wrap=True)


def _json_members(word: str) -> list[str]:
    """A shell word holding a JSON object in single quotes (``'{"a":1,"b":2}'``), cut after each member's comma
    (``'{"a":1,``, ``"b":2}'``): joined again with any white space between them, the shell passes the same object;
    the word whole if it is anything else."""
    import json

    if not (word.startswith("'{") and word.endswith("}'")) or "'" in word[1:-1]:
        return [word]
    try:
        found = json.loads(word[1:-1])
    except ValueError:
        return [word]
    members = [json.dumps(k, ensure_ascii=False) + ":" + json.dumps(v, ensure_ascii=False, separators=(",", ":"))
               for k, v in found.items()] if isinstance(found, dict) and found else []
    if "{" + ",".join(members) + "}" != word[1:-1]:
        return [word]  # not as json.dumps writes it: a cut could fall inside a string
    return [f"'{{{members[0]}," if len(members) > 1 else f"'{{{members[0]}}}'",
            *(f"{m}," for m in members[1:-1]), *([f"{members[-1]}}}'"] if len(members) > 1 else [])]


class FoldedLines:
    """A text stream whose every line goes to standard output folded at the terminal's width (:func:`fold`): a
    continued line goes on under its text (after ``#SEQ``, or under its ``│`` rule), or two columns in.
    Lines pass as they are when standard output is no terminal."""

    _PREFIX = re.compile(r"#\d+ +|( *│ )| *")

    def __init__(self, width: int | None) -> None:
        self.width, self._pending = width, ""

    def write(self, text: str) -> int:
        *done, self._pending = (self._pending + text).split("\n")
        for line in done:
            prefix = self._PREFIX.match(line)
            assert prefix is not None  # (" *" matches any line)
            lead = prefix.group()
            hang = prefix.group(1) or (" " * len(lead) if lead.startswith("#") else lead + "  ")
            for piece in fold(line, self.width, hang):
                stdout.write(piece + "\n")
        return len(text)

    def flush(self) -> None:
        """Nothing to do: a line is written once it is whole (:meth:`close` writes the rest)."""

    def close(self) -> None:
        """Write what is left of an unfinished last line."""
        if self._pending:
            stdout.write(self._pending)
            self._pending = ""


def console(stderr: bool = False) -> Console:
    """The CLI's console itself (standard output's, or with ``stderr`` standard error's), made now: where a proxy
    will not do (a progress bar holds it as a context manager)."""
    made: Console = cast(_Lazy, err if stderr else out).made()
    return made


STYLE = {"round": "bold", "header": "bold", "roll": "dim", "result": "", "window": "yellow", "note": "cyan",
         "undone": "dim italic"}


def plain(text: str) -> str:
    """User text for a Rich table cell or title: control characters shown as escapes, markup escaped."""
    return escape(visible(text))


def print_lines(lines: Iterator[Line]) -> None:
    for line in lines:
        style = STYLE[line.kind]
        text = f"[dim]#{line.seq:<3}[/] " + (f"[{style}]{escape(line.text)}[/]" if style
                                             else escape(line.text))
        out.print(text)
