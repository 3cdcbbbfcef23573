"""Time to the state at a seq (the last, and the middle) for logs of 1k, 100k and 1M events, WITHOUT snapshots.

Without snapshots, the state at seq S is the fold of events 1..S read from the
JSON Lines file: ``omen_replay.replay.replay_store(store, fight_id, to_seq=S)``
with no snapshot store (the one walk, state only, skimming, hash chain
checked), what ``omen replay --to S`` runs on a log without snapshots. The time
grows linearly with the seq; this is the baseline the snapshots of
``bench_snapshots.py`` are measured against. The baseline case is the state at
the last seq of the smallest log, in the same run.

Every (log size, seq) pair is a case and the cases run round-robin, sizes
interleaved (1k last, 1k middle, 100k last, ..., then again), ``--repeat``
times after a warm-up round; the figures are medians. Peak memory moved to
``bench_memory.py`` (fresh processes of the CLI).

    .venv/bin/python benchmarks/bench_state_at_seq.py [--sizes 1000 100000 1000000] [--repeat 5]

(The 1M-event log, ~436 MB, is generated once by genlog.py and cached; that takes about 30 s the first time.
``--sizes 1000 100000`` skips it.)
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

import _common
from _common import Case, fmt_s, ratio, run_interleaved, table
from genlog import FIGHT_ID, ensure_log, quiet_logging

from omen_core.store import JsonlStore
from omen_replay.replay import replay_store

SPEED_GOAL = 2.0        # the state at any seq of a 1M log within 2x the time of a 1k log: needs snapshots


def state_at(path: Path, seq: int | None) -> int:
    return replay_store(JsonlStore.single(path), FIGHT_ID, to_seq=seq).version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="time to the state at a seq without snapshots")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000],
                        help="log sizes in events (default 1000 100000 1000000); the smallest is the baseline")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (default 5; the median counts)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    sizes = sorted(set(args.sizes))
    paths = {n: ensure_log(n, progress=not args.json) for n in sizes}

    cases: list[Case] = []
    for n in sizes:
        with open(paths[n], "rb") as f:  # into the page cache, so every size is timed from a warm cache
            while f.read(1 << 24):
                pass
        for where, seq in (("last", n), ("middle", n // 2)):
            cases.append(Case(f"{n} {where}", partial(state_at, paths[n], seq),
                              log_events=n, at=where, seq=seq))
    run_interleaved(cases, args.repeat)

    base = cases[0]  # the smallest log, last seq
    results: list[dict[str, Any]] = []
    for case in cases:
        r = ratio(case, base)
        results.append({**case.as_dict(), "us_per_event": case.median / case.info["seq"] * 1e6,
                        "ratio_to_baseline": r, "goal_met": r <= SPEED_GOAL})
    info = _common.machine()
    if args.json:
        _common.emit_json({"benchmark": "state_at_seq", "baseline": base.name, "repeat": args.repeat,
                           "machine": info, "results": results,
                           "note": "without snapshots: the cost grows linearly with the seq"})
        return 0
    _common.print_machine(info)
    print(f"baseline: the state at the last seq of the {sizes[0]:,}-event log; without snapshots every state is a "
          f"fold from seq 1 (replay_store, as `omen replay --to` on a log without snapshots); medians of "
          f"{args.repeat} runs, sizes interleaved\n")
    rows = []
    for row, case in zip(results, cases, strict=True):
        status = "met" if row["goal_met"] else f"missed ({row['ratio_to_baseline'] / SPEED_GOAL:,.0f}× over)"
        rows.append([f"{row['log_events']:,}", f"{row['at']} (seq {row['seq']:,})", fmt_s(row["median_s"]),
                     _common.spread(case), f"{row['us_per_event']:.2f}", f"{row['ratio_to_baseline']:,.1f}×",
                     status if case is not base else ""])
    print(table(["log events", "state at", "time", "(min – max)", "µs/event", f"vs {sizes[0]:,} last",
                 f"≤ {SPEED_GOAL:.0f}× (needs snapshots)"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
