"""omen_server/serve.py: real server processes (uvicorn, started as ``omen serve``) on loopback over one SQLite
store: a server killed mid-fight and restarted loses nothing acknowledged and keeps its tokens and answers; two
servers racing on one fight give one 201 and one 409."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from omen_core.events import CombatantJoined, ConditionApplied, FightStarted
from omen_core.store import SqliteStore
from tests.server.processes import ROOT, Server, free_port, keyed_pairs, race
from tests.server.test_app import sheet


@pytest.fixture
def servers(tmp_path: Path) -> Any:
    """Start servers over one store on demand; every one is stopped at the end."""
    started: list[Server] = []

    def start() -> Server:
        started.append(Server(tmp_path))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def create(server: Server) -> tuple[str, int]:
    """A seeded duel on ``server``; its GM token and version."""
    status, made = server.call("POST", "/fights", {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]})
    assert status == 201, made
    return made["gm_token"], made["head"]["seq"]


def ana_plays_kael(server: Server, gm: str) -> str:
    """A player seat, Ana's, playing Kael in the duel; its token."""
    status, seat = server.call("POST", "/fights/duel/seats", {"kind": "player", "name": "Ana", "combatants": ["kael"]},
                               gm)
    assert status == 201, seat
    return str(seat["token"])


def test_a_killed_server_loses_nothing_acknowledged(servers: Any, tmp_path: Path) -> None:
    """A command acknowledged (201) is in the store after a SIGKILL; the restarted server knows the GM token and
    the seed (it rolls on), and a retry of the acknowledged command with its Idempotency-Key gets the first
    answer and appends nothing."""
    first = servers()
    token, version = create(first)
    status, rolled = first.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"},
                                                                  "expected_version": version}, token, key="k1")
    assert status == 201
    first.kill()
    assert SqliteStore(tmp_path / "events.db").version("duel") == rolled["head"]["seq"]
    second = servers()
    again = second.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"},
                                                          "expected_version": version}, token, key="k1")
    assert again == (201, rolled)
    status, now = second.call("GET", "/fights/duel/options", token=token)
    assert status == 200 and now["head"] == rolled["head"]
    turn = now["options"]["turn"]
    status, ended = second.call("POST", "/fights/duel/commands", {"command": {"command": "end_turn", "who": turn},
                                                                  "expected_version": now["head"]["seq"]}, token)
    assert status == 201, ended


def test_two_servers_racing_on_one_fight_give_one_201_and_one_409(servers: Any, tmp_path: Path) -> None:
    """Two server processes on one SQLite store, one command each at the same version, sent at once: one is
    appended (201), the other refused as stale (409 with the new version); the log holds the winner once."""
    one, two = servers(), servers()
    token, version = create(one)
    won, lost = race((one, two), "/fights/duel/commands",
                     {"command": {"command": "roll_initiative"}, "expected_version": version}, token)
    assert lost["current_version"] == won["head"]["seq"] == SqliteStore(tmp_path / "events.db").version("duel")


def test_commands_without_a_version_racing_through_two_servers_are_all_appended(servers: Any, tmp_path: Path
                                                                               ) -> None:
    """docs/server.md: a command sent without expected_version applies to whatever the fight is at: four at once,
    two through each server, twice, are all 201 (a server that lost the race decides its command again on the new
    head; it answered 409 "not the expected 51", a version never sent: a tester), each appended once, and the
    log verifies."""
    import threading

    from omen_replay.verify import verify_store

    one, two = servers(), servers()
    token, _version = create(one)
    for _round in range(2):
        start = threading.Barrier(4)
        answers: list[tuple[int, Any]] = []

        def send(server: Server, who: str, start: threading.Barrier = start,
                 answers: list[tuple[int, Any]] = answers) -> None:
            start.wait()
            answers.append(server.call("POST", "/fights/duel/commands", {"command": {
                "command": "apply_condition", "who": who, "condition": "Exhausted"}}, token))

        threads = [threading.Thread(target=send, args=(server, who))
                   for server in (one, two) for who in ("kael", "vesh")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert [status for status, _ in answers] == [201] * 4, answers
    store = SqliteStore(tmp_path / "events.db")
    applied = [r.event.who for r in store.read("duel") if isinstance(r.event, ConditionApplied)]
    assert sorted(applied) == ["kael"] * 4 + ["vesh"] * 4
    assert verify_store(store, "duel").clean


def test_the_same_dice_given_through_two_servers_at_once_decide_the_staged_command_once(servers: Any,
                                                                                      tmp_path: Path) -> None:
    """docs/server.md ("POST /fights/{id}/staged"): the GM's die for Alice's staged attack sent through each server
    at the same instant: one 201, the other 409 "No such staged command now" (it said "not the expected 20", a
    version the client never sent: a tester); the attack is in the log once."""
    from omen_core.events import AttackDeclared

    one, two = servers(), servers()
    status, made = one.call("POST", "/fights", {"id": "duel", "dice": "manual",
                                                "combatants": [sheet("kael"), sheet("vesh")]})
    assert status == 201, made
    gm = made["gm_token"]
    alice = ana_plays_kael(one, gm)
    assert one.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative", "dice": [6, 1]}},
                    gm)[0] == 201
    status, staged = one.call("POST", "/fights/duel/commands", {"command": {
        "command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword", "dice": [8, 6]},
        "stage": True}, alice)
    assert status == 202, staged
    won, lost = race((one, two), "/fights/duel/staged", {"id": staged["id"], "dice": [1]}, gm)
    assert lost["title"] == "No such staged command now" and lost["current_version"] == won["head"]["seq"], lost
    declared = [r for r in SqliteStore(tmp_path / "events.db").read("duel") if isinstance(r.event, AttackDeclared)]
    assert len(declared) == 1


def test_two_servers_creating_one_id_at_once_on_sqlite_leave_the_winners_seat_and_seed(servers: Any,
                                                                                      tmp_path: Path) -> None:
    """Two servers on one SQLite store and keep, each creating the same id at the same instant, five times: one
    201 and one 409 conflict each time, and the winner's GM token opens its fight and the kept seed is the one
    its log pledges (the loser's rows, kept before its log, never replace the winner's)."""
    from omen_core.dice import commitment
    from omen_server.keep import Keep

    one, two = servers(), servers()
    for n in range(5):
        fight_id = f"race{n}"
        won, lost = race((one, two), "/fights", {"id": fight_id, "combatants": [sheet("kael"), sheet("vesh")]})
        assert lost["type"] == "/problems/conflict" and lost["detail"] == f"a fight {fight_id!r} already exists"
        assert one.call("GET", f"/fights/{fight_id}/seat", token=won["gm_token"])[0] == 200
        started = next(iter(SqliteStore(tmp_path / "events.db").read(fight_id))).event
        assert isinstance(started, FightStarted)
        pledge = started.seed_commitment
        keep = Keep(str(tmp_path / "events.keep.db"))
        assert commitment(keep.seed(fight_id) or b"") == pledge
        assert [row.kind for row in keep.seat_rows(fight_id)] == ["gm"]
        keep.close()


class Stream:
    """A live stream read line by line as the server sends it: ``(event, id, data)`` for each message."""

    def __init__(self, server: Server, token: str, last_event_id: str = ""):
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream", "Accept-Encoding": "gzip"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/fights/duel/stream", headers=headers)
        self.answer = urllib.request.urlopen(request, timeout=30)
        # A browser accepts gzip; the stream is never compressed all the same (a gzip stream holds messages back).
        assert self.answer.headers.get("Content-Encoding") is None

    def messages(self) -> Any:
        """The messages, as they come; every line ends in CR LF, as docs/server.md says (a client splitting on
        LF LF alone received nothing: found by a tester)."""
        event, ident, data = "", None, ""
        for raw in self.answer:
            assert raw.endswith(b"\r\n") and b"\r" not in raw[:-2], raw
            line = raw.decode().removesuffix("\r\n")
            if not line:
                if data:
                    yield event, ident, json.loads(data)
                event, ident, data = "", None, ""
            elif line.startswith("event: "):
                event = line[7:]
            elif line.startswith("id: "):
                ident = int(line[4:])
            elif line.startswith("data: "):
                data += line[6:]

    def until(self, seq: int) -> tuple[list[int], list[dict[str, Any]]]:
        """The event ids received up to ``seq``, and every options message on the way."""
        ids, options = [], []
        for event, ident, data in self.messages():
            if event == "event":
                ids.append(ident)
                assert data["seq"] == ident
            elif event == "options":
                options.append(data)
            if ids and ids[-1] >= seq and options and options[-1]["head"]["seq"] == seq:
                return ids, options
        raise AssertionError("the stream ended")

    def close(self) -> None:
        """Hang up."""
        self.answer.close()


def test_the_stream_sends_every_event_once_in_order_and_resumes(servers: Any) -> None:
    """The stream sends the set-up's events, then each command's as it is appended (ids are seqs: 1, 2, 3...
    once each, in order) and an options message at each new head; reconnecting with Last-Event-ID gets exactly
    the events after it, none twice."""
    server = servers()
    token, version = create(server)
    stream = Stream(server, token)
    ids, options = stream.until(version)
    assert ids == list(range(1, version + 1)) and options[-1]["head"]["seq"] == version
    status, rolled = server.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"}},
                                 token)
    assert status == 201
    head = rolled["head"]["seq"]
    more, options = stream.until(head)
    assert more == list(range(version + 1, head + 1))
    assert options[-1] == {"head": rolled["head"], "options": rolled["options"]}
    stream.close()
    turn = rolled["options"]["turn"]
    status, ended = server.call("POST", "/fights/duel/commands", {"command": {"command": "end_turn", "who": turn}},
                                token)
    assert status == 201
    again = Stream(server, token, last_event_id=str(head))
    resumed, _ = again.until(ended["head"]["seq"])
    again.close()
    assert resumed == list(range(head + 1, ended["head"]["seq"] + 1))


def test_a_players_stream_sends_new_options_when_the_gm_reveals_a_combatant(servers: Any) -> None:
    """The GM hides Vesh, then reveals it (the table settings: the head does not move): the stream of the player
    who plays Kael sends a new options message at the same head within a second or two, now naming Vesh (its turn,
    or it as a target), where the one before did not; a GM's stream, which saw Vesh all along, sends none."""
    server = servers()
    status, made = server.call("POST", "/fights", {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")],
                                                   "hidden": ["vesh"]})
    assert status == 201, made
    gm = made["gm_token"]
    status, rolled = server.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"}}, gm)
    assert status == 201, rolled
    head = rolled["head"]["seq"]
    ana = ana_plays_kael(server, gm)
    player, watcher = Stream(server, ana), Stream(server, gm)
    before = player.until(head)[1][-1]
    assert "vesh" not in json.dumps(before)
    watcher.until(head)
    status, settings = server.call("POST", "/fights/duel/settings", {"reveal": ["vesh"]}, gm)
    assert status == 200 and settings["hidden"] == [], settings
    event, _ident, after = next(player.messages())
    assert event == "options" and after["head"] == before["head"] and "vesh" in json.dumps(after)
    status, now = server.call("GET", "/fights/duel/options", token=ana)
    assert status == 200 and now == after  # the stream's view is the seat's view now
    time.sleep(1.5)  # the GM's stream has looked at least once since the reveal
    status, ended = server.call("POST", "/fights/duel/commands",
                                {"command": {"command": "end_turn", "who": rolled["options"]["turn"]}}, gm)
    assert status == 201, ended
    event, ident, _data = next(watcher.messages())
    assert (event, ident) == ("event", head + 1)  # nothing changed for the GM at the old head: no message
    player.close()
    watcher.close()


@pytest.mark.parametrize("argv, said", [
    (["--store", "nowhere/at/all.jsonl"], "nowhere"),
    (["--store", "ftp://x"], "ftp://x"),
    (["--port", "0"], "--port"),
    (["--port", "70000"], "--port"),
    (["--keep", "/proc/nope/keep.db"], "/proc/nope/keep.db"),
    (["--store", "memory:", "--workers", "2"], "--workers 2"),
    (["--scenario", "no-such-scenario.toml"], "no-such-scenario.toml"),
])
def test_serve_refuses_bad_input_at_once(tmp_path: Path, argv: list[str], said: str) -> None:
    """omen serve with a store, a port or a keep it cannot use exits 2 at once with a one-line error naming
    it, never a traceback, and serves nothing."""
    done = subprocess.run([sys.executable, "-m", "omen_cli", "serve", *argv], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stdout + done.stderr and "Traceback" not in done.stderr


#: A scenario with a library ability (docs/abilities.md) and a command: what ``omen serve --scenario`` makes.
SCENARIO = """[fight]
id = "ditch"
title = "The Goblin Ditch"
dice = "scripted"
abilities = ["lib.toml"]
""" + "".join(f"""[[combatants]]
id = "{who}"
name = "{who.title()}"
side = "{side}"
hp = 20
attributes = {{ STR = {{ die = "d8" }}, AGI = {{ die = "d6" }}, INT = {{ die = "d4" }}, RES = {{ die = "d6" }}, \
FCS = {{ die = "d6" }} }}
abilities = {abilities}
""" for who, side, abilities in (("ash", "north", '["hex_guard"]'), ("bo", "south", "[]"))) + """[[commands]]
command = "roll_initiative"
dice = [6, 1]
"""
LIBRARY = """[abilities.hex_guard]
name = "Hex Guard"
use = "trigger"
trigger = { moment = "attack.declared", owner = "target" }
cost = { will = 1 }
effects = [{ kind = "modifier", total = "defense", value = 1 }]
"""


def test_serve_scenario_makes_the_fight_a_scenario_sets_up_and_prints_its_gm_link(tmp_path: Path) -> None:
    """omen serve --scenario FILE (a GM's prepared encounter, its sheets' abilities from a library): the fight is
    made before the server starts, its GM's link printed (the token shown this once) and working, its ability written
    out in the sheet as the library has it, its dice manual (a scripted scenario's commands carry faces), its
    command left to the table and said so; started again, the fight is not made twice (said so, no link)."""
    (tmp_path / "lib.toml").write_text(LIBRARY)
    (tmp_path / "ditch.toml").write_text(SCENARIO)
    server = Server(tmp_path, args=("--scenario", str(tmp_path / "ditch.toml")))
    try:
        said = " ".join(server.log.read_text().split())
        link = re.search(r"the GM's table, its token shown this once: (http://\S+)/table/ditch#token=(\S+)", said)
        assert link is not None and "left out: its 1 command (the table gives them)" in said, said
        status, state = server.call("GET", "/fights/ditch/state", token=link[2])
        assert status == 200 and [c["id"] for c in state["combatants"]] == ["ash", "bo"], state
        assert state["dice"] == "manual" and state["phase"] == "setup"
    finally:
        server.stop()
    store = SqliteStore(tmp_path / "events.db")
    ash = next(r.event.sheet for r in store.read("ditch") if isinstance(r.event, CombatantJoined)
               and r.event.sheet.id == "ash")
    store.close()
    assert [a.name for a in ash.written_abilities()] == ["Hex Guard"]
    again = Server(tmp_path, args=("--scenario", str(tmp_path / "ditch.toml")))
    again.stop()
    said = " ".join(again.log.read_text().split())
    assert "the store holds fight 'ditch' already; not made again" in said and said.count("#token=") == 1


def test_serve_scenario_checks_every_file_as_post_fights_would_before_making_any(tmp_path: Path) -> None:
    """Two --scenario files, the second refused as POST /fights would refuse its body (a title past 200
    characters, 400 there): exit 2 naming it, and the first fight is not made either (it was made, its GM's link
    never shown, and said "given when it was made" ever after: a reviewer)."""
    from omen_core.store import SqliteStore

    (tmp_path / "lib.toml").write_text(LIBRARY)
    (tmp_path / "ditch.toml").write_text(SCENARIO)
    (tmp_path / "long.toml").write_text(SCENARIO.replace('id = "ditch"', 'id = "long"').replace(
        'title = "The Goblin Ditch"', f'title = "{"x" * 201}"'))
    done = subprocess.run([sys.executable, "-m", "omen_cli", "serve", "--store", f"sqlite:///{tmp_path / 'e.db'}",
                           "--port", str(free_port()), "--scenario", str(tmp_path / "ditch.toml"), "--scenario",
                           str(tmp_path / "long.toml")], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "long.toml: as a POST /fights body:" in done.stderr, done.stdout + done.stderr
    assert "$.title" in done.stderr and "#token=" not in done.stdout
    store = SqliteStore(tmp_path / "e.db")
    assert store.fights() == []
    store.close()

def test_serve_scenario_names_the_file_and_line_the_rules_refuse(tmp_path: Path) -> None:
    """omen serve --scenario with a library ability the rules refuse (a condition the ruleset lacks, C28): exit 2,
    one line naming the library file and its line, as omen run names it (it named the request's
    $.combatants[0].abilities[0], a body the GM never wrote: a tester); nothing is made."""
    (tmp_path / "lib.toml").write_text(LIBRARY.replace('"attack.declared"', '"attack.damaged"').replace(
        'effects = [{ kind = "modifier", total = "defense", value = 1 }]',
        'effects = [{ kind = "condition", condition = "Staggered" }]'))
    (tmp_path / "ditch.toml").write_text(SCENARIO)
    done = subprocess.run([sys.executable, "-m", "omen_cli", "serve", "--store", f"sqlite:///{tmp_path / 'e.db'}",
                           "--port", str(free_port()), "--scenario", str(tmp_path / "ditch.toml")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "lib.toml:6: the rules refuse this combatant: [C28] unknown condition 'Staggered'" in done.stderr, \
        done.stderr
    assert "Traceback" not in done.stderr and "#token=" not in done.stdout

def test_a_single_file_store_says_it_keeps_one_fight_and_a_second_is_409(tmp_path: Path) -> None:
    """omen serve --store duel.jsonl: the banner notes that one file keeps one fight; a second POST /fights is 409
    saying so and what to serve instead (it was 422 "The engine refuses this", naming the store's file); the first
    fight is as it was."""
    server = Server(tmp_path, store=str(tmp_path / "duel.jsonl"))
    try:
        status, made = server.call("POST", "/fights", {"id": "one", "combatants": [sheet("kael"), sheet("vesh")]})
        assert status == 201, made
        status, refused = server.call("POST", "/fights", {"id": "two", "combatants": [sheet("kael"), sheet("vesh")]})
    finally:
        server.stop()
    assert (status, refused["type"]) == (409, "/problems/conflict"), refused
    assert refused["detail"] == ("this server's store is one JSON Lines file, which keeps one fight, and it holds "
                                 "'one' already: serve a directory of logs (--store fights/) or a database "
                                 "(sqlite:///omen.db) to keep several")
    said = " ".join(server.log.read_text().split())
    assert (f"omen: note: {tmp_path / 'duel.jsonl'} is one JSON Lines file, which keeps one fight: serve a directory "
            "of logs (--store fights/) or a database (sqlite:///omen.db) to create several") in said
    assert [line.count(b'"fight_id":"one"') for line in (tmp_path / "duel.jsonl").read_bytes().splitlines()] == [1] * 3


def test_a_server_stopped_by_sigterm_leaves_every_fight_in_the_database_files(tmp_path: Path) -> None:
    """omen serve on SQLite, stopped by SIGTERM (as systemd, docker and timeout stop it): the store's and the keep's
    write-ahead logs are written back, so the database files alone, copied as docs/stores.md's cold backup copies
    them, hold the fight and its GM seat (they held nothing: every row sat in omen.db-wal, an operator tester)."""
    import shutil
    import sqlite3

    server = Server(tmp_path)
    version = create(server)[1]
    server.stop()  # SIGTERM
    assert server.process.returncode is not None
    backup = tmp_path / "backup"
    backup.mkdir()
    for name in ("events.db", "events.keep.db"):
        shutil.copy(tmp_path / name, backup / name)  # the files alone, not their -wal
    events = sqlite3.connect(backup / "events.db").execute("select count(*) from events").fetchone()[0]
    seats = sqlite3.connect(backup / "events.keep.db").execute("select count(*) from seats").fetchone()[0]
    assert (events, seats) == (version, 1)


def test_python_m_omen_server_refuses_a_keep_in_one_line_and_takes_rebind_keep(tmp_path: Path) -> None:
    """python -m omen_server with a keep another store used: one line, exit 2, no set-up link printed (it was a
    traceback, exit 1, after the link); --rebind-keep is taken, as omen serve takes it."""
    from omen_server.keep import Keep

    (tmp_path / "conv").mkdir()
    Keep(str(tmp_path / "conv.keep.db")).bind("the SQLite database 'conv.db'")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "omen_server", "--store", "conv/", "--port", str(free_port())],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("omen serve: error: conv.keep.db: this keep belongs to the SQLite database "
                                  "'conv.db'") and len(done.stderr.splitlines()) == 1, done.stderr
    assert "set up a fight" not in done.stdout
    helped = subprocess.run([sys.executable, "-m", "omen_server", "--help"], capture_output=True, text=True,
                            timeout=60, env=env)
    assert "--rebind-keep" in helped.stdout


def test_serve_refuses_a_keep_another_store_used(tmp_path: Path) -> None:
    """omen serve on ``conv/`` after one on ``sqlite:///conv.db`` (both keeps default to ``conv.keep.db``): exit 2
    at once, one line naming the keep, the store it belongs to and what to do; nothing served (they shared it, and
    a fight created on one took over the other's: a tester)."""
    (tmp_path / "conv").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    from omen_server.keep import Keep

    Keep(str(tmp_path / "conv.keep.db")).bind("the SQLite database 'conv.db'")
    done = subprocess.run([sys.executable, "-m", "omen_cli", "serve", "--store", "conv/", "--port", str(free_port())],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "omen: error: conv.keep.db: this keep belongs to the SQLite database 'conv.db', not to the directory of JSON "
        "Lines logs 'conv': two stores on one keep would hand each other's fights over (a fight id created on one "
        "replaces the other's seats and seed); give this store its own keep with --keep PATH, or, if this store is "
        "that one moved or renamed, bind the keep to it with --rebind-keep"], done.stderr


def test_a_stream_on_one_server_sees_what_another_appends(servers: Any) -> None:
    """Two server processes on one store: a command given through one appears, every event once and in order,
    on a stream opened on the other (it reads the store once a second), followed by the options at the head."""
    one, two = servers(), servers()
    token, version = create(one)
    stream = Stream(two, token)
    assert stream.until(version)[0] == list(range(1, version + 1))
    status, rolled = one.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"}}, token)
    assert status == 201
    ids, options = stream.until(rolled["head"]["seq"])
    stream.close()
    assert ids == list(range(version + 1, rolled["head"]["seq"] + 1))
    assert options[-1]["head"] == rolled["head"]


def test_worker_processes_share_the_store_and_the_keep(tmp_path: Path) -> None:
    """omen serve --workers 2: fights made and played through whichever worker answers, by clients at once, all
    201 (no "database is locked"), each fight's log whole and each token known to every worker."""
    server = Server(tmp_path, workers=2)
    problems: list[str] = []

    def play(name: str) -> None:
        status, made = server.call("POST", "/fights", {"id": name, "combatants": [sheet("kael"), sheet("vesh")]})
        if status != 201:
            problems.append(f"{name}: create {status} {made}")
            return
        token, head = made["gm_token"], made["head"]["seq"]
        for _ in range(6):
            status, seen = server.call("GET", f"/fights/{name}/options", token=token)
            offers = [o for o in seen["options"]["offers"] if o["choices"] and o["command"] != "undo"]
            offer = offers[0]
            status, answer = server.call("POST", f"/fights/{name}/commands", {"command": {
                "command": offer["command"], **offer["choices"][0]["args"]}, "expected_version": head}, token)
            if status != 201:
                problems.append(f"{name}: {offer['command']} {status} {answer}")
                return
            head = answer["head"]["seq"]

    try:
        threads = [threading.Thread(target=play, args=(f"w{i}",)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        server.stop()
    assert not problems, problems
    store = SqliteStore(tmp_path / "events.db")
    assert store.fights() == [f"w{i}" for i in range(8)]
    for i in range(8):
        assert [e.seq for e in store.read(f"w{i}")] == list(range(1, store.version(f"w{i}") + 1))


def _fights(server: Server, count: int, prefix: str) -> list[tuple[str, str, int]]:
    """``count`` fights made on ``server``: (id, GM token, head) each."""
    made = []
    for n in range(count):
        status, created = server.call("POST", "/fights", {"id": f"{prefix}{n:03d}",
                                                          "combatants": [sheet("kael"), sheet("vesh")]})
        assert status == 201, created
        made.append((f"{prefix}{n:03d}", created["gm_token"], created["head"]["seq"]))
    return made


def _appended_once(store_path: Path, fights: list[tuple[str, str, int]],
                   pairs: list[tuple[tuple[int, bytes], tuple[int, bytes]]]) -> None:
    """Each pair's answers are one 201, byte for byte the same, and its fight holds the command once."""
    with SqliteStore(store_path) as store:
        for (fight_id, _token, _head), (first, second) in zip(fights, pairs, strict=True):
            assert first[0] == 201 and first == second, (fight_id, first, second)
            issued = [r for r in store.read(fight_id) if r.event.__struct_config__.tag == "command_issued"]
            assert len(issued) == 1 and store.version(fight_id) == json.loads(first[1])["head"]["seq"]


def test_one_keyed_request_sent_to_two_servers_on_one_sqlite_store_is_appended_once(servers: Any,
                                                                                    tmp_path: Path) -> None:
    """Issue 22, on SQLite: two server processes on one store and keep; for each of 100 fights the same request
    with the same Idempotency-Key sent to both at the same instant, all 200 at once: each command appended once,
    both answers the first answer, byte for byte."""
    one, two = servers(), servers()
    fights = _fights(one, 100, "pair")
    pairs = keyed_pairs((one, two), fights, {"command": {"command": "roll_initiative"}})
    _appended_once(tmp_path / "events.db", fights, pairs)


def test_one_keyed_request_sent_twice_to_worker_processes_is_appended_once(tmp_path: Path) -> None:
    """omen serve --workers 2: the same keyed request twice at the same instant, for 30 fights at once (the kernel
    hands each connection to either worker): each command appended once, both answers the same."""
    server = Server(tmp_path, workers=2)
    try:
        fights = _fights(server, 30, "w")
        pairs = keyed_pairs((server, server), fights, {"command": {"command": "roll_initiative"}})
    finally:
        server.stop()
    _appended_once(tmp_path / "events.db", fights, pairs)


def test_the_creation_token_is_the_operators_and_the_set_up_link_carries_it(tmp_path: Path) -> None:
    """omen serve with OMEN_CREATE_TOKEN set prints the set-up link carrying that token; POST /fights without it
    is 401, with it 201."""
    server = Server(tmp_path, env={"OMEN_CREATE_TOKEN": "omen_create_operators-own"})
    try:
        assert server.create_token == "omen_create_operators-own"
        assert server.setup_link == f"http://127.0.0.1:{server.port}/#create=omen_create_operators-own"
        body = {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]}
        assert server.call("POST", "/fights", body, token="omen_create_guess")[0] == 401
        assert server.call("POST", "/fights", body)[0] == 201
    finally:
        server.stop()
    assert not (tmp_path / "events.db").stat().st_mode & 0o077  # the store and the keep: owner only
    assert not (tmp_path / "events.keep.db").stat().st_mode & 0o077


def test_a_worker_logs_a_failure_with_its_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """A server process the CLI did not configure (a worker) logs as omen --log-format json would: one JSON
    line on stderr per failure, its traceback in it."""
    import structlog

    from omen_server.guard import log_failure
    from omen_server.serve import configure_logging

    configure_logging("json", "warning")
    try:
        try:
            raise KeyError("lost")
        except KeyError as exc:
            ref = log_failure(exc, "GET", "/fights/duel/state")
        line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    finally:
        structlog.reset_defaults()
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    assert line["ref"] == ref and line["level"] == "error" and line["path"] == "/fights/duel/state"
    assert "Traceback" in line["exception"] and "KeyError: 'lost'" in line["exception"]


def test_a_store_locked_by_another_program_is_503_within_about_a_second(servers: Any, tmp_path: Path) -> None:
    """Another program holding the SQLite store's write lock: a command waits STORE_TIMEOUT (1 s) for it, not
    the store's default 30 s, and is 503 store-unavailable with Retry-After, nothing written; once the lock is
    let go the same command goes in."""
    import sqlite3

    server = servers()
    token, version = create(server)
    holder = sqlite3.connect(tmp_path / "events.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        asked = time.monotonic()
        status, answer = server.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"},
                                                                       "expected_version": version}, token)
        waited = time.monotonic() - asked
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert status == 503 and answer["type"] == "/problems/store-unavailable", answer
    assert waited < 4, waited  # 1 s and the request's own work; generous on a loaded machine
    assert server.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"},
                                                         "expected_version": version}, token)[0] == 201


def test_a_real_sse_client_gets_one_options_message_per_head_and_keep_alives(tmp_path: Path) -> None:
    """A real SSE client (httpx-sse) follows a player's stream while the GM gives twelve commands back to back
    (several heads between two of the stream's looks): after the last event of each command's batch (the set-up's
    included) comes exactly one options message, for that head, before the next event, and every event comes once,
    in order; then, the
    fight idle, a keep-alive comment comes every keep-alive interval (1 s here: OMEN_KEEP_ALIVE; 15 s by default)
    and nothing else."""
    import httpx
    from httpx_sse import connect_sse

    server = Server(tmp_path, env={"OMEN_KEEP_ALIVE": "1"})
    try:
        token, version = create(server)
        ana = ana_plays_kael(server, token)
        heads = [version]
        status, rolled = server.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"}},
                                     token)
        assert status == 201, rolled
        heads.append(rolled["head"]["seq"])
        messages: list[tuple[str, Any]] = []
        ready = threading.Event()
        goal: list[int] = []

        def follow() -> None:
            with httpx.Client(timeout=30) as client, connect_sse(
                    client, "GET", f"http://127.0.0.1:{server.port}/fights/duel/stream",
                    headers={"Authorization": f"Bearer {ana}"}) as source:
                for sse in source.iter_sse():
                    if not sse.data:  # a keep-alive comment after the stream's retry field: httpx-sse dispatches it
                        continue      # as an empty message, where the SSE standard (and a browser) dispatches none
                    messages.append((sse.event, json.loads(sse.data)))
                    if sse.event == "options" and messages[-1][1]["head"]["seq"] == heads[1]:
                        ready.set()
                    if sse.event == "options" and goal and messages[-1][1]["head"]["seq"] == goal[0]:
                        return

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        assert ready.wait(20)
        turn = rolled["options"]["turn"]
        for _ in range(12):  # back to back: each end_turn is its own head
            status, ended = server.call("POST", "/fights/duel/commands", {"command": {"command": "end_turn",
                                                                                      "who": turn}}, token)
            assert status == 201, ended
            heads.append(ended["head"]["seq"])
            turn = ended["options"]["turn"]
        goal.append(heads[-1])
        reader.join(30)
        assert not reader.is_alive()
        events = [data["seq"] for kind, data in messages if kind == "event"]
        assert events == list(range(1, heads[-1] + 1))
        ends = [data["seq"] for kind, data in messages
                if kind == "event" and data["seq"] == data["batch"] + data["batch_size"] - 1]
        said = [data["head"]["seq"] for kind, data in messages if kind == "options"]
        assert said == ends and set(heads) <= set(ends), (said, ends, heads)  # the set-up's batches are heads too
        for at, (kind, data) in enumerate(messages):
            if kind == "options":
                assert messages[at - 1] == ("event", messages[at - 1][1]) and messages[at - 1][1]["seq"] == \
                    data["head"]["seq"], "each options message follows its head's last event"
        raw: list[str] = []
        started = time.monotonic()
        with httpx.Client(timeout=30) as client, client.stream(
                "GET", f"http://127.0.0.1:{server.port}/fights/duel/stream?after={heads[-1]}",
                headers={"Authorization": f"Bearer {ana}"}) as answer:
            for line in answer.iter_lines():
                raw.append(line)
                if sum(1 for r in raw if r.startswith(":")) == 3:
                    break
        took = time.monotonic() - started
        comments = [r for r in raw if r.startswith(":")]
        assert comments == [": keep-alive"] * 3 and 2.0 <= took < 10, (raw, took)
        assert [r for r in raw if r.startswith("event:")] == ["event: options"], "idle: the head's options only"
    finally:
        server.stop()


def test_an_interrupted_server_with_a_stream_open_stops_and_ends_the_stream(servers: Any) -> None:
    """Ctrl-C (SIGINT) while a player's page holds the live stream open: the server ends the stream and exits
    after its grace period (GRACE_SECONDS), not when the last page goes (it stayed up, its pages saying "live")."""
    from omen_server.serve import GRACE_SECONDS

    server = servers()
    status, made = server.call("POST", "/fights", {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]})
    assert status == 201, made
    stream = Stream(server, made["gm_token"])
    assert next(stream.messages())[0] == "event"
    server.process.send_signal(signal.SIGINT)
    server.process.wait(GRACE_SECONDS + 20)  # raises TimeoutExpired if it waits on the stream
    assert server.process.returncode is not None
    with contextlib.suppress(http.client.IncompleteRead, ConnectionError):  # cut mid-chunk, or closed between
        for _message in stream.messages():
            pass  # what was sent before the end; then the stream ends (no 30 s read timeout)


def test_sigterm_ends_every_open_stream_cleanly_and_logs_no_traceback(servers: Any) -> None:
    """SIGTERM while five streams are open: each stream's response ends whole (its chunked body closed, no read
    cut short), the server exits well within its grace period (GRACE_SECONDS), and its log has no traceback and
    no task cancelled at the grace period's end (uvicorn's "timeout graceful shutdown exceeded")."""
    from omen_server.serve import GRACE_SECONDS

    server = servers()
    status, made = server.call("POST", "/fights", {"id": "duel", "combatants": [sheet("kael"), sheet("vesh")]})
    assert status == 201, made
    streams = [Stream(server, made["gm_token"]) for _ in range(5)]
    for stream in streams:
        assert next(stream.messages())[0] == "event"
    asked = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(GRACE_SECONDS + 20)
    assert time.monotonic() - asked < GRACE_SECONDS, time.monotonic() - asked
    for stream in streams:
        rest = list(stream.messages())  # http.client.IncompleteRead here if a response was cut short
        assert all(event in {"event", "options"} for event, _ident, _data in rest), rest
    log = server.log.read_text()
    assert "Traceback" not in log and "CancelledError" not in log and "graceful shutdown exceeded" not in log, log


def _first_read_then_rest(port: int, token_length: int, first: int) -> bytes:
    """A GET whose bearer token is ``token_length`` characters, sent as its first ``first`` bytes, then (once the
    server has read them) the rest: the answer's bytes."""
    import socket

    request = (f"GET /fights/duel/state HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {'a' * token_length}"
               "\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as peer:
        peer.sendall(request[:first])
        time.sleep(0.3)
        with contextlib.suppress(ConnectionError):  # refused: the server may close before the rest is sent
            peer.sendall(request[first:])
        answer = b""
        with contextlib.suppress(ConnectionError):
            while chunk := peer.recv(65536):
                answer += chunk
    return answer


def test_a_client_leaving_mid_backlog_stops_the_stream_and_floods_no_log(servers: Any) -> None:
    """A tester's client closed its stream while the server was still sending the backlog: every remaining message
    of the page was written to the dead socket, asyncio logging a warning for each (hundreds a connection). Now
    three clients that read the first event of a 400-event backlog and leave (one with a reset) leave no line in
    the server's log, their connections are closed by the server, and it goes on answering."""
    server = servers()
    token, _version = create(server)
    status, rolled = server.call("POST", "/fights/duel/commands", {"command": {"command": "roll_initiative"}}, token)
    assert status == 201, rolled
    turn = rolled["options"]["turn"]
    for _ in range(100):  # four events an end of turn: a backlog of 400 and more, most of a page
        status, ended = server.call("POST", "/fights/duel/commands", {"command": {"command": "end_turn",
                                                                                  "who": turn}}, token)
        assert status == 201, ended
        turn = ended["options"]["turn"]
    assert ended["head"]["seq"] > 400
    before = server.log.read_text()
    fds = Path(f"/proc/{server.process.pid}/fd")
    idle = len(list(fds.iterdir()))
    for reset in (False, True, False):
        with socket.create_connection(("127.0.0.1", server.port)) as client:
            client.sendall(f"GET /fights/duel/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           f"Authorization: Bearer {token}\r\n\r\n".encode())
            got = b""
            while b"event: event" not in got:
                got += client.recv(100)
            if reset:
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    deadline = time.monotonic() + 10
    while len(list(fds.iterdir())) > idle and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(list(fds.iterdir())) <= idle, "the server still holds a stream's connection"
    assert server.call("GET", "/fights/duel/state", token=token)[0] == 200
    said = server.log.read_text()[len(before):]
    assert said == "", said


def test_a_client_leaving_before_its_body_is_whole_is_no_internal_error(servers: Any) -> None:
    """A client that sends a command's headers and part of its body, then closes the connection (no token needed),
    leaves no line in the server's log (each one logged "internal error" and a 27-line traceback: a security
    tester, who could fill the operator's disk); the server goes on answering."""
    server = servers()
    token, _version = create(server)
    before = server.log.read_text()
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.port)) as client:
            client.sendall(b"POST /fights/duel/commands HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\"")
            time.sleep(0.2)
    time.sleep(0.5)
    assert server.call("GET", "/fights/duel/state", token=token)[0] == 200
    said = server.log.read_text()[len(before):]
    assert said == "", said


def _stream_open(port: int, token: str) -> socket.socket:
    """A live stream of the duel opened with ``token`` on a raw socket, once its 200 has come."""
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(f"GET /fights/duel/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
                   .encode())
    got = b""
    while b"\r\n\r\n" not in got:
        got += client.recv(4096)
    assert got.startswith(b"HTTP/1.1 200 "), got[:200]
    return client


def test_a_token_holds_at_most_eight_streams_open(servers: Any) -> None:
    """docs/server.md "Limits", STREAMS_PER_TOKEN (8): a token's ninth live stream is 429 too-many-streams (1,500
    streams of one spectator's token kept a core busy: a security tester); once one of the eight is closed, a
    stream opens again; another token's streams are not counted with them."""
    from omen_server.limits import STREAMS_PER_TOKEN

    server = servers()
    token, _version = create(server)
    held = [_stream_open(server.port, token) for _ in range(STREAMS_PER_TOKEN)]
    try:
        status, problem = server.call("GET", "/fights/duel/stream", token=token)
        assert (status, problem["type"], problem["title"]) == (429, "/problems/too-many-streams", "Too many streams")
        assert problem["detail"] == ("this token holds 8 live streams open on this server already: close one (a "
                                     "page of the table) and open this again")
        ana = ana_plays_kael(server, token)
        _stream_open(server.port, ana).close()
        held.pop().close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                held.append(_stream_open(server.port, token))
                break
            except AssertionError:
                time.sleep(0.3)
        assert len(held) == STREAMS_PER_TOKEN
    finally:
        for sock in held:
            sock.close()


def test_headers_past_the_http_servers_bound_are_its_own_plain_400(servers: Any) -> None:
    """docs/server.md "Limits", MAX_HEADER_BYTES (16384: uvicorn's h11 bound, set by omen serve): a 16,000-character
    token sent in two reads is omen's 401 problem (past MAX_TOKEN); a 20,000-character one whose first read leaves
    more than 16384 bytes of headers incomplete is uvicorn's own plain-text 400, which omen never sees."""
    from omen_server.limits import MAX_HEADER_BYTES

    server = servers()
    under = _first_read_then_rest(server.port, 16_000, 10_000)
    assert under.startswith(b"HTTP/1.1 401 ") and b"application/problem+json" in under, under[:300]
    over = _first_read_then_rest(server.port, 20_000, MAX_HEADER_BYTES + 1)
    assert over.startswith(b"HTTP/1.1 400 ") and over.endswith(b"\r\n\r\nInvalid HTTP request received."), over


def test_a_stream_that_fails_says_so_once_and_stays_open_until_the_fight_changes(tmp_path: Path) -> None:
    """A tester's page reconnected in a loop while its stream failed (found with a staged command that crashed the
    views). Here a staged command in the keep no server can read (written by hand) makes every look fail: the
    player's stream sends one ``error`` message (the problem of a 500, its ``ref`` in the server's log) and stays
    open, keep-alives only (1 s here), not a second error; once the row is gone and the GM gives a command, the
    stream goes on: every event from the start (an options message after each head), up to the new head."""
    import sqlite3

    import httpx

    server = Server(tmp_path, env={"OMEN_KEEP_ALIVE": "1"})
    try:
        token, _version = create(server)
        ana = ana_plays_kael(server, token)
        keep = sqlite3.connect(tmp_path / "events.keep.db")
        with keep:
            keep.execute("insert or replace into staged values (?, ?)", ("duel", b"not a staged command"))
        messages: list[tuple[str, str]] = []
        rolled: dict[str, Any] = {"head": {"seq": -1}}
        with httpx.Client(timeout=30) as client, client.stream(
                "GET", f"http://127.0.0.1:{server.port}/fights/duel/stream",
                headers={"Authorization": f"Bearer {ana}"}) as answer:
            current: dict[str, str] = {}
            started = time.monotonic()
            for line in answer.iter_lines():
                if line:
                    name, _, value = line.partition(": ")
                    current[name] = value
                    continue
                messages.append((current.get("event", ""), current.get("data", current.get("", ""))))
                current = {}
                if len(messages) == 4 and messages[-1][0] == "":  # three keep-alives after the error: now mend it
                    with keep:
                        keep.execute("delete from staged where fight_id = ?", ("duel",))
                    status, rolled = server.call("POST", "/fights/duel/commands",
                                                 {"command": {"command": "roll_initiative"}}, token)
                    assert status == 201, rolled
                if messages[-1][0] == "options" and json.loads(messages[-1][1])["head"]["seq"] == rolled["head"]["seq"]:
                    break
                assert time.monotonic() - started < 20, messages
        keep.close()
        error = json.loads(messages[0][1])
        assert messages[0][0] == "error" and (error["type"], error["status"]) == ("/problems/internal-error", 500)
        assert error["ref"] in server.log.read_text()
        assert [kind for kind, _data in messages[1:4]] == ["", "", ""]  # keep-alive comments, no second error
        events = [json.loads(data)["seq"] for kind, data in messages if kind == "event"]
        assert events == list(range(1, rolled["head"]["seq"] + 1))
        assert json.loads(messages[-1][1])["head"]["seq"] == rolled["head"]["seq"]
    finally:
        server.stop()


def test_a_real_server_answers_head_and_refuses_a_header_given_twice(tmp_path: Path) -> None:
    """uvicorn over h11: HEAD on GET /fights/{id}/state is 200 with GET's Content-Length and no body (the same
    connection then answers a GET whole); two Authorization headers, the GM's and a player's, in either order,
    are 400 at header.Authorization (neither is taken); a body sent as text/plain is 415."""
    server = Server(tmp_path)
    try:
        gm, _ = create(server)
        alice = ana_plays_kael(server, gm)
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        connection.request("HEAD", "/fights/duel/state", headers={"Authorization": f"Bearer {gm}"})
        head = connection.getresponse()
        assert head.status == 200 and head.read() == b""
        length = head.getheader("content-length")
        connection.request("GET", "/fights/duel/state", headers={"Authorization": f"Bearer {gm}"})
        got = connection.getresponse()
        assert got.status == 200 and len(got.read()) == int(str(length)) > 0
        for first, second in ((gm, alice), (alice, gm)):
            connection.putrequest("GET", "/fights/duel/seat")
            connection.putheader("Authorization", f"Bearer {first}")
            connection.putheader("Authorization", f"Bearer {second}")
            connection.endheaders()
            twice = connection.getresponse()
            said = json.loads(twice.read())
            assert (twice.status, said["field"]) == (400, "header.Authorization"), said
        connection.request("POST", "/fights/duel/commands", body=b'{"command": {"command": "roll_initiative"}}',
                           headers={"Authorization": f"Bearer {gm}", "Content-Type": "text/plain"})
        plain = connection.getresponse()
        assert plain.status == 415 and json.loads(plain.read())["type"] == "/problems/unsupported-media-type"
        connection.close()
    finally:
        server.stop()
