"""The ``omen`` command group: its exit codes, usage errors, logging, and what every command shares (the stores it
opens, what it has written, bad input as one line).

Only this package (of omen's) configures logging. It imports at start-up only what parsing the command line needs
(typer): each command imports the engine, the stores and the writers it uses when it runs, so ``omen --help``
starts in a few tens of milliseconds (docs/performance.md).

Exit codes (:data:`EXIT_CODES`): 0 success, 1 findings (verify) or a lost race, 2 bad input, nothing written (a
malformed file, log, command or argument, or a command that breaks a rule), 3 written, but the report could not be
given (standard output closed or full, say): the message on standard error says what was written (``appended at
seq N with head N:HASH``), so a script does not append it again; 130 interrupted (Ctrl-C), said in one line;
143 omen simulate stopped by SIGTERM.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO, cast

import typer
from typer.core import TyperGroup

from .console import Stderr, StdoutFailed, err, escape, masked, out

if TYPE_CHECKING:
    from omen_core.errors import OmenError
    from omen_core.events import StoredEvent
    from omen_core.store import EventStore

__all__ = ["app", "main", "EXIT_CODES", "LOG_HELP", "bad_input", "refusals", "guarded", "seed_option", "open_store",
           "open_existing_store", "open_snapshots", "held", "wrote", "appended", "store_at", "open_fight",
           "check_log_parent", "say", "seq_value", "seq_from"]

EXIT_CODES = {0: "success", 1: "findings (verify), or a lost race: another writer appended first, nothing written",
              2: "bad input: nothing was written", 3: "written, but the report could not be given: standard "
              "error says what was written (appended at seq N with head N:HASH)",
              130: "interrupted (Ctrl-C): what was written is whole",
              143: "omen simulate stopped by SIGTERM while its fights are played: nothing written"}
"""What each exit code of ``omen`` means (the README's table)."""

#: The help of a command's LOG argument.
LOG_HELP = "The fight's store: a .jsonl log, a directory of them, sqlite:///path.db or postgresql://user@host/db."

#: The exit code of a command that wrote, but could not report what it wrote.
REPORT_LOST = 3


#: The exit code of a command interrupted by Ctrl-C (SIGINT), as shells give 128 + 2 (README, "exit codes").
INTERRUPTED = 130


def _interrupted() -> None:
    """Say, in one line, that a Ctrl-C stopped the command, that what was written is whole, and what the command had
    written by then (omen simulate stopped while writing its outputs at the end: the run written, a report's fight
    pages half written and an earlier run's removed, said as exit 3 says them: a tester's report was left linking
    pages that were gone, and the line said nothing was kept); where ``--json`` was asked for, also as
    ``{"error": {"kind": "Interrupted", "exit": 130, ...}}`` on standard output."""
    said = "omen: interrupted (Ctrl-C): what was written is whole (a command is appended whole or not at all; an " \
        "output file is written beside and renamed into place; omen simulate writes its run at the end)"
    if not _WRITTEN and INTERRUPT_NOTE:  # a command that says what a stop before it wrote anything means
        said += f"; {INTERRUPT_NOTE[0]}"
    if _FORMAT.get("json_out") == "yes":  # asked for --json: standard output says it too, as an error's object
        import msgspec

        from .errors import ErrorReport, facts_of

        facts = facts_of(said.removeprefix("omen: "), INTERRUPTED, None, "; ".join(_WRITTEN.values()), "Interrupted")
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(msgspec.json.encode(ErrorReport(error=facts)).decode() + "\n")
            sys.stdout.flush()
    say(said + _written_said())


#: What a Ctrl-C before the command wrote anything means, where the command says it (omen simulate, while its
#: fights are played: "nothing was written: the fights played are not kept"; a tester read the plain line as if
#: something had been); at most one entry.
INTERRUPT_NOTE: list[str] = []


def _last_resort_types() -> tuple[type[BaseException], ...]:
    """What the CLI turns into a short message if a command lets it through (a last line of defence): an OS or
    database error, a decoding error, too deep a nesting, no memory."""
    import sqlite3

    return (OSError, sqlite3.Error, UnicodeError, RecursionError, MemoryError)


def _omen_error() -> type[OmenError]:
    """omen's error root, imported when a command has failed (``omen --help`` imports no engine)."""
    from omen_core.errors import OmenError

    return OmenError


def _click_error(name: str) -> type[BaseException]:
    """The class of click's exceptions named ``name``, as the installed typer raises them (typer vendors click:
    found through :class:`typer.BadParameter`'s and :class:`typer.Abort`'s bases)."""
    for kind in (*typer.BadParameter.__mro__, *typer.Abort.__mro__):
        if kind.__name__ == name:
            return kind
    raise LookupError(name)  # pragma: no cover - every click has these


class _Guarded(TyperGroup):
    """The command group: a usage error is one line (``omen: error: ...``, exit 2) naming the ``--help`` to read;
    standard output is flushed before the exit code is final; an error that escaped a command is a short message
    instead of a traceback (exit 2, or 3 when something was written)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        """Run the command line; every exit code is one of :data:`EXIT_CODES`."""
        _FORMAT.clear()  # (what an earlier run in this process asked for is not this one's)
        given = list(sys.argv[1:] if args is None else args)
        if any(a == "--log-format=json" or (a == "--log-format" and given[i + 1:i + 2] == ["json"])
               for i, a in enumerate(given)):
            _FORMAT["stderr"] = "json"  # a usage error found before the group's callback runs is JSON too
        if "--json" in given:
            _FORMAT["json_out"] = "yes"  # and said as JSON on standard output where --json was asked for
        try:
            code = super().main(args=args, prog_name="omen", complete_var=complete_var,
                                standalone_mode=False, windows_expand_args=windows_expand_args, **extra)
        except _click_error("ClickException") as exc:
            code = _usage_error(exc, self._path(sys.argv[1:] if args is None else list(args)))
        except _click_error("Abort"):
            say("omen: aborted")
            code = 1
        except SystemExit:  # typer's way out of a pipe closed while it printed (a --help | head -1): exit 1, its
            if type(sys.stdout).__name__ != "PacifyFlushWrapper":  # standard streams made to ignore it
                raise
            _discard_stdout()
            code = 2  # as any command that wrote nothing, without a word (_stdout_failed)
        except OSError as exc:  # typer's own output (a --help) to a full or closed standard output: a command's
            if exc.filename:    # errors are its own lines (invoke), so nothing else writes here
                raise
            _discard_stdout()
            if exc.errno != errno.EPIPE:  # a pipe its reader closed (omen --help | head -1): said by stopping
                say(f"omen: error: cannot write to standard output: {exc.strerror or exc}")
            code = 2
        code = code if isinstance(code, int) else 0
        if code == INTERRUPTED:  # typer's way out of a Ctrl-C (Exit(130)), which said nothing
            _interrupted()
        if standalone_mode:
            sys.exit(code)
        return code

    def _path(self, args: list[str]) -> str:
        """The command ``args`` name (``omen fixtures check``), for a usage error that does not say."""
        path, command = ["omen"], self
        for arg in args:
            sub = getattr(command, "commands", {}).get(arg)
            if sub is not None:
                path.append(arg)
                command = sub
        return " ".join(path)

    def invoke(self, ctx: Any) -> Any:
        protected = getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])
        pending = [*protected, *ctx.args]
        ctx.meta["omen.help"] = "--help" in pending  # a command's help: the root callback configures nothing
        try:
            try:
                return super().invoke(ctx)
            finally:
                _flush_stdout()
        except _omen_error() as exc:  # one a command did not catch itself (an extension that cannot be loaded,
            guarded(exc)               # raised as the command imports the engine): one line, exit 2
        except _last_resort_types() as exc:
            if ctx.meta["omen.help"] and isinstance(exc, OSError) and not exc.filename:
                _stdout_failed(exc)  # a command's help, printed where standard output is closed or full
            _log().info("command_crashed", error=type(exc).__name__, message=str(exc))
            _last_resort(exc)


#: What a command a user reaches for by a word of the docs is called (``options()`` is the Python API's: a tester typed
#: ``omen options``).
NO_SUCH_COMMAND = {
    "options": "what a fight offers is 'omen status LOG --all' (every offer; --json, the options document), and "
               "'omen do LOG --options' after a command",
    "offers": "what a fight offers is 'omen status LOG --all'",
    "play": "a fight is played with 'omen do LOG COMMAND', or run from a scenario with 'omen run SCENARIO'",
    "check": "a log is audited with 'omen verify LOG'",
    "audit": "a log is audited with 'omen verify LOG'",
    "state": "a fight's state is 'omen replay LOG' or 'omen status LOG'",
}


def _usage_error(exc: Any, named: str) -> int:
    """A usage error of typer's (a missing argument, an unknown option, a value of the wrong type), as one line
    saying which ``--help`` to read (its context's command, or ``named``); its exit code (2)."""
    context = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:  # ``omen`` or ``omen db`` alone: the help
        say(context.get_help())
        code: int = exc.exit_code
        return code
    # typer checks a choice with pydantic, whose message starts "Value error, ": noise to whoever reads it
    message = _wrong_value(exc) or " ".join(str(exc.format_message()).split()).rstrip(".").replace(
        "Value error, ", "")
    path = context.command_path if context is not None else named
    exit_code: int = exc.exit_code
    asked = re.fullmatch(r"No such command '(.+)'", message)
    if asked is not None and asked[1] in NO_SUCH_COMMAND:  # a word the docs use for what another command does
        message += f": {NO_SUCH_COMMAND[asked[1]]}"
    _tell_error(f"{message} (see '{path} --help')", exit_code, kind="UsageError")
    return exit_code


class _NotASeq(ValueError):
    """A seq the command line gave otherwise than as digits (``77.0``, ``1e2``, ``+5``): :func:`seq_value`."""


class _BelowSeq(ValueError):
    """A seq below the least an option takes (``--to 0`` where the first event, seq 1, is the least)."""

    def __init__(self, given: int, least: int):
        super().__init__(given, least)
        self.given, self.least = given, least


#: A seq as the command line writes it: digits (a sign before them for one below 0, which each command refuses
#: saying the log's range), nothing else.
_DIGITS = re.compile(r"-?[0-9]+")


def seq_value(given: object) -> int:
    """A seq given on the command line (an argument or an option, as ``parser=``): a whole number written as digits,
    as a log writes it; ``77.0``, ``1e2`` or ``+77`` is a usage error naming the option (exit 2), where typer's own
    ``int`` took ``77.0`` for 77. A default (an int already) is itself."""
    if isinstance(given, int) and not isinstance(given, bool):
        return given
    if not (isinstance(given, str) and given.isascii() and _DIGITS.fullmatch(given)):
        raise _NotASeq(given)
    return int(given)


def seq_from(least: int) -> Callable[[object], int]:
    """:func:`seq_value` for an option that takes no seq below ``least`` (``parser=`` ignores typer's ``min``)."""
    def parse(given: object) -> int:
        seq = seq_value(given)
        if seq < least:
            raise _BelowSeq(seq, least)
        return seq
    return parse


#: What a value refused for its type must be, by pydantic's kind of error (typer checks types with pydantic).
_MUST_BE = {"int_parsing": "a whole number", "int_from_float": "a whole number", "int_type": "a whole number",
            "float_parsing": "a number", "float_type": "a number"}


def _wrong_value(exc: Any) -> str | None:
    """A value typer refused for its type or range, said in omen's words, naming the argument or option as
    ``--help`` does: ``SEQ must be a whole number, not 'abc'``, ``--port must be at least 1, not 0``; None for any
    other usage error (pydantic's own words were "Input should be a valid integer, unable to parse string as an
    integer")."""
    errors, param = getattr(exc.__cause__, "errors", None), getattr(exc, "param", None)
    found = errors() if callable(errors) else []
    if not found or param is None:
        return None
    kind, given, bounds = str(found[0].get("type", "")), found[0].get("input"), found[0].get("ctx") or {}
    name = max(param.opts, key=len) if param.param_type_name == "option" else param.metavar or param.name.upper()
    if kind in _MUST_BE and param.param_type_name == "option":
        name = _part_of(param, name, float if kind.startswith("float") else int)
    raised = bounds.get("error")
    if isinstance(raised, _NotASeq):
        return f"{name} must be a whole number written as digits, not {str(given)!r}"
    if isinstance(raised, _BelowSeq):
        return f"{name} must be at least {raised.least}, not {raised.given}"
    if kind in _MUST_BE:
        return f"{name} must be {_MUST_BE[kind]}, not {str(given)!r}"
    limit = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le")}.get(kind)
    if limit is not None and limit[1] in bounds:
        return f"{name} must be {limit[0]} {bounds[limit[1]]}, not {given}"
    return None


def _part_of(param: Any, name: str, kind: type) -> str:
    """The value of an option of several (``--replay RUN INDEX``) that must be a ``kind``, named by its metavar's
    word: ``INDEX (of --replay RUN INDEX)`` (the option alone read as if RUN were wrong: a tester); ``name`` for an
    option of one value, or where more than one of its values is of that kind."""
    import typing

    words = str(param.metavar or "").split()
    parts = typing.get_args(getattr(getattr(param, "type_descriptor", None), "annotation", None))
    at = [i for i, part in enumerate(parts) if part is kind]
    if len(words) < 2 or len(parts) != len(words) or len(at) != 1:
        return name
    return f"{words[at[0]]} (of {name} {' '.join(words)})"


def say(line: str) -> None:
    """A line on standard error (nothing if it cannot be written either); under ``--log-format json`` a JSON object
    as omen's log lines are (``{"event": "notice", "level": "warning", "message": ...}``: a note ``info``, a
    warning ``warning``; an error, a usage error's, ``{"event": "error", "level": "error", ...}``), so that every
    line there parses."""
    if _FORMAT.get("stderr") == "json":
        import json

        found = re.match(r"omen: (warning|note|error): ", line)
        kind = found[1] if found else ""
        level = {"note": "info", "error": "error"}.get(kind, "warning")
        line = json.dumps({"event": "error" if kind == "error" else "notice", "level": level,
                           "message": line[found.end():] if found else line.removeprefix("omen: ")},
                          ensure_ascii=False)
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(masked(line) + "\n")
        sys.stderr.flush()


#: How this invocation writes its errors: ``"stderr": "json"`` under ``--log-format json``, ``"json_out": "yes"``
#: where the command line holds ``--json`` (read from it by the group's ``main``, before anything is parsed).
_FORMAT: dict[str, str] = {}


app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False, cls=_Guarded,
                  rich_markup_mode=None, help="omen: an event-sourced combat engine for ØMEN: After Dragons.")


def _log() -> Any:
    """The CLI's structlog logger; where logging could not be configured (importing the engine failed first, an
    extension that does not load, say), one to standard error at warnings only: structlog's default writes every
    level to standard output, where a script reads JSON (found by an extension tester)."""
    import logging

    import structlog

    if not structlog.is_configured():
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
                            logger_factory=structlog.PrintLoggerFactory(cast(TextIO, Stderr())))
    return structlog.get_logger("omen.cli")


class LogFormat(str, Enum):
    """How the CLI writes its own logs (to stderr)."""

    console = "console"
    json = "json"


def configure_logging(fmt: LogFormat, level: str) -> None:
    """Configure structlog for the CLI: human console lines or JSON, to stderr, at ``level``."""
    import logging

    import structlog

    from omen_core.logs import host_processors, route_library_logs

    structlog.configure(
        processors=host_processors(json=fmt is LogFormat.json, colors=sys.stderr.isatty()),
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(cast(TextIO, Stderr())),
        cache_logger_on_first_use=False,
    )
    route_library_logs(fmt is LogFormat.json, level, Stderr())


def _version(value: bool) -> None:
    if value:
        from omen_core import __version__
        from omen_core.events import SCHEMA_VERSION

        out.print(f"omen {__version__} (log schema version {SCHEMA_VERSION})")
        raise typer.Exit(0)


#: What this invocation opened (stores, snapshot caches): closed when the command ends (``_root``), so a PostgreSQL
#: pool is shut by the command that opened it, not left to the garbage collector (tests run commands in-process).
_OPENED: list[Any] = []
#: What this invocation wrote, once it has (``appended at seq N with head N:HASH``): an error after it is exit 3
#: saying so, never exit 2 ("nothing written"), so a script does not do it again.
_WRITTEN: dict[str, str] = {}


def open_store(url: str) -> EventStore:
    """:func:`omen_core.store.open_store`, closed when the command ends."""
    from omen_core.store import open_store as opened

    return cast("EventStore", held(opened(url)))


def open_existing_store(url: str) -> EventStore:
    """:func:`omen_core.store.open_existing_store`, closed when the command ends."""
    from omen_core.store import open_existing_store as opened

    return cast("EventStore", held(opened(url)))


def open_snapshots(url: str) -> Any:
    """:func:`omen_core.store.open_snapshots`, closed when the command ends."""
    from omen_core.store import open_snapshots as opened

    return held(opened(url))


def held(opened: Any) -> Any:
    _OPENED.append(opened)
    return opened


def _close_opened() -> None:
    while _OPENED:
        close = getattr(_OPENED.pop(), "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


def wrote(what: str, key: str = "") -> None:
    """Note what the command has written (``appended at seq 12 to 15 with head 15:ab12...``): from here on, a
    failure to report it is exit 3 saying so. A later note of the same ``key`` replaces the earlier one (a run
    written further)."""
    _WRITTEN[key or what] = what


def appended(stored: list[StoredEvent], key: str = "appended") -> None:
    """Note events appended (:func:`wrote`): from the first seq noted under ``key`` to the head now."""
    if stored:
        last = stored[-1]
        first = _FIRST.setdefault(key, stored[0].seq)
        span = f"seq {first}" if first == last.seq else f"seq {first} to {last.seq}"
        lead = "" if key == "appended" else f"{key}: "
        wrote(f"{lead}appended at {span} with head {last.seq}:{last.hash}", key)


#: The first seq each note of :func:`appended` covers.
_FIRST: dict[str, int] = {}


@app.callback()
def _root(
    ctx: typer.Context,
    log_format: Annotated[LogFormat, typer.Option(help="Format of omen's own log lines (stderr).")]
    = LogFormat.console,
    log_level: Annotated[str, typer.Option(metavar="LEVEL", help="debug, info, warning or error.")] = "warning",
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print omen's version and exit.")] = False,
) -> None:
    _WRITTEN.clear()
    _FIRST.clear()
    if log_format is LogFormat.json:  # (main() read it from the command line already, and cleared what an earlier
        _FORMAT["stderr"] = "json"  # run in this process asked for)
    if log_level.lower() not in {"debug", "info", "warning", "error"}:
        bad_input(f"--log-level must be debug, info, warning or error, not {log_level!r}")
    ctx.call_on_close(_close_opened)
    if not ctx.meta.get("omen.help"):  # a command's help logs nothing: structlog is not even imported
        configure_logging(log_format, log_level)


def _written_said() -> str:
    """What the command had written (:func:`wrote`), as a failure or an interrupt after it says it; "" if nothing."""
    return f"; but omen had written: {'; '.join(_WRITTEN.values())}" if _WRITTEN else ""


def bad_input(message: str, code: int = 2, error: OmenError | None = None, kind: str | None = None) -> NoReturn:
    """One line on standard error, ``omen: error: ...``, and the exit code: 2 (bad input, nothing written), 1 (a
    lost race), or 3 if the command had written something (the line then says what). Under ``--log-format json``
    the line is a JSON object (``{"event": "error", "level": "error", ...}`` and the error's facts); a command
    asked for ``--json`` also prints ``{"error": {...}}`` on standard output (:mod:`omen_cli.errors`), so a
    script reads the rule, the field and the line without parsing words."""
    written = "; ".join(_WRITTEN.values())
    if written:
        code = REPORT_LOST
    _tell_error(message, code, error, written, kind)
    raise typer.Exit(code)


def _tell_error(message: str, code: int, error: OmenError | None = None, written: str = "",
                kind: str | None = None) -> None:
    """An error's one line on standard error (a JSON object under ``--log-format json``), and ``{"error": ...}`` on
    standard output where the command was asked for ``--json`` (its own option, or, where the command line was
    not read that far, a ``--json`` on it: a usage error's, an engine that did not load)."""
    params = _params()
    as_json = bool(params["as_json"]) if "as_json" in params else _FORMAT.get("json_out") == "yes"
    message, written = masked(message), masked(written)  # a store URL's password: never shown (docs/stores.md)
    said = message + (_written_said() if written else "")
    if as_json or _FORMAT.get("stderr") == "json":
        import msgspec

        from .errors import ErrorReport, facts_of

        facts = facts_of(message, code, error, written, kind)
        if as_json:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.write(masked(msgspec.json.encode(ErrorReport(error=facts)).decode()) + "\n")
                sys.stdout.flush()
        if _FORMAT.get("stderr") == "json":
            line = {"event": "error", "level": "error", **msgspec.to_builtins(facts)}
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(masked(msgspec.json.encode(line).decode()) + "\n")
                sys.stderr.flush()
            return
    with contextlib.suppress(OSError, ValueError):  # standard error closed too (2>&1 | head -1): the exit code says it
        err.print(f"[bold red]omen: error:[/] {escape(said)}")


def _context() -> Any:
    """The click context of the command running, None outside one."""
    import importlib

    core = typer.Context.__mro__[1].__module__  # typer vendors click: its globals beside its core
    return importlib.import_module(core.rsplit(".", 1)[0] + ".globals").get_current_context(silent=True)


def _params() -> dict[str, Any]:
    """The parameters of the command running (its click context's), empty outside one."""
    context = _context()
    return dict(context.params) if context is not None else {}


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """An :class:`~omen_core.errors.OmenError` raised inside is the command's one-line error and exit code."""
    from omen_core.errors import OmenError

    try:
        yield
    except OmenError as exc:
        guarded(exc)


def usage_said(message: str) -> str:
    """A usage error's words with the ``--help`` to read (README: "a usage error names the --help to read"), that of
    the command running (``omen verify``), as typer's own usage errors say it (:func:`_usage_error`)."""
    context = _context()
    return f"{message} (see '{context.command_path} --help')" if context is not None else message


def seed_option(seed: str | None, name: str = "--seed") -> bytes | None:
    """A seed option (``--seed``, or the one ``name`` names) as bytes; empty or not hex is bad input (exit 2)
    naming it and the ``--help`` to read."""
    if seed is None:
        return None
    try:
        found = bytes.fromhex(seed)
    except ValueError:
        bad_input(usage_said(f"{name} must be hex (two digits a byte), got {seed!r}"))
    if not found:
        bad_input(usage_said(f"{name} is empty: give the seed as hex (two digits a byte)"))
    return found


def _flush_stdout() -> None:
    """Flush standard output; if it cannot be written (a full disk, a closed pipe), :func:`_stdout_failed`."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        _stdout_failed(exc)


def _stdout_failed(exc: OSError) -> NoReturn:
    """Standard output could not be written: say so, exit 2 (3 if the command had written something, saying
    what). A pipe its reader closed early (``omen status LOG | head -1``) ends a command that wrote nothing with
    exit 2 and no word: the reader chose to stop reading; one that wrote says what it wrote, exit 3."""
    _discard_stdout()
    if exc.errno == errno.EPIPE and not _WRITTEN:
        raise typer.Exit(2)
    bad_input(f"cannot write to standard output: {exc.strerror or exc}", kind="OutputFailed")


def _discard_stdout() -> None:
    """Point standard output at the null device, so what is still buffered for it cannot fail again at exit."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test's capture): nothing will flush it at exit


def _last_resort(exc: BaseException) -> NoReturn:
    """A short message for an error that escaped a command; exit 2 (3 if the command had written something)."""
    if isinstance(exc, StdoutFailed):
        _stdout_failed(exc)
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        bad_input(f"{where}{exc.strerror or exc}")
    if isinstance(exc, RecursionError):
        bad_input("the input is nested too deeply")
    if isinstance(exc, MemoryError):
        bad_input("out of memory: the input is too large")
    bad_input(f"{type(exc).__name__}: {exc}")


def guarded(exc: OmenError) -> NoReturn:
    from omen_core.errors import ConcurrencyError

    _log().info("command_failed", error=type(exc).__name__, message=str(exc))
    bad_input(str(exc), 1 if isinstance(exc, ConcurrencyError) else 2, exc)


def store_at(url: str) -> EventStore:
    """The store ``url`` names (made if need be), read once: a file that is no database is bad input naming it
    (the store's StoreUnavailable)."""
    store = open_store(url)
    store.fights()
    return store


#: At most this many fight ids in a message asking which fight (the rest counted).
LISTED = 10


def open_fight(url: str, fight: str | None) -> tuple[EventStore, str]:
    """The existing store ``url`` names and the fight in it (``fight``, or its only one); bad input otherwise,
    creating nothing."""
    store = open_existing_store(url)
    fights = store.fights()
    if fight is not None:
        if fight not in fights:
            bad_input(f"no fight {fight!r} in {url} (fights: {', '.join(fights) or 'none'})")
        return store, fight
    if not fights:
        bad_input(f"{url} holds no fight yet (omen run SCENARIO --log {shlex.quote(url)} starts one)")
    if len(fights) != 1:
        listed = ", ".join(fights[:LISTED]) + (f", and {len(fights) - LISTED} more" if len(fights) > LISTED else "")
        bad_input(f"{url} holds {len(fights)} fights ({listed}); choose one with --fight")
    return store, fights[0]


def check_log_parent(url: str) -> None:
    """Bad input if the log ``url`` names would go in a directory that does not exist: ``run`` does not make
    directory trees (a path ending in '/' names a directory of logs, made if its parent exists)."""

    from omen_replay.output import check_parent

    where = _log_location(url)
    if where is None:
        return
    if not url.startswith("sqlite:"):
        check_parent(where, "the fight's log")
        return
    from omen_core.errors import BadInput

    try:
        check_parent(where, "the database")
    except BadInput as exc:  # sqlite:///tmp/x.db is tmp/x.db, here: said, with the absolute form (a tester)
        hint = "" if where.is_absolute() else f" (sqlite:///PATH is a path from here; an absolute one is sqlite:////{where})"
        raise BadInput(f"{exc}{hint}") from None


def _log_location(url: str) -> Path | None:
    """The file or directory a store URL writes to, if it is one not made yet (None for memory, PostgreSQL and the
    rest)."""
    from omen_core.store.postgres import is_postgres_url

    if is_postgres_url(url):
        return None
    if url.startswith("sqlite:"):
        rest = url.removeprefix("sqlite:")
        rest = rest[3:] if rest.startswith("///") else rest
        return Path(rest) if rest and rest != ":memory:" and not rest.startswith("//") else None
    if url.endswith(".jsonl") or (url.endswith(("/", os.sep)) and not os.path.isdir(url)):
        return Path(url.rstrip("/" + os.sep) or url)
    return None


class _Closed(io.TextIOBase):
    """A standard stream the process was started without (``>&-``: Python's ``sys.stdout`` is then None): writing
    to it fails as writing to a closed descriptor does (EBADF), so a command that cannot report says so and exits
    as for any unwritable output (2, or 3 once it has written: docs/cli.md, README); nothing is buffered to flush."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def writable(self) -> bool:
        return True


def main() -> None:
    """Console-script entry point: an error that escapes even the command group (``--version`` to a full disk,
    while the options are parsed) is a short message too, exit 2. A standard stream the process was started
    without is one that cannot be written: standard output fails like a full disk, standard error says nothing."""
    if sys.stdout is None:
        sys.stdout = _Closed()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (kept open until the process ends, as stderr is)
    try:
        app()
    except KeyboardInterrupt:  # a Ctrl-C outside a command (while the CLI starts): said as in one
        _interrupted()
        sys.exit(INTERRUPTED)
    except _last_resort_types() as exc:
        try:
            _last_resort(exc)
        except typer.Exit as done:
            sys.exit(done.exit_code)
