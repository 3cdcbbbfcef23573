"""The commands that read and keep logs: ``omen verify``, ``repair``, ``replay``, ``explain``, ``log``, ``snapshot``
and ``copy``."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO, cast

import typer

from .app import (
    LOG_HELP,
    bad_input,
    check_log_parent,
    open_existing_store,
    open_fight,
    open_snapshots,
    refusals,
    seed_option,
    seq_from,
    seq_value,
    store_at,
    usage_said,
    wrote,
)
from .console import FoldedLines, escape, out, print_lines, say, stdout, terminal_width
from .show import print_state, report_text

if TYPE_CHECKING:
    from omen_core.walk import Step
    from omen_replay.verify import Report

__all__ = ["verify_cmd", "repair", "replay_cmd", "explain_cmd", "log_cmd", "snapshot", "copy_cmd"]

def verify_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
    seed: Annotated[str | None, typer.Option(metavar="HEX", help="Check the dice against this seed (hex) even "
                                                  "if the log has not revealed it.")] = None,
    head: Annotated[list[str] | None, typer.Option(
        "--head", metavar="SEQ:HASH", help="A head witnessed earlier (repeatable): the log must pass through it.")]
    = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Exit 1 on undo re-rolls and dice provenance findings too (dice of another source than the "
                         "fight's, a change of source), not only on integrity findings.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable report (with the head it reached).")]
    = False,
) -> None:
    """Audit a log: chain, order, every command decided again, seed and dice, every derived number.
    Exit 1 on findings, 2 if unreadable."""

    import msgspec

    from omen_core.errors import BadInput
    from omen_replay.verify import parse_head, verify_store

    seed_bytes = seed_option(seed)
    try:
        heads = [parse_head(h) for h in head or ()]
    except BadInput as exc:  # a usage error: the option named, and its --help (a maintainer tester)
        bad_input(usage_said(f"--head: {exc}"))
    with refusals():
        store, fight_id = open_fight(log_url, fight)
        report = verify_store(store, fight_id, seed=seed_bytes, heads=heads)
    if as_json:
        stdout.write(msgspec.json.encode(_report_json(report)).decode() + "\n")
    else:
        report_text(report)
        if report.clean:  # a head that did not match, or lies past the end, is a finding: each given matched
            for h in sorted(heads, key=lambda h: h.seq):
                say(f"witnessed head {h.seq}:{h.hash[:16]}\u2026 matches: the log passes through it")
    raise typer.Exit(0 if (report.strict_clean if strict else report.clean) else 1)


def _report_json(report: Report) -> dict[str, object]:
    """The report as JSON, with whether it is clean (no integrity finding) and strictly clean (no finding)."""

    import msgspec

    return {**msgspec.to_builtins(report), "clean": report.clean, "strict_clean": report.strict_clean}


def repair(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help="A .jsonl log or a directory of them.")],
    fight: Annotated[str | None, typer.Option(metavar="ID",
                                              help="Which fight, if the directory holds several.")] = None,
) -> None:
    """Move what a crash mid-write left (a torn last line, a command's events cut short), and empty lines at the
    end, to a side file, so the log verifies and can be appended to. Other damage is refused (exit 2), naming it."""
    from omen_core.errors import TornTail
    from omen_core.store import JsonlStore
    from omen_core.store.jsonl import Repaired

    with refusals():
        try:
            store = store_at(log_url)
        except TornTail:  # a log whose only line is torn (a crash in a new fight's first write): repair is for it
            from omen_core.store import open_store

            store = open_store(log_url)
        if not isinstance(store, JsonlStore):
            bad_input(f"{log_url} is not a JSON Lines log; only those can have a torn tail (this store writes each "
                      "command's events in one transaction: a torn batch in it means rows were removed or edited "
                      "outside omen; omen verify says which command, and what can be copied out with omen copy "
                      "--to)")
        try:
            fight_id = open_fight(log_url, fight)[1]
        except TornTail:
            fight_id = fight or Path(log_url).stem  # a log whose only line is torn names no fight
        damage = _first_damage(store, fight_id)
        done = Repaired(None)
        if damage is not None:
            plan = store.repair_log(fight_id, dry_run=True)
            if not plan.line or _line_of(damage) < plan.line:  # before what repair removes: not a crash's
                bad_input(f"{damage}: damage omen repair does not remove (it removes only "
                          "what a crash leaves at a log's end, a torn last line or a command cut short, and empty "
                          "lines after the last complete line); nothing was changed; omen verify "
                          f"{shlex.quote(log_url)} lists what is wrong")
            done = store.repair_log(fight_id)
    if done.side is not None:
        wrote(f"{log_url} repaired: what a crash left moved to {done.side}")
    if done.side is None:
        out.print(f"nothing to repair: {escape(log_url)} ends with a complete command")
        return
    cut = []
    if done.events:
        cut.append(f"{done.events} of the {done.batch_size} events of the command at seq {done.batch}")
    if done.torn_bytes:
        cut.append(f"a torn last line ({done.torn_bytes} byte{'s' if done.torn_bytes != 1 else ''})")
    if done.empty_lines:
        cut.append(f"{done.empty_lines} empty line{'s' if done.empty_lines != 1 else ''} at its end")
    repaired = escape(str(done.side).rpartition(".torn-")[0] or log_url)  # the fight's own file (of a directory
    # store too: it named the directory, a tester)
    left = (f"{repaired} now ends at its last complete command" if done.line > 1 else
            f"{repaired} is now empty: the fight's first command never completed (start it again)")
    out.print(f"moved {' and '.join(cut)} to {escape(str(done.side))}; {left}")


def _first_damage(store: Any, fight_id: str) -> Exception | None:
    """The first thing a strict replay of the fight refuses (what every writer would refuse it for), or None if it
    replays: the log is read whole, its chain and framing checked and every event folded, no snapshot used."""
    from omen_core.errors import OmenError
    from omen_core.walk import StoreSource, replay

    try:
        replay(StoreSource(store, fight_id))
    except OmenError as exc:
        return exc
    return None


def _line_of(damage: Exception) -> int:
    """The line of the log ``damage`` is at, where it says (0 where it does not: taken to be before anything)."""
    line = getattr(damage, "line", None)
    return line if isinstance(line, int) else 0


def replay_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
    to: Annotated[int | None, typer.Option("--to", metavar="SEQ", parser=seq_value,
                                           help="Stop after the event with this seq.")] = None,
    steps: Annotated[bool, typer.Option("--steps", help="Step through: each event, then who stands how.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the state as JSON (with --steps: one line "
                                                         "per event).")] = False,
) -> None:
    """Rebuild a fight's state from its log (at the end, or at --to SEQ) and print it, or step through it."""

    from omen_core.walk import StoreSource
    from omen_core.walk import step_through as walk_steps
    from omen_replay.replay import replay_store, summarise

    with refusals():
        store, fight_id = open_fight(log_url, fight)
        last = store.version(fight_id)
        if to is not None and not 0 <= to <= last:
            bad_input(f"{log_url}: --to {to} is outside the log (seq 0, before its first event, to {last})")
        if steps:
            _print_steps(walk_steps(StoreSource(store, fight_id), to_seq=to), as_json)
            return
        snapshots = open_snapshots(log_url)
        state = replay_store(store, fight_id, to, snapshots if snapshots.seqs(fight_id) else None)
        later = undone_later(store.landmarks(fight_id), to) if to is not None and not as_json else ""
    print_state(summarise(state), as_json, log_url, fight)
    if later:
        say(f"[dim]{escape(later)}[/]")


def undone_later(landmarks: list[Any], seq: int) -> str:
    """What ``omen replay --to SEQ`` says of a seq an undo later in the log took back (and no redo brought back):
    which undo, why, and that the state shown is the fight as it stood then (it said nothing: a post-fight
    reviewer read an action the GM had taken back as standing); "" for any other seq."""
    from omen_core.walk import landmarks_of

    for u in landmarks_of(landmarks).undos:
        if u.seq > seq and u.from_seq <= seq <= u.to_seq and u.redone_at is None:
            why = f' ("{u.reason}")' if u.reason else ""
            return (f"seq {seq} was undone later: the undo at seq {u.seq} took back seqs {u.from_seq} to {u.to_seq}"
                    f"{why}. This is the fight as it stood at seq {seq}, before that undo; the log as it stands "
                    f"leaves those seqs out (--to {u.from_seq - 1} is where the undo went back to).")
    return ""


def _print_steps(steps: Iterator[Step], as_json: bool) -> None:
    """Each event, its narrative, and the resources after it (undone events marked, state unmoved)."""
    import msgspec

    from omen_replay.narrate import Narrator
    from omen_replay.replay import StepLine, summarise

    narrator = Narrator()
    for step in steps:
        rec, state, undone = step.rec, step.after, step.voided
        if as_json:
            line = StepLine(seq=rec.seq, type=str(type(rec.event).__struct_config__.tag), undone=undone,
                            state=summarise(state))
            stdout.write(msgspec.json.encode(line).decode() + "\n")
            continue
        told = list(narrator.tell(rec, undone))
        if not told:  # an event the narrative leaves silent (a command_issued): its seq and type, not a bare state
            tag = type(rec.event).__struct_config__.tag
            given = getattr(getattr(rec.event, "command", None), "__struct_config__", None)
            mark = escape("[undone] ") if undone else ""  # as the narrative marks the batch's other events
            out.print(f"[dim]#{rec.seq:<3} {mark}({escape(str(tag).replace('_', ' '))}"
                      + (f": {escape(str(given.tag))}" if given is not None else "") + ")[/]")
        print_lines(iter(told))
        hp = "  ".join(f"{c.sheet.name} {c.hp}/{c.sheet.hp}" for c in state.combatants.values())
        where = f"{state.phase.value}" + (f", round {state.round}" if state.round else "") + \
            (f", {state.step.value}" if not state.at_rest else "")
        out.print(f"[dim]      \u2514 {escape(where)} | {escape(hp)}[/]")


def explain_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    seq: Annotated[int, typer.Argument(metavar="SEQ", parser=seq_value,
                                       help="The seq of a roll, an attack (any of its events), a save or a check.")],
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
    seed: Annotated[str | None, typer.Option(metavar="HEX", help="Check seeded dice against this seed (hex).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable explanation.")] = False,
) -> None:
    """Explain a roll, an attack, a save or a check: every die, every bonus and its source, every rule."""

    import msgspec

    from omen_core.walk import StoreSource
    from omen_replay.explain import explain

    seed_bytes = seed_option(seed)
    with refusals():
        store, fight_id = open_fight(log_url, fight)
        found = explain(StoreSource(store, fight_id), seq, seed_bytes)
    if as_json:
        stdout.write(msgspec.json.encode(found).decode() + "\n")
        return
    out.print(f"[bold]{escape(found.title)}[/]  [dim](seq {found.seq})[/]")
    for die in found.dice:
        check = {True: " [green]seed confirms[/]", False: " [red]seed DISAGREES[/]", None: ""}[die.seed_confirms]
        history = f" ({escape(die.history())})" if die.history() else ""
        out.print(f"  die: roll at seq {die.seq} ({die.purpose}) by {die.roller}: {die.pool} "
                  f"d{die.sides} = {die.face}{history} {escape(f'[{die.source}]')}{check}")
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


def log_cmd(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    fmt: Annotated[LogFormatOut, typer.Option("--format", help="text, md (Markdown) or html (one self-contained "
                                                              "page: a card per action, round summaries, HP and "
                                                              "Will charts by round).")] = LogFormatOut.text,
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
                                                                  help="Write to this file instead of standard "
                                                                      "output.")] = None,
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
) -> None:
    """Write a fight's session log: a card per action (rolls, defense, hit, damage, resources), a summary at each
    round's start, every event by seq within its card (a reaction's card follows the action it answered,
    linked both ways), undone actions struck through, and the ending."""

    from omen_core.walk import StoreSource
    from omen_replay.output import output_file
    from omen_replay.render import WRITERS, render

    with refusals():
        store, fight_id = open_fight(log_url, fight)
        if output is None:
            width = terminal_width() if fmt is LogFormatOut.text else None  # Markdown and HTML: never folded
            folded = FoldedLines(width)
            render(StoreSource(store, fight_id), WRITERS[fmt.value](stdout if width is None else cast(TextIO, folded)))
            folded.close()
            return
        with output_file(output, "the session log") as page:
            render(StoreSource(store, fight_id), WRITERS[fmt.value](page))
    wrote(f"the session log written to {output}")
    out.print(f"session log written to {escape(str(output))}")


def snapshot(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Delete the fight's snapshots instead (they are only a "
                                                        "cache), and the folders that leaves empty.")] = False,
) -> None:
    """Take a snapshot of the fight's state now (a cache beside the log that speeds up replay --to and undo)."""
    import contextlib

    from omen_core import Fight
    from omen_core.errors import LogCorrupted

    with refusals():
        store, fight_id = open_fight(log_url, fight)
        snapshots = open_snapshots(log_url)
        if clear:
            with contextlib.suppress(LogCorrupted):  # (a torn or damaged log's snapshots are cleared all the same)
                store.version(fight_id)  # the log is looked at as every command does: a link out of the store refused
            held = len(snapshots.seqs(fight_id))
            snapshots.delete(fight_id)  # (called even with none: a folder that is a link is refused all the same)
            if held:
                wrote(f"the snapshots of {fight_id!r} deleted")
            _remove_emptied(snapshots, fight_id)
            out.print(f"deleted the {held} snapshot{'s' if held != 1 else ''} of {fight_id!r}; nothing else changes"
                      if held else f"{fight_id!r} had no snapshots to delete")
            return
        live = Fight.load(store, fight_id, snapshots=snapshots)
        live.snapshot()
        wrote(f"snapshot of {fight_id!r} at seq {live.version} saved")
    out.print(f"snapshot of {fight_id!r} at seq {live.version} saved")


def _remove_emptied(snapshots: Any, fight_id: str) -> None:
    """The folders of a snapshot cache on disk that clearing a fight's snapshots left empty, removed: the fight's
    (``LOG.snapshots/<fight>/``), then the cache's own if nothing else is in it. A folder holding anything (another
    fight's snapshots, a file someone left) stays, and a symbolic link is neither followed nor removed
    (docs/stores.md: :meth:`~omen_core.store.snapshots.FileSnapshots.delete` refused one already)."""
    from omen_core.store.snapshots import FileSnapshots

    if not isinstance(snapshots, FileSnapshots):
        return
    for folder in (snapshots.directory / fight_id, snapshots.directory):
        if folder.is_symlink() or not folder.is_dir():
            return
        try:
            folder.rmdir()  # only an empty folder; never through a link (rmdir follows none)
        except OSError:
            return


def copy_cmd(
    src_url: Annotated[str, typer.Argument(metavar="SRC", help="The store to copy from: a .jsonl log, a directory of "
                                                                "them, sqlite:///path.db or postgresql://user@host/db.")],
    dst_url: Annotated[str, typer.Argument(metavar="DST", help="The store to copy to (made if need be).")],
    fight: Annotated[str | None, typer.Option(metavar="ID",
                                              help="Copy this fight only (default: every fight of SRC).")] = None,
    to: Annotated[int | None, typer.Option("--to", metavar="SEQ", parser=seq_from(1),
                                           help="Copy the fight up to this seq only (from 1): the last seq of one "
                                                "of its commands (one fight: --fight, or SRC's only one).")] = None,
) -> None:
    """Copy fights between stores, every line byte for byte, the chain checked: a fight already in DST is
    completed if it is a prefix of SRC's (nothing to do if it is all there, or there and more), refused (exit 2) if it
    differs or if SRC ends with a torn batch (a JSON Lines log: run omen repair on it first; a database: copy the
    whole commands before it with --to). It copies the logs alone: a server's keep (seats, tokens, a seed not yet
    revealed) is not copied, so a server on DST cannot go on serving a copied fight (docs/stores.md, Back-up)."""
    from omen_core.store import MemoryStore
    from omen_core.store.url import creates_file
    from omen_replay.copy import plan_copy, write_copy

    first: dict[str, int] = {}

    def appended(fight_id: str, start: int, end: int) -> None:
        first.setdefault(fight_id, start)
        wrote(f"copied to {dst_url}: {fight_id} seqs {first[fight_id]}-{end}", f"copy {fight_id}")

    with refusals():
        src = open_existing_store(src_url)
        fights = [fight] if fight is not None else src.fights()
        if fight is not None and fight not in src.fights():
            bad_input(f"no fight {fight!r} in {src_url} (fights: {', '.join(src.fights()) or 'none'})")
        if not fights:
            bad_input(f"{src_url} holds no fight to copy")
        if to is not None and len(fights) != 1:
            bad_input(f"--to copies one fight: {src_url} holds {len(fights)}; choose one with --fight")
        check_log_parent(dst_url)
        dst = None if creates_file(dst_url) else store_at(dst_url)  # a new SQLite file: checked against an empty
        plans = plan_copy(src, MemoryStore() if dst is None else dst, fights, to)  # store, made only to be written
        done = write_copy(store_at(dst_url) if dst is None else dst, plans, appended)
    for c in done:
        if c.beyond:
            out.print(f"{c.fight_id}: already in {escape(dst_url)}, and more: it holds the source's {c.had} events "
                      f"then {c.beyond} more ({c.had + c.beyond} in all); nothing copied")
        elif not c.added:
            out.print(f"{c.fight_id}: already in {escape(dst_url)}, identical ({c.had} events)")
        elif c.had:
            out.print(f"{c.fight_id}: {c.added} events copied after the {c.had} already there (seqs {c.had + 1}-"
                      f"{c.had + c.added})")
        else:
            out.print(f"{c.fight_id}: {c.added} event{'s' if c.added != 1 else ''} copied")
