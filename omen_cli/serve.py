"""``omen serve`` (the HTTP server, :mod:`omen_server`) and ``omen db init`` (a database store's tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from .app import (
    bad_input,
    check_log_parent,
    guarded,
    held,
    refusals,
    say,
    store_at,
    wrote,
)
from .console import escape, out

if TYPE_CHECKING:
    pass

__all__ = ["serve", "db_app"]

def serve(
    ctx: typer.Context,
    store: Annotated[str, typer.Option(metavar="URL",
                                       help="The event store: a .jsonl file or directory, sqlite:///path.db, "
                                            "postgresql://user@host/db, or memory:.")] = "sqlite:///omen.db",
    host: Annotated[str, typer.Option(metavar="HOST",
                                      help="The address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, metavar="PORT", help="The TCP port.")] = 8000,
    keep: Annotated[str | None, typer.Option(metavar="PATH",
                                             help="The server's own database (token hashes, seeds, idempotent "
                                                  "answers); default: beside the store.")] = None,
    workers: Annotated[int, typer.Option(min=1, max=64, metavar="N",
                                                        help="Server processes sharing the port, the store and "
                                                            "the keep (not with a memory store).")] = 1,
    create_token: Annotated[str | None, typer.Option(envvar="OMEN_CREATE_TOKEN", show_envvar=True,
                                                     metavar="TOKEN",
                                                     help="The token creating a fight needs (default: one made up "
                                                          "at start, in the set-up link printed).")] = None,
    rebind_keep: Annotated[bool, typer.Option("--rebind-keep",
                                              help="Bind the keep to this store: this store is the one the keep "
                                                   "was used with, moved or renamed.")] = False,
    scenario: Annotated[list[str] | None, typer.Option(
        "--scenario", metavar="FILE",
        help="Create the fight this scenario file sets up (its [fight] and [[combatants]], abilities from its "
             "libraries; its commands are left to the table) unless the store holds it, and print its GM's link; "
             "repeatable.")] = None,
) -> None:
    """Serve fights over HTTP: create fights, make seats, read their options, give commands, follow the live
    stream (docs/server.md)."""

    from omen_core.errors import BadInput
    from omen_server.guard import new_create_token
    from omen_server.keep import PostgresKeep
    from omen_server.serve import (
        close_all,
        default_keep,
        found_scenarios,
        port_in_use,
        run,
        run_workers,
        server_keep,
        server_store,
        setup_link,
    )

    busy = port_in_use(host, port)
    if busy is not None:
        guarded(BadInput(f"--host {host} --port {port}: cannot listen there ({busy}): another server may hold the "
                          "port; choose another with --port"))
    keep_path = keep or default_keep(store)
    if workers > 1 and (store in {"memory:", "sqlite::memory:"} or keep_path == ":memory:"):
        guarded(BadInput(f"--workers {workers}: each worker would hold its own memory store; serve a store and "
                          "a keep on disk (sqlite:///omen.db) to share them"))
    with refusals():
        opened = held(server_store(store))
        opened.fights()
        kept = server_keep(opened, keep, default_keep(store), rebind=rebind_keep)
        founded = found_scenarios(opened, kept, scenario or [], host, port,
                                  lambda fight_id: wrote(f"fight {fight_id!r} made in {store}", f"made {fight_id}"))
    if isinstance(kept, PostgresKeep):
        keep_path = f"{kept.path} (its keep_* tables)"
    many = f", {workers} worker processes" if workers > 1 else ""
    token = create_token or new_create_token()
    out.print(f"omen serve: fights of {escape(str(store))} (the keep: {escape(str(keep_path))}{many}); open "
              f"{setup_link(host, port, token)} "
              "to set up a fight; Ctrl-C stops", soft_wrap=True)
    for line in founded:
        out.print(escape(line), soft_wrap=True)
    if getattr(opened, "single_file", False):
        say(f"omen: note: {store} is one JSON Lines file, which keeps one fight: serve a directory of logs "
            "(--store fights/) or a database (sqlite:///omen.db) to create several")
    if host not in {"127.0.0.1", "::1", "localhost"}:  # every page and token in the clear to whoever listens
        say(f"omen: warning: listening on {host}, beyond this machine, in plain HTTP: put it behind a TLS "
            "proxy before players join over a network (docs/server.md); from another machine, open this machine's "
            "address")
    if workers > 1:
        close_all(kept, opened)  # each worker opens its own (and writes SQLite's log back at its end)
        parent = ctx.find_root().params
        run_workers(store, keep or ("" if isinstance(kept, PostgresKeep) else keep_path), workers, host, port,
                    create_token=token, log=f"{parent['log_format'].value}:{parent['log_level']}")
    else:
        run(opened, kept, host, port, create_token=token)


db_app = typer.Typer(no_args_is_help=True, help="The tables of a database store (PostgreSQL, SQLite).")


@db_app.command("init", short_help="Create or upgrade omen's tables in a database.")
def db_init(
    url: Annotated[str, typer.Argument(metavar="URL", help="postgresql://user@host/db (or sqlite:///path.db).")],
) -> None:
    """Create omen's tables in the database, or upgrade them to this omen's schema version (what first use
    does too); an up-to-date database is left as it is."""
    from omen_core.store.postgres import SCHEMA_VERSION, PostgresDatabase, is_postgres_url

    with refusals():
        if is_postgres_url(url):
            db = PostgresDatabase(url)
            db.close()
            found = db.version_found
            if found != SCHEMA_VERSION:
                wrote(f"omen's tables made or upgraded in {db.location} (schema version {SCHEMA_VERSION})")
            if found == SCHEMA_VERSION:
                out.print(f"{escape(db.location)}: omen's tables are at schema version {SCHEMA_VERSION}; "
                          "nothing to do")
            else:
                applied = ", ".join(str(v) for v in range(found + 1, SCHEMA_VERSION + 1))
                out.print(f"{escape(db.location)}: omen's tables are at schema version {SCHEMA_VERSION} "
                          f"({'created' if found == 0 else f'upgraded from {found}'}: applied {applied})")
        elif url.startswith("sqlite:") and url != "sqlite::memory:":
            check_log_parent(url)
            store_at(url)
            wrote(f"omen's tables ready in {url}")
            out.print(f"{escape(url)}: omen's tables are ready")
        else:
            bad_input(f"omen db init makes the tables of a database: give a postgresql:// or sqlite:/// URL, "
                       f"not {url!r} (JSON Lines files are made when a fight is first written)")
