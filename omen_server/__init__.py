"""omen's network back end: an ASGI app (Litestar) that holds fights, takes commands and serves each seat's view."""

from __future__ import annotations

from .asgi import create_app

__all__ = ["create_app"]
