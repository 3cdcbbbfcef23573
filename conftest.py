"""Test-wide set-up: quiet structlog (omen_core never configures it; tests and the CLI do)."""

import logging

import structlog

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
