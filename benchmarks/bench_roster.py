"""What a fight's roster costs the server (issue 22): ``POST /fights`` and one head of play, by roster size.

What the engine offers grows with the square of the roster: every combatant may attack every other with each of its
weapons (in the set-up phase, all of them at once), call a save on each, contest each; ``omen serve`` computes the
options at every head and sends them with the answer. A hostile 22 KB ``POST /fights`` with 48 combatants cost about
3 s of CPU and answered 3.7 MB; the server now takes at most ``MAX_COMBATANTS`` (32) and only from the operator's
creation token (docs/server.md, "Limits"). This script measures, for rosters of 2 (the baseline), 4, 8, 16, 32 and 48
(48 past the bound: the app is given a larger bound for the measurement, to show what it bounds):

- **create**: ``POST /fights`` through the real app in-process (Litestar's test client): decode the body, start the
  fight (one append), compute the options, encode and gzip the answer; and the answer's size, as JSON and gzipped
  (as a browser gets it);
- **a head in rounds**: after initiative, one ``end_turn`` through the app: the command, the options at the new
  head, the answer.

The Ember Ford sheets, cycled, ids made distinct, sides alternating; seeded dice; a memory store and keep. Round-robin
``--repeat`` times after a warm-up round (medians, see ``_common``); ratios to the 2-combatant roster.

    .venv/bin/python benchmarks/bench_roster.py [--repeat 5] [--sizes 2,4,8,16,32,48] [--json]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from typing import Any

import _common
import msgspec
from _common import Case, run_interleaved, table
from bench_live import sheet
from genlog import quiet_logging
from litestar.testing import TestClient

import omen_server.asgi as asgi_module
from omen_core import MemoryStore
from omen_core.content import CombatantSheet
from omen_server import create_app
from omen_server.keep import Keep

CAST = ("kael", "brin", "vesh", "skarn")


def roster(size: int) -> list[Any]:
    """``size`` Ember Ford sheets, cycled, with distinct ids and names, on two sides in turn."""
    return [msgspec.to_builtins(sheet(CAST[n % 4], id=f"c{n:02d}", name=f"C{n:02d}", side="ab"[n % 2]))
            for n in range(size)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="POST /fights and one head of play, by roster size")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--sizes", default="2,4,8,16,32,48", help="roster sizes, the first the baseline")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    quiet_logging()
    sizes = [int(s) for s in args.sizes.split(",")]
    bound = max(sizes)
    answers: dict[int, int] = {}
    wire: dict[int, int] = {}
    counter = iter(range(10**9))

    def create(size: int) -> tuple[int, float]:
        client = TestClient(create_app(MemoryStore(), Keep()))
        body = msgspec.json.encode({"id": f"r{next(counter)}", "combatants": roster(size)})
        with client:
            start = time.perf_counter()
            answer = client.post("/fights", content=body, headers={"Content-Type": "application/json",
                                                                   "Accept-Encoding": "gzip"})
            spent = time.perf_counter() - start
        assert answer.status_code == 201, answer.text
        answers[size], wire[size] = len(answer.content), int(answer.headers["content-length"])
        return size, spent

    def head(size: int) -> tuple[int, float]:
        client = TestClient(create_app(MemoryStore(), Keep()))
        with client:
            made = client.post("/fights", json={"id": "r", "combatants": roster(size)}).json()
            auth = {"Authorization": f"Bearer {made['gm_token']}"}
            rolled = client.post("/fights/r/commands", headers=auth, json={"command": {"command": "roll_initiative"}})
            options = rolled.json()["options"]
            while options["turn"] is None:  # ties: agree the order as it stands
                offer = next(o for o in options["offers"] if o["command"] in ("agree_initiative", "roll_off"))
                options = client.post("/fights/r/commands", headers=auth, json={"command": {
                    "command": offer["command"], **offer["choices"][0]["args"]}}).json()["options"]
            start = time.perf_counter()
            answer = client.post("/fights/r/commands", headers=auth,
                                 json={"command": {"command": "end_turn", "who": options["turn"]}})
            spent = time.perf_counter() - start
        assert answer.status_code == 201, answer.text
        return size, spent

    with _bounded(bound):
        creates = [Case(f"create, {n} combatants", partial(create, n), roster=n) for n in sizes]
        heads = [Case(f"a head in rounds, {n} combatants", partial(head, n), roster=n) for n in sizes]
        run_interleaved([*creates, *heads], args.repeat)
    rows = [[c.name, _common.fmt_s(c.median), _common.spread(c), f"{_common.ratio(c, base):.1f}x", *extra]
            for cases in (creates, heads) for c, base, extra in (
                (c, cases[0], (f"{answers[c.info['roster']] / 1e6:.2f} MB", f"{wire[c.info['roster']] / 1e3:.0f} KB")
                 if cases is creates else ("", "")) for c in cases)]
    result: dict[str, Any] = {
        "repeat": args.repeat, "sizes": sizes, "answer_bytes": answers, "gzipped_bytes": wire,
        "cases": [c.as_dict() for c in (*creates, *heads)], "load": _common.LOAD.as_dict(),
        "machine": _common.machine()}
    if args.json:
        _common.emit_json(result)
        return 0
    _common.print_machine(result["machine"])
    print(f"rosters {', '.join(map(str, sizes))}; {_common.LOAD.describe()}\n")
    print(table(["case", "time (run)", "(min – max)", f"vs {sizes[0]} combatants", "answer", "gzipped"], rows))
    return 0


class _bounded:
    """The server's roster bound raised to ``size`` for the measurement (the decoder reads it when it is made)."""

    def __init__(self, size: int):
        self.size = size

    def __enter__(self) -> None:
        import typing

        self.old = vars(asgi_module)["CreateFight"]  # the create handler's own name for it
        combatants = typing.Annotated[tuple[CombatantSheet, ...], msgspec.Meta(max_length=self.size)]
        fields = []
        for info in msgspec.structs.fields(self.old):
            kind = combatants if info.name == "combatants" else info.type
            default = info.default if info.default is not msgspec.NODEFAULT else msgspec.field(
                default_factory=info.default_factory)
            fields.append((info.name, kind, default))
        vars(asgi_module)["CreateFight"] = msgspec.defstruct(
            "CreateFight", fields, kw_only=True, forbid_unknown_fields=True, frozen=True)

    def __exit__(self, *_exc: object) -> None:
        vars(asgi_module)["CreateFight"] = self.old


if __name__ == "__main__":
    sys.exit(main())
