"""A run as one self-contained HTML page (Jinja2, inline SVG and CSS, no script, no external request): the win rate
with its interval, the rounds, HP left, damage dealt and taken, who falls first, the comparison of two encounters,
and the fights worth a look, each linked to its session log and with the command that regenerates it.

The page holds the summary only, never the fights' records: its size does not grow with the number of fights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import PurePath
from typing import TextIO

import msgspec
from markupsafe import Markup

from ..render import environment
from .run import EncounterRun, Run
from .stats import Difference, Mean, Rate, percent, signed
from .summary import Pick

__all__ = ["Bar", "Bars", "Column", "Histogram", "write_html"]

_WIDTH, _LABEL, _RIGHT, _ROW = 680, 215, 170, 24  # the right margin holds "99.8% (98.9%–100.0%)" whole
_COLOURS = ("#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989")


class Bar(msgspec.Struct, frozen=True, kw_only=True):
    """One bar of a horizontal bar chart, laid out: its label, the bar's x and width, the interval's whisker (x
    from, x to; none: 0, 0), the text at its end, its colour and its row's y."""

    label: str
    x: float
    width: float
    low: float
    high: float
    text: str
    colour: str
    y: float


class Bars(msgspec.Struct, frozen=True, kw_only=True):
    """A horizontal bar chart: its id, title, bars, height, the scale's ticks (x, label) and what the bars show."""

    id: str
    title: str
    bars: tuple[Bar, ...]
    height: float
    ticks: tuple[tuple[float, str], ...]
    caption: str


class Column(msgspec.Struct, frozen=True, kw_only=True):
    """One column of the rounds histogram: the rounds, how many fights, and where it is drawn."""

    rounds: int
    count: int
    x: float
    y: float
    width: float
    height: float


class Histogram(msgspec.Struct, frozen=True, kw_only=True):
    """How many fights lasted each number of rounds, as columns."""

    id: str
    title: str
    columns: tuple[Column, ...]
    height: float
    base: float
    mean_x: float
    caption: str


def _x(value: float, top: float) -> float:
    span = _WIDTH - _LABEL - _RIGHT
    return _LABEL + (span * value / top if top > 0 else 0.0)


def _nice_top(top: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten, times 4, at or above ``top``: a scale with round ticks."""
    base = 10 ** math.floor(math.log10(top / 4)) if top > 0 else 1.0
    step = next(m * base for m in (1, 2, 2.5, 5, 10) if m * base * 4 >= top)
    return step * 4


def _ticks(top: float, shares: bool) -> tuple[tuple[float, str], ...]:
    steps = 4
    return tuple((_x(top * i / steps, top), f"{top * i / steps:.0%}" if shares else f"{top * i / steps:g}")
                 for i in range(steps + 1))


def _pct(r: Rate) -> str:
    return f"{percent(r.rate)}% ({percent(r.low)}%–{percent(r.high)}%)"


def _num(m: Mean, n: int = 2) -> str:
    """A mean and its interval to a tenth (:func:`tenth`); of ``n`` values, one alone having no interval."""
    return f"{tenth(m.mean)} ({tenth(m.low)}–{tenth(m.high)})" if n > 1 else f"{tenth(m.mean)} (one fight: no interval)"


def tenth(value: float) -> str:
    """A number to a tenth; one that rounds to zero is 0.0, never -0.0 (an interval's bound just below 0)."""
    return f"{value:z.1f}"



def rate_bars(chart_id: str, title: str, rows: Sequence[tuple[str, Rate, int]], caption: str) -> Bars:
    """A bar per rate, 0 to 100 %, with its Wilson interval as a whisker; the colour by group (``rows``' third
    field: the side)."""
    bars = tuple(Bar(label=label, x=_LABEL, width=_x(r.rate, 1.0) - _LABEL, low=_x(r.low, 1.0), high=_x(r.high, 1.0),
                     text=_pct(r), colour=_COLOURS[group % len(_COLOURS)], y=30 + i * _ROW)
                 for i, (label, r, group) in enumerate(rows))
    return Bars(id=chart_id, title=title, bars=bars, height=40 + len(rows) * _ROW, ticks=_ticks(1.0, True),
                caption=caption)


def mean_bars(chart_id: str, title: str, rows: Sequence[tuple[str, Mean, int]], caption: str, n: int = 2) -> Bars:
    """A bar per mean with its interval; the colour by group (``rows``' third field); means of ``n`` fights."""
    top = _nice_top(max([m.high for _l, m, _g in rows] + [1.0]))
    bars = tuple(Bar(label=label, x=_LABEL, width=max(_x(max(m.mean, 0.0), top) - _LABEL, 0.0),
                     low=_x(max(m.low, 0.0), top), high=_x(m.high, top), text=_num(m, n),
                     colour=_COLOURS[group % len(_COLOURS)], y=30 + i * _ROW)
                 for i, (label, m, group) in enumerate(rows))
    return Bars(id=chart_id, title=title, bars=bars, height=40 + len(rows) * _ROW, ticks=_ticks(top, False),
                caption=caption)


def rounds_histogram(er: EncounterRun, chart_id: str = "chart-rounds") -> Histogram:
    """The rounds distribution as columns, the mean marked."""
    s = er.summary
    counts = dict(s.rounds_histogram)
    if not counts:
        return Histogram(id=chart_id, title="Rounds", columns=(), height=60, base=40, mean_x=0, caption="")
    first, last = min(counts), max(counts)
    span, top, base = _WIDTH - 80, max(counts.values()), 200.0
    width = span / (last - first + 1)
    columns = tuple(Column(rounds=r, count=counts.get(r, 0), x=60 + (r - first) * width, width=max(width - 2, 1),
                           height=170 * counts.get(r, 0) / top, y=base - 170 * counts.get(r, 0) / top)
                    for r in range(first, last + 1))
    mean_x = 60 + (s.rounds.mean - first + 0.5) * width
    return Histogram(id=chart_id, title="How many rounds the fights lasted", columns=columns, height=240,
                     base=base, mean_x=mean_x,
                     caption=f"mean {s.rounds.mean:.2f} rounds ("
                             + (f"95 %: {s.rounds.low:z.2f}–{s.rounds.high:z.2f}" if s.fights > 1
                                else "one fight: no interval") + f"), {first} to {last}")


def _charts(er: EncounterRun) -> list[Bars | Histogram]:
    s = er.summary
    tail = f"-{er.label.lower()}" if er.label else ""  # one page compares two encounters: each chart's id its own
    names = {c.id: c.name for c in s.combatants}
    group = {side.side: i for i, side in enumerate(s.sides)}
    other = len(s.sides)
    sides = [(f"{x.side} ({x.policy_name or x.policy})", x.wins, group[x.side]) for x in s.sides]
    sides += [(f"{x.side} defeated, no winner", x.defeated_no_winner, group[x.side]) for x in s.sides
              if x.defeated_no_winner is not None]
    charts: list[Bars | Histogram] = [
        rate_bars(f"chart-wins{tail}", "Who wins",
                  [*sides, ("draws", s.draws, other), ("every side down", s.all_down, other)],
                  "the share of fights each side won" + (", and of those each side lost with two sides or more "
                                                         "left standing (no winner)" if len(s.sides) > 2 else "")
                  + ", with its Wilson 95 % interval"),
        rounds_histogram(er, f"chart-rounds{tail}"),
        mean_bars(f"chart-hp{tail}", "HP left at the end",
                  [(_short(c.name), c.hp_left, group[c.side]) for c in s.combatants],
                  "mean HP left at the end of a fight (of "
                  + ", ".join(f"{_short(c.name)} {c.max_hp}" for c in s.combatants) + "), with its 95 % interval",
                  s.fights),
        mean_bars(f"chart-damage{tail}", "Damage dealt and taken",
                  [row for c in s.combatants for row in ((f"{_short(c.name)} dealt", c.dealt, group[c.side]),
                                                         (f"{_short(c.name)} took", c.taken, group[c.side]))],
                  "mean final damage a fight (after mitigation, C13), with its 95 % interval", s.fights),
        rate_bars(f"chart-first{tail}", "Who falls first",
                  [*((_short(names[c.id]), c.falls_first, group[c.side]) for c in s.combatants),
                   ("no one", s.no_one_down, other)],
                  "the share of fights in which each combatant was the first to go down (0 HP or out, C33)"),
    ]
    return charts


def _short(name: str, most: int = 24) -> str:
    """A name short enough for a chart's label column."""
    return name if len(name) <= most else name[:most - 1] + "…"


def _difference_bars(diffs: Sequence[Difference]) -> list[dict[str, object]]:
    """Each difference's paired and unpaired intervals, centred on 0, each row on its own scale (the widest of its
    bounds reaches the edge: a rate and a number of HP are not measured alike); the bounds are written beside."""
    half = (_WIDTH - _LABEL - 210) / 2
    centre = _LABEL + 10 + half
    rows = []
    for i, d in enumerate(diffs):
        top = max(abs(d.paired_low), abs(d.paired_high), abs(d.unpaired_low), abs(d.unpaired_high), 1e-9)

        def at(v: float, top: float = top) -> float:
            return centre + half * v / top

        rows.append({"what": d.what, "y": 30 + i * 2 * _ROW, "dot": at(d.difference), "pl": at(d.paired_low),
                     "ph": at(d.paired_high), "ul": at(d.unpaired_low), "uh": at(d.unpaired_high), "centre": centre,
                     "text": f"{signed(d.difference)} ({signed(d.paired_low)} to {signed(d.paired_high)})",
                     "text_x": centre + half + 8})
    return rows


def write_html(run: Run, out: TextIO, run_path: str, fight_pages: dict[tuple[str, int], str]) -> None:
    """Write ``run``'s report page to ``out``. ``run_path`` is the run's file (for the regenerate commands);
    ``fight_pages`` the session log written for each fight linked, by (label, index), relative to the page."""
    env = environment()
    env.filters["percent"] = percent
    template = env.get_template("simulation.html.j2")
    encounters = []
    for er in run.encounters:
        picks: list[tuple[str, Pick]] = [("longest", p) for p in er.summary.extremes.longest]
        picks += [("upset", p) for p in er.summary.extremes.upsets]
        picks += [("shortest", p) for p in er.summary.extremes.shortest]
        seen: set[int] = set()
        unique = [(k, p) for k, p in picks if not (p.index in seen or seen.add(p.index))]  # type: ignore[func-returns-value]
        encounters.append({
            "run": er, "name": encounter_name(er, run), "charts": _charts(er), "picks": unique,
            "pages": {p.index: fight_pages.get((er.label, p.index)) for _k, p in unique},
            "label_option": f" --encounter {er.label}" if er.label else "",
            "log_prefix": f"{er.label.lower()}-" if er.label else ""})
    comparison = run.comparison
    page = template.render(
        run=run, encounters=encounters, run_path=run_path, comparison=comparison,
        difference_bars=_difference_bars(comparison.differences) if comparison is not None else [],
        width=_WIDTH, label_width=_LABEL, title=_title(run), nbsp=Markup("&nbsp;"), signed=signed, tenth=tenth)
    out.write(page)


def encounter_name(er: EncounterRun, run: Run) -> str:
    """An encounter as the report names it: its title (else its id); where a comparison's two share it, with the
    file it was read from beside ("The Crypt Gate (crypt-hard.toml)": a tester's comparison read "The Crypt Gate vs
    The Crypt Gate")."""
    def plain(e: EncounterRun) -> str:
        return e.encounter.title or e.encounter.id

    shared = sum(1 for other in run.encounters if plain(other) == plain(er)) > 1
    return f"{plain(er)} ({PurePath(er.encounter.source).name})" if shared else plain(er)


def _title(run: Run) -> str:
    names = " vs ".join(encounter_name(er, run) for er in run.encounters)
    return f"{names}: {run.manifest.fights:,} simulated fights"
