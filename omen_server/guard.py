"""Hostile input met in bounded time: JSON nested too deep, seqs past what a store holds, bearer tokens and creation
tokens, and the log line of every answer the server could not give (a 500, with its traceback).

What a request may carry is in :mod:`omen_server.limits`; here are the checks that need more than a bound on a
decoded field: they run before anything decodes a body (a JSON document nested 1,000 deep would exhaust the
decoder's recursion), and they are cheap (a scan of the body in C, whatever it holds).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import urllib.parse
from typing import Any

import structlog
from litestar.exceptions import HTTPException, NotFoundException, ValidationException

from omen_core.store.base import FIGHT_ID, FIGHT_ID_WORDS

from .limits import MAX_JSON_DEPTH, MAX_SEQ

__all__ = ["too_deep", "check_body", "check_once", "check_path", "check_media_type", "ONCE", "parse_seq",
           "new_create_token", "same_token", "page_headers", "log_failure"]

log = structlog.get_logger("omen.server")

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKETS = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SEQ = re.compile(r"[0-9]{1,19}")


def too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON ``body`` nests arrays and objects more than ``limit`` deep (brackets inside strings set
    aside). Each pass takes out the innermost pairs, so ``limit`` passes empty any document no deeper; every step
    is a C loop over the body (a 1 MiB body of brackets is checked in milliseconds). A body whose brackets do not
    pair is left to the decoder, which says where.

    >>> too_deep(b'{"a": [[1, 2], {"b": "[[[[["}]}', limit=3)
    False
    >>> too_deep(b"[" * 4 + b"]" * 4, limit=3)
    True
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", body).translate(_BRACKETS, _NOT_BRACKETS)
    if not brackets:  # every bracket was inside a string
        return False
    for _ in range(limit):
        inner = brackets.replace(b"()", b"")
        if not inner or len(inner) == len(brackets):
            return False
        brackets = inner
    return True


async def check_body(request: Any) -> None:
    """Refuse (400, at ``$``) a request body nested deeper than :data:`MAX_JSON_DEPTH`, before anything decodes it;
    a body larger than the bound is refused by reading it (413, Litestar's ``request_max_body_size``)."""
    if request.method not in {"POST", "PUT", "PATCH"}:
        return
    if too_deep(await request.body()):
        raise ValidationException(detail="the body nests too deep", extra=[{
            "message": f"JSON nested more than {MAX_JSON_DEPTH} arrays and objects deep", "key": "",
            "source": "body"}])


#: The headers omen reads, as the OpenAPI document names them: each may be given once.
ONCE = {name.lower(): name for name in ("Authorization", "Idempotency-Key", "Last-Event-ID", "Content-Type",
                                        "X-Table-Tag")}


def check_once(scope: Any) -> None:
    """Refuse (400, naming it: ``query.limit``, ``header.Authorization``) a query parameter, or a header omen reads
    (:data:`ONCE`), given twice: servers and proxies differ on which of the two counts (the first, the last, both
    joined), so neither does, as for a name given twice in a JSON object."""
    names = [name for name, _ in urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                                                         keep_blank_values=True)]
    twice = next((name for n, name in enumerate(names) if name in names[:n]), None)
    if twice is not None:
        _twice(twice[:100], "query", "query parameter")
    seen: set[str] = set()
    for raw, _value in scope.get("headers", ()):
        name = raw.decode("latin-1").lower()
        if name in ONCE and name in seen:
            _twice(ONCE[name], "header", "header")
        seen.add(name)


#: The query parameters that are whole numbers (type integer in the OpenAPI document), by the path's last segment
#: ("" for any path): ``limit`` everywhere, ``after`` of the events and the stream (the fights' ``after`` is an id).
WHOLE_QUERY = {"": ("limit",), "events": ("after",), "stream": ("after",)}
_DIGITS = re.compile(r"[0-9]+")


def check_wholes(scope: Any) -> None:
    """Refuse (400, naming it: ``query.after``) a whole-number query parameter written other than in ASCII digits:
    the decoder took ``1e1`` for 10 (and ``+3`` not), where the OpenAPI document says an integer; and a seq in a
    path (``/explain/{seq}``) written other than in ASCII digits is no route (404), as ``/explain/abc`` is not:
    ``int()`` read the Arabic-Indic ``٣`` as 3 (a tester)."""
    path = str(scope.get("path", ""))
    last = path.rstrip("/").rsplit("/", 1)[-1]
    wholes = WHOLE_QUERY[""] + WHOLE_QUERY.get(last, ())
    for name, value in urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                                              keep_blank_values=True):
        if name in wholes and not _DIGITS.fullmatch(value):
            raise ValidationException(detail=f"{name} is a whole number", extra=[{
                "message": f"Expected a whole number in ASCII digits (0-9), not {value[:40]!r}", "key": name,
                "source": "query"}])
    if "/explain/" in path and not _DIGITS.fullmatch(last):
        raise NotFoundException(detail=f"no such path: {path[:200]!r} (a seq in a path is a whole number, in ASCII "
                                       "digits)")


def check_path(request: Any) -> None:
    """Refuse (400, at ``path.fight_id``) a fight id in the path that is no fight id (:data:`FIGHT_ID`, as the
    OpenAPI document's pattern says: ``dup\\n``, a space, 129 characters), before the token is looked at: a
    token of another fight was told "this token is for another fight" (403) about an id no fight can have."""
    given = request.path_params.get("fight_id") if hasattr(request, "path_params") else None
    if isinstance(given, str) and not FIGHT_ID.match(given):
        raise ValidationException(detail="not a fight id", extra=[{
            "message": f"{given[:140]!r} is not a fight id: {FIGHT_ID_WORDS}", "key": "fight_id", "source": "path"}])


def _twice(name: str, source: str, what: str) -> None:
    raise ValidationException(detail=f"a {what} given twice", extra=[{
        "message": f"the {what} {name!r} is given twice (servers differ on which counts: give it once)",
        "key": name, "source": source}])


_JSON = re.compile(r'\s*application/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?', re.I)


async def check_media_type(request: Any) -> None:
    """Refuse (415) a request body that is not said to be JSON: its ``Content-Type`` must be ``application/json``
    (``; charset=utf-8`` allowed), the one the OpenAPI document lists; another (``text/plain``, a form), or none,
    would otherwise be decoded as JSON all the same; so must a body sent with a DELETE (none is read). A request
    without a body (a seat's reissue) needs none. A body said to be encoded (``Content-Encoding`` other than
    ``identity``: gzip, br) is refused too: omen reads the bytes as sent, and a proxy that decoded them would see
    another body."""
    if request.method not in {"POST", "PUT", "PATCH", "DELETE"}:
        return
    coding = request.headers.get("content-encoding")
    if coding is not None and coding.strip().lower() != "identity":
        raise HTTPException(status_code=415, detail=f"a request body is sent as it is, not encoded (this one has "
                                                    f"Content-Encoding {coding[:100]!r})")
    given = request.headers.get("content-type")
    if (given is not None and _JSON.fullmatch(given)) or not await request.body():
        return
    said = "no Content-Type" if given is None else f"Content-Type {given[:100]!r}"
    raise HTTPException(status_code=415, detail=f"a request body is JSON, sent as Content-Type: application/json "
                                                f"(this one has {said})")


def parse_seq(text: str) -> int | None:
    """A seq as a client writes it (``Last-Event-ID``): ASCII digits, at most :data:`MAX_SEQ`; None otherwise
    (``str.isdigit`` would take ``²``, which ``int`` refuses).

    >>> parse_seq("42"), parse_seq("²"), parse_seq(str(2 ** 63)), parse_seq("4 2")
    (42, None, None, None)
    """
    if _SEQ.fullmatch(text) is None:
        return None
    seq = int(text)
    return seq if seq <= MAX_SEQ else None


def new_create_token() -> str:
    """A fresh creation token, ``omen_create_`` and 43 URL-safe characters (256 random bits)."""
    return f"omen_create_{secrets.token_urlsafe(32)}"


def same_token(given: str, expected: str) -> bool:
    """Whether a bearer token is the creation token (compared in constant time)."""
    return hmac.compare_digest(given.encode(), expected.encode())


_STYLE = re.compile(r"<style>(.*?)</style>", re.S)


def page_headers(page: str, csp: str) -> dict[str, str]:
    """The headers a self-contained HTML page is served with (the session log): the table page's ``csp`` with the
    page's own ``<style>`` blocks let in by their hashes (the template's; a fight's text is escaped, so it adds
    none), ``nosniff``, and no ``Referer``.

    >>> page_headers("<style>p{}</style>", "style-src 'self'")["Content-Security-Policy"]
    "style-src 'self' 'sha256-gG2yISYereRMiG2lMXrbiUgi0Ubw9p7QCeWcroOvy9Y='"
    """
    hashes = "".join(f" 'sha256-{base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()}'"
                     for block in _STYLE.findall(page))
    return {"Content-Security-Policy": csp.replace("style-src 'self'", "style-src 'self'" + hashes),
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def log_failure(exc: BaseException, method: str, path: str) -> str:
    """Log an answer the server could not give (a 500, or a stream that broke off) with its traceback, to the
    server's log (structlog, as the host configured it: ``omen serve`` writes to stderr); return the reference
    its problem document gives the client to quote."""
    ref = secrets.token_hex(6)
    log.error("internal error", ref=ref, method=method, path=path, error=type(exc).__name__, exc_info=exc)
    return ref
