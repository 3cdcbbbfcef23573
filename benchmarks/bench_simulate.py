"""``omen simulate`` (issue #24): fights per second per core with the built-in policies, against bench_live's 2v2
fights in the same run, and the parallel efficiency of the local pool at 2 workers (and of a Dask LocalCluster).

The encounter is bench_live's 2v2 to defeat: the Ember Ford's four as written (``examples/encounters/
ember-ford-2v2.toml``), seeded dice, initiative, then until a side is down. The cases, interleaved round-robin
(``--repeat`` rounds after a warm-up round; medians, see ``_common``):

- **bench_live's 2v2 fights** (the baseline): ``bench_live.fights_run`` on a memory store, ``--fights`` fights
  (its fixed policy: attack the standing enemy with the fewest HP, pass every Interrupt, Block > Parry > Dodge at
  every Active Defense), commands given straight to ``Fight``;
- **simulate, POLICY, serial**: ``omen_replay.simulate.run.simulate`` in this process (``--workers 1``), the same
  number of fights of the same encounter, the wardens played by the built-in POLICY (``aggressive``, ``cautious``,
  ``random``) and the raiders by ``aggressive`` (so that every fight goes to a defeat: two cautious sides may
  both back off until the round limit): every decision built from the seat's view and the legal moves, every
  command through ``Fight``, a record per fight, the summary at the end. Fights per second here are fights per
  second per core; the mean rounds a fight are shown, as a longer fight costs more;
- **simulate, aggressive, pool of 2**: the same on a local process pool of 2 workers, warm (started and given a
  batch before the timing), ``2 x --fights`` fights in batches of ``--batch``;
- with ``--dask``, **simulate, aggressive, Dask LocalCluster of 2**: the same on ``distributed.LocalCluster`` with 2
  worker processes, warm.

Parallel efficiency at N workers = (fights/s on N) / (N x fights/s serial), the same policy: the wall-clock
figure, which means little on a machine whose cores other processes use (the load is sampled through the run and
printed). Beside it, the **CPU efficiency** of the pool: the CPU seconds a fight costs serially over what it costs
on the pool (its workers' and this process's, read from /proc; the warm-up round left out): the efficiency two
idle cores would give, whatever share of them other processes take now.

    .venv/bin/python benchmarks/bench_simulate.py [--fights 100] [--repeat 7] [--dask] [--json]

``benchmarks/bench_simulate_scale.py`` measures the efficiency at more workers (1, 2, 4, 8, 16), for a larger
machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import _common
from _common import ROOT, Case, run_interleaved, table
from genlog import quiet_logging

#: The goals of issue #24.
GOAL_PER_CORE = 150.0     # fights per second per core, built-in policies, 2v2 to defeat
GOAL_EFFICIENCY = 0.75    # at 2 workers
#: bench_live's 2v2 fights per second on a quiet core (docs/performance.md, issues #11 and #14: 224-230): the goal
#: as a ratio to bench_live's rate, which carries over to a loaded machine better than fights per second do
BENCH_LIVE_QUIET = 226.0
GOAL_RATIO = GOAL_PER_CORE / BENCH_LIVE_QUIET
ENCOUNTER = ROOT / "examples" / "encounters" / "ember-ford-2v2.toml"
SEED = hashlib.sha256(b"omen bench_simulate").digest()[:16]


def cpu_seconds(backend: Any) -> float:
    """The CPU time (user + system) this process and a local pool's worker processes have used so far: what a run
    costs in CPU, whatever share of the cores other processes on the machine take (Linux: /proc/PID/stat)."""
    from concurrent.futures import ProcessPoolExecutor

    total = time.process_time()
    executor = backend.executor
    if isinstance(executor, ProcessPoolExecutor):
        tick = os.sysconf("SC_CLK_TCK")
        for pid in list(getattr(executor, "_processes", {}) or {}):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15 of stat)
    return total


def simulate_case(encounter: Any, policy: str, backend: Any, fights: int, batch: int,
                  cpu: list[float] | None = None) -> Callable[[], tuple[int, float]]:
    """A timed ``simulate`` of ``fights`` fights on ``backend``: (fights, its own seconds, from the first batch
    submitted to the summary made); the CPU seconds of each run appended to ``cpu``."""
    from omen_replay.simulate.play import Rules
    from omen_replay.simulate.run import simulate

    rules = Rules(policies={encounter.sides[0]: policy, encounter.sides[1]: "aggressive"})
    expect: list[bytes] = []

    def run() -> tuple[int, float]:
        import msgspec

        before = cpu_seconds(backend)
        done = simulate([encounter], rules, SEED, backend, fights=fights, batch=batch, started_ms=0)
        if cpu is not None:
            cpu.append(cpu_seconds(backend) - before)
        summary = msgspec.json.encode(done.encounters[0].summary)
        if expect and summary != expect[0]:
            raise RuntimeError(f"{policy} on {backend.name}: the summary changed between runs")
        expect[:1] = [summary]
        return fights, done.timing.seconds
    return run


def live_case(fights: int) -> Callable[[], tuple[int, float]]:
    """bench_live's 2v2 fights: the same cast, its own seeds and policy, straight through ``Fight``."""
    import bench_live

    from omen_core import MemoryStore

    cast = [bench_live.sheet(w) for w in ("kael", "brin", "vesh", "skarn")]
    seeds = [(f"live-2v2-{i:03d}", hashlib.sha256(b"omen bench_live 2v2 %d" % i).digest()) for i in range(fights)]

    def run() -> tuple[int, float]:
        n, seconds, _prints = bench_live.fights_run(MemoryStore(), seeds, cast)
        return n, seconds
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="omen simulate: fights/s per core and parallel efficiency")
    parser.add_argument("--fights", type=int, default=100, help="fights per serial run (default 100; the pool "
                                                                "runs twice as many)")
    parser.add_argument("--batch", type=int, default=50, help="fights per batch (default 50)")
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds (default 7; medians)")
    parser.add_argument("--policies", default="aggressive,cautious,random", help="built-in policies, serial")
    parser.add_argument("--dask", action="store_true", help="also a Dask LocalCluster of 2 workers")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    from omen_replay.simulate.encounter import load_encounter
    from omen_replay.simulate.run import dask, pool, serial

    encounter = load_encounter(ENCOUNTER)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    with ExitStack() as stack:
        alone = stack.enter_context(serial())
        two = stack.enter_context(pool(2))
        base = Case("bench_live 2v2 fights (baseline)", live_case(args.fights), kind="live", workers=1)
        cases = [base]
        cpu: dict[str, list[float]] = {p: [] for p in [*policies, "pool"]}
        serials = {p: Case(f"simulate, {p}, serial", simulate_case(encounter, p, alone, args.fights, args.batch,
                                                                   cpu[p]),
                           kind="serial", policy=p, workers=1) for p in policies}
        cases += serials.values()
        parallel = [Case("simulate, aggressive, pool of 2",
                         simulate_case(encounter, "aggressive", two, 2 * args.fights, args.batch, cpu["pool"]),
                         kind="pool", policy="aggressive", workers=2)]
        if args.dask:
            cluster = stack.enter_context(dask("local:2"))
            parallel.append(Case("simulate, aggressive, Dask LocalCluster of 2",
                                 simulate_case(encounter, "aggressive", cluster, 2 * args.fights, args.batch),
                                 kind="dask", policy="aggressive", workers=2))
        cases += parallel
        run_interleaved(cases, args.repeat)  # the warm-up round starts the pool's and the cluster's workers
    info = _common.machine()
    live_rate = base.rate
    rows, results = [], []
    for case in cases:
        per_s = case.rate
        row: dict[str, Any] = {**case.as_dict(), "fights_per_s": per_s, "ratio_to_bench_live": per_s / live_rate}
        if case.info["kind"] in ("pool", "dask"):
            one = serials.get(case.info["policy"])
            if one is not None:
                row["efficiency"] = per_s / (case.info["workers"] * one.rate)
            if case.info["kind"] == "pool" and "aggressive" in cpu and cpu["aggressive"]:
                # CPU seconds a fight, serial against pool (workers and this process), warm-up runs left out: the
                # efficiency two idle cores would give, whatever the load now
                serial_cpu = statistics.median(cpu["aggressive"][1:]) / args.fights
                pool_cpu = statistics.median(cpu["pool"][1:]) / (2 * args.fights)
                row["cpu_s_per_fight"] = pool_cpu
                row["cpu_efficiency"] = serial_cpu / pool_cpu
        if case.info["kind"] == "serial":
            row["goal_per_core"] = GOAL_PER_CORE
            if cpu.get(case.info["policy"]):
                row["cpu_s_per_fight"] = statistics.median(cpu[case.info["policy"]][1:]) / args.fights
        results.append(row)
        rows.append([case.name, f"{per_s:,.0f}", f"{per_s / case.info['workers']:,.0f}",
                     f"{per_s / live_rate:.2f}x", f"{row['efficiency']:.0%}" if "efficiency" in row else "",
                     f"{row['cpu_s_per_fight'] * 1e3:.2f} ms" if "cpu_s_per_fight" in row else "",
                     f"{row['cpu_efficiency']:.0%}" if "cpu_efficiency" in row else "", _common.spread(case)])
    if args.json:
        _common.emit_json({"machine": info, "fights": args.fights, "batch": args.batch, "results": results,
                           "goals": {"per_core": GOAL_PER_CORE, "efficiency_2": GOAL_EFFICIENCY}})
        return 0
    _common.print_machine(info)
    print(table(["case", "fights/s", "per core", "vs bench_live", "efficiency", "CPU a fight", "CPU efficiency",
                 "run time (fastest – slowest)"], rows))
    aggressive = serials.get("aggressive")
    if aggressive is not None:
        pool_row = results[len(cases) - len(parallel)]
        print(f"\ngoal: >= {GOAL_PER_CORE:.0f} fights/s per core with the built-in policies, {GOAL_RATIO:.2f}x "
              f"bench_live's {BENCH_LIVE_QUIET:.0f}/s on a quiet core; here: "
              + ", ".join(f"{p} {serials[p].rate / live_rate:.2f}x" for p in serials)
              + f" bench_live's rate in this run. Parallel efficiency at 2 >= {GOAL_EFFICIENCY:.0%}: wall "
              f"{pool_row.get('efficiency', 0):.0%} under this load, CPU {pool_row.get('cpu_efficiency', 0):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
