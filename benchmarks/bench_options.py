"""What ``Fight.options()`` costs (issues #11 and #13): at every head of the 2v2 fights of ``bench_live``, against
the commands that made those heads, in one process.

``omen serve`` computes the options of a fight once per head, on the live ``Fight`` that gave the command (every
answer and every stream carries them), so a head costs one command plus one ``options()``. This script plays the
2v2 fights to defeat of ``bench_live.py`` (the Ember Ford cast, seeded dice, the same policy, fight ids and seeds)
on a memory store, twice a round:

- **the fights' commands** (the baseline): the fights played from ``Fight.start`` to the end, as in
  ``bench_live``; per head, one command's cost;
- **options() at every head**: the same fights, with ``Fight.options()`` asked after every command (the start
  with its joins included), as the server does; only the time spent in ``options()`` is counted (the probes
  decide every candidate command with probing dice; the undo probe finds the state it goes back to among the
  states the live fight keeps).

Round-robin ``--repeat`` times after a warm-up round (medians, see ``_common``). The headline is the cost of
one ``options()`` and its ratio to one command.

    .venv/bin/python benchmarks/bench_options.py [--fights 3] [--repeat 9] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Collection, Sequence
from typing import Any

import _common
import bench_live
from _common import Case, run_interleaved, table
from bench_live import fights_run, sheet
from genlog import quiet_logging

from omen_core import Fight, MemoryStore
from omen_core.decide import Command
from omen_core.events import StoredEvent


class OptionsAtEveryHead(Fight):
    """A fight that asks for its options after every command, and times them."""

    spent = 0.0
    heads = 0

    def execute_all(self, commands: Sequence[Command], by: str = "", then_roll: bool = False,
                    physical: Collection[str] = (), faces_by: Sequence[tuple[str, int]] = ()) -> list[StoredEvent]:
        stored = super().execute_all(commands, by, then_roll, physical, faces_by)
        start = time.perf_counter()
        self.options()
        OptionsAtEveryHead.spent += time.perf_counter() - start
        OptionsAtEveryHead.heads += 1
        return stored


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fight.options() at every head of 2v2 fights vs their commands")
    parser.add_argument("--fights", type=int, default=3, help="2v2 fights (default 3)")
    parser.add_argument("--repeat", type=int, default=9, help="interleaved rounds (default 9)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    cast = [sheet(w) for w in ("kael", "brin", "vesh", "skarn")]
    fights = [(f"live-2v2-{i:03d}", hashlib.sha256(b"omen bench_live 2v2 %d" % i).digest())
              for i in range(args.fights)]

    def commands() -> tuple[int, float]:
        _n, seconds, _ = fights_run(MemoryStore(), fights, cast)
        return len(fights), seconds

    def options() -> tuple[int, float]:
        OptionsAtEveryHead.spent, OptionsAtEveryHead.heads = 0.0, 0
        vars(bench_live)["Fight"] = OptionsAtEveryHead  # the fights start as OptionsAtEveryHead
        try:
            fights_run(MemoryStore(), fights, cast)
        finally:
            vars(bench_live)["Fight"] = Fight
        return OptionsAtEveryHead.heads, OptionsAtEveryHead.spent

    base, opts = Case("the fights' commands (one per head)", commands), Case("options() at every head", options)
    run_interleaved([base, opts], args.repeat)
    heads = opts.events
    offers = _offers(fights, cast)
    per_head = {case.name: case.median / heads for case in (base, opts)}
    rows = [[case.name, _common.fmt_s(case.median), _common.spread(case), f"{per_head[case.name] * 1e3:.2f}",
             f"{heads / case.median:,.0f}", f"{_common.ratio(case, base):.1f}x"] for case in (base, opts)]
    result: dict[str, Any] = {
        "fights": args.fights, "heads": heads, "offers_per_head": offers / heads, "repeat": args.repeat,
        "cases": [c.as_dict() for c in (base, opts)], "options_ms": per_head[opts.name] * 1e3,
        "command_ms": per_head[base.name] * 1e3, "options_vs_command": _common.ratio(opts, base),
        "load": _common.LOAD.as_dict(), "machine": _common.machine()}
    if args.json:
        _common.emit_json(result)
        return 0
    _common.print_machine(result["machine"])
    print(f"{args.fights} 2v2 fights, {heads} heads, {offers / heads:.1f} offers a head; "
          f"{_common.LOAD.describe()}\n")
    print(table(["case", "time (run)", "(min – max)", "ms per head", "per s", "vs the commands"], rows))
    return 0


def _offers(fights: list[tuple[str, bytes]], cast: list[Any]) -> int:
    """How many offers the options of every head of the fights hold, in all (for the table's note)."""
    count = 0

    class Counting(Fight):
        def execute_all(self, commands: Sequence[Command], by: str = "", then_roll: bool = False,
                        physical: Collection[str] = (), faces_by: Sequence[tuple[str, int]] = ()
                        ) -> list[StoredEvent]:
            nonlocal count
            stored = super().execute_all(commands, by, then_roll, physical, faces_by)
            count += len(self.options().offers)
            return stored

    vars(bench_live)["Fight"] = Counting
    try:
        fights_run(MemoryStore(), fights, cast)
    finally:
        vars(bench_live)["Fight"] = Fight
    return count


if __name__ == "__main__":
    sys.exit(main())
