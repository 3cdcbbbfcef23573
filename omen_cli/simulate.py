"""``omen simulate``: the command line of the simulator (run, compare, play a fight of a run again).

Its options are declared here; what it does is in :mod:`omen_replay.simulate` (the run, the summary, the page).
The heavy imports wait until the command runs, so that ``omen`` starts as fast without it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .app import INTERRUPT_NOTE, appended, bad_input, check_log_parent, guarded, say, seed_option, store_at, wrote
from .console import console, err, escape, out, plain, stdout, unwrapped, visible

if TYPE_CHECKING:
    from omen_replay.simulate.encounter import Encounter
    from omen_replay.simulate.play import FightRecord, Rules
    from omen_replay.simulate.run import Run

__all__ = ["simulate_command"]

#: The most fights a run plays unless --max-fights says otherwise.
_DEFAULT_MAX_FIGHTS = 1_000_000

#: What a usage error ends with, as typer's own do (a count that is no number): where the options are told.
_USAGE = " (see 'omen simulate --help')"


class HpShown(str, Enum):
    """How the players' seats see the HP of combatants they do not own (docs/server.md)."""

    exact = "exact"
    banded = "banded"
    hidden = "hidden"


def simulate_command(
    encounter: Annotated[Path | None, typer.Argument(
        metavar="ENCOUNTER", help="The encounter: a scenario file's set-up (docs/simulate.md).")] = None,
    fights: Annotated[int | None, typer.Option(
        metavar="N", help="How many fights (default 1000, unless --until-ci; at most --max-fights).")] = None,
    until_ci: Annotated[float | None, typer.Option(
        "--until-ci", metavar="HALF_WIDTH", help="Run until the half-width of every rate's 95\u00a0% interval is "
                                                 "under this (0.01: within ± one point), deciding on whole batches "
                                                 "in index order.")] = None,
    max_fights: Annotated[int | None, typer.Option(
        metavar="N", help="The most fights the run plays: --fights may not ask for more, and --until-ci stops here "
                          "whatever the intervals (default 1,000,000; at most 10,000,000).")] = None,
    policy: Annotated[list[str] | None, typer.Option(
        metavar="SIDE=NAME", help="A side's policy: random, aggressive, cautious, module:attribute or "
                                  "path/to/file.py:attribute; repeat per side. Default: aggressive.")] = None,
    seed: Annotated[str | None, typer.Option(
        metavar="HEX", help="The run's seed, in hex (default: a fresh random one, recorded in the run).")] = None,
    workers: Annotated[int | None, typer.Option(
        metavar="N", help="Local worker processes (default: one per core; 1 runs every fight in this process; at "
                          "most 4 per core).")]
    = None,
    dask: Annotated[str | None, typer.Option(
        metavar="ADDRESS", help="Run on a Dask cluster: a scheduler's address (tcp://host:8786), or local:N for a "
                                "local cluster of N worker processes. A scheduler with no worker is waited on 30 s at "
                                "most. Needs omen[dask].")] = None,
    batch: Annotated[int | None, typer.Option(metavar="N", help="Fights per task (and per --until-ci decision; "
                                                                 "default 100).")] = None,
    max_rounds: Annotated[int | None, typer.Option(
        metavar="N", help="A fight with no side down at the end of this many rounds ends as a draw (1 to "
                          "1,000; default 50).")] = None,
    hp_display: Annotated[HpShown | None, typer.Option(
        metavar="SHOWN", help="exact, banded or hidden: how the players' seats (and so the policies) see HP they do "
                              "not own (default banded).")] = None,
    out_path: Annotated[Path | None, typer.Option(
        "--out", metavar="FILE", help="Where to write the run (manifest, summaries, a record per fight); default "
                                      "out/simulations/ID-SEED-SETTINGS.json (A-vs-B-... for --compare; "
                                      "SETTINGS: 8 hex digits of the run's settings). A file holding another run "
                                      "is never overwritten.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run as JSON (the simulation schema of omen "
                                                         "schema --of simulation); no progress bar.")] = False,
    html: Annotated[Path | None, typer.Option(
        metavar="PAGE", help="Also write the report as one HTML page, and beside it (PAGE-fights/) the session log "
                             "of each fight it links (an earlier run's fight-N.html there removed).")] = None,
    compare: Annotated[tuple[Path, Path] | None, typer.Option(
        metavar="A B", help="Run two encounters (A.toml B.toml, instead of ENCOUNTER) on the same seeds and "
                            "compare them (paired and unpaired).")] = None,
    replay: Annotated[tuple[Path, int] | None, typer.Option(
        metavar="RUN INDEX", help="Play fight INDEX of the run in RUN (its .json file) again, into --log, and "
                                  "verify it.")] = None,
    log_url: Annotated[str | None, typer.Option(
        "--log", metavar="LOG", help="With --replay: where to write the fight's log.")] = None,
    which: Annotated[str | None, typer.Option("--encounter", metavar="A|B",
                                              help="With --replay of a comparison: A or B.")]
    = None,
) -> None:
    """Simulate an encounter many times on the real engine (policies choosing among the legal commands), report who
    wins with intervals, and play any of its fights again in full."""
    from omen_replay.simulate.play import SimulationError
    from omen_replay.simulate.policies import PolicyError
    from omen_replay.simulate.run import RunError


    try:
        if replay is not None:
            if encounter is not None or compare is not None:
                bad_input(f"--replay RUN.json INDEX plays a fight of the run's own encounter: leave out "
                          f"{'ENCOUNTER ' + str(encounter) if encounter is not None else '--compare'}")
            given = [name for name, value in (
                ("--fights", fights), ("--until-ci", until_ci), ("--max-fights", max_fights),
                ("--policy", policy or None), ("--seed", seed), ("--workers", workers), ("--dask", dask),
                ("--batch", batch), ("--max-rounds", max_rounds), ("--hp-display", hp_display), ("--out", out_path),
                ("--html", html)) if value is not None]
            if given:
                bad_input(f"{', '.join(given)} {'go' if len(given) > 1 else 'goes'} with a run, not with --replay "
                          "RUN.json INDEX, which plays the fight as the run recorded it (its seed, policies and "
                          f"settings): leave {'them' if len(given) > 1 else 'it'} out")
            _replay(replay[0], replay[1], log_url, which, as_json)
            return
        if log_url is not None or which is not None:
            bad_input("--log and --encounter go with --replay RUN.json INDEX")
        _run(encounter, compare, fights, until_ci, _DEFAULT_MAX_FIGHTS if max_fights is None else max_fights,
             policy or [], seed, workers, dask, 100 if batch is None else batch,
             50 if max_rounds is None else max_rounds,
             (hp_display or HpShown.banded).value, out_path, as_json, html)
    except (RunError, PolicyError) as exc:
        bad_input(str(exc))
    except SimulationError as exc:
        bad_input(str(exc))
    except Exception as exc:
        from omen_core.errors import OmenError

        if isinstance(exc, OmenError):
            guarded(exc)
        raise


def _policies(given: list[str]) -> dict[str, str]:
    """Each side's policy from the --policy options, each side given once; a policy's file by its absolute path."""
    found: dict[str, str] = {}
    for item in given:
        side, eq, name = item.partition("=")
        if not eq or not side or not name:
            bad_input(f"--policy {item!r}: give SIDE=NAME (e.g. raiders=cautious)")
        if side in found:
            bad_input(f"--policy {side}=...: given twice ({found[side]} and {name}); give each side's policy once")
        module, colon, attribute = name.rpartition(":")
        if colon and module.endswith(".py"):  # a file: recorded by its absolute path, so that the run's fights play
            name = f"{os.path.abspath(module)}:{attribute}"  # again from any directory, and on every Dask worker
        found[side] = name
    return found


def _run(encounter: Path | None, compare: tuple[Path, Path] | None, fights: int | None, until_ci: float | None,
         max_fights: int, policy: list[str], seed_hex: str | None, workers: int | None, address: str | None,
         batch: int, max_rounds: int, hp_display: str, out_path: Path | None, as_json: bool,
         html: Path | None) -> None:
    from omen_replay.simulate.encounter import load_encounter
    from omen_replay.simulate.play import Rules
    from omen_replay.simulate.run import RunError, check_counts, run_json


    if compare is not None and str(compare[1]).startswith("-"):
        bad_input(f"--compare A.toml B.toml takes two encounter files: B is missing ({compare[0]} was followed by "
                  f"the option {compare[1]})")
    if encounter is None and compare is None:
        bad_input("give an ENCOUNTER, or --compare A.toml B.toml")
    if encounter is not None and compare is not None:
        bad_input(f"give an ENCOUNTER or --compare A.toml B.toml, not both (ENCOUNTER {encounter})")
    if fights is not None and until_ci is not None:
        bad_input("give --fights or --until-ci, not both")
    if workers is not None and workers < 1:
        bad_input(f"--workers must be at least 1, not {workers}{_USAGE}")
    if workers is not None:
        _check_workers(workers)
    if workers is not None and address is not None:
        bad_input("--workers is the local pool's; a Dask cluster has its own workers (--dask)")
    from omen_replay.simulate.play import MOST_ROUNDS

    if not 1 <= max_rounds <= MOST_ROUNDS:
        bad_input(f"--max-rounds must be from 1 to {MOST_ROUNDS:,} (a stalemate plays every round allowed), not "
                  f"{max_rounds}{_USAGE}")
    if until_ci is not None and not 0 < until_ci < 0.5:  # the number as given: 0, not 0.0
        shown = str(int(until_ci)) if until_ci.is_integer() else str(until_ci)
        bad_input(f"--until-ci is the interval's half-width, between 0 and 0.5 (0.01 for ± 1 point), not {shown}"
                  f"{_USAGE}")
    count = fights if fights is not None or until_ci is not None else 1000
    try:
        check_counts(count, until_ci, max_fights, batch)  # before an encounter is read or a worker started
    except RunError as exc:
        bad_input(f"{exc}{_USAGE}")  # a count out of range: a usage error, as a count that is no number is
    names = _policies(policy)
    paths = [encounter] if encounter is not None else list(compare or ())
    encounters = [load_encounter(p) for p in paths if p is not None]
    known = {s for e in encounters for s in e.sides}
    for side in names:
        if side not in known:
            bad_input(f"--policy {side}=...: no side {side!r} in the encounter (sides: {', '.join(sorted(known))})")
    seed = seed_option(seed_hex) if seed_hex is not None else secrets.token_bytes(16)
    assert seed is not None
    if len(seed) < 16:
        bad_input(f"--seed must be at least 16 bytes (32 hex digits), as seeded dice are (docs/scenarios.md): "
                  f"{seed_hex!r} is {len(seed)}")
    rules = Rules(policies=names, max_rounds=max_rounds, hp_display=hp_display)  # type: ignore[arg-type]
    from omen_replay.simulate.run import policies_of, settings_key

    key = settings_key(encounters, policies_of(encounters, rules), seed, max_rounds, hp_display, until_ci,
                       count or max_fights, batch)
    stem = "-vs-".join(e.id for e in encounters)
    target = out_path or Path("out") / "simulations" / f"{stem}-{seed.hex()[:8]}-{key[:8]}.json"
    _check_output(target, "the run", made=out_path is None)  # every output said before the fights are run
    _not_another_run(target, key)
    if html is not None:  # in out/ (docs/simulate.md's example), made with out/simulations/ for the run: so be it
        runs = target.parent.absolute()
        made = out_path is None and html.parent.absolute() in (runs, *runs.parents)
        _check_output(html, "the report", made=made)
        _not_overwritten(html, target, [p for p in paths if p is not None])
        _check_folder(_fights_folder(html))
    from .app import _log

    _log().info("simulation_started", encounters=[e.id for e in encounters], fights=count, until_ci=until_ci,
                max_fights=max_fights if until_ci is not None else None, seed=seed.hex(), workers=workers,
                dask=address, batch=batch)
    INTERRUPT_NOTE[:] = ["nothing was written: the fights played are not kept"]  # a Ctrl-C while they are played
    try:
        with _terminable():
            run = _execute(encounters, rules, seed, count, until_ci, max_fights, workers, address, batch, as_json)
    except _Terminated:
        say(f"omen: terminated (SIGTERM): {INTERRUPT_NOTE[0]}")
        raise typer.Exit(TERMINATED) from None
    finally:  # a Ctrl-C keeps the note for app._interrupted
        if not isinstance(sys.exc_info()[1], KeyboardInterrupt):
            INTERRUPT_NOTE.clear()  # played (or failed): what a stop now leaves is what was written (wrote)
    from omen_replay.output import output_file

    if out_path is None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)  # made only now, when the run is written
        except OSError as exc:
            bad_input(f"{target.parent}: cannot make the directory of the run: {exc.strerror or exc}")
    with output_file(target, "the run") as f:
        f.write(run_json(run).decode() + "\n")
    wrote(f"the run written to {target}")  # a report lost after this is exit 3, saying so (README)
    if html is not None:
        _write_html(run, html, shlex.quote(str(target.absolute())))  # its replay commands work from anywhere
        wrote(f"the report written to {html}", "fight pages")  # (its fight pages with it: one note for both)
    _log().info("simulation_finished", fights=run.manifest.fights, seconds=round(run.timing.seconds, 3),
                backend=run.timing.backend, workers=run.timing.workers, run=str(target),
                report=str(html) if html is not None else None)
    if as_json:
        stdout.write(run_json(run).decode() + "\n")
        return
    _print_run(run, str(target), html)


def _check_workers(workers: int) -> None:
    """Refuse (exit 2) more local worker processes than :data:`WORKERS_PER_CORE` per core this process may use."""
    from omen_replay.simulate.run import WORKERS_PER_CORE, default_workers

    cores = default_workers()
    most = WORKERS_PER_CORE * cores
    if workers > most:
        bad_input(f"--workers {workers:,} is more than {most}, the most on this machine ({WORKERS_PER_CORE} per core, "
                  f"{cores} core{'s' if cores != 1 else ''}): every fight comes out the same on fewer{_USAGE}")


def _fights_folder(page: Path) -> Path:
    """Where ``--html PAGE`` puts the session log of each fight it links: ``PAGE-fights/`` beside it."""
    return page.with_name(page.stem + "-fights")


def _check_output(path: Path, what: str, made: bool = False) -> None:
    """Refuse (exit 2, before any fight is played) an output file the run could not write: a directory, or one in a
    directory that does not exist (unless ``made``: the default out/simulations/ or one of its parents, made when
    the run is written, whose nearest existing ancestor must then take a new file) or that takes no new file. A
    device (/dev/null) is written as it is."""
    from omen_replay.output import check_parent

    if path.is_dir():
        bad_input(f"{path}: cannot write {what}: it is a directory")
    if path.exists() and not path.is_file():
        return
    where = path.parent
    if made:
        while not where.exists() and where != where.parent:
            where = where.parent
        if not where.is_dir():
            bad_input(f"{path}: cannot write {what}: {where} is not a directory")
    else:
        check_parent(path, what)
    _probe(where, path, what)


def _check_folder(folder: Path) -> None:
    """Refuse (exit 2, before any fight is played) a report's fight folder that is a file, or a folder that takes
    no new file."""
    if folder.exists() and not folder.is_dir():
        bad_input(f"{folder}: cannot write the report's fight pages: it is not a directory")
    if folder.is_dir():
        _probe(folder, folder, "the report's fight pages")


def _probe(where: Path, path: Path, what: str) -> None:
    """Make and remove an empty file in the directory ``where``: whether it takes a new file, as the output will
    need (the permissions alone do not say it: a read-only file system, /proc)."""
    import os
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(dir=where, prefix=".omen-", suffix=".probe")
    except OSError as exc:
        bad_input(f"{path}: cannot write {what}: the directory {where} takes no new file ({exc.strerror or exc})")
    os.close(fd)
    os.unlink(probe)


def _not_another_run(target: Path, key: str) -> None:
    """Refuse (exit 2, before any fight is played) to write a run over a file that holds anything but the same run
    (the same settings: :func:`~omen_replay.simulate.run.settings_key`): another run, whose report pages' replay
    commands name this file, or a file that is no run at all."""
    if not target.is_file():
        return
    from omen_core.errors import OmenError
    from omen_replay.simulate.run import RunError, key_of, read_run

    try:
        from omen_core.content import read_content

        held = read_run(read_content(target, 1 << 30).encode(), str(target))
    except (RunError, OmenError):
        bad_input(f"{target} already exists and is not a run of omen simulate: choose another --out (nothing was "
                  "overwritten)")
    if key_of(held) != key:
        m = held.manifest
        bad_input(f"{target} already holds another run (seed {m.seed[:8]}..., {m.fights:,} fights, other settings): "
                  "its report's replay commands name it; choose another --out, or move it away (nothing was "
                  "overwritten)")


#: What an ``omen simulate`` report page says of itself in its head (``<meta name="generator" ...>``): an existing
#: file that --html would overwrite must say it.
REPORT_MARK = b'<meta name="generator" content="omen simulate">'


def _not_overwritten(page: Path, run: Path, inputs: list[Path]) -> None:
    """Refuse (exit 2, before any fight is played) an ``--html`` page that is the run's own file or an encounter
    given, or an existing file that is no report of omen simulate (its head says so: :data:`REPORT_MARK`): it
    overwrote the run (which its replay commands name), another run, the encounter itself (a tester)."""
    def same(a: Path, b: Path) -> bool:
        try:
            return (a.exists() and b.exists() and a.samefile(b)) or a.absolute() == b.absolute()
        except OSError:
            return a.absolute() == b.absolute()

    if same(page, run):
        bad_input(f"{page}: --html and the run's file ({run}) are one file: give the report another name (nothing "
                  "was overwritten)")
    for given in inputs:
        if same(page, given):
            bad_input(f"{page}: --html names the encounter given ({given}): give the report another name (nothing "
                      "was overwritten)")
    if not page.is_file():
        return
    try:
        with page.open("rb") as f:
            head = f.read(4096)
    except OSError as exc:
        bad_input(f"{page}: cannot read the report to be replaced: {exc.strerror or exc}")
    if REPORT_MARK not in head:
        bad_input(f"{page} already exists and is not a report of omen simulate: choose another --html, or move it "
                  "away (nothing was overwritten)")


#: The exit code of a run stopped by SIGTERM (``timeout``, ``kill``, a service manager), as shells give 128 + 15.
TERMINATED = 143


class _Terminated(BaseException):
    """SIGTERM while the fights are played, raised in the main thread (a BaseException, as a Ctrl-C's, so that no
    handler of the run takes it for a failed batch): the pool's or the cluster's processes are shut down on the way
    out (killed outright, the run left its pool's worker processes running: a tester)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


@contextlib.contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` while the block runs (in the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _execute(encounters: list[Encounter], rules: Rules, seed: bytes, fights: int | None, until_ci: float | None,
             max_fights: int, workers: int | None, address: str | None, batch: int, quiet: bool) -> Run:
    from contextlib import AbstractContextManager

    from omen_replay.simulate.run import Backend, dask, default_workers, interactive, pool, serial, simulate

    n = workers if workers is not None else default_workers()
    backend: AbstractContextManager[Backend] = dask(address, waiting=_waiting) if address is not None else \
        serial() if n == 1 else pool(n)
    bar = None if quiet or not interactive() else _Bar(fights)
    try:
        with backend as chosen:
            return simulate(encounters, rules, seed, chosen, fights=fights, until_ci=until_ci,
                            max_fights=max_fights, batch=batch, progress=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.stop()


def _waiting(message: str) -> None:
    """Say on standard error what the run waits for (a Dask worker), before a bar or a report."""
    err.print(f"omen: {escape(message)}")


class _Bar:
    """A progress bar on standard error (a terminal only): fights done, their rate, the widest interval now."""

    def __init__(self, total: int | None):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


        shown = console(stderr=True)  # the bar takes what the rest leaves of the width (at 80 columns the counts
        room = max(5, min(40, shown.width - 72))  # were cut, "1500/15…": a tester)
        self.progress = Progress(TextColumn("simulating"), BarColumn(bar_width=room), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]} fights/s · widest ± {task.fields[ci]}"),
                                 TimeElapsedColumn(), console=shown, transient=True)
        self.task = self.progress.add_task("fights", total=total, rate="-", ci="-")
        self.progress.start()

    def update(self, now: object) -> None:
        from omen_replay.simulate.run import Progress

        assert isinstance(now, Progress)
        rate = f"{now.done / now.seconds:,.0f}" if now.seconds > 0 else "-"
        self.progress.update(self.task, completed=now.done, rate=rate, ci=f"{now.widest * 100:.2f} pts")

    def stop(self) -> None:
        self.progress.stop()


def _write_html(run: Run, page: Path, run_path: str) -> None:
    """The report page, and the session log of each fight it links, in PAGE-fights/ beside it."""
    from omen_core.walk import StoreSource
    from omen_replay.output import check_parent, output_file
    from omen_replay.render import HtmlWriter, render
    from omen_replay.simulate.run import regenerate

    check_parent(page, "the report")
    folder = _fights_folder(page)
    _clear_fight_pages(folder)
    pages: dict[tuple[str, int], str] = {}
    for er in run.encounters:
        ex = er.summary.extremes
        for pick in (*ex.longest, *ex.upsets, *ex.shortest):
            key = (er.label, pick.index)
            if key in pages:
                continue
            played, _recorded = regenerate(run, pick.index, er.label or None)
            try:
                folder.mkdir(exist_ok=True)
            except OSError as exc:
                bad_input(f"{folder}: cannot write the report's fight pages: {exc.strerror or exc}")
            name = f"{er.label.lower() + '-' if er.label else ''}fight-{pick.index}.html"
            with output_file(folder / name, "a fight's session log") as f:
                render(StoreSource(played.fight.store, played.fight.fight_id), HtmlWriter(f))
            pages[key] = f"{folder.name}/{name}"
            n = len(pages)
            wrote(f"{n} fight page{'s' if n != 1 else ''} in {folder} (the report {page} not yet: its links may "
                  "be broken)", "fight pages")
    from omen_replay.simulate.report import write_html

    with output_file(page, "the report") as f:
        write_html(run, f, run_path, pages)


#: The name of a fight's page that ``--html`` writes in PAGE-fights/: what it clears there before writing a run's.
_FIGHT_PAGE = r"(?:[ab]-)?fight-[0-9]+\.html"


def _clear_fight_pages(folder: Path) -> None:
    """Remove from ``folder`` the fight pages an earlier run's report wrote there (``fight-N.html``, ``a-fight-N.html``,
    ``b-fight-N.html``), so that it holds this run's only; any other file is left alone."""
    import re

    if not folder.is_dir():
        return
    removed = 0
    for old in sorted(folder.iterdir()):
        if re.fullmatch(_FIGHT_PAGE, old.name) and old.is_file():
            try:
                old.unlink()
            except OSError as exc:
                bad_input(f"{old}: cannot remove an earlier run's fight page: {exc.strerror or exc}")
            removed += 1
            wrote(f"{removed} earlier run's fight page{'s' if removed != 1 else ''} removed from {folder}",
                  "pages removed")


def _print_run(run: Run, saved: str, html: Path | None) -> None:
    from omen_replay.simulate.report import encounter_name
    from omen_replay.simulate.stats import percent, signed

    t = run.timing
    m = run.manifest
    for er in run.encounters:
        s = er.summary
        title = encounter_name(er, run)
        _say(f"[bold]{escape((er.label + ': ') if er.label else '')}{escape(title)}[/]: {s.fights:,} "
             f"fight{'s' if s.fights != 1 else ''}, "
             f"seed {m.seed}" + _stopped(run))
        for side in s.sides:
            w = side.wins
            _say(f"  {escape(side.side)} ({escape(_policy_shown(side.policy, side.policy_name))}) win "
                 f"{percent(w.rate)}%  [dim](95 %: {percent(w.low)}% to {percent(w.high)}%)[/]")
        for side in s.sides:
            lost = side.defeated_no_winner
            if lost is not None:
                _say(f"  {escape(side.side)} defeated, no winner {percent(lost.rate)}%  [dim](95 %: "
                     f"{percent(lost.low)}% to {percent(lost.high)}%; two sides or more left standing)[/]")
        dr = s.draws
        _say(f"  draws {percent(dr.rate)}%  [dim](95 %: {percent(dr.low)}% to {percent(dr.high)}%; no side down in "
             f"{_rounds(m.max_rounds)})[/]")
        ad = s.all_down
        _say(f"  every side down {percent(ad.rate)}%  [dim](95 %: {percent(ad.low)}% to {percent(ad.high)}%; the "
             "last blow felled both: no winner)[/]")
        r = s.rounds
        spread = f"95 %: {r.low:z.2f} to {r.high:z.2f}" if s.fights > 1 else "one fight: no interval"
        _say(f"  rounds {r.mean:.2f} [dim]({spread}; "
             f"{s.rounds_histogram[0][0]} to {s.rounds_histogram[-1][0]})[/]")
        _say(_combatants(s.combatants))
        ex = s.extremes
        for pick in (*ex.longest[:1], *ex.upsets[:1]):
            _say(f"  [dim]#{pick.index}: {escape(pick.why)}[/]")
    if run.comparison is not None:
        _say("[bold]A - B on the same seeds[/] (paired 95 % | unpaired 95 %):")
        for d in run.comparison.differences:
            paired = (f"{signed(d.paired_low)} to {signed(d.paired_high)}" if d.paired_low != d.paired_high else
                      "the same in every pair")
            _say(f"  {escape(d.what)}: {signed(d.difference)}  [dim]({paired} | "
                 f"{signed(d.unpaired_low)} to {signed(d.unpaired_high)})[/]")
        left_out = run.comparison.not_compared()
        if left_out:
            _say(f"  not compared, in one encounter only: {escape(visible(left_out))}")
    at_start = " at the start" if t.backend == "dask" else ""  # (a cluster's workers come and go: a tester)
    _say(f"[dim]{t.backend}, {t.workers} worker{'s' if t.workers != 1 else ''}{at_start}, {t.seconds:.1f} s "
         f"({t.fights_per_second:,.0f} fights/s). Run saved to {escape(saved)}"
         + (f", report to {escape(str(html))}" if html else "")
         + f". Play a fight again: omen simulate --replay {escape(saved)} INDEX --log fight.jsonl"
         + (" --encounter A|B" if run.comparison is not None else "") + "[/]")


#: The combatants' table's columns, as its header and as each combatant's line on a terminal too narrow for it.
_COLUMNS = ("combatant", "side", "HP left", "Will left", "dealt", "taken", "down % (95 %)", "first down % (95 %)")


def _combatants(combatants: Any) -> Any:
    """The combatants' table: on a terminal too narrow for it whole (each name at its longest word, each number
    whole), a block per combatant instead, its name, then its figures each named ("HP left 11.9/24; ..."): a
    number is never cut nor a column dropped (at 70 columns the last interval lost its end, at 60 its column: a
    tester)."""
    from rich.table import Table
    from rich.text import Text

    from omen_replay.simulate.stats import share

    rows = [(plain(c.name), plain(c.side), f"{c.hp_left.mean:.1f}/{c.max_hp}", f"{c.will_left.mean:.1f}/{c.max_will}",
             f"{c.dealt.mean:.1f}", f"{c.taken.mean:.1f}", share(c.down), share(c.falls_first)) for c in combatants]
    table = Table(box=None, padding=(0, 1), pad_edge=False)
    for i, col in enumerate(_COLUMNS):
        words = i < 2  # a name wraps at its spaces, never inside a word; a number is never cut
        widest = max((len(part) for row in rows for part in row[i].split()), default=1)
        table.add_column(col, justify="left" if words else "right", overflow="fold",
                         min_width=max(widest, *(len(w) for w in col.split())))
    for row in rows:
        table.add_row(*row)
    if not out.is_terminal:
        return table
    measured = out.measure(table)
    if measured.minimum > out.width - 2:  # (rich lays a table without its edge padding 2 characters wide)
        lines = Text()
        for row in rows:
            named = [f"{name.replace(' (95 %)', '')} {value}"
                     for name, value in zip(_COLUMNS[2:], row[2:], strict=True)]
            lines.append(f"  {row[0]} ({row[1]}):\n    {'; '.join(named[:4])}\n    {'; '.join(named[4:])}\n")
        return lines
    if measured.maximum > out.width - 2:
        table.width = out.width - 2  # fitted here: laid 2 characters too wide, rich cut the last column's end
    return table


def _say(*objects: object) -> None:
    """Print to standard output: on a terminal, fitted to its width; elsewhere (a file, a pipe, a capture) never
    wrapped, a table never narrowed, so a name stays on its row and a command, a path stays whole, to copy."""
    (out if out.is_terminal else unwrapped).print(*objects)


def _stopped(run: Run) -> str:
    """Why an --until-ci run stopped where it did: its target met, or --max-fights reached first (with the widest
    half-width it had then)."""
    m = run.manifest
    if m.until_ci is None:
        return ""
    widest = max(er.summary.widest for er in run.encounters)
    target = f"{m.until_ci * 100:g} point{'s' if m.until_ci != 0.01 else ''}"
    if widest < m.until_ci:
        return f", stopped once every rate's 95 % interval had a half-width under {target}"
    return (f", stopped at --max-fights {m.max_fights:,} before every rate's 95 % interval was under ± {target}: "
            f"the widest half-width reached was ± {widest * 100:.1f} points")


def _policy_shown(policy: str, name: str) -> str:
    """A side's policy as the report shows it: its name, and where it came from if it is not a built-in's."""
    return policy if not name or name == policy else f"{name}, {policy}"


def _rounds(n: int) -> str:
    """``n`` rounds, in words: 1 round, 2 rounds."""
    return f"{n} round{'s' if n != 1 else ''}"


def _outcome(r: FightRecord) -> str:
    """How a fight ended, in words."""
    rounds = _rounds(r.rounds)
    if r.winner is not None:
        return f"{r.winner} won in {rounds}"
    if r.ended == "all_down":
        return (f"every side down in {rounds} ({r.defeated} all down first, defeated; the same command felled the "
                "rest: no winner)")
    if r.ended == "round_limit":
        return f"a draw: no side down in {rounds}"
    return f"no single side won in {rounds} ({r.defeated} defeated)"


#: How many other fights ``--replay`` plays again to tell a record edited from the manifest edited.
CROSS_CHECKS = 8


def _another_differs(run: Run, index: int, which: str | None) -> tuple[int | None, list[int]]:
    """The first of the run's other fights (the first :data:`CROSS_CHECKS` of them) that too comes out otherwise than
    its record: then not one record but what every fight is made from (the manifest: the seed, say) was edited; and
    the fights checked. One fight alone was not enough: a draw where no one dealt damage comes out alike under any
    seed, and the message blamed the record (a tester)."""
    from omen_replay.simulate.run import regenerate

    checked = []
    for other in (i for i in range(min(run.manifest.fights, CROSS_CHECKS + 1)) if i != index):
        checked.append(other)
        played, recorded = regenerate(run, other, which)
        if played.record != recorded:
            return other, checked
    return None, checked


def _replay(run_file: Path, index: int, log_url: str | None, which: str | None, as_json: bool) -> None:
    import msgspec

    from omen_core.content import read_content
    from omen_replay.simulate.run import edited, read_run, regenerate, unsound
    from omen_replay.verify import verify_store


    if log_url is None:
        bad_input("--replay RUN.json INDEX needs --log: where to write the fight's log")
    check_log_parent(log_url)  # as omen run: no directory tree is made
    run = read_run(read_content(run_file, 1 << 30).encode(), str(run_file))
    played, recorded = regenerate(run, index, which)
    fight = played.fight
    store = store_at(log_url)
    if fight.fight_id in store.fights():
        bad_input(f"{log_url} already holds fight {fight.fight_id!r}: choose another --log")
    store.append(fight.fight_id, fight.events, 0)
    appended(list(fight.events), f"fight {fight.fight_id!r} written to {log_url}")  # a lost report: exit 3 (README)
    report = verify_store(store, fight.fight_id)
    same = played.record == recorded
    from omen_core import __version__

    findings = unsound(run, run.manifest.omen == __version__)
    if as_json:
        stdout.write(msgspec.json.encode({"fight_id": fight.fight_id, "events": fight.version, "clean": report.clean,
                                          "same_as_recorded": same, "record": played.record,
                                          "recorded": recorded}).decode() + "\n")
    else:
        r = played.record
        _say(f"fight {index} of {escape(str(run_file))} written to {escape(str(log_url))} as {fight.fight_id!r}: "
             f"{fight.version} events; "
             f"{_outcome(r)}"
             + (" (as the run recorded)" if same and not findings else ""))
        _say(f"[green]verified[/]: {report.events} events, every die matches the revealed seed" if report.clean
             else f"[red]{len(report.problems)} finding(s)[/]: omen verify {log_url} --fight {fight.fight_id}")
    if same and findings:  # the fight as recorded, but the file around it does not hold together
        err.print(f"[bold red]omen: error:[/] fight {index} came out as the run recorded it, but the run file was "
                  f"edited since the run: {escape('; '.join(findings))}")
        raise typer.Exit(1)  # a finding, as verify's: exit 1 though the log is written
    if not same:
        changed = edited(run)
        from omen_replay.simulate.policies import BUILT_IN

        own = sorted({p for p in run.manifest.policies.values() if p not in BUILT_IN})
        other, checked = (None, []) if changed or run.manifest.omen != __version__ else \
            _another_differs(run, index, which)
        alike = ("" if other is not None or not checked else
                 f" (fight {checked[0]}, played again too, comes out as recorded)" if len(checked) == 1 else
                 f" ({len(checked)} other fights played again too, {checked[0]} to {checked[-1]}, come out as "
                 "recorded)")
        what = (f"fight {other} comes out otherwise too: the run file's manifest (its seed, policies, round limit "
                f"or HP display) was edited since the run" if other is not None else
                f"the run file's record of fight {index} was edited since the run")
        why = (f"the run file's encounter {', '.join(changed)} no longer hashes to the digest the run recorded: "
               "edited since the run" if changed else
               f"the run and this omen are both omen {__version__}: {what}"
               + (f", or the policy {', '.join(own)} plays otherwise now" if own else "") + alike
               if run.manifest.omen == __version__ else
               f"the run: omen {run.manifest.omen}; this omen may rule differently")
        err.print(f"[bold red]omen: error:[/] fight {index} came out differently from the run's record "
                  f"({escape(why)}): recorded {escape(msgspec.json.encode(recorded).decode())}, now "
                  f"{escape(msgspec.json.encode(played.record).decode())}")
        raise typer.Exit(1)  # a finding, as verify's: exit 1 though the log is written (it is the evidence)
    if not report.clean:
        raise typer.Exit(1)

