"""The state at a seq with snapshots against without, on logs of 1k, 100k and 1M events, in process and from
the command line.

Every generated log comes with the snapshots the engine writes every 500 events
(``genlog.py``: ``<log>.snapshots/``, where ``omen`` looks for them). For each
log, three seqs:

- ``middle``: the seq just before the first snapshot after the log's middle, so the
  state is rebuilt from the snapshot before it: about 500 events folded (the
  worst case between two snapshots; in the 1k log no snapshot comes before it, and
  its 500 events are folded from seq 1 either way: that row shows what looking for
  a snapshot costs);
- ``near end``: the seq just before the last snapshot, about 500 events folded too;
- ``last``: the last seq (a snapshot sits right there: nothing to fold, only finding
  and loading it).

**In process** (``--no-library`` skips it): the state at each seq through
``omen_replay.replay.replay_store(store, fight_id, to_seq, snapshots)`` with
the log's ``FileSnapshots`` (the walk from ``usable_snapshot``, as
``omen_core.walk.state_at``) and without (``snapshots=None``: the fold from seq
1). Goals: with snapshots, the 1M log within 2x of the 1k log (the same kind of
seq: ``middle`` against ``middle``...); and with a snapshot never slower than
without.

The listing of the snapshot store alone (``FileSnapshots.seqs``, which
``FileSnapshots.latest`` calls on every lookup) is timed beside them.

**From the command line** (``--no-cli`` skips it): ``omen replay LOG --to SEQ``
in a fresh process on the log as generated and on the same log without its
``.snapshots`` (a hard link with its ``.idx`` and ``.marks``), for the middle and
near-end seqs. Goal: with a snapshot never slower than without (issue #10: it
was 5.5x slower, with 10x the memory). The peak RSS of each run is shown too.

Every (log size, seq, with or without) is a case; the cases run round-robin,
sizes interleaved, ``--repeat`` times (after a warm-up round in process); the
figures are medians.

    .venv/bin/python benchmarks/bench_snapshots.py [--sizes 1000 100000 1000000] [--repeat 5] [--no-cli]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import _common
from _common import OMEN, Case, fmt_mb, fmt_s, ratio, run_child, run_interleaved, table
from genlog import CACHE, FIGHT_ID, ensure_log, link_log, quiet_logging

from omen_core.store import JsonlStore, open_snapshots
from omen_core.store.snapshots import SnapshotStore
from omen_replay.replay import replay_store

SIZE_GOAL = 2.0


def targets(path: Path, n: int) -> list[tuple[str, int, int]]:
    """(name, seq, the snapshot seq the state is rebuilt from, 0 for none) for the log of ``n`` events."""
    seqs = open_snapshots(str(path)).seqs(FIGHT_ID)
    if not seqs:
        raise RuntimeError(f"{path} has no snapshots: regenerate it (genlog.py --force {n})")

    def base(seq: int) -> int:
        return max((s for s in seqs if s <= seq), default=0)

    middle = min(s for s in seqs if s > n // 2) - 1
    near_end = seqs[-1] - 1
    return [("middle", middle, base(middle)), ("near end", near_end, base(near_end)), ("last", n, base(n))]


def library_cases(sizes: list[int], paths: dict[int, Path]) -> list[Case]:
    cases = []
    for n in sizes:
        store, snaps = JsonlStore.single(paths[n]), open_snapshots(str(paths[n]))
        for where, seq, start in targets(paths[n], n):
            for mode in ("with", "without"):
                use = snaps if mode == "with" else None
                cases.append(Case(f"{n} {where} {mode}", partial(_state, store, seq, use),
                                  log_events=n, at=where, seq=seq, snapshots=mode,
                                  folded=seq - start if mode == "with" else seq))
    return cases


def listing_cases(sizes: list[int], paths: dict[int, Path]) -> list[Case]:
    """The snapshot store's listing alone (``FileSnapshots.seqs``, which ``latest`` calls on every lookup)."""
    cases = []
    for n in sizes:
        snaps = open_snapshots(str(paths[n]))
        cases.append(Case(f"{n} listing", partial(_listing, snaps), log_events=n))
    return cases


def _listing(snapshots: SnapshotStore) -> int:
    return len(snapshots.seqs(FIGHT_ID))


def _state(store: JsonlStore, seq: int, snapshots: SnapshotStore | None) -> int:
    state = replay_store(store, FIGHT_ID, seq, snapshots)
    assert state.version == seq
    return seq


def cli_cases(sizes: list[int], paths: dict[int, Path], work: Path) -> list[Case]:
    cases = []
    for n in sizes:
        bare = link_log(paths[n], work / f"bare-{n}")
        for where, seq, start in targets(paths[n], n)[:2]:
            for mode, log in (("with", paths[n]), ("without", bare)):
                argv = [str(OMEN), "replay", str(log), "--to", str(seq), "--json"]
                cases.append(Case(f"cli {n} {where} {mode}", partial(_child, argv, seq), log_events=n,
                                  at=where, seq=seq, snapshots=mode,
                                  folded=seq - start if mode == "with" else seq))
    return cases


def _child(argv: list[str], seq: int) -> tuple[int, float, float]:
    import json

    child = run_child(argv)
    reached = json.loads(child.stdout)["seq"]
    if reached != seq:
        raise RuntimeError(f"{' '.join(argv)} reached seq {reached}")
    return seq, child.seconds, child.peak_mb


def report(title: str, cases: list[Case], sizes: list[int], cli: bool) -> tuple[list[dict[str, Any]], str]:
    by = {(c.info["log_events"], c.info["at"], c.info["snapshots"]): c for c in cases}
    results, rows = [], []
    for c in cases:
        n, at, mode = c.info["log_events"], c.info["at"], c.info["snapshots"]
        other = by[(n, at, "without" if mode == "with" else "with")]
        small = by[(sizes[0], at, mode)]
        r = {**c.as_dict(), "vs_without": ratio(c, other) if mode == "with" else None,
             "vs_smallest": ratio(c, small)}
        checks = []
        if mode == "with" and c.info["folded"] == c.info["seq"]:  # no snapshot at or before the seq
            r["goal_not_slower_met"] = None
            checks.append("no snapshot ≤ seq: the cost of looking")
        elif mode == "with":
            r["goal_not_slower_met"] = r["vs_without"] <= 1.0
            checks.append(f"≤ without: {'met' if r['goal_not_slower_met'] else 'MISSED'}")
            if not cli and n == sizes[-1] and n != sizes[0]:
                r["goal_size_met"] = r["vs_smallest"] <= SIZE_GOAL
                checks.append(f"≤ {SIZE_GOAL:.0f}× {sizes[0]:,}: {'met' if r['goal_size_met'] else 'MISSED'}")
        results.append(r)
        rows.append([f"{n:,}", f"{at} (seq {c.info['seq']:,})", mode, f"{c.info['folded']:,}", fmt_s(c.median),
                     _common.spread(c), *([fmt_mb(c.peak_mb)] if cli else []),
                     "" if r["vs_without"] is None else f"{r['vs_without']:.3f}", f"{r['vs_smallest']:.2f}×",
                     "; ".join(checks)])
    headers = ["log events", "state at", "snapshots", "events folded", "time", "(min – max)",
               *(["peak RSS"] if cli else []), "with / without", f"vs {sizes[0]:,}", "goals"]
    return results, f"{title}\n\n{table(headers, rows)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5, help="runs per case (default 5; the median counts)")
    parser.add_argument("--no-library", action="store_true", help="skip the in-process cases")
    parser.add_argument("--no-cli", action="store_true", help="skip the `omen replay --to` cases")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    sizes = sorted(set(args.sizes))
    paths = {n: ensure_log(n, progress=not args.json) for n in sizes}
    for path in paths.values():
        with open(path, "rb") as f:  # a warm page cache for every size
            while f.read(1 << 24):
                pass
    out: dict[str, list[dict[str, Any]]] = {}
    texts = []
    if not args.no_library:
        cases, listings = library_cases(sizes, paths), listing_cases(sizes, paths)
        run_interleaved(cases + listings, args.repeat)
        out["library"], text = report("in process: replay_store(store, id, to_seq, snapshots) with the log's "
                                      "snapshots, and without (snapshots=None)", cases, sizes, False)
        out["listing"] = [c.as_dict() for c in listings]
        rows = [[f"{c.info['log_events']:,}", f"{c.events:,}", fmt_s(c.median), _common.spread(c),
                 f"{ratio(c, listings[0]):.1f}×"] for c in listings]
        texts.append(text + "\n\nthe snapshot store's listing alone (FileSnapshots.seqs, which every lookup "
                     "calls):\n\n" + table(["log events", "snapshots", "time", "(min – max)",
                                              f"vs {sizes[0]:,}"], rows))
    if not args.no_cli:
        CACHE.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="snapshots-", dir=CACHE))
        try:
            cases = cli_cases(sizes, paths, work)
            run_interleaved(cases, args.repeat, warmup=False)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        out["cli"], text = report("fresh processes: `omen replay LOG --to SEQ --json` on the log with its "
                                  ".snapshots, and on the same log without them", cases, sizes, True)
        texts.append(text)
    info = _common.machine()
    if args.json:
        _common.emit_json({"benchmark": "snapshots", "sizes": sizes, "repeat": args.repeat, "machine": info, **out})
        return 0
    _common.print_machine(info)
    print(f"medians of {args.repeat} interleaved runs (sizes interleaved); snapshots every 500 events, as the engine "
          "writes them\n")
    print("\n\n".join(texts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
