"""Shared helpers of the benchmarks: the machine, the load, timing, fresh processes, tables and JSON output.

Every benchmark measures against a baseline measured in the same run and
reports ratios to it, so the figures carry over between machines better than
absolute times do. Timings are wall clock (``time.perf_counter``) with the
garbage collector left on, as in real use.

**Medians of interleaved repetitions.** Every case of a run (and every log
size: sizes are cases too) runs ``--repeat`` times, round-robin (a, b, c, a,
b, c, ...), after one untimed warm-up round, so that a slow spell of the
machine (it is shared: other sessions run tests on the same 2 CPUs) hits every
case alike. The headline figure of a case is the MEDIAN of its runs, never the
best run; the fastest and slowest runs are shown beside it for the spread, and
the JSON output keeps every run. Ratios are ratios of medians.

**The load.** The load average (``os.getloadavg``) is sampled at the start,
before every round and at the end; every script prints the range of the
1-minute figure it ran under (and the JSON output keeps the samples).

**Fresh processes.** :func:`run_child` runs a command in a fresh process and
returns its wall time and its peak resident set size. The peak comes from
``wait4`` in a small launcher process (``python -c``) that starts the command:
``ru_maxrss`` of a process includes the peak of the process that exec'd it
(Linux keeps the old image's high-water mark across ``execve``), so measured
straight from a benchmark holding a large log in memory it would report the
benchmark's own peak, and ``getrusage(RUSAGE_CHILDREN)`` is the maximum over
every child waited for so far. The launcher is a bare interpreter (about 10 MB),
far below any omen command, so the figure is the command's own (it agrees with
``/usr/bin/time -f %M``, see docs/performance.md).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: The omen command line of the repository's virtual environment, and its interpreter.
OMEN = ROOT / ".venv" / "bin" / "omen"
PYTHON = ROOT / ".venv" / "bin" / "python"

__all__ = ["ROOT", "OMEN", "PYTHON", "machine", "print_machine", "LOAD", "Case", "run_interleaved", "Child",
           "run_child", "table", "emit_json", "rate", "fmt_rate", "fmt_s", "fmt_mb", "ratio", "spread"]


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


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


class LoadLog:
    """The load averages sampled during a run (at the start, before each round, at the end)."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, list[float]]] = []
        self.sample()

    def sample(self) -> None:
        load = _loadavg()
        if load is not None:
            self.samples.append((time.time(), load))

    def one_minute(self) -> tuple[float, float, float] | None:
        """(min, median, max) of the 1-minute load average over the samples."""
        ones = [s[1][0] for s in self.samples]
        return (min(ones), statistics.median(ones), max(ones)) if ones else None

    def as_dict(self) -> dict[str, Any]:
        one = self.one_minute()
        return {"samples": [{"t": round(t, 1), "loadavg": la} for t, la in self.samples],
                "one_minute_min_median_max": one}

    def describe(self) -> str:
        one = self.one_minute()
        if one is None:  # pragma: no cover - not Linux
            return "load average: unknown"
        return (f"1-minute load average {one[0]:.2f}–{one[2]:.2f} (median {one[1]:.2f}) over "
                f"{len(self.samples)} samples")


#: The load log of this run: :func:`run_interleaved` and :func:`run_child` sample it.
LOAD = LoadLog()


def machine() -> dict[str, Any]:
    """What the figures were measured on (and under what load)."""
    LOAD.sample()
    try:
        usable: int | None = len(os.sched_getaffinity(0))
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
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "load": LOAD.as_dict(),
    }


def _source_fingerprint() -> str:
    """sha256 over the sources of omen_core/, omen_replay/ and omen_cli/: which code the figures are for (the tree
    is edited often)."""
    import hashlib

    digest = hashlib.sha256()
    for pkg in ("omen_core", "omen_replay", "omen_cli"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def print_machine(info: dict[str, Any]) -> None:
    print(f"machine: {info['nproc']} CPU ({info['cpu']}), {info['ram_gib']} GiB RAM, "
          f"{info['implementation']} {info['python']}, msgspec {info['msgspec']}; "
          f"omen sources {info['omen_source_sha256']}; {info['date']}; {LOAD.describe()} "
          "(other processes on the machine skew absolute times; ratios less so)")


class Case:
    """One timed case: a name, a function, and its runs.

    The function returns the number of events it handled, or ``(events,
    seconds)`` when it times itself (untimed setup or teardown), or ``(events,
    seconds, peak_mb)`` for a fresh process (:func:`run_child`).
    """

    def __init__(self, name: str, fn: Callable[[], Any], **info: Any):
        self.name, self.fn, self.info = name, fn, info
        self.seconds: list[float] = []
        self.peaks: list[float] = []
        self.events = 0

    def run_once(self) -> None:
        gc.collect()
        start = time.perf_counter()
        result = self.fn()
        elapsed = time.perf_counter() - start
        if isinstance(result, tuple):
            events, elapsed, *peak = result
            if peak:
                self.peaks.append(peak[0])
        else:
            events = result
        self.seconds.append(elapsed)
        if self.events and events != self.events:
            raise RuntimeError(f"{self.name}: handled {events} events, earlier {self.events}")
        self.events = events

    @property
    def median(self) -> float:
        """The headline figure: the median of the runs, in seconds."""
        return statistics.median(self.seconds)

    @property
    def fastest(self) -> float:
        return min(self.seconds)

    @property
    def slowest(self) -> float:
        return max(self.seconds)

    @property
    def rate(self) -> float:
        """Events per second, from the median run."""
        return rate(self.events, self.median)

    @property
    def peak_mb(self) -> float | None:
        """The median peak RSS of the runs in fresh processes, MB (2^20 bytes)."""
        return statistics.median(self.peaks) if self.peaks else None

    def as_dict(self) -> dict[str, Any]:
        out = {"case": self.name, **self.info, "events": self.events, "median_s": self.median,
               "min_s": self.fastest, "max_s": self.slowest, "runs_s": self.seconds,
               "events_per_s": self.rate}
        if self.peaks:
            out.update(peak_rss_mb=self.peak_mb, peak_rss_max_mb=max(self.peaks), peaks_mb=self.peaks)
        return out


def run_interleaved(cases: Sequence[Case], repeat: int, warmup: bool = True) -> None:
    """Run every case ``repeat`` times, round-robin (a, b, c, a, b, c, ...), after one untimed warm-up round."""
    if warmup:
        for case in cases:
            case.fn()
    for _ in range(repeat):
        LOAD.sample()
        for case in cases:
            case.run_once()
    LOAD.sample()


def ratio(case: Case, base: Case) -> float:
    """The ratio of two cases' medians (time of ``case`` over time of ``base``)."""
    return case.median / base.median


def spread(case: Case) -> str:
    """The fastest and slowest runs, for a table column."""
    return f"{fmt_s(case.fastest)} – {fmt_s(case.slowest)}"


# -- fresh processes ------------------------------------------------------------------------------------------------

_LAUNCHER = r"""
import json, os, subprocess, sys, time
argv, out, err, cwd = json.loads(sys.argv[1])
with open(out, "wb") as o, open(err, "wb") as e:
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=o, stderr=e, stdin=subprocess.DEVNULL, cwd=cwd)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
child.returncode = os.waitstatus_to_exitcode(status)
print(json.dumps({"seconds": seconds, "maxrss_kib": usage.ru_maxrss, "returncode": child.returncode}))
"""


class Child:
    """What :func:`run_child` measured of one fresh process."""

    def __init__(self, argv: list[str], seconds: float, peak_mb: float, returncode: int, stdout: bytes,
                 stderr: bytes):
        self.argv, self.seconds, self.peak_mb, self.returncode = argv, seconds, peak_mb, returncode
        self.stdout, self.stderr = stdout, stderr


def run_child(argv: Sequence[str | os.PathLike[str]], *, cwd: str | os.PathLike[str] | None = None,
              check: bool = True, scratch: str | os.PathLike[str] | None = None) -> Child:
    """Run ``argv`` in a fresh process; its wall time (from spawn to exit) and peak RSS (``wait4``'s ``ru_maxrss``,
    read by a small launcher process, see the module's docstring).

    The command's standard output and error go to files in ``scratch`` (a
    temporary directory by default) and are returned; with ``check``, a
    non-zero exit raises with its error output.
    """
    import tempfile

    LOAD.sample()
    args = [str(a) for a in argv]
    with tempfile.TemporaryDirectory(prefix="omen-bench-child-", dir=scratch) as tmp:
        out, err = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        launched = subprocess.run([sys.executable, "-c", _LAUNCHER,
                                   json.dumps([args, out, err, None if cwd is None else str(cwd)])],
                                  check=True, capture_output=True, text=True)
        result = json.loads(launched.stdout)
        with open(out, "rb") as f:
            stdout = f.read()
        with open(err, "rb") as f:
            stderr = f.read()
    child = Child(args, result["seconds"], result["maxrss_kib"] / 1024, result["returncode"], stdout, stderr)
    if check and child.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited with {child.returncode}: "
                           f"{stderr.decode(errors='replace')[-2000:]}{stdout.decode(errors='replace')[-1000:]}")
    return child


# -- output ---------------------------------------------------------------------------------------------------------


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


def fmt_mb(mb: float | None) -> str:
    return "" if mb is None else f"{mb:,.1f} MB"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain Markdown table (it reads well in a terminal too)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    right = [i > 0 for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w)
                                 for c, w, r in zip(cells, widths, right, strict=True)) + " |"

    sep = "| " + " | ".join(("-" * (w - 1) + ":") if r else "-" * w for w, r in zip(widths, right, strict=True)) + " |"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def emit_json(payload: dict[str, Any]) -> None:
    json.dump(payload, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
