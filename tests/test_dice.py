"""Tests for omen_core.dice: seeded, manual and scripted sources, the commitment, and roll events."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.dice import (
    CommandFaces,
    FacesNeeded,
    FacesThenSource,
    ManualDice,
    NoDice,
    RollRequest,
    ScriptedDice,
    SeededDice,
    commitment,
    face_from_uint64,
    roll,
    seeded_face,
    seeded_faces,
    seeded_mismatches,
)
from omen_core.errors import DiceError, DiceExhausted, InvalidDieFace
from omen_core.parts import RollPurpose

SEED = bytes(range(32))


def request(*sides: int, counter: int = 1, purpose: RollPurpose = "hit") -> RollRequest:
    """A roll request with a primary die per size given."""
    return RollRequest("fight-1", counter, purpose, "kael", tuple(("primary", s) for s in sides))


class TestSeededFace:
    def test_known_answer_from_raw_hmac(self) -> None:
        """The face is HMAC-SHA256(seed, 'fight|counter|index|0') read as a big-endian u64, mod sides, + 1."""
        digest = hmac.new(SEED, b"fight-1|7|2|0", hashlib.sha256).digest()
        x = int.from_bytes(digest[:8], "big")
        assert x < 2**64 - 2**64 % 20  # no rejection on this input
        assert seeded_face(SEED, "fight-1", 7, 2, 20) == x % 20 + 1

    def test_rejection_sampling_boundary(self) -> None:
        """Numbers in the biased top band are rejected; the largest accepted maps to the last face."""
        limit = 2**64 - 2**64 % 6
        assert face_from_uint64(limit - 1, 6) == (limit - 1) % 6 + 1
        assert face_from_uint64(limit, 6) is None
        assert face_from_uint64(2**64 - 1, 6) is None
        assert face_from_uint64(2**64 - 1, 2) == 2  # 2 divides 2**64: nothing to reject

    @given(st.integers(1, 10**6), st.integers(0, 5), st.integers(2, 1000))
    def test_faces_are_in_range(self, counter: int, index: int, sides: int) -> None:
        """Every seeded face lies in 1..sides."""
        assert 1 <= seeded_face(SEED, "f", counter, index, sides) <= sides

    def test_faces_are_roughly_uniform(self) -> None:
        """Over 6000 d6 rolls every face appears close to 1000 times (chi-square well under the 0.1% bound)."""
        counts = Counter(seeded_face(SEED, "f", c, 0, 6) for c in range(1, 6001))
        chi2 = sum((n - 1000) ** 2 / 1000 for n in counts.values())
        assert set(counts) == {1, 2, 3, 4, 5, 6} and chi2 < 20.5

    def test_inputs_each_change_the_face_stream(self) -> None:
        """Seed, fight id, counter and die index all feed the derivation."""
        base = [seeded_face(SEED, "f", c, 0, 1000) for c in range(1, 20)]
        assert base != [seeded_face(bytes(32), "f", c, 0, 1000) for c in range(1, 20)]
        assert base != [seeded_face(SEED, "g", c, 0, 1000) for c in range(1, 20)]
        assert base != [seeded_face(SEED, "f", c + 1, 0, 1000) for c in range(1, 20)]
        assert base != [seeded_face(SEED, "f", c, 1, 1000) for c in range(1, 20)]


class TestSeededDice:
    def test_commitment_is_sha256_of_seed(self) -> None:
        """The published commitment is sha256(seed) and reveals nothing else."""
        assert SeededDice(SEED).commitment == hashlib.sha256(SEED).hexdigest() == commitment(SEED)

    def test_short_seed_is_refused(self) -> None:
        """A seed shorter than 16 bytes is too weak to commit to."""
        with pytest.raises(DiceError, match="16 bytes"):
            SeededDice(b"short")

    def test_fresh_seeds_differ(self) -> None:
        """Fresh sources draw their seeds from the operating system."""
        assert SeededDice.fresh().seed != SeededDice.fresh().seed

    def test_roll_is_a_pure_function_of_the_request(self) -> None:
        """The same request gives the same faces, whichever source object rolls it."""
        req = request(8, 6, counter=3)
        assert roll(SeededDice(SEED), req) == roll(SeededDice(SEED), req)
        assert [d.face for d in roll(SeededDice(SEED), req).dice] == [
            seeded_face(SEED, "fight-1", 3, 0, 8), seeded_face(SEED, "fight-1", 3, 1, 6)]

    @given(seed=st.binary(min_size=16, max_size=200), fight_id=st.from_regex(r"[A-Za-z0-9._-]{1,20}", fullmatch=True),
           counter=st.integers(1, 10**9), sides=st.lists(st.integers(2, 1000), min_size=1, max_size=6))
    def test_source_faces_are_the_standalone_function_s(self, seed: bytes, fight_id: str, counter: int,
                                                        sides: list[int]) -> None:
        """SeededDice rolls from HMAC pads hashed once; each face is still exactly seeded_face's, whatever the
        seed's length (keys over 64 bytes are hashed first, RFC 2104) or the die's size."""
        req = RollRequest(fight_id, counter, "hit", "kael", tuple(("primary", s) for s in sides))
        assert SeededDice(seed).faces(req) == [seeded_face(seed, fight_id, counter, i, s) for i, s in enumerate(sides)]

    @given(seed=st.binary(min_size=1, max_size=200), counter=st.integers(1, 10**9), index=st.integers(0, 50),
           sides=st.integers(2, 1 << 64))
    def test_an_auditors_faces_are_the_standalone_function_s(self, seed: bytes, counter: int, index: int,
                                                             sides: int) -> None:
        """seeded_faces (one seed's pads hashed once, how verify checks many dice) gives seeded_face's faces for
        any seed, roll, die and size a 64-bit draw can give."""
        assert seeded_faces(seed)("f-1", counter, index, sides) == seeded_face(seed, "f-1", counter, index, sides)

    @pytest.mark.parametrize("sides", [1, (1 << 64) + 1, 10**20])
    def test_a_die_no_64_bit_draw_can_give_is_refused(self, sides: int) -> None:
        """A d1, or a die past d2^64 (every 64-bit draw would be rejected: the draw would never end), is a DiceError
        from both functions, never a loop."""
        with pytest.raises(DiceError, match="d2 to a d2"):
            seeded_face(SEED, "f-1", 1, 0, sides)
        with pytest.raises(DiceError, match="d2 to a d2"):
            seeded_faces(SEED)("f-1", 1, 0, sides)

    def test_a_rejected_draw_is_drawn_again_as_the_standalone_function_does(self) -> None:
        """A 64-bit draw at or above the largest multiple of the die's sides is rejected and the next attempt
        taken (no modulo bias): on a d(2^63 + 1) about half the first attempts are, and the two agree."""
        sides = (1 << 63) + 1
        req = RollRequest("fight-1", 1, "hit", "kael", tuple(("primary", sides) for _ in range(40)))
        first = [face_from_uint64(int.from_bytes(hmac.digest(SEED, f"fight-1|1|{i}|0".encode(), "sha256")[:8],
                                                 "big"), sides) for i in range(40)]
        assert None in first  # some first attempts were rejected
        assert SeededDice(SEED).faces(req) == [seeded_face(SEED, "fight-1", 1, i, sides) for i in range(40)]

    def test_mismatches_find_a_changed_face(self) -> None:
        """A seeded roll whose face was edited is reported with index, recorded and expected face."""
        rolled = roll(SeededDice(SEED), request(20, 20))
        assert seeded_mismatches(SEED, "fight-1", rolled) == []
        good = rolled.dice[1].face
        bad = good % 20 + 1
        edited = type(rolled)(counter=rolled.counter, purpose=rolled.purpose, roller=rolled.roller,
                              dice=(rolled.dice[0], type(rolled.dice[1])(pool="primary", sides=20, face=bad)),
                              source="seeded")
        assert seeded_mismatches(SEED, "fight-1", edited) == [(1, bad, good)]
        assert seeded_mismatches(bytes(32), "fight-1", rolled) != []


class TestManualDice:
    def test_typed_faces_are_recorded_as_manual(self) -> None:
        """Faces typed in from physical dice become a roll event with source 'manual'."""
        rolled = roll(ManualDice(lambda req: [3, 6]), request(8, 6))
        assert [d.face for d in rolled.dice] == [3, 6] and rolled.source == "manual"

    @pytest.mark.parametrize("face", [0, 9, -1, "4", 2.0, None])
    def test_invalid_face_is_refused_with_the_roll_named(self, face: Any) -> None:
        """A face outside 1..sides (or not a whole number) is refused, naming the die and the roll."""
        with pytest.raises(InvalidDieFace, match=r"d8 \(for roll #1 \(hit by kael"):
            roll(ManualDice(lambda req: [face]), request(8))

    def test_a_bad_face_a_command_carries_is_named_at_its_place_in_the_command(self) -> None:
        """C29: a 9 for the d6 of a command's first roll (faces [3, 9] for a d8 and a d6) is refused at $.dice[1],
        and the third face of [4, 2, 9], for a d6 rolled second, at $.dice[2]
        (it named only the fight's running roll number, which a client cannot map back to its faces)."""
        with pytest.raises(InvalidDieFace, match=r"d6 \(at \$\.dice\[1\], for roll #1 \(hit by kael"):
            roll(CommandFaces([3, 9]), request(8, 6))
        faces = CommandFaces([4, 2, 9])
        roll(faces, request(8, 6))
        with pytest.raises(InvalidDieFace) as caught:
            roll(faces, request(6, counter=2))
        assert caught.value.index == 2 and "(at $.dice[2], for roll #2" in str(caught.value)

    def test_wrong_number_of_faces_is_refused(self) -> None:
        """Typing two faces for a one-die roll is an error, not a silent truncation."""
        with pytest.raises(DiceError, match="needs 1 face, got 2"):
            roll(ManualDice(lambda req: [1, 2]), request(8))


class TestScriptedDice:
    def test_faces_are_consumed_in_order(self) -> None:
        """Scripted faces are taken front to back, as many as the pool has dice (C29)."""
        dice = ScriptedDice([5, 2, 7])
        assert [d.face for d in roll(dice, request(8, 6)).dice] == [5, 2]
        assert [d.face for d in roll(dice, request(8, counter=2)).dice] == [7]
        assert dice.remaining == 0

    def test_running_out_names_the_roll(self) -> None:
        """An exhausted script names the roll that needed a die and how many were missing."""
        with pytest.raises(DiceExhausted) as info:
            roll(ScriptedDice([4]), request(8, 6, counter=9, purpose="base_defense"))
        assert info.value.needed == 2 and info.value.remaining == 1
        assert "roll #9 (base_defense by kael: primary d8, primary d6)" in str(info.value)

    def test_impossible_scripted_face_is_refused(self) -> None:
        """A scripted 7 on a d6 is a script error, reported like a manual one."""
        with pytest.raises(InvalidDieFace):
            roll(ScriptedDice([7]), request(6))

    def test_checkpoint_and_restore_rewind_the_queue(self) -> None:
        """Restoring a checkpoint puts consumed faces back, for commands that fail half-way."""
        dice = ScriptedDice([1, 2, 3])
        mark = dice.checkpoint()
        dice.faces(request(6, 6))
        dice.restore(mark)
        assert dice.faces(request(6)) == [1]

    def test_feed_appends_faces(self) -> None:
        """More faces can be queued behind the remaining ones."""
        dice = ScriptedDice([1])
        dice.feed([2])
        assert dice.faces(request(6, 6)) == [1, 2]


def test_a_count_of_one_die_or_one_face_is_singular() -> None:
    """A roll of one die with no face given says "1 die" and "0 faces" (it said "1 dice"); one face too many says
    "1 face"; a count of several stays plural (C29's message, docs/live.md)."""
    from omen_core.dice import SurplusFaces

    assert str(FacesNeeded([request(8)], 0)).startswith("this command rolls 1 die and 0 faces were given; ")
    assert str(FacesNeeded([request(8, 6), request(6, counter=2)], 1)).startswith(
        "this command rolls at least 3 dice as the 1 face given falls; ")
    assert str(FacesNeeded([request(8, 6)], 0)).startswith("this command rolls 2 dice and 0 faces were given; ")
    assert str(SurplusFaces([request(8)], 2)) == (
        "2 faces given, but this command rolls 1 (kael's hit: primary d8): 1 face too many; nothing was written")


def test_no_dice_refuses_to_roll() -> None:
    """A fight loaded without a dice source says which faces to give when a roll is needed (FacesNeeded)."""
    with pytest.raises(DiceError,
                       match=r"give the faces in the command's dice, in this order \(C29\): kael's hit: primary d6"):
        roll(NoDice(), request(6))


class TestFacesThenSource:
    """A command's faces, then the fight's own source (C29: a player types its own dice in a seeded fight)."""

    def test_faces_roll_first_then_the_source_each_roll_whole(self) -> None:
        """Faces [6, 6] roll a two-die hit (recorded manual, carried); the next roll, a d8 with no face left, is
        the seeded source's own face for that counter (recorded seeded, not carried); a checkpoint taken before
        both puts everything back."""
        seeded = SeededDice(bytes(range(16)))
        source = FacesThenSource(CommandFaces([6, 6]), seeded)
        mark = source.checkpoint()
        hit = roll(source, RollRequest("f", 1, "hit", "kael", (("primary", 6), ("fcs", 6))))
        assert (hit.source, [d.face for d in hit.dice], source.carried) == ("manual", [6, 6], True)
        defense = roll(source, RollRequest("f", 2, "base_defense", "vesh", (("res", 8),)))
        assert (defense.source, source.carried) == ("seeded", False)
        assert [d.face for d in defense.dice] == [seeded_face(bytes(range(16)), "f", 2, 0, 8)]
        source.restore(mark)
        assert (source.kind, source.carried, source.surplus, source.requests) == ("manual", True, 2, [])

    def test_a_roll_the_faces_left_cannot_cover_is_faces_needed(self) -> None:
        """One face left for a two-die roll: FacesNeeded (a roll is typed whole or left to the source)."""
        source = FacesThenSource(CommandFaces([6]), SeededDice(bytes(16)))
        with pytest.raises(FacesNeeded) as short:
            roll(source, RollRequest("f", 1, "hit", "kael", (("primary", 6), ("fcs", 6))))
        assert str(short.value) == (  # said as a roll typed in part, not as too few (it asked for every die after)
            "the 1 face given stops inside a roll of 2 dice (kael's hit: primary d6, fcs d6): a roll is typed whole or "
            "rolled whole from the seed (C29); give 1 more, or leave out its 1 (the seed then rolls it); the faces "
            "in this order: kael's hit: primary d6, fcs d6")

    def test_an_impossible_face_is_said_before_a_count_that_falls_short(self) -> None:
        """C29: a 99 for the d6 of a two-die roll, alone, is refused at $.dice[0] as a face no d6 shows, not as too
        few faces (a client mended its count first, then met the real mistake: a tester); in a manual fight and
        before the seed alike."""
        for source in (CommandFaces([99]), FacesThenSource(CommandFaces([99]), SeededDice(bytes(16)))):
            with pytest.raises(InvalidDieFace, match=r"die face 99 is not possible on a d6 \(at \$\.dice\[0\]"):
                roll(source, RollRequest("f", 1, "hit", "kael", (("primary", 6), ("fcs", 6))))


def test_a_dice_source_given_the_wrong_kind_of_value_is_an_omen_error() -> None:
    """``ScriptedDice(None)`` and a ``ManualDice`` whose ``ask`` answers None are InvalidArgument (an OmenError,
    README: every error of the library is one) naming the parameter, never a bare TypeError from deep inside."""
    from omen_core.dice import ManualDice, RollRequest, ScriptedDice
    from omen_core.errors import InvalidArgument, OmenError

    with pytest.raises(InvalidArgument, match="ScriptedDice's faces") as scripted:
        ScriptedDice(None)  # type: ignore[arg-type]
    asked = ManualDice(lambda request: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidArgument, match="ManualDice's ask") as manual:
        asked.faces(RollRequest("f", 1, "check", "kael", (("check", 6),)))
    assert isinstance(scripted.value, OmenError) and isinstance(manual.value, OmenError)
