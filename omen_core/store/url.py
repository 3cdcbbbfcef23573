"""Open an event store from a short URL: ``memory:``, ``sqlite:///fights.db``, ``postgresql://host/db``,
``fight.jsonl`` or ``fights/``."""

from __future__ import annotations

import os
import shlex
import stat

from ..errors import NoStore, StoreUnavailable, expect
from .base import EventStore, not_regular
from .jsonl import JsonlStore
from .memory import MemoryStore
from .postgres import PostgresStore, is_postgres_url
from .snapshots import FileSnapshots, MemorySnapshots, PostgresSnapshots, SnapshotStore, SqliteSnapshots
from .sqlite import SqliteStore

__all__ = ["open_store", "open_existing_store", "open_snapshots", "creates_file", "ACCEPTED_FORMS"]

ACCEPTED_FORMS = (
    "'memory:' (in memory, nothing is kept)",
    "'sqlite:///path.db' or 'sqlite:path.db' (SQLite; 'sqlite:////abs/path.db' for an absolute path, "
    "'sqlite::memory:' in memory)",
    "'postgresql://user:password@host:port/dbname' or 'postgres://...' (PostgreSQL; omen creates its tables)",
    "'path/to/fight.jsonl' (one fight in one JSON Lines file)",
    "'path/to/dir/' (an existing directory, or a path ending in '/': one .jsonl file per fight)",
)


def open_store(url: str, *, timeout: float | None = None) -> EventStore:
    """The event store ``url`` names; :class:`BadInput` listing the accepted forms otherwise. ``timeout``: how long
    a SQLite or PostgreSQL store waits for a lock or a connection before :class:`StoreUnavailable` (seconds; the
    store's default if None: a server sets its own, short, so that a request is answered 503 soon).

    >>> open_store("memory:")  # doctest: +ELLIPSIS
    <omen_core.store.memory.MemoryStore object at ...>
    """
    expect(url, str, "url", "a store URL (text: memory:, sqlite:///PATH, postgresql://..., PATH.jsonl or a directory)")
    if url == "memory:":
        return MemoryStore()
    if url.startswith("sqlite:"):
        return SqliteStore(_sqlite_path(url)) if timeout is None else SqliteStore(_sqlite_path(url), timeout=timeout)
    if is_postgres_url(url):
        return PostgresStore(url) if timeout is None else PostgresStore(url, timeout=timeout)
    if url.endswith(".jsonl"):
        return JsonlStore.single(url)
    if url.endswith(("/", os.sep)) or (url and os.path.isdir(url)):
        return JsonlStore(url)
    raise _bad(url)


def open_existing_store(url: str) -> EventStore:
    """The store ``url`` names, which must already exist: reading or playing on a log that is not there is
    :class:`BadInput` saying so, and creates nothing (no empty database, no directory, no tables in a PostgreSQL
    database: ``omen db init URL`` makes them)."""
    if is_postgres_url(url):
        return PostgresStore(url, create=False)
    if url.startswith("sqlite:") and url != "sqlite::memory:":
        path = _sqlite_path(url)
        if not _is_file(path, "a database"):
            raise NoStore(url, f"no such database ({path} does not exist)")
    elif url.endswith(".jsonl"):
        if not _is_file(url, "a log"):
            raise NoStore(url, f"no such log (omen run SCENARIO --log {shlex.quote(url)} starts a fight there)")
    elif url.endswith(("/", os.sep)) and not os.path.isdir(url):
        raise NoStore(url, "no such directory of logs")
    return open_store(url)


def open_snapshots(url: str) -> SnapshotStore:
    """The snapshot cache that goes with the store ``url`` names: ``LOG.snapshots/`` beside a JSON Lines
    file, ``.snapshots/`` inside a directory, a ``snapshots`` table in a SQLite or PostgreSQL database, or memory."""
    if url in {"memory:", "sqlite::memory:"}:
        return MemorySnapshots()
    if url.startswith("sqlite:"):
        return SqliteSnapshots(_sqlite_path(url))
    if is_postgres_url(url):
        return PostgresSnapshots(url)
    if url.endswith(".jsonl"):
        return FileSnapshots(url + ".snapshots")
    if url.endswith(("/", os.sep)) or (url and os.path.isdir(url)):
        return FileSnapshots(os.path.join(url, ".snapshots"))
    raise _bad(url)


def creates_file(url: str) -> bool:
    """Whether :func:`open_store` would create a file for ``url`` as it opens it: a SQLite database that is not
    there yet (a JSON Lines log is created by its first append, a PostgreSQL database by its server). A caller
    that may refuse before writing checks first, so that a refusal leaves no empty database behind."""
    if not url.startswith("sqlite:") or url == "sqlite::memory:":
        return False
    return not _is_file(_sqlite_path(url), "a database")


def _is_file(path: str, what: str) -> bool:
    """Whether a regular file is at ``path`` (symlinks followed; False if nothing is there);
    :class:`StoreUnavailable` if something else is: a directory, a FIFO, a device."""
    if "\x00" in path:
        raise StoreUnavailable(path, "a path cannot hold a NUL byte")
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise StoreUnavailable(path, exc.strerror or str(exc)) from exc
    if stat.S_ISREG(mode):
        return True
    raise StoreUnavailable(path, not_regular(mode, what))


def _sqlite_path(url: str) -> str:
    """The database path of a ``sqlite:`` URL (``sqlite:///rel.db``, ``sqlite:////abs.db``, ``sqlite:rel.db``)."""
    rest = url.removeprefix("sqlite:")
    if rest.startswith("///"):
        rest = rest[3:]
    elif rest.startswith("//"):
        raise _bad(url, "a sqlite URL has three slashes before the path, e.g. 'sqlite:///fights.db'")
    if not rest:
        raise _bad(url, "the sqlite URL names no database file")
    return rest


def _bad(url: str, why: str = "") -> NoStore:
    """The error for a URL that names no store."""
    forms = "; ".join(ACCEPTED_FORMS)
    lead = f"cannot open an event store from {url!r}" + (f" ({why})" if why else "")
    error = NoStore(url, f"{lead}; accepted forms: {forms}")
    error.args = (f"{lead}; accepted forms: {forms}",)  # (its words as they were: the URL is in them already)
    return error
