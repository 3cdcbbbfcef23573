"""JSON Lines event store: one sealed event per line, appended under a file lock and fsynced."""

from __future__ import annotations

import bisect
import contextlib
import io
import os
import re
import shlex
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NoReturn, TypeVar

import msgspec
import portalocker

from ..errors import BadAppend, LogCorrupted, StoreUnavailable, TornTail, UnknownFight, expect
from ..events import LANDMARKS, StoredEvent, decode_line, lines_of
from ..logs import get_logger
from .base import (
    FIGHT_ID,
    FIGHT_ID_WORDS,
    PRIVATE,
    check_batch,
    check_fight_id,
    create_private,
    not_regular,
    set_private,
)
from .base import os_guard as _guard

log = get_logger(__name__)

__all__ = ["JsonlStore", "Repaired", "MAX_LINE_BYTES", "removes_whole"]

#: The longest line a log may hold, newline included (an event is a few hundred bytes). A longer line is
#: corruption: it is refused as :class:`LogCorrupted` once this many bytes of it are seen, never read whole.
MAX_LINE_BYTES = 16 << 20

_BLOCK = 8192
_T = TypeVar("_T")
_DECODE = decode_line


class _Head(msgspec.Struct):
    """Just the fight id of a line (every other field is ignored)."""

    fight_id: str


class _Position(msgspec.Struct):
    """Just where a line stands: its fight, seq and hash (every other field is ignored)."""

    fight_id: str
    seq: int
    hash: str


_DECODE_HEAD = msgspec.json.Decoder(_Head).decode
_DECODE_POSITION = msgspec.json.Decoder(_Position).decode


class _Batch(msgspec.Struct):
    """Just where a line stands in its batch (every other field is ignored)."""

    fight_id: str
    seq: int
    batch: int
    batch_size: int = 0
    prev_hash: str = ""
    hash: str = ""


_DECODE_BATCH = msgspec.json.Decoder(_Batch).decode


@dataclass(frozen=True)
class Repaired:
    """What :meth:`JsonlStore.repair_log` removed (or, asked for a ``dry_run``, would remove): ``side`` is the side
    file holding the removed bytes (None if the log needed no repair, or nothing was written), ``torn_bytes`` the
    length of a torn last line, ``batch`` the seq of a torn final batch whose ``events`` complete lines (of its
    ``batch_size``) went with it (0 if none), ``empty_lines`` how many empty lines (or of white space only) after
    the last complete line went, and ``line`` the number of the first line removed (0: none)."""

    side: Path | None
    torn_bytes: int = 0
    batch: int = 0
    events: int = 0
    batch_size: int = 0
    empty_lines: int = 0
    line: int = 0


class _Tail(msgspec.Struct, frozen=True):
    """The end of a log file: its size, last complete line and any torn bytes after it."""

    size: int
    last_line: bytes | None
    torn: bytes


class JsonlStore:
    """Event store on JSON Lines files, the line bytes being exactly ``encode_line(ev) + b"\\n"``.

    ``JsonlStore(directory)`` keeps one file per fight, ``directory/<fight_id>.jsonl``;
    :meth:`single` keeps exactly one fight in one file. Appends take an
    exclusive ``flock`` on the log file itself (readers a shared one), write
    the whole batch with one write and fsync it; a failed write is truncated
    away. Reading never creates or changes a file; the writer keeps two caches
    beside the log: ``<file>.idx`` (byte offsets every 1,024 lines) and
    ``<file>.marks`` (the landmark index). A last line
    without its newline (a crash mid-write) is a :class:`TornTail`: reads
    yield the intact events and then raise it, appends refuse to run until
    :meth:`repair` has moved the torn bytes to a side file.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        """A store keeping one ``<fight_id>.jsonl`` file per fight in ``directory``."""
        self._dir: Path | None = Path(_no_nul(directory, "directory"))
        self._file: Path | None = None
        self._indexes = _OffsetIndexes()

    @classmethod
    def single(cls, path: str | os.PathLike[str]) -> JsonlStore:
        """A store on exactly one file holding one fight (the fight id of its first line)."""
        store = cls.__new__(cls)
        store._dir, store._file = None, Path(_no_nul(path, "path"))
        store._indexes = _OffsetIndexes()
        return store

    def __repr__(self) -> str:
        if self._file is not None:
            return f"JsonlStore.single({str(self._file)!r})"
        return f"JsonlStore({str(self._dir)!r})"

    @property
    def location(self) -> str:
        """Where this store keeps its fights: the file, or the directory."""
        return self._where()

    @property
    def single_file(self) -> bool:
        """Whether this store is one file keeping exactly one fight (:meth:`single`), not a directory of them."""
        return self._file is not None

    def location_of(self, fight_id: str) -> str:
        """Where this store keeps ``fight_id``, for messages: its file (``DIR/<fight>.jsonl``, or the one file)."""
        if self._file is not None or not FIGHT_ID.match(fight_id):
            return self._where()
        assert self._dir is not None
        return str(self._dir / f"{fight_id}.jsonl")

    # -- the EventStore protocol ------------------------------------------------------

    def append(self, fight_id: str, events: Sequence[StoredEvent], expected_version: int) -> int:
        """Append ``events`` if the fight is at ``expected_version``; return the new version."""
        check_fight_id(fight_id)
        path = self._path(fight_id)
        lines = [line + b"\n" for line in lines_of(events)]
        _check_lengths(fight_id, events, lines)
        with _guard(path):
            if not _regular(path):  # a batch that cannot start a fight leaves no empty file behind
                check_batch(fight_id, events, expected_version, 0, None)
            if path.parent.exists() and not path.parent.is_dir():  # a directory store named over a file
                raise StoreUnavailable(path.parent, "a file, not a directory: a log named with a trailing '/' is a "
                                                    "directory of fight logs")
            path.parent.mkdir(parents=True, exist_ok=True)
            create_private(path)  # 0600 (a log holds what only the GM may see); one that exists keeps its mode
            return self._append_locked(path, fight_id, events, lines, expected_version)

    def _append_locked(self, path: Path, fight_id: str, events: Sequence[StoredEvent], lines: list[bytes],
                       expected_version: int) -> int:
        """The append itself (``lines`` are the events' lines), under the exclusive lock on ``path``."""
        with _locked(path, shared=False, create=True):
            tail = _read_tail(path)
            self._refuse_torn(path, tail, fight_id)
            self._check_owner(path, fight_id)
            version, last_hash = self._last_state(path, fight_id, tail)
            check_batch(fight_id, events, expected_version, version, last_hash)
            if version >= _INDEX_EVERY and not path.with_name(path.name + ".idx").exists():
                _build_index(path, tail.size)  # a log written elsewhere, or an index lost: the writer makes it
            _write_all(path, b"".join(lines))
            _index(path, version + 1, tail.size, lines)
            _Marks(path).update(events, tail.size, lines)
        return version + len(events)

    def read(self, fight_id: str, after_seq: int = 0) -> Iterator[StoredEvent]:
        """Stream the fight's events with ``seq > after_seq``.

        Raises :class:`UnknownFight` at once if the fight is not stored; while
        streaming, :class:`LogCorrupted` at a line that is not a sound next
        event and :class:`TornTail` after the last intact event of a torn file.
        Only the bytes present when ``read`` was called are read.
        """
        path = self._existing(fight_id)
        with _guard(path):
            with _locked(path, shared=True):
                size = path.stat().st_size
            line, offset = _seek_point(path, fight_id, after_seq, size, self._indexes)
        return _guarded(path, _stream(path, fight_id, after_seq, size, line, offset))

    def read_lines(self, fight_id: str, after_seq: int = 0) -> Iterator[list[bytes]]:
        """The fight's lines as stored (newline included) with ``seq > after_seq`` (line N holds seq N), in order,
        in lists of about ``_CHUNK`` bytes, undecoded: what the walk (:mod:`omen_core.walk`) reads.

        As :meth:`read`: :class:`UnknownFight` at once, only the bytes present
        when called are read, and :class:`TornTail` is raised after the last
        intact line of a torn file. Each line's own checks (that it decodes, is
        the next seq, of this fight) are the reader's.
        """
        path = self._existing(fight_id)
        with _guard(path):
            with _locked(path, shared=True):
                size = path.stat().st_size
            line, offset = _seek_point(path, fight_id, after_seq, size, self._indexes)
        return _guarded(path, _chunks(path, size, offset, max(after_seq - line + 1, 0), line - 1, fight_id))

    def landmarks(self, fight_id: str) -> list[StoredEvent]:
        """The fight's landmark events (undo and redo markers, the revealed seed), from the ``<log>.marks`` index
        kept at append time; a log without a sound index is scanned instead (nothing is written: reading
        creates no file). Lines that do not decode are left to the reader, which reports them."""
        path = self._existing(fight_id)
        with _guard(path):
            with _locked(path, shared=True):
                size = path.stat().st_size
            return _Marks(path).landmarks(size)

    def raw_lines(self, fight_id: str) -> Iterator[bytes]:
        """Every line of the fight's file exactly as stored (newline included; a torn last line has none)."""
        path = self._existing(fight_id)

        def lines() -> Iterator[bytes]:
            with open(path, "rb") as f:
                for chunk in _split(path, f, os.fstat(f.fileno()).st_size, 0):
                    yield from chunk

        return _guarded(path, lines())

    def version(self, fight_id: str) -> int:
        """The seq of the fight's last event, 0 if it has none; :class:`TornTail` on a torn file."""
        return self.head(fight_id)[0]

    def head(self, fight_id: str) -> tuple[int, str | None]:
        """The seq and hash of the fight's last event ((0, None) if it has none), from its last line alone:
        whether a fight held in memory is still the one stored (a log of the same length, another fight's)."""
        if not self._known(fight_id):
            return 0, None
        path = self._path(fight_id)
        with _guard(path):
            with _locked(path, shared=True):
                tail = _read_tail(path)
            self._refuse_torn(path, tail, fight_id)
            return self._last_state(path, fight_id, tail)

    def fights(self) -> list[str]:
        """The stored fight ids, sorted (at most one in single-file mode)."""
        if self._file is not None:
            with _guard(self._file):
                owner = _owner(self._file)
            return [] if owner is None else [owner]
        assert self._dir is not None
        with _guard(self._dir):
            if not self._dir.is_dir():
                return []
            return sorted(p.stem for p in self._dir.glob("*.jsonl")
                          if FIGHT_ID.match(p.stem) and p.is_file() and p.stat().st_size)

    # -- repair -------------------------------------------------------------------------

    def repair(self, fight_id: str) -> Path | None:
        """Remove what a crash mid-append left (:meth:`repair_log`); return the side file, or None if nothing was
        torn."""
        return self.repair_log(fight_id).side

    def repair_log(self, fight_id: str, *, dry_run: bool = False) -> Repaired:
        """Move a torn final batch to ``<file>.torn-<N>`` and cut the log back to the end of the batch before it.

        What a crash mid-append can leave is removed whole: a torn last line
        (no newline), and the complete lines of a final batch that holds fewer
        events than its ``batch_size`` says (only the last batch can be torn:
        appends are sequential); and so are empty lines (or of white space only) at the very end, after
        the last complete line (an ``echo >> LOG``, an editor's: no crash's,
        but harmless, and refused by every reader). The side file is fsynced
        before the log is truncated, so the removed bytes are never lost.
        ``dry_run``: say what would be removed, and write nothing.
        """
        path = self._path(fight_id) if FIGHT_ID.match(fight_id) else None
        with _guard(path or self._where()):
            if path is None or not _regular(path):
                raise UnknownFight(fight_id, self._where())
            with _locked(path, shared=not dry_run):
                self._check_repair_owner(path, fight_id)
                size = path.stat().st_size
                end = _before_empty_lines(path, size)
                empty = _lines_in(path, end, size)
                tail = _read_tail(path, end)
                if tail.torn and not crash_left(tail.torn):
                    line = 1 if tail.last_line is None else _count_lines(path, end - len(tail.torn)) + 1
                    raise _torn_tail(path, line, tail.torn, fight_id, tail.last_line)
                cut, batch = _torn_batch(path, fight_id, tail)
                if cut == size:
                    return Repaired(None)
                line = _count_lines(path, cut) + 1
                side = None if dry_run else _save_side_file(path, _read_range(path, cut, size))
                if not dry_run:
                    _truncate(path, cut)
        events = 0 if batch is None else batch.seq - batch.batch + 1
        return Repaired(side, len(tail.torn), batch.batch if batch else 0, events, batch.batch_size if batch else 0,
                        empty, line)

    # -- helpers ------------------------------------------------------------------------

    def _path(self, fight_id: str) -> Path:
        """The file that holds (or would hold) ``fight_id``: in a directory store, one inside the directory (a
        ``<fight>.jsonl`` that is a symbolic link leading out of it is :class:`StoreUnavailable`: no command reads
        or writes outside the store's directory through it)."""
        if self._file is not None:
            return self._file
        assert self._dir is not None
        path = self._dir / f"{fight_id}.jsonl"
        with _guard(path):
            if path.is_symlink() and os.path.dirname(os.path.realpath(path)) != os.path.realpath(self._dir):
                raise StoreUnavailable(path, f"is a symbolic link to {os.path.realpath(path)}, outside the store's "
                                             f"directory {self._dir}: omen does not follow it")
        return path

    def _where(self) -> str:
        """Where this store keeps its fights, for error messages."""
        return str(self._file if self._file is not None else self._dir)

    def _known(self, fight_id: str) -> bool:
        """Whether a non-empty file holds ``fight_id`` (single mode: it is the first line's fight)."""
        if not FIGHT_ID.match(fight_id):
            return False
        if self._file is not None:
            with _guard(self._file):
                return _owner(self._file) == fight_id
        path = self._path(fight_id)
        with _guard(path):
            return _regular(path) and path.stat().st_size > 0

    def _existing(self, fight_id: str) -> Path:
        """The file of a stored fight, or :class:`UnknownFight`."""
        if not self._known(fight_id):
            raise UnknownFight(fight_id, self._where())
        return self._path(fight_id)

    def _check_owner(self, path: Path, fight_id: str) -> None:
        """In single-file mode, refuse a fight other than the one the file already holds."""
        if self._file is None:
            return
        owner = _owner(path)
        if owner is not None and owner != fight_id:
            raise BadAppend(fight_id, f"{path} already holds fight {owner!r} "
                                      "(a single-file store keeps exactly one fight)")

    def _check_repair_owner(self, path: Path, fight_id: str) -> None:
        """In single-file mode, only the file's own fight (or an unknown one, if line 1 is torn) is repaired."""
        if self._file is None:
            return
        with contextlib.suppress(TornTail):
            owner = _owner(path)
            if owner is not None and owner != fight_id:
                raise UnknownFight(fight_id, self._where())

    @staticmethod
    def _refuse_torn(path: Path, tail: _Tail, fight_id: str) -> None:
        """Raise :class:`TornTail` if the file ends in a torn line."""
        if tail.torn:
            line = 1 if tail.last_line is None else _seq_hint(tail.last_line) + 1
            raise _torn_tail(path, line, tail.torn, fight_id, tail.last_line)

    @staticmethod
    def _last_state(path: Path, fight_id: str, tail: _Tail) -> tuple[int, str | None]:
        """The fight's version and last hash, from its last complete line alone."""
        if tail.last_line is None:
            return 0, None
        try:
            last = _DECODE_POSITION(tail.last_line)
        except msgspec.DecodeError as exc:
            _raise_first_corruption(path, fight_id, f"the last line does not decode: {exc}")
        if last.fight_id != fight_id:
            _raise_first_corruption(path, fight_id, f"the last line belongs to fight {last.fight_id!r}")
        return last.seq, last.hash


# -- reading ------------------------------------------------------------------------------


def _stream(path: Path, fight_id: str, after_seq: int, limit: int, first_line: int = 1,
            offset: int = 0) -> Iterator[StoredEvent]:
    """Decode the first ``limit`` bytes of ``path`` line by line (from ``offset``, where line ``first_line``
    starts), checking seq and fight only."""
    if limit <= 0:
        return
    decode = _DECODE
    prev = line_no = first_line - 1
    for lines in _chunks(path, limit, offset, 0, first_line - 1, fight_id):
        for raw in lines:
            line_no += 1
            if line_no <= after_seq:
                prev = line_no  # line N holds seq N: skipped lines are not decoded (verify reads them all)
                continue
            if len(raw) <= 1:
                raise LogCorrupted(path, line_no, "empty line")
            try:
                ev = decode(raw)
            except msgspec.DecodeError as exc:
                what = "a line of white space only" if not raw.strip(_WHITE) else f"not a valid stored event: {exc}"
                raise LogCorrupted(path, line_no, what) from None
            if ev.seq != prev + 1:
                raise LogCorrupted(path, line_no, f"seq {ev.seq} where {prev + 1} was expected "
                                                  "(events missing, repeated or out of order)")
            if ev.fight_id != fight_id:
                raise LogCorrupted(path, line_no, f"event of fight {ev.fight_id!r} in the log of "
                                                  f"fight {fight_id!r}")
            prev = ev.seq
            yield ev


_CHUNK = 1 << 16  # bytes of lines per list; the file is read through a buffer of twice that


def _chunks(path: Path, limit: int, offset: int = 0, skip: int = 0, lines_before: int = 0, fight_id: str | None = None
            ) -> Iterator[list[bytes]]:
    """The lines in the first ``limit`` bytes of ``path`` from ``offset`` (where line ``lines_before + 1``
    starts), the first ``skip`` of them left out, in lists; :class:`TornTail` after them if the last has no
    newline (naming the command of ``fight_id`` it cuts short)."""
    lines_read, last = lines_before, None
    with open(path, "rb", buffering=0) as f:
        f.seek(offset)
        for block in _split(path, f, limit - offset, lines_before):
            lines_read += len(block)
            torn = block.pop() if not block[-1].endswith(b"\n") else None
            last = block[-1] if block else last
            lines, skip = block[skip:], max(skip - len(block), 0)
            if lines:
                yield lines
            if torn is not None:
                raise _torn_tail(path, lines_read, torn, fight_id, last)


#: How every line omen writes begins: a torn last line a crash left is a beginning of it, or begins so.
_EVENT_START = b'{"fight_id":"'


def crash_left(torn: bytes) -> bool:
    """Whether a last line without its newline can be what a crash mid-write left: the start of an event line
    (any part of it, however short); anything else (text, NUL bytes, another format) is no crash's doing."""
    return torn.startswith(_EVENT_START) or _EVENT_START.startswith(torn)


def _torn_tail(path: Path, line: int, torn: bytes, fight_id: str | None, last_line: bytes | None) -> LogCorrupted:
    """:class:`TornTail` at ``line`` of ``path``, its message going on to say which command of which fight the crash
    cut short (as far as the last complete line, ``last_line``, tells) and what to do: ``omen repair PATH``. Its
    ``reason`` stays the torn tail's own words (the audit's finding, the same for a file and for lines given). A last
    line that no crash leaves (:func:`crash_left`) is :class:`LogCorrupted` saying so instead, pointing at nothing
    that would remove it (repair refuses it: it emptied a file of text, found by a tester)."""
    if not crash_left(torn):
        told = "is this an omen log?" if line == 1 else "the log was edited or damaged"
        return LogCorrupted(path, line, f"the last line ({len(torn)} bytes) has no newline and is not the start of "
                                        f"an event line (each begins {_EVENT_START.decode()}): no crash leaves that, "
                                        f"so omen repair does not remove it ({told})")
    exc = TornTail(path, line, torn)
    exc.args = (f"{exc}; {_cut_short(line, fight_id, last_line)}: run omen repair {shlex.quote(str(path))} (it "
                "moves what the crash left to a side file)",)
    return exc


def _cut_short(line: int, fight_id: str | None, last_line: bytes | None) -> str:
    """What a torn line at ``line`` cuts short: the command it belongs to (the one the last complete line is part
    of, if that one holds fewer events than its ``batch_size``; else a command starting at the torn line), of
    which fight; a seq alone where the lines do not tell (an older log, whose lines say no ``batch_size``)."""
    try:
        last = _DECODE_BATCH(last_line) if last_line is not None else None
    except msgspec.DecodeError:
        last = None
    fight = fight_id or (last.fight_id if last is not None else None)
    of = f" of fight {fight!r}" if fight else ""
    if last is None or not last.batch_size:
        return f"seq {line}{of} is cut short" if last is not None or line > 1 else \
            f"the command starting at seq 1{of} is cut short"
    start = last.batch if last.batch <= last.seq < last.batch + last.batch_size - 1 else last.seq + 1
    return f"the command starting at seq {start}{of} is cut short"


def _split(path: Path, f: BinaryIO, size: int, lines_before: int) -> Iterator[list[bytes]]:
    """The lines in the next ``size`` bytes of ``f`` (line ``lines_before + 1`` first), newline included, in lists
    of about ``_CHUNK`` bytes; only the very last line may lack its newline (a torn line, then a list of its own).

    A line longer than :data:`MAX_LINE_BYTES` is :class:`LogCorrupted` as soon as that many of its bytes are seen:
    the parts of a line that runs across blocks are kept in a list and joined once, so a long line costs one pass.
    """
    parts: list[bytes] = []  # the start of a line that runs on past the blocks read so far
    pending, line_no = 0, lines_before
    while size > 0:
        block = f.read(min(_CHUNK, size))
        if not block:
            break
        size -= len(block)
        cut = block.rfind(b"\n") + 1
        if not cut:
            parts.append(block)
            pending += len(block)
            if pending > MAX_LINE_BYTES:
                raise _too_long(path, line_no + 1)
            continue
        lines = io.BytesIO(block[:cut]).readlines()
        if parts:
            lines[0] = b"".join([*parts, lines[0]])
        if max(map(len, lines)) > MAX_LINE_BYTES:  # the lines before it first, as for any bad line
            long = next(i for i, line in enumerate(lines) if len(line) > MAX_LINE_BYTES)
            if long:
                yield lines[:long]
            raise _too_long(path, line_no + 1 + long)
        line_no += len(lines)
        parts, pending = ([block[cut:]], len(block) - cut) if cut < len(block) else ([], 0)
        yield lines
        if pending > MAX_LINE_BYTES:
            raise _too_long(path, line_no + 1)
    if parts:
        yield [b"".join(parts)]


def _too_long(path: Path, line: int) -> LogCorrupted:
    """The error for a line longer than any event can be."""
    return LogCorrupted(path, line, f"the line is longer than {MAX_LINE_BYTES} bytes, the most a log line may be "
                                    "(not a log, or a damaged one)")


#: Every this many events, the byte offset of a line is noted in ``<log>.idx`` (a cache) so that reading
#: from a late seq (state from a snapshot, undo) need not scan the whole file.
_INDEX_EVERY = 1024


def _index(path: Path, first_seq: int, offset: int, lines: list[bytes]) -> None:
    """Note the offsets of the appended lines whose seq is 1 past a multiple of ``_INDEX_EVERY``."""
    notes = []
    for i, line in enumerate(lines):
        if (first_seq + i) % _INDEX_EVERY == 1 and first_seq + i > 1:
            notes.append(f"{first_seq + i} {offset}\n")
        offset += len(line)
    if notes:
        with contextlib.suppress(OSError), _side_file(path.with_name(path.name + ".idx"), os.O_APPEND) as f:
            f.write("".join(notes).encode())


def _build_index(path: Path, size: int) -> None:
    """Write the offset index of a whole file in one pass over its lines (no decoding)."""
    notes, offset, seq = [], 0, 0
    with open(path, "rb") as f:
        for lines in _split(path, f, size, 0):
            for raw in lines:
                seq += 1
                if seq % _INDEX_EVERY == 1 and seq > 1:
                    notes.append(f"{seq} {offset}\n")
                offset += len(raw)
    with contextlib.suppress(OSError), _side_file(path.with_name(path.name + ".idx"), os.O_TRUNC) as f:
        f.write("".join(notes).encode())


class _OffsetIndexes:
    """The offset indexes a store has parsed, by path: the (seq, offset) rows of each, parsed once per version of
    the file (a long fight's index has a row per 1,024 events, and every read from a late seq consults it). Owned
    by one store (no module-level cache); at most ``kept`` files, emptied when full."""

    def __init__(self, kept: int = 64) -> None:
        self.kept = kept
        self._parsed: dict[Path, tuple[tuple[int, int], list[tuple[int, int]]]] = {}

    def points(self, index: Path) -> list[tuple[int, int]]:
        """The sorted (seq, offset) rows of the offset index ``index`` (none if it is missing or not a file)."""
        try:
            st = index.lstat()
        except OSError:
            return []
        key = (st.st_mtime_ns, st.st_size)
        parsed = self._parsed.get(index)
        if parsed is not None and parsed[0] == key:
            return parsed[1]
        text = _side_text(index)
        if text is None:
            return []
        points = sorted((int(parts[0]), int(parts[1])) for parts in map(str.split, text.splitlines())
                        if len(parts) == 2 and _digits(parts[0]) and _digits(parts[1]))
        if len(self._parsed) >= self.kept:
            self._parsed.clear()
        self._parsed[index] = (key, points)
        return points


def _seek_point(path: Path, fight_id: str, after_seq: int, size: int, indexes: _OffsetIndexes) -> tuple[int, int]:
    """(line, byte offset) to start reading at for ``seq > after_seq``: an indexed line at or before it whose
    bytes still start as that seq's line should, else the start of the file. The index is only a cache."""
    if after_seq < _INDEX_EVERY:
        return 1, 0
    points = indexes.points(path.with_name(path.name + ".idx"))
    at = bisect.bisect_right(points, (after_seq + 1, size)) - 1
    while at >= 0 and points[at][1] >= size:
        at -= 1
    if at < 0:
        return 1, 0
    seq, offset = points[at]
    expected = f'{{"fight_id":{msgspec.json.encode(fight_id).decode()},"seq":{seq},'.encode()
    with open(path, "rb") as f:
        f.seek(offset)
        if f.read(len(expected)) != expected:
            return 1, 0
    return seq, offset


def _raise_first_corruption(path: Path, fight_id: str, fallback: str) -> NoReturn:
    """Scan the whole file to report the first bad line with its number (error path only)."""
    for _ in _stream(path, fight_id, 0, path.stat().st_size):
        pass
    raise LogCorrupted(path, 0, fallback)


def _before_empty_lines(path: Path, size: int) -> int:
    """Where the empty lines at the end of ``path`` (its first ``size`` bytes) start, lines of white space only
    counted as empty: after the newline that ends its last line holding anything else (``size`` if none ends it; 0
    if the file is nothing but white space)."""
    pos = size
    with open(path, "rb") as f:
        while pos > 0:
            step = min(_BLOCK, pos)
            f.seek(pos - step)
            block = f.read(step).rstrip(_WHITE)
            if block:
                content_end = pos - step + len(block)
                f.seek(content_end)
                newline = f.read(size - content_end).find(b"\n")  # (white space only: the lines removed)
                return size if newline < 0 else content_end + newline + 1
            pos -= step
    return 0


def _lines_in(path: Path, start: int, end: int) -> int:
    """How many lines bytes ``start`` to ``end`` of ``path`` hold (the empty lines at its end: a last one without
    its newline counted too)."""
    if end <= start:
        return 0
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return data.count(b"\n") + (not data.endswith(b"\n"))


#: JSON's white space: a line of nothing else holds no event.
_WHITE = b" \t\r\n"


def _read_tail(path: Path, end: int | None = None) -> _Tail:
    """Read backwards from the end (or from byte ``end``, as if the file ended there) in blocks until the last
    complete line is found (each block read once, each searched once); a last line, or torn bytes after it, longer
    than :data:`MAX_LINE_BYTES` is :class:`LogCorrupted`."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by the with below; a missing file is told apart first
    except FileNotFoundError:
        return _Tail(0, None, b"")
    with f:
        size = pos = f.seek(0, os.SEEK_END) if end is None else end
        blocks: list[bytes] = []  # the blocks read, last first
        newlines: list[int] = []  # the offsets of the file's last two newlines, last first
        while pos > 0 and len(newlines) < 2:
            step = min(_BLOCK, pos)
            pos -= step
            f.seek(pos)
            block = f.read(step)
            blocks.append(block)
            end = len(block)
            while len(newlines) < 2 and (at := block.rfind(b"\n", 0, end)) != -1:
                newlines.append(pos + at)
                end = at
            if len(newlines) < 2 and (newlines[0] if newlines else size) - pos > MAX_LINE_BYTES:
                raise _too_long(path, _line_number(f, pos))
    data = b"".join(reversed(blocks))
    if not newlines:
        return _Tail(size, None, data)
    first = newlines[1] + 1 - pos if len(newlines) == 2 else 0
    return _Tail(size, data[first:newlines[0] + 1 - pos], data[newlines[0] + 1 - pos:])


def _line_number(f: BinaryIO, offset: int) -> int:
    """The number of the line that holds byte ``offset`` of ``f`` (error path only: one pass over the bytes before
    it)."""
    f.seek(0)
    count, left = 0, offset
    while left > 0:
        block = f.read(min(_SCAN_BLOCK, left))
        if not block:
            break
        count += block.count(b"\n")
        left -= len(block)
    return count + 1


def _seq_hint(line: bytes) -> int:
    """The seq of a complete line, 0 if it does not decode (only used to number a torn line)."""
    try:
        return _DECODE_POSITION(line).seq
    except msgspec.DecodeError:
        return 0


def _owner(path: Path) -> str | None:
    """The fight id of the file's first line; None if the file is missing or empty."""
    if not _regular(path):
        return None
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by the with below; a missing file is told apart first
    except FileNotFoundError:
        return None
    with f:
        first = f.readline(MAX_LINE_BYTES + 1)
    if not first:
        return None
    if len(first) > MAX_LINE_BYTES:
        raise _too_long(path, 1)
    if not first.endswith(b"\n"):
        raise _torn_tail(path, 1, first, None, None)
    try:
        fight_id = _DECODE_HEAD(first).fight_id
    except msgspec.DecodeError as exc:
        raise LogCorrupted(path, 1, f"the first line does not name a fight: {exc}") from None
    if not FIGHT_ID.match(fight_id):
        raise LogCorrupted(path, 1, f"the first line names fight {fight_id!r}, which is not a fight id "
                                    f"({FIGHT_ID_WORDS})")
    return fight_id


# -- the landmark index -------------------------------------------------------------------------

_LANDMARK_TAGS = tuple(f'"type":"{kind.__struct_config__.tag}"'.encode() for kind in LANDMARKS)
_LANDMARK_RE = re.compile(b"|".join(re.escape(tag) for tag in _LANDMARK_TAGS))
_SCAN_BLOCK = 1 << 20


class _Marks:
    """``<log>.marks``, the landmark index: a fixed-width first line saying what it covers (``C <seq> <size>
    <hash>``: the log's last seq, its byte size and its last hash then), rewritten in place after each append,
    then a line per landmark (``L <seq> <offset>``). A cache, checked against the log before it is trusted:
    lines after what it covers are scanned, and a writer rebuilds an index that does not fit."""

    _HEADER = "C {:020d} {:020d} {}\n"
    _WIDTH = len(_HEADER.format(0, 0, "0" * 64))

    def __init__(self, path: Path):
        self.log, self.path = path, path.with_name(path.name + ".marks")

    def _load(self) -> tuple[tuple[int, int, str] | None, list[tuple[int, int]]]:
        text = _side_text(self.path)
        if text is None:
            return None, []
        rows = text.splitlines()
        head = rows[0].split() if rows else []
        cover = None
        if len(head) == 4 and head[0] == "C" and _digits(head[1]) and _digits(head[2]):
            cover = (int(head[1]), int(head[2]), head[3])
        entries = []
        for row in rows[1:]:
            parts = row.split()
            if len(parts) == 3 and parts[0] == "L" and _digits(parts[1]) and _digits(parts[2]):
                entries.append((int(parts[1]), int(parts[2])))
        return cover, entries

    def _sound(self, cover: tuple[int, int, str] | None, size: int) -> bool:
        """Whether the log's line ending at the covered size is the covered event."""
        if cover is None or cover[1] > size or cover[1] == 0:
            return False
        line = _line_ending_at(self.log, cover[1])
        try:
            at = _DECODE_POSITION(line) if line else None
        except msgspec.DecodeError:
            return False
        return at is not None and (at.seq, at.hash) == (cover[0], cover[2])

    def landmarks(self, size: int) -> list[StoredEvent]:
        """The landmark events of the first ``size`` bytes of the log: from the index as far as it is sound, the
        rest scanned."""
        cover, entries = self._load()
        found: list[StoredEvent] = []
        start = 0
        if self._sound(cover, size):
            assert cover is not None
            with open(self.log, "rb") as f:
                for seq, offset in entries:
                    if seq > cover[0]:  # rows written after the header was: the scan from the cover finds them
                        start = cover[1]
                        break
                    f.seek(offset)
                    try:
                        rec = decode_line(f.readline(MAX_LINE_BYTES + 1))
                    except msgspec.DecodeError:
                        rec = None
                    if rec is None or rec.seq != seq or not isinstance(rec.event, LANDMARKS):  # the index lies
                        there = "no line" if rec is None else f"seq {rec.seq}, {type(rec.event).__name__}"
                        log.warning("landmark_index_stale", where=str(self.log), row=seq, offset=offset, found=there)
                        found, start = [], 0  # the log is scanned for its own: no result changes
                        break
                    found.append(rec)
                else:
                    start = cover[1]
        return found + list(self._scan(start, size)[0])

    def _scan(self, start: int, size: int) -> tuple[list[StoredEvent], list[tuple[int, int]], tuple[int, str] | None]:
        """The landmarks in the log's bytes from ``start`` to ``size``, their offsets, and the last line's
        (seq, hash): a byte search for the landmark tags over large blocks, each hit's line then decoded."""
        found, where = [], []
        with open(self.log, "rb") as f:
            f.seek(start)
            offset, carry = start, b""
            while offset < size:
                block = carry + f.read(min(_SCAN_BLOCK, size - offset))
                offset_block = offset - len(carry)
                offset += len(block) - len(carry)
                cut = block.rfind(b"\n") + 1
                body, carry = block[:cut], block[cut:]
                for hit in _LANDMARK_RE.finditer(body):
                    begin = body.rfind(b"\n", 0, hit.start()) + 1
                    end = body.find(b"\n", hit.end()) + 1
                    with contextlib.suppress(msgspec.DecodeError):
                        rec = decode_line(body[begin:end])
                        if isinstance(rec.event, LANDMARKS):
                            found.append(rec)
                            where.append((rec.seq, offset_block + begin))
                if not cut and len(block) >= _SCAN_BLOCK * 4:
                    break  # a line longer than any event: the reader reports it
        end_line = _line_ending_at(self.log, size - len(carry)) if size - len(carry) > start else b""
        position = None
        with contextlib.suppress(msgspec.DecodeError):
            if end_line:
                at = _DECODE_POSITION(end_line)
                position = (at.seq, at.hash)
        return found, where, position

    def update(self, events: Sequence[StoredEvent], offset: int, lines: list[bytes]) -> None:
        """After an append at byte ``offset`` (the log's size before it): note the batch's landmarks and what the
        index now covers; an index that did not cover the log up to ``offset`` is rebuilt first."""
        cover, _ = self._load()
        if not (cover is not None and cover[1] == offset and self._sound(cover, offset)):
            _, where, _ = self._scan(0, offset)
            body = "".join(f"L {seq} {at}\n" for seq, at in where)
            with contextlib.suppress(OSError), _side_file(self.path, os.O_TRUNC) as f:
                f.write((self._HEADER.format(0, 0, "0" * 64) + body).encode())
        rows = []
        for ev, line in zip(events, lines, strict=True):
            if isinstance(ev.event, LANDMARKS):
                rows.append(f"L {ev.seq} {offset}\n")
            offset += len(line)
        header = self._HEADER.format(events[-1].seq, offset, events[-1].hash).encode()
        with contextlib.suppress(OSError):
            with _side_file(self.path, os.O_APPEND) as f:
                f.write("".join(rows).encode())
            with _side_file(self.path, 0) as f:
                f.write(header)


def _digits(text: str) -> bool:
    """Whether ``text`` is ASCII digits (``str.isdigit`` also takes ``²`` and other digits ``int`` refuses)."""
    return text.isascii() and text.isdigit()


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _side_text(path: Path) -> str | None:
    """The text of a cache file beside a log (``.idx``, ``.marks``), if it is a regular file and not a symbolic
    link (opened without following one and without blocking: a FIFO never hangs), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read().decode("ascii")
    except (OSError, UnicodeError):
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def _side_file(path: Path, flags: int) -> Iterator[BinaryIO]:
    """A cache file beside a log, opened for writing (created if missing, 0600 whatever the umask: it indexes a log
    that holds what only the GM may see) without following a symbolic link: a link planted there is an error
    (``ELOOP``), never a write outside the log's folder; nor is a hard link written through (another name of a file
    elsewhere, found by a tester: the index overwrote it), which is checked before ``O_TRUNC`` would empty it."""
    made = not os.path.lexists(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | (flags & ~os.O_TRUNC),
                 PRIVATE)
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_nlink > 1:
        os.close(fd)
        raise OSError(f"{path} is not a regular file of its own")
    if flags & os.O_TRUNC:
        os.ftruncate(fd, 0)
    if made:
        set_private(fd)
    with os.fdopen(fd, "wb") as f:
        yield f


def _line_ending_at(path: Path, end: int) -> bytes:
    """The complete line of ``path`` that ends (newline included) at byte ``end``, or b"" if none does (or it is
    longer than :data:`MAX_LINE_BYTES`): read backwards in blocks, each read and searched once."""
    blocks: list[bytes] = []  # the blocks read, last first
    pos = end
    with open(path, "rb") as f:
        while pos > 0 and end - pos <= MAX_LINE_BYTES:
            step = min(_BLOCK, pos)
            pos -= step
            f.seek(pos)
            block = f.read(step)
            if not blocks and not block.endswith(b"\n"):
                return b""
            at = block.rfind(b"\n", 0, len(block) - 1 if not blocks else len(block))
            blocks.append(block[at + 1:])
            if at != -1:
                break
        else:
            if pos > 0:
                return b""
    line = b"".join(reversed(blocks))
    return line if len(line) <= MAX_LINE_BYTES else b""


# -- writing ------------------------------------------------------------------------------


@contextlib.contextmanager
def _locked(path: Path, *, shared: bool, create: bool = False) -> Iterator[None]:
    """Hold a lock on the log file itself (portalocker: ``flock`` on POSIX, ``LockFileEx`` on Windows): the real
    file, whatever symlink or hard link names it, so that two writers reaching one file by two names still take
    one lock. A reader of a file that does not exist yet locks nothing (and creates nothing); a writer creates
    the file only with ``create``."""
    flags = os.O_RDONLY if shared else os.O_RDWR | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, PRIVATE)
    except FileNotFoundError:
        if shared or not create:
            yield
            return
        raise
    try:
        portalocker.lock(fd, portalocker.LockFlags.SHARED if shared else portalocker.LockFlags.EXCLUSIVE)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _write_all(path: Path, data: bytes) -> None:
    """Append ``data`` with one write and fsync it; on any failure cut the file back and re-raise."""
    is_new = not path.exists()
    with open(path, "ab", buffering=0) as f:
        start = os.fstat(f.fileno()).st_size
        try:
            written = f.write(data)
            while written < len(data):  # a short write on a regular file is rare, not an error
                written += f.write(data[written:])
            f.flush()
            os.fsync(f.fileno())
        except BaseException:
            f.truncate(start)
            raise
    if is_new:
        _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    """Make a newly created file's directory entry durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save_side_file(path: Path, torn: bytes) -> Path:
    """Write ``torn`` to the first free ``<file>.torn-<N>`` and fsync it."""
    n = 1
    while True:
        side = path.with_name(f"{path.name}.torn-{n}")
        try:
            fd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
        except FileExistsError:
            n += 1
            continue
        try:
            os.write(fd, torn)
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(path.parent)
        return side


def _truncate(path: Path, size: int) -> None:
    """Cut ``path`` to ``size`` bytes and fsync it."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_range(path: Path, start: int, end: int) -> bytes:
    """The bytes of ``path`` from ``start`` to ``end``."""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


def _torn_batch(path: Path, fight_id: str, tail: _Tail) -> tuple[int, _Batch | None]:
    """Where what a crash left at the end of the log starts, and the torn final batch's last complete line if
    there is one: the log's complete lines run on from the batch's first (``batch``) to fewer than ``batch_size``
    events. A line of that run that does not belong to the batch is corruption, not a crash: repair refuses it."""
    end = tail.size - len(tail.torn)
    last = _cut_batch(tail.last_line)
    if last is None:
        return end, None
    run: list[bytes] = []

    def back() -> Iterator[bytes]:
        offset = end
        while True:
            line = _line_ending_at(path, offset) if offset > 0 else b""
            run.append(line)
            offset -= len(line)
            yield line

    stray = _stray(last, fight_id, back())
    if stray is not None:
        _not_torn(path, end, last, *stray)
    return end - sum(map(len, run[:last.seq - last.batch + 1])), last


def _cut_batch(last_line: bytes | None) -> _Batch | None:
    """The last complete line's place in its batch, if that batch holds fewer events than its ``batch_size`` (a
    batch cut short); None otherwise (a last line that does not decode is the reader's to report)."""
    try:
        last = _DECODE_BATCH(last_line) if last_line else None
    except msgspec.DecodeError:
        return None
    if last is None or not last.batch_size or not 0 < last.batch <= last.seq < last.batch + last.batch_size - 1:
        return None
    return last


def _stray(last: _Batch, fight_id: str, lines_back: Iterator[bytes]) -> tuple[int, str] | None:
    """The first line, going back from ``last`` (the complete lines from the last one back, ``lines_back``), of a
    batch cut short that does not belong to it: how many lines before the last it is, and what it is (``{before}``
    standing for the number of the line before it); None if every line from the batch's first does."""
    after = None
    for seq in range(last.seq, last.batch - 1, -1):
        line = next(lines_back, b"")
        try:
            at = _DECODE_BATCH(line) if line else None
        except msgspec.DecodeError:
            at = None
        if after is not None and at is not None and after.prev_hash != at.hash:
            return last.seq - seq - 1, ("does not follow line {before}, the line before it (its prev_hash is not that "
                                        "line's hash)")
        if at is None or (at.fight_id, at.seq, at.batch, at.batch_size) != (fight_id, seq, last.batch,
                                                                           last.batch_size):
            found = "not an event" if at is None else (f"seq {at.seq} of batch {at.batch} ({at.batch_size} events)"
                                                       + ("" if at.fight_id == fight_id else
                                                          f" of fight {at.fight_id!r}"))
            return last.seq - seq, f"is {found}, not that batch's seq {seq}"
        after = at
    return None


def removes_whole(lines: Sequence[bytes], fight_id: str) -> bool:
    """Whether repair (:meth:`JsonlStore.repair_log`) would remove the final batch of a log's complete ``lines``
    whole, were they a file: it is cut short, and every line from its first to the last (empty lines at the end
    aside) belongs to it. What the walk asks of lines held in memory (an audit's), to say whether ``omen repair``
    is the way out of a torn batch."""
    end = len(lines)
    while end and not lines[end - 1].rstrip(b"\n"):
        end -= 1
    last = _cut_batch(lines[end - 1]) if end else None
    return last is not None and _stray(last, fight_id, iter(lines[end - 1::-1])) is None


def _not_torn(path: Path, end: int, last: _Batch, back: int, what: str) -> NoReturn:
    """Refuse to repair a log whose last line says its batch is torn but whose line ``back`` lines before the last
    one (0: the last itself) does not belong there: LogCorrupted naming that line by its number in the file (the
    line where the chain breaks, as omen verify finds it: a line that does not link to the one before it is the
    one out of place)."""
    lines = _count_lines(path, end)
    who = "it" if back == 0 else f"line {lines - back}"
    what = what.replace("{before}", str(lines - back - 1))
    raise LogCorrupted(path, lines - back, f"the last line, line {lines}, is seq {last.seq} of a batch (seq "
                                           f"{last.batch}, {last.batch_size} events) cut short, but {who} "
                                           f"{what}: repair removes only a torn final batch; see omen verify")


def _count_lines(path: Path, end: int) -> int:
    """How many lines end within the first ``end`` bytes of ``path`` (read in blocks: a refusal's rare cost)."""
    count, pos = 0, 0
    with open(path, "rb") as f:
        while pos < end:
            block = f.read(min(_BLOCK, end - pos))
            if not block:
                break
            count, pos = count + block.count(b"\n"), pos + len(block)
    return count


def _check_lengths(fight_id: str, events: Sequence[StoredEvent], lines: list[bytes]) -> None:
    """Refuse a batch with a line longer than :data:`MAX_LINE_BYTES` (no reader would take it)."""
    for ev, line in zip(events, lines, strict=True):
        if len(line) > MAX_LINE_BYTES:
            raise BadAppend(fight_id, f"event seq {ev.seq} is {len(line)} bytes as a line, more than the "
                                      f"{MAX_LINE_BYTES} a log line may be")


# -- what the file system says ------------------------------------------------------------


def _no_nul(path: str | os.PathLike[str], parameter: str) -> str | os.PathLike[str]:
    """``path``, unless it holds a NUL byte (no file system has such a name): :class:`StoreUnavailable`; or it is
    no path at all (:class:`InvalidArgument` naming ``parameter``)."""
    expect(path, (str, os.PathLike), parameter, "a path (str or os.PathLike)")
    if "\x00" in os.fspath(path):
        raise StoreUnavailable(os.fspath(path), "a path cannot hold a NUL byte")
    return path


def _regular(path: Path) -> bool:
    """Whether ``path`` is a regular file (symlinks followed); False if nothing is there;
    :class:`StoreUnavailable` if something else is (a directory, a FIFO, a device), before anything opens it."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISREG(mode):
        return True
    raise StoreUnavailable(path, not_regular(mode, "a log"))


def _guarded(path: Path, items: Iterator[_T]) -> Iterator[_T]:
    """``items``, an operating system's error while they are read raised as :class:`StoreUnavailable`."""
    with _guard(path):
        yield from items
