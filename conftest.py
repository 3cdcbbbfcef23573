"""Test-wide set-up: quiet structlog, hypothesis profiles, the PostgreSQL fixtures (tests/postgres.py), and the
slow tests first.

omen_core never configures logging; tests (here) and the CLI do. On CI
(``CI`` set) hypothesis runs derandomized, so a red build reproduces.
"""

import logging
import os

import pytest
import structlog
from hypothesis import HealthCheck, settings

pytest_plugins = ("tests.postgres",)

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
                    logger_factory=structlog.ReturnLoggerFactory())  # warnings logged, kept off any closed stream

settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("dev"), derandomize=True,
                          database=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` (15 s or more each) first, the rest in their order: under pytest-xdist's worksteal
    (python3 dev.py test) they start at once, and the other tests fill the other workers around them, rather than
    one long test starting last and holding the run open alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
