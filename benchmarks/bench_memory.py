"""Peak memory (and wall time) of omen's audit and reporting commands, each in a fresh process, on a 1M-event log
against a 1k-event log.

Issue #10 asks that verify, every ``omen log`` format and explain stream in one
pass, in bounded memory: at most 100 MB each on a 1M-event log (they peaked at
862 MiB and 1.6 GiB before). Each command runs as the venv's ``omen`` would be
run by hand, in a fresh process; its peak resident set size comes from
``wait4`` (``_common.run_child``: a small launcher starts the command, so the
figure is the command's own, not the benchmark's). Commands:

- ``omen verify LOG`` (the whole audit: chain, order, re-decision, dice, totals);
- ``omen log LOG --format html -o FILE`` (the session log page; ``--all-formats``
  adds ``text`` and ``md``);
- ``omen explain LOG SEQ``, SEQ the last attack declared in the log (near its end);
- ``omen replay LOG`` on a copy of the log without its snapshots (the fold from
  seq 1: the older goal, at most 200 MB);
- for the floor: a fresh interpreter importing ``omen_cli`` and nothing else.

Every (log size, command) pair is a case; the cases run round-robin,
``--repeat`` times (default 3), and the figures are the medians (the spread is
shown). The logs are read once beforehand so every run starts from a warm page
cache. Goal: each of verify, log html and explain at most 100 MB at 1M events.

    .venv/bin/python benchmarks/bench_memory.py [--sizes 1000 1000000] [--repeat 3] [--all-formats]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from functools import partial
from pathlib import Path

import _common
from _common import OMEN, PYTHON, Case, fmt_mb, fmt_s, run_child, run_interleaved, table
from genlog import CACHE, ensure_log, link_log, quiet_logging

GOAL_MB = 100.0          # verify, log (every format) and explain on the 1M-event log
REPLAY_GOAL_MB = 200.0   # the older goal for a replay of the 1M-event log
GOALS = {"verify": GOAL_MB, "log html": GOAL_MB, "log text": GOAL_MB, "log md": GOAL_MB, "explain": GOAL_MB,
         "replay (no snapshots)": REPLAY_GOAL_MB}


def last_attack(path: Path) -> int:
    """The seq of the last ``attack_declared`` in the log (read from its tail)."""
    from omen_core.events import AttackDeclared, decode_line

    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        back = 1 << 16
        while True:
            f.seek(max(size - back, 0))
            lines = f.read().split(b"\n")[1:]
            for line in reversed(lines):
                if b'"type":"attack_declared"' in line:
                    rec = decode_line(line)
                    assert isinstance(rec.event, AttackDeclared)
                    return rec.seq
            if back >= size:
                raise RuntimeError(f"{path} declares no attack")
            back *= 4


def warm(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def commands(n: int, path: Path, bare: Path, out: Path, formats: list[str]) -> list[tuple[str, list[str], str]]:
    """(name, argv, what) for each command on the log of ``n`` events."""
    seq = last_attack(path)
    found = [("verify", [str(OMEN), "verify", str(path)], "omen verify LOG")]
    for fmt in formats:
        suffix = {"text": "txt"}.get(fmt, fmt)
        found.append((f"log {fmt}", [str(OMEN), "log", str(path), "--format", fmt, "-o", str(out / f"{n}.{suffix}")],
                      f"omen log LOG --format {fmt} -o FILE"))
    found.append(("explain", [str(OMEN), "explain", str(path), str(seq)], f"omen explain LOG {seq} (the last attack)"))
    found.append(("replay (no snapshots)", [str(OMEN), "replay", str(bare)], "omen replay LOG, the log without "
                                                                               "its .snapshots"))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 1_000_000],
                        help="log sizes in events (default 1000 1000000); the goal is read at the largest")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command on each log (default 3)")
    parser.add_argument("--all-formats", action="store_true", help="omen log in text and md too, not only html")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    sizes = sorted(set(args.sizes))
    formats = ["html", "text", "md"] if args.all_formats else ["html"]
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="memory-", dir=CACHE))
    try:
        cases: dict[tuple[int, str], Case] = {}
        floor = Case("imports only", lambda: _timed([str(PYTHON), "-c", "import omen_cli"], 0),
                     what="python -c 'import omen_cli'")
        for n in sizes:
            path = ensure_log(n, progress=not args.json)
            warm(path)
            bare = link_log(path, work / f"bare-{n}")
            for name, cmd, what in commands(n, path, bare, work, formats):
                cases[(n, name)] = Case(f"{n} {name}", partial(_timed, cmd, n), log_events=n, what=what)
        order = [floor, *cases.values()]
        run_interleaved(order, args.repeat, warmup=False)
        outputs = {p.name: p.stat().st_size for p in work.iterdir() if p.is_file()}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    info = _common.machine()
    top = sizes[-1]
    results = [floor.as_dict()]
    for (n, name), case in cases.items():
        goal = GOALS.get(name) if n == top else None
        peak, smallest = case.peak_mb, cases[(sizes[0], name)].peak_mb
        assert peak is not None and smallest is not None  # every case ran in fresh processes
        results.append({**case.as_dict(), "command": name, "goal_mb": goal,
                        "goal_met": None if goal is None else peak <= goal,
                        "peak_vs_smallest": peak / smallest})
    if args.json:
        _common.emit_json({"benchmark": "memory", "sizes": sizes, "repeat": args.repeat, "machine": info,
                           "results": results, "outputs_bytes": outputs})
        return 0
    _common.print_machine(info)
    print(f"each command in a fresh process, {args.repeat} runs, round-robin over every (log, command); medians; "
          f"peak RSS from wait4 (MB = 2^20 bytes)\n")
    rows = [["(floor)", "imports only", fmt_mb(floor.peak_mb), fmt_mb(max(floor.peaks)), fmt_s(floor.median),
             _common.spread(floor), "", ""]]
    for row, case in zip(results[1:], cases.values(), strict=True):
        status = "" if row["goal_mb"] is None else (
            "met" if row["goal_met"] else f"MISSED ({row['peak_rss_mb'] / row['goal_mb']:.1f}× the goal)")
        wanted = "" if row["goal_mb"] is None else f"≤ {row['goal_mb']:.0f} MB: {status}"
        rows.append([f"{row['log_events']:,}", row["command"], fmt_mb(row["peak_rss_mb"]),
                     fmt_mb(row["peak_rss_max_mb"]), fmt_s(row["median_s"]), _common.spread(case),
                     f"{row['peak_vs_smallest']:.2f}×", wanted])
    print(table(["log events", "command", "peak RSS (median)", "(max)", "time (median)", "(min – max)",
                 f"peak vs {sizes[0]:,}", "goal"], rows))
    print()
    for r in results[1:]:
        print(f"  {r['log_events']:,} {r['command']}: {r['what']}")
    print("  output files: " + ", ".join(f"{k} {v / 1e6:,.1f} MB" for k, v in sorted(outputs.items())))
    return 0


def _timed(argv: list[str], events: int) -> tuple[int, float, float]:
    child = run_child(argv)
    return events, child.seconds, child.peak_mb


if __name__ == "__main__":
    raise SystemExit(main())
