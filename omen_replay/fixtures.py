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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from omen_core import MemoryStore
from omen_core.errors import BadInput, OmenError
from omen_core.events import StoredEvent, decode_line, encode_line, keyed_salts
from omen_core.walk import project

from .replay import summarise
from .scenario import load_scenario, run_scenario
from .verify import verify

__all__ = ["Divergence", "FixtureResult", "fixture_dirs", "play", "check", "record", "first_divergence"]


class Divergence(msgspec.Struct, frozen=True, kw_only=True):
    """Where a replay first differs from its recording."""

    seq: int
    field: str
    expected: str
    got: str


class FixtureResult(msgspec.Struct, frozen=True, kw_only=True):
    """The check of one fixture."""

    name: str
    ok: bool
    events: int
    divergence: Divergence | None = None
    problems: tuple[str, ...] = ()


#: The salts of every golden fixture: derived from a public key, so a recording is the same every time (and its
#: hashes hide nothing: a fixture has no secrets).
FIXTURE_SALTS = keyed_salts(b"omen golden fixture")


def fixture_dirs(root: Path) -> list[Path]:
    """The fixture directories under ``root`` (those with a scenario), sorted by name."""
    return sorted(p.parent for p in root.glob("*/scenario.toml"))


def play(directory: Path) -> tuple[list[StoredEvent], str | None]:
    """Run a fixture's scenario under the current rules with a fixed clock: its events, and the error that
    stopped it, if its script no longer fits (the events up to there are kept, to compare)."""
    scenario = load_scenario(directory / "scenario.toml")
    store = MemoryStore()
    try:
        run_scenario(scenario, store, clock=lambda: 0, salts=FIXTURE_SALTS)
    except OmenError as exc:
        return (list(store.read(scenario.settings.id)) if store.fights() else []), str(exc)
    return list(store.read(scenario.settings.id)), None


def fingerprint(events: list[StoredEvent]) -> dict[str, Any]:
    """The end state's summary (the head's hash aside: the recording pins the bytes) and the sha256 of its
    canonical JSON."""
    summary = _plain(summarise(project(events)))
    summary.pop("hash", None)
    digest = hashlib.sha256(json.dumps(summary, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return {"sha256": digest, "summary": summary}


def _paths(value: object, prefix: str = "$") -> Iterator[tuple[str, object]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, f"{prefix}.{key}")
    elif isinstance(value, list):
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
    """The first event that differs (ignoring hashes, salts and batch sizes, which follow from the content or are
    chance), and its first field."""
    for want, have in zip(expected, got, strict=False):
        a, b = _plain(want), _plain(have)
        for key in ("hash", "prev_hash", "batch_size", "salt"):
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


def check(directory: Path) -> FixtureResult:
    """Replay and verify one fixture: same events, same end state, a clean audit, a byte-identical round trip."""
    name = directory.name
    try:
        raw = (directory / "fight.jsonl").read_bytes()
        stored = json.loads((directory / "fingerprint.json").read_text())
        recorded = [decode_line(line) for line in raw.splitlines()]
    except OSError as exc:
        missing = f"{Path(exc.filename).name} cannot be read ({exc.strerror})" if exc.filename else str(exc)
        return FixtureResult(name=name, ok=False, events=0, divergence=None,
                             problems=(f"{missing}: record it with `omen fixtures record {name}`",))
    except (ValueError, msgspec.DecodeError, OmenError) as exc:
        return FixtureResult(name=name, ok=False, events=0, divergence=None,
                             problems=(f"the recording cannot be read: {exc}",))
    problems = []
    if b"".join(encode_line(e) + b"\n" for e in recorded) != raw:
        problems.append("the recorded log does not survive a read -> write round trip byte for byte")
    report = verify(recorded)
    if not report.clean:
        problems.append(f"the recorded log has {len(report.findings)} audit finding(s)")
    if fingerprint(recorded)["sha256"] != stored.get("sha256"):
        problems.append("replaying the recorded log no longer gives the recorded end state")
    try:
        events, error = play(directory)
    except OmenError as exc:
        events, error = [], str(exc)
    divergence = first_divergence(recorded, events)
    if error is not None:
        problems.append(f"the scenario no longer runs to its end: {error}")
    return FixtureResult(name=name, ok=divergence is None and not problems, events=len(recorded),
                         divergence=divergence, problems=tuple(problems))


def record(directory: Path) -> tuple[Divergence | None, int]:
    """Re-record a fixture under the current rules; returns what changed from the old recording (if any)."""
    events, error = play(directory)
    if error is not None:
        raise BadInput(f"{directory.name}: the scenario does not run under the current rules: {error}")
    old_path = directory / "fight.jsonl"
    old = [decode_line(line) for line in old_path.read_bytes().splitlines()] if old_path.exists() else []
    change = first_divergence(old, events) if old else None
    old_path.write_bytes(b"".join(encode_line(e) + b"\n" for e in events))
    (directory / "fingerprint.json").write_text(json.dumps(fingerprint(events), indent=2, sort_keys=True) + "\n")
    return change, len(events)
