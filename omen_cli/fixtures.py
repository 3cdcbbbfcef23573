"""``omen fixtures check`` and ``omen fixtures record``: golden fixtures, recorded fights replayed under the
current rules."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .app import (
    bad_input,
    refusals,
    wrote,
)
from .console import escape, out, stdout

if TYPE_CHECKING:
    pass

__all__ = ["fixtures_app"]

fixtures_app = typer.Typer(no_args_is_help=True, help="Golden fixtures: recorded fights replayed under the "
                                                        "current rules.")


@fixtures_app.command("check", short_help="Replay and verify every fixture; exit 1 if any fails.")
def fixtures_check(
    root: Annotated[Path, typer.Option("--dir", metavar="DIR", help="Where the fixtures are.")] = Path("fixtures"),
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable results.")] = False,
) -> None:
    """Replay and verify every fixture; on a mismatch, print the first divergence. Exit 1 if any fails (the rules
    no longer reproduce it), 2 if any is broken (a file missing or not what it must be, or a recorded log that
    cannot be replayed: it could not be checked)."""

    import msgspec

    from omen_replay.fixtures import check, fixture_dirs, orphans

    if not root.is_dir():  # (it said "no fixtures under nodir", as if the folder were there: a maintainer tester)
        bad_input(f"{root}: no such directory" if not root.exists() else f"{root}: not a directory")
    dirs = fixture_dirs(root)
    broken = orphans(root)
    if not dirs and not broken:
        bad_input(f"no fixtures (directories with a scenario.toml) under {root}")
    results = sorted([check(d) for d in dirs] + broken, key=lambda r: r.name)
    if as_json:
        stdout.write(msgspec.json.encode(results).decode() + "\n")
    for r in [] if as_json else results:
        if r.ok:
            out.print(f"[green]ok[/]   {escape(r.name)} ({r.events} events)")
            continue
        out.print(f"[red]{'BROKEN' if r.broken else 'FAIL'}[/] {escape(r.name)}")
        if r.divergence is not None:
            d = r.divergence
            out.print(f"       first divergence at seq {d.seq}, {escape(d.field)}: expected {escape(d.expected)}, "
                      f"got {escape(d.got)}" + (f" (written in {escape(d.written)})" if d.written else ""))
        for problem in r.problems:
            out.print(f"       {escape(problem)}")
    raise typer.Exit(2 if any(r.broken for r in results) else 0 if all(r.ok for r in results) else 1)


@fixtures_app.command("record", short_help="Re-record one fixture and show what changed.")
def fixtures_record(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The fixture's directory name.")],
    root: Annotated[Path, typer.Option("--dir", metavar="DIR", help="Where the fixtures are.")] = Path("fixtures"),
) -> None:
    """Re-record one fixture under the current rules and show what changed."""
    from omen_replay.fixtures import record

    if not name or name in (".", "..") or "/" in name or "\\" in name or Path(name).is_absolute():
        bad_input(f"fixture name {name!r} is not a folder name: NAME is one folder under --dir ({root}), never a "
                  "path, so a recording stays inside --dir")
    directory = root / name
    if not (directory / "scenario.toml").exists():
        bad_input(f"no fixture {name!r}: {directory / 'scenario.toml'} does not exist")
    with refusals():
        made = record(directory)
    change, count, was = made.change, made.events, made.was
    wrote(f"fixture {name} recorded ({count} events)")
    if change is None:
        said = {"new": "a new fixture", "unchanged": "unchanged", "unreadable": "the old recording could not be read"}
        out.print(f"recorded {escape(name)}: {count} events ({said[was]})")
    else:
        out.print(f"recorded {escape(name)}: {count} events; changed from seq {change.seq}, {escape(change.field)}: "
                  f"was {escape(change.expected)}, now {escape(change.got)}")
    if made.end_state is not None:
        field, before, after = made.end_state
        out.print(f"  the end state changed too (fingerprint.json): at {escape(field)}, was {escape(before)}, "
                  f"now {escape(after)}")
    elif was == "changed":
        out.print("  the end state is the same (fingerprint.json unchanged)")
