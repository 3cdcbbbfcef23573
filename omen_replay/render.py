"""Session logs: one walk of a fight feeds a writer per format (text, Markdown, HTML), streaming.

The walk (:mod:`omen_core.walk`) drives three visitors at once: the audit
(:mod:`omen_replay.verify`), the narrator (:mod:`omen_replay.narrate`) and a
tally of each combatant's HP and Will at each round's start. The writer gets
the same things in the same order: a header (title, dice), the narrative line
by line (each with its kind; rounds as lines of kind ``round``, undone lines
marked), and an ending (the end state, each combatant's HP and Will by round,
the audit's verdict). Writers only decide how things look, and write to a
stream as they go, so a long fight never sits in memory. Every writer shows
the control characters of user text (names, notes, reasons) as escapes
(:func:`~omen_replay.output.visible`): a log never writes a raw escape sequence.
"""

from __future__ import annotations

import html
import io
from collections.abc import Iterable
from typing import Protocol, TextIO

import msgspec

from omen_core.events import DiceRolled, FightStarted, StoredEvent, encode_line
from omen_core.state import FightState
from omen_core.walk import LinesSource, Source, Visitor, Walk, walk

from .narrate import Line, Narrator
from .output import visible
from .replay import StateSummary, summarise
from .verify import Audit, Report

__all__ = ["Writer", "TextWriter", "MarkdownWriter", "HtmlWriter", "Point", "Series", "render", "render_records",
           "WRITERS"]


class Point(msgspec.Struct, frozen=True):
    """A combatant's HP and Will at the start of a round (round 0: before the rounds; the last point: the end)."""

    round: int
    hp: int
    will: int


class Series(msgspec.Struct, kw_only=True):
    """One combatant's HP and Will over the fight, by round: by id, so same-named combatants stay apart."""

    id: str
    name: str
    hp_max: int
    will_max: int
    points: list[Point]


class Writer(Protocol):
    """What a session-log format writes at each stage."""

    def begin(self, title: str, dice: str) -> None: ...

    def line(self, line: Line) -> None: ...

    def end(self, summary: StateSummary, series: list[Series], report: Report) -> None: ...


class _Tally(Visitor):
    """The header facts (title, dice sources seen) and each combatant's HP and Will at each round's start."""

    def __init__(self) -> None:
        self.title = ""
        self.sources: set[str] = set()
        self.series: dict[str, Series] = {}
        self.seed = False
        self.started = False
        self.fight_dice = ""

    def begin(self, walk: Walk) -> None:
        self.seed = walk.landmarks.seed is not None

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        if isinstance(rec.event, FightStarted):
            self.title, self.fight_dice = rec.event.title or rec.fight_id, rec.event.dice
        elif isinstance(rec.event, DiceRolled):
            self.sources.add(rec.event.source)
        if after.round != before.round or not self.started:
            self.started = True
            self._mark(after)

    def end(self, state: FightState) -> None:
        self._mark(state)

    def _mark(self, state: FightState) -> None:
        for fighter in state.combatants.values():
            line = self.series.setdefault(fighter.id, Series(id=fighter.id, name=fighter.sheet.name,
                                                             hp_max=fighter.sheet.hp, will_max=fighter.sheet.will,
                                                             points=[]))
            point = Point(state.round, fighter.hp, fighter.will)
            if line.points and line.points[-1].round == point.round:
                line.points[-1] = point
            else:
                line.points.append(point)


class _Stream(Visitor):
    """Hands the narrator's lines to the writer, after its header (which needs the fight's first event)."""

    def __init__(self, writer: Writer, tally: _Tally):
        self.writer, self.tally = writer, tally
        self.begun = False
        self.narrator = Narrator(sink=self._line)

    def _line(self, line: Line) -> None:
        if not self.begun:
            self.begun = True
            self.writer.begin(self.tally.title or "(untitled fight)", _dice_note(self.tally))
        self.writer.line(line)

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        self.narrator.event(rec, before, after, voided)


def _dice_note(tally: _Tally) -> str:
    """The fight's dice as its header declares them, and whether the seed is revealed by the end of the log."""
    if not tally.fight_dice:
        return "no dice"
    note = ("; the seed is revealed: the verdict at the end says whether every seeded die checks out"
            if tally.seed else "; the seed is not revealed yet") if tally.fight_dice == "seeded" else ""
    return f"{tally.fight_dice} dice{note}"


def render(source: Source, writer: Writer) -> None:
    """Walk a fight once and let ``writer`` write it as it goes."""
    tally = _Tally()
    audit = Audit()
    stream = _Stream(writer, tally)
    state = walk(source, [tally, audit, stream], strict=False)
    if not stream.begun:
        writer.begin(tally.title or "(empty log)", _dice_note(tally))
    writer.end(summarise(state), list(tally.series.values()), audit.report())


def render_records(records: Iterable[StoredEvent], fmt: str = "text") -> str:
    """A session log of an in-memory log, as a string (tests, tools)."""
    out = io.StringIO()
    render(LinesSource([encode_line(r) for r in records], where="the events given"), WRITERS[fmt](out))
    return out.getvalue()


def _ending(summary: StateSummary) -> str:
    if summary.ended:
        side = f" ({summary.end_side})" if summary.end_side else ""
        return f"ended: {summary.end_reason}{side}, round {summary.round}"
    return f"{summary.phase}, round {summary.round}"


def _verdict(report: Report) -> str:
    if not report.clean:
        return f"{len(report.problems)} finding(s): see omen verify"
    seed = ("; the seed is revealed and every seeded die checks out" if report.seed_revealed and report.seeded_dice
            else "; seeded dice not checked: the seed is not revealed yet" if report.seeded_dice else "")
    rerolls = f"; {len(report.rerolls)} undo re-roll(s) to review (see omen verify)" if report.rerolls else ""
    return f"verified: hash chain intact, every command decided again, every derived number recomputed{seed}{rerolls}"


class TextWriter:
    """Plain text, one event per line, as the terminal shows it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def begin(self, title: str, dice: str) -> None:
        """The title and the dice."""
        title = visible(title)
        self.out.write(f"{title}\n{'=' * len(title)}\ndice: {visible(dice)}\n\n")

    def line(self, line: Line) -> None:
        """One narrative line, tagged with its seq."""
        self.out.write(f"#{line.seq:<4} {visible(line.text)}\n")

    def end(self, summary: StateSummary, series: list[Series], report: Report) -> None:
        """The end state, each combatant, and the audit's verdict."""
        rows = [f"  {c.name} ({c.side}): HP {c.hp}/{c.hp_max}, Will {c.will}/{c.will_max}"
                + (f", {', '.join(c.conditions)}" if c.conditions else "") for c in summary.combatants]
        rerolls = "".join(f"undo re-roll: {visible(f.what)}\n" for f in report.rerolls)
        self.out.write("\n" + visible(_ending(summary)) + "\n" + "".join(visible(r) + "\n" for r in rows) + rerolls
                       + visible(_verdict(report)) + "\n")


def _md(text: str) -> str:
    """Text made safe inside Markdown: control characters shown as escapes, HTML tags and Markdown's own marks
    escaped, so a name or a note never becomes markup in a renderer."""
    escaped = html.escape(visible(text), quote=False)
    for mark in ("\\", "`", "*", "_", "[", "]", "|", "~", "#"):
        escaped = escaped.replace(mark, "\\" + mark)
    return escaped


class MarkdownWriter:
    """Markdown: a heading per round, turns in bold, results as list items, undone lines struck through."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def begin(self, title: str, dice: str) -> None:
        """The title and the dice."""
        self.out.write(f"# {_md(title)}\n\n*Dice: {_md(dice)}.*\n\n")

    def line(self, line: Line) -> None:
        """One narrative line: rounds become headings, turns bold, the rest list items."""
        text = _md(line.text.strip())
        if line.kind == "round":
            self.out.write(f"\n## {_md(line.text.strip(_RULE))}\n\n")
        elif line.kind == "undone":
            self.out.write(f"- ~~{text}~~ (undone)\n")
        elif line.kind == "header":
            self.out.write(f"- **{text}** `#{line.seq}`\n")
        else:
            self.out.write(f"  - {text} `#{line.seq}`\n")

    def end(self, summary: StateSummary, series: list[Series], report: Report) -> None:
        """The end state as a table, and the audit's verdict."""
        rows = [f"| {_md(c.name)} | {_md(c.side)} | {c.hp}/{c.hp_max} | {c.will}/{c.will_max} | "
                f"{_md(', '.join(c.conditions)) or '-'} |" for c in summary.combatants]
        self.out.write("\n## The end\n\n" + f"{_md(_ending(summary))}.\n\n"
                       "| combatant | side | HP | Will | conditions |\n| --- | --- | --- | --- | --- |\n"
                       + "".join(r + "\n" for r in rows)
                       + "".join(f"\n- undo re-roll: {_md(f.what)}" for f in report.rerolls)
                       + f"\n\n*{_md(_verdict(report))}.*\n")


_RULE = " \u2500"  # the box-drawing rule around "Round N" in the narrative
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
_CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
.line{font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre-wrap;margin:0}
.seq{color:#999;display:inline-block;width:3.5rem}.header{font-weight:bold}.roll{color:#777}
.window{color:#9a6700}.note{color:#0969da}.undone{color:#999;text-decoration:line-through}
h2{border-bottom:1px solid #ddd;margin-top:2rem}.round{background:#f6f8fa;padding:.2rem .5rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .6rem}svg text{font-size:11px}"""


class HtmlWriter:
    """One self-contained HTML page: the timeline by round and turn, and an HP / Will chart by round (inline SVG)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def begin(self, title: str, dice: str) -> None:
        """The page head (no external assets) and the title."""
        self.out.write("\n".join(["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                                  f"<title>{_h(title)}</title><style>{_CSS}</style></head><body>",
                                  f"<h1>{_h(title)}</h1>", f"<p><em>Dice: {_h(dice)}.</em></p>",
                                  '<section id="timeline">']) + "\n")

    def line(self, line: Line) -> None:
        """One narrative line; a round starts a new heading."""
        if line.kind == "round":
            self.out.write(f'<h2 class="round" id="seq-{line.seq}">{_h(line.text.strip(_RULE))}</h2>\n')
            return
        self.out.write(f'<p class="line {line.kind}"><span class="seq">#{line.seq}</span>'
                       f"{_h(line.text.strip())}</p>\n")

    def end(self, summary: StateSummary, series: list[Series], report: Report) -> None:
        """The end state, the chart of HP and Will by round, the audit's verdict, and the closing tags."""
        rows = "".join(f"<tr><td>{_h(c.name)}</td><td>{_h(c.side)}</td><td>{c.hp}/{c.hp_max}</td>"
                       f"<td>{c.will}/{c.will_max}</td><td>{_h(', '.join(c.conditions) or '-')}</td></tr>"
                       for c in summary.combatants)
        self.out.write("\n".join(["</section>", "<h2>The end</h2>", f"<p>{_h(_ending(summary))}</p>",
                                  "<table><tr><th>combatant</th><th>side</th><th>HP</th><th>Will</th>"
                                  f"<th>conditions</th></tr>{rows}</table>", "<h2>HP and Will by round</h2>",
                                  _chart(series),
                                  *(f'<p class="reroll">undo re-roll: {_h(f.what)}</p>'
                                    for f in report.rerolls),
                                  f"<p><em>{_h(_verdict(report))}.</em></p>",
                                  "</body></html>"]) + "\n")


def _h(text: str) -> str:
    """Text made safe inside HTML: control characters shown as escapes, then HTML-escaped."""
    return html.escape(visible(text))


def _chart(series: list[Series], width: int = 720, height: int = 260) -> str:
    """An SVG line chart: each combatant's HP (solid) and Will (dashed) at the start of each round, labelled axes."""
    top = max([max(p.hp, p.will) for s in series for p in s.points] + [1])
    last = max([p.round for s in series for p in s.points] + [1])
    pad = 40

    def xy(index: float, value: int) -> str:
        x = pad + (width - 2 * pad) * index / max(last, 1)
        return f"{x:.1f},{height - pad - (height - 2 * pad) * value / top:.1f}"

    parts = [f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 20 * len(series)}" '
             f'role="img" aria-label="HP and Will by round">',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#999"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#999"/>',
             f'<text x="{pad - 6}" y="{pad + 4}" text-anchor="end">{top}</text>',
             f'<text x="{pad - 6}" y="{height - pad + 4}" text-anchor="end">0</text>',
             f'<text x="12" y="{height / 2:.0f}" transform="rotate(-90 12 {height / 2:.0f})" '
             'text-anchor="middle">HP / Will</text>',
             f'<text x="{width / 2:.0f}" y="{height - 6}" text-anchor="middle">round</text>']
    step = max(1, last // 12)
    for r in range(0, last + 1, step):
        x = xy(r, 0).split(",")[0]
        parts.append(f'<text x="{x}" y="{height - pad + 16}" text-anchor="middle">{r}</text>')
    for i, s in enumerate(series):
        colour = _COLOURS[i % len(_COLOURS)]
        for attr, dash in (("hp", ""), ("will", ' stroke-dasharray="4 3"')):
            coords = " ".join(xy(p.round, getattr(p, attr)) for p in s.points)
            parts.append(f'<polyline class="series" fill="none" stroke="{colour}"{dash} points="{coords}"/>')
        parts.append(f'<text x="{pad}" y="{height + 12 + 20 * i}" fill="{colour}">{_h(s.name)} '
                     f'({_h(s.id)}): HP (solid), Will (dashed)</text>')
    parts.append("</svg>")
    return "".join(parts)


WRITERS: dict[str, type[TextWriter] | type[MarkdownWriter] | type[HtmlWriter]] = {
    "text": TextWriter, "md": MarkdownWriter, "html": HtmlWriter}
