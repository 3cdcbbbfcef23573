"""Tests for omen_core.events: the event union, the envelope, canonical bytes, the hash chain and the upcaster."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core import Fight, MemoryStore, ScriptedDice
from omen_core.content import load_sheet
from omen_core.errors import ChainBroken, UnexpectedEvent
from omen_core.events import (
    EVENT_TYPES,
    GENESIS_HASH,
    SALT_BYTES,
    SCHEMA_VERSION,
    DamageResolved,
    DefenseTotal,
    DiceRolled,
    Die,
    Event,
    EventBase,
    HitDetermined,
    HitTotal,
    InitiativeRollOff,
    RollTotal,
    SeedRevealed,
    StaticCheckResolved,
    StoredEvent,
    canonical_body,
    chain_breaks,
    chain_hash,
    decode_line,
    encode_line,
    event_schema,
    hash_ok,
    is_hex64,
    is_salt,
    keyed_salts,
    line_body,
    line_hash,
    seal,
    seal_line,
    verify_chain,
)
from omen_core.parts import Modifier, Term
from omen_core.rules.attack import ActiveDefense
from tests.strategies import chained, events, ids, logs


class TestEventTypes:
    def test_every_event_type_is_frozen_and_tagged(self) -> None:
        """Each event type is a frozen msgspec Struct whose tag is its snake_case name."""
        for kind in EVENT_TYPES:
            config = kind.__struct_config__
            assert config.frozen, kind
            assert config.tag_field == "type"
            assert config.tag == "".join("_" + c.lower() if c.isupper() else c for c in kind.__name__)[1:]

    def test_union_lists_every_event_type(self) -> None:
        """The Event union and EVENT_TYPES name the same classes."""
        assert set(Event.__args__) == set(EVENT_TYPES)

    @given(events)
    def test_every_event_round_trips(self, event: Event) -> None:
        """Any event survives encode then decode unchanged, inside an envelope."""
        rec = seal("f-1", 1, 5, GENESIS_HASH, event)
        assert decode_line(encode_line(rec)) == rec

    def test_unknown_field_is_rejected(self) -> None:
        """A log line with a field the schema does not know does not decode (typos never pass)."""
        rec = seal("f", 1, 0, GENESIS_HASH, SeedRevealed(seed="ab"))
        doc = json.loads(encode_line(rec))
        doc["event"]["sede"] = "cd"
        with pytest.raises(msgspec.ValidationError, match="sede"):
            decode_line(json.dumps(doc))


class TestTypedAccess:
    @given(events, st.sampled_from(EVENT_TYPES), st.integers(1, 10**6))
    def test_as_gives_the_event_of_its_own_type_and_refuses_any_other(self, event: Event, kind: type[EventBase],
                                                                       seq: int) -> None:
        """``StoredEvent.as_(kind)`` is the event itself when it is a ``kind``; otherwise UnexpectedEvent names the
        seq, the type asked for and the type held."""
        rec = seal("f", seq, 0, GENESIS_HASH, event)
        assert rec.as_(type(event)) is rec.event and rec.as_(EventBase) is rec.event
        if not isinstance(event, kind):
            with pytest.raises(UnexpectedEvent) as info:
                rec.as_(kind)
            assert (info.value.seq, info.value.expected, info.value.actual) == (seq, kind.__name__,
                                                                                type(event).__name__)
            assert str(info.value) == f"the event at seq {seq} is a {type(event).__name__}, not a {kind.__name__}"

    def test_as_refuses_another_type_as_a_type_error(self) -> None:
        """The refusal is an OmenError and a TypeError: reading an event as the wrong type is a caller's mistake."""
        rec = seal("f", 4, 0, GENESIS_HASH, SeedRevealed(seed="ab"))
        with pytest.raises(TypeError, match="the event at seq 4 is a SeedRevealed, not a DiceRolled"):
            rec.as_(DiceRolled)


class TestEnvelope:
    def test_the_canonical_forms_docs_events_md_states(self) -> None:
        """docs/events.md (a reader that rebuilds a body): mapping keys sorted by code point (U+FF5E before U+1F600,
        which a UTF-16 sort puts first), control characters escaped in JSON.stringify's forms and nothing else
        (DEL, U+2028 raw), decimals with a point from 10^-5 to below 10^16 and exponents without + beyond (an
        independent verifier had to guess each)."""
        from omen_core.events import _ENCODER

        assert _ENCODER.encode({"\U0001f600": 1, "\uff5e": 2, "b": 3, "a": 4}) \
            == '{"a":4,"b":3,"\uff5e":2,"\U0001f600":1}'.encode()
        assert _ENCODER.encode('"\\\b\f\n\r\t\x1f\x00\x7f\u2028\u00e9') \
            == '"\\"\\\\\\b\\f\\n\\r\\t\\u001f\\u0000\x7f\u2028\u00e9"'.encode()
        said = [_ENCODER.encode(x).decode() for x in (2.0, 1.4, 0.99, 0.000015, 1e15, 1e16, 1e20,
                                                       1.2345678901234568e17, 3.3e-6, 1e-7)]
        assert said == ["2.0", "1.4", "0.99", "0.000015", "1000000000000000.0", "1e16", "1e20",
                        "1.2345678901234568e17", "3.3e-6", "1e-7"]

    def test_canonical_body_field_order(self) -> None:
        """The canonical body lists the envelope fields in declaration order, without the hash."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        body = canonical_body(rec)
        assert list(json.loads(body)) == ["fight_id", "seq", "batch", "batch_size", "recorded_at",
                                          "schema_version", "prev_hash", "salt", "event"]
        assert b" " not in body

    def test_every_event_gets_its_own_random_salt(self) -> None:
        """Each sealed event carries a fresh 16-byte salt in its body (schema version 4), so two events with the
        same content and position hash differently."""
        one, two = (seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab")) for _ in range(2))
        assert is_salt(one.salt) and len(bytes.fromhex(one.salt)) == SALT_BYTES
        assert one.salt != two.salt and one.hash != two.hash
        assert json.loads(canonical_body(one))["salt"] == one.salt

    def test_keyed_salts_are_the_same_every_time(self) -> None:
        """Salts derived from a key depend on the fight and the seq alone: a fixture seals to the same bytes."""
        salts = keyed_salts(b"k")
        first = seal("f", 3, 0, GENESIS_HASH, SeedRevealed(seed="ab"), salt=salts("f", 3))
        again = seal("f", 3, 0, GENESIS_HASH, SeedRevealed(seed="ab"), salt=salts("f", 3))
        assert encode_line(first) == encode_line(again)
        assert len({salts("f", 3), salts("f", 4), salts("g", 3), keyed_salts(b"j")("f", 3)}) == 4

    def test_an_unsalted_older_line_is_written_back_unsalted(self) -> None:
        """A line of schema version 3 has no salt: it decodes with the salt empty, and encoding it again leaves
        the salt out, so its bytes and its hash stay its own."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        doc = json.loads(encode_line(rec))
        del doc["salt"]
        doc["schema_version"] = 3
        body = json.dumps({k: v for k, v in doc.items() if k != "hash"}, separators=(",", ":")).encode()
        doc["hash"] = hashlib.sha256(bytes(32) + body).hexdigest()
        line = json.dumps(doc, separators=(",", ":")).encode()
        old = decode_line(line)
        assert old.salt == "" and encode_line(old) == line and line_hash(GENESIS_HASH, line) == old.hash

    def test_batch_and_batch_size(self) -> None:
        """The envelope records the batch's first seq and how many events the command wrote (default: its own
        batch of one)."""
        alone = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        third = seal("f", 6, 42, alone.hash, SeedRevealed(seed="ab"), batch=4, batch_size=5)
        assert (alone.batch, alone.batch_size, third.batch, third.batch_size) == (1, 1, 4, 5)
        assert json.loads(encode_line(third))["batch_size"] == 5 and decode_line(encode_line(third)) == third

    def test_hash_is_sha256_of_prev_hash_bytes_and_body(self) -> None:
        """hash = sha256(prev_hash || canonical body), prev_hash as its 32 raw bytes."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        expected = hashlib.sha256(bytes(32) + canonical_body(rec)).hexdigest()
        assert rec.hash == expected and rec.schema_version == SCHEMA_VERSION

    def test_line_is_body_with_hash_spliced_in(self) -> None:
        """A stored line is its body with the hash added as the last field, so other tools can rehash it."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        assert encode_line(rec) == canonical_body(rec)[:-1] + f',"hash":"{rec.hash}"}}'.encode()

    @given(events, ids, st.integers(1, 10**6), st.integers(0, 2**40))
    def test_a_sealed_events_kept_line_is_its_encoding(self, event: Event, fight_id: str, seq: int,
                                                       recorded_at: int) -> None:
        """The line made when an event is sealed (so it is encoded once) is byte for byte its canonical encoding,
        and a copy encoded afresh gives the same bytes."""
        rec, line = seal_line(fight_id, seq, recorded_at, GENESIS_HASH, event, seq, 1, "5a" * 16)
        fresh = msgspec.json.Encoder(order="deterministic").encode(rec)
        copy = msgspec.structs.replace(rec)
        assert line == fresh == encode_line(rec) == encode_line(copy) and decode_line(line) == rec

    def test_sealed_events_carry_their_lines_to_the_store(self) -> None:
        """A Sealed batch hands a store the lines made while sealing (no module-level table of them); a plain list
        of the same events is encoded afresh, to the same bytes; a store writes exactly those lines."""
        from omen_core.events import Sealed, lines_of
        from omen_core.store import MemoryStore

        batch = Sealed()
        prev = GENESIS_HASH
        for seq in (1, 2):
            rec, line = seal_line("f", seq, 42, prev, SeedRevealed(seed="ab"), 1, 2)
            batch.add(rec, line)
            prev = rec.hash
        assert lines_of(batch) is batch.lines
        assert lines_of(list(batch)) == batch.lines == [encode_line(r) for r in batch]
        store = MemoryStore()
        store.append("f", batch, 0)
        assert [chunk for lines in store.read_lines("f") for chunk in lines] == batch.lines

    def test_changing_any_field_breaks_the_hash(self) -> None:
        """A copy with one changed field no longer matches its hash."""
        rec = seal("f", 3, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        for change in ({"seq": 4}, {"recorded_at": 43}, {"fight_id": "g"}, {"batch": 2}, {"batch_size": 2},
                       {"event": SeedRevealed(seed="ac")}, {"prev_hash": "1" * 64}):
            assert not hash_ok(msgspec.structs.replace(rec, **change)), change
        assert hash_ok(rec)

    def test_schema_includes_every_event_type(self) -> None:
        """The JSON Schema has a definition for every event type, reachable from the envelope."""
        schema = event_schema()
        defs = schema["$defs"]
        for kind in EVENT_TYPES:
            assert kind.__name__ in defs
        mapping = defs["StoredEvent"]["properties"]["event"]["discriminator"]["mapping"]
        assert len(mapping) == len(EVENT_TYPES)


class TestLineHash:
    def test_line_hash_recomputes_the_stored_hash(self) -> None:
        """line_hash recomputes a stored line's hash from its bytes alone: sha256(prev_hash || the line without
        its hash field), with or without the newline."""
        first = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        second = seal("f", 2, 43, first.hash, _die_event(7), batch=2, batch_size=1)
        for rec, prev in ((first, GENESIS_HASH), (second, first.hash)):
            line = encode_line(rec)
            assert line_body(line) == canonical_body(rec)
            assert line_hash(prev, line) == rec.hash == line_hash(prev, line + b"\n")

    def test_line_hash_catches_edited_bytes(self) -> None:
        """One edited byte in a stored line gives another hash; the wrong prev_hash too."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        line = encode_line(rec)
        assert line_hash(GENESIS_HASH, line.replace(b'"ab"', b'"ac"')) != rec.hash
        assert line_hash("1" * 64, line) != rec.hash

    def test_line_hash_needs_a_hash_field_and_a_hex_prev_hash(self) -> None:
        """A line that does not end in its hash field, or a prev_hash that is not hex, has no hash to give."""
        rec = seal("f", 1, 42, GENESIS_HASH, SeedRevealed(seed="ab"))
        line = encode_line(rec)
        assert line_hash(GENESIS_HASH, canonical_body(rec)) is None
        assert line_hash("z" * 64, line) is None

    @pytest.mark.parametrize("value", ["0" * 63, "0" * 65, "g" * 64, "A" * 64, " " + "0" * 63, "", "0x" + "0" * 62])
    def test_is_hex64_rejects_non_hex(self, value: str) -> None:
        """is_hex64 accepts only 64 lowercase hex digits."""
        assert not is_hex64(value)

    def test_is_hex64_accepts_a_digest(self) -> None:
        """A sha256 hex digest and the genesis hash are hex64."""
        assert is_hex64(hashlib.sha256(b"x").hexdigest()) and is_hex64(GENESIS_HASH)


def _v1_line(rec: StoredEvent, totals: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> bytes:
    """``rec`` as schema version 1 wrote it: no ``batch_size``, each roll total's ``counter`` called ``roll``
    (``totals`` picks them out of the decoded event), hashed over its own bytes."""
    doc = json.loads(encode_line(rec))
    del doc["hash"], doc["batch_size"]
    doc["schema_version"] = 1
    for total in totals(doc["event"]):
        total["roll"] = total.pop("counter")
    body = json.dumps(doc, separators=(",", ":")).encode()
    return body[:-1] + f',"hash":"{chain_hash(rec.prev_hash, body)}"}}'.encode()


def _total(roller: str, counter: int, face: int) -> RollTotal:
    return RollTotal(roller=roller, attribute="STR", counter=counter, face=face, attribute_bonus=1, total=face + 1)


class TestUpcast:
    def test_v1_line_decodes_with_the_roll_counter(self) -> None:
        """A schema version 1 static_check_resolved line decodes through decode_line: its roll total's ``roll``
        becomes ``counter``, batch_size is 0 (unknown), the schema version stays 1 and its hash is its own."""
        rec = seal("f", 3, 42, GENESIS_HASH, StaticCheckResolved(check=_total("kael", 2, 5), difficulty=4,
                                                                  outcome="success"))
        line = _v1_line(rec, lambda event: [event["check"]])
        assert b'"roll":2' in line and b"counter" not in line and b"batch_size" not in line
        old = decode_line(line)
        assert (old.schema_version, old.batch_size, old.seq, old.batch) == (1, 0, 3, 3)
        assert old.event == rec.event and old.as_(StaticCheckResolved).check.counter == 2
        assert line_hash(GENESIS_HASH, line) == old.hash != rec.hash

    def test_v1_roll_off_renames_every_total(self) -> None:
        """A v1 initiative_roll_off has a list of roll totals: each one's ``roll`` becomes ``counter``."""
        rolls = (_total("kael", 5, 3), _total("vesh", 6, 4))
        rec = seal("f", 7, 42, GENESIS_HASH, InitiativeRollOff(group=("kael", "vesh"), rolls=rolls))
        old = decode_line(_v1_line(rec, lambda event: event["rolls"]))
        assert old.schema_version == 1 and [r.counter for r in old.as_(InitiativeRollOff).rolls] == [5, 6]
        assert old.event == rec.event

    def test_v2_line_with_roll_is_refused(self) -> None:
        """Only older lines are upcast: a schema version 2 line still naming ``roll`` does not decode."""
        rec = seal("f", 3, 42, GENESIS_HASH, StaticCheckResolved(check=_total("kael", 2, 5), difficulty=4,
                                                                  outcome="success"))
        doc = json.loads(encode_line(rec))
        doc["event"]["check"]["roll"] = doc["event"]["check"].pop("counter")
        with pytest.raises(msgspec.ValidationError):
            decode_line(json.dumps(doc))


def _die_event(face: int) -> DiceRolled:
    return DiceRolled(counter=1, purpose="check", roller="a", dice=(Die(pool="check", sides=20, face=face),),
                      source="manual")


class TestChain:
    @given(logs)
    def test_sound_log_has_no_breaks(self, log: list[StoredEvent]) -> None:
        """A freshly chained log verifies, and every event checks."""
        assert list(chain_breaks(log)) == []
        assert verify_chain(log) == len(log)

    @given(logs, st.data())
    def test_changed_event_is_detected(self, log: list[StoredEvent], data: st.DataObject) -> None:
        """Changing any event's payload is found at that event's seq."""
        i = data.draw(st.integers(0, len(log) - 1))
        other = data.draw(events.filter(lambda e: e != log[i].event))
        tampered = [*log[:i], msgspec.structs.replace(log[i], event=other), *log[i + 1:]]
        assert (log[i].seq, "hash does not match the event's content") in list(chain_breaks(tampered))

    @given(logs.filter(lambda log: len(log) >= 2), st.data())
    def test_dropped_event_is_detected(self, log: list[StoredEvent], data: st.DataObject) -> None:
        """Dropping any event but the last breaks the chain."""
        i = data.draw(st.integers(0, len(log) - 2))
        dropped = log[:i] + log[i + 1:]
        with pytest.raises(ChainBroken):
            verify_chain(dropped, log[0].fight_id)

    @given(logs)
    def test_dropped_tail_is_detected_against_the_known_head(self, log: list[StoredEvent]) -> None:
        """A cut-off tail leaves a sound prefix, so it is caught by comparing with the known head hash."""
        assert verify_chain(log, head=log[-1].hash) == len(log)
        with pytest.raises(ChainBroken, match="ends at seq"):
            verify_chain(log[:-1], log[0].fight_id, head=log[-1].hash)

    @given(logs.filter(lambda log: len(log) >= 2), st.data())
    def test_swapped_events_are_detected(self, log: list[StoredEvent], data: st.DataObject) -> None:
        """Swapping any two events breaks the chain."""
        i, j = data.draw(st.lists(st.integers(0, len(log) - 1), min_size=2, max_size=2, unique=True))
        swapped = list(log)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        assert list(chain_breaks(swapped))

    @given(logs, st.data())
    def test_inserted_event_is_detected(self, log: list[StoredEvent], data: st.DataObject) -> None:
        """Inserting an event anywhere, even one sealed to follow its predecessor, breaks the chain."""
        i = data.draw(st.integers(0, len(log)))
        prev = log[i - 1].hash if i else GENESIS_HASH
        extra = seal(log[0].fight_id, i + 1, 0, prev, data.draw(events))
        inserted = [*log[:i], extra, *log[i:]]
        if i == len(log):
            inserted.append(seal(log[0].fight_id, i + 1, 0, prev, data.draw(events)))
        assert list(chain_breaks(inserted))

    def test_break_names_the_seq(self) -> None:
        """ChainBroken carries the seq where the chain stopped holding."""
        log = chained("f", [_die_event(n) for n in (1, 2, 3)])
        tampered = [log[0], msgspec.structs.replace(log[1], event=_die_event(20)), log[2]]
        with pytest.raises(ChainBroken) as info:
            verify_chain(tampered)
        assert info.value.seq == 2

    def test_event_of_another_fight_is_detected(self) -> None:
        """An event sealed for another fight does not belong in this one's chain."""
        log = chained("f", [_die_event(1)])
        assert any("belongs to fight" in what for _, what in chain_breaks(log, "g"))

    def test_newer_schema_version_is_reported(self) -> None:
        """A record claiming a newer schema than this engine knows is flagged, not trusted."""
        env = StoredEvent(fight_id="f", seq=1, batch=1, recorded_at=0, schema_version=SCHEMA_VERSION + 1,
                          prev_hash=GENESIS_HASH, event=SeedRevealed(seed="ab"), hash="0" * 64)
        assert any("newer" in what for _, what in chain_breaks([env]))


class TestTerms:
    """Every total carries its terms, each with its source (issue 27, item 3): worked by hand from the Ember Ford
    sheets (omen_replay/data/ember-ford/sheets)."""

    SHEETS = Path(__file__).resolve().parents[1] / "omen_replay" / "data" / "ember-ford" / "sheets"

    def duel(self, faces: list[int], defense: ActiveDefense | None = "dodge") -> list[Event]:
        """Kael's longsword at Vesh with scripted faces (C29: primary, FCS, RES, the Active Defense die, damage),
        Vesh answering with ``defense``."""
        fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice(faces),
                            combatants=[load_sheet(self.SHEETS / "kael.toml"), load_sheet(self.SHEETS / "vesh.toml")])
        fight.attack("kael", "vesh")
        fight.defend("vesh", defense)
        return [r.event for r in fight.store.read("duel")]

    @staticmethod
    def table(terms: tuple[Term, ...]) -> list[tuple[str, int, str]]:
        return [(t.label, t.value, t.source) for t in terms]

    def test_a_hit_its_defense_and_its_crit_portions_term_by_term(self) -> None:
        """C5: Kael's hit 5 (d8 STR) + 4 (d6 FCS) + 2 STR + 1 weapon + 1 training = 13; C10, C11, §Active Defense:
        Vesh's defense 3 (d6 RES) + 1 RES + 1 armor + Dodge 2 (d8) + 2 AGI + 0 rating = 9; C7: FCS portion 4 + 1
        = 5 against RES portion 3 + 1 = 4. Each list of terms adds up to its total."""
        hd = next(e for e in self.duel([5, 4, 3, 2]) if isinstance(e, HitDetermined))
        assert self.table(hd.attack.terms()) == [("primary", 5, "dice"), ("FCS", 4, "dice"), ("STR", 2, "sheet"),
                                                 ("weapon", 1, "weapon"), ("training", 1, "training")]
        assert hd.attack.total == 13
        assert self.table(hd.defense.base_terms()) == [("RES", 3, "dice"), ("RES", 1, "sheet"), ("armor", 1, "sheet")]
        assert self.table(hd.defense.terms())[3:] == [("dodge", 2, "dice"), ("AGI", 2, "sheet"),
                                                      ("dodge rating", 0, "weapon")]
        assert (hd.defense.base, hd.defense.total) == (5, 9)
        assert self.table(hd.crit_check.fcs_terms()) == [("FCS", 4, "dice"), ("FCS", 1, "sheet")]
        assert self.table(hd.crit_check.res_terms()) == [("RES", 3, "dice"), ("RES", 1, "sheet")]
        assert (hd.crit_check.fcs_portion, hd.crit_check.res_portion) == (5, 4)

    def test_damage_and_its_mitigation_term_by_term(self) -> None:
        """C12: a crit's damage 5 (the primary dice) + 2 bonus + 2 crit bonus + 4 WD = 13; C13: Vesh's armor takes
        1, a subtraction written as a term of -1, so the raw damage and the steps add up to the final 12."""
        damage = next(e for e in self.duel([5, 4, 3, 2]) if isinstance(e, DamageResolved))
        assert self.table(damage.terms.terms()) == [("dice", 5, "dice"), ("bonus", 2, "sheet"),
                                                    ("crit bonus", 2, "rule"), ("WD", 4, "weapon")]
        assert [(t.label, t.value) for t in damage.mitigation_terms()] == [
            ("raw damage", 13), ("resistance", 0), ("physical rollover", 0), ("armor", -1), ("floor", 0),
            ("incoming", 0)]
        assert sum(t.value for t in damage.mitigation_terms()) == damage.final == 12

    def test_a_bonus_splits_into_the_sheets_and_the_conditions(self) -> None:
        """C28: told that conditions took 2 off (Fatigued x2), a bonus of 0 is the sheet's 2 and the conditions'
        -2; the terms still add up to the total."""
        total = HitTotal(attribute="STR", primary_dice=(5,), fcs_dice=(4,), attribute_bonus=0, weapon_hit_bonus=1,
                         training_bonus=1, total=11)
        assert self.table(total.terms(-2))[2:4] == [("STR", 2, "sheet"), ("conditions", -2, "condition")]
        assert sum(t.value for t in total.terms(-2)) == sum(t.value for t in total.terms()) == 11

    def test_a_helpless_defenders_missing_die_and_an_abilitys_modifier(self) -> None:
        """C10: no RES die is a term of 0; C11: a modifier contributed to the defense is sourced to the ability that
        gave it."""
        defense = DefenseTotal(res_die=None, res_bonus=1, armor=0, armor_applies=False,
                               modifiers=(Modifier(source="Shield Wall", value=2),), defense_rating=3, base=3, total=3)
        assert self.table(defense.terms()) == [("no RES die (C10)", 0, "rule"), ("RES", 1, "sheet"),
                                               ("armor", 0, "sheet"), ("Shield Wall", 2, "ability:Shield Wall")]

    def test_a_roll_total_term_by_term(self) -> None:
        """The roll primitive (C1, C2): 6 (die) + 2 AGI + 3 Stealth level + 1 cover = 12."""
        total = RollTotal(roller="vesh", attribute="AGI", skill="Stealth", counter=1, face=6, attribute_bonus=2,
                          skill_level=3, modifiers=(Modifier(source="cover", value=1),), total=12)
        assert self.table(total.terms()) == [("die", 6, "dice"), ("AGI", 2, "sheet"), ("Stealth level", 3, "sheet"),
                                             ("cover", 1, "situational")]
        assert sum(t.value for t in total.terms()) == total.total
