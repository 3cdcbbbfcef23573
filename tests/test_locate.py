"""Tests for omen_core.locate: the line of a field path in a TOML or JSON text, found in one pass."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_core.locate import Lines, error_line, key_step

KEYS = st.from_regex(r"[a-z][a-z_]{0,6}", fullmatch=True)
SCALARS = st.one_of(st.integers(-99, 99), st.booleans(), st.text("abc \"#'\\", max_size=6))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(KEYS, inner, max_size=3)), max_leaves=12)


def paths(value: object, path: str = "$") -> list[str]:
    """Every path in ``value``: each key and each array element."""
    found = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += paths(v, f"{path}[{i}]")
    return found


class TestJson:
    @given(st.dictionaries(KEYS, VALUES, max_size=5))
    def test_each_path_is_on_the_line_its_value_starts(self, doc: dict[str, Any]) -> None:
        """JSON written one value a line: each key's line is the line that writes that key, each element's the
        line its value starts on."""
        text = msgspec.json.format(msgspec.json.encode(doc), indent=2).decode()
        lines, written = Lines(text, "json"), text.splitlines()
        for path in paths(doc)[1:]:
            where = written[lines(path) - 1]
            last = path.rsplit(".", 1)[-1]
            if not last.endswith("]"):
                assert f'"{last}":' in where, (path, where)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return msgspec.json.encode(value).decode()
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"


class TestToml:
    @given(fight=st.dictionaries(KEYS, VALUES, min_size=1, max_size=4),
           commands=st.lists(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), max_size=4))
    def test_tables_arrays_of_tables_and_inline_values(self, fight: dict[str, Any],
                                                       commands: list[dict[str, Any]]) -> None:
        """A scenario-shaped document (a table, an array of tables, one key a line, values inline): each
        table's path is its header's line, each key's the line that writes it, each inline value's within."""
        out = ["# a comment", "[fight]"]
        where: dict[str, int] = {"$.fight": 2}
        for k, v in fight.items():
            out.append(f"{k} = {_toml_value(v)}  # {k}")
            where[f"$.fight.{k}"] = len(out)
        for i, command in enumerate(commands):
            out += ["", "[[commands]]"]
            where[f"$.commands[{i}]"] = len(out)
            for k, v in command.items():
                out.append(f"{k} = {_toml_value(v)}")
                for inner in paths(v, f"$.commands[{i}].{k}"):
                    where[inner] = len(out)
        text = "\n".join(out) + "\n"
        assert msgspec.toml.decode(text) == {"fight": fight, **({"commands": commands} if commands else {})}
        lines = Lines(text, "toml")
        assert {p: lines(p) for p in where} == where

    def test_a_path_not_written_gets_its_table_s_line(self) -> None:
        """A field left out is placed at the table that lacks it; nothing known at all, line 1."""
        text = '[fight]\nid = "x"\n\n[[combatants]]\nsheet = "a.toml"\n\n[[combatants]]\nid = "bo"\n'
        lines = Lines(text, "toml")
        assert (lines("$.combatants[1].hp"), lines("$.combatants[0].sheet"), lines("$.other")) == (7, 5, 1)


class TestErrorLine:
    def test_the_readers_words_give_the_line(self) -> None:
        """``line N`` (the TOML reader), ``end of document`` (the last line), ``byte N`` (the JSON reader)."""
        text = 'a = 1\nb = 2\nc = [\n'
        assert error_line("Expected ']' (at line 2, column 3)", text) == 2
        assert error_line("Unclosed array (at end of document)", text) == 3
        assert error_line("JSON is malformed: trailing comma (byte 8)", '{"a":\n 1,}') == 2
        assert error_line("something else", text) == 1

    def test_a_json_file_left_open_at_its_end_is_named_at_its_last_line(self) -> None:
        """The JSON reader's ``Input data was truncated`` (an array, object or string left open at the end) names the
        last line, as the TOML reader's ``end of document`` does (it named line 1; found by a tester)."""
        assert error_line("Input data was truncated", '{"abilities": [\n  "a",\n  "b"\n') == 3
        assert error_line("Input data was truncated", '{"a": "open') == 1

def test_a_quoted_key_with_escapes_is_found_as_the_reader_reads_it() -> None:
    """A key written as a basic string with escapes (TOML ``"X\\u00e9"``, JSON ``"X\\u00e9"``) is the key the
    reader makes of it (``Xé``), found on its own line, not line 1; a literal string's backslash stays as written."""
    toml = 'name = "h"\n\n[conditions."Dazed\\u00e9"]\ntick = 1\n[conditions.\'Raw\\u00e9\']\nx = 2\n'
    lines = Lines(toml, "toml")
    assert lines("$.conditions.Dazed\u00e9.tick") == 4
    assert lines("$.conditions.Raw\\u00e9.x") == 6
    assert Lines('{"a": 1,\n "b\\u00e9": {"c": 2}}', "json")("$.b\u00e9.c") == 2


class TestDottedTables:
    @pytest.mark.parametrize("text, path, line", [
        ('a = 1\n\n[ability.tough]\nname = "T"\n', "$.ability", 3),
        ('a = 1\n\n[ability.tough]\nname = "T"\n', "$.ability.tough", 3),
        ('a = 1\n[[weapon.extra]]\nid = "x"\n[[weapon.extra]]\nid = "y"\n', "$.weapon", 2),
        ('a = 1\n[[weapon.extra]]\nid = "x"\n[[weapon.extra]]\nid = "y"\n', "$.weapon.extra[1].id", 5),
        ('a = 1\n[fight]\nid = "x"\nnext.seed = 1\n', "$.fight.next", 4),
        ('a = 1\nb = 2\nskils.Perception.level = 2\n', "$.skils", 3),
        ('a = 1\nb = { c.d = 1,\n e = 2 }\n', "$.b.c", 2),
        ('[skils.Perception]\nlevel = 2\n\n[skils.Athletics]\nlevel = 1\n', "$.skils", 1),
        ('x = 1\n[skils.Perception]\nlevel = 2\n\n[skils]\nAthletics = { level = 1 }\n', "$.skils", 2),
    ])
    def test_a_table_a_dotted_header_or_key_makes_is_at_its_first_header(self, text: str, path: str,
                                                                         line: int) -> None:
        """A table written only as part of a dotted header (``[ability.tough]``, ``[[weapon.extra]]``) or of a
        dotted key (``next.seed = 1``, inline ``c.d = 1``) is at the line of the first header or key that makes it,
        not line 1."""
        assert Lines(text, "toml")(path) == line

    def test_a_quoted_key_in_a_path_is_the_key_as_written(self) -> None:
        """A path naming a key as a JSON string (``$.abilities."grit two"``, ``."a.b"``, an escape) finds the
        same line as the key written bare in the path, in TOML and in JSON."""
        toml = '[abilities.grit]\nname = "G"\n\n[abilities."grit two"]\nname = "T"\n[abilities."a.b"]\nid = "c"\n'
        lines = Lines(toml, "toml")
        assert (lines('$.abilities."grit two"'), lines('$.abilities."grit two".name'), lines('$.abilities."a.b".id'),
                lines("$.abilities.grit two")) == (4, 5, 7, 4)
        assert Lines('{"k": {\n "X\\u202e y": 1}}', "json")('$.k."X\\u202e y"') == 2


class TestKeyStep:
    @pytest.mark.parametrize("key, step", [
        ("Perception", ".Perception"), ("fire_bolt-2", ".fire_bolt-2"), ("grit two", '."grit two"'),
        ("a.b", '."a.b"'), ("", '.""'), ('say "hi"', '."say \\"hi\\""'), ("Überleben", '."Überleben"'),
        ("X\u202e\n", '."X\\u202e\\n"'),
    ])
    def test_a_key_not_bare_is_a_json_string(self, key: str, step: str) -> None:
        """A bare TOML key is named as it is; any other as a JSON string, a control character (a newline, a
        bidirectional override) escaped."""
        assert key_step(key) == step
