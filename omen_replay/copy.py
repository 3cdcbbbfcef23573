"""Copy fights from one store to another (``omen copy SRC DST``), every line byte for byte.

Each fight of the source is read as its stored lines, its chain checked,
and appended to the destination in whole commands (a batch never split, so
a copy cut short leaves whole commands, and runs on from there next time).
A fight the destination already holds must be a prefix of the source's, line
for line: then only the rest is appended (nothing, if it is all there, or if
the destination holds the source's fight and more after it). A fight that
differs is refused before anything is written, with the first seq where the
two part. A source that ends with a torn batch (a crash mid-write) is refused
too: a copy appends whole commands only (``to_seq`` copies a fight up to the end of one of its commands, as
far as it is whole: the way out of a SQLite or PostgreSQL fight whose last rows were removed outside omen).
The destination's lines are read back and compared with the source's at the end. A single-file destination (one
``.jsonl``) keeps one fight: a copy that would put a second there is refused before anything is written.

:func:`plan_copy` does every check and reads the source, writing nothing; :func:`write_copy` appends what it
planned (:func:`copy_fights` is the two): a caller that would create the destination only to write to it (a new
SQLite file) plans against an empty store first, so that a refused copy leaves nothing behind.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import msgspec

from omen_core.errors import BadInput, ConcurrencyError, LogCorrupted
from omen_core.events import Sealed, StoredEvent, chain_breaks, decode_line
from omen_core.store import EventStore, JsonlStore
from omen_core.walk import torn_batch

__all__ = ["Copied", "Planned", "FightDiffers", "CopyRaced", "copy_fights", "plan_copy", "write_copy", "plan_fight",
           "BATCH_EVENTS"]

#: About how many events one append carries (whole commands: a larger command goes whole in one append).
BATCH_EVENTS = 1000


class FightDiffers(BadInput):
    """The destination holds a fight of the same id that is not a prefix of the source's: nothing is copied."""

    def __init__(self, fight_id: str, where: str, why: str):
        self.fight_id, self.where, self.why = fight_id, where, why
        super().__init__(f"fight {fight_id!r} in {where} differs from the source: {why}; nothing was copied "
                         "(copy into another store, or remove the fight there first)")


class CopyRaced(ConcurrencyError):
    """Another writer appended to the fight in the destination while the copy ran (a lost race, exit 1): what this
    copy had appended of it before stays, nothing more is written; run again, the copy finds what is there."""

    def __init__(self, fight_id: str, where: str, had: int, version: int, actual: int):
        super().__init__(fight_id, version, actual)
        wrote = f"this copy had appended seqs {had + 1}-{version} of it; " if version > had else ""
        self.args = (f"fight {fight_id!r} in {where}: another writer appended to it while this copy ran (it is at seq "
                     f"{actual}, not {version}); {wrote}nothing more was copied: run the copy again, it compares "
                     "what is there now with the source (the same: left alone; a part of it: completed; anything "
                     "else: refused as differing)",)


@dataclass(frozen=True)
class Planned:
    """One fight of a copy, checked: its ``lines`` and ``events`` in the source, and how many the destination
    holds already (``have``)."""

    fight_id: str
    lines: list[bytes]
    events: list[StoredEvent]
    have: int


@dataclass(frozen=True)
class Copied:
    """What copying one fight did: ``had`` events of the source's were there already, ``added`` were appended;
    ``beyond``: how many events the destination holds after all of the source's (it went on from there: nothing
    to copy)."""

    fight_id: str
    had: int
    added: int
    beyond: int = 0


def _lines(store: EventStore, fight_id: str, after_seq: int = 0, to_seq: int | None = None) -> Iterator[bytes]:
    """The fight's stored lines after ``after_seq`` (up to ``to_seq``, if given: the store is read no further),
    without the newline a JSON Lines store ends them with."""
    seq = after_seq
    for chunk in store.read_lines(fight_id, after_seq):
        for line in chunk:
            if to_seq is not None and seq >= to_seq:
                return
            seq += 1
            yield line[:-1] if line.endswith(b"\n") else line
        if to_seq is not None and seq >= to_seq:
            return  # (what lies past it is not read: rows missing after the seq asked for stop no copy)


def _source(store: EventStore, fight_id: str, to_seq: int | None = None) -> tuple[list[bytes], list[StoredEvent]]:
    """The fight's lines and events in the source (up to ``to_seq``, the end of a command), checked: each line
    decodes to an event, and the chain holds from the genesis hash to the last event, each hash checked on its
    line's own bytes (a line of an older schema version, which today's omen would write otherwise, is copied as it
    is)."""
    lines = list(_lines(store, fight_id, to_seq=to_seq))
    if to_seq is not None and len(lines) < to_seq:
        raise BadInput(f"--to {to_seq}: fight {fight_id!r} in {store.location} holds {len(lines)} events")
    events = []
    for seq, line in enumerate(lines, 1):
        if not line:  # said as every reader says it (it said the decoder's "Input data was truncated")
            raise LogCorrupted(getattr(store, "location_of", lambda _: store.location)(fight_id), seq, "empty line")
        try:
            events.append(decode_line(line))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise LogCorrupted(store.location, seq, f"line does not decode as a stored event: {exc}") from None
    for seq, what in chain_breaks(events, fight_id, lines=lines):
        raise LogCorrupted(store.location, seq, f"the chain does not hold: {what}; nothing was copied")
    last = events[-1] if events else None
    if last is not None and last.batch_size and last.seq < last.batch + last.batch_size - 1:
        end = last.batch + last.batch_size - 1
        if to_seq is not None:
            raise BadInput(f"--to {to_seq}: seq {to_seq} is inside the command of seqs {last.batch} to {end} of "
                           f"fight {fight_id!r}: give the seq a command ends at"
                           + (f" ({last.batch - 1}, the one before it)" if last.batch > 1 else ""))
        if isinstance(store, JsonlStore):  # a crash mid-write left it: said at its last line, as replay says it
            raise LogCorrupted(store.location, last.seq, f"fight {fight_id!r} ends with a torn batch: the command "
                                                           f"starting at seq {last.batch} wrote "
                                                           f"{last.seq - last.batch + 1} of its {last.batch_size} "
                                                           "events (a crash mid-write); a copy appends whole "
                                                           "commands only, so nothing was copied: run omen repair "
                                                           f"{shlex.quote(store.location_of(fight_id))} first")
        raise LogCorrupted(store.location, last.batch, f"fight {fight_id!r} ends with a "
                           f"{torn_batch(last.batch, last.seq, end, fight_id, tears=False)}; a copy appends whole "
                           "commands only, so nothing was copied")
    return lines, events


def plan_fight(src: EventStore, dst: EventStore, fight_id: str, to_seq: int | None = None
               ) -> tuple[list[bytes], list[StoredEvent], int]:
    """The fight's checked lines and events in ``src`` (up to ``to_seq``), and how many of them ``dst`` holds
    already; :class:`FightDiffers` if what it holds is not a prefix of them."""
    lines, events = _source(src, fight_id, to_seq)
    have = dst.version(fight_id)
    if have == 0:
        return lines, events, 0
    common = min(have, len(lines))
    for seq, (mine, theirs) in enumerate(zip(_lines(dst, fight_id), lines, strict=False), 1):
        if mine != theirs:
            raise FightDiffers(fight_id, dst.location, f"the two part at seq {seq} (it holds {have} events, the "
                                                       f"source {len(lines)}; the first {seq - 1} are the same)")
        if seq == common:
            break
    return lines, events, have


def _batches(events: list[StoredEvent], lines: list[bytes]) -> Iterator[Sealed]:
    """``events`` in runs of whole commands, each about :data:`BATCH_EVENTS` long (a command is never split),
    each with its lines as the source stores them (the store writes those bytes, not the events encoded again)."""
    run = Sealed()
    for ev, line in zip(events, lines, strict=True):
        if len(run) >= BATCH_EVENTS and ev.seq == ev.batch:
            yield run
            run = Sealed()
        run.add(ev, line)
    if run:
        yield run


#: At most this many fight ids in a message (the rest counted).
_LISTED = 10


def _one_fight_file(src: EventStore, dst: EventStore, fight_ids: list[str]) -> None:
    """Refuse (:class:`BadInput`) a copy that would put more than one fight in a single-file JSON Lines store (the
    fights copied and the one it may hold), before anything is written: it wrote the first fight and refused the
    second, exit 2 saying "nothing was written"."""
    if not (isinstance(dst, JsonlStore) and dst.single_file):
        return
    held = dst.fights()
    named = list(dict.fromkeys([*held, *fight_ids]))
    if len(named) < 2:
        return
    folder = dst.location.removesuffix(".jsonl") + "/"
    listed = ", ".join(fight_ids[:_LISTED]) + (f", and {len(fight_ids) - _LISTED} more"
                                               if len(fight_ids) > _LISTED else "")
    where = f"a directory ({folder}: one <fight>.jsonl per fight) or a database"
    if held and held[0] not in fight_ids:
        raise BadInput(f"{dst.location}: it holds fight {held[0]!r} already, and a single-file store keeps exactly "
                       f"one fight; nothing was written: copy {listed} into another .jsonl file, or into {where}")
    raise BadInput(f"{dst.location}: a single-file store keeps exactly one fight, and {src.location} holds "
                   f"{len(fight_ids)} ({listed}); nothing was written: copy them into {where}, or one of them with "
                   "--fight ID")


def plan_copy(src: EventStore, dst: EventStore, fight_ids: list[str], to_seq: int | None = None) -> list[Planned]:
    """Every check of copying ``fight_ids`` from ``src`` to ``dst`` (each up to ``to_seq``), writing nothing: the
    destination can keep them (a single file keeps one fight), each source fight is sound and ends with a whole
    command, and what ``dst`` holds of each is a prefix of it (:class:`FightDiffers` otherwise)."""
    _one_fight_file(src, dst, fight_ids)
    return [Planned(fight_id, *plan_fight(src, dst, fight_id, to_seq)) for fight_id in fight_ids]


def write_copy(dst: EventStore, plans: list[Planned], appended: Callable[[str, int, int], None] | None = None
               ) -> list[Copied]:
    """Append what :func:`plan_copy` planned to ``dst``, each fight from where it stood, and read each back line
    for line; ``appended(fight_id, first_seq, last_seq)`` is told of each append once it is stored. Another writer
    appending to a fight meanwhile is :class:`CopyRaced`."""
    done = []
    for plan in plans:
        fight_id, lines, events, have = plan.fight_id, plan.lines, plan.events, plan.have
        if have >= len(lines):  # all there already (and perhaps more after it): nothing to write or read back
            done.append(Copied(fight_id, len(lines), 0, have - len(lines)))
            continue
        version = have
        for batch in _batches(events[have:], lines[have:]):
            try:
                stored = dst.append(fight_id, batch, version)
            except ConcurrencyError as exc:
                raise CopyRaced(fight_id, dst.location, have, version, exc.actual) from None
            if appended is not None:
                appended(fight_id, version + 1, stored)
            version = stored
        back = list(_lines(dst, fight_id))
        if back != lines:
            seq = next((i for i, (a, b) in enumerate(zip(back, lines, strict=False), 1) if a != b),
                       min(len(back), len(lines)) + 1)
            raise LogCorrupted(dst.location, seq, "the copy does not read back as the source's lines")
        done.append(Copied(fight_id, have, len(events) - have))
    return done


def copy_fights(src: EventStore, dst: EventStore, fight_ids: list[str], to_seq: int | None = None,
                appended: Callable[[str, int, int], None] | None = None) -> list[Copied]:
    """Copy ``fight_ids`` from ``src`` to ``dst`` (each up to ``to_seq``, the end of one of its commands, if given):
    all are checked before any is written (:func:`plan_copy`: a fight that differs refuses the whole copy), then
    each is appended from where ``dst`` stands and read back line for line (:func:`write_copy`)."""
    return write_copy(dst, plan_copy(src, dst, fight_ids, to_seq), appended)
