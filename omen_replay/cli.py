"""The ``omen`` command line: demo, run, status, do, replay, log, verify, explain, undo, redo, snapshot, repair,
schema, copy, db init, serve, fixtures, simulate.

Only this module (of omen_core and omen_replay) configures logging. It imports at start-up only what parsing the
command line needs (typer): each command imports the engine, the stores and the writers it uses when it runs, so
``omen --help`` starts in a few tens of milliseconds (docs/performance.md).

Exit codes (:data:`EXIT_CODES`): 0 success, 1 findings (verify) or a lost race, 2 bad input, nothing written (a
malformed file, log, command or argument, or a command that breaks a rule), 3 written, but the report could not be
given (standard output closed or full, say): the message on standard error says what was written (``appended at
seq N with head N:HASH``), so a script does not append it again.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, TextIO, cast

import typer
from typer.core import TyperGroup

from .simulate.command import simulate_command

if TYPE_CHECKING:
    from rich.console import Console

    from omen_core.commands import Command
    from omen_core.errors import OmenError
    from omen_core.events import StoredEvent
    from omen_core.options import DiceRoll, Offer, Options
    from omen_core.store import EventStore
    from omen_core.walk import Step

    from .narrate import Line
    from .replay import StateSummary
    from .verify import Report

__all__ = ["app", "main", "MAX_COMMAND_BYTES", "EXIT_CODES"]

MAX_COMMAND_BYTES = 1 << 20
"""The most a command given to ``omen do`` may take, as an argument or a file: 1 MiB."""

EXIT_CODES = {0: "success", 1: "findings (verify), or a lost race: another writer appended first, nothing written",
              2: "bad input: nothing was written", 3: "written, but the report could not be given: standard "
              "error says what was written (appended at seq N with head N:HASH)"}
"""What each exit code of ``omen`` means (the README's table)."""

#: The exit code of a command that wrote, but could not report what it wrote.
REPORT_LOST = 3


def _last_resort_types() -> tuple[type[BaseException], ...]:
    """What the CLI turns into a short message if a command lets it through (a last line of defence): an OS or
    database error, a decoding error, too deep a nesting, no memory."""
    import sqlite3

    return (OSError, sqlite3.Error, UnicodeError, RecursionError, MemoryError)


def _console(**kwargs: Any) -> Console:
    """A Rich console that shows the control characters of the text it is given as escapes (:func:`visible`):
    a name from a sheet never reaches the terminal raw. Rich's own styling is added after."""
    from rich.console import Console

    class _Console(Console):
        def print(self, *objects: Any, **options: Any) -> None:
            super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **options)

    return _Console(highlight=False, **kwargs)


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
    from .output import visible as shown

    return shown(text)


class _StdoutFailed(OSError):
    """Standard output could not be written (a full disk, a closed pipe)."""


class _Stdout:
    """Standard output as it stands now (a test swaps ``sys.stdout``), whose write errors say they are its own."""

    def write(self, text: str) -> int:
        try:
            return sys.stdout.write(text)
        except OSError as exc:
            raise _StdoutFailed(exc.errno, exc.strerror) from None

    def flush(self) -> None:
        try:
            sys.stdout.flush()
        except OSError as exc:
            raise _StdoutFailed(exc.errno, exc.strerror) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stdout, name)


stdout = cast(TextIO, _Stdout())


class _Stderr:
    """Standard error as it stands when a line is written (omen's log lines go there: a program that runs commands
    in process, as the tests do, swaps it between commands)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stderr, name)


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
        try:
            code = super().main(args=args, prog_name="omen", complete_var=complete_var,
                                standalone_mode=False, windows_expand_args=windows_expand_args, **extra)
        except _click_error("ClickException") as exc:
            code = _usage_error(exc, self._path(sys.argv[1:] if args is None else list(args)))
        except _click_error("Abort"):
            _say("omen: aborted")
            code = 1
        code = code if isinstance(code, int) else 0
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
        except _last_resort_types() as exc:
            _log().info("command_crashed", error=type(exc).__name__, message=str(exc))
            _last_resort(exc)


def _usage_error(exc: Any, named: str) -> int:
    """A usage error of typer's (a missing argument, an unknown option, a value of the wrong type), as one line
    saying which ``--help`` to read (its context's command, or ``named``); its exit code (2)."""
    context = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:  # ``omen`` or ``omen db`` alone: the help
        _say(context.get_help())
        code: int = exc.exit_code
        return code
    message = " ".join(str(exc.format_message()).split()).rstrip(".")
    path = context.command_path if context is not None else named
    _say(f"omen: error: {message} (see '{path} --help')")
    exit_code: int = exc.exit_code
    return exit_code


def _say(line: str) -> None:
    """A line on standard error (nothing if it cannot be written either)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False, cls=_Guarded,
                  rich_markup_mode=None, help="omen: an event-sourced combat engine for ØMEN: After Dragons.")
app.command("simulate")(simulate_command)  # its options and what it prints: omen_replay/simulate/command.py
out = cast("Console", _Lazy(lambda: _console(file=stdout)))
err = cast("Console", _Lazy(lambda: _console(stderr=True, soft_wrap=True)))  # an error is one line: a path copies


def console(stderr: bool = False) -> Console:
    """The CLI's console itself (standard output's, or with ``stderr`` standard error's), made now: where a proxy
    will not do (a progress bar holds it as a context manager)."""
    made: Console = cast(_Lazy, err if stderr else out).made()
    return made


def _log() -> Any:
    """The CLI's structlog logger."""
    import structlog

    return structlog.get_logger("omen.cli")


STYLE = {"round": "bold", "header": "bold", "roll": "dim", "result": "", "window": "yellow", "note": "cyan",
         "undone": "dim italic"}


class LogFormat(str, Enum):
    """How the CLI writes its own logs (to stderr)."""

    console = "console"
    json = "json"


def configure_logging(fmt: LogFormat, level: str) -> None:
    """Configure structlog for the CLI: human console lines or JSON, to stderr, at ``level``."""
    import logging

    import structlog

    renderer = (structlog.processors.JSONRenderer() if fmt is LogFormat.json
                else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
                    *([structlog.processors.format_exc_info] if fmt is LogFormat.json else []), renderer],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(cast(TextIO, _Stderr())),
        cache_logger_on_first_use=False,
    )


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

    return cast("EventStore", _held(opened(url)))


def open_existing_store(url: str) -> EventStore:
    """:func:`omen_core.store.open_existing_store`, closed when the command ends."""
    from omen_core.store import open_existing_store as opened

    return cast("EventStore", _held(opened(url)))


def open_snapshots(url: str) -> Any:
    """:func:`omen_core.store.open_snapshots`, closed when the command ends."""
    from omen_core.store import open_snapshots as opened

    return _held(opened(url))


def _held(opened: Any) -> Any:
    _OPENED.append(opened)
    return opened


def _close_opened() -> None:
    while _OPENED:
        close = getattr(_OPENED.pop(), "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


def _wrote(what: str, key: str = "") -> None:
    """Note what the command has written (``appended at seq 12 to 15 with head 15:ab12...``): from here on, a
    failure to report it is exit 3 saying so. A later note of the same ``key`` replaces the earlier one (a run
    written further)."""
    _WRITTEN[key or what] = what


def _appended(stored: list[StoredEvent], key: str = "appended") -> None:
    """Note events appended (:func:`_wrote`): from the first seq noted under ``key`` to the head now."""
    if stored:
        last = stored[-1]
        first = _FIRST.setdefault(key, stored[0].seq)
        span = f"seq {first}" if first == last.seq else f"seq {first} to {last.seq}"
        lead = "" if key == "appended" else f"{key}: "
        _wrote(f"{lead}appended at {span} with head {last.seq}:{last.hash}", key)


#: The first seq each note of :func:`_appended` covers.
_FIRST: dict[str, int] = {}


@app.callback()
def _root(
    ctx: typer.Context,
    log_format: Annotated[LogFormat, typer.Option(help="Format of omen's own log lines (stderr).")]
    = LogFormat.console,
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error.")] = "warning",
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print omen's version and exit.")] = False,
) -> None:
    _WRITTEN.clear()
    _FIRST.clear()
    if log_level.lower() not in {"debug", "info", "warning", "error"}:
        _bad_input(f"--log-level must be debug, info, warning or error, not {log_level!r}")
    ctx.call_on_close(_close_opened)
    if not ctx.meta.get("omen.help"):  # a command's help logs nothing: structlog is not even imported
        configure_logging(log_format, log_level)


def _bad_input(message: str, code: int = 2) -> NoReturn:
    """One line on standard error, ``omen: error: ...``, and the exit code: 2 (bad input, nothing written), 1 (a
    lost race), or 3 if the command had written something (the line then says what)."""
    if _WRITTEN:
        message = f"{message}; but the command was done: {'; '.join(_WRITTEN.values())}"
        code = REPORT_LOST
    err.print(f"[bold red]omen: error:[/] {escape(message)}")
    raise typer.Exit(code)


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    """An :class:`~omen_core.errors.OmenError` raised inside is the command's one-line error and exit code."""
    from omen_core.errors import OmenError

    try:
        yield
    except OmenError as exc:
        _guarded(exc)


def _seed_option(seed: str | None) -> bytes | None:
    """The ``--seed`` option as bytes; empty or not hex is bad input (exit 2)."""
    if seed is None:
        return None
    try:
        found = bytes.fromhex(seed)
    except ValueError:
        _bad_input(f"--seed must be hex (two digits a byte), got {seed!r}")
    if not found:
        _bad_input("--seed is empty: give the seed as hex (two digits a byte)")
    return found


def _flush_stdout() -> None:
    """Flush standard output; if it cannot be written (a full disk, a closed pipe), say so: exit 2 (3 if the
    command had written something)."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        _discard_stdout()
        _bad_input(f"cannot write to standard output: {exc.strerror or exc}")


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
    if isinstance(exc, _StdoutFailed):
        _discard_stdout()
        _bad_input(f"cannot write to standard output: {exc.strerror or exc}")
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        _bad_input(f"{where}{exc.strerror or exc}")
    if isinstance(exc, RecursionError):
        _bad_input("the input is nested too deeply")
    if isinstance(exc, MemoryError):
        _bad_input("out of memory: the input is too large")
    _bad_input(f"{type(exc).__name__}: {exc}")


def _guarded(exc: OmenError) -> NoReturn:
    from omen_core.errors import ConcurrencyError

    _log().info("command_failed", error=type(exc).__name__, message=str(exc))
    _bad_input(str(exc), 1 if isinstance(exc, ConcurrencyError) else 2)


def _plain(text: str) -> str:
    """User text for a Rich table cell or title: control characters shown as escapes, markup escaped."""
    return escape(visible(text))


def _print_lines(lines: Iterator[Line]) -> None:
    for line in lines:
        style = STYLE[line.kind]
        text = f"[dim]#{line.seq:<3}[/] " + (f"[{style}]{escape(line.text)}[/]" if style
                                             else escape(line.text))
        out.print(text)


def _store(url: str) -> EventStore:
    """The store ``url`` names (made if need be), read once: a file that is no database is bad input naming it
    (the store's StoreUnavailable)."""
    store = open_store(url)
    store.fights()
    return store


def _open_fight(url: str, fight: str | None) -> tuple[EventStore, str]:
    """The existing store ``url`` names and the fight in it (``fight``, or its only one); bad input otherwise,
    creating nothing."""
    store = open_existing_store(url)
    fights = store.fights()
    if fight is not None:
        if fight not in fights:
            _bad_input(f"no fight {fight!r} in {url} (fights: {', '.join(fights) or 'none'})")
        return store, fight
    if not fights:
        _bad_input(f"{url} holds no fight yet (omen run SCENARIO --log {url} starts one)")
    if len(fights) != 1:
        _bad_input(f"{url} holds {len(fights)} fights ({', '.join(fights)}); choose one with --fight")
    return store, fights[0]


def _report_undos(report: Report) -> None:

    from .verify import PROVENANCE, REROLL

    for u in report.undone:
        state = f"redone at seq {u.redone_at}" if u.redone_at else "still undone"
        why = f" ({u.reason})" if u.reason else ""
        out.print(f"  undo at seq {u.seq}: seq {u.from_seq} to {u.to_seq}{why}, {state}")
    for note in report.notes:
        out.print(f"  [yellow]note:[/] {escape(note)}")
    for f in report.rerolls:
        out.print(f"  [yellow]{REROLL}:[/] {escape(f.what)}")
    for f in report.provenance:
        out.print(f"  [yellow]{PROVENANCE}:[/] seq {f.seq}: {escape(f.what)}")


def _report_text(report: Report) -> None:

    from .verify import PROVENANCE, REROLL

    _report_undos(report)
    head = f"; head {report.head.seq}:{report.head.hash}" if report.head else ""
    if report.clean:
        decided = f"{report.redecided} commands decided again" if report.redecided else "no recorded commands"
        notices = [f"{len(found)} {kind} finding(s) listed above (--strict fails on them)"
                   for kind, found in ((PROVENANCE, report.provenance), (REROLL, report.rerolls)) if found]
        out.print(f"[green]verified[/] fight {report.fight_id!r}: {report.events} events, hash chain "
                  f"intact, {decided}, every total recomputed; {_seeded_words(report)}"
                  + "".join(f"; {n}" for n in notices) + head)
        return
    out.print(f"[red]{len(report.problems)} finding(s)[/] in fight {report.fight_id!r}{head}:")
    for f in report.problems:
        detail = f" (expected {f.expected}, found {f.found})" if f.expected or f.found else ""
        where = f"seq {f.seq}" + (f", line {f.line}" if f.line else "")
        out.print(f"  {where} {escape(f'[{f.rule}]')} {escape(f.what)}{escape(detail)}")


def _seeded_words(report: Report) -> str:
    """What the audit says of the seeded dice."""
    if not report.seeded_dice:
        return "no seeded dice" + (f" ({report.dice} dice)" if report.dice else "")
    if report.seed_revealed and report.seeded_checked == report.seeded_dice:
        return f"{report.seeded_dice} seeded dice all match the revealed seed"
    if report.seed_revealed:
        return (f"{report.seeded_checked} of {report.seeded_dice} seeded dice match the revealed seed (the others "
                "were not drawn under it)")
    return f"{report.seeded_dice} seeded dice not checked: the seed has not been revealed"


@app.command()
def demo(
    log_path: Annotated[Path, typer.Option("--log", help="Where to write the demo's fight log.")]
    = Path("out/demo.jsonl"),
    short: Annotated[bool, typer.Option(help="The short encounter instead: a contest, a check, a save and "
                                             "an attack each way.")] = False,
    fresh_seed: Annotated[bool, typer.Option(help="With --short: roll with a new random seed instead of the "
                                                  "published one.")] = False,
) -> None:
    """Play a whole sample fight with seeded dice (an ambush, four rounds, reactions, an undo), print its
    session log and end state, write the log and verify it."""

    from importlib.resources import files

    from omen_core.dice import SeededDice
    from omen_core.walk import StoreSource

    from .demo import DEMO_SEED, run_demo
    from .narrate import narrate
    from .output import output_file
    from .replay import summarise
    from .scenario import load_scenario, run_scenario
    from .verify import verify_store

    if fresh_seed and not short:
        _bad_input("--fresh-seed goes with --short: the whole fight is a script written for its published seed")
    fight_id = "demo" if short else "ember-ford"
    _clear_demo_log(log_path, fight_id)
    with _refusals():
        store = open_store(str(log_path))
        if short:
            fight = run_demo(store, seed=SeededDice.fresh().seed if fresh_seed else DEMO_SEED)
        else:
            fight = run_scenario(load_scenario(Path(str(files("omen_replay") / "data" / "ember-ford" /
                                                         "scenario.toml"))), store,
                                 snapshots=open_snapshots(str(log_path)))
        records = fight.events
    _wrote(f"the demo's log written to {log_path} ({len(records)} events, head {fight.version}:"
           f"{fight.state.last_hash})")
    _print_lines(iter(narrate(records)))
    out.print()
    if not short:
        _print_state(summarise(fight.state), False)
    _report_text(verify_store(fight.store, fight.fight_id))
    from .render import HtmlWriter, render

    report = log_path.with_suffix(".html")
    with _refusals(), output_file(report, "the session log") as page:
        render(StoreSource(fight.store, fight.fight_id), HtmlWriter(page))
    _wrote(f"its session log written to {report}")
    out.print(f"[dim]log written to {log_path} ({len(records)} events), session log to {report}; check it "
              f"yourself with: omen verify {log_path}  |  omen explain {log_path} SEQ  |  "
              f"omen replay {log_path} --steps[/]")


def _clear_demo_log(log_path: Path, fight_id: str) -> None:
    """Replace an earlier demo log; refuse to touch a file that holds anything else."""
    from omen_core.errors import OmenError

    if not log_path.exists():
        return
    try:
        held = open_store(str(log_path)).fights()
    except OmenError:
        held = ["(unreadable)"]
    if any(f not in ("demo", "ember-ford") for f in held):
        _bad_input(f"{log_path} holds fight {held[0]!r}, not a demo log; choose another --log")
    for extra in (log_path, *(log_path.with_name(log_path.name + side) for side in (".idx", ".lock", ".marks"))):
        extra.unlink(missing_ok=True)
    snapshots = log_path.with_name(log_path.name + ".snapshots")
    if snapshots.is_dir():
        for held_id in held:
            open_snapshots(str(log_path)).delete(held_id)


class SchemaOf(str, Enum):
    """What ``omen schema`` describes."""

    event = "event"
    command = "command"
    options = "options"
    do = "do"
    simulation = "simulation"


@app.command()
def schema(
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file "
                                                "instead of standard output.")] = None,
    of: Annotated[SchemaOf, typer.Option(
        "--of", help="Which schema: a stored event (the envelope and every event type), a command (any "
                     "command, as omen do and a scenario's [[commands]] take it), the options (omen status "
                     "--json), what omen do --json prints, or a simulation's run (omen simulate --json and its "
                     "run file).")] = SchemaOf.event,
) -> None:
    """Print a JSON Schema: of a stored event (the default), a command, the options, omen do's output, or a
    simulation's run."""
    import json

    import msgspec

    from omen_core.commands import Command
    from omen_core.events import event_schema
    from omen_core.options import Options

    from .output import output_file
    from .replay import DoResult

    schemas: dict[str, Any] = {"event": event_schema, "command": lambda: msgspec.json.schema(Command),
                               "options": lambda: msgspec.json.schema(Options),
                               "do": lambda: msgspec.json.schema(DoResult), "simulation": _simulation_schema}
    text = json.dumps(schemas[of.value](), indent=2)
    if output is None:
        stdout.write(text + "\n")
    else:
        with _refusals(), output_file(output, "the schema") as page:
            page.write(text + "\n")
        _wrote(f"the schema written to {output}")


def _simulation_schema() -> Any:
    import msgspec

    from .simulate.run import Run

    return msgspec.json.schema(Run)


@app.command("verify")
def verify_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or "
                                                               "postgresql://....")],
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
    seed: Annotated[str | None, typer.Option(help="Check the dice against this seed (hex) even "
                                                  "if the log has not revealed it.")] = None,
    head: Annotated[list[str] | None, typer.Option("--head", help="A head witnessed earlier, SEQ:HASH (repeatable): "
                                                   "the log must pass through it.")] = None,
    strict: Annotated[bool, typer.Option(help="Exit 1 on undo re-rolls and dice provenance findings too (dice of "
                                              "another source than the fight's, a change of source), not only on "
                                              "integrity findings.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable report (with the head it reached).")]
    = False,
) -> None:
    """Audit a log: chain, order, every command decided again, seed and dice, every derived number.
    Exit 1 on findings, 2 if unreadable."""

    import msgspec

    from .verify import parse_head, verify_store

    seed_bytes = _seed_option(seed)
    with _refusals():
        heads = [parse_head(h) for h in head or ()]
        store, fight_id = _open_fight(log_url, fight)
        report = verify_store(store, fight_id, seed=seed_bytes, heads=heads)
    if as_json:
        stdout.write(msgspec.json.encode(_report_json(report)).decode() + "\n")
    else:
        _report_text(report)
    raise typer.Exit(0 if (report.strict_clean if strict else report.clean) else 1)


def _report_json(report: Report) -> dict[str, object]:
    """The report as JSON, with whether it is clean (no integrity finding) and strictly clean (no finding)."""

    import msgspec

    return {**msgspec.to_builtins(report), "clean": report.clean, "strict_clean": report.strict_clean}


@app.command()
def repair(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log or a directory of them.")],
    fight: Annotated[str | None, typer.Option(help="Which fight, if the directory holds several.")] = None,
) -> None:
    """Move what a crash mid-write left (a torn last line, a command's events cut short) to a side file, so the
    log verifies and can be appended to."""
    from omen_core.errors import TornTail
    from omen_core.store import JsonlStore

    with _refusals():
        store = _store(log_url)
        if not isinstance(store, JsonlStore):
            _bad_input(f"{log_url} is not a JSON Lines log; only those can have a torn tail")
        try:
            fight_id = _open_fight(log_url, fight)[1]
        except TornTail:
            fight_id = fight or Path(log_url).stem  # a log whose only line is torn names no fight
        done = store.repair_log(fight_id)
    if done.side is not None:
        _wrote(f"{log_url} repaired: what a crash left moved to {done.side}")
    if done.side is None:
        out.print(f"nothing to repair: {log_url} ends with a complete command")
        return
    cut = []
    if done.events:
        cut.append(f"{done.events} of the {done.batch_size} events of the command at seq {done.batch}")
    if done.torn_bytes:
        cut.append(f"a torn last line ({done.torn_bytes} bytes)")
    out.print(f"moved {' and '.join(cut)} to {done.side}; {log_url} now ends at its last complete command")


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="A scenario file (TOML).")],
    log_url: Annotated[str, typer.Option("--log", help="Where to write the fight: a .jsonl path, a directory, "
                                                       "sqlite:///path.db, postgresql://... or memory:.")] = "memory:",
    quiet: Annotated[bool, typer.Option(help="Print only the end state, not the narrative.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the end state as JSON.")] = False,
) -> None:
    """Run a scenario: start the fight, join its combatants, play its commands, and write the log."""

    from .narrate import Narrator
    from .replay import summarise
    from .scenario import load_scenario, run_scenario

    with _refusals():
        loaded = load_scenario(scenario)
        _check_log_parent(log_url)
        store = _store(log_url)
        if loaded.settings.id in store.fights():
            _bad_input(f"{log_url} already holds fight {loaded.settings.id!r}; choose another --log "
                       "or remove the old one")
        narrator = Narrator()
        loud = not (quiet or as_json)

        def tell(stored: list[StoredEvent]) -> None:
            _appended(stored, f"fight {loaded.settings.id!r} written to {log_url}")
            if loud:
                _print_lines(narrator.lines(stored))

        fight = run_scenario(loaded, store, on_step=lambda step, stored: tell(stored), on_start=tell,
                             snapshots=open_snapshots(log_url))
    records = fight.events
    _print_state(summarise(fight.state), as_json)
    if not as_json:
        out.print(f"[dim]{len(records)} events written to {log_url}[/]")


def _check_log_parent(url: str) -> None:
    """Bad input if the log ``url`` names would go in a directory that does not exist: ``run`` does not make
    directory trees (a path ending in '/' names a directory of logs, made if its parent exists)."""

    from .output import check_parent

    where = _log_location(url)
    if where is not None:
        check_parent(where, "the fight's log")


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


@app.command("replay")
def replay_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
    to: Annotated[int | None, typer.Option("--to", help="Stop after the event with this seq.")] = None,
    steps: Annotated[bool, typer.Option("--steps", help="Step through: each event, then who stands how.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the state as JSON (with --steps: one line "
                                                         "per event).")] = False,
) -> None:
    """Rebuild a fight's state from its log (at the end, or at --to SEQ) and print it, or step through it."""

    from omen_core.walk import StoreSource
    from omen_core.walk import step_through as walk_steps

    from .replay import replay_store, summarise

    with _refusals():
        store, fight_id = _open_fight(log_url, fight)
        last = store.version(fight_id)
        if to is not None and not 0 <= to <= last:
            _bad_input(f"{log_url}: --to {to} is outside the log (seq 1 to {last})")
        if steps:
            _print_steps(walk_steps(StoreSource(store, fight_id), to_seq=to), as_json)
            return
        snapshots = open_snapshots(log_url)
        state = replay_store(store, fight_id, to, snapshots if snapshots.seqs(fight_id) else None)
    _print_state(summarise(state), as_json)


def _print_steps(steps: Iterator[Step], as_json: bool) -> None:
    """Each event, its narrative, and the resources after it (undone events marked, state unmoved)."""
    import json

    import msgspec

    from .narrate import Narrator
    from .replay import summarise

    narrator = Narrator()
    for step in steps:
        rec, state, undone = step.rec, step.after, step.voided
        if as_json:
            line = {"seq": rec.seq, "type": type(rec.event).__struct_config__.tag, "undone": undone,
                    "state": msgspec.to_builtins(summarise(state))}
            stdout.write(json.dumps(line) + "\n")
            continue
        _print_lines(narrator.tell(rec, undone))
        hp = "  ".join(f"{c.sheet.name} {c.hp}/{c.sheet.hp}" for c in state.combatants.values())
        where = f"{state.phase.value}" + (f", round {state.round}" if state.round else "") + \
            (f", {state.step.value}" if not state.at_rest else "")
        out.print(f"[dim]      \u2514 {escape(where)} | {escape(hp)}[/]")


@app.command("explain")
def explain_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    seq: Annotated[int, typer.Argument(help="The seq of a roll, an attack (any of its events), a save or a check.")],
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
    seed: Annotated[str | None, typer.Option(help="Check seeded dice against this seed (hex).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable explanation.")] = False,
) -> None:
    """Explain a roll, an attack, a save or a check: every die, every bonus and its source, every rule."""

    import msgspec

    from omen_core.walk import StoreSource

    from .explain import explain

    seed_bytes = _seed_option(seed)
    with _refusals():
        store, fight_id = _open_fight(log_url, fight)
        found = explain(StoreSource(store, fight_id), seq, seed_bytes)
    if as_json:
        stdout.write(msgspec.json.encode(found).decode() + "\n")
        return
    out.print(f"[bold]{escape(found.title)}[/]  [dim](seq {found.seq})[/]")
    for die in found.dice:
        check = {True: " [green]seed confirms[/]", False: " [red]seed DISAGREES[/]", None: ""}[die.seed_confirms]
        out.print(f"  die: roll at seq {die.seq} ({die.purpose}) by {die.roller}: {die.pool} "
                  f"d{die.sides} = {die.face} [{escape(die.source)}]{check}")
    for part in found.parts:
        out.print(f"  [bold]{escape(part.name)}[/] = {part.total}  [dim]({escape(part.rule)})[/]")
        for term in part.terms:
            out.print(f"      {term.value:+d}  {escape(term.label)}  [dim]{escape(term.source)}[/]")
    for verdict in found.verdicts:
        out.print(f"  \u2192 {escape(verdict)}")
    out.print(f"  [dim]dice: {escape(found.seed)}[/]")


class LogFormatOut(str, Enum):
    """Session log formats."""

    text = "text"
    md = "md"
    html = "html"


@app.command("log")
def log_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    fmt: Annotated[LogFormatOut, typer.Option("--format", help="text, md (Markdown) or html (one self-contained "
                                                              "page: a card per action, round summaries, HP and "
                                                              "Will charts by round).")] = LogFormatOut.text,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file instead of standard "
                                                                      "output.")] = None,
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
) -> None:
    """Write a fight's session log: a card per action (rolls, defense, hit, damage, resources), a summary at each
    round's start, every event by seq, undone actions struck through, and the ending."""

    from omen_core.walk import StoreSource

    from .output import output_file
    from .render import WRITERS, render

    with _refusals():
        store, fight_id = _open_fight(log_url, fight)
        if output is None:
            render(StoreSource(store, fight_id), WRITERS[fmt.value](stdout))
            return
        with output_file(output, "the session log") as page:
            render(StoreSource(store, fight_id), WRITERS[fmt.value](page))
    _wrote(f"the session log written to {output}")
    out.print(f"session log written to {output}")


@app.command()
def snapshot(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
    clear: Annotated[bool, typer.Option(help="Delete the fight's snapshots instead (they are only a cache).")]
    = False,
) -> None:
    """Take a snapshot of the fight's state now (a cache beside the log that speeds up replay --to and undo)."""
    from omen_core import Fight

    with _refusals():
        store, fight_id = _open_fight(log_url, fight)
        snapshots = open_snapshots(log_url)
        if clear:
            snapshots.delete(fight_id)
            _wrote(f"the snapshots of {fight_id!r} deleted")
            out.print(f"deleted the snapshots of {fight_id!r}; nothing else changes")
            return
        live = Fight.load(store, fight_id, snapshots=snapshots)
        live.snapshot()
        _wrote(f"snapshot of {fight_id!r} at seq {live.version} saved")
    out.print(f"snapshot of {fight_id!r} at seq {live.version} saved")


def _describe_roll(roll: DiceRoll) -> str:
    dice = " + ".join(f"{d.pool} d{d.sides}" for d in roll.dice)
    return f"{roll.roller}'s {roll.purpose.replace('_', ' ')} ({dice})"


def _print_where(found: Options) -> None:
    """Where the fight stands and what it waits for, in two or three lines."""
    where = f"{found.phase}" + (f", round {found.round}" if found.round else "") + \
        (f", {found.turn}'s turn" if found.turn else "")
    out.print(f"[bold]{escape(found.fight_id)}[/] at seq {found.seq}: {escape(where)}; {found.dice} dice")
    if found.waiting is not None:
        w = found.waiting
        who = f"waiting for {', '.join(w.who)}" if w.who else "waiting"
        out.print(f"[yellow]{escape(who)}: {escape(w.title)} ({escape(w.rule)}), answer with "
                  f"{escape(' or '.join(w.answers))}; costs {escape(w.cost)}[/]")
    gone = [f"{b.who} ({b.left})" for b in found.combatants if b.left is not None]
    if gone:
        out.print(f"out of the fight (C33): {escape(', '.join(gone))}")


def _print_options(found: Options, as_json: bool) -> None:
    """What the fight waits for and who may do what, as ``omen status`` prints it."""
    import msgspec

    from .status import odds_summary

    if as_json:
        stdout.write(msgspec.json.encode(found).decode() + "\n")
        return
    _print_where(found)
    by_actor: dict[str | None, list[Offer]] = {}
    for offer in found.offers:
        by_actor.setdefault(offer.actor, []).append(offer)
    for actor, offers in by_actor.items():
        out.print(f"  [bold]{escape(actor or 'the GM')}[/]:")
        for offer in offers:
            shown = _choice_summary(offer)
            out.print(f"    {escape(offer.command)} [dim]({escape(offer.cost)}; {escape(offer.rule)})[/]"
                      + (f" {escape(shown)}" if shown else ""))
            for line in [*_dice_summary(offer), *odds_summary(offer)]:
                out.print(f"      [dim]{escape(line)}[/]")
    out.print(f"head {found.head}")


def _dice_summary(offer: Offer) -> list[str]:
    """The dice an offer's choices roll: one line if they all roll the same, else one per distinct set (up to
    four), each with the first choice that rolls it."""
    seen: dict[str, dict[str, Any]] = {}
    for choice in offer.choices:
        text = "; ".join(_describe_roll(r) for r in choice.dice)
        if choice.may_roll:
            text += ("; " if text else "") + "maybe " + "; ".join(_describe_roll(r) for r in choice.may_roll)
        seen.setdefault(text, choice.args)
    if len(seen) == 1:
        text = next(iter(seen))
        return [f"dice: {text}"] if text else []
    lines = [f"dice ({_short_args(args)}): {text or 'none'}" for text, args in list(seen.items())[:4]]
    return lines + (["dice: more, by choice (omen status --json lists each)"] if len(seen) > 4 else [])


def _short_args(args: dict[str, Any]) -> str:
    """A choice's arguments in a few words (``defense=dodge``, JSON for anything but text), the actor's own fields
    left out."""
    import json

    shown = [f"{k}={v if isinstance(v, str) else json.dumps(v, separators=(',', ':'))}" for k, v in args.items()
             if k not in ("who", "attacker", "defender", "caller", "effect")]
    return ", ".join(shown) or "as shown"


def _choice_summary(offer: Offer) -> str:
    """The arguments an offer's choices vary, each with its values: ``target: bo | kael; weapon: axe``."""
    import json

    values: dict[str, list[str]] = {}
    keys = {key for choice in offer.choices for key in choice.args}
    for choice in offer.choices:
        for key in sorted(keys - set(choice.args)):  # left out: the field's default
            if key != "effect" and "(default)" not in values.setdefault(key, []):
                values[key].append("(default)")
        for key, value in choice.args.items():
            if key == "effect" or (key in ("attacker", "who", "defender", "caller") and value == offer.actor):
                continue
            shown = (value.get("skill") or value.get("attribute") or json.dumps(value)) if isinstance(value, dict) \
                else value
            text = json.dumps(shown) if not isinstance(shown, str) else shown
            values.setdefault(key, [])
            if text not in values[key]:
                values[key].append(text)
    return "; ".join(f"{k}: {' | '.join(v[:10])}{' | ...' if len(v) > 10 else ''}" for k, v in values.items())


@app.command()
def status(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The options as JSON (the Options schema: omen schema "
                                                         "--of options).")] = False,
    every: Annotated[bool, typer.Option("--all", help="Every command each actor may give now, with its legal "
                                                      "arguments and dice.")] = False,
    seed: Annotated[str | None, typer.Option(help="The seed of a seeded fight (hex), so that the next: commands "
                                                  "roll with it (OMEN_SEED in the environment does too, unprinted)."
                                             )] = None,
) -> None:
    """Where the fight is, whose turn, what it waits for, each combatant in a line, and the omen do commands of the
    likely choices, ready to paste (--all: every command accepted now; --json: the options)."""
    from rich.markup import escape

    from omen_core import Fight

    from .status import SeedKnown, published_seed, status_lines

    given = _seed_option(seed)
    with _refusals():
        store, fight_id = _open_fight(log_url, fight)
        live = Fight.load(store, fight_id, snapshots=open_snapshots(log_url))
        found = live.options()
    if as_json or every:
        _print_options(found, as_json)
        return
    from omen_core.dice import commitment

    state = live.state
    known: SeedKnown | None = None
    env = os.environ.get("OMEN_SEED", "").strip()
    if given is not None or env:
        raw = given if given is not None else _seed_option(env)
        assert raw is not None
        if state.seed_commitment != commitment(raw):
            _bad_input(f"{log_url}: the seed given ({'--seed' if given is not None else 'OMEN_SEED'}) does not hash "
                       f"to the seed commitment of fight {fight_id!r}")
        known = SeedKnown(raw.hex(), printed=given is not None)
    elif state.revealed_seed:
        known = SeedKnown(state.revealed_seed, printed=True)
    elif (public := published_seed(state.seed_commitment)) is not None:
        known = SeedKnown(public.hex(), printed=True)
    for line in status_lines(found, state, log_url, known):
        out.print(escape(line), soft_wrap=True)


def _parse_command(text: str, origin: str) -> Command:
    """A command given as JSON (an object) or TOML (a table with ``command = "..."``); errors name the field."""
    from omen_core.commands import Command
    from omen_core.content import decode_content
    from omen_core.errors import BadInput, ContentError, OmenError

    fmt: Literal["json", "toml"] = "json" if text.lstrip().startswith("{") else "toml"
    try:
        return decode_content(text, Command, source=origin, fmt=fmt)  # type: ignore[arg-type]
    except ContentError as exc:
        if exc.path == "$.command" or "`command`" in exc.reason:  # a name mistyped or left out: say the names
            from typing import get_args

            names = sorted(str(kind.__struct_config__.tag) for kind in get_args(Command))
            raise ContentError(exc.source, exc.path, f"{exc.reason}; a command is one of: {', '.join(names)}",
                               exc.line) from None
        raise
    except OmenError:
        raise
    except Exception as exc:
        raise BadInput(f"{origin}: not a command: {exc}") from None


@app.command("do")
def do_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    command: Annotated[str | None, typer.Argument(help="The command, as JSON ('{\"command\": \"end_turn\", "
                                                       "\"who\": \"vesh\"}') or TOML ('command = \"end_turn\"' "
                                                       "and its fields); faces in its dice field.")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read the command from this file (.json or "
                                                                   ".toml).")] = None,
    seed: Annotated[str | None, typer.Option(envvar="OMEN_SEED", show_envvar=True,
                                             help="The seed of a seeded fight (hex), to roll its dice, or the "
                                                  "seed reveal_seed reveals; or give the faces in the command.")
                                             ] = None,
    next_seed: Annotated[str | None, typer.Option(
        "--next-seed", help="For reveal_seed in a fight that goes on: the fresh seed (hex, at least 16 bytes) the "
                            "dice are drawn from next (C42); by default a random one, printed on standard error "
                            "once.")] = None,
    by: Annotated[str, typer.Option(help="Who gives the command, for the record.")] = "",
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
    idempotency_key: Annotated[str | None, typer.Option(
        "--idempotency-key", help="A key for this command, recorded with it: run again with the same key (after "
                                  "exit 3, or when unsure whether it went through), the command is found done and "
                                  "not done twice.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored events and the options as JSON.")]
    = False,
    show_options: Annotated[bool, typer.Option("--options", help="Also list every command each actor may give "
                                                                 "now (what omen status prints).")] = False,
) -> None:
    """Give one command to a stored fight: append what it produces, tell it, and say what the fight waits for
    next and the new head. Refused, it writes nothing (exit 2)."""
    import msgspec

    from omen_core import Fight, ManualDice, SeededDice
    from omen_core.commands import RevealSeed
    from omen_core.dice import FacesNeeded

    from .narrate import Narrator
    from .replay import DoResult

    seed_bytes = _seed_option(seed)
    following = _seed_option(next_seed)
    if following is not None and len(following) < 16:
        _bad_input("--next-seed: a dice seed is at least 16 bytes of hex")
    with _refusals():
        parsed = _given_command(command, file)
        if idempotency_key is not None:
            parsed = _validated_key(parsed, idempotency_key)
        if isinstance(parsed, RevealSeed) and not parsed.seed:
            if seed_bytes is None:
                _bad_input("reveal_seed needs the seed: give it in the command (\"seed\": \"<hex>\") or with "
                           "--seed HEX")
            parsed = msgspec.structs.replace(parsed, seed=seed_bytes.hex())
        store, fight_id = _open_fight(log_url, fight)
        done = _done_before(store, fight_id, parsed, by)
        dice = SeededDice(seed_bytes, successors=[following] if following else ()) if seed_bytes is not None \
            else ManualDice()
        live = Fight.load(store, fight_id, dice=dice, snapshots=open_snapshots(log_url))
        if done:
            stored, before = done, live.state_after(done[0].seq - 1)
        else:
            if seed_bytes is not None and live.state.seed_commitment != dice.commitment:  # type: ignore[union-attr]
                _bad_input(f"{log_url}: --seed does not hash to the seed commitment of fight {fight_id!r}")
            if seed_bytes is None and live.state.dice == "seeded" and parsed.dice is None:
                live.dice = ManualDice()
            before = live.state
            try:
                stored = live.execute(parsed, by=by)
            except FacesNeeded as exc:
                if live.state.dice == "seeded" and seed_bytes is None:
                    _bad_input(f"{exc} (or give --seed HEX to roll this seeded fight's own dice)")
                raise
            _appended(stored)
            _say_fresh_seed(live, dice, following is None)
        found = live.options(offers=as_json or show_options)
    if as_json:
        stdout.write(msgspec.json.encode(DoResult(events=tuple(stored), options=found,
                                                  already_done=bool(done))).decode() + "\n")
        return
    if done:
        out.print(f"[yellow]already done:[/] the command with idempotency key {escape(repr(parsed.idempotency_key))} "
                  f"was appended at seq {stored[0].seq} to {stored[-1].seq}; nothing appended now")
    _print_lines(Narrator(state=before).lines(stored))
    if show_options:
        _print_options(found, False)
        return
    _print_where(found)
    out.print(f"head {found.head}  [dim](omen status {escape(log_url)} lists every command accepted now)[/]")


def _say_fresh_seed(live: Any, dice: Any, made_here: bool) -> None:
    """After a reveal in a fight that goes on (C42): the fight's dice now come from a fresh seed; one made here
    is said once, on standard error (it is as secret as the first: the log holds only its commitment)."""
    if live.dice is dice or not hasattr(live.dice, "seed"):
        return
    shown = live.dice.seed.hex() if made_here else "the one given with --next-seed"
    _say(f"omen: the seed revealed is spent (C42): this fight's dice now come from a fresh seed, committed to at "
         f"seq {live.version}: {shown}. Keep it secret; give it as --seed (or OMEN_SEED) from now on.")


def _given_command(command: str | None, file: Path | None) -> Command:
    """The command given as an argument or in a file (exactly one of the two)."""
    if (command is None) == (file is None):
        _bad_input("give the command as an argument or with --file, not both or neither")
    if file is not None:
        from omen_core.content import read_content

        return _parse_command(read_content(file, MAX_COMMAND_BYTES), str(file))
    assert command is not None
    if len(command.encode("utf-8", "surrogatepass")) > MAX_COMMAND_BYTES:
        _bad_input("the command is larger than 1 MiB, the most a command may be")
    return _parse_command(command, "the command")


def _validated_key(parsed: Command, key: str) -> Command:
    """``parsed`` carrying idempotency key ``key`` (checked as a command's field is); a command that carries
    another key already is bad input."""
    import msgspec

    if parsed.idempotency_key not in (None, key):
        _bad_input(f"--idempotency-key {key!r} and the command's own idempotency_key "
                   f"{parsed.idempotency_key!r} differ")
    return _parse_command(msgspec.json.encode(msgspec.structs.replace(parsed, idempotency_key=key)).decode(),
                          "--idempotency-key")


def _done_before(store: EventStore, fight_id: str, parsed: Command, by: str) -> list[StoredEvent]:
    """The batch an earlier run appended for this command, if it carries an idempotency key already recorded:
    the same command (and the same ``by``) is done already; another command under that key is bad input."""
    from omen_core.events import CommandIssued
    from omen_core.walk import StoreSource, keyed_batch

    key = parsed.idempotency_key
    if key is None:
        return []
    batch = keyed_batch(StoreSource(store, fight_id), key)
    if not batch:
        return []
    first = batch[0]
    assert isinstance(first.event, CommandIssued)
    if first.event.command != parsed or first.event.by != by:
        _bad_input(f"idempotency key {key!r} was given to another command at seq {first.seq} "
                   f"({type(first.event.command).__struct_config__.tag}): a key names one command")
    return batch


@app.command()
def undo(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    to: Annotated[int | None, typer.Option("--to", help="Undo everything from this seq on (a command's first "
                                                        "event, with no action in progress before it).")] = None,
    reason: Annotated[str, typer.Option(help="Why, for the record.")] = "",
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
) -> None:
    """Undo the last command (or back to --to SEQ) by appending an event that voids it; nothing is erased. An
    undo goes back to a point with no action in progress: mid-action, to the action's declaration."""

    from omen_core import Fight

    from .replay import summarise

    with _refusals():
        store, fight_id = _open_fight(log_url, fight)
        live = Fight.load(store, fight_id, snapshots=open_snapshots(log_url))
        first = live.version + 1
        done = live.undo(to, reason)
        _wrote(f"the undo appended at seq {first} to {live.version} with head {live.version}:{live.state.last_hash}")
    out.print(f"undone: seq {done.from_seq} to {done.to_seq}, back to the command at seq {done.from_seq} "
              f"(recorded at seq {live.version}; `omen redo {log_url}` takes it back)")
    _print_state(summarise(live.state), False)


@app.command()
def redo(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log, a directory, sqlite:///path.db or postgresql://....")],
    reason: Annotated[str, typer.Option(help="Why, for the record.")] = "",
    fight: Annotated[str | None, typer.Option(help="Which fight, if the store holds several.")] = None,
) -> None:
    """Take back the last undo, if nothing has been done since."""

    from omen_core import Fight

    from .replay import summarise

    with _refusals():
        store, fight_id = _open_fight(log_url, fight)
        live = Fight.load(store, fight_id, snapshots=open_snapshots(log_url))
        first = live.version + 1
        done = live.redo(reason)
        _wrote(f"the redo appended at seq {first} to {live.version} with head {live.version}:{live.state.last_hash}")
    out.print(f"redone: the undo at seq {done.undo_seq} no longer applies")
    _print_state(summarise(live.state), False)


@app.command()
def serve(
    ctx: typer.Context,
    store: Annotated[str, typer.Option(help="The event store: a .jsonl file or directory, sqlite:///path.db, "
                                            "postgresql://user@host/db, or memory:.")] = "sqlite:///omen.db",
    host: Annotated[str, typer.Option(help="The address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="The TCP port.")] = 8000,
    keep: Annotated[str | None, typer.Option(help="The server's own database (token hashes, seeds, idempotent "
                                                  "answers); default: beside the store.")] = None,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Server processes sharing the port, the store and "
                                                            "the keep (not with a memory store).")] = 1,
    create_token: Annotated[str | None, typer.Option(envvar="OMEN_CREATE_TOKEN", show_envvar=True,
                                                     help="The token creating a fight needs (default: one made up "
                                                          "at start, in the set-up link printed).")] = None,
) -> None:
    """Serve fights over HTTP: create fights, make seats, read their options, give commands, follow the live
    stream (docs/server.md)."""

    from omen_core.errors import BadInput
    from omen_server.guard import new_create_token
    from omen_server.keep import PostgresKeep
    from omen_server.serve import default_keep, run, run_workers, server_keep, server_store, setup_link

    keep_path = keep or default_keep(store)
    if workers > 1 and (store in {"memory:", "sqlite::memory:"} or keep_path == ":memory:"):
        _guarded(BadInput(f"--workers {workers}: each worker would hold its own memory store; serve a store and "
                          "a keep on disk (sqlite:///omen.db) to share them"))
    with _refusals():
        opened = _held(server_store(store))
        opened.fights()
        kept = server_keep(opened, keep, default_keep(store))
    if isinstance(kept, PostgresKeep):
        keep_path = f"{kept.path} (its keep_* tables)"
    many = f", {workers} worker processes" if workers > 1 else ""
    token = create_token or new_create_token()
    out.print(f"omen serve: fights of {store} (the keep: {keep_path}{many}); open {setup_link(host, port, token)} "
              "to set up a fight; Ctrl-C stops", soft_wrap=True)
    if workers > 1:
        kept.close()
        parent = ctx.find_root().params
        run_workers(store, keep or ("" if isinstance(kept, PostgresKeep) else keep_path), workers, host, port,
                    create_token=token, log=f"{parent['log_format'].value}:{parent['log_level']}")
    else:
        run(opened, kept, host, port, create_token=token)


@app.command("copy")
def copy_cmd(
    src_url: Annotated[str, typer.Argument(metavar="SRC", help="The store to copy from: a .jsonl log, a directory, "
                                                                "sqlite:///path.db or postgresql://....")],
    dst_url: Annotated[str, typer.Argument(metavar="DST", help="The store to copy to (made if need be).")],
    fight: Annotated[str | None, typer.Option(help="Copy this fight only (default: every fight of SRC).")] = None,
) -> None:
    """Copy fights between stores, every line byte for byte, the chain checked: a fight already in DST is
    completed if it is a prefix of SRC's (nothing to do if it is all there), refused (exit 2) if it differs."""
    from .copy import copy_fights

    with _refusals():
        src = open_existing_store(src_url)
        fights = [fight] if fight is not None else src.fights()
        if fight is not None and fight not in src.fights():
            _bad_input(f"no fight {fight!r} in {src_url} (fights: {', '.join(src.fights()) or 'none'})")
        if not fights:
            _bad_input(f"{src_url} holds no fight to copy")
        _check_log_parent(dst_url)
        done = copy_fights(src, _store(dst_url), fights)
    if any(c.added for c in done):
        _wrote(f"copied to {dst_url}: " + ", ".join(f"{c.fight_id} seqs {c.had + 1}-{c.had + c.added}" for c in done
                                                    if c.added))
    for c in done:
        if not c.added:
            out.print(f"{c.fight_id}: already in {escape(dst_url)}, identical ({c.had} events)")
        elif c.had:
            out.print(f"{c.fight_id}: {c.added} events copied after the {c.had} already there (seqs {c.had + 1}-"
                      f"{c.had + c.added})")
        else:
            out.print(f"{c.fight_id}: {c.added} event{'s' if c.added != 1 else ''} copied")


db_app = typer.Typer(no_args_is_help=True, help="The tables of a database store (PostgreSQL, SQLite).")
app.add_typer(db_app, name="db")


@db_app.command("init")
def db_init(
    url: Annotated[str, typer.Argument(help="postgresql://user@host/db (or sqlite:///path.db).")],
) -> None:
    """Create omen's tables in the database, or upgrade them to this omen's schema version (what first use
    does too); an up-to-date database is left as it is."""
    from omen_core.store.postgres import SCHEMA_VERSION, PostgresDatabase, is_postgres_url

    with _refusals():
        if is_postgres_url(url):
            db = PostgresDatabase(url)
            db.close()
            found = db.version_found
            if found != SCHEMA_VERSION:
                _wrote(f"omen's tables made or upgraded in {db.location} (schema version {SCHEMA_VERSION})")
            if found == SCHEMA_VERSION:
                out.print(f"{escape(db.location)}: omen's tables are at schema version {SCHEMA_VERSION}; "
                          "nothing to do")
            else:
                applied = ", ".join(str(v) for v in range(found + 1, SCHEMA_VERSION + 1))
                out.print(f"{escape(db.location)}: omen's tables are at schema version {SCHEMA_VERSION} "
                          f"({'created' if found == 0 else f'upgraded from {found}'}: applied {applied})")
        elif url.startswith("sqlite:") and url != "sqlite::memory:":
            _check_log_parent(url)
            _store(url)
            _wrote(f"omen's tables ready in {url}")
            out.print(f"{escape(url)}: omen's tables are ready")
        else:
            _bad_input(f"omen db init makes the tables of a database: give a postgresql:// or sqlite:/// URL, "
                       f"not {url!r} (JSON Lines files are made when a fight is first written)")


def _print_state(summary: StateSummary, as_json: bool) -> None:

    import msgspec

    if as_json:
        stdout.write(msgspec.json.encode(summary).decode() + "\n")
        return
    from rich.table import Table

    where = f"round {summary.round}, {summary.turn}'s turn" if summary.turn else f"round {summary.round}"
    status = (f"ended: {summary.end_reason}" + (f" ({summary.end_side})" if summary.end_side else "")
              if summary.ended else f"{summary.phase}, {where}")
    table = Table(title=_plain(f"{summary.title or summary.fight_id} at seq {summary.seq}: {status}"))
    for column in ("combatant", "side", "HP", "Will", "Bonus Actions", "conditions"):
        table.add_column(column)
    for c in summary.combatants:
        conditions = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in c.conditions.items()) or "-"
        if c.left is not None:
            conditions = f"out of the fight: {c.left} (C33)" + (f"; {conditions}" if conditions != "-" else "")
        table.add_row(_plain(c.name), _plain(c.side), f"{c.hp}/{c.hp_max}", f"{c.will}/{c.will_max}",
                      str(c.bonus_actions), _plain(conditions))
    out.print(table)
    if summary.initiative_order:
        out.print(f"initiative order: {escape(', '.join(summary.initiative_order))}")
    head = f"{summary.seq}:{summary.hash}"
    out.print(f"head {head}  [dim](witness it: omen verify LOG --head {head})[/]")


fixtures_app = typer.Typer(no_args_is_help=True, help="Golden fixtures: recorded fights replayed under the "
                                                        "current rules.")
app.add_typer(fixtures_app, name="fixtures")


@fixtures_app.command("check")
def fixtures_check(
    root: Annotated[Path, typer.Option("--dir", help="Where the fixtures are.")] = Path("fixtures"),
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable results.")] = False,
) -> None:
    """Replay and verify every fixture; on a mismatch, print the first divergence. Exit 1 if any fails."""

    import msgspec

    from .fixtures import check, fixture_dirs

    dirs = fixture_dirs(root)
    if not dirs:
        _bad_input(f"no fixtures (directories with a scenario.toml) under {root}")
    results = [check(d) for d in dirs]
    if as_json:
        stdout.write(msgspec.json.encode(results).decode() + "\n")
    for r in [] if as_json else results:
        if r.ok:
            out.print(f"[green]ok[/]   {r.name} ({r.events} events)")
            continue
        out.print(f"[red]FAIL[/] {r.name}")
        if r.divergence is not None:
            d = r.divergence
            out.print(f"       first divergence at seq {d.seq}, {escape(d.field)}: expected {escape(d.expected)}, "
                      f"got {escape(d.got)}")
        for problem in r.problems:
            out.print(f"       {escape(problem)}")
    raise typer.Exit(0 if all(r.ok for r in results) else 1)


@fixtures_app.command("record")
def fixtures_record(
    name: Annotated[str, typer.Argument(help="The fixture's directory name.")],
    root: Annotated[Path, typer.Option("--dir", help="Where the fixtures are.")] = Path("fixtures"),
) -> None:
    """Re-record one fixture under the current rules and show what changed."""
    from .fixtures import record

    directory = root / name
    if not (directory / "scenario.toml").exists():
        _bad_input(f"no fixture {name!r}: {directory / 'scenario.toml'} does not exist")
    with _refusals():
        change, count = record(directory)
    _wrote(f"fixture {name} recorded ({count} events)")
    if change is None:
        out.print(f"recorded {name}: {count} events (unchanged, or new)")
    else:
        out.print(f"recorded {name}: {count} events; changed from seq {change.seq}, {escape(change.field)}: "
                  f"was {escape(change.expected)}, now {escape(change.got)}")


def main() -> None:
    """Console-script entry point: an error that escapes even the command group (``--version`` to a full disk,
    while the options are parsed) is a short message too, exit 2."""
    try:
        app()
    except _last_resort_types() as exc:
        try:
            _last_resort(exc)
        except typer.Exit as done:
            sys.exit(done.exit_code)
