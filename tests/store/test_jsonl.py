"""The JSON Lines backend: exact line bytes, torn tails and repair, corruption, single-file mode, failed writes, the
offset and landmark indexes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omen_core import Fight, ManualDice
from omen_core.errors import BadAppend, ChainBroken, LogCorrupted, StoreUnavailable, TornTail, UnknownFight
from omen_core.events import GENESIS_HASH, LANDMARKS, StoredEvent, encode_line
from omen_core.store import JsonlStore, jsonl
from tests.sheets import sheet

from .conftest import continue_from, make_events, with_landmarks

FIGHT = "duel"


def write_log(path: Path, events: list[StoredEvent]) -> bytes:
    """Write ``events`` to ``path`` as a JSON Lines log by hand; return the bytes written."""
    data = b"".join(encode_line(ev) + b"\n" for ev in events)
    path.write_bytes(data)
    return data


def write_log_dir(path: Path, events: list[StoredEvent]) -> bytes:
    """As :func:`write_log`, creating the file's directory first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_log(path, events)


@pytest.fixture
def store(tmp_path: Path) -> JsonlStore:
    """A directory-mode store in a fresh directory."""
    return JsonlStore(tmp_path / "fights")


@pytest.fixture
def log(store: JsonlStore) -> Path:
    """The file that holds FIGHT in ``store``."""
    return store._path(FIGHT)


class TestFormat:
    """What lands on disk."""

    def test_lines_are_exactly_encode_line_plus_newline(self, store: JsonlStore, log: Path) -> None:
        """The file is the concatenation of ``encode_line(ev) + b"\\n"`` over the events."""
        events = make_events(FIGHT, 3)
        store.append(FIGHT, events[:2], 0)
        store.append(FIGHT, events[2:], 2)
        assert log.read_bytes() == b"".join(encode_line(ev) + b"\n" for ev in events)

    def test_directory_is_created_on_first_append(self, tmp_path: Path) -> None:
        """A directory-mode store creates its directory (and nothing before the first append)."""
        store = JsonlStore(tmp_path / "a" / "b")
        assert store.fights() == []
        assert not (tmp_path / "a").exists()
        store.append(FIGHT, make_events(FIGHT, 1), 0)
        assert (tmp_path / "a" / "b" / f"{FIGHT}.jsonl").is_file()

    def test_sidecar_files_are_not_fights(self, store: JsonlStore, log: Path) -> None:
        """Lock and torn side files are not listed as fights."""
        store.append(FIGHT, make_events(FIGHT, 1), 0)
        log.with_name(log.name + ".torn-1").write_bytes(b"x")
        assert store.fights() == [FIGHT]


class TestTornTail:
    """A last line cut off mid-write."""

    @pytest.fixture
    def torn(self, store: JsonlStore, log: Path) -> tuple[list[StoredEvent], bytes]:
        """Five events stored, then the file cut in the middle of line 5; returns (events, torn bytes)."""
        events = make_events(FIGHT, 5)
        store.append(FIGHT, events, 0)
        data = log.read_bytes()
        cut = len(data) - len(encode_line(events[4])) // 2
        with open(log, "r+b") as f:
            f.truncate(cut)
        return events, data[len(data) - len(encode_line(events[4])) - 1:cut]

    def test_read_yields_intact_events_then_raises(self, store: JsonlStore, log: Path, torn: tuple[list[StoredEvent],
                                                   bytes]) -> None:
        """Reading yields events 1-4, then raises TornTail naming the file and line 5."""
        events, torn_bytes = torn
        got: list[StoredEvent] = []
        with pytest.raises(TornTail) as info:
            for ev in store.read(FIGHT):
                got.append(ev)
        assert got == events[:4]
        assert (info.value.path, info.value.line, info.value.torn) == (str(log), 5, torn_bytes)
        assert str(log) in str(info.value)

    def test_the_message_names_what_was_cut_short_and_repair(self, store: JsonlStore, log: Path,
                                                             torn: tuple[list[StoredEvent], bytes]) -> None:
        """read, read_lines, version and append say the torn line, the command and fight it cuts short and
        `omen repair PATH` (they said only "torn tail ... earlier events are intact"; found by a tester); the reason,
        an audit's finding, stays the torn tail's own words."""
        events, torn_bytes = torn
        said = (f"{log}:5: torn tail: the last line ({len(torn_bytes)} bytes) was cut off mid-write; earlier events "
                f"are intact; the command starting at seq 5 of fight 'duel' is cut short: run omen repair {log} (it "
                "moves what the crash left to a side file)")
        for refused in (lambda: list(store.read(FIGHT)), lambda: list(store.read_lines(FIGHT)),
                        lambda: store.version(FIGHT), lambda: store.append(FIGHT, continue_from(events[:4], FIGHT, 1),
                                                                           4)):
            with pytest.raises(TornTail) as info:
                refused()
            assert str(info.value) == said
            assert info.value.reason == (f"torn tail: the last line ({len(torn_bytes)} bytes) was cut off mid-write; "
                                         "earlier events are intact")

    def test_a_torn_line_inside_a_command_names_the_command(self, tmp_path: Path) -> None:
        """A line torn inside a command (Ember Ford's last, seqs 318-319) names the command's first seq (what omen
        repair moves aside), not the torn line's."""
        log = tmp_path / "ember.jsonl"
        log.write_bytes((Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl").read_bytes()
                        [:-20])
        with pytest.raises(TornTail) as info:
            JsonlStore.single(log).version("ember-ford")
        assert info.value.line == 319
        assert str(info.value).endswith("the command starting at seq 318 of fight 'ember-ford' is cut short: run omen "
                                        f"repair {log} (it moves what the crash left to a side file)")

    def test_version_and_append_refuse_and_leave_the_file(self, store: JsonlStore, log: Path,
                                                          torn: tuple[list[StoredEvent], bytes]) -> None:
        """version and append raise TornTail at line 5 and do not touch the file."""
        events, _ = torn
        before = log.read_bytes()
        with pytest.raises(TornTail) as info:
            store.version(FIGHT)
        assert info.value.line == 5
        with pytest.raises(TornTail):
            store.append(FIGHT, continue_from(events[:4], FIGHT, 1), 4)
        assert log.read_bytes() == before

    def test_repair_moves_torn_bytes_aside_then_appends_work(self, store: JsonlStore, log: Path,
                                                             torn: tuple[list[StoredEvent], bytes]) -> None:
        """repair saves exactly the torn bytes to <file>.torn-1, cuts the log, and appends resume."""
        events, torn_bytes = torn
        side = store.repair(FIGHT)
        assert side == log.with_name(log.name + ".torn-1")
        assert side.read_bytes() == torn_bytes
        assert list(store.read(FIGHT)) == events[:4]
        assert store.version(FIGHT) == 4
        more = continue_from(events[:4], FIGHT, 2)
        assert store.append(FIGHT, more, 4) == 6
        assert list(store.read(FIGHT)) == events[:4] + more
        assert store.repair(FIGHT) is None

    def test_repair_picks_the_first_free_side_file(self, store: JsonlStore, log: Path, torn: tuple[list[StoredEvent],
                                                   bytes]) -> None:
        """An existing <file>.torn-1 is kept; the torn bytes go to <file>.torn-2."""
        log.with_name(log.name + ".torn-1").write_bytes(b"older")
        assert store.repair(FIGHT) == log.with_name(log.name + ".torn-2")
        assert log.with_name(log.name + ".torn-1").read_bytes() == b"older"

    def test_torn_first_line(self, store: JsonlStore, log: Path) -> None:
        """A file whose only line is torn reads as nothing then TornTail at line 1."""
        log.parent.mkdir()
        log.write_bytes(encode_line(make_events(FIGHT, 1)[0])[:10])
        with pytest.raises(TornTail) as info:
            list(store.read(FIGHT))
        assert info.value.line == 1
        with pytest.raises(TornTail):
            store.version(FIGHT)
        assert store.repair(FIGHT) is not None
        assert log.read_bytes() == b""
        assert store.append(FIGHT, make_events(FIGHT, 1), 0) == 1

    def test_repair_of_unknown_fight_raises(self, store: JsonlStore) -> None:
        """repair of a fight without a file raises UnknownFight."""
        with pytest.raises(UnknownFight):
            store.repair("nobody")


class TestCorruption:
    """Complete lines that are not the next event of the fight."""

    def test_garbage_line_names_its_line_number(self, store: JsonlStore, log: Path) -> None:
        """A middle line that does not decode raises LogCorrupted at that line, after the events before it."""
        events = make_events(FIGHT, 5)
        log.parent.mkdir()
        lines = [encode_line(ev) + b"\n" for ev in events]
        lines[2] = b'{"fight_id": "duel", "seq": oops}\n'
        log.write_bytes(b"".join(lines))
        got: list[StoredEvent] = []
        with pytest.raises(LogCorrupted) as info:
            for ev in store.read(FIGHT):
                got.append(ev)
        assert got == events[:2]
        assert (info.value.path, info.value.line) == (str(log), 3)
        assert "not a valid stored event" in info.value.reason
        assert not isinstance(info.value, TornTail)

    def test_seq_gap_is_corruption(self, store: JsonlStore, log: Path) -> None:
        """A missing event (seq 3 followed by seq 5) raises LogCorrupted at the line after the gap."""
        log.parent.mkdir()
        events = make_events(FIGHT, 5)
        write_log(log, events[:3] + events[4:])
        with pytest.raises(LogCorrupted) as info:
            list(store.read(FIGHT))
        assert info.value.line == 4
        assert "seq 5 where 4 was expected" in info.value.reason

    def test_empty_line_is_corruption(self, store: JsonlStore, log: Path) -> None:
        """An empty line raises LogCorrupted saying so."""
        log.parent.mkdir()
        events = make_events(FIGHT, 2)
        log.write_bytes(encode_line(events[0]) + b"\n\n" + encode_line(events[1]) + b"\n")
        with pytest.raises(LogCorrupted) as info:
            list(store.read(FIGHT))
        assert (info.value.line, info.value.reason) == (2, "empty line")

    def test_event_of_another_fight_is_corruption(self, store: JsonlStore, log: Path) -> None:
        """A line of another fight inside a fight's file raises LogCorrupted."""
        log.parent.mkdir()
        write_log(log, make_events(FIGHT, 1) + make_events("other", 2)[1:])
        with pytest.raises(LogCorrupted) as info:
            list(store.read(FIGHT))
        assert info.value.line == 2
        assert "'other'" in info.value.reason

    def test_append_after_a_corrupt_last_line_reports_it(self, store: JsonlStore, log: Path) -> None:
        """append refuses a file whose last complete line does not decode, naming that line."""
        log.parent.mkdir()
        events = make_events(FIGHT, 2)
        log.write_bytes(encode_line(events[0]) + b"\n" + b"not json\n")
        with pytest.raises(LogCorrupted) as info:
            store.append(FIGHT, continue_from(events, FIGHT, 1), 2)
        assert info.value.line == 2


class TestSingleFile:
    """``JsonlStore.single(path)``: one fight in one file."""

    def test_fights_of_missing_or_empty_file(self, tmp_path: Path) -> None:
        """A missing or empty file holds no fight."""
        path = tmp_path / "f.jsonl"
        store = JsonlStore.single(path)
        assert store.fights() == []
        path.write_bytes(b"")
        assert store.fights() == []
        assert store.version(FIGHT) == 0

    def test_refuses_another_fight(self, tmp_path: Path) -> None:
        """Appending a second fight id to a file that holds one raises BadAppend and writes nothing."""
        path = tmp_path / "f.jsonl"
        store = JsonlStore.single(path)
        store.append(FIGHT, make_events(FIGHT, 2), 0)
        before = path.read_bytes()
        with pytest.raises(BadAppend) as info:
            store.append("other", make_events("other", 1), 0)
        assert FIGHT in str(info.value)
        assert path.read_bytes() == before
        assert store.fights() == [FIGHT]
        assert store.version("other") == 0
        with pytest.raises(UnknownFight):
            store.read("other")


class TestFailedWrite:
    """All or nothing when the write or fsync fails."""

    def test_failed_fsync_truncates_back(self, store: JsonlStore, log: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
        """If fsync raises, the file is cut back to its previous bytes and the error propagates as StoreUnavailable."""
        events = make_events(FIGHT, 2)
        store.append(FIGHT, events, 0)
        before = log.read_bytes()

        def broken_fsync(fd: int) -> None:
            raise OSError(5, "simulated I/O error")

        monkeypatch.setattr(os, "fsync", broken_fsync)
        with pytest.raises(StoreUnavailable, match="simulated") as info:
            store.append(FIGHT, continue_from(events, FIGHT, 3), 2)
        assert isinstance(info.value.__cause__, OSError)
        monkeypatch.undo()
        assert log.read_bytes() == before
        assert store.version(FIGHT) == 2
        assert list(store.read(FIGHT)) == events


class TestOffsetIndex:
    """The ``<log>.idx`` offset index is a cache for reading from a late seq."""

    @staticmethod
    def long_log(tmp_path: Path) -> tuple[JsonlStore, list[StoredEvent]]:
        """A store with one fight of 3000 events, appended in batches."""
        from omen_core.events import GENESIS_HASH, SeedRevealed, seal

        store, prev, batch = JsonlStore(tmp_path), GENESIS_HASH, []
        for i in range(1, 3001):
            batch.append(seal("f", i, 0, prev, SeedRevealed(seed=f"{i:04x}")))
            prev = batch[-1].hash
        for k in range(0, 3000, 500):
            store.append("f", batch[k:k + 500], k)
        return store, batch

    def test_reading_from_late_seqs_uses_the_index_and_gives_the_same_events(self, tmp_path: Path) -> None:
        """Reading after any seq gives exactly the events after it, with or without the index file."""
        store, batch = self.long_log(tmp_path)
        assert (tmp_path / "f.jsonl.idx").read_text().split()[::2] == ["1025", "2049"]
        for after in (0, 1023, 1024, 1025, 2500, 2999, 3000):
            assert list(store.read("f", after)) == batch[after:]
        (tmp_path / "f.jsonl.idx").unlink()
        assert list(store.read("f", 2500)) == batch[2500:]

    def test_a_wrong_index_is_ignored(self, tmp_path: Path) -> None:
        """An index entry that does not point at its seq's line is ignored, never trusted."""
        store, batch = self.long_log(tmp_path)
        (tmp_path / "f.jsonl.idx").write_text("1025 17\n2049 999999999\ngarbage\n")
        assert list(store.read("f", 2100)) == batch[2100:]


class TestReadLines:
    """``read_lines``: the stored lines undecoded, in lists, for the walk."""

    def test_lines_come_as_stored_in_order(self, store: JsonlStore, log: Path) -> None:
        """Every line comes exactly as stored, newline included, in order, over several lists for a long log."""
        events = make_events(FIGHT, 600)
        store.append(FIGHT, events, 0)
        chunks = list(store.read_lines(FIGHT))
        assert len(chunks) > 1
        assert [line for chunk in chunks for line in chunk] == [encode_line(ev) + b"\n" for ev in events]

    def test_only_the_bytes_there_when_called(self, store: JsonlStore, log: Path) -> None:
        """Lines appended after the call are not read (as ``read``)."""
        events = make_events(FIGHT, 5)
        store.append(FIGHT, events[:3], 0)
        lines = store.read_lines(FIGHT)
        store.append(FIGHT, events[3:], 3)
        assert [line for chunk in lines for line in chunk] == [encode_line(ev) + b"\n" for ev in events[:3]]

    def test_a_torn_tail_comes_after_the_intact_lines(self, store: JsonlStore, log: Path) -> None:
        """A torn last line raises TornTail, naming it as ``read`` does, after the intact lines."""
        events = make_events(FIGHT, 5)
        store.append(FIGHT, events, 0)
        data = log.read_bytes()
        log.write_bytes(data[:len(data) - 20])
        got: list[bytes] = []
        with pytest.raises(TornTail) as info:
            for chunk in store.read_lines(FIGHT):
                got.extend(chunk)
        assert got == [encode_line(ev) + b"\n" for ev in events[:4]]
        with pytest.raises(TornTail) as reference:
            list(store.read(FIGHT))
        assert (info.value.line, info.value.torn) == (reference.value.line, reference.value.torn) == \
            (5, encode_line(events[4])[:-19])

    def test_unknown_fight_at_once(self, store: JsonlStore) -> None:
        """An unknown fight raises UnknownFight when called, not when iterated."""
        with pytest.raises(UnknownFight):
            store.read_lines("nobody")


def marks_of(log: Path) -> Path:
    """The landmark index beside ``log``."""
    return log.with_name(log.name + ".marks")


def landmarks_in(events: list[StoredEvent]) -> list[StoredEvent]:
    """The landmark events among ``events``, in order."""
    return [ev for ev in events if isinstance(ev.event, LANDMARKS)]


def append_by_hand(log: Path, events: list[StoredEvent]) -> None:
    """Append ``events`` to the log as a writer that keeps no landmark index would."""
    with open(log, "ab") as f:
        f.write(b"".join(encode_line(ev) + b"\n" for ev in events))


def assert_index_covers(log: Path, events: list[StoredEvent]) -> None:
    """The index says it covers the whole log (its last seq, its size, its last hash) and lists each landmark at the
    byte offset of its line (the ``C``/``L`` rows documented in omen_core.store.jsonl)."""
    rows = marks_of(log).read_text().splitlines()
    offsets, at = {}, 0
    for ev in events:
        offsets[ev.seq] = at
        at += len(encode_line(ev)) + 1
    assert rows[0].split() == ["C", f"{events[-1].seq:020d}", f"{log.stat().st_size:020d}", events[-1].hash]
    assert [row.split() for row in rows[1:]] == [["L", str(ev.seq), str(offsets[ev.seq])]
                                                  for ev in landmarks_in(events)]


class TestLandmarkIndex:
    """``<log>.marks``: the landmarks indexed at append time; a cache, never trusted over the log."""

    @pytest.fixture
    def marked(self, store: JsonlStore, log: Path) -> list[StoredEvent]:
        """Eight events with an undo, a redo, another undo and the revealed seed, appended in two batches."""
        events = with_landmarks(FIGHT)
        store.append(FIGHT, events[:4], 0)
        store.append(FIGHT, events[4:], 4)
        return events

    def test_append_keeps_the_index(self, store: JsonlStore, log: Path, marked: list[StoredEvent]) -> None:
        """After each append the index covers the whole log and lists every landmark; landmarks come from it."""
        assert_index_covers(log, marked)
        assert store.landmarks(FIGHT) == landmarks_in(marked)

    @pytest.mark.parametrize("lie", ["a row for a line that is no landmark", "a row at another line's offset"])
    def test_a_row_that_lies_is_warned_of_and_changes_nothing(self, store: JsonlStore, log: Path,
                                                              marked: list[StoredEvent], lie: str) -> None:
        """docs/stores.md: a row listing a landmark that is not there (seq 2, no landmark, at its own offset; or
        the first landmark's row pointing at the line before it) is a lie: the landmarks come from the log all the
        same, and a warning ``landmark_index_stale`` says so (it fell back without a word: a tester)."""
        import structlog

        rows = marks_of(log).read_text().splitlines(keepends=True)
        offsets, at = {}, 0
        for ev in marked:
            offsets[ev.seq] = at
            at += len(encode_line(ev)) + 1
        first = landmarks_in(marked)[0].seq
        if lie.startswith("a row for"):
            rows.insert(1, f"L 2 {offsets[2]}\n")
        else:
            rows[1] = f"L {first} {offsets[first - 1]}\n"
        marks_of(log).write_text("".join(rows))
        with structlog.testing.capture_logs() as logs:
            assert store.landmarks(FIGHT) == landmarks_in(marked)
        assert [line["event"] for line in logs] == ["landmark_index_stale"], logs

    @pytest.mark.parametrize("flags", ["truncated", "appended"])
    def test_a_hard_link_at_the_index_is_not_written_through(self, store: JsonlStore, log: Path, flags: str,
                                                              tmp_path: Path) -> None:
        """A hard link planted at LOG.marks (another name of a file elsewhere) is left as it was by an append,
        whether the index is rebuilt (emptied first) or extended (it was overwritten with the index: found by a
        tester); the landmarks still come out of the log."""
        events = with_landmarks(FIGHT)
        store.append(FIGHT, events[:4], 0)
        victim = tmp_path / "victim"
        victim.write_bytes(b"precious data\n" if flags == "truncated" else marks_of(log).read_bytes())
        marks_of(log).unlink()
        os.link(victim, marks_of(log))
        before = victim.read_bytes()
        store.append(FIGHT, events[4:], 4)
        assert victim.read_bytes() == before
        assert store.landmarks(FIGHT) == landmarks_in(events) and list(store.read(FIGHT)) == events

    def test_missing_index(self, store: JsonlStore, log: Path, marked: list[StoredEvent]) -> None:
        """With the index deleted the landmarks are the same, and reading does not write it again."""
        marks_of(log).unlink()
        assert store.landmarks(FIGHT) == landmarks_in(marked)
        assert list(store.read(FIGHT)) == marked
        got = [line for chunk in store.read_lines(FIGHT) for line in chunk]
        assert got == [encode_line(ev) + b"\n" for ev in marked]
        assert store.version(FIGHT) == 8
        assert not marks_of(log).exists()

    def test_stale_index(self, store: JsonlStore, log: Path, marked: list[StoredEvent]) -> None:
        """Events appended by a writer that keeps no index (with a sound chain) still count, landmarks among them;
        reading leaves the stale index as it was."""
        more = with_landmarks(FIGHT, 9, marked[-1].hash)
        append_by_hand(log, more)
        before = marks_of(log).read_bytes()
        assert store.landmarks(FIGHT) == landmarks_in(marked + more)
        assert list(store.read(FIGHT)) == marked + more
        assert marks_of(log).read_bytes() == before

    @pytest.mark.parametrize("garbage", ["empty", "binary", "bad header", "wrong offsets", "not landmarks",
                                         "another log", "rows past the header"])
    def test_garbage_index(self, store: JsonlStore, log: Path, marked: list[StoredEvent], garbage: str) -> None:
        """An index that does not describe the log (garbage, rows pointing at the wrong lines, another log's, or
        rows beyond what its header covers, as a crash between its two writes leaves it) is not trusted: the
        landmarks are exactly the log's, each once."""
        index = marks_of(log)
        header, *rows = index.read_text().splitlines()
        covered_4 = f"C {4:020d} {sum(len(encode_line(ev)) + 1 for ev in marked[:4]):020d} {marked[3].hash}"
        index.write_bytes({
            "empty": b"",
            "binary": b"\xff\xfe\x00garbage\nL 3\nL x y\n",
            "bad header": ("C 8 nonsense\n" + "\n".join(rows) + "\n").encode(),
            "wrong offsets": (header + "\n" + "".join(f"L {row.split()[1]} 0\n" for row in rows)).encode(),
            "not landmarks": (header + "\nL 1 0\nL 2 0\n").encode(),
            "another log": f"C {8:020d} {log.stat().st_size:020d} {'0' * 64}\n".encode(),
            "rows past the header": (covered_4 + "\n" + "\n".join(rows) + "\n").encode(),
        }[garbage])
        before = index.read_bytes()
        assert store.landmarks(FIGHT) == landmarks_in(marked)
        assert index.read_bytes() == before

    @pytest.mark.parametrize("case", ["missing", "stale", "garbage", "cut back"])
    def test_append_rebuilds_the_index(self, store: JsonlStore, log: Path, marked: list[StoredEvent],
                                       case: str) -> None:
        """An append to a log whose index is missing, stale, garbage, or covers more than the log (after a repair
        cut a torn line) leaves an index that covers the whole log and lists every landmark."""
        events = list(marked)
        if case == "missing":
            marks_of(log).unlink()
        elif case == "stale":
            more = with_landmarks(FIGHT, 9, events[-1].hash)
            append_by_hand(log, more)
            events += more
        elif case == "garbage":
            marks_of(log).write_bytes(b"\x00\x01 nothing useful\n")
        else:
            data = log.read_bytes()
            log.write_bytes(data[:-10])
            assert store.repair(FIGHT) is not None
            events = events[:-1]
            assert store.landmarks(FIGHT) == landmarks_in(events)
        tail = with_landmarks(FIGHT, len(events) + 1, events[-1].hash)
        store.append(FIGHT, tail, len(events))
        events += tail
        assert_index_covers(log, events)
        assert store.landmarks(FIGHT) == landmarks_in(events)

    def test_reading_creates_no_index(self, tmp_path: Path) -> None:
        """A log written elsewhere (no index beside it) is read, and its landmarks found, without a ``.marks``."""
        log = tmp_path / f"{FIGHT}.jsonl"
        events = with_landmarks(FIGHT)
        write_log(log, events)
        store = JsonlStore(tmp_path)
        assert store.landmarks(FIGHT) == landmarks_in(events)
        assert list(store.read(FIGHT)) == events
        assert not marks_of(log).exists()
        single = JsonlStore.single(log)
        assert single.landmarks(FIGHT) == landmarks_in(events)
        assert not marks_of(log).exists()

    def test_reading_creates_no_file(self, tmp_path: Path) -> None:
        """Reading a log written elsewhere (its landmarks, its events and lines from the start or a late seq, its
        version, the fights) creates no file at all beside it: reading never writes."""
        log = tmp_path / f"{FIGHT}.jsonl"
        events = with_landmarks(FIGHT) + continue_from(with_landmarks(FIGHT), FIGHT, 1200)
        write_log(log, events)
        store = JsonlStore(tmp_path)
        assert store.landmarks(FIGHT) == landmarks_in(events)
        assert list(store.read(FIGHT)) == events
        assert list(store.read(FIGHT, 1100)) == events[1100:]
        assert [line for chunk in store.read_lines(FIGHT, 1100) for line in chunk] == \
            [encode_line(ev) + b"\n" for ev in events[1100:]]
        assert store.version(FIGHT) == len(events) and store.fights() == [FIGHT]
        assert sorted(p.name for p in tmp_path.iterdir()) == [log.name]


class TestLockTheRealFile:
    """Two writers reaching one log by two names (a symlink, a hard link) take one lock: the file's own."""

    @pytest.mark.parametrize("link", ["symlink", "hard link"])
    def test_a_writer_by_another_name_waits_for_the_lock(self, tmp_path: Path, link: str) -> None:
        """While the lock is held through the log's own name, an append through a symlink or a hard link to it
        waits; once released, it lands after the events already there, and the chain holds (one lock, not two)."""
        import threading

        from omen_core.store.jsonl import _locked

        path = tmp_path / "f.jsonl"
        first = make_events(FIGHT, 2)
        JsonlStore.single(path).append(FIGHT, first, 0)
        other = tmp_path / "other.jsonl"
        (os.symlink if link == "symlink" else os.link)(path, other)
        done = threading.Event()

        def append_by_the_other_name() -> None:
            JsonlStore.single(other).append(FIGHT, continue_from(first, FIGHT, 1), 2)
            done.set()

        with _locked(path, shared=False):
            writer = threading.Thread(target=append_by_the_other_name)
            writer.start()
            assert not done.wait(0.5), "the append through the other name did not wait for the lock"
        writer.join(10)
        assert done.is_set()
        assert [ev.seq for ev in JsonlStore.single(path).read(FIGHT)] == [1, 2, 3]


def test_the_packages_import_nothing_posix_only() -> None:
    """omen_core, omen_replay and omen_cli import on Windows: no module of theirs imports fcntl, termios, pwd or grp
    (the log's lock is portalocker's)."""
    import re

    root = Path(__file__).resolve().parents[2]
    posix_only = re.compile(r"^\s*(import|from)\s+(fcntl|termios|pwd|grp)\b", re.MULTILINE)
    found = [str(p.relative_to(root)) for package in ("omen_core", "omen_replay", "omen_cli")
             for p in (root / package).rglob("*.py") if posix_only.search(p.read_text(encoding="utf-8"))]
    assert found == []


EMBER_LOG = Path(__file__).resolve().parents[2] / "fixtures" / "ember-ford" / "fight.jsonl"


def batch_of(fight_id: str, start: int, size: int, prev_hash: str, present: int | None = None) -> list[StoredEvent]:
    """The first ``present`` (all, by default) events of a batch of ``size`` starting at seq ``start``."""
    from omen_core.events import seal

    from .conftest import roll

    events = []
    for seq in range(start, start + (size if present is None else present)):
        events.append(seal(fight_id, seq, seq, prev_hash, roll(seq), batch=start, batch_size=size))
        prev_hash = events[-1].hash
    return events


class TestTornBatch:
    """The complete lines of a final batch cut short by a crash go with its torn line, whole."""

    @pytest.fixture
    def cut(self, tmp_path: Path) -> tuple[Path, list[bytes]]:
        """The Ember Ford log cut after line 20 (seq 19 opens a batch of 16, so it holds 2 of them)."""
        lines = EMBER_LOG.read_bytes().splitlines(keepends=True)
        path = tmp_path / "torn.jsonl"
        path.write_bytes(b"".join(lines[:20]))
        return path, lines

    def test_torn_batch_is_moved_aside_whole(self, cut: tuple[Path, list[bytes]]) -> None:
        """repair_log moves lines 19 and 20 to <log>.torn-1, says so, and the log ends with seq 18."""
        path, lines = cut
        store = JsonlStore.single(path)
        repaired = store.repair_log("ember-ford")
        assert repaired.side == path.with_name("torn.jsonl.torn-1")
        assert repaired.side.read_bytes() == b"".join(lines[18:20])
        assert (repaired.batch, repaired.events, repaired.batch_size, repaired.torn_bytes) == (19, 2, 16, 0)
        assert path.read_bytes() == b"".join(lines[:18])
        assert store.repair_log("ember-ford").side is None

    def test_the_walk_finds_it_before_and_is_clean_after(self, cut: tuple[Path, list[bytes]]) -> None:
        """A strict replay refuses the torn batch; after repair it replays to seq 18."""
        from omen_core.walk import StoreSource, replay

        path, _ = cut
        store = JsonlStore.single(path)
        with pytest.raises(LogCorrupted, match="torn batch"):
            replay(StoreSource(store, "ember-ford"))
        assert store.repair("ember-ford") is not None
        assert replay(StoreSource(store, "ember-ford")).version == 18

    def test_torn_line_inside_a_torn_batch(self, cut: tuple[Path, list[bytes]]) -> None:
        """Lines 19 and 20 and half of line 21 all go aside, and the side file holds them in order."""
        path, lines = cut
        half = lines[20][:len(lines[20]) // 2]
        path.write_bytes(b"".join(lines[:20]) + half)
        repaired = JsonlStore.single(path).repair_log("ember-ford")
        assert repaired.side is not None and repaired.side.read_bytes() == b"".join(lines[18:20]) + half
        assert (repaired.batch, repaired.events, repaired.torn_bytes) == (19, 2, len(half))
        assert path.read_bytes() == b"".join(lines[:18])

    def test_a_whole_last_batch_keeps_its_lines(self, store: JsonlStore, log: Path) -> None:
        """A torn line that opens a new batch goes alone: the whole batch before it stays."""
        first = batch_of(FIGHT, 1, 3, GENESIS_HASH)
        store.append(FIGHT, first, 0)
        whole = log.read_bytes()
        log.write_bytes(whole + encode_line(batch_of(FIGHT, 4, 2, first[-1].hash)[0])[:30])
        repaired = store.repair_log(FIGHT)
        assert (repaired.batch, repaired.events, repaired.torn_bytes) == (0, 0, 30)
        assert log.read_bytes() == whole

    def test_a_batch_that_is_all_of_the_log(self, store: JsonlStore, log: Path) -> None:
        """A first batch cut short leaves an empty log, and the fight can start again."""
        store.append(FIGHT, batch_of(FIGHT, 1, 5, GENESIS_HASH, present=3), 0)
        repaired = store.repair_log(FIGHT)
        assert (repaired.batch, repaired.events, repaired.batch_size) == (1, 3, 5)
        assert log.read_bytes() == b""
        assert store.append(FIGHT, batch_of(FIGHT, 1, 2, GENESIS_HASH), 0) == 2

    def test_unknown_batch_sizes_are_left_alone(self, store: JsonlStore, log: Path) -> None:
        """Lines of an older log (batch_size 0: unknown) are never taken for a torn batch."""
        first = batch_of(FIGHT, 1, 0, GENESIS_HASH, present=3)
        store.append(FIGHT, first, 0)
        before = log.read_bytes()
        assert store.repair(FIGHT) is None
        assert log.read_bytes() == before

    def test_a_dry_run_says_what_would_go_and_writes_nothing(self, cut: tuple[Path, list[bytes]]) -> None:
        """repair_log(dry_run=True) says the batch, its events and the first line that would go (19), and leaves
        the log and its folder as they were."""
        path, _ = cut
        before = path.read_bytes()
        plan = JsonlStore.single(path).repair_log("ember-ford", dry_run=True)
        assert (plan.side, plan.batch, plan.events, plan.line, plan.empty_lines) == (None, 19, 2, 19, 0)
        assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == ["torn.jsonl"]

    def test_empty_lines_at_the_end_go_with_a_torn_batch(self, cut: tuple[Path, list[bytes]]) -> None:
        """Empty lines after a torn batch's last complete line go aside with it, in order, from line 19."""
        path, lines = cut
        path.write_bytes(b"".join(lines[:20]) + b"\n\n")
        repaired = JsonlStore.single(path).repair_log("ember-ford")
        assert (repaired.batch, repaired.events, repaired.empty_lines, repaired.line) == (19, 2, 2, 19)
        assert repaired.side is not None and repaired.side.read_bytes() == b"".join(lines[18:20]) + b"\n\n"
        assert path.read_bytes() == b"".join(lines[:18])

    def test_a_line_of_another_batch_inside_is_refused(self, store: JsonlStore, log: Path) -> None:
        """If a line the torn batch should hold belongs to another batch, repair refuses and changes nothing."""
        first = batch_of(FIGHT, 1, 2, GENESIS_HASH)
        tail = batch_of(FIGHT, 3, 4, first[-1].hash, present=2)
        odd = batch_of(FIGHT, 3, 5, first[-1].hash, present=1)  # seq 3 says its batch holds 5, seq 4 says 4
        log.parent.mkdir()
        log.write_bytes(b"".join(encode_line(ev) + b"\n" for ev in [*first, odd[0], tail[1]]))
        before = log.read_bytes()
        with pytest.raises(LogCorrupted, match="repair removes only a torn final batch") as info:
            store.repair(FIGHT)
        assert info.value.line == 4  # line 4 links to a seq 3 that is not line 3: the chain breaks there
        assert log.read_bytes() == before and not log.with_name(log.name + ".torn-1").exists()

    def test_a_last_line_repeated_is_named_by_its_line(self, store: JsonlStore, log: Path) -> None:
        """The last line of a torn batch written twice is refused at the repeat, line 6, not at a seq."""
        first = batch_of(FIGHT, 1, 2, GENESIS_HASH)
        tail = batch_of(FIGHT, 3, 5, first[-1].hash, present=3)
        log.parent.mkdir()
        log.write_bytes(b"".join(encode_line(ev) + b"\n" for ev in [*first, *tail, tail[-1]]))
        with pytest.raises(LogCorrupted) as info:
            store.repair(FIGHT)
        assert info.value.line == 6
        assert str(info.value).endswith("duel.jsonl:6: the last line, line 6, is seq 5 of a batch (seq 3, 5 events) "
                                        "cut short, but it does not follow line 5, the line before it (its "
                                        "prev_hash is not that line's hash): repair removes only a torn final "
                                        "batch; see omen verify")

    def test_an_early_line_appended_is_named_by_its_line(self, store: JsonlStore, log: Path) -> None:
        """A copy of seq 4 (of a batch of 5 from seq 3) after seq 9 is refused at its line, 10, not at line 3."""
        first = batch_of(FIGHT, 1, 2, GENESIS_HASH)
        middle = batch_of(FIGHT, 3, 5, first[-1].hash)
        last = batch_of(FIGHT, 8, 2, middle[-1].hash)
        log.parent.mkdir()
        log.write_bytes(b"".join(encode_line(ev) + b"\n" for ev in [*first, *middle, *last, middle[1]]))
        with pytest.raises(LogCorrupted, match="line 10, is seq 4 of a batch \\(seq 3, 5 events\\)") as info:
            store.repair(FIGHT)
        assert info.value.line == 10


class TestLongLines:
    """A line longer than MAX_LINE_BYTES is corruption, refused without reading it whole."""

    @pytest.fixture(autouse=True)
    def small_bound(self, monkeypatch: pytest.MonkeyPatch) -> int:
        """The bound made 4 KiB, so a line over it is cheap to write."""
        monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 4096)
        return 4096

    def test_a_long_line_inside_the_log(self, store: JsonlStore, log: Path) -> None:
        """Reading yields the events before a long line, then LogCorrupted naming the file and its line."""
        events = make_events(FIGHT, 3)
        write_log_dir(log, events)
        with open(log, "ab") as f:
            f.write(b"x" * 10_000 + b"\n")
        got: list[StoredEvent] = []
        with pytest.raises(LogCorrupted, match="longer than 4096 bytes") as info:
            got.extend(store.read(FIGHT))
        assert got == events and (info.value.path, info.value.line) == (str(log), 4)
        with pytest.raises(LogCorrupted, match="longer than") as info:
            for _ in store.read_lines(FIGHT):
                pass
        assert info.value.line == 4

    def test_a_long_last_line_or_torn_tail(self, store: JsonlStore, log: Path) -> None:
        """version, append and repair refuse a long last line, complete or torn, naming its line."""
        events = make_events(FIGHT, 3)
        for ending in (b"\n", b""):
            write_log_dir(log, events)
            with open(log, "ab") as f:
                f.write(b"\0" * 10_000 + ending)
            for call in (lambda: store.version(FIGHT), lambda: store.repair(FIGHT),
                         lambda: store.append(FIGHT, continue_from(events, FIGHT, 1), 3)):
                with pytest.raises(LogCorrupted, match="longer than") as info:
                    call()
                assert info.value.line == 4

    def test_a_long_first_line_names_no_fight(self, tmp_path: Path) -> None:
        """A single file whose first line is over the bound is LogCorrupted at line 1 (a file of NUL bytes)."""
        path = tmp_path / "nul.jsonl"
        path.write_bytes(b"\0" * 50_000)
        with pytest.raises(LogCorrupted, match="longer than") as info:
            JsonlStore.single(path).fights()
        assert info.value.line == 1

    def test_an_append_over_the_bound_is_refused(self, store: JsonlStore, log: Path) -> None:
        """A batch with a line longer than the bound is BadAppend, and nothing is written."""
        from omen_core.events import DiceRolled, Die, seal

        dice = tuple(Die(pool="primary", sides=6, face=1) for _ in range(200))
        big = seal(FIGHT, 1, 0, GENESIS_HASH, DiceRolled(counter=1, purpose="hit", roller="r", dice=dice,
                                                         source="scripted"))
        with pytest.raises(BadAppend, match="more than the 4096"):
            store.append(FIGHT, [big], 0)
        assert not log.exists()

    def test_lines_under_the_bound_across_blocks(self, store: JsonlStore, log: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
        """Lines longer than a read block but under the bound read back exactly, in one pass each."""
        monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1 << 20)
        monkeypatch.setattr(jsonl, "_CHUNK", 64)
        monkeypatch.setattr(jsonl, "_BLOCK", 16)
        events = make_events(FIGHT, 40)
        store.append(FIGHT, events[:20], 0)
        store.append(FIGHT, events[20:], 20)
        assert list(store.read(FIGHT)) == events
        assert [line for chunk in store.read_lines(FIGHT, 7) for line in chunk] == \
            [encode_line(ev) + b"\n" for ev in events[7:]]
        assert store.landmarks(FIGHT) == [ev for ev in events if isinstance(ev.event, LANDMARKS)]
        assert store.version(FIGHT) == 40


class TestBigFiles:
    """Big files under the real bound: found corrupt at once, read in one pass."""

    def test_a_300_mb_line_is_refused_at_the_bound(self, tmp_path: Path) -> None:
        """A log of 5 events then a 300 MB line (sparse: it costs no disk) is refused at line 6 by reading and by
        version; the line is never read whole."""
        path = tmp_path / "big.jsonl"
        events = make_events(FIGHT, 5)
        write_log(path, events)
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size + 300_000_000)  # NUL bytes, then a newline
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
        store = JsonlStore.single(path)
        got: list[StoredEvent] = []
        with pytest.raises(LogCorrupted, match="longer than") as info:
            got.extend(store.read(FIGHT))
        assert got == events and info.value.line == 6
        with pytest.raises(LogCorrupted, match="longer than") as info:
            store.version(FIGHT)
        assert info.value.line == 6

    def test_a_15_mb_last_line_reads_in_one_pass(self, tmp_path: Path) -> None:
        """A last line just under the bound is found by the backward scans and reported as not an event."""
        path = tmp_path / "long.jsonl"
        events = make_events(FIGHT, 5)
        write_log(path, events)
        with open(path, "ab") as f:
            f.write(b"{" + b" " * (15 << 20) + b"}\n")
        store = JsonlStore.single(path)
        with pytest.raises(LogCorrupted, match="not a valid stored event") as info:
            list(store.read(FIGHT))
        assert info.value.line == 6
        assert store.landmarks(FIGHT) == [ev for ev in events if isinstance(ev.event, LANDMARKS)]


class TestFightIdsFromFiles:
    """A fight id read from a file is checked like one given by a caller."""

    def test_a_hostile_id_on_line_1_is_log_corrupted(self, tmp_path: Path) -> None:
        """A first line naming fight '../../x' is LogCorrupted naming the file and line 1, for every call."""
        path = tmp_path / "h.jsonl"
        path.write_bytes(EMBER_LOG.read_bytes().replace(b'"fight_id":"ember-ford"', b'"fight_id":"../../x"'))
        store = JsonlStore.single(path)
        for call in (store.fights, lambda: store.read("ember-ford"), lambda: store.version("ember-ford"),
                     lambda: store.landmarks("ember-ford")):
            with pytest.raises(LogCorrupted, match=r"'../../x', which is not a fight id") as info:
                call()
            assert (info.value.path, info.value.line) == (str(path), 1)
        with pytest.raises(UnknownFight):
            store.read("../../x")  # an id that is no fight id is never looked for


class TestNotRegularFiles:
    """A directory, a FIFO or a device given as a log is StoreUnavailable saying what it is; nothing opens it."""

    def test_directory_named_like_a_log(self, tmp_path: Path) -> None:
        """A directory 'adir.jsonl' is said to be a directory, by reading and by appending."""
        path = tmp_path / "adir.jsonl"
        path.mkdir()
        store = JsonlStore.single(path)
        for call in (store.fights, lambda: store.append(FIGHT, make_events(FIGHT, 1), 0),
                     lambda: store.repair(FIGHT)):
            with pytest.raises(StoreUnavailable, match="is a directory") as info:
                call()
            assert info.value.path == str(path)

    def test_fifo_and_device(self, tmp_path: Path) -> None:
        """A FIFO and a symlink to /dev/zero are 'not a regular file' (a read of either would block or not end)."""
        fifo = tmp_path / "f.jsonl"
        os.mkfifo(fifo)
        zero = tmp_path / "z.jsonl"
        zero.symlink_to("/dev/zero")
        for path, kind in ((fifo, "a FIFO"), (zero, "a character device")):
            store = JsonlStore.single(path)
            for call in (store.fights, lambda s=store: s.version(FIGHT),
                         lambda s=store: s.append(FIGHT, make_events(FIGHT, 1), 0)):
                with pytest.raises(StoreUnavailable, match=f"not a regular file \\({kind}\\)"):
                    call()

    def test_nul_byte_in_a_path(self, tmp_path: Path) -> None:
        """A path holding a NUL byte is StoreUnavailable, not ValueError."""
        with pytest.raises(StoreUnavailable, match="NUL byte"):
            JsonlStore.single(f"{tmp_path}/a\0.jsonl")
        with pytest.raises(StoreUnavailable, match="NUL byte"):
            JsonlStore(f"{tmp_path}/a\0")


class TestSymlinksOutOfTheStore:
    """No read or write follows a symbolic link out of a directory store, and no cache beside a log is written
    through one (issue #26: ``omen do`` appended through a symlinked ``<fight>.jsonl`` to a file elsewhere)."""

    def test_a_fight_file_linked_outside_the_directory_is_refused(self, tmp_path: Path) -> None:
        """Appending, reading and asking the version of a fight whose file is a link to a file outside the store's
        directory: StoreUnavailable naming the link; the file outside keeps its bytes."""
        outside = tmp_path / "elsewhere.jsonl"
        kept = write_log(outside, make_events(FIGHT, 2))
        (tmp_path / "fights").mkdir()
        os.symlink(outside, tmp_path / "fights" / f"{FIGHT}.jsonl")
        store = JsonlStore(tmp_path / "fights")
        for attempt in (lambda: store.append(FIGHT, continue_from(make_events(FIGHT, 2), FIGHT, 1), 2),
                        lambda: list(store.read(FIGHT)), lambda: store.version(FIGHT)):
            with pytest.raises(StoreUnavailable, match=r"symbolic link .* outside the store's directory"):
                attempt()
        assert outside.read_bytes() == kept

    def test_a_link_inside_the_directory_is_followed(self, tmp_path: Path) -> None:
        """A fight file that is a link to a file in the same directory stays inside the store: it is read."""
        folder = tmp_path / "fights"
        folder.mkdir()
        write_log(folder / "real.jsonl", make_events(FIGHT, 2))
        os.symlink(folder / "real.jsonl", folder / f"{FIGHT}.jsonl")
        assert [ev.seq for ev in JsonlStore(folder).read(FIGHT)] == [1, 2]

    @pytest.mark.parametrize("cache", [".marks", ".idx"])
    def test_a_cache_file_that_is_a_link_is_neither_read_nor_written_through(self, tmp_path: Path,
                                                                            cache: str) -> None:
        """A ``.marks`` or ``.idx`` beside the log that is a link to another file: appends leave that file as it
        was (the cache is not written), and reads still give every event and landmark."""
        path = tmp_path / "f.jsonl"
        events = [*with_landmarks(FIGHT)]
        events += make_events(FIGHT, 1092, start_seq=9, prev_hash=events[-1].hash)
        JsonlStore.single(path).append(FIGHT, events[:3], 0)
        victim = tmp_path / "victim.txt"
        victim.write_text("keep me\n")
        side = path.with_name(path.name + cache)
        side.unlink(missing_ok=True)
        os.symlink(victim, side)
        store = JsonlStore.single(path)
        store.append(FIGHT, events[3:], 3)
        assert victim.read_text() == "keep me\n"
        assert [ev.seq for ev in store.read(FIGHT, 1050)] == list(range(1051, 1101))
        assert [ev.seq for ev in store.landmarks(FIGHT)] == [ev.seq for ev in landmarks_in(events)]


class TestWhereALoadFails:
    """A fight loaded from a directory store names the fight's file, not the directory, wherever its log fails."""

    @staticmethod
    def _damaged(tmp_path: Path, edit: bytes | None) -> tuple[Path, Path]:
        directory = tmp_path / "fights"
        Fight.start(JsonlStore(directory), FIGHT, dice=ManualDice(), combatants=[sheet("kael"), sheet("vesh")])
        path = directory / f"{FIGHT}.jsonl"
        lines = path.read_bytes().split(b"\n")
        lines[1] = edit if edit is not None else lines[1].replace(b'"kael"', b'"kaal"', 1)
        path.write_bytes(b"\n".join(lines))
        return directory, path

    def test_a_line_that_is_no_event_names_the_file(self, tmp_path: Path) -> None:
        """LogCorrupted from the walk carries path DIR/duel.jsonl and line 2 (it said DIR:2)."""
        directory, path = self._damaged(tmp_path, b"not json")
        with pytest.raises(LogCorrupted) as info:
            Fight.load(JsonlStore(directory), FIGHT)
        assert (info.value.path, info.value.line) == (str(path), 2)
        assert str(info.value).startswith(f"{path}:2: not a valid stored event")

    def test_a_changed_line_names_the_file(self, tmp_path: Path) -> None:
        """ChainBroken carries where DIR/duel.jsonl and line 2 (it said DIR:2)."""
        directory, path = self._damaged(tmp_path, None)
        with pytest.raises(ChainBroken) as info:
            Fight.load(JsonlStore(directory), FIGHT)
        assert (info.value.where, info.value.line, info.value.seq) == (str(path), 2, 2)
        assert str(info.value) == f"{path}:2: hash chain broken at seq 2: hash does not match the event's content"

    def test_location_of_a_fight(self, tmp_path: Path) -> None:
        """location_of gives a directory store's file for a fight id, and a single-file store's one file."""
        assert JsonlStore(tmp_path).location_of("duel") == str(tmp_path / "duel.jsonl")
        assert JsonlStore.single(tmp_path / "one.jsonl").location_of("duel") == str(tmp_path / "one.jsonl")
