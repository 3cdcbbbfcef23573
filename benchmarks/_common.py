"""Shared helpers of the benchmarks: the machine, timing, tables and JSON output.

Every benchmark measures in ONE process, against a baseline measured in that
same process, and reports events per second and ratios to the baseline.
Timings are wall clock (``time.perf_counter``) with the garbage collector
left on, as in real use; each case runs ``--repeat`` times, interleaved with
the other cases (a, b, c, a, b, c, ...) so that a slow spell of the machine
hits every case alike. The figures come from each case's best run, as
``timeit`` advises: the work is deterministic and CPU-bound, so noise from
the machine (other processes on a 2-CPU VM here) only ever adds time. The
median is shown next to it, and the JSON output keeps every run.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

__all__ = ["ROOT", "machine", "Case", "run_interleaved", "table", "emit_json", "rate", "fmt_rate", "fmt_s",
           "streaming_replay"]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count()
    return {
        "nproc": usable,
        "cpu": _cpu_model(),
        "ram_gib": _ram_gib(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "msgspec": _version("msgspec"),
        "omen": _version("omen"),
        "omen_source_sha256": _source_fingerprint(),
        "loadavg_at_start": _loadavg(),
    }


def _source_fingerprint() -> str:
    """sha256 over omen_core/ and omen_replay/ sources: which code the figures are for (the tree is edited often)."""
    import hashlib

    digest = hashlib.sha256()
    for pkg in ("omen_core", "omen_replay"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


def print_machine(info: dict[str, Any]) -> None:
    print(f"machine: {info['nproc']} CPU ({info['cpu']}), {info['ram_gib']} GiB RAM, "
          f"{info['implementation']} {info['python']}, msgspec {info['msgspec']}; "
          f"omen sources {info['omen_source_sha256']}; "
          f"load average {info['loadavg_at_start']} at start, {_loadavg()} now "
          "(other processes on the machine skew absolute times; ratios less so)")


class Case:
    """One timed case: a name, a function returning the number of events it handled, and its timings.

    A function that needs untimed setup or teardown returns ``(events, seconds)`` itself.
    """

    def __init__(self, name: str, fn: Callable[[], int]):
        self.name, self.fn = name, fn
        self.seconds: list[float] = []
        self.events = 0

    def run_once(self) -> None:
        gc.collect()
        start = time.perf_counter()
        result = self.fn()
        elapsed = time.perf_counter() - start
        events, elapsed = result if isinstance(result, tuple) else (result, elapsed)
        self.seconds.append(elapsed)
        if self.events and events != self.events:
            raise RuntimeError(f"{self.name}: handled {events} events, earlier {self.events}")
        self.events = events

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def rate(self) -> float:
        """Events per second, from the best run."""
        return rate(self.events, self.best)

    @property
    def median_rate(self) -> float:
        """Events per second, from the median run."""
        return rate(self.events, self.median)

    def as_dict(self) -> dict[str, Any]:
        return {"events": self.events, "best_s": self.best, "median_s": self.median,
                "runs_s": self.seconds, "events_per_s": self.rate,
                "median_events_per_s": self.median_rate}


def run_interleaved(cases: list[Case], repeat: int, warmup: bool = True) -> None:
    """Run every case ``repeat`` times, interleaved, after one untimed warm-up round."""
    if warmup:
        for case in cases:
            case.fn()
    for _ in range(repeat):
        for case in cases:
            case.run_once()


def rate(events: int, seconds: float) -> float:
    return events / seconds if seconds > 0 else float("inf")


def fmt_rate(value: float) -> str:
    return f"{value:,.0f}"


def fmt_s(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds:,.2f} s"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain Markdown table (it reads well in a terminal too)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    right = [i > 0 for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w)
                                 for c, w, r in zip(cells, widths, right)) + " |"

    sep = "| " + " | ".join(("-" * (w - 1) + ":") if r else "-" * w for w, r in zip(widths, right)) + " |"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def emit_json(payload: dict[str, Any]) -> None:
    json.dump(payload, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def streaming_replay(path, fight_id: str) -> int:
    """The state at the end without holding the log: two streaming passes when ``project`` needs the undone seqs.

    Since undo/redo, ``project(records)`` reads the whole log into a list to
    find the undone events first; given ``voided`` (from a first streaming
    pass through ``undo_history``) it streams. On code without that
    parameter, ``project`` streams in one pass.
    """
    import inspect

    from omen_core import state as state_module
    from omen_core.store import JsonlStore

    store = JsonlStore.single(path)
    if "voided" in inspect.signature(state_module.project).parameters and hasattr(state_module, "undo_history"):
        voided = state_module.undo_history(store.read(fight_id))[0]
        return state_module.project(store.read(fight_id), voided=voided).version
    return state_module.project(store.read(fight_id)).version
