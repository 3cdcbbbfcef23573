"""Start-up (issue #26): ``omen --help`` and friends against ``python -c pass`` (the baseline: the interpreter's own
start), each in a fresh process, timed from spawn to exit with ``time.perf_counter`` (a timer far finer than
``/usr/bin/time``'s 10 ms), medians of interleaved runs.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 41] [--json]

The goal: ``omen --help`` at most 5x ``python -c pass``. The CLI imports typer alone at start-up and each command
imports the engine when it runs (``omen_cli/``). Byte-code is compiled first (``compileall``) and the
children may read it, as in an installed omen (``PYTHONDONTWRITEBYTECODE`` set in the environment would otherwise
make every start compile the CLI's source).
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import time
from typing import Any

from _common import (
    LOAD,
    OMEN,
    PYTHON,
    ROOT,
    Case,
    emit_json,
    fmt_s,
    machine,
    print_machine,
    run_interleaved,
    spread,
    table,
)

GOAL = 5.0  # omen --help at most 5x python -c pass


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str]) -> Any:
    """One fresh process, spawn to exit (its output discarded)."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(), check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {done.returncode}")
    return 1, elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=41, help="interleaved runs per case (default 41)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    for package in ("omen_core", "omen_replay", "omen_cli"):
        compileall.compile_dir(ROOT / package, quiet=1)
    cases = [
        Case("python -c pass", lambda: timed([str(PYTHON), "-c", "pass"])),
        Case("python -c 'import typer'", lambda: timed([str(PYTHON), "-c", "import typer"])),
        Case("omen --help", lambda: timed([str(OMEN), "--help"])),
        Case("omen verify --help", lambda: timed([str(OMEN), "verify", "--help"])),
        Case("omen --version", lambda: timed([str(OMEN), "--version"])),
        Case("python -c 'import omen_core'", lambda: timed([str(PYTHON), "-c", "import omen_core"])),
    ]
    run_interleaved(cases, args.repeat)
    LOAD.sample()
    info = machine()
    base = cases[0]
    if args.json:
        emit_json({"machine": info, "goal_ratio": GOAL,
                   "cases": [{**c.as_dict(), "ratio": c.median / base.median} for c in cases]})
        return 0
    print_machine(info)
    rows = [[c.name, fmt_s(c.median), spread(c), f"{c.median / base.median:.2f}x"] for c in cases]
    print(f"\nstart-up, fresh processes (medians of {args.repeat} interleaved runs, time.perf_counter)")
    print(table(["command", "median", "fastest – slowest", "vs python -c pass"], rows))
    ratio = cases[2].median / base.median
    print(f"\nomen --help: {ratio:.2f}x python -c pass (goal: at most {GOAL:.0f}x): "
          f"{'met' if ratio <= GOAL else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
