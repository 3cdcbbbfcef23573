"""Append and replay throughput of the PostgreSQL store beside SQLite's (the baseline), in one run.

The events are the first events of a generated fight log (``genlog.py``),
already sealed. Three measures, each on both stores:

- ``append, single``: N appends of one event each (``--single``, default 1,000):
  one transaction each, what a server does for a small command;
- ``append, batched``: M events in appends of B (``--batched``, default 20,000;
  ``--batch``, default 100);
- ``replay``: reading the M events back, as lines (``read_lines``: what the
  walk reads) and decoded (``read``).

SQLite runs in WAL mode with its default ``synchronous=FULL`` on the
repository's disk (``benchmarks/.cache``); PostgreSQL is whatever server
``--postgres`` names (default: ``$OMEN_TEST_POSTGRES_URL``, e.g. the
throwaway cluster of ``scripts/pg-test-cluster.sh``, which keeps
PostgreSQL's default durability: ``fsync`` and ``synchronous_commit`` on),
reached over its unix socket or TCP. Each append case starts on a fresh
store (a new SQLite file; a new schema in PostgreSQL, dropped at the end).
The cases run round-robin, ``--repeat`` times after a warm-up round; the
figures are medians, and the ratio is PostgreSQL's rate over SQLite's.

    eval "$(scripts/pg-test-cluster.sh start)"
    .venv/bin/python benchmarks/bench_store.py
"""

from __future__ import annotations

import argparse
import itertools
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import quote

import _common
from _common import Case, fmt_rate, fmt_s, run_interleaved, table
from genlog import CACHE, FIGHT_ID, ensure_log, quiet_logging

from omen_core.events import StoredEvent
from omen_core.store import JsonlStore, PostgresStore, SqliteStore

#: The stores compared: both close.
Store = SqliteStore | PostgresStore


def batches(events: list[StoredEvent], size: int) -> list[list[StoredEvent]]:
    return [events[i:i + size] for i in range(0, len(events), size)]


class Schemas:
    """Fresh schemas of the PostgreSQL database ``url`` names, dropped at the end."""

    def __init__(self, url: str):
        import psycopg

        self.url, self.made = url, list[str]()
        self._conn = psycopg.connect(url, autocommit=True)

    def fresh(self) -> str:
        name = f"bench_{secrets.token_hex(4)}"
        self._conn.execute(f'CREATE SCHEMA "{name}"')
        self.made.append(name)
        option = quote(f"-csearch_path={name}", safe="")
        return f"{self.url}{'&' if '?' in self.url else '?'}options={option}"

    def drop(self, name: str | None = None) -> None:
        for schema in [name] if name else list(self.made):
            self._conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            self.made.remove(schema)

    def close(self) -> None:
        self.drop()
        self._conn.close()


def appends(store: Store, groups: list[list[StoredEvent]]) -> tuple[int, float]:
    """Time the appends of ``groups`` to ``store`` (a fresh one), then close it."""
    version = 0
    try:
        start = time.perf_counter()
        for group in groups:
            version = store.append(FIGHT_ID, group, version)
        return version, time.perf_counter() - start
    finally:
        store.close()


def appended(make: Callable[[], Store], groups: list[list[StoredEvent]]) -> tuple[int, float]:
    """Time the appends of ``groups`` to a fresh store ``make`` gives."""
    return appends(make(), groups)


def read_lines(store: Store) -> int:
    return sum(len(chunk) for chunk in store.read_lines(FIGHT_ID))


def read_events(store: Store) -> int:
    return sum(1 for _ in store.read(FIGHT_ID))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="PostgreSQL store vs SQLite store: append and replay throughput")
    parser.add_argument("--postgres", default=os.environ.get("OMEN_TEST_POSTGRES_URL"),
                        help="the PostgreSQL database (default: $OMEN_TEST_POSTGRES_URL)")
    parser.add_argument("--single", type=int, default=1_000, help="single-event appends (default 1000)")
    parser.add_argument("--batched", type=int, default=20_000, help="events appended in batches (default 20000)")
    parser.add_argument("--batch", type=int, default=100, help="events per batched append (default 100)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each case (default 5; the median counts)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    if not args.postgres:
        parser.error("no PostgreSQL: give --postgres URL or set OMEN_TEST_POSTGRES_URL "
                     "(eval \"$(scripts/pg-test-cluster.sh start)\" starts a throwaway cluster)")
    quiet_logging()
    events = list(itertools.islice(JsonlStore.single(ensure_log(100_000, progress=not args.json)).read(FIGHT_ID),
                                   max(args.single, args.batched)))
    CACHE.mkdir(parents=True, exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix="store-", dir=CACHE))
    counter = itertools.count()
    schemas = Schemas(args.postgres)

    def sqlite() -> SqliteStore:
        return SqliteStore(where / f"s-{next(counter)}.db")

    def postgres() -> PostgresStore:
        return PostgresStore(schemas.fresh())

    measures: dict[str, list[Case]] = {}
    readers: list[Store] = []
    try:
        single, batched = batches(events[:args.single], 1), batches(events[:args.batched], args.batch)
        for name, groups in (("append, single", single), (f"append, batched ×{args.batch}", batched)):
            cases = [Case("sqlite", partial(appended, sqlite, groups)),
                     Case("postgres", partial(appended, postgres, groups))]
            run_interleaved(cases, args.repeat)
            measures[name] = cases
            for f in where.iterdir():
                f.unlink()
            schemas.drop()
        stores: dict[str, Store] = {"sqlite": sqlite(), "postgres": postgres()}
        readers = list(stores.values())
        for store in readers:
            appends_kept = 0
            for group in batched:
                appends_kept = store.append(FIGHT_ID, group, appends_kept)
        for name, read in (("replay, lines", read_lines), ("replay, decoded", read_events)):
            cases = [Case(kind, partial(read, store)) for kind, store in stores.items()]
            run_interleaved(cases, args.repeat)
            measures[name] = cases
    finally:
        for store in readers:
            store.close()
        schemas.close()
        shutil.rmtree(where, ignore_errors=True)

    info = _common.machine()
    results = []
    for name, (base, pg) in measures.items():
        for case in (base, pg):
            results.append({"measure": name, **case.as_dict(), "ratio_to_sqlite": case.rate / base.rate})
    if args.json:
        _common.emit_json({"benchmark": "store", "single": args.single, "batched": args.batched,
                           "batch": args.batch, "repeat": args.repeat, "machine": info, "results": results})
        return 0
    _common.print_machine(info)
    print(f"PostgreSQL at {_mask(args.postgres)}; medians of {args.repeat} "
          "interleaved runs\n")
    rows = [[r["measure"], r["case"], f"{r['events']:,}", fmt_s(r["median_s"]), fmt_rate(r["events_per_s"]),
             f"{r['ratio_to_sqlite']:.2f}"] for r in results]
    print(table(["measure", "store", "events", "time", "events/s", "rate vs SQLite"], rows))
    return 0


def _mask(url: str) -> str:
    from omen_core.store.postgres import mask_url

    return mask_url(url)


if __name__ == "__main__":
    raise SystemExit(main())
