"""The EventStore protocol, and the batch checks every backend applies before it writes."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import _FIGHT_ID_WORDS, BadAppend, ConcurrencyError, InvalidFightId, StoreUnavailable
from ..events import GENESIS_HASH, StoredEvent

__all__ = ["EventStore", "FIGHT_ID", "ROWS_MISSING", "FIGHT_ID_WORDS", "check_fight_id", "check_batch", "not_regular",
           "os_guard", "PRIVATE", "create_private", "write_private", "set_private"]

#: A fight id, matched whole: ``$`` alone would also match before a final newline (``"dup\n"``), which the
#: lookahead refuses (ECMAScript reads the pattern the same way, for the JSON Schemas that carry it).
FIGHT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$(?!\n)")
#: :data:`FIGHT_ID` in words, for the errors that refuse an id.
FIGHT_ID_WORDS = _FIGHT_ID_WORDS


@runtime_checkable
class EventStore(Protocol):
    """Where a fight's sealed events live. Every backend passes the same contract suite.

    - ``append`` is atomic (all or nothing) and optimistic: it raises
      :class:`~omen_core.errors.ConcurrencyError` and writes nothing unless the
      fight is at ``expected_version`` (0 for a new fight). It returns the new
      version (the seq of the last event written).
    - ``read`` streams the events with ``seq > after_seq`` in order.
    - ``read_lines`` streams the same events as their stored lines (the
      bytes the hash chain covers), undecoded, in chunks: what the walk
      (:mod:`omen_core.walk`) reads. A torn tail or missing rows raise after
      the lines before them; each line's own checks are the reader's.
    - ``landmarks`` lists the fight's landmark events (undo and redo markers,
      the revealed seed: :data:`omen_core.events.LANDMARKS`) from an index
      kept at append time, so a reader knows them before reading the log.
    - ``version`` is the seq of the last stored event (0 if none).
    - ``fights`` lists the stored fight ids.
    - ``location`` says where the store keeps its fights, for messages.
    """

    @property
    def location(self) -> str: ...

    def append(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int) -> int: ...

    def read(self, fight_id: str, after_seq: int = 0) -> Iterator[StoredEvent]: ...

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Iterator[list[bytes]]: ...

    def landmarks(self, fight_id: str) -> list[StoredEvent]: ...

    def version(self, fight_id: str) -> int: ...

    def fights(self) -> list[str]: ...


def check_fight_id(fight_id: str) -> str:
    """Fight ids double as file names, so they are restricted to ``[A-Za-z0-9._-]``: :class:`InvalidFightId`
    (bad input, nothing written) otherwise."""
    if not isinstance(fight_id, str) or not FIGHT_ID.fullmatch(fight_id):
        raise InvalidFightId(fight_id)
    return fight_id


def check_batch(fight_id: str, events: Sequence[StoredEvent], expected_version: int,
                actual_version: int, last_hash: str | None) -> None:
    """Refuse a batch that is stale (ConcurrencyError) or does not continue the stream (BadAppend).

    ``last_hash`` is the hash of the stored event at ``actual_version``
    (ignored for an empty fight, whose first event must link to the genesis hash).
    """
    if expected_version != actual_version:
        raise ConcurrencyError(fight_id, expected_version, actual_version)
    if not events:
        raise BadAppend(fight_id, "the batch is empty")
    prev = last_hash if actual_version else GENESIS_HASH
    for offset, ev in enumerate(events, 1):
        if ev.fight_id != fight_id:
            raise BadAppend(fight_id, f"event seq {ev.seq} belongs to fight {ev.fight_id!r}")
        if ev.seq != actual_version + offset:
            raise BadAppend(fight_id, f"event seq {ev.seq} where {actual_version + offset} was expected")
        if ev.prev_hash != prev:
            raise BadAppend(fight_id, f"event seq {ev.seq} does not link to the hash of the "
                                      f"event before it")
        prev = ev.hash


def not_regular(mode: int, what: str) -> str:
    """What a path of ``mode`` that is not a regular file is, in words, for the error that refuses it as ``what``
    (``a log``, ``a database``)."""
    if stat.S_ISDIR(mode):
        return f"is a directory, not {what} file"
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
    return f"not a regular file ({kind}): {what} is a regular file"


PRIVATE = 0o600
"""The mode of every file a store creates (logs, their indexes, databases, snapshots) and of the server's keep:
its owner's alone. A fight's log holds what only the GM may see (the sheets, hidden combatants), the keep its
seeds and notes."""


def create_private(path: str | Path) -> bool:
    """Create ``path`` empty with mode :data:`PRIVATE` whatever the umask (which can only take bits away, so the
    mode is set again on the open file), unless it exists; whether this call made it. A file that exists keeps
    its mode: the operator may have chosen it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
    except FileExistsError:
        return False
    try:
        set_private(fd)
    finally:
        os.close(fd)
    return True


def set_private(fd: int) -> None:
    """Set an open file's mode to :data:`PRIVATE` (where Python can: not on Windows before Python 3.13, where the
    file's ACLs, inherited from its folder, decide who reads it)."""
    if hasattr(os, "fchmod"):
        os.fchmod(fd, PRIVATE)


def write_private(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (replacing what it held) with mode :data:`PRIVATE`, whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE)
    try:
        set_private(fd)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


@contextlib.contextmanager
def os_guard(path: str | Path) -> Iterator[None]:
    """Raise an operating system's error as :class:`StoreUnavailable` naming the path, its words kept (``Is a
    directory``): the store API raises only omen's errors."""
    try:
        yield
    except OSError as exc:
        raise StoreUnavailable(exc.filename or path, exc.strerror or str(exc)) from exc


#: What a gap in a database fight's rows means, and the way out (a database store appends each command in one
#: transaction, so no crash leaves one).
ROWS_MISSING = ("rows missing: removed or edited outside omen, not by a crash; copy the whole commands before the "
                "gap to another store (omen copy SRC DST --fight ID --to SEQ, SEQ the last seq of a command before "
                "it) or restore this store from a backup")
