"""omen_server/limits.py: every bound of the server is in docs/server.md's table of limits, with its value, and the
OpenAPI document states the bounds of the bodies it describes."""

from __future__ import annotations

import re
from pathlib import Path

from omen_server import limits
from tests.server.test_openapi import SCHEMA

DOC = Path(__file__).resolve().parents[2] / "docs" / "server.md"


def test_every_limit_is_in_the_docs_table_with_its_value() -> None:
    """Each name of limits.__all__ has a row of the "Limits" table whose value cell starts with its value."""
    section = DOC.read_text(encoding="utf-8").split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| ([^|]+) \|", section, flags=re.M))
    assert set(rows) == set(limits.__all__)
    for name in limits.__all__:
        assert rows[name].strip().startswith(str(getattr(limits, name))), (name, rows[name])


def test_the_openapi_document_states_the_bounds() -> None:
    """The served document bounds the title, notes, roster, seat lists and the seqs as limits.py does."""
    parts = SCHEMA.raw_schema["components"]["schemas"]
    fight = parts["CreateFight"]["properties"]
    assert fight["title"]["maxLength"] == limits.MAX_TITLE
    assert fight["combatants"]["maxItems"] == limits.MAX_COMBATANTS
    assert fight["notes"]["additionalProperties"]["maxLength"] == limits.MAX_NOTE
    assert parts["NewSeat"]["properties"]["combatants"]["maxItems"] == limits.MAX_COMBATANTS
    assert parts["NewSeat"]["properties"]["name"]["maxLength"] == limits.MAX_NAME
    events = SCHEMA.raw_schema["paths"]["/fights/{fight_id}/events"]["get"]["parameters"]
    after = next(p for p in events if p["name"] == "after")["schema"]
    assert after["maximum"] == limits.MAX_SEQ and isinstance(after["maximum"], int)
