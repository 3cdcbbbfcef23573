"""The server's bounds, in one place: how much a request may carry and how much work it may ask for (docs/server.md,
"Limits").

Every bound here is checked where a request is decoded or its work begins, and
answered with a problem document (400, 413 or 422) naming the field, never a
500 or unbounded work. The values are far above what a table needs: a fight of
the rules holds a handful of combatants, a title a few words.
"""

from __future__ import annotations

__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "MAX_TITLE", "MAX_NOTE", "MAX_NAME", "MAX_COMBATANTS",
           "MAX_PUBLIC_EFFECTS", "MAX_SEATS", "MAX_TOKEN", "MAX_IDEMPOTENCY_KEY", "MAX_SEQ", "EVENTS_PAGE",
           "FIGHTS_PAGE", "IDEMPOTENCY_WAIT", "STORE_TIMEOUT", "MAX_HEADER_BYTES", "REQUEST_HEAD_SECONDS",
           "MAX_CONNECTIONS", "STREAMS_PER_TOKEN", "FIGHT_IDLE", "FIGHTS_HELD"]

MAX_BODY_BYTES = 1 << 20
"""The largest request body: 1 MiB (a fight of 32 sheets in JSON is about 40 KB). Past it, 413."""

MAX_JSON_DEPTH = 32
"""The deepest nesting of arrays and objects in a JSON body (the deepest omen document, a sheet inside a fight,
nests 6 deep). Past it, 400, before anything decodes the body."""

MAX_TITLE = 200
"""The longest fight title, in characters."""

MAX_NOTE = 2000
"""The longest GM note (one per combatant, and one for the fight), in characters."""

MAX_NAME = 100
"""The longest seat name, in characters."""

MAX_COMBATANTS = 32
"""The most combatants a fight may start with (its roster): what the engine offers grows with the square of the
roster (every attacker against every target, each with its weapons: docs/performance.md), so the roster is
bounded to keep every answer proportionate. Also the most combatants one seat plays, and the most named in
``hidden``."""

MAX_PUBLIC_EFFECTS = 64
"""The most save effect names a fight's settings make public (``public_effects``), each at most :data:`MAX_TITLE`
characters."""

MAX_SEATS = 64
"""The most seats (the GM's, players', spectators') one fight may have."""

MAX_TOKEN = 200
"""The longest bearer token looked up (omen's are 50 characters); a longer one is 401 without a look."""

MAX_HEADER_BYTES = 16384
"""The request line and headers together that the HTTP server (uvicorn, over h11: ``h11_max_incomplete_event_size``,
h11's default) always reads: a header block past it may be refused by uvicorn itself, with a plain-text ``400
Invalid HTTP request received.``, before omen sees it (when a read leaves more than this of it incomplete, which
depends on how it arrives). Far above every header omen takes: a token past :data:`MAX_TOKEN` is omen's 401."""

MAX_IDEMPOTENCY_KEY = 200
"""The longest ``Idempotency-Key``, in characters."""

MAX_SEQ = (1 << 63) - 1
"""The largest seq a request may name (``after``, ``Last-Event-ID``, an explained seq): what the stores' 64-bit
integers hold. Past it, 400."""

EVENTS_PAGE = 500
"""The most events one ``GET /fights/{id}/events`` answers (``limit``: 1 to 500, 100 by default), and one stream
message batch."""

FIGHTS_PAGE = 100
"""The most fights one ``GET /fights`` answers (``limit``: 1 to 100, 100 by default), and the set-up page lists."""

IDEMPOTENCY_WAIT = 10.0
"""How long (seconds) a request waits for the first answer to its ``Idempotency-Key`` while another request with
the same key is being answered (by this server or another); past it, 409 ``idempotency-key-pending``."""

STORE_TIMEOUT = 1.0
"""How long (seconds) a request waits for the store before its 503: a PostgreSQL connection from the pool, a
SQLite lock held by another process."""

REQUEST_HEAD_SECONDS = 10.0
"""How long (seconds) a connection has to send a request's line and headers whole, from its opening or from the
answer before it (kept alive); past it the server closes the connection. A request being answered, a live stream
among them, is never cut."""

MAX_CONNECTIONS = 512
"""The most connections one server process holds open at once (every seat's page holds one for its live stream);
a new one past it is answered a plain-text 503 (``Retry-After: 1``) and closed."""

STREAMS_PER_TOKEN = 8
"""The most live streams (``GET /fights/{id}/stream``) one token may hold open at once on one server process (a
player's phone and laptop hold two); the next is 429 ``too-many-streams`` until one ends."""

#: How long a server process holds a fight no request or stream has asked for (its state, options and views: a few
#: MB for a fight of hundreds of events), in seconds: then it is forgotten, and read again from the store when next
#: asked for (a convention's server grew by every fight it had served, for good: an operator tester). A table
#: page's live stream looks at its fight every second, so a fight with a page open is held. (Comments, not
#: docstrings: a string's words become words no sheet's id may be, tests/engine_words.py.)
FIGHT_IDLE = 600.0

#: The most fights a server process holds in memory: past it the one used least recently is forgotten, as above.
FIGHTS_HELD = 256
