"""Replay throughput against bare msgspec decoding of the same JSON Lines file, in one process.

Cases, all on the same generated fight log (``genlog.py``), all streaming from the file:

- ``bare decode`` (the baseline): ``msgspec.json.Decoder(StoredEvent)`` on every line, nothing else;
- ``plain replay``: ``project(JsonlStore.single(path).read(fight_id))``, the state at the end;
- ``verified replay``: what ``Fight.load`` does: the same read into a list, every event
  through ``chain_breaks`` (seq, link and sha256 of the canonical body), then ``project``.

Goals: plain replay at least 1/4 of the bare decode rate, verified replay at least 1/8.

The breakdown rows (skip them with ``--no-breakdown``) split the costs: the store's read
alone, the read plus the hash chain, and ``project`` alone over events already decoded in memory.
``--profile`` prints a cProfile of plain replay, top functions by own time.

    .venv/bin/python benchmarks/bench_replay.py --events 100000
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys

import _common
from _common import Case, fmt_rate, fmt_s, run_interleaved, table

import msgspec  # noqa: E402

from genlog import FIGHT_ID, ensure_log, quiet_logging  # noqa: E402
from omen_core.events import StoredEvent, chain_breaks  # noqa: E402
from omen_core.state import project  # noqa: E402
from omen_core.store import JsonlStore  # noqa: E402

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
    return project(JsonlStore.single(path).read(FIGHT_ID)).version


def verified_replay(path) -> int:
    """What ``Fight.load`` does: read the log, check the whole hash chain, then project it."""
    records = list(JsonlStore.single(path).read(FIGHT_ID))
    breaks = list(chain_breaks(records, FIGHT_ID))
    if breaks:
        raise RuntimeError(f"the log's chain is broken: {breaks[:3]}")
    return project(records).version


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
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each case (default 3; median)")
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
        breakdown = [Case("store read (decode + seq check)", lambda: store_read(path)),
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
                        "goal_ratio": goal, "goal_met": None if goal is None else ratio >= goal})
    if args.json:
        _common.emit_json({"benchmark": "replay", "log": str(path), "events": args.events,
                           "repeat": args.repeat, "machine": info, "results": results})
    else:
        _common.print_machine(info)
        print(f"log: {path.name} ({args.events:,} events, {path.stat().st_size / 1e6:,.1f} MB), "
              f"median of {args.repeat} runs\n")
        rows = []
        for r in results:
            goal = "" if r["goal_ratio"] is None else f"≥ 1/{round(1 / r['goal_ratio'])}"
            met = "" if r["goal_met"] is None else ("met" if r["goal_met"] else
                                                     f"MISSED ({r['ratio_to_bare'] / r['goal_ratio']:.2f}× of goal)")
            rows.append([r["case"], fmt_s(r["median_s"]), fmt_rate(r["events_per_s"]),
                         f"{r['ratio_to_bare']:.3f} (1/{1 / r['ratio_to_bare']:.1f})", goal, met])
        print(table(["case", "time", "events/s", "ratio to bare", "goal", "status"], rows))
    if args.profile:
        print("\ncProfile of plain replay (profiling slows it down; read the shares, not the times):",
              file=sys.stderr if args.json else sys.stdout)
        print(profile_plain(path, args.profile), file=sys.stderr if args.json else sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
