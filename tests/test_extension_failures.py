"""A broken extension (omen_core/hooks.py, omen_core/extensions/): refused at load naming the module and the row, and
failing at run time as one ExtensionFailed naming the extension, its module and the row, nothing written."""

from __future__ import annotations

import dataclasses
import pickle
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from omen_core import Fight, MemoryStore, OmenError, ScriptedDice
from omen_core import extensions as registry
from omen_core.extensions import arcane_ward
from omen_core.hooks import ExtensionFailed, ExtensionInvalid, TermHandler, Window, guarded
from omen_core.options import options
from omen_core.parts import Modifier
from omen_core.state import FightState, Frame
from tests.sheets import sheet

MODULE = "tests.broken_ward"

# -- at load ---------------------------------------------------------------------------------------------------

def _ward(ext_id: str = "ward", hook: str = "attack.rolled", choices: str = "(Choice('a', 'a'),)",
          responders: str = "lambda s, f, m: ()", kind: str = "w", rule: str = "'C38'", title: str = "'W'",
          kinds: int = 1) -> str:
    """An extension module's text: ``kinds`` windows of kind ``kind`` at ``hook`` with ``choices`` and
    ``responders`` (``rule`` and ``title`` as Python expressions)."""
    window = (f"Window(kind={kind!r}, title={title}, rule={rule}, hook={hook!r}, choices={choices}, "
              f"responders={responders})")
    return ("from omen_core.content import ApplyCondition, ClearCondition, DealDamage, Heal, MakeAttack, Reroll\n"
            "from omen_core.hooks import Choice, Cost, Extension, Window\n\n"
            f"EXTENSION = Extension(id={ext_id!r}, name='Ward', windows=({', '.join([window] * kinds)},))\n")


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str) -> str:
    """A module ``extpkg.NAME`` of ``text`` in a fresh package on the path; its full name."""
    package = tmp_path / "extpkg"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for loaded in [m for m in sys.modules if m == "extpkg" or m.startswith("extpkg.")]:
        monkeypatch.delitem(sys.modules, loaded)
    return f"extpkg.{name}"


class TestAtLoad:
    def test_a_good_module_loads_guarded(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A module with a good EXTENSION loads, its window's responders guarded (the original kept as
        ``__wrapped__``)."""
        name = _module(tmp_path, monkeypatch, "good", _ward())
        (loaded,) = registry._load([name])
        assert loaded.id == "ward" and loaded.windows[0].responders.__wrapped__ is not None  # type: ignore[attr-defined]

    @pytest.mark.parametrize(("text", "said"), [
        (_ward(hook="attack.bogus"), "window 'w': unknown hook point 'attack.bogus' (hook points: attack.declared"),
        (_ward(choices="()"), "window 'w': no choices"),
        (_ward(responders="None"), "window 'w' responders: None is not callable"),
        (_ward(ext_id=""), "EXTENSION: id '' is not a non-empty string"),
        ("raise RuntimeError('shield wall failed to import')\n",
         "importing it raised RuntimeError: shield wall failed to import"),
        ("X = 1\n", "EXTENSION: none declared, not an omen_core.hooks.Extension"),
        ("import sys\nsys.exit(0)\n", "importing it raised SystemExit: 0"),
    ])
    def test_a_bad_module_is_refused_in_one_line_naming_it_and_the_row(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, said: str) -> None:
        """A bad row, an import that raises and no EXTENSION are each ExtensionInvalid, an OmenError, its one-line
        message naming the module and the row."""
        name = _module(tmp_path, monkeypatch, "bad", text)
        with pytest.raises(ExtensionInvalid) as refused:
            registry._load([name])
        assert isinstance(refused.value, OmenError) and refused.value.module == "extpkg.bad"
        assert str(refused.value).startswith(f"extension extpkg.bad cannot be loaded: {said}")
        assert "\n" not in str(refused.value)

    def test_two_modules_sharing_an_id_are_both_named(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
        """Two modules whose extensions share an id are refused naming both modules and the id."""
        first = _module(tmp_path, monkeypatch, "one", _ward())
        (tmp_path / "extpkg" / "two.py").write_text(_ward())
        with pytest.raises(ExtensionInvalid) as refused:
            registry._load([first, "extpkg.two"])
        assert str(refused.value) == ("extension extpkg.one and extpkg.two cannot be loaded: EXTENSION: both have "
                                      "the id 'ward' (an id names one extension: rename one)")

    def test_two_modules_sharing_a_window_kind_are_both_named(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
        """Two extensions of different ids whose windows share a kind are refused naming both modules and the kind
        (an answer names its window by kind: the other's choice would be applied)."""
        first = _module(tmp_path, monkeypatch, "one", _ward(ext_id="one"))
        (tmp_path / "extpkg" / "two.py").write_text(_ward(ext_id="two"))
        with pytest.raises(ExtensionInvalid) as refused:
            registry._load([first, "extpkg.two"])
        assert str(refused.value) == ("extension extpkg.one and extpkg.two cannot be loaded: window 'w': both "
                                      "declare a window of kind 'w' (answer_decision names a window by its kind: "
                                      "rename one)")

    @pytest.mark.parametrize(("field", "said"), [
        ("fury", "attack option 'fury': field 'fury' is not a yes-or-no argument of declare_attack an ability may "
                 "give meaning to (rage): a command could never set it"),
        ("unarmed", "attack option 'unarmed': field 'unarmed' is not a yes-or-no argument"),
        ("target", "attack option 'target': field 'target' is not a yes-or-no argument"),
    ])
    def test_an_attack_option_on_no_argument_of_the_attack_is_refused(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, said: str) -> None:
        """An attack option naming no yes-or-no argument of declare_attack (a made-up one, which no command could
        set; unarmed, the core rules'; a combatant's id) is refused at load, naming the module and the option (it
        loaded, and was found only when an attack was declared)."""
        text = ("from omen_core.hooks import AttackOption, Extension\n\n"
                f"EXTENSION = Extension(id='fury', name='Fury', attack_options=(AttackOption(field={field!r}, "
                "offered=lambda s, w: True, rule='C37', refusal=lambda w: 'no fury'),))\n")
        name = _module(tmp_path, monkeypatch, "fury", text)
        with pytest.raises(ExtensionInvalid) as refused:
            registry._load([name])
        assert str(refused.value).startswith(f"extension extpkg.fury cannot be loaded: {said}")

    @pytest.mark.parametrize(("text", "said"), [
        (_ward(kind="active_defense"),
         "window 'active_defense': kind 'active_defense' is a built-in decision point's (omen_core.decisions: "
         "active_defense, interrupt, attack_of_opportunity, catch, routing, will_conversion, initiative_tie)"),
        (_ward(kind="catch"), "window 'catch': kind 'catch' is a built-in decision point's"),
        (_ward(ext_id="riposte", kind="mine"),
         "EXTENSION: id 'riposte' is a shipped ability's (omen_core/data/abilities.toml): a sheet listing "
         "'riposte' would get the extension, not the ability: rename it"),
        (_ward(kind="regeneration"),
         "window 'regeneration': kind 'regeneration' is a shipped ability's decision point "
         "(omen_core/data/abilities.toml): rename it"),
        (_ward(kinds=2), "window 'w': the kind is used by two windows"),
        (_ward(rule="38"), "window 'w': rule 38 is int, not a string"),
        (_ward(title="None"), "window 'w': title None is NoneType, not a string"),
        (_ward(choices="(Choice('pass', 7),)"), "window 'w' choice 'pass': label 7 is int, not a string"),
        (_ward(choices="(Choice(3, 'x'),)"), "window 'w' choice 3: name 3 is int, not a non-empty string"),
        (_ward(choices="(Choice('a', 'a', closes=1),)"), "window 'w' choice 'a': closes 1 is int, not a bool"),
        (_ward(choices="(Choice('a', 'a', cost=Cost(bonus_actions='1')),)"),
         "window 'w' choice 'a': cost: bonus_actions '1' is str, not a whole number 0 or more"),
        (_ward(choices="(Choice('a', 'a', cost=Cost(hp=-1)),)"),
         "window 'w' choice 'a': cost: hp -1 is int, not a whole number 0 or more"),
        (_ward(choices="(Choice('a', 'a', cost=1),)"), "window 'w' choice 'a': cost 1 is int, not a Cost"),
        (_ward(hook="turn.start", choices="(Choice('a', 'a', consequences=(Heal(to='actor', flat='two'),)),)"),
         "window 'w' choice 'a': consequences[0]: Expected `int`, got `str` - at `$.flat`"),
        (_ward(hook="turn.start", choices="(Choice('a', 'a', consequences=(Heal(to='all', flat=2),)),)"),
         "window 'w' choice 'a': consequences[0]: Invalid enum value 'all' - at `$.to`"),
        (_ward(hook="turn.start", choices="(Choice('a', 'a', consequences=Heal(to='actor', flat=2)),)"),
         "window 'w' choice 'a': consequences is Heal, not a tuple of consequences"),
        (_ward(hook="turn.start", choices="(Choice('a', 'a', consequences=(ApplyCondition(condition='Dying'),)),)"),
         "window 'w' choice 'a': consequences[0]: Dying follows HP: it is set when HP reaches 0 (C28) and ends when "
         "HP rises above 0 (C36), never by a condition effect: deal damage or heal instead"),
        (_ward(hook="turn.start", choices="(Choice('a', 'a', consequences=(ClearCondition(condition='Dying'),)),)"),
         "window 'w' choice 'a': consequences[0]: Dying follows HP"),
        (_ward(hook="turn.start", choices="(Choice('a', 'a', consequences=(Cost(),)),)"),
         "window 'w' choice 'a': consequences[0]: Cost is not a consequence (DealDamage, ApplyCondition, "
         "ClearCondition, Heal)"),
        (_ward(hook="attack.rolled", choices="(Choice('bleed', 'b', consequences=(DealDamage(to='actor', flat=1, "
                                              "damage_type='slashing'),)),)"),
         "window 'w' choice 'bleed': consequences at attack.rolled: the attack's step there takes none (damage, "
         "heal, condition and clear are done at attack.determined, attack.damaged, save.resolved, move.left, "
         "condition.applied, check.resolved, turn.start, turn.end, round.end; docs/abilities.md)"),
        (_ward(hook="attack.declared", choices="(Choice('a', 'a', consequences=(Heal(flat=1),)),)"),
         "window 'w' choice 'a': consequences at attack.declared"),
        (_ward(hook="turn.start", choices="(Choice('a', 'a', attack=MakeAttack()),)"),
         "window 'w' choice 'a': an attack at turn.start: an attack answers an attack (attack.determined, "
         "attack.damaged; C38)"),
        (_ward(hook="attack.determined", choices="(Choice('a', 'a', rerolls=(Reroll(pool='primary'),)),)"),
         "window 'w' choice 'a': rerolls at attack.determined: a chosen reroll of the hit dice comes once they are "
         "seen (attack.rolled; C39)"),
    ])
    def test_a_row_the_engine_could_not_play_is_refused_naming_it(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, said: str) -> None:
        """A window kind that is a built-in decision point's or a shipped ability's, an id that is a shipped
        ability's, a field of the wrong type its events would record, a consequence its struct refuses, and a
        consequence, attack or reroll at a hook point whose step cannot take it are each refused at load, naming
        the module and the row."""
        name = _module(tmp_path, monkeypatch, "bad", text)
        with pytest.raises(ExtensionInvalid) as refused:
            registry._load([name])
        assert str(refused.value).startswith(f"extension extpkg.bad cannot be loaded: {said}")
        assert "\n" not in str(refused.value)

    @pytest.mark.parametrize("hook", ["attack.determined", "attack.damaged", "save.resolved", "move.left",
                                      "condition.applied", "check.resolved", "turn.start", "turn.end", "round.end"])
    def test_consequences_load_where_the_step_takes_them(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         hook: str) -> None:
        """A choice's consequences load at every hook point whose lifecycle step takes them."""
        name = _module(tmp_path, monkeypatch, "fine", _ward(hook=hook, choices=(
            "(Choice('a', 'a', consequences=(Heal(to='actor', flat=2),)), Choice('pass', 'no'))")))
        (loaded,) = registry._load([name])
        assert loaded.windows[0].choices[0].consequences[0].flat == 2  # type: ignore[union-attr]


# -- at run time -----------------------------------------------------------------------------------------------


def _install(monkeypatch: pytest.MonkeyPatch, responders: Any = None, terms: Any = None) -> None:
    """Arcane Ward, its responders or its term handler replaced, guarded as module ``tests.broken_ward``, in the
    registry's tables in its place (sheets list it as ``arcane_ward``)."""
    shipped = arcane_ward.EXTENSION
    window = shipped.windows[0]
    broken = guarded(dataclasses.replace(
        shipped, windows=(dataclasses.replace(window, responders=responders or window.responders),),
        terms=(TermHandler(total="defense", terms=terms or shipped.terms[0].terms),)), MODULE)
    monkeypatch.setattr(registry, "_AT", {"attack.rolled": ((broken, broken.windows[0]),)})
    monkeypatch.setattr(registry, "WINDOWS", {window.kind: broken.windows[0]})
    monkeypatch.setattr(registry, "_TERMS", {**registry._TERMS, "defense": ((broken, broken.terms[0]),)})


def _fight() -> Fight:
    """Kael, Shade (with Arcane Ward, engaged with Kael) and Vesh, whose unarmed hit (5 + 3 = 8) would beat Kael's
    base defense (1): the ward's window is due when Vesh attacks."""
    shade = msgspec.structs.replace(sheet("shade"), abilities=("arcane_ward",))
    fight = Fight.start(MemoryStore(), "duel", dice=ScriptedDice([5, 3, 1]), clock=lambda: 0,
                        combatants=[sheet("kael"), shade, sheet("vesh", side="raiders")])
    fight.engage("shade", "kael")
    return fight


def _raises(*_: object) -> tuple[str, ...]:
    raise ValueError("boom in responders")


def _nobody(*_: object) -> tuple[str, ...]:
    return ("nobody",)


def _raises_after_ward(state: FightState, frame: Frame) -> tuple[Modifier, ...]:
    if frame.chose(arcane_ward.KIND, "ward"):
        raise ZeroDivisionError("boom after ward")
    return ()


#: Modifier, made with fields of any type (as an extension's untyped code may make it).
_UNTYPED: Any = Modifier


class TestAtRunTime:
    @pytest.mark.parametrize(("responders", "terms", "hook", "error", "reason"), [
        (_raises, None, "window 'arcane_ward' responders", "ValueError", "boom in responders"),
        (_nobody, None, "window 'arcane_ward' responders", "bad result",
         "returned 'nobody', not a combatant of this fight"),
        (None, lambda s, f: 2, "terms on defense", "bad result", "returned 2, not a tuple of omen_core.parts.Modifier"),
        (None, lambda s, f: dict[str, int]()["x"], "terms on defense", "KeyError", "'x'"),
        (None, lambda s, f: [Modifier(source="Arcane Ward", value=2)], "terms on defense", "bad result",
         "returned a list, not a tuple of omen_core.parts.Modifier"),
        (lambda s, f, m: sys.exit(0), None, "window 'arcane_ward' responders", "SystemExit", "0"),
        # a Modifier's fields of the wrong type (a Struct checks none when made: a float's term reached the log,
        # which then failed verify, and a text's raised a TypeError in the sum: an extension tester)
        (None, lambda s, f: (_UNTYPED(source="Arcane Ward", value=2.5),), "terms on defense", "bad result",
         "returned Modifier(source='Arcane Ward', value=2.5) among its terms: Expected `int`, got `float` - at "
         "`$.value` (a Modifier's source is a text, its value a whole number)"),
        (None, lambda s, f: (Modifier(source="Arcane Ward", value=True),), "terms on defense", "bad result",
         "returned Modifier(source='Arcane Ward', value=True) among its terms: Expected `int`, got `bool` - at "
         "`$.value` (a Modifier's source is a text, its value a whole number)"),
        (None, lambda s, f: (_UNTYPED(source="Arcane Ward", value="-2"),), "terms on defense", "bad result",
         "returned Modifier(source='Arcane Ward', value='-2') among its terms: Expected `int`, got `str` - at "
         "`$.value` (a Modifier's source is a text, its value a whole number)"),
        (None, lambda s, f: (_UNTYPED(source=7, value=2),), "terms on defense", "bad result",
         "returned Modifier(source=7, value=2) among its terms: Expected `str`, got `int` - at `$.source` (a "
         "Modifier's source is a text, its value a whole number)"),
    ])
    def test_a_failing_callable_refuses_the_command_naming_the_extension(
            self, monkeypatch: pytest.MonkeyPatch, responders: Any, terms: Any, hook: str, error: str,
            reason: str) -> None:
        """What an extension's callable raises, or answers wrongly, refuses the command as ExtensionFailed naming the
        extension, its module, the row and the failure, chained from the original; nothing is written."""
        fight = _fight()
        _install(monkeypatch, responders, terms)
        before = fight.version
        with pytest.raises(ExtensionFailed) as failed:
            fight.attack("vesh", "kael", unarmed=True)
        facts = failed.value
        assert (facts.extension, facts.module, facts.hook, facts.error, facts.reason) == (
            "arcane_ward", MODULE, hook, error, reason)
        assert str(facts) == f"extension 'arcane_ward' ({MODULE}) failed in its {hook}: {error}: {reason}"
        assert isinstance(facts, OmenError) and (facts.__cause__ is None) == (error == "bad result")
        assert fight.version == before

    def test_the_log_is_left_as_it_was(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A command refused by a failing extension writes nothing: the store holds the 6 events it held before."""
        fight = _fight()
        _install(monkeypatch, _raises)
        with pytest.raises(ExtensionFailed):
            fight.attack("vesh", "kael", unarmed=True)
        assert fight.version == 6 and len(list(fight.store.read("duel"))) == 6

    def test_options_raise_the_failure_rather_than_hide_the_answer(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A term handler failing only once ``ward`` is chosen lets the attack in, then options() (which probes
        each answer) raises the ExtensionFailed instead of leaving ``ward`` out as not offered."""
        fight = _fight()
        _install(monkeypatch, terms=_raises_after_ward)
        fight.attack("vesh", "kael", unarmed=True)
        assert options(fight.state, offers_too=False).waiting is not None  # the bare state: no answer probed
        with pytest.raises(ExtensionFailed, match="failed in its terms on defense: ZeroDivisionError: boom after"):
            fight.options()

    def test_an_extension_failure_pickles_whole(self) -> None:
        """ExtensionFailed crosses a process boundary (a simulation's worker) with every fact."""
        failed = ExtensionFailed("ward", "m", "terms on defense", "KeyError", "'x'")
        again = pickle.loads(pickle.dumps(failed))
        assert (again.extension, again.module, again.hook, again.error, again.reason, str(again)) == (
            "ward", "m", "terms on defense", "KeyError", "'x'", str(failed))

    def test_an_omen_error_an_extension_raises_goes_through_as_it_is(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """An extension refusing on purpose (an OmenError of its own) is that refusal, not ExtensionFailed."""
        from omen_core.errors import RuleViolation

        def refuses(*_: object) -> tuple[str, ...]:
            raise RuleViolation("C38", "not now")

        fight = _fight()
        _install(monkeypatch, refuses)
        with pytest.raises(RuleViolation, match="not now") as refused:
            fight.attack("vesh", "kael", unarmed=True)
        assert not isinstance(refused.value, ExtensionFailed)


def test_the_guard_keeps_a_window_whole() -> None:
    """A guarded extension's rows are the module's, only its callables wrapped: the same kinds, hooks and choices."""
    shipped = arcane_ward.EXTENSION
    loaded = registry.BY_ID["arcane_ward"]
    assert isinstance(loaded.windows[0], Window)
    assert [(w.kind, w.hook, w.choices) for w in loaded.windows] == [(w.kind, w.hook, w.choices)
                                                                     for w in shipped.windows]
    assert loaded.windows[0].responders.__wrapped__ is shipped.windows[0].responders  # type: ignore[attr-defined]


def test_a_simulation_stops_naming_the_fight_and_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ember Ford 2v2 with every combatant given Arcane Ward, whose responders raise: the simulated fight stops as
    a SimulationError (the run's exit 2) naming the fight and the extension, its module and the row."""
    from omen_replay.simulate.encounter import load_encounter
    from omen_replay.simulate.play import Rules, SimulationError, play
    from tests.replay.simulate.encounters import EMBER_FORD_2V2

    encounter = load_encounter(EMBER_FORD_2V2)
    warded = msgspec.structs.replace(encounter, combatants=tuple(
        msgspec.structs.replace(c, abilities=("arcane_ward",)) for c in encounter.combatants))
    _install(monkeypatch, _raises)
    with pytest.raises(SimulationError) as stopped:
        play(warded, Rules(policies={}), 3, bytes(range(16)), 0)
    assert stopped.value.index == 3
    assert str(stopped.value).startswith(f"fight 3: extension 'arcane_ward' ({MODULE}) failed in its window "
                                         "'arcane_ward' responders: ValueError: boom in responders")


def test_rows_not_in_a_tuple_are_refused_naming_the_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window given alone rather than in a tuple (``windows=Window(...)``) is refused naming the field, not a
    traceback from the walk over it."""
    text = _ward().replace("windows=(Window(", "windows=Window(").replace("),))\n", "))\n")
    name = _module(tmp_path, monkeypatch, "loose", text)
    with pytest.raises(ExtensionInvalid, match=r"^extension extpkg\.loose cannot be loaded: EXTENSION: windows is "
                                               r"Window, not a tuple of rows$"):
        registry._load([name])
