"""omen's own log lines: structlog loggers that stay silent until the host application configures structlog.

A library must not print. structlog, left unconfigured, prints every line
to standard output; the loggers here check ``structlog.is_configured()``
when they are called and drop the line if the host has not configured it
(the CLI and the server configure it: ``--log-format console|json``).
"""

from __future__ import annotations

from typing import Any

import structlog

__all__ = ["get_logger"]


class _QuietUntilConfigured:
    """A logger proxy: each call goes to ``structlog.get_logger(name)`` only once structlog is configured."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, method: str) -> Any:
        def log(event: str, **fields: Any) -> None:
            if structlog.is_configured():
                getattr(structlog.get_logger(self._name), method)(event, **fields)

        return log


def get_logger(name: str) -> Any:
    """A logger named ``name`` that prints nothing until the host configures structlog."""
    return _QuietUntilConfigured(name)
