"""Undo and redo on logs of 1k, 100k and 1M events, against the 1k log in the same run: through the library and
from the command line (a fresh process each).

Each generated log is copied with its sidecars (``.idx``, ``.marks`` and the
engine's snapshots every 500 events in ``.snapshots/``) into a temporary
directory, once for each part:

- **library** (``--no-library`` skips it): the copy is loaded once with
  ``Fight.load(JsonlStore.single(copy), id, snapshots=open_snapshots(copy))``,
  then ``Fight.undo()`` (undo the last command: the GM's ending the fight; the logs here leave the seed
  unrevealed, as a revealed seed's reveal is never undone, C42) and
  ``Fight.redo()`` are timed, alternately, as at the table: each appends its
  marker (fsync) and leaves the fight's state current.
- **CLI** (``--no-cli`` skips it): ``omen undo LOG`` and ``omen redo LOG``,
  alternately, each in a fresh process of the venv's ``omen``: the process
  loads the fight from its latest usable snapshot (``open_snapshots(LOG)``),
  decides the undo, appends it, keeps snapshotting as the log grows, prints the
  state. Their peak RSS is shown too. A fresh interpreter that only imports
  ``omen_cli`` is timed beside them: the floor of any command.

The cases (undo 1k, undo 100k, undo 1M, redo 1k, redo 100k, redo 1M) run
round-robin, ``--repeat`` times (the library after one untimed round); the
figures are medians. Goal: undo (and redo) on the 1M log within 2x of the 1k
log, from a fresh process too.

    .venv/bin/python benchmarks/bench_undo.py [--sizes 1000 100000 1000000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import _common
from _common import OMEN, PYTHON, Case, fmt_mb, fmt_s, ratio, run_child, run_interleaved, table
from genlog import CACHE, FIGHT_ID, copy_log, ensure_log, quiet_logging

from omen_core import Fight
from omen_core.store import JsonlStore, open_snapshots

GOAL = 2.0


def library_cases(sizes: list[int], work: Path) -> list[Case]:
    fights: dict[int, Fight] = {}
    for n in sizes:
        path = copy_log(ensure_log(n, reveal=False), work / f"lib-{n}")
        fights[n] = Fight.load(JsonlStore.single(path), FIGHT_ID, snapshots=open_snapshots(str(path)))
    undos = [Case(f"undo {n}", partial(_undo, fights[n]), log_events=n, op="undo") for n in sizes]
    redos = [Case(f"redo {n}", partial(_redo, fights[n]), log_events=n, op="redo") for n in sizes]
    return undos + redos


def _undo(fight: Fight) -> int:
    fight.undo(reason="benchmark")
    return 1


def _redo(fight: Fight) -> int:
    fight.redo(reason="benchmark")
    return 1


def cli_cases(sizes: list[int], work: Path) -> list[Case]:
    logs = {n: copy_log(ensure_log(n, reveal=False), work / f"cli-{n}") for n in sizes}
    undos = [Case(f"cli undo {n}", partial(_cli, "undo", logs[n]), log_events=n, op="undo") for n in sizes]
    redos = [Case(f"cli redo {n}", partial(_cli, "redo", logs[n]), log_events=n, op="redo") for n in sizes]
    return undos + redos


def _cli(op: str, path: Path) -> tuple[int, float, float]:
    child = run_child([str(OMEN), op, str(path), "--reason", "benchmark"])
    if not child.stdout.startswith(b"undone:" if op == "undo" else b"redone:"):
        raise RuntimeError(f"omen {op} said: {child.stdout[:300]!r}")
    return 1, child.seconds, child.peak_mb


def _floor() -> tuple[int, float, float]:
    child = run_child([str(PYTHON), "-c", "import omen_cli"])
    return 1, child.seconds, child.peak_mb


def report(cases: list[Case], sizes: list[int], cli: bool) -> tuple[list[dict[str, Any]], list[list[str]]]:
    by = {(c.info["op"], c.info["log_events"]): c for c in cases if "op" in c.info}
    results, rows = [], []
    for c in cases:
        if "op" not in c.info:
            results.append(c.as_dict())
            rows.append(["(floor)", "imports only", fmt_s(c.median), _common.spread(c),
                         *([fmt_mb(c.peak_mb)] if cli else []), "", ""])
            continue
        op, n = c.info["op"], c.info["log_events"]
        r = ratio(c, by[(op, sizes[0])])
        met = None if n == sizes[0] else r <= GOAL
        results.append({**c.as_dict(), "ratio_to_smallest": r, "goal_met": met})
        rows.append([f"{n:,}", op, fmt_s(c.median), _common.spread(c), *([fmt_mb(c.peak_mb)] if cli else []),
                     f"{r:.2f}×", "" if met is None else ("met" if met else "MISSED")])
    return results, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=7, help="undo/redo pairs per log (default 7; the median counts)")
    parser.add_argument("--no-library", action="store_true", help="skip Fight.undo()/redo() in process")
    parser.add_argument("--no-cli", action="store_true", help="skip `omen undo` / `omen redo` in fresh processes")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    sizes = sorted(set(args.sizes))
    for n in sizes:
        ensure_log(n, progress=not args.json, reveal=False)
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="undo-", dir=CACHE))
    out: dict[str, list[dict[str, Any]]] = {}
    texts = []
    try:
        if not args.no_library:
            cases = library_cases(sizes, work)
            run_interleaved(cases, args.repeat)
            out["library"], rows = report(cases, sizes, False)
            texts.append("library: Fight.undo() / Fight.redo() on a fight loaded once (snapshots every 500 events, "
                         "JSON Lines store, fsync on append)\n\n" +
                         table(["log events", "", "time", "(min – max)", f"vs {sizes[0]:,}",
                                f"goal ≤ {GOAL:.0f}×"], rows))
        if not args.no_cli:
            cases = [Case("imports only", _floor), *cli_cases(sizes, work)]
            run_interleaved(cases, args.repeat, warmup=False)
            out["cli"], rows = report(cases, sizes, True)
            texts.append("CLI: `omen undo LOG` / `omen redo LOG`, each in a fresh process (the floor: a fresh "
                         "interpreter importing omen_cli)\n\n" +
                         table(["log events", "", "time", "(min – max)", "peak RSS", f"vs {sizes[0]:,}",
                                f"goal ≤ {GOAL:.0f}×"], rows))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info = _common.machine()
    if args.json:
        _common.emit_json({"benchmark": "undo", "sizes": sizes, "repeat": args.repeat, "machine": info, **out})
        return 0
    _common.print_machine(info)
    print(f"medians of {args.repeat} interleaved runs (undo and redo alternate on each log; sizes interleaved)\n")
    print("\n\n".join(texts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
