"""Tests of omen_cli: the omen command line."""
