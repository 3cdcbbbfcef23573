"""Running many fights: batches of consecutive indices, in this process, on a local process pool or on a Dask
cluster, gathered in index order; ``--until-ci`` decided on whole batches in index order; any fight played again.

Fight INDEX is the same fight wherever it runs (:mod:`.play`), and the summary is a function of the records in
index order (:mod:`.summary`), so a run gives the same summary, byte for byte, serially, on a pool or on Dask,
whatever the number of workers. A task is a batch of fights (``batch``, 100 by default: a Dask task costs ~12 ms
here, a fight ~4 ms), at most two per worker in flight. With a target (``until_ci``), the run stops after the first
batch, counted in index order, at which every rate's Wilson interval is narrower than ± the target; batches
already running past it are cancelled or discarded, so where a run stops does not depend on which worker was fast.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import importlib
import math
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Final, Literal

import msgspec

from omen_core.engine import CommandMemo
from omen_core.errors import BadInput
from omen_core.seats import HpDisplay

from .encounter import Encounter, digest_of
from .play import FightRecord, Played, Rules, play
from .policies import load_policy
from .summary import Comparison, Summary, Tally, compare, summarise

__all__ = ["FORMAT", "WORKERS_PER_CORE", "Manifest", "EncounterRun", "Timing", "Run", "Progress", "Backend",
           "serial", "pool", "dask",
           "simulate", "run_batch", "regenerate", "RunError", "run_json", "MOST_FIGHTS",
           "check_counts", "settings_key", "key_of", "policies_of", "unsound"]

#: What a run's file says it is.
FORMAT: Final = "omen-simulation/3"
#: Formats of earlier omens, whose records were counted otherwise (/1: an ability's damage for the attacker, the
#: round limit and who fell first as docs/simulate.md's history says): their fights replay, but not to those records.
OLDER_FORMATS: Final = ("omen-simulation/1",)
#: The format before this one, whose records are this one's: read through :func:`_from_v2` (its summary wrote a
#: combatant that never went down as going down in round 0 on average, where /3 writes null).
V2: Final = "omen-simulation/2"

#: Where a run's batches ran (``Timing.backend``).
BackendName = Literal["serial", "pool", "dask"]

#: The most fights one run may play (``--max-fights``, and so ``--fights`` and ``--until-ci``): its file keeps a
#: small record of each (a few hundred bytes), so ten million make a file of a few GB.
MOST_FIGHTS = 10_000_000

#: A run as JSON, canonical: sets (a weapon's properties) and dicts in sorted order, so the same run is the same bytes
#: in every process, whatever its hash seed.
_RUN_JSON = msgspec.json.Encoder(order="deterministic")


def run_json(run: Run) -> bytes:
    """``run`` as the JSON of its file and of ``omen simulate --json`` (canonical: :data:`_RUN_JSON`)."""
    return _RUN_JSON.encode(run)


#: The most local worker processes a run starts per core this process may use (``--workers``, ``--dask local:N``):
#: every fight comes out the same on any number of workers, and more processes than this only wait for a core, each
#: holding its memory.
WORKERS_PER_CORE = 4
#: A run's seed as its manifest writes it: 16 bytes or more, in hex (as ``--seed`` takes it).
RunSeed = Annotated[str, msgspec.Meta(pattern="^(?:[0-9a-fA-F]{2}){16,}$",
                                      description="the run's seed: 16 bytes or more, in hex (as --seed takes it)")]


class Manifest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How a run was made, all that playing any of its fights again needs besides the encounters: the omen
    version, the run's seed (hex) and start (the clock of every event, ms since the epoch), the fights run, the
    batch size, the ``--until-ci`` target (None: a fixed number of fights) and the most fights it could run, each
    side's policy, the round limit and the HP display the players' seats saw."""

    omen: str
    seed: RunSeed
    started_ms: int
    fights: int
    batch: int
    until_ci: float | None = None
    max_fights: int
    policies: dict[str, str]
    max_rounds: int
    hp_display: HpDisplay


class EncounterRun(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One encounter of a run (``label`` "A" or "B" in a comparison): the encounter, its summary, and a small
    record per fight, in index order."""

    label: str = ""
    encounter: Encounter
    summary: Summary
    records: tuple[FightRecord, ...]


class Timing(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How a run ran (not part of its summary): ``serial``, ``pool`` or ``dask``, the workers (a Dask cluster's when
    the run started: its workers may come and go), the Dask scheduler's address, the wall time and the fights per
    second."""

    backend: BackendName
    workers: int
    address: str | None = None
    seconds: float
    fights_per_second: float


class Run(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A whole run, as ``omen simulate`` writes it (``--out``) and prints it (``--json``): its manifest, each
    encounter's summary and records, the comparison of the two (``--compare``), and how it ran. Its ``format`` is
    required: a file that does not say what it is is no run."""

    format: Literal["omen-simulation/3"]
    manifest: Manifest
    encounters: tuple[EncounterRun, ...]
    comparison: Comparison | None = None
    timing: Timing


class RunError(BadInput, ValueError):
    """A run that cannot be made or read: bad options, an unreadable run file, an index out of the run."""


@dataclass(frozen=True)
class Progress:
    """Where a run stands: fights gathered in index order, out of ``total`` (None: until the target is met), the
    widest rate interval's half-width now, and the seconds so far."""

    done: int
    total: int | None
    widest: float
    seconds: float


# -- a batch: the task each worker runs ------------------------------------------------------------------------------


class _Batch(msgspec.Struct, frozen=True, kw_only=True):
    """What a worker needs to play fights of a run: the encounters, how they are played, the seed and clock."""

    encounters: tuple[Encounter, ...]
    policies: dict[str, str]
    max_rounds: int
    hp_display: HpDisplay
    seed: bytes
    started_ms: int


@lru_cache(maxsize=4)
def _decoded(payload: bytes) -> tuple[_Batch, Rules]:
    """A batch's set-up, decoded once per worker process (the same payload comes with every batch of a run)."""
    spec = msgspec.msgpack.decode(payload, type=_Batch)
    return spec, Rules(policies=spec.policies, max_rounds=spec.max_rounds, hp_display=spec.hp_display)


def run_batch(payload: bytes, start: int, count: int) -> bytes:
    """Play fights ``start`` to ``start + count - 1`` of every encounter of a run; their records, msgpack-encoded
    (one list per encounter). A plain function of its arguments: what a process pool or Dask runs."""
    spec, rules = _decoded(payload)
    memo = CommandMemo()  # the batch's fights validate the same sheets and set-up: once
    out = [[play(enc, rules, i, spec.seed, spec.started_ms, commands=memo).record for i in range(start, start + count)]
           for enc in spec.encounters]
    return msgspec.msgpack.encode(out)


_RECORDS = msgspec.msgpack.Decoder(list[list[FightRecord]])


# -- where batches run -------------------------------------------------------------------------------------------


@dataclass
class Backend:
    """Where batches run: a ``concurrent.futures`` executor (a process pool, or Dask's client executor) or this
    process (``executor`` None), with how many workers, and what to close at the end."""

    name: BackendName
    workers: int
    executor: cf.Executor | None = None
    address: str | None = None
    closing: Callable[[], None] | None = None
    #: How many workers the cluster has now (a Dask cluster's may leave mid-run), or None where that cannot change.
    present: Callable[[], int] | None = None
    #: How long, in seconds, a run waits with batches in flight and no worker left before it gives up.
    wait: float = 30.0
    #: What a task that failed for want of its worker raises (Dask's ``KilledWorker``), beside the run's own errors.
    lost: tuple[type[BaseException], ...] = ()
    #: Whether closing waits for the batches still running (a process pool's: a batch is short), or cancels them
    #: (a cluster's: a batch lost with its worker would be waited on forever).
    drain: bool = True

    def submit(self, payload: bytes, start: int, count: int) -> cf.Future[bytes]:
        """Run one batch (here and now, without an executor)."""
        if self.executor is not None:
            return self.executor.submit(run_batch, payload, start, count)
        done: cf.Future[bytes] = cf.Future()
        try:
            done.set_result(run_batch(payload, start, count))
        except Exception as exc:
            done.set_exception(exc)
        return done

    def close(self) -> None:
        """Shut the executor and whatever started it down."""
        if self.executor is not None:
            self.executor.shutdown(wait=self.drain)  # the futures still waiting were cancelled when the run stopped
        if self.closing is not None:
            self.closing()


@contextmanager
def serial() -> Iterator[Backend]:
    """Every batch in this process, one after the other."""
    yield Backend("serial", 1)


@contextmanager
def pool(workers: int) -> Iterator[Backend]:
    """A local process pool of ``workers`` processes (forked from a clean server process, where the platform has
    one: no thread of this process is copied into them)."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(["omen_replay.simulate.run"])
    backend = Backend("pool", workers, cf.ProcessPoolExecutor(max_workers=workers, mp_context=context))
    try:
        yield backend
    finally:
        backend.close()


#: How long ``--dask ADDRESS`` waits, in seconds, for a scheduler with no worker to get one before it refuses the run
#: (a run given to a cluster with no worker would wait forever).
WORKER_WAIT: Final = 30.0


@contextmanager
def dask(address: str, *, wait: float | None = None, waiting: Callable[[str], None] | None = None,
         connect: float | None = None) -> Iterator[Backend]:
    """A Dask cluster through its ``concurrent.futures`` executor: ``address`` is a scheduler's
    (``tcp://host:8786``), or ``local:N`` for a ``distributed.LocalCluster`` of N worker processes, one thread each,
    serving no dashboard, made here and closed at the end. A scheduler is given ``connect`` seconds to answer
    (:data:`CONNECT_WAIT` by default); one with no worker is waited on for ``wait`` seconds (:data:`WORKER_WAIT` by
    default, read when called; said first to ``waiting``), then refused. Needs the ``omen[dask]`` extra."""
    wait = WORKER_WAIT if wait is None else wait
    try:
        distributed: Any = importlib.import_module("distributed")
    except ImportError:
        raise RunError("--dask needs Dask: pip install 'omen[dask]'") from None
    cluster: Any = None
    if address.startswith("local:"):
        cluster = _local_cluster(distributed, address)
        client = distributed.Client(cluster)
    else:
        client = _connected(distributed, address, CONNECT_WAIT if connect is None else connect)
        _a_worker(client, address, wait, waiting)
    workers = max(1, sum(client.nthreads().values()))

    def closing() -> None:
        client.close()
        if cluster is not None:
            cluster.close()

    def present() -> int:
        return len(client.nthreads())

    killed: Any = getattr(importlib.import_module("distributed.scheduler"), "KilledWorker", None)
    backend = Backend("dask", workers, client.get_executor(pure=False), address=address, closing=closing,
                      present=present, wait=wait, lost=(killed,) if isinstance(killed, type) else (), drain=False)
    try:
        yield backend
    finally:
        backend.close()


#: How long ``--dask ADDRESS`` waits, in seconds, for the scheduler there to answer before it refuses the run.
CONNECT_WAIT: Final = 10.0


def _connected(distributed: Any, address: str, within: float = CONNECT_WAIT) -> Any:
    """A client of the Dask scheduler at ``address``, or :class:`RunError` saying why none within ``within``
    seconds: nothing listens there (or the name does not resolve), not an address Dask reads, or what answers is no
    Dask scheduler. Dask's own connection, made in a thread of its own, is given up at the deadline: against a
    service that accepts the connection and never answers as Dask does (a web server) it waited for good, and
    one that answers in another protocol read as "out of memory" (its first bytes taken for a frame's length:
    a tester)."""
    made: dict[str, Any] = {}

    def connect() -> None:
        try:
            made["client"] = distributed.Client(address, timeout=f"{within:g}s")
        except BaseException as exc:  # every way it fails is said below, in the main thread
            made["error"] = exc

    thread = threading.Thread(target=connect, name="omen-dask-connect", daemon=True)
    thread.start()
    thread.join(within + 0.5)
    if thread.is_alive():
        raise RunError(f"--dask {address}: no Dask scheduler answered there within {within:g} s: something accepted "
                       "the connection but did not answer as a Dask scheduler does (its address is "
                       "tcp://HOST:8786, or local:N)")
    error = made.get("error")
    if error is None:
        return made["client"]
    if isinstance(error, OSError):
        raise RunError(f"--dask {address}: cannot reach the Dask scheduler: {error}")
    if isinstance(error, (ValueError, TypeError)):  # not an address Dask can read: bogus, tcp:// with no host
        raise RunError(f"--dask {address}: not a Dask scheduler's address (tcp://HOST:8786, or local:N): {error}")
    if isinstance(error, KeyboardInterrupt):
        raise error
    raise RunError(f"--dask {address}: what answers there is not a Dask scheduler: its answer could not be read "
                   f"as Dask's ({type(error).__name__}{f': {error}' if str(error) else ''})")


def _local_cluster(distributed: Any, address: str) -> Any:
    """A ``LocalCluster`` of ``local:N``'s N worker processes, one thread each, on 127.0.0.1, serving nothing over
    HTTP: Dask's nodes open an HTTP server whatever their ``dashboard_address`` (None only leaves the dashboard's
    charts out: the scheduler still served its info pages, metrics and health on port 8787), so each is given no
    route (every request a 404) and a free port on 127.0.0.1."""
    try:
        n = int(address.removeprefix("local:"))
    except ValueError:
        n = 0
    if n < 1:
        raise RunError(f"--dask {address}: local:N needs a number of workers N >= 1")
    most = WORKERS_PER_CORE * default_workers()
    if n > most:
        raise RunError(f"--dask {address}: {n:,} local workers is more than {most}, the most on this machine "
                       f"({WORKERS_PER_CORE} per core, as --workers): every fight comes out the same on fewer")
    config: Any = importlib.import_module("dask.config")
    # the workers' nannies pass this configuration on to the worker processes they start
    with config.set({"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}):
        return distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                        silence_logs=40)


def _a_worker(client: Any, address: str, wait: float, waiting: Callable[[str], None] | None) -> None:
    """Return once the scheduler at ``address`` has a worker; wait ``wait`` seconds at most for one (said to
    ``waiting`` first), then close the client and refuse the run."""
    if client.nthreads():
        return
    if waiting is not None:
        waiting(f"waiting for a Dask worker at {address} (at most {wait:g} s)…")
    try:
        client.wait_for_workers(1, timeout=wait)
    except TimeoutError:
        client.close()
        raise RunError(f"--dask {address}: the scheduler has no worker: none joined within {wait:g} s (start one: "
                       f"dask worker {address} --nthreads 1)") from None


# -- the run -----------------------------------------------------------------------------------------------------


def check_counts(fights: int | None, until_ci: float | None, max_fights: int, batch: int) -> None:
    """:class:`RunError` unless a run's counts can be played: a number of fights or a target, the fights at least 1
    and at most ``max_fights`` (which caps ``--until-ci`` too), ``max_fights`` at most :data:`MOST_FIGHTS`."""
    if (fights is None) == (until_ci is None):
        raise RunError("give a number of fights or an --until-ci target, not both or neither")
    if fights is not None and fights < 1:
        raise RunError(f"--fights must be at least 1, not {fights}")
    if until_ci is not None and not 0 < until_ci < 0.5:
        raise RunError(f"--until-ci is the interval's half-width, between 0 and 0.5 (0.01 for ± 1 point), not "
                       f"{until_ci}")
    if batch < 1:
        raise RunError(f"--batch must be at least 1, not {batch}")
    if max_fights < 1:
        raise RunError(f"--max-fights must be at least 1, not {max_fights}")
    if max_fights > MOST_FIGHTS:
        raise RunError(f"--max-fights {max_fights:,} is more than {MOST_FIGHTS:,}, the most fights a run may play "
                       "(the run's file keeps a record of each)")
    if fights is not None and fights > max_fights:
        raise RunError(f"--fights {fights:,} is more than --max-fights {max_fights:,}, the most a run plays: raise "
                       f"--max-fights (up to {MOST_FIGHTS:,}) to play more")


def simulate(encounters: Sequence[Encounter], rules: Rules, seed: bytes, backend: Backend, *,
             fights: int | None = None, until_ci: float | None = None, max_fights: int = 1_000_000,
             batch: int = 100, started_ms: int | None = None,
             progress: Callable[[Progress], None] | None = None) -> Run:
    """Run ``fights`` fights of each encounter (two: a comparison on the same seeds), or, with ``until_ci``, as
    many as it takes, in whole batches, for every rate's interval to be narrower than ± ``until_ci`` (at most
    ``max_fights``); gather their records in index order and summarise them."""
    check_counts(fights, until_ci, max_fights, batch)
    names = policies_of(encounters, rules)
    # a policy that cannot be loaded is said here, before any worker starts
    own = {name: load_policy(name).name for name in dict.fromkeys(names.values())}
    started = started_ms if started_ms is not None else time.time_ns() // 1_000_000
    spec = _Batch(encounters=tuple(encounters), policies=names, max_rounds=rules.max_rounds,
                  hp_display=rules.hp_display, seed=seed, started_ms=started)
    clock = time.perf_counter()
    records = _gather(msgspec.msgpack.encode(spec), encounters, backend, fights or max_fights, until_ci, batch,
                      progress, clock)
    seconds = time.perf_counter() - clock
    n = len(records[0])
    from omen_core import __version__

    manifest = Manifest(omen=__version__, seed=seed.hex(), started_ms=started, fights=n, batch=batch,
                        until_ci=until_ci, max_fights=fights or max_fights, policies=names,
                        max_rounds=rules.max_rounds, hp_display=rules.hp_display)
    labels = ("A", "B") if len(encounters) == 2 else ("",)
    runs = tuple(EncounterRun(label=label, encounter=enc, summary=summarise(enc, recs, names, own), records=tuple(recs))
                 for label, enc, recs in zip(labels, encounters, records, strict=True))
    comparison = compare(encounters[0], encounters[1], records[0], records[1]) if len(encounters) == 2 else None
    timing = Timing(backend=backend.name, workers=backend.workers, address=backend.address, seconds=seconds,
                    fights_per_second=n * len(encounters) / seconds if seconds > 0 else 0.0)
    return Run(format=FORMAT, manifest=manifest, encounters=runs, comparison=comparison, timing=timing)


def _gather(payload: bytes, encounters: Sequence[Encounter], backend: Backend, most: int, until_ci: float | None,
            batch: int, progress: Callable[[Progress], None] | None, clock: float) -> list[list[FightRecord]]:
    """Submit the batches in index order (two per worker in flight), fold them in index order as they come in,
    stop at the first batch in that order that meets the target."""
    batches = math.ceil(most / batch)
    tallies = [Tally(sides=enc.sides, ids=tuple(s.id for s in enc.combatants)) for enc in encounters]
    out: list[list[FightRecord]] = [[] for _ in encounters]
    waiting: dict[cf.Future[bytes], int] = {}
    done: dict[int, list[list[FightRecord]]] = {}
    following, folded, stop = 0, 0, False
    try:
        while not stop:
            while len(waiting) < 2 * backend.workers and following < batches:
                start = following * batch
                waiting[backend.submit(payload, start, min(batch, most - start))] = following
                following += 1
            if not waiting:
                break
            finished = _some_done(waiting, backend, len(out[0]))
            for future in finished:
                try:
                    result = future.result()
                except backend.lost as exc:
                    raise RunError(f"--dask {backend.address}: a batch of fights was lost with the workers running "
                                   f"it ({exc}); {len(out[0]):,} fights had come back: run again") from None
                done[waiting.pop(future)] = _RECORDS.decode(result)
            while folded in done and not stop:
                for tally, mine, recs in zip(tallies, out, done.pop(folded), strict=True):
                    mine.extend(recs)
                    for rec in recs:
                        tally.add(rec)
                folded += 1
                stop = until_ci is not None and all(t.widest() < until_ci for t in tallies)
            if progress is not None:
                progress(Progress(done=len(out[0]), total=None if until_ci is not None else most,
                                  widest=max(t.widest() for t in tallies), seconds=time.perf_counter() - clock))
    finally:
        for future in waiting:
            future.cancel()
    return out


#: How often, in seconds, a run with batches in flight on a cluster looks whether it still has a worker.
_LOOK_EVERY: Final = 1.0


def _some_done(waiting: Mapping[cf.Future[bytes], int], backend: Backend, played: int) -> set[cf.Future[bytes]]:
    """The batches in flight that have finished, once one has; on a cluster whose workers may leave
    (``backend.present``), a run with no worker left for ``backend.wait`` seconds is refused rather than left to
    wait forever (Dask keeps a lost worker's batches for a worker that may never come)."""
    if backend.present is None:
        return cf.wait(waiting, return_when=cf.FIRST_COMPLETED).done
    gone_since: float | None = None
    while True:
        finished = cf.wait(waiting, timeout=_LOOK_EVERY, return_when=cf.FIRST_COMPLETED).done
        if finished:
            return finished
        if backend.present():
            gone_since = None
            continue
        now = time.monotonic()
        if gone_since is None:
            gone_since = now
        elif now - gone_since >= backend.wait:
            again = ("run again" if (backend.address or "").startswith("local:") else
                     f"start a worker (dask worker {backend.address} --nthreads 1) and run again")
            raise RunError(f"--dask {backend.address}: every worker left mid-run and none joined within "
                           f"{backend.wait:g} s; {played:,} fights had come back: {again}")


# -- what makes a run the run it is ----------------------------------------------------------------------------


def policies_of(encounters: Sequence[Encounter], rules: Rules) -> dict[str, str]:
    """Each side's policy (by what ``--policy`` calls it), for every side of ``encounters``: what a run records."""
    return {side: rules.policy(side) for side in dict.fromkeys(s for enc in encounters for s in enc.sides)}


def settings_key(encounters: Sequence[Encounter], policies: Mapping[str, str], seed: bytes, max_rounds: int,
                 hp_display: str, until_ci: float | None, max_fights: int, batch: int) -> str:
    """The SHA-256 (hex) of everything a run's fights and summary are made from: the encounters (their digests),
    the seed, each side's policy, the round limit, the HP display, and how many fights it plays (``max_fights``:
    the fights asked for, or with ``until_ci`` the most it may play; the batch, where ``--until-ci`` decides). Two
    runs with the same key play the same fights to the same records and summary (their start and timing aside);
    a run's default file name carries its first 8 digits."""
    settings = {"encounters": [e.digest for e in encounters], "seed": seed.hex(), "policies": dict(policies),
                "max_rounds": max_rounds, "hp_display": hp_display, "until_ci": until_ci, "max_fights": max_fights,
                "batch": batch}
    return hashlib.sha256(_RUN_JSON.encode(settings)).hexdigest()


def key_of(run: Run) -> str:
    """:func:`settings_key` of a run made (read from its manifest and encounters)."""
    m = run.manifest
    return settings_key([e.encounter for e in run.encounters], m.policies, bytes.fromhex(m.seed), m.max_rounds,
                        m.hp_display, m.until_ci, m.max_fights, m.batch)


# -- reading a run and playing one of its fights again -------------------------------------------------------------


def read_run(text: bytes, source: str) -> Run:
    """A run's file, decoded; :class:`RunError` naming the file and the field otherwise."""
    start = text.lstrip()[:1]
    if start != b"{":  # (msgspec said "Expected `object`, got `array`" of an encounter's TOML: a tester)
        toml = " (an encounter is played as omen simulate ENCOUNTER.toml; --replay takes the run it wrote)" \
            if source.endswith(".toml") else ""
        raise RunError(f"{source}: not a run of omen simulate: a run's file is one JSON object, as omen simulate "
                       f"writes it (out/simulations/, or --out); this one starts with "
                       f"{start.decode('latin-1')!r}{toml}" if start else
                       f"{source}: not a run of omen simulate: the file is empty")
    try:
        said = msgspec.json.decode(text, type=_Format).format
        if said in OLDER_FORMATS:
            raise RunError(f"{source}: format {said!r}, made by an earlier omen whose records count damage, the round "
                           f"limit and who fell first otherwise: run the simulation again (this omen reads {FORMAT!r})")
        if said == V2:
            return msgspec.convert(_from_v2(msgspec.json.decode(text)), type=Run)
        if said is None:
            raise RunError(f"{source}: not a run of omen simulate: it has no `format` (a run's file says "
                           f"\"format\": {FORMAT!r})")
        if said != FORMAT:
            raise RunError(f"{source}: format {said!r}, not {FORMAT!r}")
        return msgspec.json.decode(text, type=Run)
    except msgspec.ValidationError as exc:
        raise RunError(f"{source}: not a run of omen simulate: {exc}") from None
    except msgspec.DecodeError as exc:
        raise RunError(f"{source}: not JSON: {exc}") from None


def _from_v2(raw: Any) -> Any:
    """A run of ``omen-simulation/2`` as this format has it (its upcaster): the same records and the same summary,
    but for a combatant that never went down, whose ``down_round`` /2 wrote as a mean of 0 (0, 0, 0, 0) and /3 as
    null. What is not a /2 run's shape is left as it is, for the decoder to name."""
    raw["format"] = FORMAT
    encounters = raw.get("encounters")
    for er in encounters if isinstance(encounters, list) else ():
        summary = er.get("summary") if isinstance(er, dict) else None
        combatants = summary.get("combatants") if isinstance(summary, dict) else None
        for c in combatants if isinstance(combatants, list) else ():
            if isinstance(c, dict) and isinstance(c.get("down"), dict) and c["down"].get("count") == 0:
                c["down_round"] = None
    return raw


class _Format(msgspec.Struct, frozen=True):
    """What a file says it is, read first: a run of another format is said as such, not as a field it lacks."""

    format: str | None = None


def edited(run: Run) -> list[str]:
    """The encounters of ``run`` (by label, or index) whose content no longer hashes to the digest recorded when the
    run played them: the run file was edited since. (A run written before the digest was taken in a deterministic
    order, its sets in the order of the process, may be listed too.)"""
    return [played.label or str(n) for n, played in enumerate(run.encounters)
            if digest_of(played.encounter) != played.encounter.digest]


def unsound(run: Run, same_omen: bool) -> list[str]:
    """What in ``run`` does not follow from the rest of it, each said in words: an encounter that no longer hashes
    to the digest the run recorded (:func:`edited`); and, for a run made by this omen (``same_omen``: another may
    summarise otherwise), a summary that is not the one its records give, a comparison that is not the records'.
    Empty for a run file as omen wrote it. (Not a seal: one who edits a record and the summary to match, or
    recomputes a digest, is caught only by the fight itself played again.)"""
    found = [f"encounter {label} no longer hashes to the digest the run recorded" for label in edited(run)]
    if not same_omen:
        return found
    policies = run.manifest.policies
    for n, er in enumerate(run.encounters):
        names = {s.policy: s.policy_name for s in er.summary.sides if s.policy_name}
        try:
            again = summarise(er.encounter, er.records, policies, names)
        except (KeyError, IndexError, ValueError, ZeroDivisionError):  # records the encounter cannot have made
            again = None
        if again != er.summary:
            found.append(f"encounter {er.label or n}'s summary is not the one its {len(er.records)} records give")
    if run.comparison is not None and len(run.encounters) == 2:
        a, b = run.encounters
        if compare(a.encounter, b.encounter, a.records, b.records) != run.comparison:
            found.append("the comparison is not the one the two encounters' records give")
    return found


def regenerate(run: Run, index: int, label: str | None = None) -> tuple[Played, FightRecord]:
    """Play fight ``index`` of ``run`` again (of encounter ``label``, "A" or "B", in a comparison; the only one
    otherwise): the fight, with its whole log, and the record the run kept of it."""
    m = run.manifest
    if not 0 <= index < m.fights:
        raise RunError(f"the run has fights 0 to {m.fights - 1}, not {index}")
    chosen = [e for e in run.encounters if label is None or e.label == label.upper()]
    if label is None and len(chosen) > 1:
        raise RunError("the run compares two encounters: say which with --encounter A or B")
    if not chosen and len(run.encounters) == 1:
        raise RunError(f"--encounter {label}: the run is not a comparison (it played one encounter): leave "
                       "--encounter out")
    if not chosen:
        labels = " or ".join(e.label for e in run.encounters)
        raise RunError(f"the run has no encounter {label!r}: say {labels}")
    er = chosen[0]
    if len(er.records) != m.fights:  # a run keeps one record per fight of each encounter
        raise RunError(f"the run file's encounter {er.label or 0} holds {len(er.records)} record(s), not the "
                       f"{m.fights} its manifest says the run played: edited since the run")
    rules = Rules(policies=m.policies, max_rounds=m.max_rounds, hp_display=m.hp_display)
    played = play(er.encounter, rules, index, bytes.fromhex(m.seed), m.started_ms)
    return played, er.records[index]


def default_workers() -> int:
    """The local pool's size by default: the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def interactive() -> bool:
    """Whether standard error is a terminal (where a progress bar goes)."""
    return sys.stderr.isatty()
