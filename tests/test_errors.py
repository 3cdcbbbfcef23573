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


class TestFields:
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
