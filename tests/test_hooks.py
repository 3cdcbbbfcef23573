"""The hook points and the extensions' rows (omen_core/hooks.py, omen_core/extensions/): checked, registered, used."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from omen_core.content import SHORTHANDS, AbilityLibrary, DealDamage, decode_content
from omen_core.decisions import DECISION_POINTS
from omen_core.errors import ContentError
from omen_core.extensions import BY_ID, EXTENSIONS
from omen_core.hooks import (
    BUILT_IN_DECISIONS,
    CHOICE_EFFECTS,
    HOOK_POINTS,
    Choice,
    Cost,
    Extension,
    Moment,
    TermHandler,
    Window,
    check_extension,
)

ROOT = Path(__file__).resolve().parent.parent


def _nobody(*_: object) -> tuple[str, ...]:
    return ()


def test_the_shipped_features_are_data_not_modules() -> None:
    """The four sheet features and Veteran Shield Training are shipped abilities written as data (C37), not Python
    modules: no module under omen_core/extensions/ is one of them, and Arcane Ward, the example of an extension
    written in Python, is one (a maintainer's own extension, added as docs/architecture.md says, is let be: the
    test listed the modules, and failed on it)."""
    shorthands = {"brute_rage", "extra_primary_die", "two_extra_primary_dice", "rogue_routing",
                  "veteran_shield_training", "will_conversion", "will_conversion_choice"}
    assert all(any(ability in said for said in SHORTHANDS.values()) for ability in shorthands)
    assert "arcane_ward" in BY_ID and not set(BY_ID) & shorthands


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
    assert set(HOOK_POINTS) == {"attack.declared", "attack.rolled", "attack.determined", "attack.damaged",
                                "save.resolved", "move.left", "condition.applied", "check.resolved", "turn.start",
                                "turn.end", "round.end"}


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


def _riposte_responders(state: Any, frame: Any, moment: Moment) -> tuple[str, ...]:
    """The target of a melee attack that missed (a riposte-like window: C38's "on a miss")."""
    return (frame.declaration.target,) if moment.hit is False else ()


RIPOSTE = Extension(id="riposte_test", name="Riposte (test)", keys="none: always in play, for the test", windows=(
    Window(kind="riposte_test", title="Riposte", rule="C38", hook="attack.determined",
           choices=(Choice("riposte", "answer the miss", cost=Cost(bonus_actions=1)), Choice("pass", "let it be")),
           responders=_riposte_responders),))


@pytest.fixture
def riposte(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry as if a module declared RIPOSTE (a window at the hook point attack.determined), for one test."""
    import omen_core.extensions as registry

    monkeypatch.setattr(registry, "_AT", {**registry._AT, "attack.determined": ((RIPOSTE, RIPOSTE.windows[0]),)})
    monkeypatch.setattr(registry, "WINDOWS", {**registry.WINDOWS, "riposte_test": RIPOSTE.windows[0]})


@pytest.mark.parametrize(("faces", "asked"), [([1, 1, 6], True), ([6, 6, 1], False)])
def test_a_window_at_attack_determined_opens_on_a_miss_and_the_attack_goes_on_after_it(
        riposte: None, faces: list[int], asked: bool) -> None:
    """A window at the hook point attack.determined (after hit and crit, C5, C7) is offered when its row says (here:
    a miss, 1 + 1 = 2 against 6 + 0), the attack waits on it, and once answered the attack settles from there
    (C25: nothing to resolve on a miss); on a hit (12 against 1) it is not offered and the defender is asked to
    defend as always (C8)."""
    from omen_core.events import ActionSettled, ActiveDefenseWindowOpened, DecisionOpened, HitDetermined
    from tests.fights import assert_replays, new_fight
    from tests.sheets import sheet

    fight = new_fight(sheet("orc", side="raiders"), sheet("ana"), faces=faces)
    fight.attack("orc", "ana", unarmed=True)
    hit = next(r.event for r in fight.events if isinstance(r.event, HitDetermined)) \
        if any(isinstance(r.event, HitDetermined) for r in fight.events) else None
    if not asked:
        assert not any(isinstance(r.event, DecisionOpened) for r in fight.events)
        assert isinstance(fight.waiting_for, ActiveDefenseWindowOpened)
        return
    assert hit is not None and not hit.hit
    opened = fight.waiting_for
    assert isinstance(opened, DecisionOpened) and opened.hook == "attack.determined" and opened.responders == ("ana",)
    events = fight.answer_decision("riposte_test", "ana", "riposte")
    assert isinstance(events[-1], ActionSettled) and fight.state.at_rest
    assert fight.state.combatants["ana"].bonus_actions == 1
    assert_replays(fight)


def _spite_responders(state: Any, frame: Any, moment: Moment) -> tuple[str, ...]:
    """Bram, whenever the orc's attack is determined."""
    return ("bram",) if frame.declaration.attacker == "orc" else ()


SPITE = Extension(id="spite_test", name="Spite (test)", keys="none: always in play, for the test", windows=(
    Window(kind="spite_test", title="Spite", rule="C38", hook="attack.determined",
           choices=(Choice("burn", "2 fire to the attacker", cost=Cost(bonus_actions=1),
                           consequences=(DealDamage(flat=2, damage_type="fire"),)),
                    Choice("pass", "let it be")),
           responders=_spite_responders),))


def test_an_extensions_choice_acting_on_another_waits_for_its_owners_first_turn(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """C20, §The First Round ("2 Bonus Actions available to use defensively before their first turn"): an
    extension's choice paid in Bonus Actions that acts on another (2 fire to the attacker) is not offered before its
    owner's first turn, and its answer is refused, as the same ability written as data is not offered (a maintainer's
    Spite burned the orc in round 1 before Bram had acted); once Bram has had a turn it is offered and deals its 2."""
    import omen_core.extensions as registry
    from omen_core.events import DecisionOpened
    from tests.fights import new_fight
    from tests.sheets import sheet

    monkeypatch.setattr(registry, "_AT", {**registry._AT, "attack.determined": ((SPITE, SPITE.windows[0]),)})
    monkeypatch.setattr(registry, "WINDOWS", {**registry.WINDOWS, "spite_test": SPITE.windows[0]})
    fight = new_fight(sheet("orc", side="raiders"), sheet("ana"), sheet("bram"),
                      faces=[6, 3, 1, 1, 1, 6, 1, 1, 6])  # initiative orc, ana, bram; the orc misses twice
    fight.roll_initiative()
    fight.attack("orc", "ana", unarmed=True)  # round 1: 1 + 1 against 6: a miss; Bram has had no turn
    assert not any(isinstance(r.event, DecisionOpened) for r in fight.events)
    assert fight.state.at_rest
    for who in ("orc", "ana", "bram"):
        fight.end_turn(who)
    fight.attack("orc", "ana", unarmed=True)  # round 2: Bram has had his turn
    fight.pass_reaction("ana")  # (Ana, engaged, may Interrupt now that she has had her turn: C24)
    opened = fight.waiting_for
    assert isinstance(opened, DecisionOpened) and opened.responders == ("bram",)
    hp = fight.state.combatants["orc"].hp
    fight.answer_decision("spite_test", "bram", "burn")
    assert fight.state.combatants["orc"].hp == hp - 2


def test_the_built_in_decision_kinds_are_the_decision_points() -> None:
    """The kinds the registry keeps from extensions' windows are those of omen_core.decisions' rows (it sits above
    hooks, so hooks lists them)."""
    assert tuple(dict.fromkeys(p.kind for p in DECISION_POINTS)) == BUILT_IN_DECISIONS


_OWNER = {"save.resolved": "saver", "move.left": "left_behind", "condition.applied": "afflicted",
          "check.resolved": "self", "turn.start": "self", "turn.end": "self", "round.end": "self"}


@pytest.mark.parametrize("hook", list(HOOK_POINTS))
def test_a_choice_may_do_at_each_hook_point_what_an_ability_written_as_data_may(hook: str) -> None:
    """A window's choice may carry consequences, or an attack, at exactly the hook points where an ability written as
    data may do them (docs/abilities.md's table): one rule for both."""
    def accepted(effect: str) -> bool:
        text = (f'[abilities.a]\nname = "A"\nsummary = "a"\nuse = "trigger"\n'
                f'trigger = {{ moment = "{hook}", owner = "{_OWNER.get(hook, "target")}" }}\neffects = [{effect}]\n')
        try:
            decode_content(text.encode(), AbilityLibrary, source="a.toml", fmt="toml")
        except ContentError:
            return False
        return True

    assert accepted('{ kind = "heal", to = "actor", flat = 1 }') == ("consequences" in CHOICE_EFFECTS[hook])
    assert accepted('{ kind = "attack" }') == ("attack" in CHOICE_EFFECTS[hook])
