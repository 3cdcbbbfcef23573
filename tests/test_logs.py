"""``omen_core.logs``: silent until the host configures structlog, then each line goes to the configuration in force
when it is logged (the bound logger is kept between lines, and bound again when the configuration changes)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from structlog.typing import EventDict

from omen_core.logs import get_logger


@pytest.fixture
def restored() -> Iterator[None]:
    """structlog at its defaults for the test, then put back as the test found it."""
    was, config = structlog.is_configured(), structlog.get_config()
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
    if was:
        structlog.configure(**config)


class Recorder:
    """A structlog processor that keeps every event dict and drops the line."""

    def __init__(self) -> None:
        self.lines: list[EventDict] = []

    def __call__(self, logger: Any, method: str, event: EventDict) -> Any:
        self.lines.append(event)
        raise structlog.DropEvent


class TestQuietUntilConfigured:
    def test_nothing_is_printed_before_structlog_is_configured(self, restored: None,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
        """An unconfigured structlog prints every line; omen's loggers drop them instead."""
        get_logger("omen.test").info("unseen", n=1)
        assert capsys.readouterr() == ("", "")

    def test_a_configured_host_gets_every_line_with_its_fields(self, restored: None) -> None:
        """Once configured, each call reaches the host's processors, with its event and fields."""
        rec = Recorder()
        structlog.configure(processors=[rec])
        log = get_logger("omen.test")
        log.info("first", n=1)
        log.info("second", n=2)
        assert [(e["event"], e["n"]) for e in rec.lines] == [("first", 1), ("second", 2)]

    def test_a_new_configuration_takes_effect_at_the_next_line(self, restored: None) -> None:
        """The logger kept between lines is bound again when the host configures structlog anew: a debug line
        filtered out at WARNING comes through once the level is DEBUG, and goes to the new processors."""
        first, second = Recorder(), Recorder()
        structlog.configure(processors=[first], wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
        log = get_logger("omen.test")
        log.debug("filtered")
        log.warning("kept")
        structlog.configure(processors=[second], wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
        log.debug("now seen")
        assert [e["event"] for e in first.lines] == ["kept"]
        assert [e["event"] for e in second.lines] == ["now seen"]

    def test_capture_logs_sees_the_lines_of_a_logger_used_before(self, restored: None) -> None:
        """structlog's ``capture_logs`` swaps the processors in place: a logger that logged before still reaches it."""
        structlog.configure(processors=[Recorder()])
        log = get_logger("omen.test")
        log.info("before")
        with structlog.testing.capture_logs() as captured:
            log.info("during", n=3)
        assert [(e["event"], e["n"]) for e in captured] == [("during", 3)]


class TestOn:
    def test_on_says_whether_a_line_would_go_anywhere(self, restored: None) -> None:
        """``on()`` is False until the host configures structlog and True after, so a caller builds costly fields
        only for a host that logs; the engine's events_appended line then carries its command tags."""
        from omen_core.dice import SeededDice
        from omen_core.engine import Fight
        from omen_core.store.memory import MemoryStore

        log = get_logger("omen.test")
        assert log.on() is False
        rec = Recorder()
        structlog.configure(processors=[rec])
        assert log.on() is True
        Fight.start(MemoryStore(), "f-1", dice=SeededDice(bytes(32)))
        appended = [e for e in rec.lines if e["event"] == "events_appended"]
        assert appended and appended[0]["commands"] == ["start_fight"]


@pytest.mark.parametrize("json_format", [False, True])
def test_a_traceback_is_logged_without_the_values_of_its_variables(json_format: bool, restored: None,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's and the server's processors (``host_processors``) print a failure's traceback, its exception and
    where it was raised, but never the values its frames held: the console renderer showed them (rich installed),
    and a server's 500 wrote a request's bearer token and the GM's notes to its log (a tester)."""
    from omen_core.logs import host_processors

    structlog.configure(processors=host_processors(json=json_format),
                        logger_factory=structlog.PrintLoggerFactory(), cache_logger_on_first_use=False)

    secret = "".join(("SEC", "RET"))  # (not in any source line a traceback quotes)

    def answer(authorization: str) -> None:
        note = f"{secret}-NOTE"  # noqa: F841 - a local the traceback must not print
        raise KeyError("lost")

    try:
        answer(f"Bearer omen_gm_{secret}-TOKEN")
    except KeyError as exc:
        get_logger("omen.test").error("internal error", exc_info=exc)
    said = capsys.readouterr().out
    assert "Traceback" in said and "KeyError" in said and "in answer" in said
    assert "SECRET" not in said


def test_a_librarys_log_lines_come_in_the_hosts_format() -> None:
    """docs/stores.md: psycopg's pool warnings reached the CLI's and the server's standard error as Python's plain
    multi-line text, breaking a JSON log (an operator tester); routed, an error is one JSON object, a warning is
    shown under debug alone, and nothing goes to the root logger."""
    import io
    import json
    import logging

    from omen_core.logs import route_library_logs

    library = logging.getLogger("psycopg.pool")
    saved = (logging.getLogger("psycopg").handlers[:], logging.getLogger("psycopg").level,
             logging.getLogger("psycopg").propagate)
    try:
        for level, shown in (("warning", ["error"]), ("debug", ["warning", "error"])):
            stream = io.StringIO()
            route_library_logs(True, level, stream)
            library.warning("error connecting in 'omen': %s", "no such host")
            library.error("the pool is closed")
            lines = [json.loads(line) for line in stream.getvalue().splitlines()]
            assert [line["level"] for line in lines] == shown, lines
            assert lines[-1]["event"] == "the pool is closed" and "timestamp" in lines[-1]
            assert logging.getLogger("psycopg").propagate is False
    finally:
        psycopg = logging.getLogger("psycopg")
        psycopg.handlers[:], psycopg.level, psycopg.propagate = saved
