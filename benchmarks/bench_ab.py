"""Wall time of two versions of omen_core in ONE process, interleaved finely: bench_live's 2v2 fights, or
``options()`` at their heads, the base and the new version alternating round by round (the order swapped each
round).

Between processes, wall times of one code base move by ±15 % on the shared machine; within one process,
alternating every few milliseconds, a slow spell hits both versions alike. Each version's ``omen_core`` (a git
revision, ``git archive``d, or ``WORKTREE``: the files as they are) is copied into a scratch folder under a
package name of its own (``omen_base``, ``omen_new``: omen_core's imports are relative); both are imported,
both must play the same fights (the same last seq and hash of every fight, with a fixed clock), then the rounds
run. Reported: each version's median per fight (or per head), the ratio of the medians, and the median of the
per-round ratios, with the load. Two copies of one version give 1.00x (within about 5 %). The same fights are the
same last seq and the same HP and Will of every combatant at the end (not the same hashes: a version that writes
its lines otherwise, as schema version 5 left out the defaults, plays the same fights to other bytes).

- ``fights``: bench_live's first ``--fights`` (default 2) 2v2 fights to defeat, each round;
- ``attacks``: ``--attacks`` (default 100) live attack cycles of a melee duel (Kael and Skarn with HP enough
  that nobody drops: attack, the Active Defense window answered with a Block, Parry or Dodge, or declined every
  other cycle, the turn ended), as bench_live's duels, each round;
- ``options``: ``options(state)`` (no undo history) at every third head of bench_live's first 2v2 fight; the two
  versions' options at those heads must be the same, byte for byte as JSON;
- ``replay``: the state-only walk (``walk.replay``, what ``omen replay`` and ``Fight.load`` run: the hash chain
  checked, no snapshots) of genlog's log of ``--events`` events (default 20,000; generated and cached on first
  use), each round; the two versions' end states must be the same, byte for byte as JSON, in every field both
  versions' states have (a version may keep more).

    .venv/bin/python benchmarks/bench_ab.py 42b4312 WORKTREE fights --rounds 61
    .venv/bin/python benchmarks/bench_ab.py 42b4312 WORKTREE attacks --rounds 61
    .venv/bin/python benchmarks/bench_ab.py 42b4312 WORKTREE options --rounds 9
    .venv/bin/python benchmarks/bench_ab.py 42b4312 WORKTREE replay --rounds 21 --events 100000
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import msgspec
import structlog

ROOT = Path(__file__).resolve().parent.parent
SHEETS = ROOT / "fixtures" / "ember-ford" / "sheets"
BLOCK_PARRY_DODGE = ("block", "parry", "dodge")


def copy_version(rev: str, name: str, scratch: Path) -> None:
    """``omen_core`` at ``rev`` (or the worktree's) as the package ``name`` in ``scratch``; its data files
    (``importlib.resources``) read from that copy, not from the installed ``omen_core``."""
    if rev == "WORKTREE":
        shutil.copytree(ROOT / "omen_core", scratch / name, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "omen_core"], check=True,
                                 capture_output=True).stdout
        tmp = scratch / f"{name}.tmp"
        tmp.mkdir()
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        (tmp / "omen_core").rename(scratch / name)
        tmp.rmdir()
    content = scratch / name / "content.py"
    content.write_text(content.read_text().replace('files("omen_core")', f'files("{name}")'))


class Play(Protocol):
    """Plays one fight: its id, its seed, and a list to keep each head's state in, if any."""

    def __call__(self, fight_id: str, seed: bytes, heads: list[Any] | None = None, /) -> Any: ...


def play_all(play: Play, fights: list[tuple[str, bytes]]) -> None:
    """Play every fight (a timed job)."""
    [play(*x) for x in fights]


def options_at(options: Callable[[Any], Any], asked: list[Any]) -> None:
    """The options at every head asked (a timed job)."""
    [options(s) for s in asked]


def player(name: str) -> tuple[ModuleType, Play]:
    """The package ``name`` and a function playing one of bench_live's 2v2 fights with it (its policy: the
    weakest standing foe attacked, Interrupts passed, Block, else Parry, else Dodge), keeping each head's state
    in the list given, if any."""
    omen = importlib.import_module(name)
    events = importlib.import_module(f"{name}.events")
    content = importlib.import_module(f"{name}.content")
    cast = [content.load_sheet(SHEETS / f"{who}.toml") for who in ("kael", "brin", "vesh", "skarn")]
    ruleset = content.load_ruleset()
    defense_window, tie = events.ActiveDefenseWindowOpened, events.InitiativeTied
    salts = events.keyed_salts(b"omen bench_ab")  # the same hashes every run, so the two versions can be compared
    engine = importlib.import_module(f"{name}.engine")
    # a version with an explicit memo of validated commands shares one among the run's fights, as the simulator's
    # batches do (an older version kept it in a module, shared by every fight of the process)
    shared = {"commands": engine.CommandMemo()} if hasattr(engine, "CommandMemo") else {}

    def play(fight_id: str, seed: bytes, heads: list[Any] | None = None) -> Any:
        fight = omen.Fight.start(omen.MemoryStore(), fight_id, dice=omen.SeededDice(seed), ruleset=ruleset,
                                 combatants=cast, clock=lambda: 0, salts=salts, **shared)

        def seen() -> None:
            if heads is not None:
                heads.append(fight.state)

        seen()
        fight.roll_initiative()
        seen()
        while isinstance(fight.waiting_for, tie):
            fight.roll_off()
            seen()
        while fight.state.ending is None:
            state = fight.state
            who = state.turn
            me = state.combatants[who]
            if me.hp > 0:
                foes = sorted((c.hp, c.id) for c in state.combatants.values() if c.side != me.side and c.hp > 0)
                fight.attack(who, foes[0][1], rage=me.sheet.features.rage is not None)
                seen()
                while (window := fight.waiting_for) is not None:
                    if type(window) is defense_window:
                        fight.defend(window.defender, next((d for d in BLOCK_PARRY_DODGE if d in window.eligible),
                                                           None))
                    else:
                        answered = fight.state.pending.answered
                        fight.pass_reaction(next(w for w in window.responders if w not in answered))
                    seen()
                if fight.state.ending is not None:
                    break
            fight.end_turn(who)
            seen()
        return fight

    return omen, play


def dueller(name: str, attacks: int) -> tuple[Callable[[], None], Any]:
    """A job playing ``attacks`` attack cycles of a melee duel with the package ``name`` (see the module), and the
    fingerprint of one run (last seq, HP at the end)."""
    omen = importlib.import_module(name)
    events = importlib.import_module(f"{name}.events")
    content = importlib.import_module(f"{name}.content")
    cast = [msgspec.structs.replace(content.load_sheet(SHEETS / f"{who}.toml"), hp=10_000_000, side=who)
            for who in ("kael", "skarn")]
    ruleset = content.load_ruleset()
    salts = events.keyed_salts(b"omen bench_ab duel")
    defense_window = events.ActiveDefenseWindowOpened

    def duel() -> Any:
        fight = omen.Fight.start(omen.MemoryStore(), "duel", dice=omen.SeededDice(b"omen bench_ab duel"),
                                 ruleset=ruleset, combatants=cast, clock=lambda: 0, salts=salts)
        fight.roll_initiative()
        while fight.waiting_for is not None:
            fight.roll_off()
        for i in range(attacks):
            who = fight.state.turn
            fight.attack(who, "skarn" if who == "kael" else "kael")
            while (window := fight.waiting_for) is not None:
                if type(window) is defense_window:
                    fight.defend(window.defender, None if i % 2 else next(
                        (d for d in BLOCK_PARRY_DODGE if d in window.eligible), None))
                else:
                    answered = fight.state.pending.answered
                    fight.pass_reaction(next(w for w in window.responders if w not in answered))
            fight.end_turn(who)
        return fight.version, tuple(c.hp for c in fight.state.combatants.values())

    return lambda: duel() and None, duel()


def _end(fight: Any) -> tuple[Any, ...]:
    """A fight's last seq and every combatant's HP and Will at the end: the same fight, whatever bytes it wrote."""
    return fight.version, tuple((c.id, c.hp, c.will) for c in fight.state.combatants.values())


def replayer(name: str, events: int) -> tuple[Callable[[], None], Any]:
    """A job replaying genlog's log of ``events`` events with the package ``name`` (state only, chain checked), and
    the state it ends in."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import genlog
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    path = genlog.ensure_log(events, progress=False)
    walk = importlib.import_module(f"{name}.walk")
    jsonl = importlib.import_module(f"{name}.store.jsonl")

    def job() -> Any:
        return walk.replay(walk.StoreSource(jsonl.JsonlStore.single(path), genlog.FIGHT_ID))

    return lambda: job() and None, job()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="two omen_core versions, interleaved in one process")
    parser.add_argument("base", help="a git revision (the baseline)")
    parser.add_argument("new", help="a git revision, or WORKTREE")
    parser.add_argument("workload", choices=("fights", "attacks", "options", "replay"))
    parser.add_argument("--rounds", type=int, default=61, help="interleaved rounds (default 61)")
    parser.add_argument("--fights", type=int, default=2, help="fights a round (fights; default 2)")
    parser.add_argument("--events", type=int, default=20_000, help="events of the log (replay; default 20,000)")
    parser.add_argument("--attacks", type=int, default=100, help="attack cycles a duel (attacks; default 100)")
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    fights = [(f"live-2v2-{i:03d}", hashlib.sha256(b"omen bench_live 2v2 %d" % i).digest())
              for i in range(args.fights)]
    with tempfile.TemporaryDirectory(prefix="omen-ab-") as tmp:
        scratch = Path(tmp)
        names = ("omen_base", "omen_new")
        for rev, name in zip((args.base, args.new), names, strict=True):
            copy_version(rev, name, scratch)
        sys.path.insert(0, str(scratch))
        sides = {name: player(name) for name in names}
        prints = {name: [_end(play(*x)) for x in fights]
                  for name, (_omen, play) in sides.items()}
        if prints["omen_base"] != prints["omen_new"]:
            raise SystemExit("the two versions play different fights")
        jobs: dict[str, Callable[[], None]] = {}
        offered: dict[str, list[bytes]] = {}
        ends: dict[str, dict[str, Any]] = {}
        per = len(fights)
        for name, (_omen, play) in sides.items():
            if args.workload == "fights":
                jobs[name] = partial(play_all, play, fights)
            elif args.workload == "attacks":
                jobs[name], end = dueller(name, args.attacks)
                offered[name] = [msgspec.json.encode(end)]
                per = args.attacks
            elif args.workload == "replay":
                jobs[name], end = replayer(name, args.events)
                offered[name] = [msgspec.json.encode(end)]
                ends[name] = msgspec.to_builtins(end)
                per = 1
            else:
                heads: list[Any] = []
                play(*fights[0], heads)
                asked = heads[::3]
                options = importlib.import_module(f"{name}.options").options
                jobs[name] = partial(options_at, options, asked)
                # the head's hash aside: lines of schema 5 leave defaults out, so the hashes differ by design
                offered[name] = [msgspec.json.encode(msgspec.structs.replace(options(s), head="")) for s in asked]
                per = len(asked)
        if ends:  # a version may keep more in its state: the fields both have must be the same
            common = ends["omen_base"].keys() & ends["omen_new"].keys()
            offered = {name: [msgspec.json.encode({k: end[k] for k in sorted(common)})] for name, end in ends.items()}
        if offered and offered["omen_base"] != offered["omen_new"]:
            first = next(i for i, (a, b) in enumerate(zip(*offered.values(), strict=False)) if a != b)
            a, b = (offered[name][first] for name in names)
            at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print(f"first difference at item {first}, byte {at}:\n  base {a[max(at - 150, 0):at + 150]!r}\n"
                  f"  new  {b[max(at - 150, 0):at + 150]!r}", file=sys.stderr)
            raise SystemExit(f"the two versions give different "
                             f"{ {'replay': 'states', 'attacks': 'duels'}.get(args.workload, 'options')}")
        times: dict[str, list[float]] = {name: [] for name in names}
        ratios = []
        for job in jobs.values():
            job()  # warm-up
        for r in range(args.rounds):
            got = {}
            for name in names if r % 2 == 0 else names[::-1]:
                start = time.perf_counter()
                jobs[name]()
                got[name] = time.perf_counter() - start
                times[name].append(got[name])
            ratios.append(got["omen_base"] / got["omen_new"])
    base, new = (statistics.median(times[name]) for name in names)
    unit = {"fights": "fight", "attacks": "cycle", "options": "head", "replay": "replay"}[args.workload]
    print(f"{args.workload}: {args.base} {base / per * 1e3:.3f} ms a {unit}, {args.new} {new / per * 1e3:.3f} ms; "
          f"ratio of medians {base / new:.2f}x, median per-round ratio {statistics.median(ratios):.2f}x "
          f"({args.rounds} rounds; 1-minute load at the end {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
