"""Append throughput of each store (memory, JSON Lines, SQLite) against raw file writes, in one process.

The events are the first events of a generated fight log (``genlog.py``),
already sealed, so every append is a valid continuation of the stream. Two
modes:

- ``single``: N appends of one event each (``--single``, default 2,000);
- ``batched``: M events in appends of B events (``--batched``, default 20,000;
  ``--batch``, default 100), B being a large command's worth of events.

The baseline, per mode, is raw file writes of the very same bytes
(``encode_line(ev) + b"\\n"``, encoded before the clock starts) to a file
opened for appending: one ``write`` + ``fsync`` per append. A second row
adds the encoding to it (every store encodes), to separate the cost of
encoding from the stores' own. The JSON Lines
store also fsyncs each append (and takes a file lock, reads the last line
back to check version and hash, and checks the batch); SQLite runs in WAL
mode, one ``BEGIN IMMEDIATE ... COMMIT`` per append with SQLite's default
``synchronous=FULL``; the memory store keeps a list and does no I/O.

Files go to a fresh directory under ``benchmarks/.cache/`` (the repository's
disk, not a tmpfs), removed at the end; ``--dir`` chooses another place.
Each case runs on a fresh store; only the appends are timed. The cases run
round-robin, ``--repeat`` times after a warm-up round; the figures are medians.

    .venv/bin/python benchmarks/bench_append.py
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import _common
from _common import Case, fmt_rate, fmt_s, run_interleaved, table
from genlog import CACHE, FIGHT_ID, ensure_log, quiet_logging

from omen_core.events import StoredEvent, encode_line
from omen_core.store import EventStore, JsonlStore, MemoryStore, SqliteStore

S = TypeVar("S", bound=EventStore)


def batches(events: list[StoredEvent], size: int) -> list[list[StoredEvent]]:
    return [events[i:i + size] for i in range(0, len(events), size)]


def raw_writes(where: Path, chunks: list[bytes]) -> tuple[int, float]:
    path = where / f"raw-{time.monotonic_ns()}.jsonl"
    with open(path, "ab", buffering=0) as f:
        fd = f.fileno()
        start = time.perf_counter()
        for data in chunks:
            f.write(data)
            os.fsync(fd)
        elapsed = time.perf_counter() - start
    path.unlink()
    return 0, elapsed


def raw_case(where: Path, chunks: list[bytes], n: int) -> tuple[int, float]:
    """The raw baseline, counted as the ``n`` events the chunks hold."""
    return n, raw_writes(where, chunks)[1]


def encode_and_write(where: Path, groups: list[list[StoredEvent]]) -> tuple[int, float]:
    """The raw baseline plus the encoding every store does: encode each append's events, write, fsync."""
    path = where / f"raw-{time.monotonic_ns()}.jsonl"
    n = 0
    with open(path, "ab", buffering=0) as f:
        fd = f.fileno()
        start = time.perf_counter()
        for group in groups:
            f.write(b"".join([encode_line(ev) + b"\n" for ev in group]))
            os.fsync(fd)
            n += len(group)
        elapsed = time.perf_counter() - start
    path.unlink()
    return n, elapsed


def store_appends(make: Callable[[], S], cleanup: Callable[[S], None],
                  groups: list[list[StoredEvent]]) -> tuple[int, float]:
    store = make()
    version = 0
    start = time.perf_counter()
    for group in groups:
        version = store.append(FIGHT_ID, group, version)
    elapsed = time.perf_counter() - start
    cleanup(store)
    return version, elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="append throughput per store vs raw write+fsync")
    parser.add_argument("--single", type=int, default=2_000, help="single-event appends (default 2000)")
    parser.add_argument("--batched", type=int, default=20_000, help="events appended in batches (default 20000)")
    parser.add_argument("--batch", type=int, default=100, help="events per batched append (default 100)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each case (default 5; the median counts)")
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: under benchmarks/.cache)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    need = max(args.single * 10, args.batched)
    source = ensure_log(100_000 if need <= 100_000 else need, progress=not args.json)
    events = list(itertools.islice(JsonlStore.single(source).read(FIGHT_ID), need))

    base_dir = args.dir or CACHE
    base_dir.mkdir(parents=True, exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix="append-", dir=base_dir))
    counter = itertools.count()

    def jsonl_store() -> JsonlStore:
        return JsonlStore(where / f"jsonl-{next(counter)}")

    def jsonl_cleanup(store: JsonlStore) -> None:
        assert store._dir is not None  # a directory store (JsonlStore(where)), not a single file
        shutil.rmtree(store._dir)

    def sqlite_store() -> SqliteStore:
        return SqliteStore(where / f"sqlite-{next(counter)}.db")

    def sqlite_cleanup(store: SqliteStore) -> None:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(store.path + suffix).unlink(missing_ok=True)

    def none(store: MemoryStore) -> None:
        pass

    modes: dict[str, dict[str, Any]] = {}
    try:
        for mode, groups in (("single", batches(events[:args.single], 1)),
                             ("batched", batches(events[:args.batched], args.batch))):
            n = sum(len(g) for g in groups)
            chunks = [b"".join(encode_line(ev) + b"\n" for ev in g) for g in groups]
            cases = [Case("raw write+fsync", partial(raw_case, where, chunks, n)),
                     Case("encode + raw write+fsync", partial(encode_and_write, where, groups)),
                     Case("memory", partial(store_appends, MemoryStore, none, groups)),
                     Case("jsonl (fsync)", partial(store_appends, jsonl_store, jsonl_cleanup, groups)),
                     Case("sqlite (WAL)", partial(store_appends, sqlite_store, sqlite_cleanup, groups))]
            if mode == "single":  # the memory store copies its list on each append: show how that scales
                big = batches(events[:args.single * 10], 1)
                cases.append(Case(f"memory, {len(big):,} appends", partial(store_appends, MemoryStore, none, big)))
            run_interleaved(cases, args.repeat)
            modes[mode] = {"appends": len(groups), "events": n, "cases": cases}
    finally:
        shutil.rmtree(where, ignore_errors=True)

    info = _common.machine()
    results: list[dict[str, Any]] = []
    for mode, m in modes.items():
        base = m["cases"][0]
        for case in m["cases"]:
            results.append({"mode": mode, **case.as_dict(),
                            "appends": case.events // (1 if mode == "single" else args.batch),
                            "ratio_to_raw": case.rate / base.rate,
                            "us_per_append": case.median / (case.events if mode == "single"
                                                            else m["appends"]) * 1e6})
    if args.json:
        _common.emit_json({"benchmark": "append", "single": args.single, "batched": args.batched,
                           "batch": args.batch, "repeat": args.repeat, "machine": info, "results": results})
        return 0
    _common.print_machine(info)
    print(f"events from {source.name}; medians of {args.repeat} interleaved runs; written under {base_dir}\n")
    rows = [[r["mode"] if r["mode"] == "single" else f"batched ×{args.batch}", r["case"], f"{r['events']:,}",
             fmt_s(r["median_s"]), fmt_rate(r["events_per_s"]), f"{r['us_per_append']:,.0f}",
             f"{r['ratio_to_raw']:.2f}"] for r in results]
    print(table(["mode", "store", "events", "time", "events/s", "µs/append", "vs raw write+fsync"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
