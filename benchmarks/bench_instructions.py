"""Instructions, not seconds: the 2v2 fights of ``bench_live`` and ``Fight.options()`` at their heads, counted by
valgrind's callgrind, for two versions of omen_core side by side.

On a shared, loaded machine wall times of one code base move by ±15 % from run to run, more than most single
changes gain. An instruction count does not move: this script runs a workload in a fresh process under
``valgrind --tool=callgrind --instr-atstart=no``, switches the instrumentation on (``callgrind_control -i on``)
only once the set-up is done (imports, sheets, the states to ask), and reads the total after it. Set-up and
workload are the same for every version; the versions are git revisions of this repository (``git archive``
into a scratch folder), ``WORKTREE`` for the files as they are.

- ``fights``: bench_live's first 5 2v2 fights to defeat on a memory store (1,890 events), played once;
- ``options``: ``Fight.options()`` at every 4th head of bench_live's first 2v2 fight (19 heads), as a live
  fight answers it.

Instruction counts weigh what valgrind's virtual CPU runs: the sha256 of the hash chain and the HMAC of the
seeded dice run without the CPU's SHA extensions there (about 31M instructions of the fights workload, the same
in every version), so they weigh more than in real time. Needs ``valgrind`` (Debian: ``apt-get install
valgrind``); about 30 s a workload and version.

Several revisions may be given: each is compared with the first. The fights of two versions are the same
fights (the same seeds, cast and choices) but need not play out alike where the rules changed between them (a
version that skips a combatant's turn at 0 HP writes fewer events): so ``fights`` also reports the events the
five fights wrote and the instructions an event, the ratio of those beside the ratio of the totals.

    .venv/bin/python benchmarks/bench_instructions.py 42b4312 WORKTREE [--workloads fights,options]
    .venv/bin/python benchmarks/bench_instructions.py a3fc09a e976518 9e195cc WORKTREE --workloads fights
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The workload, run in the measured process: set-up, a line to say it is ready, the work once told to, a line.
CHILD = r"""
import copy, hashlib, sys
sys.path.insert(0, sys.argv[3])
import omen_core, omen_core.engine, omen_core.options  # the version under test, before bench_live's path
import bench_live as B
from genlog import quiet_logging
from omen_core import Fight, MemoryStore
quiet_logging()
what = sys.argv[1]
cast = [B.sheet(w) for w in ("kael", "brin", "vesh", "skarn")]
fights = [(f"live-2v2-{i:03d}", hashlib.sha256(b"omen bench_live 2v2 %d" % i).digest()) for i in range(5)]
B.fights_run(MemoryStore(), fights[:1], cast)
heads = []
class Kept(Fight):
    def execute_all(self, commands, by=""):
        stored = super().execute_all(commands, by)
        head = copy.copy(self)  # the fight as it stands at this head, with the states it keeps
        head._recent = dict(self._recent)
        heads.append(head)
        return stored
if what == "options":
    B.Fight = Kept
    B.fights_run(MemoryStore(), fights[:1], cast)
    B.Fight = Fight
    asked = heads[::4]
    asked[0].options()
print("READY", flush=True)
sys.stdin.readline()
written = 0
if what == "fights":
    store = MemoryStore()
    B.fights_run(store, fights, cast)
    written = sum(len(list(store.read(fight_id))) for fight_id, _seed in fights)
else:
    for fight in asked:
        fight.options()
print("DONE", written, flush=True)
sys.stdin.readline()
"""


def tree(rev: str, scratch: Path) -> Path:
    """A folder holding ``omen_core`` at ``rev`` (``WORKTREE``: this repository's files as they are)."""
    if rev == "WORKTREE":
        return ROOT
    out = scratch / rev
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "omen_core"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def count(what: str, where: Path, scratch: Path) -> int:
    """The instructions of ``what`` run once with ``omen_core`` from ``where``."""
    return measure(what, where, scratch)[0]


def measure(what: str, where: Path, scratch: Path) -> tuple[int, int]:
    """The instructions of ``what`` run once with ``omen_core`` from ``where``, and the events it wrote (the
    fights'; 0 for ``options``)."""
    out = scratch / f"callgrind.{os.getpid()}.{what}.{where.name}"
    env = {**os.environ, "PYTHONPATH": str(where)}
    child = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
         sys.executable, "-c", CHILD, what, "-", str(ROOT / "benchmarks")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        cwd=scratch)
    assert child.stdin is not None and child.stdout is not None
    if child.stdout.readline().strip() != "READY":
        raise SystemExit(f"{what}: the workload did not start")
    subprocess.run(["callgrind_control", "-i", "on", str(child.pid)], check=True, capture_output=True)
    child.stdin.write("go\n")
    child.stdin.flush()
    done = child.stdout.readline().split()
    if not done or done[0] != "DONE":
        raise SystemExit(f"{what}: the workload did not finish")
    subprocess.run(["callgrind_control", "-i", "off", str(child.pid)], check=True, capture_output=True)
    child.stdin.write("end\n")
    child.stdin.flush()
    child.wait()
    found = re.search(r"^totals: (\d+)", out.read_text(), re.MULTILINE)
    if found is None:
        raise SystemExit(f"{what}: no totals in {out}")
    return int(found.group(1)), int(done[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="callgrind instruction counts of omen_core versions")
    parser.add_argument("base", help="a git revision (the baseline)")
    parser.add_argument("new", nargs="+", help="git revisions, or WORKTREE, each compared with the base")
    parser.add_argument("--workloads", default="fights,options", help="fights,options (default both)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("needs valgrind (and callgrind_control) on PATH")
    revs = [args.base, *args.new]
    with tempfile.TemporaryDirectory(prefix="omen-instr-") as tmp:
        scratch = Path(tmp)
        trees = {rev: tree(rev, scratch) for rev in revs}
        print("| workload | version | instructions | ratio | events | an event | ratio an event |\n"
              "| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for what in args.workloads.split(","):
            base, base_events = measure(what, trees[args.base], scratch)
            for rev in revs:
                found, events = (base, base_events) if rev == args.base else measure(what, trees[rev], scratch)
                each = f"{found / events / 1e3:,.1f}k" if events else "-"
                each_ratio = f"{base / base_events / (found / events):.3f}x" if events and base_events else "-"
                print(f"| {what} | {rev} | {found / 1e6:,.1f}M | {base / found:.3f}x | {events or '-'} | {each} "
                      f"| {each_ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
