"""Run the app with uvicorn: the store URL, the keep's file, the host and port, the creation token (``omen serve``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from omen_core.errors import BadInput, OmenError
from omen_core.store import EventStore, open_store

from .asgi import check_creation, close_all, create_app, found_fight
from .guard import new_create_token
from .keep import AnyKeep, Keep, open_keep, store_identity
from .limits import MAX_HEADER_BYTES, STORE_TIMEOUT

__all__ = ["serve", "run", "run_workers", "close_all", "app_from_environment", "default_keep", "server_store",
           "server_keep", "setup_link", "configure_logging", "main", "CREATE_VARIABLE", "scenario_spec",
           "found_scenarios"]

DEFAULT_STORE = "sqlite:///omen.db"
#: The environment variable an operator may set to the creation token (``--create-token`` takes it too).
CREATE_VARIABLE = "OMEN_CREATE_TOKEN"


def default_keep(store_url: str) -> str:
    """Where the keep goes by default: beside a SQLite or JSON Lines store (``omen.db`` -> ``omen.keep.db``),
    in memory for a memory store, in the store's own database for PostgreSQL (its URL)."""
    if store_url.lower().startswith(("postgresql://", "postgres://")):
        return store_url
    if store_url in {"memory:", "sqlite::memory:"}:
        return ":memory:"
    path = store_url.removeprefix("sqlite:///") if store_url.startswith("sqlite:///") else store_url
    root, _ext = os.path.splitext(os.path.normpath(path))  # (``fights/.`` kept ``fights/..keep.db``: a tester)
    return f"{root}.keep.db"


def server_store(store_url: str) -> EventStore:
    """The store a server opens: it waits at most :data:`STORE_TIMEOUT` for a lock or a connection, so that while
    the store cannot be used a request is answered 503 within about a second rather than holding a worker."""
    return open_store(store_url, timeout=STORE_TIMEOUT)


def server_keep(store: EventStore, keep: str | None, default: str, *, rebind: bool = False) -> AnyKeep:
    """The keep a server opens (:func:`open_keep`), waiting at most :data:`STORE_TIMEOUT` as its store does, and
    bound to ``store`` (:meth:`Keep.bind`: a keep another store's server used is refused; ``rebind``, this store
    being that one moved or renamed, binds it to this one); a keep in the store's own database needs no binding."""
    kept = open_keep(store, keep, default, timeout=STORE_TIMEOUT)
    identity = store_identity(store)
    if isinstance(kept, Keep) and identity is not None:
        try:
            if not rebind and kept.bound() is None:
                _holds_some(store, kept, identity)
            kept.bind(identity, rebind=rebind)
        except BaseException:
            kept.close()
            raise
    return kept


def _holds(store: EventStore, fight_id: str) -> bool:
    """Whether the store holds a fight, a log of it that cannot be read (torn, corrupt) included: it is there."""
    try:
        return store.version(fight_id) > 0
    except OmenError:
        return True


def _holds_some(store: EventStore, kept: Keep, identity: str) -> None:
    """A keep not bound yet (made before keeps were bound) that holds seats is bound to this store only if the store
    holds one of their fights: else it is another store's keep (an older omen's keep was bound to the first store
    that opened it, an empty one too: an operator tester)."""
    fights = kept.fight_ids()
    if fights and not any(_holds(store, f) for f in fights):
        shown = ", ".join(repr(f) for f in fights[:3]) + (", ..." if len(fights) > 3 else "")
        raise BadInput(f"{kept.path}: this keep holds the seats of fights {identity} does not hold ({shown}): it is "
                       "another store's keep; give this store its own with --keep PATH, or, if this store is the "
                       "keep's own, its fights since gone, bind the keep to it with --rebind-keep")


def setup_link(host: str, port: int, create_token: str) -> str:
    """The set-up page's address with the creation token in its fragment (a browser never sends a fragment to a
    server: no access log or ``Referer`` holds it), which the page sends as the bearer token of ``POST /fights``.

    A server listening on every address (``0.0.0.0``, ``::``) is opened at loopback from its own machine (a link to
    ``0.0.0.0`` opens nowhere else: an operator tester).

    >>> setup_link("127.0.0.1", 8000, "omen_create_abc")
    'http://127.0.0.1:8000/#create=omen_create_abc'
    >>> setup_link("0.0.0.0", 8000, "omen_create_abc")
    'http://127.0.0.1:8000/#create=omen_create_abc'
    """
    return f"{_origin(host, port)}/#create={create_token}"


def _origin(host: str, port: int) -> str:
    """The address a link to this server opens from its own machine (``0.0.0.0`` opens at loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    where = f"[{host}]" if ":" in host else host
    return f"http://{where}:{port}"


def scenario_spec(path: str) -> tuple[Any, list[str]]:
    """The ``POST /fights`` body a scenario file sets up (docs/server.md, "A fight written as a scenario"): its id,
    title, ruleset (if it names one) and combatants, each ability its libraries write out in its sheet, seeded dice
    (the server's own seed) or manual (a scripted or manual scenario: each command carries its faces); and what of
    the scenario the server leaves out, in words (its commands, its seed)."""
    from omen_core.store import MemoryStore
    from omen_replay.scenario import load_scenario, run_scenario

    from .app import CreateFight

    loaded = load_scenario(path, seeded_elsewhere=True)
    settings = loaded.settings
    # the set-up as omen run starts it, in memory: a sheet or a library ability the rules refuse is named in its
    # file, at its line (the server's own check names the request's $.combatants[1], a body the GM never wrote)
    run_scenario(msgspec.structs.replace(loaded, steps=(), settings=msgspec.structs.replace(
        settings, dice="manual", seed=None, next_seeds=())), MemoryStore())
    given = CreateFight(id=settings.id, title=settings.title, dice="seeded" if settings.dice == "seeded" else "manual",
                        ruleset=loaded.ruleset if settings.ruleset else None, combatants=loaded.combatants)
    try:  # the body's own bounds, as POST /fights decodes it (a title of 200 characters, 32 combatants at most)
        spec = msgspec.convert(msgspec.to_builtins(given), CreateFight)
    except msgspec.ValidationError as exc:
        raise BadInput(f"--scenario {path}: as a POST /fights body: {exc}") from None
    left: list[str] = []
    if loaded.steps:
        left.append(f"its {len(loaded.steps)} command{'s' if len(loaded.steps) != 1 else ''} (the table gives "
                    "them)")
    if settings.seed or settings.next_seeds:
        left.append("its seed (the server draws its own and keeps it until the GM reveals it, C42)")
    return spec, left


def _refused(path: str, step: Callable[..., Any], *args: Any) -> Any:
    """``step(*args)``, a refusal of it said as the scenario file's (the request's checks raise an HTTP 4xx: its
    detail)."""
    try:
        return step(*args)
    except OmenError as exc:
        raise BadInput(f"--scenario {path}: {exc}") from None
    except Exception as exc:
        detail = getattr(exc, "detail", None)
        if detail is None:
            raise
        raise BadInput(f"--scenario {path}: {detail}") from None


def found_scenarios(store: EventStore, keep: AnyKeep, paths: Sequence[str], host: str, port: int,
                    made: Callable[[str], None] = lambda fight_id: None) -> list[str]:
    """Create the fight of each scenario file (``omen serve --scenario``), unless the store holds its id already;
    the lines to print: each new fight's GM link (its token, shown this once), or why it was not made. A scenario
    that cannot be read, or whose set-up ``POST /fights`` would refuse, raises (:class:`BadInput`, its file named),
    before any of them is created; ``made`` is told the id of each fight made, as it is made."""
    specs: list[tuple[Any, list[str], str]] = []
    for path in paths:
        try:
            spec, left = scenario_spec(path)
        except OmenError as exc:
            if isinstance(exc, BadInput) and str(path) in str(exc):
                raise
            raise BadInput(f"--scenario {path}: {exc}") from None
        if any(spec.id == other.id for other, _l, _p in specs):
            raise BadInput(f"--scenario {path}: fight {spec.id!r} is set up by an earlier --scenario too")
        _refused(path, check_creation, spec)  # every check of every file before any fight is made (a later
        specs.append((spec, left, path))  # file's refusal left an earlier fight made, its GM's link never shown)
    lines = []
    for spec, left, path in specs:
        if store.version(spec.id):
            lines.append(f"{path}: the store holds fight {spec.id!r} already; not made again (a fight's GM link is "
                         "given once, when omen serve makes it; a fight omen run wrote has none: give the scenario "
                         "another [fight] id, or serve another store)")
            continue
        made_fight = _refused(path, found_fight, store, keep, spec)
        made(made_fight.fight_id)
        said = f"; left out: {'; '.join(left)}" if left else ""
        lines.append(f"{path}: fight {made_fight.fight_id!r} made ({len(spec.combatants)} combatants{said}); the "
                     f"GM's table, its token shown this once: {_origin(host, port)}/table/{made_fight.fight_id}"
                     f"#token={made_fight.gm_token}")
    return lines


def port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on now (another server holds it, an address not this machine's), or
    None: tried before anything is opened or printed, so that a port taken is said before a store is made or a
    set-up link printed for another server (an operator tester got both, then uvicorn's own plain error)."""
    import socket

    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds (a closing one: no clash)
            probe.bind((host, port))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def configure_logging(fmt: str = "console", level: str = "warning") -> None:
    """Configure structlog for a server process the CLI did not start (``python -m omen_server``, a worker): one
    line per event to stderr, human or JSON, tracebacks included, as ``omen --log-format`` would."""
    import logging
    import sys

    import structlog

    from omen_core.logs import host_processors, route_library_logs

    structlog.configure(
        processors=host_processors(json=fmt == "json"),
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper(), logging.WARNING)),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr), cache_logger_on_first_use=False)
    route_library_logs(fmt == "json", level, sys.stderr)


def serve(store_url: str = DEFAULT_STORE, host: str = "127.0.0.1", port: int = 8000, keep: str | None = None,
          log_level: str = "warning", create_token: str | None = None, *, rebind_keep: bool = False,
          scenarios: Sequence[str] = ()) -> None:
    """Serve the fights of ``store_url`` until interrupted; ``create_token``: the token ``POST /fights`` needs
    (made up and printed in the set-up link if None); ``rebind_keep`` as ``omen serve --rebind-keep``. The link is
    printed once the store and its keep are open (it was printed before a keep refused); ``scenarios``: the
    scenario files whose fights are made first, as ``omen serve --scenario``'s."""
    store = server_store(store_url)
    kept = server_keep(store, keep, default_keep(store_url), rebind=rebind_keep)
    founded = found_scenarios(store, kept, scenarios, host, port)
    token = create_token or new_create_token()
    print(f"omen serve: open {setup_link(host, port, token)} to set up a fight", flush=True)
    for line in founded:
        print(line, flush=True)
    run(store, kept, host, port, log_level, token)


def run(store: EventStore, keep: AnyKeep, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning",
        create_token: str | None = None) -> None:
    """Serve the fights of ``store`` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(store, keep, create_token=create_token, close_on_shutdown=True), host=host, port=port,
                log_level=log_level, timeout_graceful_shutdown=GRACE_SECONDS, **HTTP_OPTIONS)


#: How long an interrupted server (Ctrl-C, SIGTERM) waits for the requests in flight before it closes them: a
#: live stream never ends by itself, so without a bound one open table page kept the process alive, its pages
#: still saying "live". A command in flight is appended whole or not at all either way (the stores' appends are
#: atomic); a page whose stream is closed reconnects to the next server on that port.
GRACE_SECONDS = 3

#: uvicorn's HTTP implementation, named (not "auto", which would take httptools where it is installed, with a
#: header bound of its own) and bounded as docs/server.md's "Limits" says: MAX_HEADER_BYTES, and h11 as
#: :class:`omen_server.http11.BoundedH11Protocol` bounds it (REQUEST_HEAD_SECONDS, MAX_CONNECTIONS), named by its
#: import path (it imports uvicorn: not before a server starts).
HTTP_OPTIONS: dict[str, Any] = {"http": "omen_server.http11:BoundedH11Protocol",
                                "h11_max_incomplete_event_size": MAX_HEADER_BYTES}

STORE_VARIABLE, KEEP_VARIABLE, LOG_VARIABLE = "OMEN_SERVE_STORE", "OMEN_SERVE_KEEP", "OMEN_SERVE_LOG"


def run_workers(store_url: str, keep_path: str, workers: int, host: str = "127.0.0.1", port: int = 8000,
                log_level: str = "warning", create_token: str | None = None, log: str = "console:warning") -> None:
    """Serve with ``workers`` processes sharing one socket, the store and the keep (each process opens them:
    :func:`app_from_environment`); the store's version check keeps their appends apart, as it keeps separate
    servers' apart. ``log``: the log format and level of the workers' own lines (``json:info``)."""
    import uvicorn

    os.environ[STORE_VARIABLE], os.environ[KEEP_VARIABLE], os.environ[LOG_VARIABLE] = store_url, keep_path, log
    if create_token:
        os.environ[CREATE_VARIABLE] = create_token
    uvicorn.run("omen_server.serve:app_from_environment", factory=True, workers=workers, host=host, port=port,
                log_level=log_level, timeout_graceful_shutdown=GRACE_SECONDS, **HTTP_OPTIONS)


def app_from_environment() -> object:
    """The app of one worker process: the store, keep, creation token and logging the parent named in the
    environment."""
    fmt, _, level = os.environ.get(LOG_VARIABLE, "console:warning").partition(":")
    configure_logging(fmt, level or "warning")
    store = server_store(os.environ[STORE_VARIABLE])
    return create_app(store, server_keep(store, os.environ[KEEP_VARIABLE] or None, ""),
                      create_token=os.environ.get(CREATE_VARIABLE) or None, close_on_shutdown=True)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m omen_server``: the same as ``omen serve``."""
    parser = argparse.ArgumentParser(prog="omen serve", description="Serve fights over HTTP.")
    parser.add_argument("--store", default=DEFAULT_STORE, help=f"the event store URL (default {DEFAULT_STORE})")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--keep", default=None, help="the server's own database: token hashes, seeds (default: "
                                                     "beside the store)")
    parser.add_argument("--create-token", default=os.environ.get(CREATE_VARIABLE) or None,
                        help=f"the token creating a fight needs (default: ${CREATE_VARIABLE}, else one made up "
                             "and printed in the set-up link)")
    parser.add_argument("--rebind-keep", action="store_true",
                        help="bind the keep to this store: the one it was used with, moved or renamed")
    parser.add_argument("--scenario", action="append", default=[], metavar="FILE",
                        help="create the fight this scenario file sets up, unless the store holds it, and print its "
                             "GM's link (repeatable)")
    args = parser.parse_args(argv)
    configure_logging()
    try:
        serve(args.store, args.host, args.port, args.keep, create_token=args.create_token,
              rebind_keep=args.rebind_keep, scenarios=args.scenario)
    except OmenError as exc:  # one line, exit 2, as omen serve says it (it was a traceback, exit 1: a tester)
        print(f"omen serve: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
