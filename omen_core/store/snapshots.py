"""State snapshots: a cache that lets state-at-seq and undo start part-way through a log.

A snapshot is the folded state after event ``seq``, with the schema and
state-format versions it was taken under and two digests: the hash of that
event (the chain's hash, a digest of the whole log up to it) and
``state_digest``, the sha256 of the state's bytes as stored with everything
the snapshot says of itself. Snapshots are only ever a cache: deleting them
changes no result, and one that no longer fits the log (another schema or
state format, a different event at its seq, an undo or redo that reaches back
before it) or whose bytes were changed since they were written (the state
digest does not check, the state does not stand where the snapshot says) is
ignored, never trusted. The walk starts from one
(:func:`omen_core.walk.state_at`; :func:`omen_core.walk.usable_snapshot` says which: the store knows nothing of
the walk, it keeps and finds snapshots).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import msgspec

from ..errors import InvalidFightId, StoreUnavailable
from ..events import SCHEMA_VERSION
from ..state import FightState
from .base import FIGHT_ID, os_guard
from .postgres import PostgresDatabase
from .sqlite import connect, db_guard

__all__ = ["STATE_FORMAT", "MAX_TRIES", "Snapshot", "SnapshotStore", "MemorySnapshots", "FileSnapshots",
           "SqliteSnapshots", "PostgresSnapshots", "take"]

#: Bumped whenever FightState changes shape, or snapshots are stored differently: those of another format are
#: ignored (4: the state digest; 5: the undo floor, C42; 6: abilities as data, C37-C41: the fight's abilities and
#: the shorthands' expansions, uses, condition applications and durations, deferred costs; 7: a frame's resume_at,
#: an ability's attack, C38; 8: the conditions an action applied, a frame's applied, C38).
STATE_FORMAT = 8

#: How many snapshots a lookup tries, newest first (one that does not check is skipped), before the walk starts
#: from the beginning.
MAX_TRIES = 8


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """The state after event ``seq`` of a fight, and what it was taken under (``event_hash``: the hash of the
    event at ``seq``, which chains every event before it: the digest of the log prefix the state stands for)."""

    fight_id: str
    seq: int
    schema_version: int
    state_format: int
    event_hash: str
    state: FightState


class _Stored(msgspec.Struct, frozen=True, kw_only=True):
    """A snapshot as a store keeps it: the state's bytes as written, and ``state_digest``
    (:func:`_digest`) over them and every other field."""

    fight_id: str
    seq: int
    schema_version: int
    state_format: int
    event_hash: str
    state: msgspec.Raw
    state_digest: str = ""


_ENCODE_STATE = msgspec.json.Encoder().encode
_ENCODE_STORED = msgspec.json.Encoder().encode
_DECODE_STORED = msgspec.json.Decoder(_Stored).decode
_DECODE_STATE = msgspec.json.Decoder(FightState).decode


def _digest(fight_id: str, seq: int, schema_version: int, state_format: int, event_hash: str, state: bytes) -> str:
    """sha256 of what a stored snapshot says: its header fields, one a line, then the state's bytes."""
    head = f"omen snapshot\n{fight_id}\n{seq}\n{schema_version}\n{state_format}\n{event_hash}\n".encode()
    return hashlib.sha256(head + state).hexdigest()


def _encode(snapshot: Snapshot) -> bytes:
    """A snapshot's stored bytes, with its state digest."""
    state = _ENCODE_STATE(snapshot.state)
    digest = _digest(snapshot.fight_id, snapshot.seq, snapshot.schema_version, snapshot.state_format,
                     snapshot.event_hash, state)
    return _ENCODE_STORED(_Stored(fight_id=snapshot.fight_id, seq=snapshot.seq,
                                  schema_version=snapshot.schema_version, state_format=snapshot.state_format,
                                  event_hash=snapshot.event_hash, state=msgspec.Raw(state), state_digest=digest))


def _decode(body: bytes) -> Snapshot:
    """A stored snapshot whose state digest checks and whose state stands where it says (the fight, the seq, the
    hash); :class:`msgspec.DecodeError` otherwise (a cache edited, truncated or written by another omen)."""
    stored = _DECODE_STORED(body)
    state_bytes = bytes(stored.state)
    digest = _digest(stored.fight_id, stored.seq, stored.schema_version, stored.state_format, stored.event_hash,
                     state_bytes)
    if stored.state_digest != digest:
        raise msgspec.DecodeError("the snapshot's state digest does not check: its bytes were changed")
    state = _DECODE_STATE(state_bytes)
    if (state.fight_id, state.version, state.last_hash) != (stored.fight_id, stored.seq, stored.event_hash):
        raise msgspec.DecodeError("the snapshot's state does not stand where the snapshot says")
    return Snapshot(fight_id=stored.fight_id, seq=stored.seq, schema_version=stored.schema_version,
                    state_format=stored.state_format, event_hash=stored.event_hash, state=state)


def _blob(body: object) -> bytes:
    """A snapshot row's body as the bytes written (a BLOB), or nothing for a value of another type an edit put there
    (a TEXT, a number: a damaged cache, skipped like any that does not check; it raised TypeError, found by a
    tester)."""
    return bytes(body) if isinstance(body, (bytes, bytearray, memoryview)) else b""


def _first_sound(bodies: Iterable[bytes]) -> Snapshot | None:
    """The first of ``bodies`` (newest first) that decodes and checks; an edited or damaged one is skipped."""
    for body in bodies:
        try:
            return _decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeError):
            continue
    return None


class SnapshotStore(Protocol):
    """Where snapshots are kept: save one, find the latest at or before a seq, list and delete them."""

    def save(self, snapshot: Snapshot) -> None: ...

    def latest(self, fight_id: str, at_most: int) -> Snapshot | None: ...

    def seqs(self, fight_id: str) -> list[int]: ...

    def delete(self, fight_id: str) -> None: ...


class MemorySnapshots:
    """Snapshots in a dict, for a process's lifetime."""

    def __init__(self) -> None:
        self._by_fight: dict[str, dict[int, bytes]] = {}
        self._lock = threading.Lock()

    def save(self, snapshot: Snapshot) -> None:
        """Keep a snapshot (replacing one at the same seq)."""
        with self._lock:
            self._by_fight.setdefault(snapshot.fight_id, {})[snapshot.seq] = _encode(snapshot)

    def latest(self, fight_id: str, at_most: int) -> Snapshot | None:
        """The snapshot with the highest seq not above ``at_most`` whose bytes check."""
        with self._lock:
            held = self._by_fight.get(fight_id, {})
            bodies = [held[s] for s in sorted((s for s in held if s <= at_most), reverse=True)[:MAX_TRIES]]
        return _first_sound(bodies)

    def seqs(self, fight_id: str) -> list[int]:
        """The seqs snapshots exist at, ascending."""
        with self._lock:
            return sorted(self._by_fight.get(fight_id, {}))

    def delete(self, fight_id: str) -> None:
        """Forget every snapshot of a fight."""
        with self._lock:
            self._by_fight.pop(fight_id, None)


class FileSnapshots:
    """Snapshots as files ``<directory>/<fight_id>/<seq>.json`` (next to a JSON Lines log, say).

    The listing of a fight's folder is kept while the folder's modification time stays the same (a snapshot this
    object saves joins it at once), so looking up the latest snapshot does not list thousands of files each time.
    A listing that is stale (another process wrote in the same clock tick) only costs speed: a missing file is
    skipped, an unlisted newer one is not used.

    No path leads out of :attr:`directory`: the directory and a fight's folder must be real folders, not
    symbolic links (saving or deleting through one is :class:`StoreUnavailable`; looking up sees no snapshot
    there), a snapshot file is read only if it is a regular file and not a link, and one is written as a new
    file renamed into place (a link planted where it goes is replaced, never written through).
    """

    def __init__(self, directory: str | os.PathLike[str]):
        if "\x00" in os.fspath(directory):
            raise StoreUnavailable(os.fspath(directory), "a path cannot hold a NUL byte")
        self.directory = Path(directory)
        self._listed: dict[str, tuple[int, list[int]]] = {}

    def _folder(self, fight_id: str) -> Path:
        """The folder of a fight's snapshots: every path this class builds starts here, and an id that is not a
        fight id (``../x``, say) is refused, so no path is ever built outside :attr:`directory`."""
        if not FIGHT_ID.match(fight_id):
            raise InvalidFightId(fight_id, f"the snapshots in {self.directory}")
        folder = self.directory / fight_id
        if folder.parent != self.directory:  # cannot happen for a fight id: the defence behind the defence
            raise InvalidFightId(fight_id, f"the snapshots in {self.directory}")
        return folder

    def _linked(self, folder: Path) -> Path | None:
        """The first of :attr:`directory` and ``folder`` that is a symbolic link, if one is."""
        return next((p for p in (self.directory, folder) if p.is_symlink()), None)

    def _writable(self, folder: Path) -> None:
        """Refuse to write or delete through a symbolic link (it would lead out of the snapshot folder)."""
        link = self._linked(folder)
        if link is not None:
            raise StoreUnavailable(link, "is a symbolic link: omen writes and deletes snapshots only in a real "
                                         "folder beside the log, never through a link")

    def save(self, snapshot: Snapshot) -> None:
        """Write a snapshot atomically (a new temporary file renamed into place)."""
        folder = self._folder(snapshot.fight_id)
        with os_guard(folder):
            self._writable(folder)
            self._save(folder, snapshot)

    def _save(self, folder: Path, snapshot: Snapshot) -> None:
        """Write a snapshot into ``folder`` and keep the listing current."""
        fd, tmp = -1, ""
        for attempt in range(_MKDIR_TRIES):  # another process's ``snapshot --clear`` may remove an empty folder
            folder.mkdir(parents=True, exist_ok=True)  # between this mkdir and the file made in it: make it again
            self._writable(folder)  # made by another process as a link since the first look
            listed = self._listed.pop(snapshot.fight_id, None)
            current = listed is not None and listed[0] == _mtime(folder)
            try:
                fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{snapshot.seq}.json.", suffix=".tmp")
                break
            except FileNotFoundError:
                if attempt == _MKDIR_TRIES - 1:
                    raise
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_encode(snapshot))  # mkstemp's file is 0600: a snapshot holds the whole state
            os.replace(tmp, folder / f"{snapshot.seq}.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if listed is not None and current:
            seqs = listed[1] if snapshot.seq in listed[1] else sorted([*listed[1], snapshot.seq])
            self._listed[snapshot.fight_id] = (_mtime(folder), seqs)

    def latest(self, fight_id: str, at_most: int) -> Snapshot | None:
        """The snapshot with the highest seq not above ``at_most`` whose bytes check; an unreadable, edited or
        linked file is skipped."""
        seqs = self.seqs(fight_id)
        folder = self._folder(fight_id)
        for seq in list(reversed(seqs[:bisect.bisect_right(seqs, at_most)]))[:MAX_TRIES]:
            body = _read_regular(folder / f"{seq}.json")
            found = _first_sound([body]) if body is not None else None
            if found is not None and found.fight_id == fight_id and found.seq == seq:
                return found
        return None

    def seqs(self, fight_id: str) -> list[int]:
        """The seqs snapshot files exist at, ascending (none behind a symbolic link)."""
        folder = self._folder(fight_id)
        stamp = _mtime(folder)
        if stamp < 0 or self._linked(folder) is not None:
            self._listed.pop(fight_id, None)
            return []
        listed = self._listed.get(fight_id)
        if listed is None or listed[0] != stamp:
            with os_guard(folder), os.scandir(folder) as entries:
                found = sorted(int(stem) for e in entries if e.name.endswith(".json")
                               and (stem := e.name[:-5]).isascii() and stem.isdigit())
            listed = self._listed[fight_id] = (stamp, found)
        return list(listed[1])

    def delete(self, fight_id: str) -> None:
        """Remove every snapshot file of a fight (a link among them is removed, not what it points to)."""
        folder = self._folder(fight_id)
        with os_guard(folder):
            self._writable(folder)
        for seq in self.seqs(fight_id):
            with os_guard(folder):
                (folder / f"{seq}.json").unlink(missing_ok=True)
        self._listed.pop(fight_id, None)


#: How many times a snapshot's folder is made again if it was removed before the file could be made in it.
_MKDIR_TRIES = 3


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file and not a symbolic link (opened without following one and
    without blocking, so a FIFO never hangs), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _mtime(folder: Path) -> int:
    """A folder's modification time in nanoseconds, or -1 if it is not a folder."""
    try:
        st = folder.stat()
    except OSError:
        return -1
    return st.st_mtime_ns if stat.S_ISDIR(st.st_mode) else -1


class SqliteSnapshots:
    """Snapshots in a table of a SQLite database (the fight store's own, typically), created by the first save:
    looking snapshots up writes nothing."""

    def __init__(self, path: str | os.PathLike[str]):
        self._path = os.fspath(path)
        self._conn = connect(self._path, 30)
        self._lock = threading.Lock()

    def _has_table(self) -> bool:
        """Whether the snapshots table exists yet."""
        return self._conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'snapshots'"
                                  ).fetchone() is not None

    def save(self, snapshot: Snapshot) -> None:
        """Keep a snapshot (replacing one at the same seq)."""
        with self._lock, db_guard(self._path):
            self._conn.execute("CREATE TABLE IF NOT EXISTS snapshots (fight_id TEXT NOT NULL, seq INTEGER NOT NULL, "
                               "body BLOB NOT NULL, PRIMARY KEY (fight_id, seq))")
            self._conn.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?)",
                               (snapshot.fight_id, snapshot.seq, _encode(snapshot)))

    def latest(self, fight_id: str, at_most: int) -> Snapshot | None:
        """The snapshot with the highest seq not above ``at_most``."""
        with self._lock, db_guard(self._path):
            rows = self._conn.execute("SELECT body FROM snapshots WHERE fight_id = ? AND seq <= ? ORDER BY seq DESC "
                                      "LIMIT ?", (fight_id, at_most, MAX_TRIES)).fetchall() if self._has_table() \
                else []
        return _first_sound(_blob(body) for (body,) in rows)

    def seqs(self, fight_id: str) -> list[int]:
        """The seqs snapshots exist at, ascending."""
        with self._lock, db_guard(self._path):
            if not self._has_table():
                return []
            return [s for (s,) in self._conn.execute("SELECT seq FROM snapshots WHERE fight_id = ? ORDER BY seq",
                                                     (fight_id,))]

    def delete(self, fight_id: str) -> None:
        """Forget every snapshot of a fight."""
        with self._lock, db_guard(self._path):
            if self._has_table():
                self._conn.execute("DELETE FROM snapshots WHERE fight_id = ?", (fight_id,))

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()


class PostgresSnapshots:
    """Snapshots in the ``snapshots`` table of the store's database (a URL, or a :class:`PostgresDatabase` to
    share a pool)."""

    def __init__(self, url: str | PostgresDatabase, *, timeout: float = 5.0) -> None:
        self._owned = not isinstance(url, PostgresDatabase)
        self.db = url if isinstance(url, PostgresDatabase) else PostgresDatabase(url, timeout=timeout, max_size=2)

    def save(self, snapshot: Snapshot) -> None:
        """Keep a snapshot (replacing one at the same seq)."""
        with self.db.connection() as conn:
            conn.execute("INSERT INTO snapshots VALUES (%s, %s, %s) ON CONFLICT (fight_id, seq) DO UPDATE SET "
                         "body = EXCLUDED.body", (snapshot.fight_id, snapshot.seq, _encode(snapshot)))

    def latest(self, fight_id: str, at_most: int) -> Snapshot | None:
        """The snapshot with the highest seq not above ``at_most`` (one that does not decode: None)."""
        with self.db.connection() as conn:
            rows = conn.execute("SELECT body FROM snapshots WHERE fight_id = %s AND seq <= %s ORDER BY seq DESC "
                                "LIMIT %s", (fight_id, at_most, MAX_TRIES)).fetchall()
        return _first_sound(_blob(body) for (body,) in rows)

    def seqs(self, fight_id: str) -> list[int]:
        """The seqs snapshots exist at, ascending."""
        with self.db.connection() as conn:
            return [s for (s,) in conn.execute("SELECT seq FROM snapshots WHERE fight_id = %s ORDER BY seq",
                                               (fight_id,))]

    def delete(self, fight_id: str) -> None:
        """Forget every snapshot of a fight."""
        with self.db.connection() as conn:
            conn.execute("DELETE FROM snapshots WHERE fight_id = %s", (fight_id,))

    def close(self) -> None:
        """Close the pool, if this object opened it."""
        if self._owned:
            self.db.close()


def take(state: FightState) -> Snapshot:
    """A snapshot of ``state`` (the state after its last folded event)."""
    return Snapshot(fight_id=state.fight_id, seq=state.version, schema_version=SCHEMA_VERSION,
                    state_format=STATE_FORMAT, event_hash=state.last_hash, state=state)
