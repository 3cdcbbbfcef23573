"""Generate a long, legal, deterministic fight log of exactly N events (JSON Lines), for the benchmarks.

The log is ONE fight played through the real engine (``omen_core.Fight``):
the Ember Ford cast (``fixtures/ember-ford/``) with its ruleset, seeded dice
(a fixed seed), a fixed clock, the same ambush and initiative as the
scenario, then round after round of turns. Every combatant has its HP
raised to 10,000,000 so nobody ever drops and the rounds go on for as long
as needed. Each turn a seeded policy picks what to do: engage and attack
with a melee weapon, shoot or throw, move out of reach (opening Attacks of
Opportunity), and how to answer every window (Active Defense, Interrupt and
Attack-of-Opportunity reactions, Catch, Rogue routing). The mix of event
types is therefore close to a real fight's.

To land on exactly N events the generator stops starting turns shortly
before N, pads with two-event ``engage`` commands (a three-event check
evens out an odd count), then ends the fight (``fight_ended``, GM's call)
and reveals the seed (``seed_revealed``), so the log is complete:
``omen verify`` recomputes every seeded die of it.

The files are what omen's own JSON Lines writers leave (schema version 2):

- ``<log>``: events sealed by the engine itself (``seal``: seqs 1..N, one
  hash chain, a ``command_issued`` opening every batch, ``batch`` and
  ``batch_size``);
- ``<log>.snapshots/<fight id>/<seq>.json``: the state after the batch that
  crosses each multiple of 500 events, written by the engine itself
  (``Fight.start(..., snapshots=FileSnapshots(...), snapshot_every=500)``,
  where ``omen run`` and ``omen undo`` keep them: ``open_snapshots(LOG)``);
- ``<log>.idx`` (the byte offset of every 1,024th line; only once a log has
  more than 1,024 events) and ``<log>.marks`` (the landmark index: undo and
  redo markers, the revealed seed), written by ``JsonlStore`` itself.

All but the last two commands are written straight to the file by a small
sink store that checks each batch with the stores' own ``check_batch`` (it
skips the lock, the fsync and the tail re-read of the JSON Lines store per
command, which would only slow generation down; the bytes are exactly
``encode_line(ev) + b"\\n"``). The last two commands (``end_fight`` and
``reveal_seed``) are appended through a real ``JsonlStore.single(path)``:
that append checks the file's last line (version and hash), builds the
missing ``.idx`` in one pass over the file (``jsonl._build_index``, as for
any log written elsewhere) and the missing ``.marks`` by its byte scan for
landmarks (``_Marks.update``), then appends to both as at every append.
``genlog.py --check N`` generates N events this way and again through a
real ``JsonlStore`` for every command, and compares every file byte for byte.

Files are cached in ``benchmarks/.cache/`` keyed by N and a fingerprint of
the log format (the stored event's JSON Schema) and of this generator, so
reruns are instant and a format change regenerates them. Run it directly to
(pre)generate logs::

    .venv/bin/python benchmarks/genlog.py 1000 100000 1000000

The 1M-event log (436 MB, and 2,000 snapshots of about 6 KB) takes 30-35 s once.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import logging
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402
import structlog  # noqa: E402

from omen_core import CheckSpec, Fight, SeededDice  # noqa: E402
from omen_core.content import CombatantSheet, load_sheet  # noqa: E402
from omen_core.errors import OmenError  # noqa: E402
from omen_core.events import (  # noqa: E402
    ActiveDefenseWindowOpened,
    CatchWindowOpened,
    InitiativeTied,
    ReactionWindowOpened,
    RoutingWindowOpened,
    StoredEvent,
    decode_line,
    encode_line,
    event_schema,
)
from omen_core.machine import Phase  # noqa: E402
from omen_core.store import FileSnapshots, JsonlStore  # noqa: E402
from omen_core.store.base import check_batch  # noqa: E402

__all__ = ["FIGHT_ID", "CACHE", "SNAPSHOT_EVERY", "log_path", "ensure_log", "generate", "quiet_logging", "sidecars",
           "copy_log", "link_log", "remove_log"]

GENERATOR_VERSION = 3
FIGHT_ID = "ember-ford-long"
SEED = bytes.fromhex("a11ce5eda11ce5eda11ce5eda11ce5eda11ce5eda11ce5eda11ce5eda11ce5ed")
POLICY_SEED = 20251130
START_MS = 1_796_097_600_000       # a fixed clock: this instant, then +1.5 s per command
STEP_MS = 1_500
HP = 10_000_000
MIN_EVENTS = 64
TURN_MARGIN = 150                  # stop starting turns this many events before N (a turn emits far fewer)
SNAPSHOT_EVERY = 500               # the engine's default: a snapshot after the batch crossing each multiple
SIDECARS = (".idx", ".marks", ".snapshots")   # what omen's JSON Lines writers keep beside a log
CACHE = Path(__file__).resolve().parent / ".cache"
SHEETS = ROOT / "fixtures" / "ember-ford" / "sheets"

# What each combatant may attack with: (weapon id, melee?)
ARSENAL = {
    "kael": [("longsword", True)],
    "brin": [("shortblade", True), ("bow", False)],
    "vesh": [("knife", True)],
    "skarn": [("maul", True), ("hatchet", False)],
}


def quiet_logging() -> None:
    """omen logs every append at debug level through structlog; benchmarks only want warnings."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


class _FileSink:
    """A write-only EventStore: checks each batch like every store, writes the exact JSON Lines bytes."""

    def __init__(self, fh: BinaryIO, path: Path) -> None:
        self._fh = fh
        self.location = str(path)
        self._version = 0
        self._last: str | None = None

    def append(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int) -> int:
        check_batch(fight_id, events, expected_version, self._version, self._last)
        self._fh.write(b"".join([encode_line(ev) + b"\n" for ev in events]))
        self._version += len(events)
        self._last = events[-1].hash
        return self._version

    def version(self, fight_id: str) -> int:
        return self._version

    def read(self, fight_id: str, after_seq: int = 0) -> Iterator[StoredEvent]:  # pragma: no cover - never read
        raise NotImplementedError("the generator's sink is write-only")

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Iterator[list[bytes]]:  # pragma: no cover
        raise NotImplementedError("the generator's sink is write-only")

    def landmarks(self, fight_id: str) -> list[StoredEvent]:  # pragma: no cover - never read
        raise NotImplementedError("the generator's sink is write-only")

    def fights(self) -> list[str]:
        return [FIGHT_ID] if self._version else []


def _cast() -> list[CombatantSheet]:
    sheets = [load_sheet(SHEETS / f"{who}.toml") for who in ("kael", "brin", "vesh", "skarn")]
    return [msgspec.structs.replace(s, hp=HP) for s in sheets]


def _answer_windows(fight: Fight, rng: random.Random) -> None:
    """Answer every open window until the fight is at rest or waiting on nothing."""
    while True:
        window = fight.waiting_for
        if window is None:
            return
        if isinstance(window, InitiativeTied):
            fight.roll_off()
        elif isinstance(window, ActiveDefenseWindowOpened):
            choice = rng.choice([*window.eligible, None, None]) if window.eligible else None
            try:
                fight.defend(window.defender, choice)
            except OmenError:
                fight.defend(window.defender, None)
        elif isinstance(window, ReactionWindowOpened):
            pending = fight.state.pending
            assert pending is not None  # a reaction window is open on an action
            who = next(w for w in window.responders if w not in pending.answered)
            if rng.random() < 0.5:
                try:
                    fight.react(who)
                    continue
                except OmenError:
                    pass
            fight.pass_reaction(who)
        elif isinstance(window, CatchWindowOpened):
            try:
                fight.catch(window.target, rng.random() < 0.3)
            except OmenError:
                fight.catch(window.target, False)
        elif isinstance(window, RoutingWindowOpened):
            fight.route(window.attacker, rng.choice([None, 0]))
        else:  # pragma: no cover - a new kind of window
            raise RuntimeError(f"the generator does not know how to answer {window!r}")


def _turn(fight: Fight, who: str, rng: random.Random) -> None:
    """One combatant's turn: maybe move out of reach, attack once (melee after engaging, or at range), end."""
    state = fight.state
    me = state.combatants[who]
    enemies = sorted(c.id for c in state.combatants.values() if c.side != me.side)
    engaged = [e for e in state.engaged_with(who) if e in enemies]
    if engaged and rng.random() < 0.15:
        fight.move(who, leaves=engaged)
        _answer_windows(fight, rng)
    target = rng.choice(enemies)
    weapon, melee = rng.choice(ARSENAL[who])
    if melee and not fight.state.engaged(who, target):
        fight.engage(who, target)
    with contextlib.suppress(OmenError):  # e.g. no Action left, or the weapon is not in hand: the turn just ends
        fight.attack(who, target, weapon=weapon)
    _answer_windows(fight, rng)
    fight.end_turn(who)
    _answer_windows(fight, rng)


def sidecars(path: Path) -> list[Path]:
    """The files omen's JSON Lines writers keep beside ``path`` (whether they exist or not)."""
    return [path.with_name(path.name + suffix) for suffix in SIDECARS]


def remove_log(path: Path) -> None:
    """Remove a log and every file omen keeps beside it."""
    path.unlink(missing_ok=True)
    for extra in sidecars(path):
        if extra.is_dir():
            shutil.rmtree(extra, ignore_errors=True)
        else:
            extra.unlink(missing_ok=True)


def copy_log(path: Path, folder: Path) -> Path:
    """Copy a log and its sidecars into ``folder`` (same file names); return the copy of the log."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / path.name
    shutil.copyfile(path, copy)
    for extra in sidecars(path):
        if extra.is_dir():
            shutil.copytree(extra, folder / extra.name)
        elif extra.exists():
            shutil.copyfile(extra, folder / extra.name)
    return copy


def link_log(path: Path, folder: Path) -> Path:
    """The log in ``folder`` with its ``.idx`` and ``.marks`` but WITHOUT its ``.snapshots`` (the log itself a hard
    link when the file system allows, else a copy): for read-only commands on "the same log without snapshots"."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / path.name
    try:
        os.link(path, copy)
    except OSError:
        shutil.copyfile(path, copy)
    for extra in sidecars(path):
        if extra.is_file():
            shutil.copyfile(extra, folder / extra.name)
    return copy


def generate(n: int, out: Path, *, progress: bool = False, fast: bool = True, reveal: bool = True) -> int:
    """Write a complete fight of exactly ``n`` events to ``out``, with its sidecars; return ``n``. ``reveal``
    False: the fight ends without its seed revealed.

    ``fast`` writes all but the last two commands through the sink (see the
    module's docstring); without it every command goes through a real
    ``JsonlStore`` (lock, tail check, fsync, index updates). The files are the
    same byte for byte (``--check N``). Everything is written in a fresh
    directory beside ``out`` and moved into place, the log last.
    """
    if n < MIN_EVENTS:
        raise ValueError(f"a generated log has at least {MIN_EVENTS} events")
    quiet_logging()
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        tmp = work / out.name
        version = _play(n, tmp, progress, fast, reveal)
        if version != n:  # pragma: no cover - the padding makes this exact
            raise RuntimeError(f"generated {version} events, wanted {n}")
        remove_log(out)
        for extra in sidecars(tmp):
            if extra.exists():
                os.replace(extra, out.with_name(extra.name))
        os.replace(tmp, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return n


def _play(n: int, path: Path, progress: bool, fast: bool, reveal: bool = True) -> int:
    rng = random.Random(POLICY_SEED)
    clock = itertools.count(START_MS, STEP_MS).__next__
    started = time.perf_counter()
    fh = open(path, "wb", buffering=1 << 20) if fast else None  # noqa: SIM115 (closed in the finally below)
    store = _FileSink(fh, path) if fh is not None else JsonlStore.single(path)
    snapshots = FileSnapshots(path.with_name(path.name + ".snapshots"))
    fight = Fight.start(store, FIGHT_ID, dice=SeededDice(SEED), clock=clock,
                        title="Ambush at the Ember Ford (the long version)",
                        snapshots=snapshots, snapshot_every=SNAPSHOT_EVERY)
    try:
        for sheet in _cast():
            fight.join(sheet)
        fight.ambush(["vesh", "skarn"], ["kael", "brin"], time_waited="one_to_two_minutes")
        fight.roll_initiative()
        _answer_windows(fight, rng)
        shown = 0
        while fight.version + TURN_MARGIN < n and fight.state.phase is Phase.ROUNDS:
            who = fight.state.turn
            assert who is not None, "between turns in the rounds phase"
            _turn(fight, who, rng)
            if progress and fight.version - shown >= 100_000:
                shown = fight.version
                rate = shown / (time.perf_counter() - started)
                print(f"  {shown:>9,} events  ({rate:,.0f} events/s)", file=sys.stderr)
        pair = ("kael", "vesh")
        flip = False
        if (n - fight.version) % 2:  # the padding below comes in twos: a three-event check evens it out
            fight.static_check(CheckSpec(who="kael", attribute="FCS"), difficulty=1)
        while fight.version < n - (4 if reveal else 2):  # pad with two-event commands (command_issued,
            # engagement_changed): the end (and the reveal) take the last
            fight.engage(*pair, engaged=flip)
            flip = not flip
    finally:
        if fh is not None:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
    # The last two commands go through omen's own JSON Lines store: it checks the file's last line, builds the
    # missing .idx and .marks over the whole file, and appends to them (two-event batches: command_issued + event).
    fight.store = JsonlStore.single(path)
    fight.end_fight("gm", note="benchmark log: the GM calls it")
    if reveal:  # without it, the log's end can be undone (a revealed seed is spent and its reveal never undone, C42)
        fight.reveal_seed()
    return fight.version


def format_key() -> str:
    """A short fingerprint of the log format (the stored event's JSON Schema) and of this generator.

    Cached logs are keyed by it, so a change to the envelope or to any event
    type, or to the snapshots' format, regenerates them instead of feeding the
    benchmarks stale lines or snapshots no one can use.
    """
    from omen_core.store.snapshots import STATE_FORMAT

    schema = msgspec.json.encode(event_schema(), order="sorted")
    return hashlib.sha256(schema + f"/generator {GENERATOR_VERSION}/state {STATE_FORMAT}".encode()).hexdigest()[:10]


def log_path(n: int, reveal: bool = True) -> Path:
    """Where the cached log of ``n`` events lives (``reveal`` False: the one whose seed is not revealed)."""
    return CACHE / f"{FIGHT_ID}-{format_key()}-{n}{'' if reveal else '-open'}.jsonl"


def _usable(path: Path) -> bool:
    """A cached log whose first and last lines still decode with the current types, with its sidecars."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
            f.seek(max(0, path.stat().st_size - 65536))
            last = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        decode_line(first)
        tail = decode_line(last)
    except (OSError, msgspec.DecodeError):
        return False
    idx, marks, snaps = sidecars(path)
    return marks.is_file() and (idx.is_file() or tail.seq <= 1024) and \
        (snaps / FIGHT_ID).is_dir() == (tail.seq >= SNAPSHOT_EVERY)


def ensure_log(n: int, *, progress: bool = True, reveal: bool = True) -> Path:
    """The cached log of ``n`` events (with its sidecars), generated first if missing; ``reveal`` False: the same
    fight ended but its seed not revealed (what an undo may still take back, C42)."""
    path = log_path(n, reveal)
    if path.is_file() and _usable(path):
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    kind = "" if reveal else "-open"
    for stale in CACHE.glob(f"{FIGHT_ID}-*-{n}{kind}.jsonl"):  # older formats of the same size, and their sidecars
        remove_log(stale)
    for stale in CACHE.glob(f"{FIGHT_ID}-*-{n}{kind}.jsonl.*"):  # sidecars of older generators (.lock files, say)
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)
    ignore = CACHE / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# generated benchmark logs and scratch files: never committed\n*\n!.gitignore\n")
    started = time.perf_counter()
    if progress:
        print(f"generating {path.name} ({n:,} events, once; cached afterwards)...", file=sys.stderr)
    generate(n, path, progress=progress, reveal=reveal)
    if progress:
        took = time.perf_counter() - started
        print(f"  done in {took:.1f} s ({n / took:,.0f} events/s)", file=sys.stderr)
    return path


def _tree(path: Path) -> dict[str, bytes]:
    """A log and its sidecars as {relative name: bytes}."""
    files = {path.name: path.read_bytes()}
    for extra in sidecars(path):
        if extra.is_file():
            files[extra.name] = extra.read_bytes()
        elif extra.is_dir():
            for f in sorted(extra.rglob("*")):
                if f.is_file():
                    files[str(f.relative_to(path.parent))] = f.read_bytes()
    return files


def check(n: int = 3000) -> bool:
    """Generate ``n`` events the fast way and through a real ``JsonlStore`` for every command; True if the log,
    ``.idx``, ``.marks`` and every snapshot file are byte-identical."""
    with tempfile.TemporaryDirectory() as tmp:
        fast_dir, real_dir = Path(tmp) / "fast", Path(tmp) / "real"
        fast_dir.mkdir()
        real_dir.mkdir()
        t0 = time.perf_counter()
        generate(n, fast_dir / "log.jsonl", fast=True)
        t1 = time.perf_counter()
        generate(n, real_dir / "log.jsonl", fast=False)
        t2 = time.perf_counter()
        fast, real = _tree(fast_dir / "log.jsonl"), _tree(real_dir / "log.jsonl")
    same = fast == real
    differ = sorted(k for k in fast.keys() | real.keys() if fast.get(k) != real.get(k))
    print(f"{n:,} events: sink + final appends {n / (t1 - t0):,.0f} events/s, a JsonlStore append per command "
          f"{n / (t2 - t1):,.0f} events/s; {len(fast)} files ({', '.join(sorted(k for k in fast if '/' not in k))}"
          f" and {sum('/' in k for k in fast)} snapshots): "
          + ("byte-identical" if same else f"DIFFER: {differ[:10]}"))
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("events", type=int, nargs="*", help="log sizes to generate (events)")
    parser.add_argument("--force", action="store_true", help="regenerate even if cached")
    parser.add_argument("--verify", action="store_true",
                        help="also replay each log (replay_store) and audit it (verify_store)")
    parser.add_argument("--check", type=int, metavar="N", default=0,
                        help="generate N events the fast way and through a JsonlStore per command; compare every file")
    args = parser.parse_args(argv)
    if args.check:
        return 0 if check(args.check) else 1
    if not args.events:
        parser.error("give at least one log size")
    for n in args.events:
        if args.force:
            remove_log(log_path(n))
        path = ensure_log(n)
        snaps = sidecars(path)[2] / FIGHT_ID
        count = len(list(snaps.glob("*.json"))) if snaps.is_dir() else 0
        print(f"{path}  {path.stat().st_size / 1e6:,.1f} MB, {count:,} snapshots")
        if args.verify:
            check_log(path)
    return 0


def check_log(path: Path) -> None:
    """Replay a generated log (``replay_store``, from its snapshots and without) and audit it (``verify_store``)."""
    from omen_core.store import open_snapshots
    from omen_replay.replay import replay_store
    from omen_replay.verify import verify_store

    store = JsonlStore.single(path)
    started = time.perf_counter()
    state = replay_store(store, FIGHT_ID)
    print(f"  replay: {state.version:,} events, phase {state.phase.value}, round {state.round} "
          f"({time.perf_counter() - started:.1f} s)")
    snaps = open_snapshots(str(path))
    if snaps.seqs(FIGHT_ID):
        middle = state.version // 2
        same = all(replay_store(store, FIGHT_ID, seq, snaps) == replay_store(store, FIGHT_ID, seq)
                   for seq in (middle, state.version))
        print(f"  snapshots: {len(snaps.seqs(FIGHT_ID)):,}; the state from them at seq {middle:,} and at the end "
              f"{'equals' if same else 'DIFFERS FROM'} the replay from seq 1")
    started = time.perf_counter()
    report = verify_store(store, FIGHT_ID)
    verdict = "clean" if report.clean else f"{len(report.problems)} findings, first: {report.problems[:3]}"
    print(f"  verify: {verdict}; {report.events:,} events, {report.seeded_dice:,} seeded dice checked, "
          f"{report.redecided:,} commands decided again, seed revealed: {report.seed_revealed} "
          f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    raise SystemExit(main())
