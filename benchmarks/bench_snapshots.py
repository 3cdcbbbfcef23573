"""State at a seq with snapshots: logs of 1k, 100k and 1M events, against the 1k log in the same process.

For each log, snapshots are taken 500 events before the last seq and before the
middle seq (set-up, not timed: one streaming fold); then the time to the state
at those seqs is measured through ``omen_core.store.snapshots.state_at``, which
``omen replay --to`` and undo use: the latest usable snapshot, then only the
events after it, read from the JSON Lines file through its offset index. Goal:
the 1M log within 2x of the 1k log.

    .venv/bin/python benchmarks/bench_snapshots.py [--sizes 1000 100000 1000000]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import _common  # noqa: F401  (puts the repository on the path)
from genlog import FIGHT_ID, ensure_log, quiet_logging  # noqa: E402

from omen_core.state import FightState, fold  # noqa: E402
from omen_core.store import FileSnapshots, JsonlStore  # noqa: E402
from omen_core.store.snapshots import state_at, take  # noqa: E402

GAP = 500


def prepare(n: int, snapshots: FileSnapshots) -> tuple[JsonlStore, list[int]]:
    """The log of ``n`` events, with snapshots GAP events before the middle and the last seq."""
    path = ensure_log(n)
    store = JsonlStore.single(path)
    targets = [max(n // 2, 1), n]
    marks = {max(t - GAP, 1) for t in targets}
    state = FightState()
    for rec in store.read(FIGHT_ID):
        state = fold(state, rec)
        if rec.seq in marks:
            snapshots.save(take(state))
    return store, targets


def best_time(store: JsonlStore, snapshots: FileSnapshots, seq: int, repeat: int = 5) -> float:
    """The best of ``repeat`` timings of the state at ``seq``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        state_at(lambda after: store.read(FIGHT_ID, after), FIGHT_ID, snapshots, seq)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    args = parser.parse_args()
    quiet_logging()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            snaps = FileSnapshots(f"{tmp}/{n}")
            store, (middle, last) = prepare(n, snaps)
            rows.append((n, best_time(store, snaps, middle), best_time(store, snaps, last)))
    # The baseline is the 1k log's state at its last seq: 500 events of play after a snapshot, like every
    # other case. (The 1k log's middle, seq 500, has its snapshot at seq 1: fight set-up, not play.)
    base = rows[0][2]
    print("| events | state at the middle seq | ratio | state at the last seq | ratio | goal (<= 2x the 1k log) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, mid, last in rows:
        ok = "met" if max(mid, last) / base <= 2 else "missed"
        print(f"| {n:,} | {mid * 1e3:.2f} ms | {mid / base:.2f}x | {last * 1e3:.2f} ms | {last / base:.2f}x | {ok} |")


if __name__ == "__main__":
    main()
