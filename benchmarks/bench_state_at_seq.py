"""Time to the state at a seq (the last, and the middle) for logs of 1k, 100k and 1M events, without
snapshots; peak memory.

Without snapshots, the state at seq S is rebuilt by folding events 1..S read
from the JSON Lines file, through what ``omen replay --to S`` runs when the
fight has no snapshots (``omen_replay.replay.replay_store(store, fight_id,
to_seq=S)``, the lazy fold), so the time grows linearly with the log. The goal
"the state at any seq of a 1M-event log within 2x of the time for a 1k-event
log" needs snapshots (``bench_snapshots.py``); this benchmark is the baseline
they are measured against. The 1k log is the baseline, in the same process.

Peak memory: a fresh child process imports omen, notes its peak RSS, replays
the largest log to the end, and reports its peak RSS (``VmHWM`` from
``/proc/self/status``): through ``replay_store`` as ``omen replay`` does,
through ``replay()`` over the store's read (the in-memory reference API), and
streaming the reference fold (see ``_common.streaming_replay``). Goal: at most
200 MB.

    .venv/bin/python benchmarks/bench_state_at_seq.py

(The 1M-event log, ~420 MB, is generated once by genlog.py and cached; that takes about a
minute the first time. ``--sizes 1000 100000`` skips it.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import _common
from _common import Case, fmt_s, run_interleaved, streaming_replay, table
from genlog import FIGHT_ID, ensure_log, quiet_logging  # noqa: E402

from omen_core.store import JsonlStore  # noqa: E402
from omen_replay.replay import replay, replay_store  # noqa: E402

SPEED_GOAL = 2.0        # the state at any seq of a 1M log within 2x the time of a 1k log
MEMORY_GOAL_MB = 200.0


def state_at(path: Path, seq: int | None) -> int:
    state = replay_store(JsonlStore.single(path), FIGHT_ID, to_seq=seq)
    return state.version


def repeats_for(n: int, repeat: int | None) -> int:
    """Several runs on small logs (the best counts), one on the 1M log (about 15-25 s a run here)."""
    if repeat is not None:
        return repeat
    return 15 if n <= 10_000 else 3 if n <= 200_000 else 1


def peak_rss_mb() -> float:
    """This process's peak resident set size, in MB (2^20 bytes).

    Linux's ``VmHWM`` is the high-water mark of this very process image.
    (``ru_maxrss`` is not used on Linux: it survives ``execve``, so a child
    started by a big parent reports the parent's peak.)
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 if sys.platform != "darwin" else 1024 ** 2)


MEMORY_MODES = {
    "replay_store": "omen_replay.replay.replay_store(JsonlStore.single(path), fight_id), as `omen replay` does",
    "replay()": "omen_replay.replay.replay(JsonlStore.single(path).read(fight_id)): the log in memory",
    "streaming": "undo_history() over one streaming read, then project(a second streaming read, voided=...)",
}
MEMORY_LABELS = {"replay_store": "replay_store() (as `omen replay`)", "replay()": "replay() (reference, in memory)",
                 "streaming": "two streaming passes (reference fold)"}


def memory_child(path: str, mode: str) -> None:
    """In a fresh process: peak RSS after the imports, then after replaying ``path`` to the end."""
    import time

    quiet_logging()
    before = peak_rss_mb()
    start = time.perf_counter()
    if mode == "streaming":
        version = streaming_replay(path, FIGHT_ID)
    elif mode == "replay_store":
        version = replay_store(JsonlStore.single(path), FIGHT_ID).version
    else:
        version = replay(JsonlStore.single(path).read(FIGHT_ID)).version
    took = time.perf_counter() - start
    after = peak_rss_mb()
    print(json.dumps({"mode": mode, "how": MEMORY_MODES[mode], "events": version, "seconds": took,
                      "peak_rss_after_imports_mb": before, "peak_rss_mb": after}))


def measure_memory(path: Path, mode: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--memory-child", str(path), mode], check=True,
                         capture_output=True, text=True)
    result = json.loads(out.stdout)
    result["goal_mb"] = MEMORY_GOAL_MB
    result["goal_met"] = result["peak_rss_mb"] <= MEMORY_GOAL_MB
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="time to the state at a seq, and peak memory of a replay")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000],
                        help="log sizes in events (default 1000 100000 1000000); the first is the baseline")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed runs per case, the best counts (default: 15 for ≤10k events, 3 for ≤200k, 1 above)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory child process")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--memory-child", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(*args.memory_child)
        return 0
    quiet_logging()
    sizes = sorted(set(args.sizes))
    paths = {n: ensure_log(n, progress=not args.json) for n in sizes}

    cases: dict[tuple[int, str], Case] = {}
    for n in sizes:
        path = paths[n]
        with open(path, "rb") as f:  # into the page cache, so every size is timed from a warm cache
            while f.read(1 << 24):
                pass
        last = Case(f"{n} last", lambda p=path: state_at(p, None))
        middle = Case(f"{n} middle", lambda p=path, s=n // 2: state_at(p, s))
        run_interleaved([last, middle], repeats_for(n, args.repeat), warmup=n <= 200_000)
        cases[(n, "last")], cases[(n, "middle")] = last, middle

    base_n = sizes[0]
    results = []
    for n in sizes:
        for where in ("last", "middle"):
            case = cases[(n, where)]
            seq = n if where == "last" else n // 2
            ratio = case.best / cases[(base_n, "last")].best
            results.append({"events": n, "at": where, "seq": seq, **case.as_dict(),
                            "us_per_event": case.best / seq * 1e6,
                            "ratio_to_baseline_last": ratio,
                            "goal_met": ratio <= SPEED_GOAL})
    memory = [] if args.no_memory else [measure_memory(paths[sizes[-1]], mode) for mode in MEMORY_MODES]

    info = _common.machine()
    if args.json:
        _common.emit_json({"benchmark": "state_at_seq", "baseline_events": base_n, "machine": info,
                           "results": results, "memory": memory,
                           "note": "without snapshots: the cost grows linearly with the seq"})
        return 0
    _common.print_machine(info)
    print(f"baseline: the state at the last seq of the {base_n:,}-event log; without snapshots, "
          "every state is a fold from seq 1 (replay_store, as `omen replay --to`)\n")
    rows = []
    for r in results:
        status = "met" if r["goal_met"] else f"MISSED ({r['ratio_to_baseline_last'] / SPEED_GOAL:,.0f}× over)"
        rows.append([f"{r['events']:,}", f"{r['at']} (seq {r['seq']:,})", str(len(r["runs_s"])),
                     fmt_s(r["best_s"]), f"{r['us_per_event']:.1f}", f"{r['ratio_to_baseline_last']:,.1f}×",
                     status if r["events"] != base_n else ""])
    print(table(["log events", "state at", "runs", "time", "µs/event", f"vs {base_n:,} last",
                 f"goal ≤ {SPEED_GOAL:.0f}×"], rows))
    if memory:
        print(f"\npeak memory replaying the {memory[0]['events']:,}-event log to the end, each in a fresh "
              f"process (peak RSS; goal ≤ {MEMORY_GOAL_MB:.0f} MB):\n")
        rows = [[MEMORY_LABELS[m["mode"]], f"{m['peak_rss_mb']:,.1f} MB", f"{m['peak_rss_after_imports_mb']:,.1f} MB",
                 fmt_s(m["seconds"]), "met" if m["goal_met"] else
                 f"MISSED ({m['peak_rss_mb'] / MEMORY_GOAL_MB:.1f}× the goal)"] for m in memory]
        print(table(["replay", "peak RSS", "after imports", "time", "goal"], rows))
        for m in memory:
            print(f"  {MEMORY_LABELS[m['mode']]}: {m['how']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
