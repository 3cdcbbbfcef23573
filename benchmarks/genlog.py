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
before N, pads with single-event ``engage`` commands, then ends the fight
(``fight_ended``, GM's call) and reveals the seed (``seed_revealed``), so
the log is complete: ``omen verify`` recomputes every seeded die of it.

Events are sealed by the engine itself (``seal``: seqs 1..N, one hash
chain, the engine's own ``batch`` per command). They are written straight to
the file by a small sink store that checks each batch with the stores' own
``check_batch`` (it skips the fsync and the re-reading of the JSON Lines
store, which would only slow the generation down; the bytes are exactly
``encode_line(ev) + b"\\n"``).

Speed: live play checks every emitted event on ``transitions`` state
machines, which costs far more than the rest of the engine (about 1,000-1,400
events/s here, so 12+ minutes for 1M events). While generating, the
generator swaps them for the lookup tables ``omen_core.machine`` derives from
those same machines for replay (``ORDER``, ``PHASE_ORDER``); the engine then
writes the very same bytes about 10x faster (``--check-shim N`` generates N
events both ways and compares the files). If the shim stops fitting the
engine's internals, the generator says so and falls back to the unmodified
engine. Every generated log replays with ``project`` and, at 1k and 100k
events, ``omen verify`` finds it clean (docs/performance.md).

Files are cached in ``benchmarks/.cache/`` keyed by N and a fingerprint of
the log format (the stored event's JSON Schema) and of this generator, so
reruns are instant and a format change regenerates them. Run it directly to
(pre)generate logs::

    .venv/bin/python benchmarks/genlog.py 1000 100000 1000000

The 1M-event log (about 420 MB) takes a minute or so once.
"""

from __future__ import annotations

import argparse
import contextlib
import filecmp
import hashlib
import itertools
import logging
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402
import structlog  # noqa: E402

from omen_core import CheckSpec, Fight, SeededDice  # noqa: E402
from omen_core.content import load_sheet  # noqa: E402
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
from omen_core.machine import (  # noqa: E402
    ORDER,
    PHASE_ORDER,
    IllegalOrder,
    Phase,
    Step,
    legal_triggers,
)
from omen_core.store.base import check_batch  # noqa: E402

__all__ = ["FIGHT_ID", "CACHE", "log_path", "ensure_log", "generate", "quiet_logging"]

GENERATOR_VERSION = 2
FIGHT_ID = "ember-ford-long"
SEED = bytes.fromhex("a11ce5eda11ce5eda11ce5eda11ce5eda11ce5eda11ce5eda11ce5eda11ce5ed")
POLICY_SEED = 20251130
START_MS = 1_796_097_600_000       # a fixed clock: this instant, then +1.5 s per command
STEP_MS = 1_500
HP = 10_000_000
MIN_EVENTS = 64
TURN_MARGIN = 150                  # stop starting turns this many events before N (a turn emits far fewer)
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


class _TableMachine:
    """The little of a ``transitions.Machine`` that live play touches: set the state, list the triggers."""

    def __init__(self, model, states, attribute: str, table):
        self._model, self._states, self._attribute, self._table = model, states, attribute, table

    def set_state(self, name: str) -> None:
        setattr(self._model, self._attribute, self._states[name])

    def get_triggers(self, name: str) -> list[str]:
        state = self._states[name]
        return [t for (s, t) in self._table if s is state]


class _TableLifecycle:
    """Drop-in for ``machine.Lifecycle`` in live play, reading the :data:`ORDER` table derived from it.

    Live play (``Draft``) checks each emitted event on ``transitions``
    machines, and that dominates the engine's time (an order of magnitude
    more than everything else together, here). The same answers come from
    ``ORDER``/``PHASE_ORDER``, which ``omen_core.machine`` derives from those
    very machines for replay; with them the engine writes byte-identical
    logs many times faster (``genlog.py --check-shim N`` compares the two).
    """

    def __init__(self, step: Step = Step.IDLE):
        self.step = step
        self.machine = _TableMachine(self, Step, "step", ORDER)

    def legal(self) -> list[str]:
        return legal_triggers(self.step)

    def fire(self, trigger: str) -> Step:
        try:
            self.step = ORDER[(self.step, trigger)]
        except KeyError:
            raise IllegalOrder(self.step, trigger, self.legal()) from None
        return self.step


class _TableFightFlow:
    """Drop-in for ``machine.FightFlow`` (only ``legal()`` and setting the phase are used), from :data:`PHASE_ORDER`."""

    _LEGAL: dict[Phase, list[str]] = {}

    def __init__(self, phase: Phase = Phase.SETUP):
        self.phase = phase
        self.machine = _TableMachine(self, Phase, "phase", PHASE_ORDER)

    def legal(self) -> list[str]:
        legal = self._LEGAL.get(self.phase)
        if legal is None:
            legal = self._LEGAL[self.phase] = sorted(t for (p, t) in PHASE_ORDER if p is self.phase)
        return legal


@contextlib.contextmanager
def table_machines(enabled: bool = True) -> Iterator[bool]:
    """Within the block, live play checks event order with the derived tables instead of fresh machines.

    Yields whether the shim is active (it steps aside if ``omen_core.decide.draft`` changed shape).
    """
    from omen_core.decide import draft

    active = enabled and hasattr(draft, "Lifecycle") and hasattr(draft, "FightFlow")
    if not active:
        yield False
        return
    saved = draft.Lifecycle, draft.FightFlow
    draft.Lifecycle, draft.FightFlow = _TableLifecycle, _TableFightFlow
    try:
        yield True
    finally:
        draft.Lifecycle, draft.FightFlow = saved


class _FileSink:
    """A write-only EventStore: checks each batch like every store, writes the exact JSON Lines bytes."""

    def __init__(self, fh) -> None:
        self._fh = fh
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

    def read(self, fight_id: str, after_seq: int = 0):  # pragma: no cover - the generator never reads back
        raise NotImplementedError("the generator's sink is write-only")

    def fights(self) -> list[str]:
        return [FIGHT_ID] if self._version else []


def _cast():
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
    try:
        fight.attack(who, target, weapon=weapon)
    except OmenError:
        pass  # e.g. no Action left, or the weapon is not in hand: the turn just ends
    _answer_windows(fight, rng)
    fight.end_turn(who)
    _answer_windows(fight, rng)


def generate(n: int, out: Path, *, progress: bool = False, fast: bool = True) -> int:
    """Write a complete fight of exactly ``n`` events to ``out``; return ``n``.

    ``fast`` checks the order in live play with the derived tables (see
    :class:`_TableLifecycle`); the log is the same byte for byte.
    """
    if n < MIN_EVENTS:
        raise ValueError(f"a generated log has at least {MIN_EVENTS} events")
    quiet_logging()
    tmp = out.with_name(out.name + f".tmp-{os.getpid()}")
    try:
        try:
            _generate_into(n, tmp, progress, fast)
        except Exception as exc:  # noqa: BLE001 - the shim no longer fits the engine: fall back, say so
            if not fast:
                raise
            print(f"genlog: the table shim failed ({type(exc).__name__}: {exc}); "
                  "generating with the unmodified engine instead (much slower)", file=sys.stderr)
            _generate_into(n, tmp, progress, False)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def _generate_into(n: int, tmp: Path, progress: bool, fast: bool) -> None:
    with open(tmp, "wb", buffering=1 << 20) as fh, table_machines(fast):
        version = _play(n, fh, progress)
        fh.flush()
        os.fsync(fh.fileno())
    if version != n:  # pragma: no cover - the padding makes this exact
        raise RuntimeError(f"generated {version} events, wanted {n}")


def _play(n: int, fh, progress: bool) -> int:
    rng = random.Random(POLICY_SEED)
    clock = itertools.count(START_MS, STEP_MS).__next__
    started = time.perf_counter()
    sink = _FileSink(fh)
    fight = Fight.start(sink, FIGHT_ID, dice=SeededDice(SEED), clock=clock,
                        title="Ambush at the Ember Ford (the long version)")
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
    while fight.version < n - 4:  # pad with two-event commands (command_issued, engagement_changed)
        fight.engage(*pair, engaged=flip)
        flip = not flip
    fight.end_fight("gm", note="benchmark log: the GM calls it")
    fight.reveal_seed()
    return fight.version


def format_key() -> str:
    """A short fingerprint of the log format (the stored event's JSON Schema) and of this generator.

    Cached logs are keyed by it, so a change to the envelope or to any event
    type regenerates them instead of feeding the benchmarks stale lines.
    """
    schema = msgspec.json.encode(event_schema(), order="sorted")
    return hashlib.sha256(schema + f"/generator {GENERATOR_VERSION}".encode()).hexdigest()[:10]


def log_path(n: int) -> Path:
    """Where the cached log of ``n`` events lives."""
    return CACHE / f"{FIGHT_ID}-{format_key()}-{n}.jsonl"


def _usable(path: Path) -> bool:
    """A cached log whose first and last lines still decode with the current types."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
            f.seek(max(0, path.stat().st_size - 65536))
            last = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        decode_line(first)
        decode_line(last)
    except (OSError, msgspec.DecodeError):
        return False
    return True


def ensure_log(n: int, *, progress: bool = True) -> Path:
    """The cached log of ``n`` events, generated first if missing."""
    path = log_path(n)
    if path.is_file() and _usable(path):
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    for stale in CACHE.glob(f"{FIGHT_ID}-*-{n}.jsonl*"):  # older formats of the same size
        stale.unlink(missing_ok=True)
    ignore = CACHE / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# generated benchmark logs and scratch files: never committed\n*\n!.gitignore\n")
    started = time.perf_counter()
    if progress:
        print(f"generating {path.name} ({n:,} events, once; cached afterwards)...", file=sys.stderr)
    generate(n, path, progress=progress)
    if progress:
        took = time.perf_counter() - started
        print(f"  done in {took:.1f} s ({n / took:,.0f} events/s)", file=sys.stderr)
    return path


def check_shim(n: int = 3000) -> bool:
    """Generate ``n`` events with and without the table shim; True if the two files are byte-identical."""
    with tempfile.TemporaryDirectory() as tmp:
        fast, pure = Path(tmp) / "fast.jsonl", Path(tmp) / "pure.jsonl"
        t0 = time.perf_counter()
        generate(n, fast, fast=True)
        t1 = time.perf_counter()
        generate(n, pure, fast=False)
        t2 = time.perf_counter()
        same = filecmp.cmp(fast, pure, shallow=False)
    print(f"{n:,} events: with the table shim {n / (t1 - t0):,.0f} events/s, pure engine "
          f"{n / (t2 - t1):,.0f} events/s; logs {'byte-identical' if same else 'DIFFER'}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("events", type=int, nargs="*", help="log sizes to generate (events)")
    parser.add_argument("--force", action="store_true", help="regenerate even if cached")
    parser.add_argument("--verify", action="store_true",
                        help="also replay each log with project() and audit it with omen_replay.verify.verify()")
    parser.add_argument("--check-shim", type=int, metavar="N", default=0,
                        help="generate N events with and without the table shim and compare the bytes")
    args = parser.parse_args(argv)
    if args.check_shim:
        return 0 if check_shim(args.check_shim) else 1
    if not args.events:
        parser.error("give at least one log size")
    for n in args.events:
        if args.force and log_path(n).exists():
            log_path(n).unlink()
        path = ensure_log(n)
        print(f"{path}  {path.stat().st_size / 1e6:,.1f} MB")
        if args.verify:
            check_log(path)
    return 0


def check_log(path: Path) -> None:
    """Replay a generated log with ``project`` and audit it with ``verify``; print what they say."""
    from omen_core.walk import project
    from omen_core.store import JsonlStore
    from omen_replay.verify import verify

    started = time.perf_counter()
    records = list(JsonlStore.single(path).read(FIGHT_ID))
    state = project(records)
    print(f"  project: {state.version:,} events, phase {state.phase.value}, round {state.round} "
          f"({time.perf_counter() - started:.1f} s)")
    started = time.perf_counter()
    report = verify(records)
    verdict = "clean" if report.clean else f"{len(report.findings)} findings, first: {report.findings[:3]}"
    print(f"  verify: {verdict}; {report.events:,} events, {report.seeded_dice:,} seeded dice checked, "
          f"seed revealed: {report.seed_revealed} ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    raise SystemExit(main())
