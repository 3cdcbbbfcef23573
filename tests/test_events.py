"""Tests for omen_core.events: the event union, the envelope, canonical bytes and the hash chain."""

from __future__ import annotations

import hashlib
import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.errors import ChainBroken
from omen_core.events import (
    EVENT_TYPES,
    GENESIS_HASH,
    SCHEMA_VERSION,
    DiceRolled,
    Die,
    Event,
    SeedRevealed,
    StoredEvent,
    canonical_body,
    chain_breaks,
    decode_line,
    encode_line,
    event_schema,
    hash_ok,
    seal,
    verify_chain,
)
from tests.strategies import chained, events, logs


class TestEventTypes:
    def test_every_event_type_is_frozen_and_tagged(self):
        """Each event type is a frozen msgspec Struct whose tag is its snake_case name."""
        for kind in EVENT_TYPES:
            config = kind.__struct_config__
            assert config.frozen, kind
            assert config.tag_field == "type"
            assert config.tag == "".join("_" + c.lower() if c.isupper() else c for c in kind.__name__)[1:]

    def test_union_lists_every_event_type(self):
        """The Event union and EVENT_TYPES name the same classes."""
        assert set(Event.__args__) == set(EVENT_TYPES)

    @given(events)
    def test_every_event_round_trips(self, event):
        """Any event survives encode then decode unchanged, inside an envelope."""
        rec = seal("f-1", 1, 5, GENESIS_HASH, event)
        assert decode_line(encode_line(rec)) == rec

    def test_unknown_field_is_rejected(self):
        """A log line with a field the schema does not know does not decode (typos never pass)."""
        rec = seal("f", 1, 0, GENESIS_HASH, SeedRevealed(seed="ab"))
        doc = json.loads(encode_line(rec))
        doc["event"]["sede"] = "cd"
        with pytest.raises(msgspec.ValidationError, match="sede"):
            decode_line(json.dumps(doc))


class TestEnvelope:
    def test_canonical_body_field_order(self):
        """The canonical body lists the envelope fields in declaration order, without the hash."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        body = canonical_body(rec)
        assert list(json.loads(body)) == ["fight_id", "seq", "batch", "recorded_at", "schema_version",
                                          "prev_hash", "event"]
        assert b" " not in body

    def test_hash_is_sha256_of_prev_hash_bytes_and_body(self):
        """hash = sha256(prev_hash || canonical body), prev_hash as its 32 raw bytes."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        expected = hashlib.sha256(bytes(32) + canonical_body(rec)).hexdigest()
        assert rec.hash == expected and rec.schema_version == SCHEMA_VERSION

    def test_line_is_body_with_hash_spliced_in(self):
        """A stored line is its body with the hash added as the last field, so other tools can rehash it."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        assert encode_line(rec) == canonical_body(rec)[:-1] + f',"hash":"{rec.hash}"}}'.encode()

    def test_changing_any_field_breaks_the_hash(self):
        """A copy with one changed field no longer matches its hash."""
        rec = seal("f", 3, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        for change in ({"seq": 4}, {"recorded_at": 43}, {"fight_id": "g"},
                       {"event": SeedRevealed(seed="ac")}, {"prev_hash": "1" * 64}):
            assert not hash_ok(msgspec.structs.replace(rec, **change)), change
        assert hash_ok(rec)

    def test_schema_includes_every_event_type(self):
        """The JSON Schema has a definition for every event type, reachable from the envelope."""
        schema = event_schema()
        defs = schema["$defs"]
        for kind in EVENT_TYPES:
            assert kind.__name__ in defs
        mapping = defs["StoredEvent"]["properties"]["event"]["discriminator"]["mapping"]
        assert len(mapping) == len(EVENT_TYPES)


def _die_event(face: int) -> DiceRolled:
    return DiceRolled(counter=1, purpose="check", roller="a", dice=(Die(pool="check", sides=20, face=face),),
                      source="manual")


class TestChain:
    @given(logs)
    def test_sound_log_has_no_breaks(self, log):
        """A freshly chained log verifies, and every event checks."""
        assert list(chain_breaks(log)) == []
        assert verify_chain(log) == len(log)

    @given(logs, st.data())
    def test_changed_event_is_detected(self, log, data):
        """Changing any event's payload is found at that event's seq."""
        i = data.draw(st.integers(0, len(log) - 1))
        other = data.draw(events.filter(lambda e: e != log[i].event))
        tampered = [*log[:i], msgspec.structs.replace(log[i], event=other), *log[i + 1:]]
        assert (log[i].seq, "hash does not match the event's content") in list(chain_breaks(tampered))

    @given(logs.filter(lambda log: len(log) >= 2), st.data())
    def test_dropped_event_is_detected(self, log, data):
        """Dropping any event but the last breaks the chain."""
        i = data.draw(st.integers(0, len(log) - 2))
        dropped = log[:i] + log[i + 1:]
        with pytest.raises(ChainBroken):
            verify_chain(dropped, log[0].fight_id)

    @given(logs)
    def test_dropped_tail_is_detected_against_the_known_head(self, log):
        """A cut-off tail leaves a sound prefix, so it is caught by comparing with the known head hash."""
        assert verify_chain(log, head=log[-1].hash) == len(log)
        with pytest.raises(ChainBroken, match="ends at seq"):
            verify_chain(log[:-1], log[0].fight_id, head=log[-1].hash)

    @given(logs.filter(lambda log: len(log) >= 2), st.data())
    def test_swapped_events_are_detected(self, log, data):
        """Swapping any two events breaks the chain."""
        i, j = data.draw(st.lists(st.integers(0, len(log) - 1), min_size=2, max_size=2, unique=True))
        swapped = list(log)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        assert list(chain_breaks(swapped))

    @given(logs, st.data())
    def test_inserted_event_is_detected(self, log, data):
        """Inserting an event anywhere, even one sealed to follow its predecessor, breaks the chain."""
        i = data.draw(st.integers(0, len(log)))
        prev = log[i - 1].hash if i else GENESIS_HASH
        extra = seal(log[0].fight_id, i + 1, 0, prev, data.draw(events))
        inserted = [*log[:i], extra, *log[i:]]
        if i == len(log):
            inserted.append(seal(log[0].fight_id, i + 1, 0, prev, data.draw(events)))
        assert list(chain_breaks(inserted))

    def test_break_names_the_seq(self):
        """ChainBroken carries the seq where the chain stopped holding."""
        log = chained("f", [_die_event(n) for n in (1, 2, 3)])
        tampered = [log[0], msgspec.structs.replace(log[1], event=_die_event(20)), log[2]]
        with pytest.raises(ChainBroken) as info:
            verify_chain(tampered)
        assert info.value.seq == 2

    def test_event_of_another_fight_is_detected(self):
        """An event sealed for another fight does not belong in this one's chain."""
        log = chained("f", [_die_event(1)])
        assert any("belongs to fight" in what for _, what in chain_breaks(log, "g"))

    def test_newer_schema_version_is_reported(self):
        """A record claiming a newer schema than this engine knows is flagged, not trusted."""
        env = StoredEvent(fight_id="f", seq=1, batch=1, recorded_at=0, schema_version=SCHEMA_VERSION + 1,
                          prev_hash=GENESIS_HASH, event=SeedRevealed(seed="ab"), hash="0" * 64)
        assert any("newer" in what for _, what in chain_breaks([env]))
