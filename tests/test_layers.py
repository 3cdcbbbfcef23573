"""The import layers and the core's shape (issue 27, item 7): no import cycle between omen's modules, no import of a
layer above, and no module-level cache in omen_core.

Every import of omen's four packages is read by grimp (it parses each module: module-level imports and those inside
functions alike; those under ``if TYPE_CHECKING:`` are left out, as they never run). Packages bottom first:
omen_core < omen_replay < omen_server < omen_cli, and inside omen_core the layers of docs/architecture.md, as the
data of :data:`LAYERS`. A failure names each offending import by file and line. Tests and benchmarks are not
packages of omen's: they may import anything.
"""

from __future__ import annotations

import ast
import graphlib
import itertools
from pathlib import Path

import grimp
import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("omen_core", "omen_replay", "omen_server", "omen_cli")
PACKAGE = ROOT / "omen_core"

#: The layers, bottom first: a module may import modules of its own layer and of the layers below it, never of one
#: above. ``name`` is that module alone; ``name.*`` is that package and every module under it.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("the foundations: errors, limits, the locator, the loggers, the written form without defaults, the rules' "
     "pure math",
     frozenset({"omen_core.errors", "omen_core.limits", "omen_core.locate", "omen_core.logs", "omen_core.defaults",
                "omen_core.rules.*"})),
    ("content: sheets, gear, the ruleset; the values commands share",
     frozenset({"omen_core.content", "omen_core.parts"})),
    ("commands", frozenset({"omen_core.commands"})),
    ("events: the envelope, the chain, the upcasters", frozenset({"omen_core.events"})),
    ("dice, the hook points and the extensions' rows, and the decision points as data",
     frozenset({"omen_core.dice", "omen_core.hooks", "omen_core.abilities", "omen_core.extensions.*",
                "omen_core.decisions"})),
    ("the lifecycle and phase machines", frozenset({"omen_core.machine"})),
    ("the state and its fold", frozenset({"omen_core.state"})),
    ("the numbers and the cost ledger", frozenset({"omen_core.derive", "omen_core.ledger"})),
    ("decide: commands to events", frozenset({"omen_core.decide.*"})),
    ("the options", frozenset({"omen_core.options"})),
    ("one seat's sight and options", frozenset({"omen_core.seats"})),
    ("the stores and their snapshots", frozenset({"omen_core.store.*"})),
    ("the walk: the one reader of a log", frozenset({"omen_core.walk"})),
    ("the engine: Fight", frozenset({"omen_core.engine"})),
    ("omen_core's public API (its __init__)", frozenset({"omen_core"})),
    ("omen_replay: the readers of logs, scenarios, the simulator", frozenset({"omen_replay.*"})),
    ("omen_server: the HTTP server and the table page", frozenset({"omen_server.*"})),
    ("omen_cli: the command line", frozenset({"omen_cli.*"})),
)

#: Imports the rules above forbid, let through for now, each with why. Delete each when what it names is gone (the
#: test fails on an allowance for an import no longer made, so none outlives its reason).
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def import_graph() -> grimp.ImportGraph:
    """Every import between the modules of omen's packages, those under ``if TYPE_CHECKING:`` left out."""
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)


def imports_of(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    """Each module and the modules it imports directly."""
    return {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the layer holding ``module``; KeyError if none does."""
    found = [i for i, (_what, names) in enumerate(LAYERS) for name in names
             if module == name.removesuffix(".*") or (name.endswith(".*") and module.startswith(name[:-1]))]
    if len(found) != 1:
        raise KeyError(f"{module} is in {len(found)} layers of LAYERS, not one")
    return found[0]


def back_arrows(imports: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Each import (importer, imported) of a module in a layer above the importer's, the allowed ones aside."""
    return sorted((a, b) for a, targets in imports.items() for b in targets
                  if layer_of(a) < layer_of(b) and (a, b) not in ALLOWED)


def a_cycle(imports: dict[str, set[str]]) -> list[str] | None:
    """The modules of one import cycle, the first repeated at the end, the allowed imports left out; None if none."""
    kept = {a: {b for b in targets if (a, b) not in ALLOWED} for a, targets in imports.items()}
    try:
        graphlib.TopologicalSorter(kept).prepare()
    except graphlib.CycleError as exc:
        found: list[str] = exc.args[1]
        return found[::-1]  # graphlib lists it against the arrows (predecessors): importer first instead
    return None


def where(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    """The file and line of each import of ``imported`` in ``importer``: ``omen_core/walk.py:1080 (from ...)``."""
    path = ROOT / Path(*importer.split("."))
    file = (path / "__init__.py") if path.is_dir() else path.with_suffix(".py")
    lines = [f"{file.relative_to(ROOT)}:{d['line_number']} ({d['line_contents'].strip()})"
             for d in graph.get_import_details(importer=importer, imported=imported)]
    return "; ".join(lines) or f"{file.relative_to(ROOT)} (imports {imported})"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return import_graph()


def test_every_module_is_in_exactly_one_layer(graph: grimp.ImportGraph) -> None:
    """Each module of omen's packages is named by one layer of LAYERS (a new module is placed there by hand)."""
    unplaced = []
    for module in sorted(graph.modules):
        try:
            layer_of(module)
        except KeyError as exc:
            unplaced.append(str(exc))
    assert unplaced == [], "place each in LAYERS (tests/test_layers.py):\n" + "\n".join(unplaced)


def test_no_import_reaches_a_layer_above(graph: grimp.ImportGraph) -> None:
    """No module imports one of a layer above its own (omen_core < omen_replay < omen_server < omen_cli, and the
    layers inside omen_core), at module level or inside a function."""
    found = [f"{where(graph, a, b)}: {LAYERS[layer_of(a)][0]!r} imports {b}, of {LAYERS[layer_of(b)][0]!r} above it"
             for a, b in back_arrows(imports_of(graph))]
    assert found == [], "imports against the layers:\n" + "\n".join(found)


def test_no_import_cycle(graph: grimp.ImportGraph) -> None:
    """No chain of imports leads from a module back to itself (function-local imports count: they break a cycle only
    at import time, not in the design)."""
    cycle = a_cycle(imports_of(graph))
    assert cycle is None, "an import cycle:\n" + "\n".join(
        f"{where(graph, a, b)}" for a, b in itertools.pairwise(cycle))


def test_every_allowance_is_still_needed(graph: grimp.ImportGraph) -> None:
    """Each import of ALLOWED is still made: an allowance is deleted with the import it let through."""
    imports = imports_of(graph)
    assert [(a, b) for a, b in sorted(ALLOWED) if b not in imports.get(a, set())] == []


def test_omen_replay_imports_nothing_of_the_server_or_the_cli(graph: grimp.ImportGraph) -> None:
    """omen_replay imports no module of omen_server or omen_cli (the CLI moved out of it: issue 27, item 7)."""
    imports = imports_of(graph)
    assert sorted((a, b) for a, targets in imports.items() if a.startswith("omen_replay") for b in targets
                  if b.split(".")[0] in ("omen_server", "omen_cli")) == []


@given(data=st.data())
def test_an_import_upward_is_always_reported_and_only_it(graph: grimp.ImportGraph, data: st.DataObject) -> None:
    """Add any one import between two modules to the real graph: it is reported as a back-arrow exactly when the
    imported module's layer is above the importer's, named by its importer and what it imports."""
    modules = sorted(graph.modules)
    a = data.draw(st.sampled_from(modules), label="importer")
    b = data.draw(st.sampled_from(modules), label="imported")
    imports = imports_of(graph)
    before = back_arrows(imports)
    imports[a].add(b)
    added = sorted(set(back_arrows(imports)) - set(before))
    upward = layer_of(a) < layer_of(b) and (a, b) not in ALLOWED and (a, b) not in before
    assert added == ([(a, b)] if upward else [])


@given(data=st.data())
def test_an_import_closing_a_chain_is_always_a_cycle(graph: grimp.ImportGraph, data: st.DataObject) -> None:
    """Add an import from b to a to the real graph: the check finds a cycle exactly when a already reaches b through
    imports (a plain search, apart from the check's), and every step of the cycle it names is an import."""
    modules = sorted(graph.modules)
    a = data.draw(st.sampled_from(modules), label="a")
    b = data.draw(st.sampled_from([m for m in modules if m != a]), label="b")
    imports = imports_of(graph)
    for importer, imported in ALLOWED:  # the allowed imports are not the design's: the check leaves them out too
        imports[importer].discard(imported)
    imports[b].add(a)
    reaches = _reaches(imports, a, b)
    cycle = a_cycle(imports)
    assert (cycle is not None) == reaches
    if cycle is not None:
        assert cycle[0] == cycle[-1]
        assert all(y in imports[x] for x, y in itertools.pairwise(cycle))


def _reaches(imports: dict[str, set[str]], start: str, goal: str) -> bool:
    """Whether a chain of imports leads from ``start`` to ``goal`` (a plain search, apart from the check's)."""
    seen, todo = {start}, [start]
    while todo:
        for nxt in imports[todo.pop()]:
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


# -- no module-level caches in omen_core (issue 27, item 7; DESIGN.md) -------------------------------------------


def module_level_caches(path: Path) -> list[str]:
    """Where a module may keep a cache filled at run time: a memoising decorator (``functools.cache``,
    ``lru_cache``) anywhere, or a module-level name bound to an empty mutable container (to be filled later)."""
    found = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                text = ast.unparse(decorator)
                if "cache" in text:
                    found.append(f"{path.name}:{node.lineno} @{text} {node.name}")
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        literal = isinstance(value, (ast.Dict, ast.List, ast.Set)) and not (
            value.keys if isinstance(value, ast.Dict) else value.elts)
        called = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and value.func.id in {"dict", "list", "set"} and not value.args and not value.keywords
        if literal or called:
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_omen_core_keeps_no_module_level_cache() -> None:
    """DESIGN.md: no module-level mutable caches in omen_core (they stand in the way of many fights in one
    process): no memoising decorator, no module-level container left empty to be filled at run time; a memo is an
    object a Fight, a store or the caller owns (engine.CommandMemo, the JSON Lines store's offset indexes)."""
    assert [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in module_level_caches(path)] == []


def test_the_cache_check_sees_a_cache(tmp_path: Path) -> None:
    """The check finds each kind of cache it looks for, and passes a table built at import."""
    path = tmp_path / "m.py"
    path.write_text("import functools\n_SEEN: dict[str, int] = {}\nK = dict()\nT = {'a': 1}\n"
                    "@functools.lru_cache(maxsize=8)\ndef f(x):\n    return x\n")
    assert [hit.split()[0] for hit in module_level_caches(path)] == ["m.py:6", "m.py:2", "m.py:3"]
