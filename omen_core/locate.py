"""Where a field is in a TOML or JSON text: the line of a JSON path (``$.commands[3].defense``), for errors that name
the file, the line and the field.

:class:`Lines` reads the text once (a small scanner of its own: strings, comments, tables, arrays of tables,
inline tables and arrays) and notes the line where each key and each array element starts, so that any number of
paths are looked up in a time linear in the text. A path that is not in the text (a field left out) is given the
line of the nearest thing above it that is: the table that lacks the field, or line 1. A table that a dotted
header or a dotted key makes (``[ability.tough]``, ``[[a.b]]``, ``a.b = 1``) is where its first header or key
writes it.

A mapping key that is not a bare TOML key is named in a path as a JSON string (:func:`key_step`,
``$.abilities."grit two"``); written as it is (``$.abilities.grit two``) it is found all the same.

>>> lines = Lines('[fight]\\nid = "x"\\n\\n[[commands]]\\ncommand = "end_turn"\\n\\n[[commands]]\\nwho = 3\\n', "toml")
>>> lines("$.commands[1].who"), lines("$.commands[1]"), lines("$.fight.seed"), lines("$.nowhere")
(8, 7, 1, 1)
>>> Lines('{"a": [1, {"b": 2}]}', "json")("$.a[1].b")
1
>>> lines = Lines('a = 1\\n\\n[ability.tough]\\nname = "T"\\n[abilities."grit two"]\\n', "toml")
>>> lines("$.ability"), lines("$.abilities"), lines('$.abilities."grit two"'), lines("$.abilities.grit two")
(3, 5, 5, 5)
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Literal

__all__ = ["Lines", "error_line", "key_step"]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
#: A path's steps: ``."a key"`` (a JSON string), ``.key`` or ``[index]``.
_PATH = re.compile(r'\.("(?:[^"\\]|\\.)*")|\.([^.\[]+)|\[(\d+)\]')


#: What JSON leaves raw in a string that a terminal acts on (DEL, the C1 controls, the bidirectional controls, the
#: line and paragraph separators): escaped in a key a path names.
_TERMINAL = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def key_step(key: str) -> str:
    """The step of a path that names the mapping key ``key``: ``.key`` for a bare TOML key (letters, digits, ``_``
    and ``-``), else the key as a JSON string (``."grit two"``), so that a space, a dot, an empty key or a control
    character (escaped, ``\\u202e``) is seen.

    >>> key_step("Perception"), key_step("grit two"), key_step("x\\u202e")
    ('.Perception', '."grit two"', '."x\\\\u202e"')
    """
    if _BARE.fullmatch(key):
        return f".{key}"
    return "." + _TERMINAL.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(key, ensure_ascii=False))


def _step(quoted: str, name: str, index: str) -> str:
    """One step of a path as the scanner notes it: a key written as a JSON string read (as it was if it cannot be)."""
    if quoted:
        try:
            return f".{json.loads(quoted)}"
        except ValueError:
            return f".{quoted}"
    return f".{name}" if name else f"[{index}]"


class _Scanner:
    """One pass over a TOML or JSON text, noting each key's and each array element's path and line."""

    def __init__(self, text: str, fmt: Literal["toml", "json"]):
        self.text, self.toml = text, fmt == "toml"
        self.i, self.line = 0, 1
        self.found: dict[str, int] = {"$": 1}
        self.arrays: dict[str, int] = {}  # an array of tables' path -> how many elements so far

    # -- characters ------------------------------------------------------------------------------------------

    def peek(self, n: int = 1) -> str:
        return self.text[self.i:self.i + n]

    def advance(self, n: int = 1) -> None:
        self.line += self.text.count("\n", self.i, self.i + n)
        self.i += n

    def blank(self, newlines: bool = True) -> None:
        """Skip spaces (and newlines and comments, if ``newlines``)."""
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.advance()
            elif c == "#" and self.toml:
                end = self.text.find("\n", self.i)
                self.advance((end if end >= 0 else len(self.text)) - self.i)
            else:
                return

    def note(self, path: str) -> None:
        self.found.setdefault(path, self.line)

    def note_dotted(self, table: str, keys: list[str]) -> str:
        """Note a dotted key's path and each table it makes on the way (``a.b = 1``: ``a`` too); its path."""
        for k in keys:
            table += f".{k}"
            self.note(table)
        return table

    # -- values ----------------------------------------------------------------------------------------------

    def string(self) -> str:
        """A string at the cursor, its quotes and escapes consumed; its text (escapes left as written)."""
        for quote in ('"""', "'''", '"', "'"):
            if self.peek(len(quote)) == quote:
                break
        else:  # pragma: no cover - called only at a quote
            return ""
        self.advance(len(quote))
        start = self.i
        while self.i < len(self.text) and self.peek(len(quote)) != quote:
            self.advance(2 if self.peek() == "\\" and quote[0] == '"' else 1)
        body = self.text[start:self.i]
        self.advance(len(quote))
        return body

    def unescape(self, body: str) -> str:
        """A basic string's (or JSON string's) text with its escapes read, as the reader reads them
        (``"X\\u202e"`` is the key ``X`` + U+202E); as written if they are not valid escapes."""
        try:
            if self.toml:
                return str(tomllib.loads(f'k = "{body}"')["k"])
            return str(json.loads(f'"{body}"'))
        except ValueError:
            return body

    def key(self) -> list[str]:
        """A (dotted) key: its parts."""
        parts = []
        while True:
            self.blank(newlines=False)
            if self.peek() in ('"', "'"):
                basic = self.peek() == '"'
                body = self.string()
                parts.append(self.unescape(body) if basic and "\\" in body else body)
            else:
                m = _BARE.match(self.text, self.i)
                if m is None:
                    return parts
                parts.append(m.group())
                self.advance(m.end() - self.i)
            self.blank(newlines=False)
            if not self.toml or self.peek() != ".":
                return parts
            self.advance()

    def value(self, path: str) -> None:
        self.blank(newlines=not self.toml)
        c = self.peek()
        if c in ('"', "'"):
            self.string()
        elif c == "{":
            self.table_inline(path)
        elif c == "[":
            self.array(path)
        else:
            while self.i < len(self.text) and self.text[self.i] not in ",]}\n#" + ("" if self.toml else " \t\r"):
                self.advance()

    def table_inline(self, path: str) -> None:
        """``{k = v, ...}`` (TOML) or ``{"k": v, ...}`` (JSON)."""
        self.advance()
        while self.i < len(self.text):
            self.blank()
            if self.peek() == "}":
                self.advance()
                return
            if self.peek() == ",":
                self.advance()
                continue
            keys = self.key()
            if not keys:
                self.advance()
                continue
            full = self.note_dotted(path, keys)
            self.blank()
            if self.peek() in "=:":
                self.advance()
            self.value(full)

    def array(self, path: str) -> None:
        self.advance()
        index = 0
        while self.i < len(self.text):
            self.blank()
            c = self.peek()
            if c == "]":
                self.advance()
                return
            if c == ",":
                self.advance()
                index += 1
                continue
            self.note(f"{path}[{index}]")
            start = self.i
            self.value(f"{path}[{index}]")
            if self.i == start:
                self.advance()

    # -- documents -------------------------------------------------------------------------------------------

    def json(self) -> dict[str, int]:
        self.value("$")
        return self.found

    def toml_document(self) -> dict[str, int]:
        table = "$"
        while self.i < len(self.text):
            self.blank()
            if self.i >= len(self.text):
                break
            if self.peek(2) == "[[":
                self.advance(2)
                name = self.resolve(self.key(), last=False)
                count = self.arrays.get(name, 0)
                self.arrays[name] = count + 1
                table = f"{name}[{count}]"
                self.note(name)
                self.note(table)
                self.skip_line()
            elif self.peek() == "[":
                self.advance()
                table = self.resolve(self.key())
                self.note(table)
                self.skip_line()
            else:
                keys = self.key()
                if not keys:
                    self.skip_line()
                    continue
                full = self.note_dotted(table, keys)
                self.blank(newlines=False)
                if self.peek() == "=":
                    self.advance()
                self.value(full)
                self.skip_line()
        return self.found

    def resolve(self, keys: list[str], last: bool = True) -> str:
        """A header's path, each part that names an array of tables taken at its last element (the header's own
        last part too, unless ``last`` is False: ``[[commands]]`` names the array itself). Each table it makes on the
        way is noted at this line, unless an earlier line wrote it (``[ability.tough]`` writes ``ability``)."""
        path = "$"
        for n, k in enumerate(keys):
            path += f".{k}"
            self.note(path)
            if path in self.arrays and (last or n < len(keys) - 1):
                path += f"[{self.arrays[path] - 1}]"
        return path

    def skip_line(self) -> None:
        end = self.text.find("\n", self.i)
        self.advance((end if end >= 0 else len(self.text)) - self.i)


class Lines:
    """The lines of the keys and elements of one TOML or JSON text (read once), looked up by JSON path."""

    def __init__(self, text: str, fmt: Literal["toml", "json"]):
        scanner = _Scanner(text, fmt)
        try:
            self.found = scanner.toml_document() if fmt == "toml" else scanner.json()
        except (IndexError, RecursionError):  # a text the scanner cannot follow: what it noted so far
            self.found = scanner.found

    def __call__(self, path: str) -> int:
        """The line where ``path`` is written, or where the nearest thing above it is (line 1 at worst)."""
        parts = [_step(*found) for found in _PATH.findall(path)]
        while parts:
            line = self.found.get("$" + "".join(parts))
            if line is not None:
                return line
            parts.pop()
        return 1


def error_line(message: str, text: str) -> int:
    """The line a TOML or JSON syntax error names: ``line N`` as the TOML reader says it, ``end of document``
    (the last line), or the JSON reader's ``byte N``, or its ``truncated`` (an array, object or string left open
    at the end: the last line); line 1 if it names none."""
    m = re.search(r"line (\d+)", message)
    if m:
        return int(m.group(1))
    if "end of document" in message or message.startswith("Input data was truncated"):
        return max(text.count("\n") + (0 if text.endswith("\n") else 1), 1)
    m = re.search(r"byte (\d+)", message)
    if m:
        return text.encode("utf-8")[:int(m.group(1))].count(b"\n") + 1
    return 1
