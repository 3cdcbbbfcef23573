"""A stored fight played from the shell: ``omen status``, ``do``, ``undo`` and ``redo``."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from .app import (
    LOG_HELP,
    appended,
    bad_input,
    open_fight,
    open_snapshots,
    refusals,
    say,
    seed_option,
    seq_value,
    wrote,
)
from .console import escape, fold, fold_command, fold_footer, out, print_lines, stdout, terminal_width
from .show import print_options, print_state, print_where

if TYPE_CHECKING:
    from omen_core.commands import Command
    from omen_core.errors import DiceError

__all__ = ["status", "do_cmd", "undo", "redo", "MAX_COMMAND_BYTES"]

MAX_COMMAND_BYTES = 1 << 20
"""The most a command given to ``omen do`` may take, as an argument or a file: 1 MiB."""


def status(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The options as JSON (the Options schema: omen schema "
                                                         "--of options).")] = False,
    every: Annotated[bool, typer.Option("--all", help="Every command each actor may give now, with its legal "
                                                      "arguments and dice.")] = False,
    seed: Annotated[str | None, typer.Option(metavar="HEX",
                                             help="The seed of a seeded fight (hex), so that the next: commands "
                                                  "roll with it (OMEN_SEED in the environment does too, unprinted)."
                                             )] = None,
) -> None:
    """Where the fight is, whose turn, what it waits for, each combatant in a line, and the omen do commands of the
    likely choices, ready to paste (--all: every command accepted now; --json: the options)."""
    from omen_core import Fight

    from .status import SeedKnown, published_seed, status_lines

    given = seed_option(seed)
    with refusals():
        store, fight_id = open_fight(log_url, fight)
        live = Fight.load(store, fight_id, snapshots=open_snapshots(log_url))
        found = live.options()
    from omen_core.dice import commitment

    state = live.state
    known: SeedKnown | None = None
    env = os.environ.get("OMEN_SEED", "").strip()
    if given is not None or (env and state.seed_commitment is not None):  # OMEN_SEED: for the seeded fights
        raw = given if given is not None else seed_option(env)
        assert raw is not None
        if state.seed_commitment != commitment(raw):
            why = _seed_mismatch(log_url, fight_id, state.dice, state.seed_commitment is not None,
                                 f"the seed given ({'--seed' if given is not None else 'OMEN_SEED'})") \
                + _spent(store, fight_id, raw)
            if given is not None:
                bad_input(why)
            say(f"omen: warning: {why}; shown without it")  # the seed is needed only to roll: the fight shows
        else:
            known = SeedKnown(raw.hex(), printed=given is not None)
    elif state.revealed_seed:
        known = SeedKnown(state.revealed_seed, printed=True)
    elif (public := published_seed(state.seed_commitment)) is not None:
        known = SeedKnown(public.hex(), printed=True)
    if as_json or every:  # (a --seed that is not the fight's refused in every form: --json said nothing of it)
        print_options(found, as_json, state)
        return
    width = terminal_width()  # folded at a terminal's width, never a command to paste parted inside a word
    *lines, footer = status_lines(found, state, log_url, known, fight)  # --fight given: a store of several needs it
    for line in lines:
        pieces = fold_command(line, width) if line.startswith("  omen ") else fold(line, width, _hang(line))
        for piece in pieces:
            out.print(piece, markup=False, soft_wrap=True)
    head, _, said = footer.partition("  (")  # head H  (omen status LOG --all lists ...): the command folded to paste
    command, _, rest = said.rpartition(" --all ")
    for piece in fold_footer(head.removeprefix("head "), f"{command} --all", rest.removesuffix(")"), width):
        out.print(piece, markup=False, soft_wrap=True)


def _hang(line: str) -> str:
    """Where a status line folded goes on: a combatant's under its name, any other two columns in from its
    start."""
    lead = len(line) - len(line.lstrip(" ▶"))
    return " " * (lead + 2)


def _seed_mismatch(log_url: str, fight_id: str, dice: str | None, committed: bool, given: str) -> str:
    """Why a seed given is refused: it does not hash to the fight's seed commitment, or the fight has none (its
    dice are manual or scripted: no seed to match, so none to give)."""
    if committed:
        return f"{log_url}: {given} does not hash to the seed commitment of fight {fight_id!r}"
    kind = f"{dice} dice, not seeded" if dice else "no seeded dice"
    return (f"{log_url}: fight {fight_id!r} has {kind}: it has no seed (no seed commitment) for {given} to match; "
            "leave it out")


def _no_seed_to_reveal(log_url: str, fight: str | None) -> None:
    """Refuse (exit 2) a ``reveal_seed`` in a fight whose dice are not seeded: it has no seed to give (asking for one
    sent the user on to a refusal of the seed given)."""
    from omen_core.events import FightStarted

    store, fight_id = open_fight(log_url, fight)
    first = next((rec.event for rec in store.read(fight_id)), None)
    if isinstance(first, FightStarted) and first.seed_commitment is None:
        bad_input(f"{log_url}: fight {fight_id!r} has {first.dice} dice, not seeded: it has no seed to reveal")


def _spent(store: Any, fight_id: str, raw: bytes) -> str:
    """If ``raw`` is a seed the fight revealed (C42: spent), where it was revealed and where the fight committed to
    the fresh seed its dice come from now; else nothing."""
    from omen_core.events import SeedCommitted, SeedRevealed

    revealed = next((e.seq for e in store.landmarks(fight_id)
                     if isinstance(e.event, SeedRevealed) and e.event.seed == raw.hex()), None)
    if revealed is None:
        return ""
    fresh = None  # the commitment in force: the last one made, unless a reveal since has spent it too
    for e in store.read(fight_id, revealed):
        if isinstance(e.event, SeedCommitted):
            fresh = e.seq
        elif isinstance(e.event, SeedRevealed):
            fresh = None
    return f": it is the seed revealed at seq {revealed}, spent (C42)" + (
        f"; the fight's dice come from the fresh seed committed to at seq {fresh}: give that one" if fresh else "")


def _unspent_next_seed(store: Any, fight_id: str, revealing: str, following: bytes) -> None:
    """Refuse a ``--next-seed`` that is a revealed seed (C42: spent, the dice drawn under it again predictable by
    anyone holding the log): the seed this ``reveal_seed`` reveals, or one the fight revealed before (exit 2)."""
    from omen_core.events import SeedRevealed

    why = "a revealed seed is spent (C42): dice drawn under it again would be predictable by anyone holding the log"
    if following.hex() == revealing.lower():
        bad_input(f"--next-seed is the seed this reveal_seed reveals: {why}; give a fresh seed (or leave "
                  "--next-seed out: omen makes one)")
    revealed = next((e.seq for e in store.landmarks(fight_id)
                     if isinstance(e.event, SeedRevealed) and e.event.seed == following.hex()), None)
    if revealed is not None:
        bad_input(f"--next-seed is the seed revealed at seq {revealed}: {why}; give a fresh seed (or leave "
                  "--next-seed out: omen makes one)")


def _not_json_of_another_kind(text: str, origin: str) -> None:
    """Refuse JSON that is no object (an array, a string, a number) as such: read as TOML it gave a TOML syntax
    error that said nothing of what was wrong."""
    import msgspec

    from omen_core.errors import ContentError

    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return
    kind = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(type(value), "a number")
    raise ContentError(origin, "$", f"a command is a JSON object ({{\"command\": ...}}) or a TOML table "
                                    f"(command = \"...\"), not {kind}", 1)


def _parse_command(text: str, origin: str) -> Command:
    """A command given as JSON (an object) or TOML (a table with ``command = "..."``); errors name the field."""
    from omen_core.commands import Command
    from omen_core.content import decode_content
    from omen_core.errors import BadInput, ContentError, OmenError

    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write first is no part of the command
    fmt: Literal["json", "toml"] = "json" if text.lstrip().startswith("{") else "toml"
    if fmt == "toml":
        _not_json_of_another_kind(text, origin)
    try:
        return decode_content(text, Command, source=origin, fmt=fmt)  # type: ignore[arg-type]
    except ContentError as exc:
        if "`command`" in exc.reason and "given twice" not in exc.reason:
            # a name left out: say the names (one mistyped is said by decode_content: "; one of: ...")
            from typing import get_args

            names = sorted(str(kind.__struct_config__.tag) for kind in get_args(Command))
            raise ContentError(exc.source, exc.path, f"{exc.reason}; a command is one of: {', '.join(names)}",
                               exc.line) from None
        raise
    except OmenError:
        raise
    except Exception as exc:
        raise BadInput(f"{origin}: not a command: {exc}") from None


def _undone_at(store: Any, fight_id: str, seq: int) -> int | None:
    """The seq of the undo that voids the event at ``seq`` now (not redone since), or None: a retry of a command
    found done says so, for the fight does not stand as if it were (a bot read ``already_done`` as done)."""
    from omen_core.walk import StoreSource, landmarks_of

    marks = landmarks_of(StoreSource(store, fight_id).log_landmarks())
    return next((u.seq for u in marks.undos if u.redone_at is None and u.from_seq <= seq <= u.to_seq), None)


def do_cmd(
    ctx: typer.Context,
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    command: Annotated[str | None, typer.Argument(metavar="COMMAND",
                                                  help="The command, as JSON ('{\"command\": \"end_turn\", "
                                                       "\"who\": \"vesh\"}') or TOML ('command = \"end_turn\"' "
                                                       "and its fields); faces in its dice field.")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", metavar="FILE",
                                                              help="Read the command from this file (.json or "
                                                                   ".toml); - reads it from standard input.")]
    = None,
    seed: Annotated[str | None, typer.Option(envvar="OMEN_SEED", show_envvar=True,
                                             metavar="HEX",
                                             help="The seed of a seeded fight (hex), to roll its dice, or the "
                                                  "seed reveal_seed reveals; or give the faces in the command.")
                                             ] = None,
    next_seed: Annotated[str | None, typer.Option(
        "--next-seed", metavar="HEX",
                       help="For reveal_seed in a fight that goes on: the fresh seed (hex, at least 16 bytes) the "
                            "dice are drawn from next (C42); by default a random one, printed on standard error "
                            "once.")] = None,
    by: Annotated[str, typer.Option(metavar="WHO", help="Who gives the command, for the record.")] = "",
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
    idempotency_key: Annotated[str | None, typer.Option(
        "--idempotency-key", metavar="KEY",
                             help="A key for this command, recorded with it: run again with the same key (after "
                                  "exit 3, or when unsure whether it went through), the command is found done and "
                                  "not done twice.")] = None,
    expected_version: Annotated[int | None, typer.Option(
        "--expected-version", metavar="SEQ", min=0,
        help="The head's seq you last saw (omen status --json: seq): if the fight has moved on since, nothing "
             "is written and omen do exits 1 (a lost race: read the fight again and decide).")] = None,
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
    from omen_core.dice import FacesNeeded, SurplusFaces
    from omen_core.errors import ConcurrencyError, InvalidDieFace, RuleViolation
    from omen_core.events import DiceRolled
    from omen_core.walk import StoreSource, done_under_key
    from omen_replay.narrate import Narrator
    from omen_replay.replay import DoResult

    source = ctx.get_parameter_source("seed")  # typer's click may be its own: the source told by name
    from_env = getattr(source, "name", "") == "ENVIRONMENT"  # OMEN_SEED, not --seed
    seed_bytes = seed_option(seed)
    following = seed_option(next_seed, "--next-seed")
    if following is not None and len(following) < 16:
        bad_input("--next-seed: a dice seed is at least 16 bytes of hex")
    if file is not None and str(file) == "-":  # the command on standard input (a pipe, a here-document)
        if command is not None:
            bad_input("give the command as an argument or with --file, not both or neither")
        command, file = _stdin_command(), None
    with refusals():
        parsed = _given_command(command, file)
        if following is not None and not isinstance(parsed, RevealSeed):
            bad_input(f"--next-seed is for reveal_seed only (the fresh seed the dice are drawn from after the seed is "
                      f"revealed, C42), not for {parsed.__struct_config__.tag}: leave it out")
        if idempotency_key is not None:
            parsed = _validated_key(parsed, idempotency_key)
        if isinstance(parsed, RevealSeed) and parsed.seed and seed_bytes is None:  # the seed in the command: the
            seed_bytes = seed_option(parsed.seed, "the command's seed")  # fight's dice, to commit to a fresh one
        if isinstance(parsed, RevealSeed) and not parsed.seed:
            if seed_bytes is None:
                _no_seed_to_reveal(log_url, fight)
                bad_input("reveal_seed needs the seed: give it in the command (\"seed\": \"<hex>\") or with "
                           "--seed HEX")
            parsed = msgspec.structs.replace(parsed, seed=seed_bytes.hex())
        store, fight_id = open_fight(log_url, fight)
        if following is not None and isinstance(parsed, RevealSeed):
            _unspent_next_seed(store, fight_id, parsed.seed, following)
            from omen_core.dice import commitment

            if parsed.next_commitment and parsed.next_commitment != commitment(following):
                bad_input("--next-seed and the command's next_commitment both name the fresh seed (C42), and they "
                          "differ: --next-seed does not hash to it; give one of them")
        fresh: str | None = None  # the fresh seed a reveal made here, in --json's output (C42)
        done = done_under_key(StoreSource(store, fight_id), parsed)  # a retry: done already (the key names the
        # command; --by is only for the record, so a retry by another name is the same command)
        dice = SeededDice(seed_bytes, successors=[following] if following else ()) if seed_bytes is not None \
            else ManualDice()
        live = Fight.load(store, fight_id, dice=dice, snapshots=open_snapshots(log_url))
        if done:
            stored, before = done, live.state_after(done[0].seq - 1)
        else:
            if seed_bytes is not None and live.state.seed_commitment != dice.commitment:  # type: ignore[union-attr]
                why = _seed_mismatch(log_url, fight_id, live.state.dice, live.state.seed_commitment is not None,
                                     "OMEN_SEED" if from_env else "--seed") + _spent(store, fight_id, seed_bytes)
                if not from_env or isinstance(parsed, RevealSeed):
                    bad_input(why)
                say(f"omen: warning: {why}; going on without it (a command that rolls dice needs the seed in force "
                    "or its faces)")
                seed_bytes, live.dice = None, ManualDice()
            if seed_bytes is None and live.state.dice == "seeded" and parsed.dice is None:
                live.dice = ManualDice()
            if following is not None and live.state.ending is not None:
                bad_input(f"--next-seed: fight {fight_id!r} is over, so no fresh seed follows this reveal (C42: a "
                          "fight that has ended commits to none): leave --next-seed out")
            if expected_version is not None and expected_version != live.version:  # decided on a state the
                # caller never saw: not done (as the server's expected_version; two bots' undos both went through)
                raise ConcurrencyError(fight_id, expected_version, live.version)
            before = live.state
            # faces given in a seeded fight with its seed in force roll the command's first dice, the seed the
            # rest, as the server does (docs/live.md); without the seed, the faces are all its dice
            then_roll = parsed.dice is not None and isinstance(live.dice, SeededDice)
            try:
                stored = live.execute(parsed, by=by, then_roll=then_roll)
            except FacesNeeded as exc:
                seedless = live.state.dice == "seeded" and seed_bytes is None
                raise _at_dice(exc, parsed, command, file, f"{exc} (or give --seed HEX to roll this seeded fight's "
                               "own dice)" if seedless else str(exc)) from None
            except (SurplusFaces, InvalidDieFace) as exc:
                raise _at_dice(exc, parsed, command, file) from None
            except RuleViolation as exc:
                raise _placed(exc, parsed, command, file) from None
            except ConcurrencyError:  # another writer came first: with this command under this key, a retry raced
                done = done_under_key(StoreSource(store, fight_id), parsed)  # its first try, which is done: so is
                if not done:  # this one (docs/live.md, "Retries")
                    raise
                live = Fight.load(store, fight_id, dice=dice, snapshots=open_snapshots(log_url))
                stored, before = done, live.state_after(done[0].seq - 1)
            else:
                appended(stored)
                fresh = _say_fresh_seed(live, dice, following is None)
        found = live.options(offers=as_json or show_options)
        undone_at = _undone_at(store, fight_id, stored[0].seq) if done else None
    if as_json:
        stdout.write(msgspec.json.encode(DoResult(events=tuple(stored), options=found, already_done=bool(done),
                                                  undone_at=undone_at, next_seed=fresh)).decode() + "\n")
        if done and (told := _recorded_by(stored[0].event, by)):  # beside the JSON, as a note on standard error
            say(f"omen: note: the command was done before{told}")
        return
    if done:
        out.print(f"[yellow]already done:[/] the command with idempotency key {escape(repr(parsed.idempotency_key))} "
                  f"was appended at seq {stored[0].seq} to {stored[-1].seq}; nothing appended now"
                  + _recorded_by(stored[0].event, by)
                  + (f"; it was undone since (the undo at seq {undone_at}): the fight stands as if it had not been "
                     "given" if undone_at is not None else ""))
    narrator = Narrator(state=before)
    if any(isinstance(rec.event, DiceRolled) and rec.event.rerolls is not None for rec in stored) and before.stack:
        # a reroll (C39) rerolls a die of the action in progress: its rolls, read from the action's start
        narrator.recall(rec for rec in store.read(fight_id, before.stack[0].declared_at - 1)
                        if rec.seq < stored[0].seq)
    print_lines(narrator.lines(stored))
    if show_options:
        print_options(found, False, live.state)
        return
    print_where(found, live.state)
    chosen = f" --fight {shlex.quote(fight)}" if fight is not None else ""  # a store of several needs it
    folded = fold_footer(found.head, f"omen status {shlex.quote(log_url)}{chosen} --all", "lists every command "
                         "accepted now", terminal_width())  # the head whole, the command folded to paste
    if len(folded) == 1:
        out.print(f"head {found.head}  [dim]{escape(folded[0].partition('  ')[2])}[/]", soft_wrap=True)
    for n, piece in enumerate(folded if len(folded) > 1 else ()):
        out.print(f"[dim]{escape(piece)}[/]" if n else escape(piece), soft_wrap=True)


def _written(command: str | None, file: Path | None) -> tuple[str, str, Literal["json", "toml"]] | None:
    """Where a command given to ``omen do`` is written, to name a place in it: its source (the file, or "the
    command"), its text and its format; None if the file is gone since it was read."""
    from omen_core.content import read_content
    from omen_core.errors import ContentError

    try:
        text = (read_content(file, MAX_COMMAND_BYTES) if file is not None else command or "").removeprefix("\ufeff")
    except ContentError:
        return None
    return (str(file) if file is not None else "the command", text,
            "json" if text.lstrip().startswith("{") else "toml")


def _placed(refused: Any, parsed: Command, command: str | None, file: Path | None) -> Any:
    """A refusal naming a field of the command, named where it is written: the file (or "the command"), the line
    and the field's path (``attack.toml:4: [C4] ... (at $.weapon)``); a join's sheet as a scenario names it
    (``join.toml:9: the rules refuse this combatant: ... (at $.sheet.abilities[1])``); any other refusal as it
    is."""
    from omen_core.commands import Join
    from omen_core.content import placed_refusal, refused_sheet

    written = _written(command, file) if refused.field_under("$") is not None else None
    if written is None:
        return refused
    source, text, fmt = written
    if isinstance(parsed, Join):
        return refused_sheet(refused, source, text, fmt, "$.sheet") or refused
    return placed_refusal(refused, source, text, fmt) or refused


def _at_dice(refused: DiceError, parsed: Command, command: str | None, file: Path | None,
             words: str | None = None) -> DiceError:
    """Too few or too many faces for the dice a command rolls, or a face its die cannot show, named at its ``dice``
    (a face: at its own place, ``$.dice[2]``) where the command is written (``roll.json:3: ... (at $.dice)``; a
    command carrying no ``dice``: at the line naming the command), as the server names ``$.command.dice``, in
    ``words`` (by default the refusal's own), its kind and rule kept (``--json`` says ``FacesNeeded``, C29); as it
    is if the file it came from is gone since."""
    from omen_core.errors import InvalidDieFace
    from omen_core.locate import Lines

    written = _written(command, file)
    if written is None:
        if words is not None:
            refused.args = (words,)
        return refused
    source, text, fmt = written
    at = f"$.dice[{refused.index}]" if isinstance(refused, InvalidDieFace) and refused.index is not None else "$.dice"
    lines = Lines(text, fmt)
    return refused.placed(source, at, lines(at) if parsed.dice is not None else lines("$.command"), words)


def _recorded_by(issued: Any, by: str) -> str:
    """What a retry given with another ``--by`` is told: who the command is recorded as given by (--by is only for
    the record; the idempotency key names the command)."""
    recorded = getattr(issued, "by", by)
    if recorded == by:
        return ""
    given = f"given by {escape(repr(recorded))}" if recorded else "given with no --by"
    return (f" (recorded as {given}; --by {escape(repr(by))} now changes nothing: --by is only for the "
            "record)")


def _say_fresh_seed(live: Any, dice: Any, made_here: bool) -> str | None:
    """After a reveal in a fight that goes on (C42): the fight's dice now come from a fresh seed; one made here
    is said once, on standard error (it is as secret as the first: the log holds only its commitment), and
    returned, in hex, for ``--json``'s ``next_seed``; None where there is none, or it was given."""
    if live.dice is dice or not hasattr(live.dice, "seed"):
        return None
    shown = live.dice.seed.hex() if made_here else "the one given with --next-seed"
    say(f"omen: the seed revealed is spent (C42): this fight's dice now come from a fresh seed, committed to at "
        f"seq {live.version}: {shown}. Keep it secret; give it as --seed (or OMEN_SEED) from now on.")
    return str(live.dice.seed.hex()) if made_here else None


def _stdin_command() -> str:
    """The command read from standard input (``--file -``): at most 1 MiB of UTF-8."""
    data = sys.stdin.buffer.read(MAX_COMMAND_BYTES + 1)
    if len(data) > MAX_COMMAND_BYTES:
        bad_input("the command on standard input is larger than 1 MiB, the most a command may be")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_input(f"the command on standard input is not valid UTF-8: byte 0x{data[exc.start]:02x} at offset "
                  f"{exc.start}")


def _given_command(command: str | None, file: Path | None) -> Command:
    """The command given as an argument or in a file (exactly one of the two)."""
    if (command is None) == (file is None):
        bad_input("give the command as an argument or with --file, not both or neither")
    if file is not None:
        from omen_core.content import read_content

        text, source = read_content(file, MAX_COMMAND_BYTES), str(file)
    else:
        assert command is not None
        if len(command.encode("utf-8", "surrogatepass")) > MAX_COMMAND_BYTES:
            bad_input("the command is larger than 1 MiB, the most a command may be")
        text, source = command, "the command"
    if not text.strip("\ufeff \t\r\n"):  # (it read as an object missing its `command`: a bot tester)
        bad_input(f"{source} is empty: give one command, as JSON ('{{\"command\": \"end_turn\", \"who\": \"vesh\"}}') "
                  "or TOML ('command = \"end_turn\"' and its fields)")
    return _parse_command(text, source)


def _validated_key(parsed: Command, key: str) -> Command:
    """``parsed`` carrying idempotency key ``key`` (checked as a command's field is); a command that carries
    another key already is bad input."""
    import msgspec

    if parsed.idempotency_key not in (None, key):
        bad_input(f"--idempotency-key {key!r} and the command's own idempotency_key "
                   f"{parsed.idempotency_key!r} differ")
    return _parse_command(msgspec.json.encode(msgspec.structs.replace(parsed, idempotency_key=key)).decode(),
                          "--idempotency-key")


def undo(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    to: Annotated[int | None, typer.Option("--to", metavar="SEQ", parser=seq_value,
                                                   help="Undo everything from this seq on (a command's first "
                                                        "event, with no action in progress before it).")] = None,
    reason: Annotated[str, typer.Option(metavar="TEXT", help="Why, for the record.")] = "",
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
) -> None:
    """Undo the last command (or back to --to SEQ) by appending an event that voids it; nothing is erased. An
    undo goes back to a point with no action in progress: mid-action, to the action's declaration."""

    from omen_core import Fight
    from omen_replay.replay import summarise

    if to is not None and to < 1:
        bad_input(f"--to must be at least 1 (the seq of the first event to undo), not {to}")
    with refusals():
        store, fight_id = open_fight(log_url, fight)
        live = Fight.load(store, fight_id, snapshots=open_snapshots(log_url))
        first = live.version + 1
        done = live.undo(to, reason)
        wrote(f"the undo appended at seq {first} to {live.version} with head {live.version}:{live.state.last_hash}")
    out.print(f"undone: seq {done.from_seq} to {done.to_seq}, back to the command at seq {done.from_seq} "
              f"(recorded at seq {live.version}; `{escape(_redo_hint(log_url, fight))}` takes it back)", soft_wrap=True)
    taken = _commands_undone(store, fight_id, done, first)
    for line in taken[:UNDONE_LISTED]:
        out.print(f"  {escape(line)}", soft_wrap=True)
    if len(taken) > UNDONE_LISTED:
        out.print(f"  and {len(taken) - UNDONE_LISTED} more command(s) (omen log {escape(log_url)} strikes out each)",
                  soft_wrap=True)
    print_state(summarise(live.state), False, log_url, fight)


#: The most commands an undo's confirmation lists one by one.
UNDONE_LISTED = 10


def _commands_undone(store: Any, fight_id: str, done: Any, undo_at: int) -> list[str]:
    """The commands an undo took back, each in a line (its seq, the command as given: a GM finds there what to
    give again, its faces too), skipping those an earlier undo had taken back already and undos and redos."""
    from omen_core.commands import Redo, Undo
    from omen_core.events import CommandIssued
    from omen_core.walk import landmarks_of
    from omen_replay.explain import command_said

    voided = landmarks_of(store.landmarks(fight_id)).upto(undo_at - 1).voided()
    lines = []
    for rec in store.read(fight_id, after_seq=done.from_seq - 1):
        if rec.seq > done.to_seq:
            break
        if rec.seq == rec.batch and rec.seq not in voided and isinstance(rec.event, CommandIssued) \
                and not isinstance(rec.event.command, Undo | Redo):
            lines.append(f"seq {rec.seq}: {command_said(rec.event)}")
    return lines


def _redo_hint(log_url: str, fight: str | None) -> str:
    """The ``omen redo`` that takes back an undo of ``fight`` in ``log_url``, as a shell line: with ``--fight`` if
    the undo named one (a store holding several fights needs it), each word quoted where a shell would split it (a
    PostgreSQL URL's ``?`` and ``&``)."""
    import shlex

    return f"omen redo {shlex.quote(log_url)}" + (f" --fight {shlex.quote(fight)}" if fight is not None else "")


def redo(
    log_url: Annotated[str, typer.Argument(metavar="LOG", help=LOG_HELP)],
    reason: Annotated[str, typer.Option(metavar="TEXT", help="Why, for the record.")] = "",
    fight: Annotated[str | None, typer.Option(metavar="ID", help="Which fight, if the store holds several.")] = None,
) -> None:
    """Take back the last undo, if nothing has been done since."""

    from omen_core import Fight
    from omen_replay.replay import summarise

    with refusals():
        store, fight_id = open_fight(log_url, fight)
        live = Fight.load(store, fight_id, snapshots=open_snapshots(log_url))
        first = live.version + 1
        done = live.redo(reason)
        wrote(f"the redo appended at seq {first} to {live.version} with head {live.version}:{live.state.last_hash}")
    out.print(f"redone: the undo at seq {done.undo_seq} no longer applies")
    print_state(summarise(live.state), False, log_url, fight)
