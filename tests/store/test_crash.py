"""A writer killed with SIGKILL at random moments. JSON Lines: the log is sound or torn at its end, and repair
always leaves it sound with every batch whole. SQLite and PostgreSQL: every batch is whole at once (a transaction
is all or nothing), with nothing to repair."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest

from omen_core.errors import TornTail
from omen_core.events import chain_breaks
from omen_core.store import EventStore, JsonlStore
from omen_core.walk import Finding, StoreSource, Visitor, walk
from tests.fights import present

from . import _writers

FIGHT = "crash"
KILLS = 20
FORK = multiprocessing.get_context("fork")  # the writer starts at once: the test's time goes to writing
SPAWN = multiprocessing.get_context("spawn")  # no fork of a process whose database pools run threads


class _Problems(Visitor):
    """Collects what a lenient walk finds."""

    def __init__(self) -> None:
        self.found: list[Finding] = []

    def problem(self, finding: Finding) -> None:
        """Keep each finding."""
        self.found.append(finding)


def torn_findings(store: JsonlStore) -> list[str]:
    """What a lenient walk of the log says about torn lines and batches (the events are rolls outside any fight, so
    the walk's other findings are about the fold, not the framing)."""
    problems = _Problems()
    walk(StoreSource(store, FIGHT), problems, strict=False)
    return [f.what for f in problems.found if "torn" in f.what]


def condition(store: JsonlStore) -> str:
    """``sound``, ``torn tail`` or ``torn batch``, from the store's own reads."""
    try:
        events = list(store.read(FIGHT))
    except TornTail:
        return "torn tail"
    assert list(chain_breaks(events, FIGHT)) == []
    last = events[-1]
    whole = sum(1 for ev in events if ev.batch == last.batch) == last.batch_size
    return "sound" if whole else "torn batch"


def assert_whole(store: EventStore) -> None:
    """Every batch of the log holds as many events as it says, seqs 1..N with a sound chain."""
    events = list(store.read(FIGHT))
    assert [ev.seq for ev in events] == list(range(1, len(events) + 1))
    assert list(chain_breaks(events, FIGHT)) == []
    sizes: dict[int, int] = {}
    for ev in events:
        sizes[ev.batch] = sizes.get(ev.batch, 0) + 1
    assert all(sizes[ev.batch] == ev.batch_size for ev in events)


def kill_writer(path: Path | str, rng: random.Random, kind: str = "jsonl-single", longest: float = 0.08) -> None:
    """Start a writer process, let it append for a random while (up to ``longest`` seconds), and SIGKILL it."""
    context = FORK if kind == "jsonl-single" else SPAWN
    ready = context.Event()
    proc = context.Process(target=_writers.append_batches, args=(str(path), FIGHT, ready, kind))
    proc.start()
    assert ready.wait(timeout=20)
    time.sleep(rng.uniform(0.002, longest))
    os.kill(present(proc.pid), signal.SIGKILL)
    proc.join(timeout=20)
    assert proc.exitcode == -signal.SIGKILL


class TestKilledWriter:
    """SIGKILL at random moments of a writer appending multi-event batches."""

    def test_every_kill_leaves_a_sound_or_repairable_log(self, tmp_path: Path) -> None:
        """After each kill the log is sound or torn at its end (and the walk says which); after repair it is sound."""
        path, rng = tmp_path / f"{FIGHT}.jsonl", random.Random(12)
        seen: dict[str, int] = {}
        for _ in range(KILLS):
            kill_writer(path, rng)
            store = JsonlStore.single(path)
            state = condition(store)
            seen[state] = seen.get(state, 0) + 1
            torn = torn_findings(store) if state != "torn tail" else ["torn tail"]
            assert bool(torn) == (state != "sound"), (state, torn)
            repaired = store.repair_log(FIGHT)
            assert (repaired.side is None) == (state == "sound")
            assert condition(store) == "sound" and torn_findings(store) == []
            assert_whole(store)
        assert sum(seen.values()) == KILLS
        assert JsonlStore.single(path).version(FIGHT) > 0


class TestKilledWriterOnADatabase:
    """SIGKILL at random moments of a writer appending multi-event batches to a database."""

    @pytest.mark.parametrize("kind", ["sqlite", "postgres"])
    def test_every_kill_leaves_only_whole_batches(self, kind: str, tmp_path: Path,
                                                  request: pytest.FixtureRequest) -> None:
        """After each kill the fight holds only whole batches with a sound chain, and the next writer resumes
        after the last one: a writer killed mid-append leaves no partial batch."""
        where = request.getfixturevalue("postgres").fresh_url() if kind == "postgres" else str(tmp_path / "f.db")
        rng, versions = random.Random(7), []
        for _ in range(6):
            kill_writer(where, rng, kind, longest=0.3)  # a database append takes longer: let some commit
            store = _writers.open_store(kind, where)
            try:
                versions.append(store.version(FIGHT))
                if versions[-1]:  # (killed before its first commit, a writer leaves nothing at all)
                    assert_whole(store)
            finally:
                _writers.close_store(store)
        assert versions == sorted(versions) and versions[-1] > 0
