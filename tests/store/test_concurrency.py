"""Two real processes appending to the same fight: optimistic concurrency holds on every durable backend
(PostgreSQL too, where a server is given: tests/postgres.py)."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from omen_core.events import DiceRolled, chain_breaks
from omen_core.store import EventStore

from . import _writers
from .conftest import make_events

FIGHT = "melee"
LOOPS = 30
SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture(params=["jsonl-single", "jsonl-dir", "sqlite", "postgres"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """A backend kind and the location both processes open it at (PostgreSQL: a fresh schema's URL)."""
    if request.param == "postgres":
        return "postgres", request.getfixturevalue("postgres").fresh_url()
    where = {"jsonl-single": tmp_path / "melee.jsonl", "jsonl-dir": tmp_path / "fights",
             "sqlite": tmp_path / "fights.db"}[request.param]
    return request.param, str(where)


@pytest.fixture
def opened(shared: tuple[str, str]) -> Iterator[EventStore]:
    """The shared store, opened in the test process too."""
    store = _writers.open_store(*shared)
    yield store
    _writers.close_store(store)


def run_two(target: Callable[..., None], *args: Any) -> list[tuple[str, str, Any]]:
    """Run ``target(writer, barrier, results, *args)`` in two spawned processes; return their sorted reports."""
    barrier, results = SPAWN.Barrier(2), SPAWN.Queue()
    procs = [SPAWN.Process(target=target, args=(writer, barrier, results, *args))
             for writer in ("alpha", "beta")]
    for proc in procs:
        proc.start()
    reports = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    results.close()
    results.join_thread()
    return sorted(reports)


class TestTwoProcesses:
    """Two writer processes on the same fight."""

    def test_simultaneous_append_one_wins(self, shared: tuple[str, str], opened: EventStore) -> None:
        """Both read version N and append at once: one succeeds, the other gets ConcurrencyError."""
        base = make_events(FIGHT, 3)
        opened.append(FIGHT, base, 0)
        reports = run_two(_writers.race_once, *shared, FIGHT)
        outcomes = Counter(outcome for _, outcome, _ in reports)
        assert outcomes == {"ok": 1, "conflict": 1}, reports
        conflict = next(detail for _, outcome, detail in reports if outcome == "conflict")
        assert conflict == (FIGHT, 3, 4)
        events = list(opened.read(FIGHT))
        assert len(events) == 4 and events[:3] == base
        assert list(chain_breaks(events, FIGHT)) == []

    def test_retrying_writers_interleave_without_loss(self, shared: tuple[str, str],
                                                      opened: EventStore) -> None:
        """Both loop read-seal-append with retries: 60 events, seqs 1..60, sound chain, each write once."""
        reports = run_two(_writers.append_loop, *shared, FIGHT, LOOPS)
        assert [outcome for _, outcome, _ in reports] == ["ok", "ok"], reports
        events = list(opened.read(FIGHT))
        assert [ev.seq for ev in events] == list(range(1, 2 * LOOPS + 1))
        assert list(chain_breaks(events, FIGHT)) == []
        written = Counter((ev.as_(DiceRolled).roller, ev.as_(DiceRolled).counter) for ev in events)
        expected = {(writer, n): 1 for writer in ("alpha", "beta") for n in range(1, LOOPS + 1)}
        assert written == expected
