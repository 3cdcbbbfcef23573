"""``omen demo`` and ``omen run``: a whole fight played, from the bundled demo or a scenario file."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .app import (
    appended,
    bad_input,
    check_log_parent,
    open_snapshots,
    open_store,
    refusals,
    store_at,
    wrote,
)
from .console import escape, out, print_lines
from .show import KEPT_NOWHERE, print_state, report_text

if TYPE_CHECKING:
    from omen_core.events import StoredEvent
    from omen_replay.narrate import Narrator

__all__ = ["demo", "run"]

def demo(
    log_path: Annotated[Path, typer.Option("--log", metavar="PATH", help="Where to write the demo's fight log.")]
    = Path("out/demo.jsonl"),
    short: Annotated[bool, typer.Option("--short", help="The short encounter instead: a contest, a check, a save "
                                                        "and an attack each way.")] = False,
    fresh_seed: Annotated[bool, typer.Option("--fresh-seed", help="With --short: roll with a new random seed "
                                                                  "instead of the published one.")] = False,
) -> None:
    """Play a whole sample fight with seeded dice (an ambush, four rounds, reactions, an undo), print its
    session log and end state, write the log and verify it."""

    from importlib.resources import files

    from omen_core.dice import SeededDice
    from omen_core.walk import StoreSource
    from omen_replay.demo import DEMO_SEED, run_demo
    from omen_replay.narrate import narrate
    from omen_replay.output import output_file
    from omen_replay.replay import summarise
    from omen_replay.scenario import load_scenario, run_scenario
    from omen_replay.verify import verify_store

    if fresh_seed and not short:
        bad_input("--fresh-seed goes with --short: the whole fight is a script written for its published seed")
    fight_id = "demo" if short else "ember-ford"
    _clear_demo_log(log_path, fight_id)
    with refusals():
        store = open_store(str(log_path))
        if short:
            fight = run_demo(store, seed=SeededDice.fresh().seed if fresh_seed else DEMO_SEED)
        else:
            fight = run_scenario(load_scenario(Path(str(files("omen_replay") / "data" / "ember-ford" /
                                                         "scenario.toml"))), store,
                                 snapshots=open_snapshots(str(log_path)))
        records = fight.events
    wrote(f"the demo's log written to {log_path} ({len(records)} events, head {fight.version}:"
           f"{fight.state.last_hash})")
    print_lines(iter(narrate(records)))
    out.print()
    if not short:
        print_state(summarise(fight.state), False, str(log_path))
    report_text(verify_store(fight.store, fight.fight_id))
    from omen_replay.render import HtmlWriter, render

    report = log_path.with_suffix(".html")
    with refusals(), output_file(report, "the session log") as page:
        render(StoreSource(fight.store, fight.fight_id), HtmlWriter(page))
    wrote(f"its session log written to {report}")
    shown = escape(str(log_path))
    out.print(f"[dim]log written to {shown} ({len(records)} events), session log to {escape(str(report))}; check "
              f"it yourself with: omen verify {shown}  |  omen explain {shown} SEQ  |  omen replay {shown} --steps[/]")


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
        bad_input(f"{log_path} holds fight {held[0]!r}, not a demo log; choose another --log")
    for extra in (log_path, *(log_path.with_name(log_path.name + side) for side in (".idx", ".lock", ".marks"))):
        extra.unlink(missing_ok=True)
    snapshots = log_path.with_name(log_path.name + ".snapshots")
    if snapshots.is_dir():
        for held_id in held:
            open_snapshots(str(log_path)).delete(held_id)


def run(
    scenario: Annotated[Path, typer.Argument(metavar="SCENARIO", help="A scenario file (TOML).")],
    log_url: Annotated[str, typer.Option("--log", metavar="LOG",
                                                  help="Where to write the fight: a .jsonl path, a directory, "
                                                       "sqlite:///path.db, postgresql://user@host/db, or memory: (not "
                                                       "kept).")] = "memory:",
    quiet: Annotated[bool, typer.Option("--quiet", help="Print only the end state, not the narrative.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the end state as JSON.")] = False,
    keep_seed: Annotated[bool, typer.Option("--keep-seed", help="A seeded fight that ends without revealing its "
                                                                "seed keeps it secret (by default omen run "
                                                                "reveals it then, C42).")] = False,
) -> None:
    """Run a scenario: start the fight, join its combatants, play its commands, and write the log; a seeded fight
    that ends with its seed unrevealed has it revealed at the end (C42), unless --keep-seed. The whole scenario is
    played before anything is printed: standard output full or closed ends the report (exit 3, saying what was
    written), never the fight halfway."""

    from omen_core.errors import OmenError
    from omen_replay.narrate import Narrator
    from omen_replay.replay import summarise
    from omen_replay.scenario import load_scenario, reveal_at_end, run_scenario

    written: list[list[StoredEvent]] = []  # each batch appended, narrated once the scenario is played
    loud = not (quiet or as_json)
    with refusals():
        loaded = load_scenario(scenario)
        check_log_parent(log_url)
        store = store_at(log_url)
        if loaded.settings.id in store.fights():
            bad_input(f"{log_url} already holds fight {loaded.settings.id!r}; choose another --log "
                       "or remove the old one")

        def tell(stored: list[StoredEvent]) -> None:
            if log_url not in KEPT_NOWHERE:  # a fight played in memory keeps nothing: a refusal there wrote nothing
                appended(stored, f"fight {loaded.settings.id!r} written to {log_url}")  # (it said "memory::")
            written.append(stored)

        try:
            fight = run_scenario(loaded, store, on_step=lambda step, stored: tell(stored), on_start=tell,
                                 snapshots=open_snapshots(log_url))
            revealed = [] if keep_seed else reveal_at_end(fight)  # at the end of a fight (C42)
        except OmenError:
            if loud:  # the story of what was written, then the refusal
                with contextlib.suppress(OSError):  # no standard output: the refusal (standard error) matters more
                    _narrate(Narrator(), written)
            raise
        if revealed:
            tell(revealed)
    if loud:
        _narrate(Narrator(), written)
    records = fight.events
    print_state(summarise(fight.state), as_json, log_url)
    if not as_json:
        kept = (f"played in {escape(log_url)} and not kept (give --log FILE to keep the log)"
                if log_url in KEPT_NOWHERE else f"written to {escape(str(log_url))}")
        out.print(f"[dim]{len(records)} events {kept}[/]")


def _narrate(narrator: Narrator, written: list[list[StoredEvent]]) -> None:
    """The session log's lines of each batch written, in order."""
    for stored in written:
        print_lines(narrator.lines(stored))
