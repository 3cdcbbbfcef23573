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
            out.print(f"       first divergence at seq {d.seq}, {escape(d.field)}: recorded {escape(d.expected)}, "
                      f"now {escape(d.got)}" + (f" (written in {escape(d.written)})" if d.written else ""))
        for problem in r.problems:
            out.print(f"       {escape(problem)}")
    raise typer.Exit(2 if any(r.broken for r in results) else 0 if all(r.ok for r in results) else 1)


@fixtures_app.command("record", short_help="Re-record fixtures and show what changed.")
def fixtures_record(
    names: Annotated[list[str] | None, typer.Argument(metavar="NAME", help="The fixtures' directory names.",
                                                      show_default=False)] = None,
    root: Annotated[Path, typer.Option("--dir", metavar="DIR", help="Where the fixtures are.")] = Path("fixtures"),
    every: Annotated[bool, typer.Option("--all", help="Every fixture under --dir (a change of the ruleset or of "
                                                      "the log's schema moves them all).")] = False,
) -> None:
    """Re-record fixtures under the current rules and show what changed, each in turn: the names given, or every
    fixture with --all. One that refuses (its scenario no longer fits the rules) is left as it was, said, and the
    others are recorded; exit 2 if any refused, 3 if others were recorded."""
    from omen_core.errors import OmenError
    from omen_replay.fixtures import fixture_dirs

    if every == bool(names):
        bad_input("give the fixtures' names (omen fixtures record NAME...) or --all, not both" if every else
                  "give the name of a fixture to record (a folder under --dir), or --all for every one")
    if every:
        if not root.is_dir():
            bad_input(f"{root}: no such directory" if not root.exists() else f"{root}: not a directory")
        names = [d.name for d in fixture_dirs(root)]
        if not names:
            bad_input(f"no fixtures (directories with a scenario.toml) under {root}")
    assert names is not None
    for name in names:
        if not name or name in (".", "..") or "/" in name or "\\" in name or Path(name).is_absolute():
            bad_input(f"fixture name {name!r} is not a folder name: NAME is one folder under --dir ({root}), never "
                      "a path, so a recording stays inside --dir")
        if not (root / name / "scenario.toml").exists():
            bad_input(f"no fixture {name!r}: {root / name / 'scenario.toml'} does not exist")
    refused: list[OmenError] = []
    for name in names:
        if len(names) == 1:
            with refusals():
                _record_one(root, name)
            continue
        try:
            _record_one(root, name)
        except OmenError as exc:  # the others are still recorded; the refusal is said, and the exit is 2 or 3
            refused.append(exc)
            out.print(f"[red]refused[/] {escape(name)}: {escape(str(exc))}", soft_wrap=True)
    if refused:
        bad_input(f"{len(refused)} of {len(names)} fixtures refused (above), left as they were; the others are "
                  "recorded")


def _record_one(root: Path, name: str) -> None:
    """Re-record fixture ``name`` and say what changed from its old recording."""
    from omen_replay.fixtures import record

    made = record(root / name)
    change, count, was = made.change, made.events, made.was
    wrote(f"fixture {name} recorded ({count} events)")
    if change is None:
        said = {"new": "a new fixture", "unchanged": "unchanged",
                "unreadable": f"the old recording could not be replayed ({made.unsound}): replaced"}
        out.print(f"recorded {escape(name)}: {count} events ({escape(said[was])})", soft_wrap=True)
    else:
        out.print(f"recorded {escape(name)}: {count} events; changed from seq {change.seq}, {escape(change.field)}: "
                  f"was {escape(change.expected)}, now {escape(change.got)}", soft_wrap=True)
    if made.fingerprint_was:
        out.print(f"  the old fingerprint.json was broken ({escape(made.fingerprint_was)}): written again",
                  soft_wrap=True)
    elif made.end_state is not None:
        field, before, after = made.end_state
        whose = "the end state changed too" if was == "changed" else \
            "the events are the same, but the old fingerprint.json recorded another end state"
        out.print(f"  {whose} (fingerprint.json): at {escape(field)}, was {escape(before)}, now {escape(after)}",
                  soft_wrap=True)
    elif was == "changed":
        out.print("  the end state is the same (fingerprint.json unchanged)")
