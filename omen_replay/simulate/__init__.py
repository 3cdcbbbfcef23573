"""``omen simulate``: Monte Carlo encounters on the real engine, every simulated fight replayable (docs/simulate.md).

The parts, bottom up: :mod:`.encounter` (a scenario's set-up), :mod:`.moves` (the legal moves, held to
``options()``), :mod:`.policies` (what a side chooses, seeing its seat's view; the ``Policy`` protocol),
:mod:`.play` (one fight from the run's seed and its index, and its record), :mod:`.stats` and :mod:`.summary`
(Wilson intervals, means, paired and unpaired differences), :mod:`.run` (batches serially, on a process pool or on
Dask; ``--until-ci``; a run's file; any fight played again), :mod:`.report` (the HTML page) and :mod:`.command`
(the command line).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .encounter import Encounter, load_encounter
    from .play import FightRecord, Rules, SimulationError, play
    from .policies import BUILT_IN, Decision, Policy, SeatView, load_policy
    from .run import Run, dask, pool, read_run, regenerate, serial, simulate

__all__ = ["Encounter", "load_encounter", "FightRecord", "Rules", "SimulationError", "play", "BUILT_IN", "Decision",
           "Policy", "SeatView", "load_policy", "Run", "dask", "pool", "read_run", "regenerate", "serial",
           "simulate"]

#: Where each public name lives: imported when first asked for (PEP 562), so that the command line's start-up,
#: which registers :mod:`.command`, imports none of the engine.
_HOME = {**dict.fromkeys(("Encounter", "load_encounter"), "encounter"),
         **dict.fromkeys(("FightRecord", "Rules", "SimulationError", "play"), "play"),
         **dict.fromkeys(("BUILT_IN", "Decision", "Policy", "SeatView", "load_policy"), "policies"),
         **dict.fromkeys(("Run", "dask", "pool", "read_run", "regenerate", "serial", "simulate"), "run")}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_HOME[name]}", __name__), name)
