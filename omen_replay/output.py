"""What the CLI and the writers send out: text made safe for a terminal, and output files written whole or not at all.

Names, reasons, notes and ids come from users (sheets, scenarios, commands,
logs). :func:`visible` shows every control character in them as an escape
(``\\x1b``), so a name never moves the cursor, retitles the window, rings the
bell or shows reversed (a bidirectional override, ``\\u202e``); every writer (the
console, text, Markdown, HTML) passes user text through it.
:func:`output_file` writes a file beside its target and renames it into place,
so a failed write leaves no empty or partial file behind.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from omen_core.errors import BadInput

__all__ = ["visible", "masked", "output_file", "check_parent"]

#: C0 and C1 control characters and DEL; the bidirectional controls (marks, embeddings, overrides, isolates),
#: which reorder what follows them on screen (a name holding U+202E shows reversed); the line and paragraph
#: separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def visible(text: str) -> str:
    """``text`` with every control character shown as an escape: C0 and C1 controls and DEL as ``\\x1b``, the
    bidirectional controls and the line and paragraph separators as ``\\u202e``.

    >>> visible("V\\x1b[31mRED\\x07")
    'V\\\\x1b[31mRED\\\\x07'
    >>> visible("Kael \\u202eNAL")
    'Kael \\\\u202eNAL'
    """
    return _CONTROL.sub(_escaped, text)


#: A password in a URL's user part (``postgresql://omen:s3cret@host``) or a ``password=`` parameter.
_USER_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/@:\s'\"]*:)[^@/\s'\"]+@")
_PASSWORD_PARAMETER = re.compile(r"(?i)\b(password=)[^&\s'\"]*")


def masked(text: str) -> str:
    """``text`` with every password a store URL in it holds shown as ``***`` (docs/stores.md: wherever omen shows
    a URL, its password is ``***``; the banner of ``omen serve`` and an unknown fight's message showed it: an
    operator tester).

    >>> masked("no fight 'x' in postgresql://omen:S3cret@/club?host=/tmp/pg&password=p (fights: a)")
    "no fight 'x' in postgresql://omen:***@/club?host=/tmp/pg&password=*** (fights: a)"
    """
    if "://" not in text and "password=" not in text.lower():
        return text
    return _PASSWORD_PARAMETER.sub(r"\1***", _USER_PASSWORD.sub(r"\1***@", text))


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def check_parent(path: Path, what: str) -> None:
    """Bad input unless the directory ``path`` goes in exists (a demanding user wants to be told, not to find
    a new directory tree)."""
    parent = path.parent
    if not parent.is_dir():
        said = "is not a directory" if parent.exists() else "does not exist"
        raise BadInput(f"{path}: cannot write {what}: the directory {parent} {said}")


@contextmanager
def output_file(path: Path, what: str) -> Iterator[TextIO]:
    """A text stream for ``path``: a temporary file beside it, renamed over it once everything is written (a
    device such as /dev/null or a pipe is written directly). Any failure is :class:`BadInput` naming the path,
    and leaves no file behind."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise _cannot(path, what, exc) from None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise BadInput(f"{path}: cannot write {what}: it is a directory")
    if found is not None and not stat.S_ISREG(found.st_mode):
        with _direct(path, what) as stream:
            yield stream
        return
    check_parent(path, what)
    with _replacing(path, what) as stream:
        yield stream


@contextmanager
def _direct(path: Path, what: str) -> Iterator[TextIO]:
    """Write straight to a device or a pipe (there is nothing to rename over)."""
    try:
        with path.open("w", encoding="utf-8") as stream:
            yield stream
    except OSError as exc:
        raise _cannot(path, what, exc) from None


@contextmanager
def _replacing(path: Path, what: str) -> Iterator[TextIO]:
    """Write a temporary file in ``path``'s directory and rename it to ``path``; on any failure remove it."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _cannot(path, what, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            yield stream
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _cannot(path, what, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process's umask (a new file gets the mode ``open`` would have given it, not mkstemp's 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _cannot(path: Path, what: str, exc: OSError) -> BadInput:
    return BadInput(f"{path}: cannot write {what}: {exc.strerror or exc}")
