"""omen's plain replay against the ``eventsourcing`` library's aggregate reconstruction, N events each, one process.

The baseline is the `eventsourcing <https://pypi.org/project/eventsourcing/>`_
library (a benchmark-only extra: ``pip install -e '.[bench]'``): an ``Application``
whose ``repository.get(id)`` reconstructs an ``Aggregate`` from its stored
events. The aggregate is the smallest possible: a ``Started`` event, then
N - 1 ``Incremented`` events, each adding 1 to a counter. Snapshotting and the
aggregate cache are off (the library's defaults), so every ``get`` replays all
N events. Both of the library's built-in stores are measured: POPO (plain
Python objects in memory) and SQLite (a file in a temporary directory).

omen's side is the plain replay of bench_replay.py on a generated fight log of
N events, streaming from the JSON Lines file through the one walk
(``omen_core.walk``), state only, skimming (every event's envelope and order
checked, a body decoded in full only where the fold needs it):

- with the hash chain checked (the default now, since issue #10):
  ``replay_store(JsonlStore.single(path), fight_id)``, what ``omen replay`` and
  ``Fight.load`` run without a snapshot;
- without it: ``omen_core.walk.replay(StoreSource(store, fight_id), chain=False)``
  (plain replay before issue #10 did not check the chain: the like-for-like
  comparison with the earlier figures);
- for scale, the same walk decoding every event in full (``skim=False``, chain
  checked);
- the floor: reading every line, decoding it as the skim does and hashing it
  onto the chain, and nothing else (no fold, no check): what any plain replay
  with the chain checked costs at least.

Goal: omen's plain replay at least 10x faster than reconstructing the aggregate
(from the POPO store and from the SQLite store), as a ratio of medians of
interleaved runs; it is reported both with the chain checked and without.
The comparison is not like for like, and not in omen's favour: an omen event
is a whole rules event (~435 bytes of JSON, nested structs, the action
lifecycle checked on each) where the library's is a bare counter increment.

    .venv/bin/python benchmarks/bench_eventsourcing.py --events 100000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any
from uuid import UUID

import _common
from _common import Case, fmt_rate, fmt_s, ratio, run_interleaved, table
from genlog import FIGHT_ID, ensure_log, quiet_logging

from omen_core.store import JsonlStore
from omen_core.walk import StoreSource, replay
from omen_replay.replay import replay_store

GOAL = 10.0

try:
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event
except ImportError:  # pragma: no cover - the extra is not installed
    print("this benchmark needs the eventsourcing library: .venv/bin/pip install -e '.[bench]'", file=sys.stderr)
    raise SystemExit(2) from None


class Counter(Aggregate):
    """The smallest useful aggregate: created, then incremented."""

    @event("Started")
    def __init__(self) -> None:
        self.count = 0

    @event("Incremented")
    def increment(self) -> None:
        self.count += 1


class Counting(Application[UUID]):
    """An application holding one Counter; no snapshots, no aggregate cache (the defaults)."""


# The library's defaults, pinned so that a variable in the caller's environment cannot change
# what is measured (the ``env`` argument overrides ``os.environ``): no snapshots, no aggregate
# cache, no compression or encryption.
PINNED = {"IS_SNAPSHOTTING_ENABLED": "n", "AGGREGATE_CACHE_MAXSIZE": "", "COMPRESSOR_TOPIC": "",
          "CIPHER_TOPIC": ""}


def build(env: dict[str, str], n: int) -> tuple[Counting, UUID]:
    """An application whose store holds one Counter of exactly ``n`` events; (app, id)."""
    app = Counting(env={**PINNED, **env})
    counter = Counter()
    for _ in range(n - 1):
        counter.increment()
    app.save(counter)
    return app, counter.id


def reconstruct(app: Counting, aggregate_id: UUID, n: int) -> int:
    counter: Counter = app.repository.get(aggregate_id)
    if counter.version != n or counter.count != n - 1:
        raise RuntimeError(f"reconstructed version {counter.version}, count {counter.count}; wanted {n}")
    return counter.version


PLAIN = "omen plain replay, chain checked: replay_store (JSON Lines file)"
FLOOR = "the floor: read the lines, skim-decode each, hash the chain (no fold, no check)"


def floor(path: Path) -> int:
    """What any plain replay with the chain checked must do at least, and nothing else: read every line, decode
    it as the skim does, and hash it onto the chain (``sha256(prev ‖ the line without its hash)``). No fold, no
    order check, no comparison: the cost no change to the walk's logic can go below (issue #26)."""
    import hashlib

    from omen_core.walk import _decode_skim

    prev, count = bytes(32), 0
    for chunk in JsonlStore.single(path).read_lines(FIGHT_ID):
        for line in chunk:
            _decode_skim(line)
            digest = hashlib.sha256(prev)
            digest.update(memoryview(line)[:-77])
            digest.update(b"}")
            prev = digest.digest()
            count += 1
    return count
NO_CHAIN = "omen plain replay, chain=False (JSON Lines file)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="omen replay vs eventsourcing aggregate reconstruction")
    parser.add_argument("--events", type=int, default=100_000, help="events per replay (default 100000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each case (default 5; the median counts)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    n = args.events
    path = ensure_log(n, progress=not args.json)

    with tempfile.TemporaryDirectory(prefix="omen-bench-es-") as tmp:
        popo, popo_id = build({"PERSISTENCE_MODULE": "eventsourcing.popo"}, n)
        sqlite, sqlite_id = build({"PERSISTENCE_MODULE": "eventsourcing.sqlite",
                                   "SQLITE_DBNAME": os.path.join(tmp, "es.db")}, n)
        cases = [Case("eventsourcing, POPO store", lambda: reconstruct(popo, popo_id, n)),
                 Case("eventsourcing, SQLite store", lambda: reconstruct(sqlite, sqlite_id, n)),
                 Case(PLAIN, lambda: replay_store(JsonlStore.single(path), FIGHT_ID).version),
                 Case(NO_CHAIN, lambda: replay(StoreSource(JsonlStore.single(path), FIGHT_ID), chain=False).version),
                 Case("omen full-decode replay, chain checked (skim=False)",
                      lambda: replay(StoreSource(JsonlStore.single(path), FIGHT_ID), skim=False).version),
                 Case(FLOOR, lambda: floor(path))]
        run_interleaved(cases, args.repeat)
        sqlite.close()
        popo.close()

    info = _common.machine()
    info["eventsourcing"] = _common._version("eventsourcing")
    popo_case, sqlite_case = cases[0], cases[1]
    results: list[dict[str, Any]] = []
    for case in cases:
        results.append({**case.as_dict(), "speedup_vs_popo": ratio(popo_case, case),
                        "speedup_vs_sqlite": ratio(sqlite_case, case)})
    by_name = {r["case"]: r for r in results}
    verdict: dict[str, Any] = {"goal_speedup": GOAL}
    for key, name in (("chain", PLAIN), ("no_chain", NO_CHAIN)):
        r = by_name[name]
        verdict[key] = {"vs_popo": r["speedup_vs_popo"], "vs_sqlite": r["speedup_vs_sqlite"],
                        "goal_met": r["speedup_vs_popo"] >= GOAL and r["speedup_vs_sqlite"] >= GOAL}
    if args.json:
        _common.emit_json({"benchmark": "eventsourcing", "events": n, "repeat": args.repeat, "machine": info,
                           "results": results, "verdict": verdict})
        return 0
    _common.print_machine(info)
    print(f"eventsourcing {info['eventsourcing']}; {n:,} events per replay; medians of {args.repeat} "
          "interleaved runs (fastest – slowest shown); speed-ups are ratios of medians\n")
    rows = [[r["case"], fmt_s(r["median_s"]), _common.spread(c), fmt_rate(r["events_per_s"]),
             f"{r['speedup_vs_popo']:.2f}×", f"{r['speedup_vs_sqlite']:.2f}×"]
            for r, c in zip(results, cases, strict=True)]
    print(table(["case", "time", "(min – max)", "events/s", "vs eventsourcing POPO", "vs eventsourcing SQLite"],
                rows))
    for key, label in (("chain", "with the hash chain checked"), ("no_chain", "without the hash chain")):
        v = verdict[key]
        print(f"goal: omen plain replay ({label}) ≥ {GOAL:.0f}× faster: {v['vs_popo']:.2f}× (POPO), "
              f"{v['vs_sqlite']:.2f}× (SQLite): {'met' if v['goal_met'] else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
