"""The words omen's own messages are made of (omen_server/data/engine-words.txt), which no id or name of a sheet
served to seats may be: a seat's refusal has every secret id and name in it replaced by ``(hidden)``, so a secret
spelled as one of these words would change the message's own words, and a seat could tell (docs/server.md,
"Secrets"). Regenerate with ``.venv/bin/python -m tests.engine_words``.

The words are every word (``[A-Za-z][\\w-]*``, standing alone as the scrub reads a secret) of every string literal
of the packages whose words reach a seat (an f-string's fixed parts included), but docstrings.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The packages whose words a seat may read (the engine's refusals, the server's, an explanation's).
PACKAGES = ("omen_core", "omen_server")
WORDS_FILE = ROOT / "omen_server" / "data" / "engine-words.txt"
_WORD = re.compile(r"(?<![\w.-])[A-Za-z][\w-]*(?![\w-])")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions, and of the names its ``__all__``
    lists (the code's own names, never a message's words)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            found.update(id(n) for n in ast.walk(node.value) if isinstance(n, ast.Constant))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                found.add(id(first.value))
    return found


def _content_ids() -> set[str]:
    """The ids and names of the shipped abilities and of the installed extensions: content a sheet lists on purpose
    (their modules name them in literals: ``KIND = "arcane_ward"``), secrets of the sheets that list them, never
    message words of their own."""
    from omen_core.content import SHIPPED_ABILITIES
    from omen_core.extensions import EXTENSIONS

    named = {word for ability in SHIPPED_ABILITIES.abilities.values() for word in (ability.id, ability.name)}
    return named | {word for extension in EXTENSIONS for word in (extension.id, extension.name)}


def engine_words() -> list[str]:
    """Every word of the packages' string literals, sorted (but the content's ids and names: :func:`_content_ids`)."""
    words: set[str] = set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = _docstrings(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                    words.update(_WORD.findall(node.value))
    return sorted(words - _content_ids())


def render() -> str:
    """The file's text: a word a line."""
    return "".join(f"{word}\n" for word in engine_words())


if __name__ == "__main__":
    WORDS_FILE.write_text(render(), encoding="utf-8")
    print(f"{WORDS_FILE.relative_to(ROOT)}: {len(engine_words())} words")
