"""The caches beside a log (the offset index, the landmark index, the snapshots) change no result of any command,
however they are deleted, truncated, edited, swapped or replaced (issue #26: an edited snapshot's HP went into the
next command; an index without the undo's row made a sound log refuse to replay)."""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core import Fight, SeededDice
from omen_core.commands import EndTurn
from omen_core.events import encode_line, keyed_salts
from omen_core.machine import Phase
from omen_core.store import EventStore, FileSnapshots, JsonlStore, SqliteSnapshots, SqliteStore
from omen_core.store.snapshots import SnapshotStore, take
from omen_core.walk import StoreSource, state_at
from omen_replay.replay import replay_store
from omen_replay.verify import verify_store

ROOT = Path(__file__).resolve().parents[2]
SEED = bytes(range(32))
FIGHT = "long"
AT = (250, 640, 1105)  # seqs asked about: before and inside the undone ranges, and after the redo


def _genlog() -> ModuleType:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import genlog
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return genlog


def play(store: EventStore, snapshots: SnapshotStore, until: int, fight: Fight | None = None) -> Fight:
    """Turns of the Ember Ford cast (seeded dice, every window answered) until ``until`` events."""
    genlog = _genlog()
    rng = random.Random(until)
    if fight is None:
        fight = Fight.start(store, FIGHT, dice=SeededDice(SEED), clock=itertools.count(0, 1000).__next__,
                            snapshots=snapshots, snapshot_every=100, combatants=genlog._cast())
        fight.ambush(["vesh", "skarn"], ["kael", "brin"], time_waited="one_to_two_minutes")
        fight.roll_initiative()
        genlog._answer_windows(fight, rng)
    while fight.version < until and fight.state.phase is Phase.ROUNDS:
        genlog._turn(fight, fight.state.turn, rng)
    return fight


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a 1,400-event seeded fight in JSON Lines with every cache omen keeps beside it: the
    offset index (``.idx``, past 1,024 events), the landmark index (``.marks``: three undos, one redone) and a
    snapshot every 100 events."""
    folder = tmp_path_factory.mktemp("caches")
    path = folder / "long.jsonl"
    store, snapshots = JsonlStore.single(path), FileSnapshots(f"{path}.snapshots")
    fight = play(store, snapshots, 600)
    fight.undo(reason="the first undo")
    play(store, snapshots, 1000, fight)
    fight.undo(reason="taken back")
    fight.redo()
    play(store, snapshots, 1300, fight)
    fight.undo(reason="still undone")
    play(store, snapshots, 1400, fight)
    assert path.with_name("long.jsonl.idx").exists() and len(snapshots.seqs(FIGHT)) >= 12
    return folder


def results(folder: Path) -> dict[str, object]:
    """What the commands give on the log in ``folder``: ``replay`` (from the snapshots, as the CLI does), the
    state at three seqs (``replay --to``), ``status`` (the options), ``do`` (the lines one command appends) and
    ``undo`` (the lines it appends, salted from a fixed key so that the same lines come out every time), each on
    its own copy for the writers."""
    path = folder / "long.jsonl"
    store, snapshots = JsonlStore.single(path), FileSnapshots(f"{path}.snapshots")
    found: dict[str, object] = {"replay": replay_store(store, FIGHT, None, snapshots)}
    for seq in AT:
        found[f"replay --to {seq}"] = state_at(StoreSource(store, FIGHT), snapshots, seq)
    found["status"] = msgspec.json.encode(Fight.load(store, FIGHT, snapshots=snapshots).options())
    for name in ("do", "undo"):
        with _copy(folder) as copy:
            there = copy / "long.jsonl"
            live = Fight.load(JsonlStore.single(there), FIGHT, dice=SeededDice(SEED), clock=lambda: 7,
                              snapshots=FileSnapshots(f"{there}.snapshots"), salts=keyed_salts(b"caches"))
            before = live.version
            if name == "do":
                live.execute(EndTurn(who=str(live.state.turn)))
            else:
                live.undo(reason="again")
            found[name] = [encode_line(r) for r in live.store.read(FIGHT, before)]
    return found


@contextlib.contextmanager
def _copy(folder: Path) -> Iterator[Path]:
    """A throwaway copy of ``folder`` (symbolic links copied as links)."""
    work = Path(tempfile.mkdtemp(prefix="omen-caches-"))
    try:
        shutil.copytree(folder, work / "c", symlinks=True, copy_function=_copy_file)
        yield work / "c"
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Expected:
    """The commands' results (held in an object: hypothesis prints its arguments when an example fails)."""

    def __init__(self, found: dict[str, object]):
        self.found = found

    def __repr__(self) -> str:
        return "<the results with the caches as omen wrote them>"


def _copy_file(source: str, target: str) -> None:
    """A file copied, a FIFO made again as a FIFO."""
    if stat.S_ISFIFO(os.lstat(source).st_mode):
        os.mkfifo(target)
    else:
        shutil.copy2(source, target)


@pytest.fixture(scope="module")
def expected_results(pristine: Path) -> Expected:
    """The results with the caches as omen wrote them; the same as with no cache at all."""
    found = results(pristine)
    with _copy(pristine) as bare:
        for extra in ("long.jsonl.idx", "long.jsonl.marks"):
            (bare / extra).unlink()
        shutil.rmtree(bare / "long.jsonl.snapshots")
        assert_same(results(bare), found)
    return Expected(found)


@pytest.fixture(scope="module")
def expected(expected_results: Expected) -> dict[str, object]:
    """The results with the caches as omen wrote them."""
    return expected_results.found


def cache_files(folder: Path) -> list[Path]:
    """Every cache file beside the log."""
    snaps = sorted((folder / "long.jsonl.snapshots" / FIGHT).glob("*.json"), key=lambda p: int(p.stem))
    return [folder / "long.jsonl.idx", folder / "long.jsonl.marks", *snaps]


EDITS = ("delete", "truncate", "flip a byte", "random bytes", "change a number", "drop a line", "repeat a line",
         "swap with another", "link to another", "a directory", "a FIFO")


def edit(files: list[Path], target: int, how: str, at: float, other: int) -> None:
    """One edit of ``files[target]`` (``at``, a fraction, says where; ``other`` picks another cache file)."""
    path = files[target]
    body = path.read_bytes()
    cut = int(len(body) * at)
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        path.write_bytes(body[:cut])
    elif how == "flip a byte":
        path.write_bytes(body[:cut] + bytes([body[cut] ^ 0x01]) + body[cut + 1:] if cut < len(body) else b"x")
    elif how == "random bytes":
        path.write_bytes(random.Random(cut).randbytes(max(len(body), 1)))
    elif how == "change a number":  # what a hand edit does: HP 24 becomes 1, an offset or a seq shifts
        numbers = list(re.finditer(rb"\d+", body))
        if numbers:
            m = numbers[int(at * (len(numbers) - 1))]
            path.write_bytes(body[:m.start()] + str(int(m.group()) // 2 + 1).encode() + body[m.end():])
    elif how in ("drop a line", "repeat a line"):
        lines = body.splitlines(keepends=True)
        if lines:
            i = int(at * (len(lines) - 1))
            lines[i:i + 1] = [] if how == "drop a line" else [lines[i], lines[i]]
            path.write_bytes(b"".join(lines))
    else:
        source = files[other]
        if how == "swap with another" and source != path and source.is_file():  # not a FIFO an edit made: it blocks
            path.write_bytes(source.read_bytes())
        elif how == "link to another" and source != path:
            path.unlink()
            os.symlink(source, path)
        elif how == "a directory":
            path.unlink()
            path.mkdir()
        elif how == "a FIFO":
            path.unlink()
            os.mkfifo(path)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.one_of(st.sampled_from([0, 1, -1, -2]), st.integers(0, 40)),  # the indexes and
                                # the newest snapshots (those used) half the time, any cache file otherwise
                                st.sampled_from(EDITS), st.floats(0, 1), st.integers(0, 40)),
                      min_size=1, max_size=4))
def test_any_cache_edit_changes_no_result(pristine: Path, expected_results: Expected,
                                          edits: list[tuple[int, str, float, int]]) -> None:
    """Whatever is done to the cache files (deleted, truncated, a byte flipped, random bytes, a number changed,
    a line dropped or repeated, a snapshot swapped for another, a link, a directory or a FIFO put in their place),
    every command gives what it gives with the caches omen wrote."""
    with _copy(pristine) as folder:
        files = cache_files(folder)
        for target, how, at, other in edits:
            if files[target % len(files)].is_file() and not files[target % len(files)].is_symlink():
                edit(files, target % len(files), how, at, other % len(files))
        assert_same(results(folder), expected_results.found)


def assert_same(found: dict[str, object], expected: dict[str, object]) -> None:
    """Every command's result as expected (the first that differs named, not the whole state printed)."""
    differ = [name for name in expected if found[name] != expected[name]]
    assert not differ, f"these commands gave another result: {differ}"


class TestDeliberateEdits:
    def test_a_snapshot_with_its_hp_changed_is_not_used(self, pristine: Path, expected: dict[str, object]) -> None:
        """Issue #26: Kael's HP set to 1 in a snapshot file. Its state digest no longer checks: replay, status and
        the next command give what the log says."""
        with _copy(pristine) as folder:
            snaps = cache_files(folder)[2:]
            for snap in snaps:
                snap.write_bytes(re.sub(rb'"hp":\d+', b'"hp":1', snap.read_bytes()))
            assert_same(results(folder), expected)

    def test_a_resigned_snapshot_of_another_seq_is_not_used(self, pristine: Path, expected: dict[str, object]) -> None:
        """A sound snapshot renamed to stand for another seq (its digest still checks its own bytes): the state
        does not stand where the file name says, so it is not used."""
        with _copy(pristine) as folder:
            snaps = cache_files(folder)[2:]
            for older, newer in itertools.pairwise(snaps):
                newer.write_bytes(older.read_bytes())
            assert_same(results(folder), expected)

    def test_an_index_without_the_undo_rows_changes_no_result(self, pristine: Path, expected: dict[str,
                                                              object]) -> None:
        """Issue #26: the undo rows removed from the landmark index, its header left covering the log."""
        with _copy(pristine) as folder:
            marks = folder / "long.jsonl.marks"
            header, *rows = marks.read_text().splitlines(keepends=True)
            marks.write_text(header)
            assert rows
            assert_same(results(folder), expected)

    def test_the_audit_reads_no_cache(self, pristine: Path) -> None:
        """verify gives the same report whatever the caches hold (it reads the log alone)."""
        with _copy(pristine) as folder:
            store = JsonlStore.single(folder / "long.jsonl")
            before = verify_store(store, FIGHT)
            (folder / "long.jsonl.marks").write_text("C 00000000000000000001 1 " + "0" * 64 + "\n")
            assert verify_store(store, FIGHT) == before and before.clean


class TestSqliteCaches:
    def test_landmark_rows_and_snapshot_bodies_edited_change_no_result(self, tmp_path: Path) -> None:
        """SQLite: the undo's landmark row deleted, a row added for an event that is no landmark, and a snapshot
        body's HP changed: replay with the snapshots, loading and the state at a seq give what the log says."""
        store = SqliteStore(tmp_path / "f.db")
        snapshots = SqliteSnapshots(tmp_path / "f.db")
        fight = play(store, snapshots, 300)
        fight.undo()
        play(store, snapshots, 450, fight)
        truth = replay_store(store, FIGHT), state_at(StoreSource(store, FIGHT), None, 350)
        snapshots.save(take(truth[0]))
        with store._conn:
            store._conn.execute("DELETE FROM landmarks")
            store._conn.execute("INSERT INTO landmarks VALUES (?, 20)", (FIGHT,))
        with snapshots._conn:
            for seq, body in snapshots._conn.execute("SELECT seq, body FROM snapshots").fetchall():
                snapshots._conn.execute("UPDATE snapshots SET body = ? WHERE seq = ?",
                                        (re.sub(rb'"hp":\d+', b'"hp":1', bytes(body)), seq))
        assert (replay_store(store, FIGHT, None, snapshots), state_at(StoreSource(store, FIGHT), snapshots, 350)) \
            == truth
        assert Fight.load(store, FIGHT, snapshots=snapshots).state == truth[0]
        store.close()
        snapshots.close()

    @pytest.mark.parametrize("edit", ["CAST(body AS TEXT)", "42", "x'00'"])
    def test_a_snapshot_body_of_another_type_is_skipped(self, tmp_path: Path, edit: str) -> None:
        """SQLite: a snapshot body turned to TEXT (it raised TypeError out of replay, status and undo: a traceback;
        found by a tester), a number or a stray byte is a damaged cache, skipped: replay with the snapshots and the
        state at a seq give what the log says."""
        store = SqliteStore(tmp_path / "f.db")
        snapshots = SqliteSnapshots(tmp_path / "f.db")
        play(store, snapshots, 300)
        truth = replay_store(store, FIGHT), state_at(StoreSource(store, FIGHT), None, 250)
        assert snapshots.seqs(FIGHT)
        with snapshots._conn:
            snapshots._conn.execute(f"UPDATE snapshots SET body = {edit}")
        assert (replay_store(store, FIGHT, None, snapshots), state_at(StoreSource(store, FIGHT), snapshots, 250)) \
            == truth
        store.close()
        snapshots.close()
