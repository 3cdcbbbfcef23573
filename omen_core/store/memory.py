"""In-memory event store: for tests, simulations and embedding; nothing survives the process."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from ..errors import UnknownFight
from ..events import LANDMARKS, StoredEvent, lines_of
from .base import check_batch, check_fight_id

__all__ = ["MemoryStore"]

_LANDMARK_TYPES = frozenset(LANDMARKS)


class MemoryStore:
    """Keeps each fight's sealed events, and their lines as stored, in lists; a lock makes ``append`` atomic
    across threads."""

    location = "the memory store"

    def __init__(self) -> None:
        self._streams: dict[str, list[StoredEvent]] = {}
        self._lines: dict[str, list[bytes]] = {}
        self._landmarks: dict[str, list[StoredEvent]] = {}
        self._lock = threading.Lock()

    def append(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int) -> int:
        """Append ``events`` if the fight is at ``expected_version``; return the new version."""
        lines = lines_of(events)
        marks = [ev for ev in events if type(ev.event) in _LANDMARK_TYPES]
        with self._lock:
            stream = self._streams.get(fight_id)
            if stream is None:  # a new fight: its id is checked once, when it is first stored
                check_fight_id(fight_id)
                stream = []
            check_batch(fight_id, events, expected_version, len(stream),
                        stream[-1].hash if stream else None)
            if not stream:
                self._streams[fight_id], self._lines[fight_id], self._landmarks[fight_id] = stream, [], []
            stream.extend(events)
            self._lines[fight_id].extend(lines)
            if marks:
                self._landmarks[fight_id].extend(marks)
            return len(stream)

    def read(self, fight_id: str, after_seq: int = 0) -> Iterator[StoredEvent]:
        """Stream the fight's events with ``seq > after_seq``."""
        with self._lock:
            if fight_id not in self._streams:
                raise UnknownFight(fight_id, self.location)
            stream = self._streams[fight_id]
        return iter(stream[max(after_seq, 0):])

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Iterator[list[bytes]]:
        """The fight's lines as stored (without newlines) with ``seq > after_seq``, in one chunk."""
        with self._lock:
            if fight_id not in self._lines:
                raise UnknownFight(fight_id, self.location)
            lines = self._lines[fight_id][max(after_seq, 0):]
        return iter([lines] if lines else [])

    def landmarks(self, fight_id: str) -> list[StoredEvent]:
        """The fight's landmark events (undo and redo markers, the revealed seed), in order."""
        with self._lock:
            if fight_id not in self._streams:
                raise UnknownFight(fight_id, self.location)
            return list(self._landmarks.get(fight_id, ()))

    def version(self, fight_id: str) -> int:
        """The seq of the fight's last event, 0 if it has none."""
        with self._lock:
            return len(self._streams.get(fight_id, ()))

    def head(self, fight_id: str) -> tuple[int, str | None]:
        """The seq and hash of the fight's last event ((0, None) if it has none)."""
        with self._lock:
            stream = self._streams.get(fight_id, ())
            return (len(stream), stream[-1].hash) if stream else (0, None)

    def fights(self) -> list[str]:
        """The stored fight ids, sorted."""
        with self._lock:
            return sorted(self._streams)
