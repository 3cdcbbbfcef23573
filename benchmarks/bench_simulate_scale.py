"""``omen simulate`` on more workers (issue #24): fights per second and parallel efficiency at 1, 2, 4, 8, 16 workers,
for a machine with the cores to show it (this repository's CI and developer machines have 2).

For each worker count N (``--workers``, default 1,2,4,8,16, those above the machine's usable cores left out unless
``--all``), a warm backend (a local process pool, or with ``--dask`` a ``distributed.LocalCluster`` of N worker
processes, one thread each; or ``--scheduler tcp://...`` for a real cluster, at the workers it has) runs
``--per-worker`` fights per worker of bench_simulate's 2v2 encounter (both sides ``aggressive``), ``--repeat``
times; the figure is the median. Efficiency at N = (fights/s at N) / (N x fights/s at 1): the share of the ideal
speed-up kept. The summaries of every run must be byte-identical to the 1-worker run's of the same fights (else
the script stops). The load average is sampled and printed.

    .venv/bin/python benchmarks/bench_simulate_scale.py                     # a local pool at 1, 2, 4, 8, 16
    .venv/bin/python benchmarks/bench_simulate_scale.py --dask              # Dask LocalClusters of as many
    .venv/bin/python benchmarks/bench_simulate_scale.py --json > scale.json

The projection to 16 workers in docs/performance.md is this script's output on a larger machine, when one is
available; on this repository's 2-core machines it measures 1 and 2 only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Any

import _common
import msgspec
from _common import table
from bench_simulate import ENCOUNTER, SEED
from genlog import quiet_logging


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="omen simulate: efficiency at 1..16 workers")
    parser.add_argument("--workers", default="1,2,4,8,16", help="worker counts (default 1,2,4,8,16)")
    parser.add_argument("--per-worker", type=int, default=200, help="fights per worker per run (default 200)")
    parser.add_argument("--batch", type=int, default=50, help="fights per batch (default 50)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per worker count (default 5; median)")
    parser.add_argument("--dask", action="store_true", help="Dask LocalClusters instead of local pools")
    parser.add_argument("--scheduler", default=None, help="a Dask scheduler's address (its workers, as they are)")
    parser.add_argument("--all", action="store_true", help="also worker counts above the usable cores")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    from omen_replay.simulate.encounter import load_encounter
    from omen_replay.simulate.play import Rules
    from omen_replay.simulate.run import dask, pool, serial, simulate

    encounter = load_encounter(ENCOUNTER)
    rules = Rules(policies={})
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    if not args.all:
        counts = [n for n in counts if n <= cores]
    results: list[dict[str, Any]] = []

    def backend_for(n: int) -> Any:
        if args.scheduler:
            return dask(args.scheduler)
        if n == 1:
            return serial()
        return dask(f"local:{n}") if args.dask else pool(n)

    for n in counts:
        with backend_for(n) as backend:
            workers = backend.workers
            fights = args.per_worker * workers
            simulate([encounter], rules, SEED, backend, fights=workers, batch=1, started_ms=0)  # warm every worker
            runs, summary = [], b""
            for _ in range(args.repeat):
                _common.LOAD.sample()
                done = simulate([encounter], rules, SEED, backend, fights=fights, batch=args.batch, started_ms=0)
                runs.append(fights / done.timing.seconds)
                summary = msgspec.json.encode(done.encounters[0].summary)
        with serial() as alone:
            check = simulate([encounter], rules, SEED, alone, fights=fights, batch=args.batch, started_ms=0)
        if msgspec.json.encode(check.encounters[0].summary) != summary:
            raise SystemExit(f"{workers} workers: the summary differs from the serial run's")
        results.append({"workers": workers, "fights": fights, "fights_per_s": statistics.median(runs),
                        "runs_fights_per_s": runs})
    one = next((r["fights_per_s"] for r in results if r["workers"] == 1), None)
    for r in results:
        r["efficiency"] = r["fights_per_s"] / (r["workers"] * one) if one else None
    info = _common.machine()
    if args.json:
        _common.emit_json({"machine": info, "backend": "dask" if args.dask or args.scheduler else "pool",
                           "results": results})
        return 0
    _common.print_machine(info)
    print(table(["workers", "fights", "fights/s (median)", "efficiency"],
                [[str(r["workers"]), f"{r['fights']:,}", f"{r['fights_per_s']:,.0f}",
                  f"{r['efficiency']:.0%}" if r["efficiency"] is not None else ""] for r in results]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
