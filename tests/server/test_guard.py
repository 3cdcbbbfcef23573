"""omen_server/guard.py: the checks hostile input meets before anything decodes it, and the log line of a 500."""

from __future__ import annotations

import json

import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st
from litestar.exceptions import ValidationException

from omen_server.guard import check_once, log_failure, page_headers, parse_seq, same_token, too_deep
from omen_server.limits import MAX_JSON_DEPTH, MAX_SEQ

#: JSON values, nested: arrays and objects of arrays and objects, strings full of brackets and quotes.
_TEXT = st.text(alphabet='[]{}"\\ab:,', max_size=8)
JSON = st.recursive(st.none() | st.integers() | _TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                    max_leaves=40)


def depth(value: object) -> int:
    """How deep ``value`` nests arrays and objects (a scalar: 0)."""
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


class TestTooDeep:
    @given(JSON, st.integers(0, 12))
    def test_a_document_is_too_deep_exactly_when_it_nests_past_the_limit(self, value: object, limit: int) -> None:
        """For any JSON document (brackets and quotes inside its strings included), too_deep is depth > limit."""
        assert too_deep(json.dumps(value).encode(), limit) == (depth(value) > limit)

    def test_a_thousand_deep_is_too_deep_and_the_limit_is_not(self) -> None:
        """The hostile case: 1,000 nested arrays; the bound itself passes."""
        assert too_deep(b"[" * 1000 + b"]" * 1000)
        assert not too_deep(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH)
        assert too_deep(b'{"a":' * (MAX_JSON_DEPTH + 1) + b"1" + b"}" * (MAX_JSON_DEPTH + 1))

    def test_brackets_that_do_not_pair_are_left_to_the_decoder(self) -> None:
        """Unbalanced brackets (not JSON) are not called too deep: the decoder says what is wrong, and where."""
        assert not too_deep(b"[" * 40 + b"]" * 2)
        assert not too_deep(b'"[[["', limit=0)  # brackets in a string alone: nothing nests


class TestParseSeq:
    @given(st.integers(0, MAX_SEQ))
    def test_every_seq_a_store_holds_parses(self, seq: int) -> None:
        """ASCII digits up to 2^63 - 1 are a seq."""
        assert parse_seq(str(seq)) == seq

    @given(st.text(max_size=25))
    def test_anything_else_is_none(self, text: str) -> None:
        """Any text that is not ASCII digits of a seq up to 2^63 - 1 is None (never an exception)."""
        expected = int(text) if text.isascii() and text.isdigit() and 0 < len(text) <= 19 else None
        assert parse_seq(text) == (expected if expected is not None and expected <= MAX_SEQ else None)

    def test_the_hostile_cases(self) -> None:
        """'²' (str.isdigit says yes, int says no), 2^63, a signed number, spaces, a newline."""
        assert [parse_seq(t) for t in ("²", str(MAX_SEQ + 1), "-1", "+1", " 1", "1\n", "")] == [None] * 7


def test_tokens_are_compared_whole() -> None:
    """The creation token matches itself only: not a prefix, not a longer one."""
    assert same_token("omen_create_x", "omen_create_x")
    assert not same_token("omen_create_", "omen_create_x") and not same_token("omen_create_xy", "omen_create_x")


def test_a_page_lets_in_its_own_style_only() -> None:
    """The session log's headers: the table page's policy with the hash of the page's own style block, nosniff,
    and no Referer."""
    headers = page_headers("<html><style>body{}</style><p>&lt;style&gt;x&lt;/style&gt;</p>", "style-src 'self'; "
                           "script-src 'self'")
    assert headers["Content-Security-Policy"].count("'sha256-") == 1
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "no-referrer"


def test_a_failure_is_logged_with_its_traceback_and_a_reference() -> None:
    """log_failure writes one error line naming the request, the error, the traceback, and the reference it
    returns."""
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError as exc:
        with structlog.testing.capture_logs() as logs:
            ref = log_failure(exc, "POST", "/fights")
    assert len(logs) == 1 and logs[0]["log_level"] == "error" and logs[0]["ref"] == ref
    assert logs[0]["path"] == "/fights" and logs[0]["error"] == "ZeroDivisionError"
    assert logs[0]["exc_info"].__traceback__ is not None


def _said_twice(scope: dict[str, object]) -> tuple[str, str] | None:
    """check_once's refusal of ``scope``: (source, name), or None if it passes."""
    try:
        check_once(scope)
    except ValidationException as exc:
        assert isinstance(exc.extra, list)
        return exc.extra[0]["source"], exc.extra[0]["key"]
    return None


class TestCheckOnce:
    @pytest.mark.parametrize(("query", "said"), [
        (b"limit=abc&limit=1", ("query", "limit")), (b"after=1&after=2", ("query", "after")),
        (b"after=1&limit=2&after=1", ("query", "after")), (b"limit=1&limit", ("query", "limit")),
        (b"l%69mit=1&limit=2", ("query", "limit")), (b"after=1&limit=2", None), (b"", None)])
    def test_a_query_parameter_given_twice_is_refused_by_name(self, query: bytes,
                                                              said: tuple[str, str] | None) -> None:
        """A name twice in the query (equal values, a blank one, one percent-encoded included) is refused at
        ``query.<name>``; each name once passes."""
        assert _said_twice({"query_string": query, "headers": []}) == said

    @pytest.mark.parametrize(("headers", "said"), [
        ([(b"authorization", b"Bearer a"), (b"Authorization", b"Bearer b")], ("header", "Authorization")),
        ([(b"idempotency-key", b"k"), (b"idempotency-key", b"k")], ("header", "Idempotency-Key")),
        ([(b"content-type", b"application/json"), (b"content-type", b"text/plain")], ("header", "Content-Type")),
        ([(b"accept", b"a"), (b"accept", b"b"), (b"authorization", b"Bearer a")], None)])
    def test_a_header_omen_reads_given_twice_is_refused_by_name(self, headers: list[tuple[bytes, bytes]],
                                                               said: tuple[str, str] | None) -> None:
        """Authorization, Idempotency-Key or Content-Type twice (names in any case) is refused at
        ``header.<Name>``; a header omen does not read may come twice."""
        assert _said_twice({"query_string": b"", "headers": headers}) == said


@pytest.mark.parametrize("fight_id", ["dup%0A", "%20bad", "a" * 129, "-lead", "sp%20ace"])
def test_a_path_fight_id_that_is_none_is_a_400_before_the_token(fight_id: str) -> None:
    """docs/server.md (Errors, 400): a fight id in the path not matched whole by the id pattern is 400 at
    ``path.fight_id``, whatever the token (a token of another fight was told 403 "this token is for another fight",
    found by a tester); a well-formed unknown id is still 403 to that token."""
    from tests.server.test_app import Table

    table = Table()
    with table.client:
        table.create()
        for headers in (table.auth(), {}):
            answer = table.client.get(f"/fights/{fight_id}/state", headers=headers)
            problem = answer.json()
            assert (answer.status_code, problem["type"], problem["field"]) == (
                400, "/problems/invalid-body", "path.fight_id"), problem
            assert " is not a fight id: " in problem["detail"] and problem["detail"].endswith("(at path.fight_id)")
        assert table.client.get("/fights/nope/state", headers=table.auth()).status_code == 403


@pytest.mark.parametrize(("path", "query", "name"), [("/fights/f/events", b"after=1e1", "after"),
                                                    ("/fights/f/events", b"limit=1.0e1", "limit"),
                                                    ("/fights/f/stream", b"after=%D9%A3", "after"),
                                                    ("/fights", b"limit=+3", "limit")])
def test_a_whole_number_query_parameter_not_in_ascii_digits_is_refused(path: str, query: bytes, name: str) -> None:
    """The OpenAPI document's integers are written in ASCII digits: ``after=1e1`` was read as 10 and ``٣`` (an
    Arabic-Indic digit) as 3, where ``+3`` was refused (a tester): each is 400 at ``query.NAME``; the fights'
    ``after`` (an id) and plain digits pass."""
    from omen_server.guard import check_wholes

    with pytest.raises(ValidationException) as refused:
        check_wholes({"path": path, "query_string": query})
    extra = refused.value.extra
    assert isinstance(extra, list) and len(extra) == 1
    assert (extra[0]["key"], extra[0]["source"]) == (name, "query") and "ASCII digits" in extra[0]["message"]
    check_wholes({"path": "/fights", "query_string": b"after=duel&limit=20"})
    check_wholes({"path": "/fights/f/events", "query_string": b"after=12&limit=100"})


def test_a_seq_in_a_path_not_in_ascii_digits_is_no_route() -> None:
    """``/explain/٣`` was explained as seq 3 (``int()`` reads any Unicode digit): it is 404, as ``/explain/abc``."""
    from litestar.exceptions import NotFoundException

    from omen_server.guard import check_wholes

    with pytest.raises(NotFoundException, match="ASCII digits"):
        check_wholes({"path": "/fights/f/explain/\u0663", "query_string": b""})
    check_wholes({"path": "/fights/f/explain/3", "query_string": b""})
