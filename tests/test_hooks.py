"""The hook points and the extensions' rows (omen_core/hooks.py, omen_core/extensions/): checked, registered, used."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from omen_core.extensions import BY_ID, EXTENSIONS, LANDING, OVERRIDES, ROUTING, pool_dice
from omen_core.hooks import HOOK_POINTS, Choice, Cost, Extension, TermHandler, Window, check_extension

ROOT = Path(__file__).resolve().parent.parent


def _nobody(*_: object) -> tuple[str, ...]:
    return ()


def test_the_shipped_features_are_extensions() -> None:
    """The four sheet features and Veteran Shield Training are each an extension (C37), found at import."""
    assert {"extra_primary_dice", "brute_rage", "rogue_routing", "will_conversion", "veteran_shield"} <= set(BY_ID)
    assert len(pool_dice("hit")) >= 1 and len(pool_dice("damage")) >= 1
    assert ROUTING and LANDING and OVERRIDES


def test_a_row_naming_an_unknown_hook_point_or_total_is_refused_with_where() -> None:
    """A window at a hook point that does not exist, without choices or with a choice twice, and terms on an unknown
    total are each named, with the module and the row."""
    bad = Extension(id="x", name="X", windows=(
        Window(kind="w", title="W", rule="R", hook="attack.nowhere", choices=(), responders=_nobody),
        Window(kind="v", title="V", rule="R", hook="attack.rolled",
               choices=(Choice("a", "a"), Choice("a", "again")), responders=_nobody)),
        terms=(TermHandler(total="luck", terms=lambda s, f: ()),))  # type: ignore[arg-type]
    problems = check_extension(bad, "omen_core.extensions.x")
    assert any("window 'w': unknown hook point 'attack.nowhere'" in p and "attack.rolled" in p for p in problems)
    assert any("window 'w': no choices" in p for p in problems)
    assert any("window 'v': a choice is named twice" in p for p in problems)
    assert any("unknown total 'luck'" in p for p in problems)
    assert check_extension(EXTENSIONS[0], "ok") == []
    assert set(HOOK_POINTS) == {"attack.rolled", "attack.determined"}


@pytest.mark.parametrize(("cost", "words"), [
    (Cost(), "free"), (Cost(bonus_actions=1), "1 Bonus Action"), (Cost(bonus_actions=2), "2 Bonus Actions"),
    (Cost(actions=1, hp=2), "1 Action and 2 HP"), (Cost(movement=1, will=3), "1 Movement Action and 3 Will"),
])
def test_a_cost_in_words(cost: Cost, words: str) -> None:
    """A cost says what it takes, in the rulebook's words."""
    assert cost.words() == words


def _reads_a_feature(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in ("features", "veteran_shield")
            and not (isinstance(node.value, ast.Name) and node.value.id == "self"))


def test_nothing_outside_an_extension_branches_on_a_feature_flag() -> None:
    """The sheet's feature flags (and Veteran Shield Training) are read by their extensions alone (issue 27, item 8):
    the rest of omen's code asks the hook points."""
    found = []
    for package in ("omen_core", "omen_replay", "omen_server", "omen_cli"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("omen_core/extensions/") or relative == "omen_core/content.py":
                continue
            tree = ast.parse(path.read_text())
            found += [f"{relative}:{getattr(n, 'lineno', '?')}" for n in ast.walk(tree) if _reads_a_feature(n)]
    assert found == []
