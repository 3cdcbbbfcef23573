"""Undo and redo on logs of 1k, 100k and 1M events, against the 1k log in the same process.

Each generated log is copied into a temporary JSON Lines store, with file
snapshots taken every 500 events over its last 2,000 events (set-up, not timed:
one streaming fold, as a fight played with ``snapshot_every=500`` would have
them), and loaded with ``Fight.load``. Then ``Fight.undo()`` (undo the last
command: the seed's reveal) and ``Fight.redo()`` are timed, alternately, as at
the table: each appends its marker through the store and leaves the fight's
state current. Goal: the 1M log within 2x of the 1k log.

    .venv/bin/python benchmarks/bench_undo.py [--sizes 1000 100000 1000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repository on the path)
from genlog import FIGHT_ID, ensure_log, quiet_logging  # noqa: E402

from omen_core import Fight  # noqa: E402
from omen_core.state import FightState, fold  # noqa: E402
from omen_core.store import FileSnapshots, JsonlStore  # noqa: E402
from omen_core.store.snapshots import take  # noqa: E402

EVERY = 500


def prepare(n: int, tmp: Path) -> Fight:
    """A copy of the ``n``-event log in its own store, snapshotted every EVERY events near its end, loaded."""
    folder = tmp / str(n)
    folder.mkdir()
    path = folder / f"{FIGHT_ID}.jsonl"
    shutil.copyfile(ensure_log(n), path)
    snapshots = FileSnapshots(folder / "snapshots")
    state = FightState()
    for rec in JsonlStore.single(path).read(FIGHT_ID):
        state = fold(state, rec)
        if rec.seq % EVERY == 0 and rec.seq > n - 2_000:
            snapshots.save(take(state))
    return Fight.load(JsonlStore.single(path), FIGHT_ID, snapshots=snapshots, snapshot_every=EVERY)


def timings(fight: Fight, repeat: int) -> tuple[float, float]:
    """The best of ``repeat`` undos and of ``repeat`` redos, alternating."""
    undo = redo = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fight.undo(reason="benchmark")
        undo = min(undo, time.perf_counter() - start)
        start = time.perf_counter()
        fight.redo(reason="benchmark")
        redo = min(redo, time.perf_counter() - start)
    return undo, redo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    quiet_logging()
    rows = []
    with tempfile.TemporaryDirectory(prefix="omen-bench-undo-") as tmp:
        for n in args.sizes:
            fight = prepare(n, Path(tmp))
            rows.append((n, *timings(fight, args.repeat)))
    base_undo, base_redo = rows[0][1], rows[0][2]
    print(f"best of {args.repeat}; snapshots every {EVERY} events; JSON Lines store (fsync on append)\n")
    print("| events | undo | ratio | redo | ratio | goal (<= 2x the 1k log) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, undo, redo in rows:
        ok = "met" if max(undo / base_undo, redo / base_redo) <= 2 else "missed"
        print(f"| {n:,} | {undo * 1e3:.2f} ms | {undo / base_undo:.2f}x | {redo * 1e3:.2f} ms | "
              f"{redo / base_redo:.2f}x | {ok} |")


if __name__ == "__main__":
    main()
