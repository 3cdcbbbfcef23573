"""Tests for omen_core.errors: one root, structured fields, messages that say what and where."""

from __future__ import annotations

import pytest

from omen_core import errors
from omen_core.errors import (
    BadInput,
    ConcurrencyError,
    ContentError,
    DiceExhausted,
    LogCorrupted,
    OmenError,
    RuleViolation,
    TornTail,
)


class TestHierarchy:
    def test_every_error_derives_from_the_root(self) -> None:
        """Every exported error class is an OmenError."""
        for name in errors.__all__:
            assert issubclass(getattr(errors, name), OmenError), name

    @pytest.mark.parametrize("kind", [ContentError, LogCorrupted, TornTail, errors.InvalidDieFace,
                                      errors.UnknownFight])
    def test_bad_input_errors(self, kind: type[OmenError]) -> None:
        """Errors about malformed input are BadInput, which the CLI maps to exit code 2."""
        assert issubclass(kind, BadInput)


    def test_every_public_error_of_every_package_derives_from_the_root(self) -> None:
        """README: "Every error omen raises on purpose is an OmenError": every public exception class of every
        module of omen_core, omen_replay and omen_server is one (the simulation's PolicyError and RunError were
        ValueErrors alone: a tester embedding omen), but the walk's and the extensions' control flow, never raised
        to a caller (StopWalk ends a visitor's walk early; ExtensionCrash carries an extension's failure out of an
        odds preview to where it is named; AnswerTaken tells a seat's answer from another's in the server)."""
        import importlib
        import inspect
        import pkgutil

        flow = {"StopWalk", "ExtensionCrash", "AnswerTaken"}
        found = {}
        for package in ("omen_core", "omen_replay", "omen_server"):
            root = importlib.import_module(package)
            for info in pkgutil.walk_packages(root.__path__, f"{package}."):
                if info.name.endswith("__main__"):  # (a program, run when imported)
                    continue
                module = importlib.import_module(info.name)
                for name, value in vars(module).items():
                    if inspect.isclass(value) and issubclass(value, BaseException) and not name.startswith("_") \
                            and value.__module__ == info.name:
                        found[name] = value
        assert {"PolicyError", "RunError", "SimulationError", "IllegalOrder"} <= set(found)
        from litestar.exceptions import HTTPException

        others = sorted(n for n, kind in found.items() if not issubclass(kind, (OmenError, HTTPException)))
        assert others == sorted(flow)  # (an HTTPException is the server's answer to a request, not raised to a caller)


class TestFields:
    def test_a_seq_the_log_has_no_event_at_is_named_with_the_seqs_it_has(self) -> None:
        """Fight.state_after and explain refuse a seq past the head or below 0 alike, UnknownSeq carrying the seq
        and the range (it gave the state at the nearest end, silently: a tester embedding omen); seq 0 is the
        state before the first event."""
        from omen_core import Fight, ManualDice, MemoryStore
        from omen_core.content import load_sheet
        from omen_replay.explain import explain_records
        from tests.server.test_app import SHEETS

        fight = Fight.start(MemoryStore(), "duel", dice=ManualDice(),
                            combatants=[load_sheet(SHEETS / "kael.toml"), load_sheet(SHEETS / "vesh.toml")])
        last = fight.version
        for seq in (-5, last + 1, 9999):
            with pytest.raises(errors.UnknownSeq) as info:
                fight.state_after(seq)
            assert (info.value.seq, info.value.first, info.value.last) == (seq, 1, last)
            assert str(info.value) == f"fight 'duel': no event with seq {seq} (seq 1 to {last})"
        assert fight.state_after(last) == fight.state and fight.state_after(0).combatants == {}
        with pytest.raises(errors.UnknownSeq) as found:
            explain_records(fight.events, 9999)
        assert (found.value.seq, found.value.last) == (9999, last)

    def test_a_store_url_that_names_no_store_carries_it(self) -> None:
        """open_store of a URL of no known form, and open_existing_store of a log that is not there, are NoStore
        with the URL as given (only the words said it: a tester embedding omen); nothing is created."""
        from omen_core.store import open_existing_store, open_store

        with pytest.raises(errors.NoStore) as info:
            open_store("ftp://x")
        assert info.value.url == "ftp://x" and "accepted forms" in str(info.value)
        with pytest.raises(errors.NoStore) as gone:
            open_existing_store("nowhere/fight.jsonl")
        assert gone.value.url == "nowhere/fight.jsonl"
        assert str(gone.value).startswith("nowhere/fight.jsonl: no such log")


    def test_concurrency_error_fields(self) -> None:
        """ConcurrencyError carries fight id, expected and actual version, and says nothing was written."""
        exc = ConcurrencyError("f", 3, 5)
        assert (exc.fight_id, exc.expected, exc.actual) == ("f", 3, 5)
        assert "nothing was written" in str(exc)

    def test_log_corrupted_names_file_and_line(self) -> None:
        """LogCorrupted's message starts with path:line."""
        exc = LogCorrupted("/tmp/f.jsonl", 7, "not JSON")
        assert str(exc) == "/tmp/f.jsonl:7: not JSON" and exc.line == 7

    def test_torn_tail_keeps_the_torn_bytes(self) -> None:
        """TornTail keeps the bytes that were cut off, so nothing is lost."""
        exc = TornTail("f.jsonl", 5, b'{"fight_id"')
        assert exc.torn == b'{"fight_id"' and "torn tail" in str(exc) and exc.line == 5

    def test_rule_violation_names_the_rule(self) -> None:
        """RuleViolation prefixes its message with the rule id and keeps extra facts."""
        exc = RuleViolation("C9", "a prone defender cannot Dodge", defender="kael")
        assert str(exc).startswith("[C9] ") and exc.facts == {"defender": "kael"}

    def test_dice_exhausted_names_the_roll(self) -> None:
        """DiceExhausted names the roll that needed dice and cites C29."""
        exc = DiceExhausted("roll #4 (hit by kael: primary d8)", 2, 0)
        assert "roll #4" in str(exc) and "C29" in str(exc)

    def test_content_error_with_line(self) -> None:
        """A ContentError with a line number shows file:line and the JSON path."""
        assert str(ContentError("s.toml", "$.hp", "Expected `int`", line=4)) == "s.toml:4: Expected `int` (at $.hp)"


def test_a_name_written_otherwise_is_said_so() -> None:
    """Names are compared as written: one that differs from a known one only by case, or only by Unicode
    normalization (é as one code point, or as e and U+0301, as an editor on macOS may save it), is named with how
    it differs (a tester's GM read two names that looked the same); a name that merely resembles another is not."""
    from omen_core.errors import otherwise_said, written_otherwise

    composed, decomposed = "Caf\u00e9", "Cafe\u0301"
    assert written_otherwise(decomposed, ["Tea", composed]) == composed
    assert otherwise_said(decomposed, [composed]) == (
        f"; did you mean {composed!r}? (the same text written with other code points (another Unicode "
        "normalization: save the file as NFC))")
    assert otherwise_said("Ryu", ["kael", "ryu"]) == (
        "; did you mean 'ryu'? (the same letters in another case: names are compared as written)")
    assert otherwise_said("ryu", ["ryu"]) == "" and otherwise_said("vesh", ["ash", "bo"]) == ""


def test_an_unknown_combatant_written_in_another_case_names_the_one_meant() -> None:
    """A command naming 'Ryu' where 'ryu' joined is refused naming the one meant (it listed the ids alone)."""
    from omen_core.errors import UnknownCombatant

    assert str(UnknownCombatant("Ryu", ["kael", "ryu"])) == (
        "[setup] no combatant 'Ryu' in this fight (joined: kael, ryu; did you mean 'ryu'? (the same letters in "
        "another case: names are compared as written))")
    assert str(UnknownCombatant("vesh", ["ash", "bo"])) == "[setup] no combatant 'vesh' in this fight (joined: ash, bo)"
