"""omen's own log lines: structlog loggers that stay silent until the host application configures structlog.

A library must not print. structlog, left unconfigured, prints every line
to standard output; the loggers here check ``structlog.is_configured()``
when they are called and drop the line if the host has not configured it
(the CLI and the server configure it: ``--log-format console|json``).
"""

from __future__ import annotations

import operator
import sys
from typing import Any

__all__ = ["get_logger", "host_processors"]


def _structlog() -> Any:
    """structlog if the host has imported it (and so may have configured it), else None: omen does not import it
    itself, so a program that never logs never pays for its import (a tenth of a second: ``omen --help``)."""
    return sys.modules.get("structlog")


def _configured() -> bool:
    found = _structlog()
    return found is not None and bool(found.is_configured())


class _QuietUntilConfigured:
    """A logger proxy: each call goes to a logger bound from ``structlog.get_logger(name)`` only once structlog is
    configured. The bound logger is kept while structlog's configuration is the same objects (binding one costs
    more than a filtered-out line), and bound again when the host configures structlog anew."""

    def __init__(self, name: str):
        self._name = name
        self._config: tuple[Any, ...] = ()
        self._bound: Any = None

    def _logger(self) -> Any:
        structlog = _structlog()
        config = tuple(structlog.get_config().values())
        if not _same(self._config, config):
            self._bound, self._config = structlog.get_logger(self._name).bind(), config
        return self._bound

    @staticmethod
    def on() -> bool:
        """Whether a line logged now would go anywhere (the host has configured structlog): a caller that builds
        costly fields asks first."""
        return _configured()

    def __getattr__(self, method: str) -> Any:
        def log(event: str, **fields: Any) -> None:
            if _configured():
                getattr(self._logger(), method)(event, **fields)

        setattr(self, method, log)
        return log


def _same(kept: tuple[Any, ...], config: tuple[Any, ...]) -> bool:
    """Whether two configurations are the same objects, one by one (an equal copy is not the same)."""
    return len(kept) == len(config) and all(map(operator.is_, kept, config))


def get_logger(name: str) -> Any:
    """A logger named ``name`` that prints nothing until the host configures structlog."""
    return _QuietUntilConfigured(name)


#: The libraries whose standard-library loggers a host that configures omen's logging routes into omen's own lines
#: (:func:`route_library_logs`): psycopg's pool warns two or three times a request while a database is away.
LIBRARY_LOGGERS = ("psycopg",)


def route_library_logs(json: bool, level: str, stream: Any) -> None:
    """Send the :data:`LIBRARY_LOGGERS`' records to ``stream`` in the host's format (one JSON object a line under
    ``--log-format json``: they came as Python's plain multi-line warnings, breaking a JSON log pipeline, found by
    an operator tester), at ``level`` when it is ``debug``, else their errors alone (omen says an unreachable
    store itself, once a minute: docs/stores.md)."""
    import logging

    import structlog

    *chain, renderer = host_processors(json)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=chain, processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer]))
    shown = logging.DEBUG if level.lower() == "debug" else logging.ERROR
    for name in LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        library.handlers[:] = [handler]
        library.setLevel(shown)
        library.propagate = False


def host_processors(json: bool, colors: bool = False) -> list[Any]:
    """The structlog processors the CLI and the server configure (``--log-format console|json``): the level, an
    ISO time in UTC, and one line per event, human or JSON. A traceback is printed plain, without the values of
    its frames' variables: structlog's console renderer shows them by default where ``rich`` is installed, and
    in the server they held bearer tokens (a request's headers) and GM-only facts (a fight's notes, its hidden
    state), which a log must never (a tester's 500)."""
    import structlog

    renderer = (structlog.processors.JSONRenderer() if json
                else structlog.dev.ConsoleRenderer(colors=colors, exception_formatter=structlog.dev.plain_traceback))
    return [structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
            *([structlog.processors.format_exc_info] if json else []), renderer]
