"""The hash chain is no oracle (issue 22): a seat shown an event with anything withheld cannot confirm a guess of it
by hashing candidates (even the right guess, without the salt it is never sent), while an event it is shown whole
it can check, salt and all (docs/events.md, "Why the salt")."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from litestar.testing import TestClient

from omen_core import MemoryStore
from omen_core.events import line_body
from omen_server import create_app
from omen_server.keep import Keep
from tests.server.noninterference import PLAYERS, SPECTATOR, WORLDS, Table, in_world, plan

#: Event types a player or spectator is shown with something withheld in these fights, every one of which the
#: guesser must have tried (the fights below go through all of them).
REDACTED = {"combatant_joined", "command_issued", "dice_rolled", "hit_determined", "damage_resolved",
            "resource_changed", "active_defense_window_opened", "attack_declared", "cost_paid", "initiative_rolled",
            "bonus_actions_refilled", "turn_started", "condition_applied", "will_conversion_offered"}
GUESSES = 64


def _hash(prev_hash: str, body: bytes) -> str:
    return hashlib.sha256(bytes.fromhex(prev_hash) + body).hexdigest()


def _candidates(body: bytes, salt: str) -> list[bytes]:
    """The bodies a guesser who knows the event exactly (the best guess there is) can make without its salt: the
    body unsalted, as before schema version 4, and with salts it makes up."""
    cut = body.replace(f',"salt":"{salt}"'.encode(), b"")
    made_up = [os.urandom(16).hex() for _ in range(GUESSES)] + ["0" * 32]
    return [cut] + [body.replace(salt.encode(), guess.encode()) for guess in made_up]


def _seat_body(seen: dict[str, Any]) -> bytes:
    """The body a seat rebuilds from an event it was shown whole: the envelope's fields in their order, with the
    salt, and the event, as compact JSON."""
    fields = ("fight_id", "seq", "batch", "batch_size", "recorded_at", "schema_version", "prev_hash", "salt")
    envelope = {name: seen[name] for name in fields} | {"event": seen["event"]}
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def test_no_guess_of_a_withheld_field_matches_the_hash() -> None:
    """For every event a player or spectator receives with fields withheld (or withheld whole), no candidate body,
    not even the exact event with its salt cut out or replaced by a made-up one, hashes to the hash it received;
    the same body with the true salt (which only the GM holds) does, so the candidates are built right. Every event
    it receives whole comes with its salt, and the seat rebuilds its hash from what it was shown. Three fights, which
    together show a seat every event type in REDACTED redacted."""
    tried: set[str] = set()
    for seed in (3, 11, 29):
        tried |= _guess_in(seed)
    assert tried >= REDACTED, sorted(REDACTED - tried)


def _guess_in(seed: int) -> set[str]:
    """Play one fight and try the guesses on what each seat was shown; the event types tried."""
    the_plan = plan(seed, 60, "seeded", "hidden")
    tried: set[str] = set()
    with TestClient(create_app(MemoryStore(), Keep())) as client:
        table = Table(client, WORLDS[0], f"guess-{seed}", the_plan, {})
        for step in the_plan.steps:
            if not step.junk:
                table.call("POST", "/commands", table.gm, {"command": in_world(step, WORLDS[0])})
        lines = table.call("GET", "/log", table.gm).content.splitlines()
        for who in [*PLAYERS, SPECTATOR]:
            seen = table.call("GET", "/events?limit=500", table.tokens[who]).json()["events"]
            for event, line in zip(seen, lines, strict=True):
                truth = json.loads(line)
                body = line_body(line)
                assert body is not None
                if event["withheld"]:
                    assert event["salt"] is None
                    assert _hash(truth["prev_hash"], body) == event["hash"]  # the true salt confirms it
                    for candidate in _candidates(body, truth["salt"]):
                        assert _hash(event["prev_hash"], candidate) != event["hash"], (who, event["seq"])
                    tried.add(truth["event"]["type"])
                else:
                    assert event["salt"] == truth["salt"] and event["type"] == truth["event"]["type"]
                    assert _hash(event["prev_hash"], _seat_body(event)) == event["hash"], (who, event["seq"])
                if event["event"] is None:
                    assert event["type"] is None  # withheld whole: not even its type
    return tried
