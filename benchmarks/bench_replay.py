"""Replay throughput against bare msgspec decoding of the same JSON Lines file, in one process.

Cases, all on the same generated fight log (``genlog.py``), all streaming from the file:

- ``bare decode`` (the baseline): ``msgspec.json.Decoder(StoredEvent)`` on every line, nothing else;
- ``plain replay``: ``replay_store(JsonlStore.single(path), fight_id)`` (what ``omen replay`` runs):
  the lazy fold of ``omen_core.lazy`` over the file's raw lines (every envelope decoded and every
  event's order checked; an event body decoded in full only where the fold needs it), the state at
  the end;
- ``verified replay``: what ``Fight.load`` does: the same read into a list, every event
  through ``chain_breaks`` (seq, link and sha256 of the canonical body), then ``project``.

Goals: plain replay at least 1/4 of the bare decode rate, verified replay at least 1/8.

The breakdown rows (skip them with ``--no-breakdown``) split the costs: the lazy fold's
decoding alone (``read_lines`` and ``decode_lazy`` on every line, no fold), the reference
plain replay (every event decoded in full: ``undo_history`` over one streaming read, then
``project(second read, voided=...)``, as plain replay ran before the lazy fold), the
store's read alone, the read plus the hash chain, and ``project`` alone over events
already decoded in memory.
``--profile`` prints the time plain replay spends in the cyclic garbage collector, and a
cProfile of plain replay, top functions by own time.

    .venv/bin/python benchmarks/bench_replay.py --events 100000
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys

import _common
import msgspec  # noqa: E402
from _common import Case, fmt_rate, fmt_s, run_interleaved, streaming_replay, table
from genlog import FIGHT_ID, ensure_log, quiet_logging  # noqa: E402

from omen_core.events import StoredEvent, chain_breaks  # noqa: E402
from omen_core.lazy import decode_lazy  # noqa: E402
from omen_core.state import project  # noqa: E402
from omen_core.store import JsonlStore  # noqa: E402
from omen_replay.replay import replay_store  # noqa: E402

GOALS = {"plain replay": 1 / 4, "verified replay": 1 / 8}


def bare_decode(path) -> int:
    decode = msgspec.json.Decoder(StoredEvent).decode
    n = 0
    with open(path, "rb") as f:
        for line in f:
            decode(line)
            n += 1
    return n


def plain_replay(path) -> int:
    return replay_store(JsonlStore.single(path), FIGHT_ID).version


def verified_replay(path) -> int:
    """What ``Fight.load`` does: read the log, check the whole hash chain, then project it."""
    records = list(JsonlStore.single(path).read(FIGHT_ID))
    breaks = list(chain_breaks(records, FIGHT_ID))
    if breaks:
        raise RuntimeError(f"the log's chain is broken: {breaks[:3]}")
    return project(records).version


def lazy_decode(path) -> int:
    """The lazy fold's reading and decoding alone: every line of ``read_lines`` through ``decode_lazy``."""
    n = 0
    for chunk in JsonlStore.single(path).read_lines(FIGHT_ID):
        for line in chunk:
            decode_lazy(line)
            n += 1
    return n


def store_read(path) -> int:
    n = 0
    for _ in JsonlStore.single(path).read(FIGHT_ID):
        n += 1
    return n


def chain_only(path) -> int:
    n = 0

    def counted(records):
        nonlocal n
        for n, rec in enumerate(records, 1):  # noqa: B007
            yield rec

    breaks = list(chain_breaks(counted(JsonlStore.single(path).read(FIGHT_ID)), FIGHT_ID))
    assert not breaks
    return n


def gc_share(fn) -> dict:
    """Run ``fn`` once, timing the cyclic garbage collector's passes (``gc.callbacks``)."""
    import gc
    import time

    spent = {0: 0.0, 1: 0.0, 2: 0.0}
    count = {0: 0, 1: 0, 2: 0}
    started: list[float] = []

    def callback(phase, info):
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


def profile_plain(path, top: int) -> str:
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
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each case (default 5; the best counts)")
    parser.add_argument("--no-breakdown", action="store_true", help="only the three cases with goals")
    parser.add_argument("--profile", type=int, nargs="?", const=25, default=0, metavar="TOP",
                        help="also print a cProfile of plain replay (top TOP functions, default 25)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    path = ensure_log(args.events, progress=not args.json)

    cases = [Case("bare decode", lambda: bare_decode(path)),
             Case("plain replay", lambda: plain_replay(path)),
             Case("verified replay", lambda: verified_replay(path))]
    breakdown: list[Case] = []
    if not args.no_breakdown:
        records = list(JsonlStore.single(path).read(FIGHT_ID))
        breakdown = [Case("lazy decode only (read_lines + decode_lazy)", lambda: lazy_decode(path)),
                     Case("reference plain replay (full decode, 2 passes)", lambda: streaming_replay(path, FIGHT_ID)),
                     Case("store read (decode + seq check)", lambda: store_read(path)),
                     Case("store read + hash chain", lambda: chain_only(path)),
                     Case("project only (events in memory)", lambda: project(records).version)]
    run_interleaved(cases + breakdown, args.repeat)
    base = cases[0].rate
    info = _common.machine()

    results = []
    for case in cases + breakdown:
        ratio = case.rate / base
        goal = GOALS.get(case.name)
        results.append({"case": case.name, **case.as_dict(), "ratio_to_bare": ratio,
                        "median_ratio_to_bare": case.median_rate / cases[0].median_rate,
                        "goal_ratio": goal, "goal_met": None if goal is None else ratio >= goal})
    if args.json:
        _common.emit_json({"benchmark": "replay", "log": str(path), "events": args.events,
                           "repeat": args.repeat, "machine": info, "results": results})
    else:
        _common.print_machine(info)
        print(f"log: {path.name} ({args.events:,} events, {path.stat().st_size / 1e6:,.1f} MB), "
              f"best of {args.repeat} runs (the median-based ratio is shown for the spread)\n")
        rows = []
        for r in results:
            goal = "" if r["goal_ratio"] is None else f"≥ 1/{round(1 / r['goal_ratio'])}"
            met = "" if r["goal_met"] is None else ("met" if r["goal_met"] else
                                                     f"MISSED ({r['ratio_to_bare'] / r['goal_ratio']:.2f}× of goal)")
            rows.append([r["case"], fmt_s(r["best_s"]), fmt_rate(r["events_per_s"]),
                         f"{r['ratio_to_bare']:.3f} " + (f"(1/{1 / r['ratio_to_bare']:.1f})" if r["ratio_to_bare"] < 1
                                                         else f"({r['ratio_to_bare']:.2f}×)"),
                         f"{r['median_ratio_to_bare']:.3f}", goal, met])
        print(table(["case", "time", "events/s", "ratio to bare", "(medians)", "goal", "status"], rows))
    if args.profile:
        out = sys.stderr if args.json else sys.stdout
        print("\ntime in the cyclic garbage collector (one run each):", file=out)
        for name, fn in (("plain replay", lambda: plain_replay(path)),
                         ("reference plain replay (full decode, 2 passes)", lambda: streaming_replay(path, FIGHT_ID))):
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
