"""Session logs: one renderer walks a fight's narrative; a small writer per format (text, Markdown, HTML).

The renderer feeds each writer the same things in the same order: a header
(title, dice, seed status), the narrative line by line (each with its kind,
undone lines marked), and an ending (the end state and each combatant's HP
and Will over the fight). Writers only decide how things look.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Protocol

from omen_core.events import DiceRolled, StoredEvent

from .narrate import Line, narrate
from .replay import StateSummary, step_through, summarise
from .verify import Report, verify

__all__ = ["Writer", "TextWriter", "MarkdownWriter", "HtmlWriter", "render", "WRITERS"]

Series = dict[str, list[tuple[int, int, int]]]  # combatant name -> [(seq, hp, will)]
_RULE = " \u2500"  # the box-drawing rule around "Round N" in the narrative


class Writer(Protocol):
    """What a session-log format writes at each stage."""

    def begin(self, title: str, dice: str) -> None: ...

    def line(self, line: Line) -> None: ...

    def end(self, summary: StateSummary, series: Series, report: Report) -> str: ...


def _dice_note(records: list[StoredEvent], report: Report) -> str:
    sources = sorted({r.event.source for r in records if isinstance(r.event, DiceRolled)})
    seeded = "seeded" in sources
    seed = ("the seed is revealed and every seeded die checks out" if seeded and report.seed_revealed and report.clean
            else "the seed is not revealed yet" if seeded and not report.seed_revealed
            else "seeded dice do NOT check out: see omen verify" if seeded else "")
    return ", ".join(f"{s} dice" for s in sources) + (f"; {seed}" if seed else "") if sources else "no dice rolled"


def render(records: Iterable[StoredEvent], writer: Writer) -> str:
    """Walk a fight once and let ``writer`` write it; returns the finished document."""
    records = list(records)
    report = verify(records)
    series: Series = {}
    state = None
    for rec, state, _undone in step_through(records):
        for fighter in state.combatants.values():
            points = series.setdefault(fighter.sheet.name, [])
            if not points or points[-1][1:] != (fighter.hp, fighter.will):
                points.append((rec.seq, fighter.hp, fighter.will))
    title = state.title or state.fight_id if state is not None else "(empty log)"
    writer.begin(title, _dice_note(records, report))
    for line in narrate(records):
        writer.line(line)
    return writer.end(summarise(state), series, report) if state is not None else ""


def _ending(summary: StateSummary) -> str:
    if summary.ended:
        side = f" ({summary.end_side})" if summary.end_side else ""
        return f"ended: {summary.end_reason}{side}, round {summary.round}"
    return f"{summary.phase}, round {summary.round}"


def _verdict(report: Report) -> str:
    return ("verified: hash chain intact, every derived number recomputed" if report.clean
            else f"{len(report.findings)} finding(s): see omen verify")


class TextWriter:
    """Plain text, one event per line, as the terminal shows it."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def begin(self, title: str, dice: str) -> None:
        """The title and the dice."""
        self.out += [title, "=" * len(title), f"dice: {dice}", ""]

    def line(self, line: Line) -> None:
        """One narrative line, tagged with its seq."""
        self.out.append(f"#{line.seq:<4} {line.text}")

    def end(self, summary: StateSummary, series: Series, report: Report) -> str:
        """The end state, each combatant, and the audit's verdict."""
        self.out += ["", f"{_ending(summary)}"]
        self.out += [f"  {c.name} ({c.side}): HP {c.hp}/{c.hp_max}, Will {c.will}/{c.will_max}"
                     + (f", {', '.join(c.conditions)}" if c.conditions else "") for c in summary.combatants]
        self.out.append(_verdict(report))
        return "\n".join(self.out) + "\n"


class MarkdownWriter:
    """Markdown: a heading per round, turns in bold, results as list items, undone lines struck through."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def begin(self, title: str, dice: str) -> None:
        """The title and the dice."""
        self.out += [f"# {title}", "", f"*Dice: {dice}.*", ""]

    def line(self, line: Line) -> None:
        """One narrative line: rounds become headings, turns bold, the rest list items."""
        text = line.text.strip()
        if text.startswith("\u2500\u2500 Round"):
            self.out += ["", f"## {text.strip(_RULE)}", ""]
        elif line.kind == "undone":
            self.out.append(f"- ~~{text}~~ (undone)")
        elif line.kind == "header":
            self.out.append(f"- **{text}** `#{line.seq}`")
        else:
            self.out.append(f"  - {text} `#{line.seq}`")

    def end(self, summary: StateSummary, series: Series, report: Report) -> str:
        """The end state as a table, and the audit's verdict."""
        self.out += ["", "## The end", "", f"{_ending(summary)}.", "", "| combatant | side | HP | Will | conditions |",
                     "| --- | --- | --- | --- | --- |"]
        self.out += [f"| {c.name} | {c.side} | {c.hp}/{c.hp_max} | {c.will}/{c.will_max} | "
                     f"{', '.join(c.conditions) or '-'} |" for c in summary.combatants]
        self.out += ["", f"*{_verdict(report)}.*"]
        return "\n".join(self.out) + "\n"


_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
_CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
.line{font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre-wrap;margin:0}
.seq{color:#999;display:inline-block;width:3.5rem}.header{font-weight:bold}.roll{color:#777}
.window{color:#9a6700}.note{color:#0969da}.undone{color:#999;text-decoration:line-through}
h2{border-bottom:1px solid #ddd;margin-top:2rem}.round{background:#f6f8fa;padding:.2rem .5rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .6rem}svg text{font-size:11px}"""


class HtmlWriter:
    """One self-contained HTML page: the timeline by round and turn, and an HP / Will chart (inline SVG)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.title = ""

    def begin(self, title: str, dice: str) -> None:
        """The page head (no external assets) and the title."""
        self.title = title
        self.out += ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                     f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
                     f"<h1>{html.escape(title)}</h1>", f"<p><em>Dice: {html.escape(dice)}.</em></p>",
                     '<section id="timeline">']

    def line(self, line: Line) -> None:
        """One narrative line; a round starts a new heading."""
        text = line.text.strip()
        if text.startswith("\u2500\u2500 Round"):
            self.out.append(f'<h2 class="round">{html.escape(text.strip(_RULE))}</h2>')
            return
        self.out.append(f'<p class="line {line.kind}"><span class="seq">#{line.seq}</span>'
                        f"{html.escape(text)}</p>")

    def end(self, summary: StateSummary, series: Series, report: Report) -> str:
        """The end state, the chart of HP and Will, the audit's verdict, and the closing tags."""
        rows = "".join(f"<tr><td>{html.escape(c.name)}</td><td>{html.escape(c.side)}</td><td>{c.hp}/{c.hp_max}</td>"
                       f"<td>{c.will}/{c.will_max}</td><td>{html.escape(', '.join(c.conditions) or '-')}</td></tr>"
                       for c in summary.combatants)
        self.out += ["</section>", "<h2>The end</h2>", f"<p>{html.escape(_ending(summary))}</p>",
                     "<table><tr><th>combatant</th><th>side</th><th>HP</th><th>Will</th><th>conditions</th></tr>"
                     f"{rows}</table>", "<h2>HP and Will over the fight</h2>", _chart(series, summary.seq),
                     f"<p><em>{html.escape(_verdict(report))}.</em></p>", "</body></html>"]
        return "\n".join(self.out) + "\n"


def _chart(series: Series, last_seq: int, width: int = 720, height: int = 260) -> str:
    """An SVG line chart: each combatant's HP (solid) and Will (dashed) against the event seq."""
    top = max([max(p[1], p[2]) for points in series.values() for p in points] + [1])
    pad = 30

    def xy(seq: int, value: int) -> str:
        return f"{pad + (width - 2 * pad) * seq / max(last_seq, 1):.1f},{height - pad - (height - 2 * pad) * value / top:.1f}"

    parts = [f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 20 * len(series)}" '
             f'role="img" aria-label="HP and Will over the fight">',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#999"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#999"/>',
             f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{top}</text>',
             f'<text x="{pad - 4}" y="{height - pad + 4}" text-anchor="end">0</text>',
             f'<text x="{pad}" y="{height - 8}">seq 1</text><text x="{width - pad - 40}" y="{height - 8}">seq {last_seq}</text>']
    for i, (name, points) in enumerate(series.items()):
        colour = _COLOURS[i % len(_COLOURS)]
        steps = [*points, (last_seq, points[-1][1], points[-1][2])]
        for index, dash in ((1, ""), (2, ' stroke-dasharray="4 3"')):
            coords = []
            for (seq, *values), nxt in zip(steps, steps[1:]):
                coords += [xy(seq, values[index - 1]), xy(nxt[0], values[index - 1])]
            parts.append(f'<polyline class="series" fill="none" stroke="{colour}"{dash} points="{" ".join(coords)}"/>')
        parts.append(f'<text x="{pad}" y="{height + 12 + 20 * i}" fill="{colour}">{html.escape(name)}: '
                     f'HP (solid), Will (dashed)</text>')
    parts.append("</svg>")
    return "".join(parts)


WRITERS = {"text": TextWriter, "md": MarkdownWriter, "html": HtmlWriter}
