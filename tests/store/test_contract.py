"""The EventStore contract, run against every backend: memory, JSON Lines (directory and single file), SQLite."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omen_core.errors import BadAppend, ConcurrencyError, UnknownFight
from omen_core.events import (
    GENESIS_HASH,
    LANDMARKS,
    Event,
    Redone,
    SeedRevealed,
    StoredEvent,
    Undone,
    chain_breaks,
    encode_line,
    seal,
)
from omen_core.store import EventStore

from .conftest import chain, continue_from, make_event, make_events, roll, with_landmarks

FIGHT = "fight-1"


def stored(store: EventStore, fight_id: str = FIGHT) -> list[StoredEvent]:
    """Everything the store holds for ``fight_id``."""
    return list(store.read(fight_id))


def lines(store: EventStore, fight_id: str = FIGHT, after_seq: int = 0) -> list[bytes]:
    """The lines ``read_lines`` gives, out of their chunks (each a list of bytes), without the newline a JSON
    Lines store ends each line with."""
    found = []
    for chunk in store.read_lines(fight_id, after_seq):
        assert isinstance(chunk, list) and all(isinstance(line, bytes) for line in chunk)
        found += [line[:-1] if line.endswith(b"\n") else line for line in chunk]
    assert not any(b"\n" in line for line in found)
    return found


def landmarks_in(events: list[StoredEvent]) -> list[StoredEvent]:
    """The landmark events among ``events`` (undo and redo markers, the revealed seed), in order."""
    return [ev for ev in events if isinstance(ev.event, LANDMARKS)]


class TestRoundTrip:
    """Appending and reading back."""

    def test_append_then_read_returns_the_same_events(self, store: EventStore) -> None:
        """Events read back equal the events appended, in order."""
        events = make_events(FIGHT, 5)
        assert store.append(FIGHT, events, 0) == 5
        assert stored(store) == events

    def test_appends_accumulate(self, store: EventStore) -> None:
        """Two batches read back as one stream."""
        first = make_events(FIGHT, 3)
        second = continue_from(first, FIGHT, 4)
        store.append(FIGHT, first, 0)
        assert store.append(FIGHT, second, 3) == 7
        assert stored(store) == first + second
        assert list(chain_breaks(stored(store))) == []

    @pytest.mark.parametrize("after_seq", [0, 1, 3, 5, 9])
    def test_read_after_seq_yields_only_later_events(self, store: EventStore, after_seq: int) -> None:
        """``read(fight, after_seq)`` yields exactly the events with a greater seq."""
        events = make_events(FIGHT, 5)
        store.append(FIGHT, events, 0)
        assert list(store.read(FIGHT, after_seq)) == [e for e in events if e.seq > after_seq]

    def test_store_satisfies_the_protocol(self, store: EventStore) -> None:
        """Every backend is a runtime-checkable EventStore."""
        assert isinstance(store, EventStore)

    def test_read_streams_lazily(self, store: EventStore) -> None:
        """``read`` returns an iterator that can be consumed one event at a time."""
        events = make_events(FIGHT, 3)
        store.append(FIGHT, events, 0)
        reading = iter(store.read(FIGHT))
        assert next(reading) == events[0]
        assert list(reading) == events[1:]

    def test_read_unknown_fight_raises(self, store: EventStore) -> None:
        """Reading a fight that was never appended raises UnknownFight naming it."""
        with pytest.raises(UnknownFight) as info:
            list(store.read("nobody"))
        assert info.value.fight_id == "nobody"


class TestVersionAndFights:
    """``version`` and ``fights``."""

    def test_version_of_missing_fight_is_zero(self, store: EventStore) -> None:
        """A fight with no events is at version 0."""
        assert store.version(FIGHT) == 0

    def test_version_follows_appends(self, store: EventStore) -> None:
        """The version is the seq of the last stored event."""
        events = make_events(FIGHT, 4)
        store.append(FIGHT, events[:1], 0)
        assert store.version(FIGHT) == 1
        store.append(FIGHT, events[1:], 1)
        assert store.version(FIGHT) == 4

    def test_head_is_the_last_events_seq_and_hash(self, store: EventStore) -> None:
        """``head`` (each of omen's stores has it; a server compares it with the fight it holds) is the seq and hash
        of the last stored event, (0, None) for a fight with none."""
        assert store.head(FIGHT) == (0, None)  # type: ignore[attr-defined]
        events = make_events(FIGHT, 4)
        store.append(FIGHT, events[:1], 0)
        assert store.head(FIGHT) == (1, events[0].hash)  # type: ignore[attr-defined]
        store.append(FIGHT, events[1:], 1)
        assert store.head(FIGHT) == (4, events[3].hash)  # type: ignore[attr-defined]

    def test_fights_lists_stored_fights(self, store: EventStore) -> None:
        """``fights`` is empty at first, then lists the appended fight."""
        assert store.fights() == []
        store.append(FIGHT, make_events(FIGHT, 2), 0)
        assert store.fights() == [FIGHT]

    def test_multiple_fights_are_independent(self, store: EventStore, backend: str) -> None:
        """Each fight has its own stream, version and chain."""
        if backend == "jsonl-single":
            pytest.skip("a single-file store holds one fight (its refusal is tested in test_jsonl)")
        a, b = make_events("a", 3), make_events("b", 2, tag=1)
        store.append("a", a, 0)
        store.append("b", b, 0)
        store.append("a", continue_from(a, "a", 1), 3)
        assert store.fights() == ["a", "b"]
        assert (store.version("a"), store.version("b")) == (4, 2)
        assert stored(store, "b") == b
        assert stored(store, "a")[:3] == a


class TestConcurrencyCheck:
    """Optimistic concurrency on ``expected_version``."""

    @pytest.mark.parametrize("expected", [0, 2, 4])
    def test_stale_expected_version_raises_and_writes_nothing(self, store: EventStore,
                                                              expected: int) -> None:
        """An expected version other than the actual one raises ConcurrencyError with both versions."""
        events = make_events(FIGHT, 3)
        store.append(FIGHT, events, 0)
        with pytest.raises(ConcurrencyError) as info:
            store.append(FIGHT, continue_from(events, FIGHT, 1), expected)
        assert (info.value.fight_id, info.value.expected, info.value.actual) == (FIGHT, expected, 3)
        assert stored(store) == events

    def test_new_fight_expects_version_zero(self, store: EventStore) -> None:
        """Appending to an empty fight with expected_version 1 raises ConcurrencyError(actual=0)."""
        with pytest.raises(ConcurrencyError) as info:
            store.append(FIGHT, make_events(FIGHT, 1), 1)
        assert (info.value.expected, info.value.actual) == (1, 0)
        assert store.version(FIGHT) == 0


class TestBadBatches:
    """Batches that do not continue the stream are refused whole."""

    @pytest.fixture
    def base(self, store: EventStore) -> list[StoredEvent]:
        """Two events already stored in FIGHT."""
        events = make_events(FIGHT, 2)
        store.append(FIGHT, events, 0)
        return events

    def test_empty_batch_is_refused(self, store: EventStore, base: list[StoredEvent]) -> None:
        """An empty batch raises BadAppend."""
        with pytest.raises(BadAppend):
            store.append(FIGHT, [], 2)
        assert stored(store) == base

    def test_wrong_seq_is_refused(self, store: EventStore, base: list[StoredEvent]) -> None:
        """A batch starting at a seq other than version + 1 raises BadAppend."""
        skipping = make_events(FIGHT, 1, start_seq=4, prev_hash=base[-1].hash)
        with pytest.raises(BadAppend):
            store.append(FIGHT, skipping, 2)
        assert stored(store) == base

    def test_wrong_link_is_refused(self, store: EventStore, base: list[StoredEvent]) -> None:
        """A batch whose first prev_hash is not the last stored hash raises BadAppend."""
        unlinked = make_events(FIGHT, 1, start_seq=3, prev_hash=base[0].hash)
        with pytest.raises(BadAppend):
            store.append(FIGHT, unlinked, 2)
        assert stored(store) == base

    def test_first_event_must_link_to_genesis(self, store: EventStore) -> None:
        """A new fight's first event must carry the genesis prev_hash."""
        with pytest.raises(BadAppend):
            store.append(FIGHT, [seal(FIGHT, 1, 0, "1" * 64, make_event(FIGHT, 1, GENESIS_HASH).event)], 0)
        assert store.version(FIGHT) == 0

    def test_wrong_fight_is_refused(self, store: EventStore, base: list[StoredEvent]) -> None:
        """Events of another fight raise BadAppend."""
        foreign = make_events("other", 1, start_seq=3, prev_hash=base[-1].hash)
        with pytest.raises(BadAppend):
            store.append(FIGHT, foreign, 2)
        assert stored(store) == base

    @pytest.mark.parametrize("fight_id", ["dup\n", "dup\n\n", "\ndup", "du p", "d" * 129, "", "-dup", "dup/x"])
    def test_an_id_that_is_not_a_fight_id_whole_is_refused(self, store: EventStore, fight_id: str) -> None:
        """A fight id is matched whole: "dup\n" (``$`` alone matches before a final newline) is BadAppend, as is
        any id not 1-128 letters, digits, '.', '_' or '-' starting with a letter or digit; nothing is written."""
        with pytest.raises(BadAppend):
            store.append(fight_id, make_events(fight_id, 1), 0)
        assert store.fights() == []

    def test_bad_third_event_writes_none_of_the_batch(self, store: EventStore,
                                                      base: list[StoredEvent]) -> None:
        """A batch whose third event is broken is refused as a whole."""
        batch = continue_from(base, FIGHT, 4)
        batch[2] = seal(FIGHT, 5, 0, GENESIS_HASH, batch[2].event)
        with pytest.raises(BadAppend):
            store.append(FIGHT, batch, 2)
        assert stored(store) == base
        assert store.version(FIGHT) == 2


class TestReadLines:
    """``read_lines``: the stored bytes of each event, undecoded, in chunks, in order."""

    def test_lines_are_the_encoded_events_in_order(self, store: EventStore) -> None:
        """The lines of two batches are exactly ``encode_line(ev)`` of each event appended, in order."""
        first = make_events(FIGHT, 3)
        second = continue_from(first, FIGHT, 4)
        store.append(FIGHT, first, 0)
        store.append(FIGHT, second, 3)
        assert lines(store) == [encode_line(ev) for ev in first + second]

    @pytest.mark.parametrize("after_seq", [0, 1, 3, 4, 5, 9])
    def test_lines_after_seq(self, store: EventStore, after_seq: int) -> None:
        """``read_lines(fight, after_seq)`` gives exactly the lines of the later events; past the end, none."""
        events = make_events(FIGHT, 5)
        store.append(FIGHT, events, 0)
        assert lines(store, FIGHT, after_seq) == [encode_line(ev) for ev in events if ev.seq > after_seq]

    @pytest.mark.parametrize("after_seq", [0, 1023, 1024, 1025, 2047, 2048, 2500, 2999, 3000, 4000])
    def test_lines_of_a_long_log(self, store: EventStore, after_seq: int) -> None:
        """A log of 3000 events appended in batches reads back line for line after any seq, over the chunks and
        any offset index the backend keeps."""
        events: list[StoredEvent] = []
        for _ in range(6):
            batch = continue_from(events, FIGHT, 500)
            store.append(FIGHT, batch, len(events))
            events += batch
        assert lines(store, FIGHT, after_seq) == [encode_line(ev) for ev in events[after_seq:]]

    def test_lines_of_unknown_fight_raise(self, store: EventStore) -> None:
        """Reading the lines of a fight that was never appended raises UnknownFight naming it."""
        with pytest.raises(UnknownFight) as info:
            list(store.read_lines("nobody"))
        assert info.value.fight_id == "nobody"

    def test_fights_do_not_mix(self, store: EventStore, backend: str) -> None:
        """Each fight's lines are its own."""
        if backend == "jsonl-single":
            pytest.skip("a single-file store holds one fight (its refusal is tested in test_jsonl)")
        a, b = make_events("a", 3), make_events("b", 2, tag=1)
        store.append("a", a, 0)
        store.append("b", b, 0)
        assert lines(store, "a") == [encode_line(ev) for ev in a]
        assert lines(store, "b", 1) == [encode_line(b[1])]


class TestLandmarks:
    """``landmarks``: the fight's undo and redo markers and revealed seed, from an index kept at append time."""

    def test_landmarks_are_exactly_those_appended_in_order(self, store: EventStore) -> None:
        """The undo, the redo, the second undo and the revealed seed, as appended, in order; nothing else."""
        events = with_landmarks(FIGHT)
        store.append(FIGHT, events[:4], 0)
        store.append(FIGHT, events[4:], 4)
        found = store.landmarks(FIGHT)
        assert [type(ev.event) for ev in found] == [Undone, Redone, Undone, SeedRevealed]
        assert found == [events[2], events[4], events[6], events[7]]

    def test_landmarks_follow_appends(self, store: EventStore) -> None:
        """Each append's landmarks are known as soon as it returns; later plain events add none."""
        events = with_landmarks(FIGHT)
        store.append(FIGHT, events[:2], 0)
        assert store.landmarks(FIGHT) == []
        store.append(FIGHT, events[2:3], 2)
        assert store.landmarks(FIGHT) == [events[2]]
        store.append(FIGHT, events[3:], 3)
        more = chain(FIGHT, [roll(9), roll(10)], 9, events[-1].hash)
        store.append(FIGHT, more, 8)
        assert store.landmarks(FIGHT) == landmarks_in(events)

    def test_fight_without_landmarks(self, store: EventStore) -> None:
        """A fight of plain events has no landmarks."""
        store.append(FIGHT, chain(FIGHT, [roll(seq) for seq in range(1, 6)]), 0)
        assert store.landmarks(FIGHT) == []

    def test_landmarks_of_unknown_fight_raise(self, store: EventStore) -> None:
        """The landmarks of a fight that was never appended raise UnknownFight naming it."""
        with pytest.raises(UnknownFight) as info:
            store.landmarks("nobody")
        assert info.value.fight_id == "nobody"

    def test_landmarks_of_each_fight(self, store: EventStore, backend: str) -> None:
        """Each fight's landmarks are its own."""
        if backend == "jsonl-single":
            pytest.skip("a single-file store holds one fight (its refusal is tested in test_jsonl)")
        a = with_landmarks("a")
        b = chain("b", [roll(1), roll(2)])
        store.append("a", a, 0)
        store.append("b", b, 0)
        assert store.landmarks("a") == landmarks_in(a)
        assert store.landmarks("b") == []


class TestLocation:
    def test_location_is_a_name_for_messages(self, store: EventStore) -> None:
        """``location`` is a non-empty string, the one an UnknownFight names."""
        assert isinstance(store.location, str) and store.location
        with pytest.raises(UnknownFight) as info:
            list(store.read("nobody"))
        assert store.location in str(info.value)


batch_sizes = st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=5)


class TestProperty:
    """Whatever is appended is read back unchanged."""

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(sizes=batch_sizes, tag=st.integers(min_value=0, max_value=255))
    def test_any_batches_read_back_exactly(self, store_factory: Callable[[], EventStore],
                                           sizes: list[int], tag: int) -> None:
        """Any sequence of batches appended and read back gives the same events and a sound chain."""
        store = store_factory()
        appended: list[StoredEvent] = []
        for size in sizes:
            batch = continue_from(appended, FIGHT, size, tag)
            assert store.append(FIGHT, batch, len(appended)) == len(appended) + size
            appended += batch
        back = stored(store)
        assert back == appended
        assert list(chain_breaks(back, FIGHT)) == []
        assert store.version(FIGHT) == len(appended)
        assert lines(store) == [encode_line(ev) for ev in appended]
        assert store.landmarks(FIGHT) == landmarks_in(appended)

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(batches=st.lists(st.lists(st.sampled_from(["roll", "undone", "redone", "seed"]), min_size=1,
                                     max_size=4), min_size=1, max_size=5),
           after=st.integers(min_value=0, max_value=22))
    def test_any_landmarks_are_indexed(self, store_factory: Callable[[], EventStore], batches: list[list[str]],
                                       after: int) -> None:
        """Whatever mix of plain events and landmarks is appended, in whatever batches, ``landmarks`` gives exactly
        the landmarks and ``read_lines`` the lines of the events after any seq."""
        store = store_factory()
        appended: list[StoredEvent] = []
        for kinds in batches:
            start = len(appended) + 1
            made: dict[str, Callable[[int], Event]] = {
                "roll": roll, "undone": lambda s: Undone(from_seq=1, to_seq=s - 1 or 1),
                "redone": lambda s: Redone(undo_seq=s - 1 or 1), "seed": lambda s: SeedRevealed(seed=f"{s:04x}")}
            batch = chain(FIGHT, [made[kind](seq) for seq, kind in enumerate(kinds, start)], start,
                          appended[-1].hash if appended else GENESIS_HASH)
            store.append(FIGHT, batch, len(appended))
            appended += batch
            assert store.landmarks(FIGHT) == landmarks_in(appended)
        assert lines(store, FIGHT, after) == [encode_line(ev) for ev in appended[after:]]
