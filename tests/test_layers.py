"""Tests for the shape of omen_core's imports: one way, from the bottom up (docs/architecture.md, "The layers"),
and no cycle, function-local imports included (issue 27: a cycle broken by an import inside a function is still a
cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "omen_core"

#: The layers of omen_core, bottom first (docs/architecture.md draws them top first): a module imports only from
#: its own layer or the ones below it. ``decisions`` sits below ``machine``: the machine's window transitions are
#: read from the decision rows.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "logs", "limits", "locate", "rules"),
    ("parts", "content"),
    ("commands",),
    ("events",),
    ("dice",),
    ("decisions",),
    ("machine",),
    ("state",),
    ("derive",),
    ("decide",),
    ("store",),
    ("walk",),
    ("options",),
    ("seats",),
    ("engine",),
    ("",),  # the package itself: the public API in one import
)


def module_name(path: Path) -> str:
    """The dotted name of a module under omen_core, without the package's own name (``store.snapshots``)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of omen_core by its dotted name."""
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The omen_core modules ``name`` imports anywhere in its source (a function's body too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
            target = ".".join([*base, *([node.module] if node.module else [])])
            targets = [f"{target}.{a.name}".strip(".") for a in node.names] + [target]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("omen_core"):
            target = (node.module or "").removeprefix("omen_core").lstrip(".")
            targets = [f"{target}.{a.name}".strip(".") for a in node.names] + [target]
        elif isinstance(node, ast.Import):
            targets = [a.name.removeprefix("omen_core").lstrip(".") for a in node.names
                       if a.name.startswith("omen_core")]
        for written in targets:
            target = written
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    """omen_core's import graph: each module and the omen_core modules it imports."""
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def layer(name: str) -> int:
    """The layer of a module: that of its top-level module or package."""
    top = name.partition(".")[0]
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"omen_core.{name} is in no layer: add it to LAYERS (and to docs/architecture.md)")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_omen_core_has_no_import_cycle():
    """No two modules of omen_core import each other, directly or round a loop, anywhere in their source."""
    assert cycles(graph()) == []


def back_arrows(edges: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a layer above its own."""
    return [f"omen_core.{a} (layer {layer(a)}) imports omen_core.{b} (layer {layer(b)})"
            for a, deps in sorted(edges.items()) for b in sorted(deps) if layer(b) > layer(a)]


def test_every_import_goes_down_the_layers():
    """Each module imports only from its own layer or below (rules and events at the bottom, the engine on top)."""
    assert back_arrows(graph()) == []


@pytest.mark.parametrize("edit", ["a cycle", "a back-arrow"])
def test_the_checks_catch_what_they_look_for(edit):
    """The checks fail where they should: a cycle added to the graph, and an import from a layer above."""
    edges = graph()
    if edit == "a cycle":
        edges["store.snapshots"] = {*edges["store.snapshots"], "walk"}
        assert ["store.snapshots", "walk"] in cycles(edges)
    else:
        edges["machine"] = {*edges["machine"], "state"}
        assert back_arrows(edges) == ["omen_core.machine (layer 6) imports omen_core.state (layer 7)"]


def test_the_graph_sees_function_local_imports(tmp_path):
    """An import inside a function body counts: it is found like one at the top of the module."""
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from .walk import replay\n    return replay\n")
    assert imports("store.snapshots", path, {"walk", "store.snapshots"}) == set()  # ..walk from store: not .walk
    path.write_text("def f():\n    from ..walk import replay\n    return replay\n")
    assert imports("store.snapshots", path, {"walk", "store.snapshots"}) == {"walk"}


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


def test_omen_core_keeps_no_module_level_cache():
    """DESIGN.md: no module-level mutable caches in omen_core (they stand in the way of many fights in one
    process): no memoising decorator, no module-level container left empty to be filled at run time; a memo is an
    object a Fight, a store or the caller owns (engine.CommandMemo, the JSON Lines store's offset indexes)."""
    assert [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in module_level_caches(path)] == []


def test_the_cache_check_sees_a_cache(tmp_path):
    """The check finds each kind of cache it looks for, and passes a table built at import."""
    path = tmp_path / "m.py"
    path.write_text("import functools\n_SEEN: dict[str, int] = {}\nK = dict()\nT = {'a': 1}\n"
                    "@functools.lru_cache(maxsize=8)\ndef f(x):\n    return x\n")
    assert [hit.split()[0] for hit in module_level_caches(path)] == ["m.py:6", "m.py:2", "m.py:3"]
