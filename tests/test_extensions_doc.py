"""docs/extensions.md is true: every name it shows imports, its example extension loads clean, and the fields,
hook points and failure it lists are the code's."""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from omen_core import hooks
from omen_core.errors import OmenError
from omen_core.hooks import HOOK_POINTS, Extension, ExtensionFailed, ExtensionInvalid, Moment, check_extension

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "extensions.md").read_text()
PYTHON = re.findall(r"```python\n(.*?)```", PAGE, re.S)


def _table(heading: str) -> dict[str, str]:
    """The rows of the table whose header line is ``heading``: each row's first cell (its backticked name) to its
    second."""
    lines = PAGE[PAGE.index(heading):].splitlines()[2:]
    rows = lines[:next((i for i, x in enumerate(lines) if not x.startswith("|")), len(lines))]
    found = [re.match(r"^\| `([^`]+)` \| (.*) \|$", row) for row in rows]
    return {m.group(1): m.group(2) for m in found if m is not None}


def test_every_dotted_name_the_page_shows_imports() -> None:
    """Each ``omen_core.module.Name`` the page names in backticks is there."""
    named = set(re.findall(r"`(omen_core(?:\.[a-z_]+)+)\.([A-Z][A-Za-z_]+)`", PAGE))
    assert len(named) >= 6
    for module, name in sorted(named):
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"


def test_every_import_of_the_example_works_and_the_example_loads_clean() -> None:
    """The page's example extension runs as a module would, and the registry's check finds nothing wrong with it:
    its id and name given, its window at a hook point, its handlers callable."""
    (example,) = PYTHON
    space: dict[str, object] = {"__name__": "docs_example"}
    exec(compile(example, "docs/extensions.md", "exec"), space)
    extension = space["EXTENSION"]
    assert isinstance(extension, Extension) and (extension.id, extension.name) == ("shield_wall", "Shield Wall")
    assert check_extension(extension, "docs_example") == []
    assert [c.name for c in extension.windows[0].choices] == ["brace", "pass"]


def test_the_rows_table_lists_every_field_of_every_row() -> None:
    """Each row of "The rows" is a dataclass of omen_core.hooks whose fields the page lists, every one of them."""
    rows = _table("| row | fields |")
    assert set(rows) >= {"Extension", "Window", "Choice", "Cost", "TermHandler", "PoolDice", "AutoReroll",
                         "AttackOption", "DefenseOverride", "Routing", "Landing", "TurnAction"}
    for name, fields in rows.items():
        row = getattr(hooks, name)
        for field in dataclasses.fields(row):
            assert f"`{field.name}" in fields or f"{field.name}(" in fields or f"`{field.name}:" in fields, (
                f"{name}.{field.name}")


def test_the_moment_table_is_the_moment() -> None:
    """"The hook points and the moment" lists Moment's fields, all of them, in order."""
    assert [f.split(":")[0] for f in _table("| field | meaning |")] == list(Moment._fields)


def test_the_hook_points_named_are_the_hook_points() -> None:
    """The page names every hook point there is, in their order."""
    said = PAGE[PAGE.index("## The hook points"):PAGE.index("`responders` is handed")]
    assert re.findall(r"`([a-z]+\.[a-z]+)`", said) == list(HOOK_POINTS)


@pytest.mark.parametrize("error", [ExtensionFailed, ExtensionInvalid])
def test_the_errors_the_page_names_are_omen_errors(error: type[Exception]) -> None:
    """ExtensionFailed and ExtensionInvalid are OmenErrors (the CLI's one line, exit 2), and the failure's sample
    line is the error's own wording."""
    assert issubclass(error, OmenError)
    failed = ExtensionFailed("shield_wall", "omen_core.extensions.shield_wall", "terms on defense", "KeyError",
                             "'boom in terms'")
    assert f"omen: error: {failed}" in PAGE


def test_the_table_of_what_a_choice_may_do_is_the_registrys() -> None:
    """"What a choice may do at each hook point" lists every hook point, in order, with what CHOICE_EFFECTS lets a
    choice carry there (nothing but its cost, where it lets nothing)."""
    table = _table("| hook point | a choice may carry |")
    assert list(table) == list(HOOK_POINTS)
    for hook, said in table.items():
        assert set(re.findall(r"`([a-z]+)`", said)) == set(hooks.CHOICE_EFFECTS[hook]), hook


def test_every_built_in_decision_kind_the_refusals_name_is_refused() -> None:
    """The built-in decision kinds "What the registry refuses" lists are the registry's, all of them."""
    said = PAGE[PAGE.index("a built-in decision point's (`omen_core.hooks.BUILT_IN_DECISIONS`"):]
    said = said[:said.index(") or a shipped ability's id")]
    assert re.findall(r"`([a-z_]+)`", said) == list(hooks.BUILT_IN_DECISIONS)
