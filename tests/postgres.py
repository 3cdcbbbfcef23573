"""A real PostgreSQL for the tests: a database of their own, and a fresh schema for each store a test opens.

The tests that need PostgreSQL take the ``postgres`` fixture. Where no
server is given they are skipped, saying how to run them: set
``OMEN_TEST_POSTGRES_URL`` to a database URL whose user may create
databases (``eval "$(scripts/pg-test-cluster.sh start)"`` starts a
throwaway cluster and prints it). ``OMEN_REQUIRE_POSTGRES=1`` (``.ci/run``
sets it) makes a missing or unreachable server a failure instead.
The restart tests stop and start a cluster of their own
(``own_postgres``, started by the same script), never the session's.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "pg-test-cluster.sh"
HOW = ("set OMEN_TEST_POSTGRES_URL to a PostgreSQL URL whose user may create databases; "
       "eval \"$(scripts/pg-test-cluster.sh start)\" starts a throwaway cluster and sets it "
       "(OMEN_REQUIRE_POSTGRES=1 makes these tests mandatory, as .ci/run does)")


def with_database(url: str, dbname: str) -> str:
    """``url`` naming database ``dbname`` instead of its own."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{dbname}"))


def with_schema(url: str, schema: str) -> str:
    """``url`` with ``schema`` first on its search path (libpq's ``options`` parameter): omen's tables go there."""
    option = quote(f"-csearch_path={schema}", safe="")
    return f"{url}{'&' if '?' in url else '?'}options={option}"


class Postgres:
    """The test session's database on the server ``OMEN_TEST_POSTGRES_URL`` names."""

    def __init__(self, server_url: str, cluster_dir: str | None = None):
        import psycopg

        self.server_url = server_url
        self.dbname = f"omen_tests_{secrets.token_hex(4)}"
        with psycopg.connect(server_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE DATABASE "{self.dbname}"')
        self.url = with_database(server_url, self.dbname)
        self._count = itertools.count()
        self.cluster_dir = cluster_dir

    def fresh_url(self) -> str:
        """The URL of a new, empty schema of the session's database: a store opened there starts empty."""
        import psycopg

        schema = f"s{next(self._count)}_{secrets.token_hex(3)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        return with_schema(self.url, schema)

    def require_cluster(self) -> None:
        """Skip the test unless this is a cluster of its own (:func:`own_postgres`), which the test may stop: called
        first, before the test opens a connection that a skip would leave open."""
        if self.cluster_dir is None:
            pytest.skip("stopping the server needs a cluster of the test's own (scripts/pg-test-cluster.sh)")

    def pause(self) -> None:
        """Stop the PostgreSQL server (the cluster the script started)."""
        self._cluster("pause")

    def resume(self) -> None:
        """Start it again."""
        self._cluster("resume")

    def _cluster(self, action: str) -> None:
        self.require_cluster()
        assert self.cluster_dir is not None
        subprocess.run(["bash", str(SCRIPT), action, self.cluster_dir], check=True, timeout=120)

    def drop(self) -> None:
        """Drop the session's database, whoever is still connected to it."""
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.dbname}" WITH (FORCE)')


def _required() -> bool:
    return os.environ.get("OMEN_REQUIRE_POSTGRES", "") not in {"", "0"}


@pytest.fixture(scope="session")
def postgres_session() -> Iterator[Postgres | str]:
    """The session's PostgreSQL, or why there is none (a skip reason)."""
    url = os.environ.get("OMEN_TEST_POSTGRES_URL")
    if not url:
        yield f"no PostgreSQL for these tests: {HOW}"
        return
    try:
        found = Postgres(url)
    except Exception as exc:  # psycopg's errors: say which server could not be used
        yield f"cannot use the PostgreSQL at OMEN_TEST_POSTGRES_URL ({exc}); {HOW}"
        return
    yield found
    found.drop()


@pytest.fixture
def own_postgres(postgres_session: Postgres | str) -> Iterator[Postgres]:
    """A PostgreSQL cluster of the test's own (scripts/pg-test-cluster.sh, in a fresh folder), which the test may
    stop and start (:meth:`Postgres.pause`): the session's server goes on serving the other tests, which may run
    beside it (pytest-xdist); stopped and removed at the end. Skipped, or a failure under OMEN_REQUIRE_POSTGRES,
    where there is no PostgreSQL for the session or the script cannot start one."""
    if isinstance(postgres_session, str):
        if _required():
            pytest.fail(f"OMEN_REQUIRE_POSTGRES is set but: {postgres_session}")
        pytest.skip(postgres_session)
    where = tempfile.mkdtemp(prefix="omen-own-pg-")  # under /tmp: the cluster's owner must reach it (not pytest's)
    started = subprocess.run(["bash", str(SCRIPT), "start", where], capture_output=True, text=True, timeout=180,
                             check=False)
    found = re.search(r"OMEN_TEST_POSTGRES_URL='([^']*)'", started.stdout)
    if started.returncode != 0 or found is None:
        subprocess.run(["bash", str(SCRIPT), "stop", where], capture_output=True, timeout=120, check=False)
        why = f"scripts/pg-test-cluster.sh could not start a cluster of the test's own: {started.stderr.strip()}"
        if _required():
            pytest.fail(f"OMEN_REQUIRE_POSTGRES is set but: {why}")
        pytest.skip(why)
    try:
        yield Postgres(found.group(1), cluster_dir=where)
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", where], capture_output=True, timeout=120, check=False)


@pytest.fixture
def postgres(postgres_session: Postgres | str) -> Postgres:
    """The session's PostgreSQL: skipped where there is none, a failure if OMEN_REQUIRE_POSTGRES is set."""
    if isinstance(postgres_session, str):
        if _required():
            pytest.fail(f"OMEN_REQUIRE_POSTGRES is set but: {postgres_session}")
        pytest.skip(postgres_session)
    return postgres_session
