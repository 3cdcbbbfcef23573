"""``omen simulate``: Monte Carlo encounters on the real engine, every simulated fight replayable (docs/simulate.md).

The parts, bottom up: :mod:`.encounter` (a scenario's set-up), :mod:`.moves` (the legal moves, held to
``options()``), :mod:`.policies` (what a side chooses, seeing its seat's view; the ``Policy`` protocol),
:mod:`.play` (one fight from the run's seed and its index, and its record), :mod:`.stats` and :mod:`.summary`
(Wilson intervals, means, paired and unpaired differences), :mod:`.run` (batches serially, on a process pool or on
Dask; ``--until-ci``; a run's file; any fight played again), :mod:`.report` (the HTML page) and :mod:`.command`
(the command line).
"""

from .encounter import Encounter, load_encounter
from .play import FightRecord, Rules, SimulationError, play
from .policies import BUILT_IN, Decision, Policy, SeatView, load_policy
from .run import Run, dask, pool, read_run, regenerate, serial, simulate

__all__ = ["Encounter", "load_encounter", "FightRecord", "Rules", "SimulationError", "play", "BUILT_IN", "Decision",
           "Policy", "SeatView", "load_policy", "Run", "dask", "pool", "read_run", "regenerate", "serial",
           "simulate"]
