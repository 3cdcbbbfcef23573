"""Golden fixtures: recorded fights that replaying under the current rules must reproduce exactly.

A fixture is a directory under ``fixtures/`` holding ``scenario.toml``, the
recorded ``fight.jsonl`` (made with a fixed clock and salts from a public key,
:data:`FIXTURE_SALTS`, so it is byte-for-byte reproducible) and ``fingerprint.json`` (the end state's summary and its
sha256). ``check`` re-runs each scenario and compares, event by event, with
the recording, and reports the first divergence: seq, field, expected, got.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from omen_core import MemoryStore
from omen_core.content import read_bounded
from omen_core.errors import BadInput, ContentError, OmenError
from omen_core.events import StoredEvent, decode_line, encode_line, keyed_salts
from omen_core.store.base import not_regular
from omen_core.walk import project

from .replay import summarise
from .scenario import Scenario, load_scenario, reveal_at_end, run_scenario
from .verify import READING, Finding, Report, finding_words, verify_lines

__all__ = ["MAX_FIXTURE_BYTES", "Divergence", "FixtureResult", "Recording", "fixture_dirs", "orphans", "play",
           "check", "record", "end_state_change", "first_divergence"]


class Divergence(msgspec.Struct, frozen=True, kw_only=True):
    """Where a replay first differs from its recording; ``written``: the file that writes what differs, where it is
    a combatant's sheet (its sheet file, or the scenario for a sheet written in it), else ""."""

    seq: int
    field: str
    expected: str
    got: str
    written: str = ""


class FixtureResult(msgspec.Struct, frozen=True, kw_only=True):
    """The check of one fixture; ``broken``: one of its files is missing or not what it must be, so it could not
    be checked (not a regression: ``omen fixtures check`` exits 2 for it, 1 for a fixture the rules no longer
    reproduce)."""

    name: str
    ok: bool
    events: int
    divergence: Divergence | None = None
    problems: tuple[str, ...] = ()
    broken: bool = False


#: The salts of every golden fixture: derived from a public key, so a recording is the same every time (and its
#: hashes hide nothing: a fixture has no secrets).
FIXTURE_SALTS = keyed_salts(b"omen golden fixture")

MAX_FIXTURE_BYTES = 64 << 20
"""The most a fixture's ``fight.jsonl`` or ``fingerprint.json`` may hold: 64 MiB (a fixture's log is a few dozen
KiB; docs/fixtures.md)."""


def fixture_dirs(root: Path) -> list[Path]:
    """The fixture directories under ``root`` (those with a scenario), sorted by name."""
    return sorted(p.parent for p in root.glob("*/scenario.toml"))


def orphans(root: Path) -> list[FixtureResult]:
    """The directories under ``root`` that hold a fixture's recording but not its scenario: broken fixtures (a
    fixture that lost its scenario would otherwise stop being checked, unseen), each saying what to do: it cannot
    be recorded again without its scenario."""
    return [FixtureResult(name=d.name, ok=False, events=0, broken=True, problems=(
                f"{d / 'scenario.toml'} is missing: a fixture holds scenario.toml, fight.jsonl and fingerprint.json, "
                f"and is recorded from its scenario, so it cannot be recorded again without it: restore scenario.toml "
                f"(from version control), or remove {d} if it is no fixture any more",))
            for d in sorted({p.parent for pattern in ("*/fight.jsonl", "*/fingerprint.json")
                             for p in root.glob(pattern)}) if not (d / "scenario.toml").exists()]


def play(directory: Path, loaded: Scenario | None = None) -> tuple[list[StoredEvent], str | None]:
    """Run a fixture's scenario (``loaded``, or read from its folder) under the current rules with a fixed clock,
    revealing a seeded fight's seed at its end as ``omen run`` does (C42; a fixture keeps no secret): its events,
    and the error that stopped it, if its script no longer fits (the events up to there are kept, to compare)."""
    scenario = load_scenario(directory / "scenario.toml") if loaded is None else loaded
    store = MemoryStore()
    try:
        reveal_at_end(run_scenario(scenario, store, clock=lambda: 0, salts=FIXTURE_SALTS))  # as omen run does (C42)
    except OmenError as exc:
        return (list(store.read(scenario.settings.id)) if store.fights() else []), str(exc)
    return list(store.read(scenario.settings.id)), None


#: What a combatant's summary holds that its fingerprint leaves out: how long each condition lasts, which the
#: recorded log pins (each tick and each clearing is an event), and which fingerprints made before the summary
#: said it do not hold (with it, every fixture recorded earlier would have failed after an upgrade).
UNFINGERPRINTED = ("remaining", "until")


def fingerprint(events: list[StoredEvent]) -> dict[str, Any]:
    """The end state's summary (the head's hash aside: the recording pins the bytes; and what
    :data:`UNFINGERPRINTED` names) and the sha256 of its canonical JSON."""
    summary = fingerprinted(_plain(summarise(project(events))))
    summary.pop("hash", None)
    return {"sha256": _summary_digest(summary), "summary": summary}


def fingerprinted(summary: dict[str, Any]) -> dict[str, Any]:
    """A state summary (as plain data) less what a fingerprint leaves out (:data:`UNFINGERPRINTED`)."""
    for combatant in summary["combatants"]:
        for field in UNFINGERPRINTED:
            combatant.pop(field, None)
    return summary


def _paths(value: object, prefix: str = "$") -> Iterator[tuple[str, object]]:
    """Each leaf of ``value`` by its path; an empty object or list is a leaf (``{}`` where the other has nothing
    was found at no field, "at $": both "<missing>")."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _paths(item, f"{prefix}.{key}")
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from _paths(item, f"{prefix}[{i}]")
    else:
        yield prefix, value


def _plain(value: msgspec.Struct) -> dict[str, Any]:
    """A value as plain JSON data in canonical order (sets sorted), so that equal values compare equal."""
    plain: dict[str, Any] = json.loads(_CANONICAL.encode(value))
    return plain


_CANONICAL = msgspec.json.Encoder(order="deterministic")


def first_divergence(expected: list[StoredEvent], got: list[StoredEvent]) -> Divergence | None:
    """The first event that differs (ignoring hashes and batch sizes, which follow from the content; a salt is
    compared: a fixture's come from a public key, :data:`FIXTURE_SALTS`, so a recording is the same byte for byte),
    and its first field."""
    for want, have in zip(expected, got, strict=False):
        a, b = _plain(want), _plain(have)
        for key in ("hash", "prev_hash", "batch_size"):
            a.pop(key, None), b.pop(key, None)
        if a != b:
            flat_a, flat_b = dict(_paths(a)), dict(_paths(b))
            field = next(k for k in [*flat_a, *flat_b] if flat_a.get(k, "<missing>") != flat_b.get(k, "<missing>"))
            return Divergence(seq=want.seq, field=field, expected=json.dumps(flat_a.get(field, "<missing>")),
                              got=json.dumps(flat_b.get(field, "<missing>")))
    if len(expected) != len(got):
        seq = min(len(expected), len(got)) + 1
        return Divergence(seq=seq, field="$", expected=f"{len(expected)} events", got=f"{len(got)} events")
    return None


def _summary_digest(summary: object) -> str:
    return hashlib.sha256(json.dumps(summary, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _broken(directory: Path, what: str, details: tuple[str, ...] = (), remedy: str = "") -> FixtureResult:
    again = f"omen fixtures record {directory.name} --dir {directory.parent}"
    remedy = remedy or f"record it again with `{again}` if its scenario is right"
    return FixtureResult(name=directory.name, ok=False, events=0, broken=True,
                         problems=(f"{what}: {remedy}", *details))


def _read(directory: Path, name: str) -> bytes | FixtureResult:
    """A fixture file's bytes, read with bounds (a device or a pipe is refused at once, never read; a symbolic link
    out of the fixture's folder is not followed: a broken fixture), or the broken fixture it makes."""
    where = directory / name
    try:
        out = _link_out(directory, name, "read through it (remove the link)")
        if out is not None:  # a link out of the fixture's folder is never followed
            return _broken(directory, out)
        return read_bounded(where, MAX_FIXTURE_BYTES)
    except ContentError as exc:
        return _broken(directory, f"{where} cannot be read ({exc.reason.removeprefix('cannot read the file: ')})")


def _fingerprint_of(directory: Path) -> dict[str, Any] | FixtureResult:
    """fingerprint.json read and checked to be one: an object with a summary and the sha256 of that summary's
    canonical JSON (an edited summary, or an edited digest, is a broken fixture, not a changed rule)."""
    read = _fingerprint_read(directory)
    return read if isinstance(read, dict | FixtureResult) else _broken(directory, read)


def _fingerprint_read(directory: Path) -> dict[str, Any] | FixtureResult | str:
    """fingerprint.json as :func:`_fingerprint_of` reads it: the fingerprint, the broken fixture a file that cannot
    be read makes, or what is wrong with one that was read, in words."""
    where = directory / "fingerprint.json"
    raw = _read(directory, "fingerprint.json")
    if isinstance(raw, FixtureResult):
        return raw
    try:
        stored = json.loads(raw)
    except ValueError as exc:
        return f"{where} is not JSON ({exc})"
    if not (isinstance(stored, dict) and isinstance(stored.get("sha256"), str)
            and isinstance(stored.get("summary"), dict)):
        return f"{where} is not a fingerprint (an object with a summary and its sha256)"
    if _summary_digest(stored["summary"]) != stored["sha256"]:
        return f"{where}: its summary does not match its sha256 (one of them was edited)"
    return stored


def check(directory: Path) -> FixtureResult:
    """Replay and verify one fixture: same events, same end state, a clean audit, a byte-identical round trip.
    A fixture whose files are missing or are not what they must be is ``broken`` (it could not be checked), and
    so is one whose recorded log cannot be replayed: a finding of the audit's reading of its lines (:data:`READING`:
    a torn tail, a hash chain that does not hold, a seq out of place...) or a walk that stops."""
    name = directory.name
    stored = _fingerprint_of(directory)
    if isinstance(stored, FixtureResult):
        return stored
    raw = _read(directory, "fight.jsonl")
    if isinstance(raw, FixtureResult):
        return raw
    if not raw:  # omen replay and omen verify refuse it: it holds no fight
        return _broken(directory, f"{directory / 'fight.jsonl'} is empty: it holds no fight")
    try:  # the audit of the bytes as they are, as omen verify audits the file
        report = verify_lines(raw.splitlines(keepends=True))
    except OmenError as exc:  # a newer omen's log, or a first line that names no fight: nothing to audit here
        return _broken(directory, f"{directory / 'fight.jsonl'} cannot be replayed ({exc})")
    if any(f.rule in READING for f in report.findings):
        return _unsound(directory, report.problems)
    try:
        recorded = [decode_line(line) for line in raw.splitlines()]
        problems = _problems(recorded, raw, stored, report)
    except OmenError as exc:  # a log the walk cannot replay (an event the state before it does not allow)
        return _unsound(directory, report.problems, exc)
    try:  # a scenario (or a sheet, a library it names) that cannot be read or is not valid: no check is possible
        scenario = load_scenario(directory / "scenario.toml")
    except BadInput as exc:
        return _broken(directory, f"{directory / 'scenario.toml'} cannot be loaded ({exc})",
                       remedy="mend the file the error names, then check again")
    try:
        events, error = play(directory, scenario)
    except OmenError as exc:
        events, error = [], str(exc)
    divergence = _placed(first_divergence(recorded, events), events, scenario)
    if error is not None:
        problems.append(f"the scenario no longer runs to its end: {error}")
    return FixtureResult(name=name, ok=divergence is None and not problems, events=len(recorded),
                         divergence=divergence, problems=tuple(problems))


def _placed(divergence: Divergence | None, events: list[StoredEvent], scenario: Scenario) -> Divergence | None:
    """``divergence`` with the file that writes what differs, where it is a combatant's sheet (a maintainer who
    changed a sheet file read "seq 2, $.event.sheet.armor.rating" and had to find which file that was: a tester)
    or the ruleset every fight records at its start (the scenario's ``ruleset``, else omen's own core ruleset: a
    maintainer saw every fixture fail at seq 1 for a number of a condition most never use)."""
    if divergence is not None and divergence.field.startswith("$.event.ruleset"):
        named = scenario.settings.ruleset
        written = str(Path(scenario.source).parent / named) if named else \
            "omen's core ruleset (omen_core/data/core.toml)"
        return msgspec.structs.replace(divergence, written=written)
    if divergence is None or not divergence.field.startswith("$.event.sheet"):
        return divergence
    joined = next((r.event for r in events if r.seq == divergence.seq), None)
    sheet = getattr(joined, "sheet", None)
    at = next((i for i, c in enumerate(scenario.combatants) if sheet is not None and c.id == sheet.id), None)
    if at is None:
        return divergence
    origin = scenario.origins[at] if at < len(scenario.origins) else ""
    return msgspec.structs.replace(divergence, written=origin or scenario.source)


def _problems(recorded: list[StoredEvent], raw: bytes, stored: dict[str, Any], report: Report) -> list[str]:
    """What is wrong with a recorded log read whole: its round trip, its audit (``report``, none of it a reading
    finding), its end state against the fingerprint (an :class:`OmenError` if the walk cannot replay it)."""
    problems = []
    if b"".join(encode_line(e) + b"\n" for e in recorded) != raw:
        problems.append("the recorded log does not survive a read -> write round trip byte for byte")
    if not report.clean:  # its integrity findings, as omen verify counts them (undo re-rolls and provenance aside)
        listed = "; ".join(finding_words(f) for f in report.problems[:AUDIT_LISTED])
        more = f"; and {len(report.problems) - AUDIT_LISTED} more (omen verify lists them)" \
            if len(report.problems) > AUDIT_LISTED else ""
        problems.append(f"the recorded log has {len(report.problems)} audit finding(s): {listed}{more}")
    moved = end_state_change(stored, fingerprint(recorded))
    if moved is not None:
        field, was, now = moved
        problems.append(f"replaying the recorded log no longer gives the end state fingerprint.json records: at "
                        f"{field}, fingerprint.json says {was}, the log gives {now}")
    return problems


#: The most audit findings a fixture's check lists in words (it counted them alone: a maintainer).
AUDIT_LISTED = 3


def end_state_change(old: dict[str, Any], new: dict[str, Any]) -> tuple[str, str, str] | None:
    """The first field at which two fingerprints' end states differ, with its value in each (as JSON;
    ``"<missing>"`` where one has no such field); None if they are the same."""
    if old["sha256"] == new["sha256"]:
        return None
    was, now = dict(_paths(old["summary"])), dict(_paths(new["summary"]))
    field = next((k for k in [*was, *now] if was.get(k, "<missing>") != now.get(k, "<missing>")), "$")
    return field, json.dumps(was.get(field, "<missing>")), json.dumps(now.get(field, "<missing>"))


def _unsound(directory: Path, findings: tuple[Finding, ...], error: OmenError | None = None) -> FixtureResult:
    """The broken fixture whose recorded log cannot be replayed: the audit's findings (its integrity findings, as
    ``omen verify`` lists them: the first ten, each in its words), or what stopped the replay where the audit found
    nothing."""
    more = (f"... and {len(findings) - 10} more finding(s): omen verify {directory / 'fight.jsonl'}",) \
        if len(findings) > 10 else ()
    shown = tuple(finding_words(f) for f in findings[:10])
    why = f"{len(findings)} audit finding(s), below" if findings else str(error)
    return _broken(directory, f"{directory / 'fight.jsonl'} cannot be replayed ({why})", (*shown, *more))


def _link_out(directory: Path, name: str, refused: str) -> str | None:
    """Why the fixture's file ``name`` is not followed, if it is a symbolic link out of the fixture's folder
    (``refused``: what omen does not do through it); None otherwise (docs/stores.md: no command follows a
    symbolic link out)."""
    path = directory / name
    real = Path(os.path.realpath(path))
    if path.is_symlink() and real.parent != Path(os.path.realpath(directory)):
        return f"{path} is a symbolic link to {real}, outside the fixture's folder {directory}: omen does not {refused}"
    return None


def _own_file(directory: Path, name: str) -> Path:
    """Where a fixture's file ``name`` is written: the file in ``directory`` itself, or what a symbolic link there
    names inside the same folder; a link leading out of the folder, or something there that is not a regular
    file (a directory, a device, a pipe), is :class:`BadInput`: recording writes nothing outside its fixture
    (docs/stores.md: no command follows a symbolic link out)."""
    path = directory / name
    real = Path(os.path.realpath(path))
    out = _link_out(directory, name, "write through it (remove the link, then record again)")
    if out is not None:
        raise BadInput(out)
    if os.path.lexists(real) and not real.is_file():
        raise BadInput(f"{path}: {not_regular(os.stat(real).st_mode, 'a fixture')}")
    return real


class Recording(NamedTuple):
    """What re-recording a fixture did (:func:`record`)."""

    change: Divergence | None
    """The first event that differs from the old recording's (None: the same events, or no old recording)."""
    events: int
    """How many events the new recording holds."""
    was: str
    """What the old recording was: ``new`` (none), ``unchanged``, ``changed`` or ``unreadable`` (it could not be
    read, or not replayed: a line edited by hand and not re-sealed, one missing or out of order)."""
    end_state: tuple[str, str, str] | None = None
    """Where the end state the old fingerprint.json recorded differs from the new one's (:func:`end_state_change`:
    the field, its old and its new value as JSON); None if it is the same, or there was no sound old one."""
    unsound: str = ""
    """Why the old recording could not be replayed (the audit's first reading finding, or why it could not be read),
    in words; "" where it was sound, or new."""
    fingerprint_was: str = ""
    """What was wrong with the old fingerprint.json, in words ("" if it was sound, or there was none)."""


def record(directory: Path) -> Recording:
    """Re-record a fixture under the current rules; returns what changed from the old recording (if any), how
    many events, what the old recording was (``new``, ``unchanged``, ``changed`` or ``unreadable``) and whether its
    end state changed (:class:`Recording`).
    A scenario that does not give the same events twice (a seeded fight past its ``next_seeds`` draws a random
    seed) is refused: its fixture could never pass; so is a fixture whose files are links out of its folder."""
    old_path, print_path = _own_file(directory, "fight.jsonl"), _own_file(directory, "fingerprint.json")
    events, error = play(directory)
    if error is not None:
        raise BadInput(f"{directory.name}: the scenario does not run under the current rules: {error}")
    again, _error = play(directory)
    differs = first_divergence(events, again)
    if differs is not None:
        raise BadInput(f"{directory.name}: the scenario does not give the same events twice (at seq {differs.seq}, "
                       f"{differs.field}: {differs.expected}, then {differs.got}), so no recording of it can be "
                       "checked: a seeded fight that reveals its seed more often than it lists next_seeds draws "
                       "random seeds (docs/scenarios.md)")
    old, unsound = _old_recording(old_path)
    change = first_divergence(old, events) if old else None
    was = "new" if old is None else "unreadable" if not old else "unchanged" if change is None else "changed"
    old_print = _fingerprint_read(directory) if print_path.exists() else None
    new_print = fingerprint(events)
    old_path.write_bytes(b"".join(encode_line(e) + b"\n" for e in events))
    print_path.write_text(json.dumps(new_print, indent=2, sort_keys=True) + "\n")
    print_was = old_print if isinstance(old_print, str) else \
        old_print.problems[0] if isinstance(old_print, FixtureResult) else ""
    return Recording(change, len(events), was,
                     end_state_change(old_print, new_print) if isinstance(old_print, dict) else None,
                     unsound, print_was)


def _old_recording(path: Path) -> tuple[list[StoredEvent] | None, str]:
    """The old recording's events (None: there is none) and, where it cannot be read or replayed, ``[]`` and why:
    the first finding of the audit's reading (a line edited and not re-sealed, missing, repeated or out of order:
    what ``check`` calls broken, never a change of the rules: a maintainer read "changed from seq 41" of a line
    deleted by hand)."""
    if not path.exists():
        return None, ""
    try:
        raw = read_bounded(path, MAX_FIXTURE_BYTES)
        old = [decode_line(line) for line in raw.splitlines()]
        report = verify_lines(raw.splitlines(keepends=True))
    except (ValueError, msgspec.DecodeError, OmenError) as exc:
        return [], str(exc)  # a recording that cannot be read is replaced: re-recording is its remedy
    reading = [f for f in report.findings if f.rule in READING]
    return ([], finding_words(reading[0])) if reading else (old, "")
