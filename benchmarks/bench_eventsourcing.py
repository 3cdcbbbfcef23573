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
N events: ``replay_store(JsonlStore.single(path), fight_id)``, what ``omen replay``
runs, streaming from the JSON Lines file (the lazy fold of ``omen_core.lazy``:
every event's envelope and order checked, a body decoded in full only where the
fold needs it). Also shown, for scale: the reference fold over the same file,
``project(JsonlStore.single(path).read(fight_id))`` (every event decoded in full;
what this benchmark measured as plain replay before the lazy fold), and
``project`` alone over events already decoded in memory.

Goal: omen's plain replay at least 10x faster than reconstructing the aggregate.
The comparison is not like for like, and not in omen's favour: an omen event
is a whole rules event (~420 bytes of JSON, nested structs, the action
lifecycle checked on each) where the library's is a bare counter increment.

    .venv/bin/python benchmarks/bench_eventsourcing.py --events 100000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import _common
from _common import Case, fmt_rate, fmt_s, run_interleaved, table
from genlog import FIGHT_ID, ensure_log, quiet_logging  # noqa: E402

from omen_core.state import project  # noqa: E402
from omen_core.store import JsonlStore  # noqa: E402
from omen_replay.replay import replay_store  # noqa: E402

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


class Counting(Application):
    """An application holding one Counter; no snapshots, no aggregate cache (the defaults)."""


# The library's defaults, pinned so that a variable in the caller's environment cannot change
# what is measured (the ``env`` argument overrides ``os.environ``): no snapshots, no aggregate
# cache, no compression or encryption.
PINNED = {"IS_SNAPSHOTTING_ENABLED": "n", "AGGREGATE_CACHE_MAXSIZE": "", "COMPRESSOR_TOPIC": "",
          "CIPHER_TOPIC": ""}


def build(env: dict[str, str], n: int):
    """An application whose store holds one Counter of exactly ``n`` events; (app, id)."""
    app = Counting(env={**PINNED, **env})
    counter = Counter()
    for _ in range(n - 1):
        counter.increment()
    app.save(counter)
    return app, counter.id


def reconstruct(app, aggregate_id, n: int) -> int:
    counter = app.repository.get(aggregate_id)
    if counter.version != n or counter.count != n - 1:
        raise RuntimeError(f"reconstructed version {counter.version}, count {counter.count}; wanted {n}")
    return counter.version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="omen replay vs eventsourcing aggregate reconstruction")
    parser.add_argument("--events", type=int, default=100_000, help="events per replay (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each case (default 3; the best counts)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    n = args.events
    path = ensure_log(n, progress=not args.json)
    records = list(JsonlStore.single(path).read(FIGHT_ID))

    with tempfile.TemporaryDirectory(prefix="omen-bench-es-") as tmp:
        popo, popo_id = build({"PERSISTENCE_MODULE": "eventsourcing.popo"}, n)
        sqlite, sqlite_id = build({"PERSISTENCE_MODULE": "eventsourcing.sqlite",
                                   "SQLITE_DBNAME": os.path.join(tmp, "es.db")}, n)
        cases = [Case("eventsourcing, POPO store", lambda: reconstruct(popo, popo_id, n)),
                 Case("eventsourcing, SQLite store", lambda: reconstruct(sqlite, sqlite_id, n)),
                 Case("omen plain replay: replay_store (JSON Lines file)",
                      lambda: replay_store(JsonlStore.single(path), FIGHT_ID).version),
                 Case("omen reference fold: project(read) (JSON Lines file)",
                      lambda: project(JsonlStore.single(path).read(FIGHT_ID)).version),
                 Case("omen project only (decoded, in memory)", lambda: project(records).version)]
        run_interleaved(cases, args.repeat)
        sqlite.close()
        popo.close()

    info = _common.machine()
    info["eventsourcing"] = _common._version("eventsourcing")
    popo_rate, sqlite_rate = cases[0].rate, cases[1].rate
    results = []
    for case in cases:
        results.append({"case": case.name, **case.as_dict(),
                        "speedup_vs_popo": case.rate / popo_rate, "speedup_vs_sqlite": case.rate / sqlite_rate})
    plain = results[2]
    verdict = {"goal_speedup": GOAL, "plain_vs_popo": plain["speedup_vs_popo"],
               "plain_vs_sqlite": plain["speedup_vs_sqlite"],
               "goal_met": plain["speedup_vs_popo"] >= GOAL and plain["speedup_vs_sqlite"] >= GOAL}
    if args.json:
        _common.emit_json({"benchmark": "eventsourcing", "events": n, "repeat": args.repeat, "machine": info,
                           "results": results, "verdict": verdict})
        return 0
    _common.print_machine(info)
    print(f"eventsourcing {info['eventsourcing']}; {n:,} events per replay; best of {args.repeat} runs\n")
    rows = [[r["case"], fmt_s(r["best_s"]), fmt_rate(r["events_per_s"]), f"{r['speedup_vs_popo']:.2f}×",
             f"{r['speedup_vs_sqlite']:.2f}×"] for r in results]
    print(table(["case", "time", "events/s", "vs eventsourcing POPO", "vs eventsourcing SQLite"], rows))
    status = "met" if verdict["goal_met"] else "MISSED"
    print(f"\ngoal: omen plain replay ≥ {GOAL:.0f}× faster: {plain['speedup_vs_popo']:.2f}× (POPO), "
          f"{plain['speedup_vs_sqlite']:.2f}× (SQLite): {status}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
