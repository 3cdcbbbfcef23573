"""Replay throughput against bare msgspec decoding of the same JSON Lines file, in one process.

Cases, all on the same generated fight log (``genlog.py``), all streaming from the file:

- ``bare decode`` (the baseline): ``msgspec.json.Decoder(StoredEvent)`` on every line, nothing else;
- ``plain replay``: ``replay_store(JsonlStore.single(path), fight_id)`` (what ``omen replay`` and
  ``Fight.load`` run when there is no snapshot): the one walk of ``omen_core.walk``, state only, skimming
  (every envelope decoded and every event's order checked; an event body decoded in full only where the
  fold needs it) and checking the hash chain from the raw bytes (the default now);
- ``plain replay, chain=False``: the same walk without the hash chain
  (``omen_core.walk.replay(StoreSource(store, id), chain=False)``);
- ``full-decode replay``: the same walk decoding every event in full (``skim=False``), chain checked: what
  the old "verified replay" (``chain_breaks`` + ``project``) computed.

Goals: plain replay (chain checked) at least 1/4 of the bare decode rate; full-decode replay (the old
verified replay) at least 1/8.

The breakdown rows (skip them with ``--no-breakdown``) split the costs: the store's ``read_lines`` alone,
the skim's decoding of every line (``walk._decode_skim``, what the skim decodes), the full decoding of every
line (``decode_line``), the hash chain alone (``line_hash`` of every line), and the audit
``verify_store`` (what ``omen verify`` runs), for scale. ``--profile`` prints the time plain replay
spends in the cyclic garbage collector, and a cProfile of plain replay, top functions by own time.

    .venv/bin/python benchmarks/bench_replay.py --events 100000
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common
import msgspec
from _common import Case, fmt_rate, fmt_s, ratio, run_interleaved, table
from genlog import FIGHT_ID, ensure_log, quiet_logging

from omen_core.events import GENESIS_HASH, StoredEvent, decode_line, line_hash
from omen_core.store import JsonlStore
from omen_core.walk import StoreSource, replay
from omen_replay.replay import replay_store
from omen_replay.verify import verify_store

GOALS = {"plain replay (chain checked)": 1 / 4, "full-decode replay (chain checked)": 1 / 8}


def bare_decode(path: Path) -> int:
    decode = msgspec.json.Decoder(StoredEvent).decode
    n = 0
    with open(path, "rb") as f:
        for line in f:
            decode(line)
            n += 1
    return n


def plain_replay(path: Path) -> int:
    return replay_store(JsonlStore.single(path), FIGHT_ID).version


def no_chain(path: Path) -> int:
    return replay(StoreSource(JsonlStore.single(path), FIGHT_ID), chain=False).version


def full_decode(path: Path) -> int:
    return replay(StoreSource(JsonlStore.single(path), FIGHT_ID), skim=False).version


def lines_only(path: Path) -> int:
    n = 0
    for chunk in JsonlStore.single(path).read_lines(FIGHT_ID):
        n += len(chunk)
    return n


def skim_decode(path: Path) -> int:
    """The skim's decoding alone: every line of ``read_lines`` through the walk's skim decoder."""
    from omen_core.walk import _decode_skim

    n = 0
    for chunk in JsonlStore.single(path).read_lines(FIGHT_ID):
        for raw in chunk:
            _decode_skim(raw[:-1])
            n += 1
    return n


def full_decode_lines(path: Path) -> int:
    n = 0
    for chunk in JsonlStore.single(path).read_lines(FIGHT_ID):
        for raw in chunk:
            decode_line(raw[:-1])
            n += 1
    return n


def chain_only(path: Path) -> int:
    """The hash chain alone: each line's hash recomputed from its bytes (``line_hash``), nothing decoded."""
    prev, n = GENESIS_HASH, 0
    for chunk in JsonlStore.single(path).read_lines(FIGHT_ID):
        for raw in chunk:
            rehashed = line_hash(prev, raw[:-1])
            assert rehashed is not None  # every line of the generated log ends in its hash
            prev = rehashed
            n += 1
    return n


def audit(path: Path) -> int:
    report = verify_store(JsonlStore.single(path), FIGHT_ID)
    if not report.clean:
        raise RuntimeError(f"the generated log does not verify: {report.problems[:3]}")
    return report.events


def gc_share(fn: Callable[[], object]) -> dict[str, Any]:
    """Run ``fn`` once, timing the cyclic garbage collector's passes (``gc.callbacks``)."""
    import gc
    import time

    spent = {0: 0.0, 1: 0.0, 2: 0.0}
    count = {0: 0, 1: 0, 2: 0}
    started: list[float] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            spent[info["generation"]] += time.perf_counter() - started.pop()
            count[info["generation"]] += 1

    gc.collect()
    gc.callbacks.append(callback)
    try:
        start = time.perf_counter()
        fn()
        total = time.perf_counter() - start
    finally:
        gc.callbacks.remove(callback)
    return {"total_s": total, "gc_s": sum(spent.values()), "gc_s_by_generation": spent,
            "collections_by_generation": count}


def profile_plain(path: Path, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    plain_replay(path)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    out.write("\n--- by cumulative time ---\n")
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="replay vs bare msgspec decoding, same file, one process")
    parser.add_argument("--events", type=int, default=100_000, help="log size in events (default 100000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each case (default 5; the median counts)")
    parser.add_argument("--no-breakdown", action="store_true", help="only the replay cases")
    parser.add_argument("--profile", type=int, nargs="?", const=25, default=0, metavar="TOP",
                        help="also print a cProfile of plain replay (top TOP functions, default 25)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    path = ensure_log(args.events, progress=not args.json)

    cases = [Case("bare decode", lambda: bare_decode(path)),
             Case("plain replay (chain checked)", lambda: plain_replay(path)),
             Case("plain replay, chain=False", lambda: no_chain(path)),
             Case("full-decode replay (chain checked)", lambda: full_decode(path))]
    breakdown: list[Case] = []
    if not args.no_breakdown:
        breakdown = [Case("read_lines alone", lambda: lines_only(path)),
                     Case("read_lines + skim decoding", lambda: skim_decode(path)),
                     Case("read_lines + full decoding (decode_line)", lambda: full_decode_lines(path)),
                     Case("read_lines + hash chain (line_hash)", lambda: chain_only(path)),
                     Case("audit: verify_store (omen verify)", lambda: audit(path))]
    run_interleaved(cases + breakdown, args.repeat)
    base = cases[0]
    info = _common.machine()

    results: list[dict[str, Any]] = []
    for case in cases + breakdown:
        r = base.median / case.median  # rate ratio: > 1 is faster than bare decoding
        goal = GOALS.get(case.name)
        results.append({**case.as_dict(), "ratio_to_bare": r, "goal_ratio": goal,
                        "goal_met": None if goal is None else r >= goal})
    if args.json:
        _common.emit_json({"benchmark": "replay", "log": str(path), "events": args.events,
                           "repeat": args.repeat, "machine": info, "results": results})
    else:
        _common.print_machine(info)
        print(f"log: {path.name} ({args.events:,} events, {path.stat().st_size / 1e6:,.1f} MB); medians of "
              f"{args.repeat} interleaved runs (fastest – slowest shown)\n")
        rows = []
        for row, case in zip(results, cases + breakdown, strict=True):
            wanted = "" if row["goal_ratio"] is None else f"≥ 1/{round(1 / row['goal_ratio'])}"
            met = "" if row["goal_met"] is None else (
                "met" if row["goal_met"] else f"MISSED ({row['ratio_to_bare'] / row['goal_ratio']:.2f}× of goal)")
            rows.append([row["case"], fmt_s(row["median_s"]), _common.spread(case), fmt_rate(row["events_per_s"]),
                         f"{row['events_per_s'] and 1e6 / row['events_per_s']:.2f}",
                         f"{row['ratio_to_bare']:.3f} " + (
                             f"(1/{1 / row['ratio_to_bare']:.1f})" if row["ratio_to_bare"] < 1
                             else f"({row['ratio_to_bare']:.2f}×)"),
                         wanted, met])
        print(table(["case", "time", "(min – max)", "events/s", "µs/event", "rate vs bare", "goal", "status"], rows))
        chained, plain = cases[1], cases[2]
        print(f"\nthe hash chain costs plain replay {ratio(chained, plain):.2f}× the time without it")
    if args.profile:
        out = sys.stderr if args.json else sys.stdout
        print("\ntime in the cyclic garbage collector (one run each):", file=out)
        for name, fn in (("plain replay", lambda: plain_replay(path)),
                         ("full-decode replay", lambda: full_decode(path))):
            g = gc_share(fn)
            print(f"  {name}: {g['gc_s']:.2f} s of {g['total_s']:.2f} s ({g['gc_s'] / g['total_s']:.0%}); "
                  f"collections by generation {g['collections_by_generation']}, "
                  f"seconds {{{', '.join(f'{k}: {v:.2f}' for k, v in g['gc_s_by_generation'].items())}}}",
                  file=out)
        print("\ncProfile of plain replay (profiling slows it down; read the shares, not the times):", file=out)
        print(profile_plain(path, args.profile), file=out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
