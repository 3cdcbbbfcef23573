"""Run the app with uvicorn: the store URL, the keep's file, the host and port (``omen serve``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from omen_core.store import EventStore, open_store

from .app import create_app
from .keep import AnyKeep, open_keep

__all__ = ["serve", "run", "run_workers", "app_from_environment", "default_keep", "main"]

DEFAULT_STORE = "sqlite:///omen.db"


def default_keep(store_url: str) -> str:
    """Where the keep goes by default: beside a SQLite or JSON Lines store (``omen.db`` -> ``omen.keep.db``),
    in memory for a memory store, in the store's own database for PostgreSQL (its URL)."""
    if store_url.lower().startswith(("postgresql://", "postgres://")):
        return store_url
    if store_url in {"memory:", "sqlite::memory:"}:
        return ":memory:"
    path = store_url.removeprefix("sqlite:///") if store_url.startswith("sqlite:///") else store_url
    root, _ext = os.path.splitext(path.rstrip("/"))
    return f"{root}.keep.db"


def serve(store_url: str = DEFAULT_STORE, host: str = "127.0.0.1", port: int = 8000, keep: str | None = None,
          log_level: str = "warning") -> None:
    """Serve the fights of ``store_url`` until interrupted."""
    store = open_store(store_url)
    run(store, open_keep(store, keep, default_keep(store_url)), host, port, log_level)


def run(store: EventStore, keep: AnyKeep, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning"
        ) -> None:
    """Serve the fights of ``store`` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(store, keep), host=host, port=port, log_level=log_level)


STORE_VARIABLE, KEEP_VARIABLE = "OMEN_SERVE_STORE", "OMEN_SERVE_KEEP"


def run_workers(store_url: str, keep_path: str, workers: int, host: str = "127.0.0.1", port: int = 8000,
                log_level: str = "warning") -> None:
    """Serve with ``workers`` processes sharing one socket, the store and the keep (each process opens them:
    :func:`app_from_environment`); the store's version check keeps their appends apart, as it keeps separate
    servers' apart."""
    import uvicorn

    os.environ[STORE_VARIABLE], os.environ[KEEP_VARIABLE] = store_url, keep_path
    uvicorn.run("omen_server.serve:app_from_environment", factory=True, workers=workers, host=host, port=port,
                log_level=log_level)


def app_from_environment() -> object:
    """The app of one worker process: the store and keep the parent named in the environment."""
    store = open_store(os.environ[STORE_VARIABLE])
    return create_app(store, open_keep(store, os.environ[KEEP_VARIABLE] or None, ""))


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m omen_server``: the same as ``omen serve``."""
    parser = argparse.ArgumentParser(prog="omen serve", description="Serve fights over HTTP.")
    parser.add_argument("--store", default=DEFAULT_STORE, help=f"the event store URL (default {DEFAULT_STORE})")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--keep", default=None, help="the server's own database: token hashes, seeds (default: "
                                                     "beside the store)")
    args = parser.parse_args(argv)
    serve(args.store, args.host, args.port, args.keep)
