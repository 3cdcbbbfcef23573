"""Running many fights (omen_replay/simulate/run.py): the same summary however the fights are split, --until-ci
decided in index order, a run's file read back, any fight played again."""

from __future__ import annotations

import contextlib
import gc
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from omen_replay.simulate.encounter import load_encounter
from omen_replay.simulate.play import Rules
from omen_replay.simulate.run import Run, RunError, dask, pool, read_run, regenerate, run_json, serial, simulate
from tests.replay.simulate.encounters import mirror_duel

SEED = bytes.fromhex("5eed" * 8)


def summaries(run: Run) -> bytes:
    """Everything a run found, as bytes: each encounter's summary and records (not its timing)."""
    return msgspec.json.encode([(e.summary, e.records) for e in run.encounters])


class TestTheSameRunAnywhere:
    @pytest.mark.slow
    def test_2000_fights_give_byte_identical_summaries_serially_on_a_pool_and_on_dask(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The same 2,000-fight encounter (a mirror duel), run serially, on a 2-process pool and on a
        distributed.LocalCluster with 2 worker processes, gives byte-identical summaries and records: every fight
        is a function of the run's seed and its index, and the summary of the records in index order. (The
        seconds each took are printed: about 20 s in all on 2 cores, Dask's start-up included.)"""
        encounter = load_encounter(mirror_duel(tmp_path))
        rules = Rules(policies={"north": "aggressive", "south": "cautious"})
        found, took = [], []
        for backend in (serial, lambda: pool(2), lambda: dask("local:2")):
            start = time.perf_counter()
            with backend() as chosen:
                run = simulate([encounter], rules, SEED, chosen, fights=2000, batch=100, started_ms=0)
            took.append((run.timing.backend, run.timing.workers, round(time.perf_counter() - start, 1)))
            found.append(summaries(run))
        with capsys.disabled():
            print(f"\n2,000 fights each way (backend, workers, seconds with start-up): {took}")
        assert found[0] == found[1] == found[2]
        assert [t[:2] for t in took] == [("serial", 1), ("pool", 2), ("dask", 2)]
        assert msgspec.json.decode(found[0])[0][0]["fights"] == 2000


class TestUntilCi:
    @pytest.mark.slow
    def test_a_50_percent_encounter_stops_near_9600_fights_reproducibly(self, tmp_path: Path) -> None:
        """--until-ci 0.01 on a mirror duel (each side wins half by symmetry): the run stops at the first batch,
        in index order, where every rate's Wilson interval is within ± 1 point: near the 9,604 fights
        1.96² · 0.25 / 0.01² gives, and at the same fight whether the batches ran serially or on 2 processes
        (where they come back in any order)."""
        encounter = load_encounter(mirror_duel(tmp_path, hp=5, name="quick"))
        rules = Rules(policies={})
        with serial() as backend:
            first = simulate([encounter], rules, SEED, backend, until_ci=0.01, batch=100, started_ms=0)
        with pool(2) as backend:
            again = simulate([encounter], rules, SEED, backend, until_ci=0.01, batch=100, started_ms=0)
        n = first.manifest.fights
        print(f"\n--until-ci 0.01 stopped at {n} fights; the win rate {first.encounters[0].summary.sides[0].wins}")
        assert 9000 <= n <= 10200, n
        assert again.manifest.fights == n and summaries(again) == summaries(first)
        summary = first.encounters[0].summary
        assert summary.widest < 0.01
        wins = summary.sides[0].wins
        assert abs(wins.rate - 0.5) < 0.02, wins

    def test_the_target_is_checked_after_every_batch_not_only_at_the_end(self, tmp_path: Path) -> None:
        """--until-ci 0.2: the run stops at the first batch of 10 whose intervals are all within ± 20 points,
        long before its cap of 1,000 fights; one batch fewer would not have met it."""
        encounter = load_encounter(mirror_duel(tmp_path, hp=5, name="quick"))
        with serial() as backend:
            run = simulate([encounter], Rules(policies={}), SEED, backend, until_ci=0.2, batch=10,
                           max_fights=1000, started_ms=0)
            n = run.manifest.fights
            shorter = simulate([encounter], Rules(policies={}), SEED, backend, fights=n - 10, batch=10,
                               started_ms=0)
        assert n % 10 == 0 and n < 1000
        assert run.encounters[0].summary.widest < 0.2 <= shorter.encounters[0].summary.widest


class TestOptionsAreChecked:
    @pytest.mark.parametrize(("options", "said"), [
        ({}, "a number of fights or an --until-ci target"),
        ({"fights": 10, "until_ci": 0.1}, "not both"),
        ({"fights": 0}, "at least 1"),
        ({"until_ci": 0.7}, "between 0 and 0.5"),
        ({"fights": 10, "batch": 0}, "at least 1"),
    ])
    def test_bad_options_are_refused_before_any_fight(self, tmp_path: Path, options: dict[str, Any], said: str) -> None:
        """A run without a number of fights or a target, with both, or with impossible numbers is refused,
        saying which."""
        encounter = load_encounter(mirror_duel(tmp_path))
        with serial() as backend, pytest.raises(RunError, match=said):
            simulate([encounter], Rules(policies={}), SEED, backend, **options)

    def test_an_unknown_policy_is_refused_before_any_fight(self, tmp_path: Path) -> None:
        """A side's policy that cannot be loaded is said before any worker starts."""
        from omen_replay.simulate.policies import PolicyError

        encounter = load_encounter(mirror_duel(tmp_path))
        with serial() as backend, pytest.raises(PolicyError, match="unknown policy 'bold'"):
            simulate([encounter], Rules(policies={"north": "bold"}), SEED, backend, fights=5)


class TestARunsFile:
    def test_a_run_reads_back_and_plays_any_fight_again_with_its_record(self, tmp_path: Path) -> None:
        """A run written as JSON reads back whole; fight 7 played again from it alone gives the record the run
        kept (the same winner, rounds, HP, damage)."""
        encounter = load_encounter(mirror_duel(tmp_path))
        with serial() as backend:
            run = simulate([encounter], Rules(policies={"south": "random"}), SEED, backend, fights=20, batch=5)
        back = read_run(msgspec.json.encode(run), "run.json")
        assert back == run
        played, recorded = regenerate(back, 7)
        assert played.record == recorded == run.encounters[0].records[7]

    def test_a_run_of_the_format_before_reads_with_null_for_a_round_never_gone_down_in(self, tmp_path: Path) -> None:
        """One fight of the mirror duel: its winner never went down, so /3 writes its ``down_round`` null, where
        ``omen-simulation/2`` wrote a mean of 0 (0, 0, 0, 0); a /2 file reads as the /3 run it is (the same records
        and summary, its fights playing again), and one that is not a run of /2 is still refused as no run."""
        encounter = load_encounter(mirror_duel(tmp_path))
        with serial() as backend:
            run = simulate([encounter], Rules(policies={}), SEED, backend, fights=1, batch=1)
        data = msgspec.json.decode(run_json(run))
        combatants = data["encounters"][0]["summary"]["combatants"]
        standing = [c for c in combatants if c["down"]["count"] == 0]
        assert len(standing) == 1 and standing[0]["down_round"] is None
        fallen = next(c for c in combatants if c["down"]["count"] == 1)
        assert fallen["down_round"]["mean"] == run.encounters[0].records[0].rounds
        data["format"] = "omen-simulation/2"
        standing[0]["down_round"] = {"mean": 0.0, "sd": 0.0, "low": 0.0, "high": 0.0}
        assert read_run(msgspec.json.encode(data), "run.json") == run
        data["encounters"][0]["records"][0]["colour"] = "red"
        with pytest.raises(RunError, match=r"run\.json: not a run of omen simulate: .*colour"):
            read_run(msgspec.json.encode(data), "run.json")

    @pytest.mark.parametrize(("text", "said"), [
        (b"{", "not JSON"), (b'{"format": "x"}', "format 'x', not 'omen-simulation/3'"),
        (b'{"format": "omen-simulation/1"}', "format 'omen-simulation/1', made by an earlier omen"),
        (b'{"format": "omen-simulation/2"}', "not a run of omen simulate"),
        (b'{"format": "omen-simulation/3"}', "not a run of omen simulate"),
    ])
    def test_a_file_that_is_no_run_is_refused(self, text: bytes, said: str) -> None:
        """A file that is not JSON, or not a run, is refused naming the file."""
        with pytest.raises(RunError, match=f"run.json: {said}"):
            read_run(text, "run.json")

    def test_an_encounter_given_as_a_run_is_said_to_be_one(self) -> None:
        """An encounter's TOML given to --replay is no run, said in words (it said "Expected `object`, got `array`"
        of its first `[fight]`: a tester); an empty file is said empty."""
        with pytest.raises(RunError) as info:
            read_run(b'[fight]\nid = "duel"\n', "duel.toml")
        assert str(info.value) == ("duel.toml: not a run of omen simulate: a run's file is one JSON object, as omen "
                                   "simulate writes it (out/simulations/, or --out); this one starts with '[' (an "
                                   "encounter is played as omen simulate ENCOUNTER.toml; --replay takes the run it "
                                   "wrote)")
        with pytest.raises(RunError, match=r"^run\.json: not a run of omen simulate: the file is empty$"):
            read_run(b" \n", "run.json")

    @pytest.mark.parametrize(("where", "key", "value"), [
        (("encounters", 0, "records", 0), "ended", "won"),
        (("encounters", 0, "records", 0), "colour", "red"),
        (("encounters", 0, "records", 0, "combatants", 0), "healed", 3),
        (("manifest",), "hp_display", "fuzzy"),
        (("timing",), "backend", "gpu"),
        ((), "format", "omen-simulation/4"),
        ((), "notes", "mine"),
    ])
    def test_the_schema_and_the_reader_hold_a_run_to_its_documented_values(
            self, tmp_path: Path, where: tuple[str | int, ...], key: str, value: object) -> None:
        """A record's ``ended`` (defeated, all_down, round_limit), the HP display, the backend and the format are
        the documented values, and a key the format does not name is no part of it: the published schema
        (docs/schema/simulation.schema.json) and the reader (``--replay``) refuse each such run, and accept the
        run as written."""
        import json

        import jsonschema

        encounter = load_encounter(mirror_duel(tmp_path))
        with serial() as backend:
            run = simulate([encounter], Rules(policies={}), SEED, backend, fights=2, batch=2)
        schema = json.loads((Path(__file__).resolve().parents[3] / "docs" / "schema" / "simulation.schema.json")
                            .read_text())
        validator = jsonschema.Draft202012Validator(schema)
        data = json.loads(run_json(run))
        validator.validate(data)
        part = data
        for step in where:
            part = part[step]
        part[key] = value
        assert not validator.is_valid(data)
        with pytest.raises(RunError, match=r"^run\.json: "):
            read_run(json.dumps(data).encode(), "run.json")

    def test_an_index_outside_the_run_is_refused(self, tmp_path: Path) -> None:
        """Fight 20 of a 20-fight run (0 to 19) does not exist."""
        encounter = load_encounter(mirror_duel(tmp_path))
        with serial() as backend:
            run = simulate([encounter], Rules(policies={}), SEED, backend, fights=20)
        with pytest.raises(RunError, match="fights 0 to 19, not 20"):
            regenerate(run, 20)


class TestADaskCluster:
    @pytest.mark.parametrize(("answer", "said"), [
        (None, "no Dask scheduler answered there within 1 s: something accepted the connection but did not answer as "
               "a Dask scheduler does (its address is tcp://HOST:8786, or local:N)"),
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
         "what answers there is not a Dask scheduler: its answer could not be read as Dask's (")])
    def test_an_address_where_something_else_answers_is_refused_in_time(self, answer: bytes | None,
                                                                       said: str) -> None:
        """docs/simulate.md: a listener that accepts and never answers (a web server waiting for its request) is
        refused once the scheduler's time to answer is up (the run waited for good, saying nothing: a tester); one
        that answers in another protocol is refused as no Dask scheduler (it read "out of memory": the same tester,
        Dask taking its first bytes for a frame's length)."""
        import socket
        import threading

        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(0.1)
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        held: list[socket.socket] = []
        stop = threading.Event()

        def serve() -> None:
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    return
                held.append(conn)
                if answer is not None:
                    with contextlib.suppress(OSError):
                        conn.sendall(answer)

        server = threading.Thread(target=serve, daemon=True)
        server.start()
        start = time.perf_counter()
        try:
            with pytest.raises(RunError) as refused, dask(address, connect=1):
                pass
        finally:  # every socket of the listener's side closed here, none left for the garbage collector to find
            stop.set()
            server.join()
            listener.close()
            for conn in held:
                conn.close()
            for left in [t for t in threading.enumerate() if t.name == "omen-dask-connect"]:
                left.join(10)  # Dask's own try, given up on by the run, ends once its peer has gone
            gc.collect()  # (what it left unclosed is found here, in this test, not in a later one)
        assert str(refused.value).startswith(f"--dask {address}: {said}")  # (the error Dask raised: MemoryError)
        assert time.perf_counter() - start < 5

    def test_a_scheduler_with_no_worker_is_waited_on_then_refused(self) -> None:
        """A scheduler no worker has joined (a LocalCluster of 0 workers, on 127.0.0.1:9112) is waited on for the
        time given, saying so first, then refused naming the address and how to start a worker (the run waited
        forever, saying nothing)."""
        import importlib

        distributed: Any = importlib.import_module("distributed")  # untyped: as run.py reaches it
        said: list[str] = []
        with distributed.LocalCluster(n_workers=0, host="127.0.0.1", scheduler_port=9112, processes=False,
                                      dashboard_address=None, silence_logs=40,
                                      scheduler_kwargs={"dashboard_address": "127.0.0.1:9113"}) as empty:
            address = empty.scheduler_address
            start = time.perf_counter()
            with pytest.raises(RunError) as refused, dask(address, wait=2, waiting=said.append):
                pass
            waited = time.perf_counter() - start
        assert said == [f"waiting for a Dask worker at {address} (at most 2 s)…"]
        assert str(refused.value) == (f"--dask {address}: the scheduler has no worker: none joined within 2 s (start "
                                      f"one: dask worker {address} --nthreads 1)")
        assert 2 <= waited < 10

    def test_a_run_whose_workers_all_leave_mid_run_is_refused_not_left_waiting(self, tmp_path: Path) -> None:
        """A cluster's only worker leaves after the first batch comes back (the cluster scaled to 0): the run
        stops with a RunError naming the address, the wait and the fights that came back, within the wait given
        (2 s here), where it waited forever for a worker (Dask keeps a lost worker's batches)."""
        import importlib
        import threading

        distributed: Any = importlib.import_module("distributed")
        encounter = load_encounter(mirror_duel(tmp_path))
        outcome: list[BaseException | Run] = []
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", processes=False,
                                      protocol="tcp", dashboard_address=None, silence_logs=40,
                                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
            address = cluster.scheduler_address

            def leave_after_the_first(progress: Any) -> None:
                if progress.done and cluster.workers:
                    cluster.scale(0)

            def run() -> None:
                try:
                    with dask(address, wait=2) as backend:
                        outcome.append(simulate([encounter], Rules(policies={}), SEED, backend, fights=100_000,
                                                batch=20, started_ms=0, progress=leave_after_the_first))
                except BaseException as exc:  # the thread's outcome, checked below
                    outcome.append(exc)

            runner = threading.Thread(target=run, daemon=True)
            start = time.perf_counter()
            runner.start()
            runner.join(timeout=90)
            waited = time.perf_counter() - start
            assert not runner.is_alive(), "the run still waits for a worker"
        assert len(outcome) == 1 and isinstance(outcome[0], RunError), outcome
        said = str(outcome[0])
        assert said.startswith(f"--dask {address}: every worker left mid-run and none joined within 2 s; ")
        assert said.endswith(f"fights had come back: start a worker (dask worker {address} --nthreads 1) and run "
                             "again")
        assert waited < 60

    def test_a_local_cluster_serves_no_dashboard_and_no_page(self) -> None:
        """--dask local:1 (dashboard_address=None, which only leaves the charts out) served the scheduler's info
        pages, metrics and health on 127.0.0.1:8787 and each worker's on a random port: now no node listens on
        8787, and every node's HTTP server (on a free port of 127.0.0.1) answers even /health with 404."""
        import urllib.error
        import urllib.request

        with dask("local:1") as backend:
            client: Any = backend.executor._client  # type: ignore[union-attr]

            def http_ports(dask_scheduler: Any = None, dask_worker: Any = None) -> list[tuple[str, int]]:
                node = dask_scheduler if dask_scheduler is not None else dask_worker
                return [s.getsockname()[:2] for s in node.http_server._sockets.values()]

            ports = [*client.run_on_scheduler(http_ports), *(p for ps in client.run(http_ports).values() for p in ps)]
            answers = []
            for host, port in ports:
                try:
                    urllib.request.urlopen(f"http://{host}:{port}/health", timeout=5)
                    answers.append(200)
                except urllib.error.HTTPError as exc:
                    answers.append(exc.code)
        assert len(ports) == 2 and {host for host, _ in ports} == {"127.0.0.1"}
        assert 8787 not in {port for _, port in ports} and answers == [404, 404]


class TestTheFormat:
    def test_a_run_without_its_format_is_refused(self, tmp_path: Path) -> None:
        """docs/simulate.md: the format is closed and a run's file says it: one whose ``format`` key was deleted is
        refused (it was read as the current format), and the published schema requires it too."""
        import json

        import jsonschema

        encounter = load_encounter(mirror_duel(tmp_path))
        with serial() as backend:
            run = simulate([encounter], Rules(policies={}), SEED, backend, fights=2, batch=2)
        data = json.loads(run_json(run))
        del data["format"]
        with pytest.raises(RunError) as refused:
            read_run(json.dumps(data).encode(), "run.json")
        assert str(refused.value) == ("run.json: not a run of omen simulate: it has no `format` (a run's file says "
                                      "\"format\": 'omen-simulation/3')")
        schema = json.loads((Path(__file__).resolve().parents[3] / "docs" / "schema" / "simulation.schema.json")
                            .read_text())
        assert not jsonschema.Draft202012Validator(schema).is_valid(data)
