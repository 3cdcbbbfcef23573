"""``omen serve`` under load (issue #13): many concurrent fights, a client and a live stream each, against the
same fights played through the in-process ``Fight`` API on the same kind of store, in one run.

The server runs in its own process (``omen serve``, uvicorn, loopback) over a SQLite store under
``benchmarks/.cache/``. A round starts ``--fights`` clients at once, each in its own thread: it creates a
seeded duel (the Ember Ford's Kael and Vesh), opens the fight's stream (Server-Sent Events) in a second
thread, and waits until the stream has sent the set-up's events and every other client has got as far (a
barrier: the hundred fights are all made and followed before the play starts; the creations' latencies are
reported apart, since a hundred tables sitting down in the same instant is a burst, not the load of play).
Then it gives ``--commands`` commands chosen from the options the answers carry (the turn's first attack
offered, else the end of the turn; at an Active Defense window a Dodge if offered), each sent with the version
it saw. Every command's latency (request sent to answer read) is recorded. At the end of the round every
stream must have sent every event of its fight exactly once, in order (its ids 1 to the head),
or the script stops.

The **baseline** plays the same number of fights and commands with the same policy through ``Fight`` on a
``SqliteStore`` in this process, one fight after another: the cost of the rules and the store without HTTP,
JSON, threads or streams. Rounds alternate (server, baseline, server, ...); the figures are medians over the
``--repeat`` rounds of each, never the best. The goal: p99 latency < 50 ms on the SQLite store, with 100
fights played at a table's pace.

``--think S`` makes each client wait S seconds between its commands: 3, the default, is a table's pace (a
command every 3 s from each of 100 fights: 33 commands a second offered; a table of people rolling dice is
slower); 0 sends each command as soon as the last is answered, the server's saturation, where 100 clients
queue and the latency is 100 over the throughput.

``--postgres URL`` serves a PostgreSQL database instead (a fresh schema in it; the baseline uses it too), and
``--servers 2`` starts two separate ``omen serve`` processes on the store: each client plays through one and
follows its stream on the other, so every event reaches the stream through another server's commit (NOTIFY).

Run: ``python benchmarks/bench_serve.py [--fights 100] [--commands 20] [--repeat 3] [--think 3] [--workers 1]
[--servers 1] [--postgres URL] [--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import shutil
import socket
import statistics
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import msgspec
from _common import ROOT

from omen_core import Fight, SeededDice
from omen_core.commands import Command
from omen_core.content import load_sheet
from omen_core.store import SqliteStore, open_store
from tests.server.processes import Server

SHEETS = ROOT / "omen_replay" / "data" / "ember-ford" / "sheets"
GOAL_P99_MS = 50.0


def sheets() -> list[dict[str, Any]]:
    """Kael and Vesh, as JSON."""
    return [msgspec.to_builtins(load_sheet(SHEETS / f"{n}.toml")) for n in ("kael", "vesh")]


def choose(options: dict[str, Any]) -> dict[str, Any] | None:
    """The policy: answer an open decision (Dodge if offered), else the turn's first attack, else end the turn,
    else roll initiative; None once the fight has ended."""
    if options["phase"] == "ended":
        return None
    offers, waiting = options["offers"], options["waiting"]
    if waiting is not None:
        offer = next(o for o in offers if o["command"] in waiting["answers"])
        dodge = next((c for c in offer["choices"] if c["args"].get("defense") == "dodge"), offer["choices"][0])
        return {"command": offer["command"], **dodge["args"]}
    for name in ("declare_attack", "end_turn"):
        offer = next((o for o in offers if o["command"] == name and o["actor"] == options["turn"]), None)
        if offer is not None:
            return {"command": name, **offer["choices"][0]["args"]}
    offer = next(o for o in offers if o["command"] == "roll_initiative")
    return {"command": "roll_initiative", **offer["choices"][0]["args"]}


# -- the server and its clients --------------------------------------------------------------------------------


def follow(server: Server, fight_id: str, token: str, seen: list[int], held: list[Any], done: threading.Event
           ) -> None:
    """Read a fight's stream, noting each event's id, until ``done`` (``hang_up`` shuts the connection under it);
    a connection refused or dropped meanwhile (a 503 while the server is busy, say) is made again after a second
    with ``Last-Event-ID``, as a browser's EventSource does, so the ids must still come once each, in order."""
    while not done.is_set():
        headers = {"Authorization": f"Bearer {token}"}
        if seen:
            headers["Last-Event-ID"] = str(seen[-1])
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/fights/{fight_id}/stream", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=300) as answer:
                held[:] = [answer]
                for raw in answer:
                    line = raw.decode().rstrip("\r\n")
                    if line.startswith("id: "):
                        seen.append(int(line[4:]))
        except (OSError, ValueError):
            pass
        done.wait(1.0)


class Connection:
    """One client's HTTP connection to a server, kept alive between its requests as a browser's or Node's
    ``fetch`` keeps it (made again if the server closed it)."""

    def __init__(self, server: Server):
        self.server = server
        self.conn: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, body: Any, token: str = "") -> tuple[int, Any]:
        """One request on the kept connection; the status and the decoded JSON answer."""
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body).encode()
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=self.server.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                answer = self.conn.getresponse()
                return answer.status, json.loads(answer.read())
            except (http.client.HTTPException, ConnectionError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the connection, if open."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Round:
    """What one round's clients share: the latencies of their commands and of their fights' creation, what went
    wrong, and the barrier they pass once every fight is made and every stream has caught up (the play is
    measured from there: 100 tables sitting down at the same instant is a different load, reported apart)."""

    def __init__(self, fights: int):
        self.latencies: list[float] = []
        self.creations: list[float] = []
        self.problems: list[str] = []
        self.ready = threading.Barrier(fights, timeout=300)
        self.started = 0.0


def client(servers: list[Server], name: str, commands: int, shared: Round, think: float = 0.0, index: int = 0
           ) -> None:
    """One fight through the server: create it, follow its stream until it has caught up, wait for the other
    clients, then give ``commands`` commands (``think`` seconds apart, the first after a random part of it, so the
    tables do not move in step), check that the stream sent every event once, in order. With several servers,
    the client plays through one and follows its stream on the next (so every event reaches the stream through
    another server's commit)."""
    server, watcher = servers[index % len(servers)], servers[(index + 1) % len(servers)]
    connection = Connection(server)
    started = time.perf_counter()
    status, made = connection.call("POST", "/fights", {"id": name, "dice": "seeded", "combatants": sheets()})
    shared.creations.append(time.perf_counter() - started)
    if status != 201:
        shared.problems.append(f"{name}: create answered {status}")
        shared.ready.abort()
        return
    token, head, options = made["gm_token"], made["head"], made["options"]
    seen: list[int] = []
    held: list[Any] = []
    done = threading.Event()
    threading.Thread(target=follow, args=(watcher, name, token, seen, held, done), daemon=True).start()
    caught_up = time.monotonic() + 120
    while (not seen or seen[-1] < head["seq"]) and time.monotonic() < caught_up:
        time.sleep(0.02)
    try:
        if shared.ready.wait() == 0:
            shared.started = time.perf_counter()
    except threading.BrokenBarrierError:
        shared.problems.append(f"{name}: the round was called off")
        done.set()
        return
    latencies, problems = shared.latencies, shared.problems
    pause = random.Random(name).uniform(0, think)
    for _ in range(commands):
        time.sleep(pause)
        pause = think
        command = choose(options)
        if command is None:
            break
        started = time.perf_counter()
        status, answer = connection.call("POST", f"/fights/{name}/commands",
                                         {"command": command, "expected_version": head["seq"]}, token)
        latencies.append(time.perf_counter() - started)
        if status != 201:
            problems.append(f"{name}: {command['command']} answered {status}: {answer.get('detail')}")
            return
        head, options = answer["head"], answer["options"]
    connection.close()
    deadline = time.monotonic() + 60
    while (not seen or seen[-1] < head["seq"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    done.set()
    hang_up(held)
    if seen != list(range(1, head["seq"] + 1)):
        problems.append(f"{name}: the stream sent {len(seen)} ids, not 1..{head['seq']} once each in order")


def hang_up(held: list[Any]) -> None:
    """Shut a stream's socket, so that its reader returns and the server ends the stream."""
    with contextlib.suppress(Exception):
        held[0].fp.raw._sock.shutdown(socket.SHUT_RDWR)


def server_round(servers: list[Server], fights: int, commands: int, tag: str, think: float = 0.0
                 ) -> dict[str, float]:
    """``fights`` clients at once; the latencies and the throughput of the play (from the barrier), and the
    latencies of the fights' creation (all at once, before it)."""
    shared = Round(fights)
    threads = [threading.Thread(target=client, args=(servers, f"{tag}-{i:03d}", commands, shared, think, i))
               for i in range(fights)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    took = time.perf_counter() - shared.started
    if shared.problems:
        raise SystemExit("; ".join(shared.problems[:5]))
    ordered, made = sorted(shared.latencies), sorted(shared.creations)
    return {"commands": len(ordered), "seconds": took, "per_s": len(ordered) / took,
            "p50_ms": 1000 * ordered[len(ordered) // 2], "p99_ms": 1000 * _p99(ordered),
            "create_p50_ms": 1000 * made[len(made) // 2], "create_p99_ms": 1000 * _p99(made)}


def _p99(ordered: list[float]) -> float:
    """The 99th percentile of sorted values (the nearest rank)."""
    return ordered[max(0, -(-len(ordered) * 99 // 100) - 1)]


# -- the baseline ----------------------------------------------------------------------------------------------


def baseline_round(where: Path, fights: int, commands: int, tag: str, url: str = "") -> dict[str, float]:
    """The same fights and policy through ``Fight`` on the same kind of store in this process, one after
    another."""
    store = open_store(url) if url else SqliteStore(where / f"baseline-{tag}.db")
    cast = [load_sheet(SHEETS / f"{n}.toml") for n in ("kael", "vesh")]
    latencies: list[float] = []
    started = time.perf_counter()
    for i in range(fights):
        fight = Fight.start(store, f"{tag}-{i:03d}", dice=SeededDice.fresh(), combatants=cast)
        options = json.loads(msgspec.json.encode(fight.options()))
        for _ in range(commands):
            command = choose(options)
            if command is None:
                break
            t = time.perf_counter()
            fight.execute(msgspec.convert(command, Command))
            options = json.loads(msgspec.json.encode(fight.options()))
            latencies.append(time.perf_counter() - t)
    took = time.perf_counter() - started
    ordered = sorted(latencies)
    return {"commands": len(ordered), "seconds": took, "per_s": len(ordered) / took,
            "p50_ms": 1000 * ordered[len(ordered) // 2], "p99_ms": 1000 * _p99(ordered)}


def fresh_schema(url: str) -> str:
    """``url`` with a schema of its own made for this run (``bench_<pid>``), so the run starts empty."""
    import psycopg

    from tests.postgres import with_schema

    schema = f"bench_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
    made = with_schema(url, schema)
    open_store(made)  # the tables, once, before the servers race to make them
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fights", type=int, default=100, help="concurrent fights (clients) a round")
    parser.add_argument("--commands", type=int, default=20, help="commands per fight")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of each (medians count)")
    parser.add_argument("--think", type=float, default=3.0,
                        help="seconds each client waits between its commands (default 3: a table's pace, the "
                             "goal's load; 0: as fast as answers come, the server's saturation)")
    parser.add_argument("--workers", type=int, default=1, help="omen serve --workers: processes of each server")
    parser.add_argument("--servers", type=int, default=1,
                        help="separate omen serve processes on the store (a client plays through one and follows "
                             "its stream on the next)")
    parser.add_argument("--postgres", default="", metavar="URL",
                        help="serve a PostgreSQL database (a fresh schema in it) instead of a SQLite file")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    where = ROOT / "benchmarks" / ".cache" / "serve"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    loads: list[float] = []
    url = fresh_schema(args.postgres) if args.postgres else ""
    servers: list[Server] = []
    for n in range(args.servers):
        (where / f"server{n}").mkdir()
        servers.append(Server(where / f"server{n}", timeout=120, workers=args.workers, store=url))
    runs: dict[str, list[dict[str, float]]] = {"server": [], "baseline": []}
    try:
        for r in range(args.repeat):
            loads.append(os.getloadavg()[0])
            runs["server"].append(server_round(servers, args.fights, args.commands, f"s{r}", args.think))
            loads.append(os.getloadavg()[0])
            runs["baseline"].append(baseline_round(where, args.fights, args.commands, f"b{r}", url))
    finally:
        for server in servers:
            server.stop()
    median = {k: {m: statistics.median(run[m] for run in v) for m in v[0]} for k, v in runs.items()}
    ratio = median["server"]["p50_ms"] / median["baseline"]["p50_ms"]
    met = "met" if median["server"]["p99_ms"] < GOAL_P99_MS else "MISSED"
    if args.json:
        print(json.dumps({"medians": median, "p50_ratio": ratio, "goal_p99_ms": GOAL_P99_MS, "goal": met,
                          "load": loads, "fights": args.fights, "commands": args.commands, "repeat": args.repeat,
                          "think": args.think, "workers": args.workers, "servers": args.servers,
                          "store": "postgresql" if url else "sqlite"}))
        return 0
    print(f"machine: {os.cpu_count()} CPU; 1-minute load average {min(loads):.2f}-{max(loads):.2f} over the rounds; "
          f"{args.fights} concurrent fights x {args.commands} commands"
          + (f", each client {args.think:g} s between commands" if args.think else ", each client as fast as it can")
          + f", {args.repeat} interleaved rounds of each (medians); every stream sent every event once, in order")
    print("| case | commands/s | p50 ms | p99 ms | p50 vs baseline | goal p99 < 50 ms |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    s, b = median["server"], median["baseline"]
    kind = "PostgreSQL" if url else "SQLite"
    print(f"| in-process Fight API, {kind}, one fight after another | {b['per_s']:,.0f} | {b['p50_ms']:.1f} | "
          f"{b['p99_ms']:.1f} | 1.0x | |")
    print(f"| omen serve, {kind}, {args.servers} server(s) x {args.workers} process(es), {args.fights} clients "
          f"with a stream each | {s['per_s']:,.0f} | {s['p50_ms']:.1f} | "
          f"{s['p99_ms']:.1f} | {ratio:.1f}x | {met} |")
    print(f"\nThe {args.fights} fights' creation, all at once before the play (POST /fights, not counted above): "
          f"p50 {s['create_p50_ms']:.0f} ms, p99 {s['create_p99_ms']:.0f} ms.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
