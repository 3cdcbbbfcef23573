"""Session logs: one walk of a fight feeds a writer per format (text, Markdown, HTML), streaming.

The walk (:mod:`omen_core.walk`) drives three visitors at once: a tally of
the header facts (title, dice), the audit (:mod:`omen_replay.verify`) and the
card builder (:mod:`omen_replay.cards`), which hands over the log's entries
(action cards, round summaries, notes) as soon as each is complete. Every
writer gets the same structured data in the same order: a header (title,
dice), the entries one by one, and an ending (the end state, the chart of HP
and Will by round, the audit's verdict); it only decides how things look,
never finds anything by reading narrated text. The HTML page is rendered
from the Jinja2 templates in ``omen_replay/templates`` (autoescaped), the
same a server can include (:func:`environment`). Writers write to a stream
as they go, so a long fight never sits in memory: the HTML writer keeps the
timeline in a temporary file until the end, where the chart and the verdict
that go above it are known. Every writer shows the control characters of
user text (names, notes, reasons) as escapes (:func:`~omen_replay.output.visible`):
a log never writes a raw escape sequence.
"""

from __future__ import annotations

import html
import io
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol, TextIO

import jinja2
import msgspec
from markupsafe import Markup

from omen_core.events import CombatantJoined, FightStarted, StoredEvent, encode_line
from omen_core.state import FightState, Lasting
from omen_core.walk import LinesSource, Source, Visitor, Walk, walk

from .cards import Card, CardBuilder, Chart, Entry, Note, RoundSummary
from .output import visible
from .replay import StateSummary, conditions_words, summarise
from .verify import Audit, Report

__all__ = ["Writer", "TextWriter", "MarkdownWriter", "HtmlWriter", "ChartView", "Polyline", "render",
           "render_records", "environment", "chart_view", "bucketed", "MAX_COLUMNS", "WRITERS"]


class Writer(Protocol):
    """What a session-log format writes at each stage."""

    def begin(self, title: str, dice: str) -> None: ...

    def entry(self, entry: Entry) -> None: ...

    def end(self, summary: StateSummary, chart: Chart, report: Report) -> None: ...


class _Tally(Visitor):
    """The header facts: the title, the dice the fight declares, and whether the seed is revealed."""

    def __init__(self) -> None:
        self.title = ""
        self.seeds = 0
        self.fight_dice = ""
        self.names: list[str] = []  # the combatants' names, as they join (the HTML isolates right-to-left ones)

    def begin(self, walk: Walk) -> None:
        self.seeds = len(walk.landmarks.seeds) or int(walk.landmarks.seed is not None)

    def event(self, rec: StoredEvent, before: FightState, after: FightState, voided: bool) -> None:
        if isinstance(rec.event, FightStarted):
            self.title, self.fight_dice = rec.event.title or rec.fight_id, rec.event.dice
        elif isinstance(rec.event, CombatantJoined) and not voided:
            self.names.append(rec.event.sheet.name)


class _Stream:
    """Hands the builder's entries to the writer, after its header (which needs the fight's first event)."""

    def __init__(self, writer: Writer, tally: _Tally):
        self.writer, self.tally = writer, tally
        self.begun = False

    def __call__(self, entry: Entry) -> None:
        if not self.begun:
            self.begun = True
            self.writer.begin(self.tally.title or "(untitled fight)", _dice_note(self.tally))
        self.writer.entry(entry)


def _dice_note(tally: _Tally) -> str:
    """The fight's dice as its header declares them, and whether the seed is revealed by the end of the log."""
    if not tally.fight_dice:
        return "no dice"
    revealed = "the seed is revealed" if tally.seeds == 1 else f"{tally.seeds} seeds are revealed (C42)"
    note = (f"; {revealed}: the verdict at the end says whether every seeded die checks out"
            if tally.seeds else "; the seed is not revealed yet") if tally.fight_dice == "seeded" else ""
    return f"{tally.fight_dice} dice{note}"


def render(source: Source, writer: Writer) -> None:
    """Walk a fight once and let ``writer`` write it as it goes."""
    tally = _Tally()
    audit = Audit()
    if isinstance(writer, HtmlWriter):
        writer.names = tally.names  # the list the tally fills as the combatants join
    stream = _Stream(writer, tally)
    builder = CardBuilder(stream)
    state = walk(source, [tally, audit, builder], strict=False)
    if not stream.begun:
        writer.begin(tally.title or "(empty log)", _dice_note(tally))
    writer.end(summarise(state), builder.chart, audit.report())


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
    checked = report.seed_revealed and report.seeded_checked == report.seeded_dice
    seed = ("; the seed is revealed and every seeded die checks out" if checked and report.seeded_dice
            else f"; {report.seeded_words()}" if report.seeded_dice else "")
    provenance = (f"; {len(report.provenance)} dice provenance finding(s) to review: dice of another source than "
                  f"the fight's {report.dice} dice, or a change of source (see omen verify)"
                  if report.provenance else "")
    rerolls = f"; {len(report.rerolls)} undo re-roll(s) to review (see omen verify)" if report.rerolls else ""
    return (f"verified: hash chain intact, every command decided again, every derived number recomputed{seed}"
            f"{provenance}{rerolls}")


def _notices(report: Report) -> list[str]:
    """The findings that do not make a log unsound, each as a line: dice provenance, then undo re-rolls."""
    return ([f"dice provenance: seq {f.seq}: {f.what}" for f in report.provenance]
            + [f"undo re-roll: {f.what}" for f in report.rerolls])


def _row(name: str, side: str, hp: str, will: str, held: list[str], extra: str = "") -> str:
    said = ", ".join(held)
    return f"{name} ({side}): HP {hp}, Will {will}{extra}" + (f", {said}" if said else "")


def _out(left: str) -> str:
    """A combatant out of the fight, as ``omen replay`` says it: ``out of the fight: fled (C33)``."""
    return f"out of the fight: {left} (C33)"


class Holding(Protocol):
    """A combatant's conditions as a summary row holds them (a round's row, the end state's)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def conditions(self) -> dict[str, int]: ...
    @property
    def remaining(self) -> dict[str, int]: ...
    @property
    def until(self) -> dict[str, Lasting]: ...


def _held(row: Holding, rows: Iterable[Holding]) -> list[str]:
    """``row``'s conditions in words (:func:`~omen_replay.replay.conditions_words`), named from ``rows``."""
    return conditions_words(row.conditions, row.remaining, row.until, {r.id: r.name for r in rows})


def card_lines(card: Card) -> list[str]:
    """A card's summary, a line each, as the text and Markdown writers give it (from the card's fields)."""
    found = [f"{roll.name}: {roll.text()}" for roll in card.rolls]
    found += [f"{v.label}: {v.numbers}" + (f" ({v.rule})" if v.rule else "") if v.numbers else v.label
              + (f" ({v.rule})" if v.rule else "") for v in card.verdicts]
    found += [f"damage ({d.source}): {d.raw.text()}; {d.text()}" for d in card.damage]
    found += [f"after: {r.name} {r.resource.upper()} {r.before} \u2192 {r.after}" for r in card.resources]
    found += [f"{c.name} is {c.condition}" + (f" x{c.stacks}" if c.stacks > 1 else "") if c.applied
              else f"{c.name} is no longer {c.condition}" for c in card.conditions]
    if card.reactions:
        found.append("reactions: " + ", ".join(f"#{seq}" for seq in card.reactions))
    if not card.settled and not card.undone:  # an undone action is cut short by its undo, not left open
        found.append("not settled when the log ends")
    return found


class TextWriter:
    """Plain text, one event per line as the terminal shows it; each card's summary after its events."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def begin(self, title: str, dice: str) -> None:
        """The title and the dice."""
        title = visible(title)
        self.out.write(f"{title}\n{'=' * len(title)}\ndice: {visible(dice)}\n\n")

    def entry(self, entry: Entry) -> None:
        """A note's lines, a round's summary, or a card: its events, then its summary."""
        undone = "[undone] " if entry.undone else ""
        if isinstance(entry, RoundSummary):
            self.out.write(f"#{entry.seq:<4} {undone}\u2500\u2500 Round {entry.round} \u2500\u2500\n")
            for r in entry.rows:
                extra = "" if r.initiative is None else f", initiative {r.initiative}"
                row = _row(r.name, r.side, f"{r.hp}/{r.hp_max}", f"{r.will}/{r.will_max}", _held(r, entry.rows),
                           extra)
                self.out.write(f"        {visible(row)}{', ' + r.out if r.out else ''}\n")
            return
        lines = entry.lines if isinstance(entry, Note) else entry.story
        for line in lines:
            text = f"[undone] {line.text.strip()}" if entry.undone else line.text
            self.out.write(f"#{line.seq:<4} {visible(text)}\n")
        if isinstance(entry, Card):
            for said in card_lines(entry):
                self.out.write(f"      \u2502 {undone}{visible(said)}\n")

    def end(self, summary: StateSummary, chart: Chart, report: Report) -> None:
        """The end state, each combatant, and the audit's verdict."""
        rows = ["  " + _row(c.name, c.side, f"{c.hp}/{c.hp_max}", f"{c.will}/{c.will_max}",
                            _held(c, summary.combatants), f", {_out(c.left)}" if c.left else "")
                for c in summary.combatants]
        rerolls = "".join(f"{visible(line)}\n" for line in _notices(report))
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
    """Markdown: a heading and a table per round, a heading per card with its summary and its events, undone
    entries struck through."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def begin(self, title: str, dice: str) -> None:
        """The title and the dice."""
        self.out.write(f"# {_md(title)}\n\n*Dice: {_md(dice)}.*\n\n")

    def entry(self, entry: Entry) -> None:
        """A round's heading and table, a card's heading, summary and events, or a note as a list item."""
        if isinstance(entry, RoundSummary):
            heading = f"~~Round {entry.round}~~ (undone)" if entry.undone else f"Round {entry.round}"
            rows = "".join(f"| {_md(r.name)} | {_md(r.side)} | {'-' if r.initiative is None else r.initiative} | "
                           f"{r.hp}/{r.hp_max} | {r.will}/{r.will_max} | "
                           f"{_md(', '.join(_held(r, entry.rows) + ([r.out] if r.out else []))) or '-'} |\n"
                           for r in entry.rows)
            self.out.write(f"\n## {heading}\n\n| combatant | side | initiative | HP | Will | conditions |\n"
                           f"| --- | --- | --- | --- | --- | --- |\n{rows}\n")
        elif isinstance(entry, Card):
            headline = f"~~{_md(entry.headline)}~~ (undone)" if entry.undone else _md(entry.headline)
            self.out.write(f"\n#### {headline} `#{entry.seq}`\n\n"
                           + "".join(f"- {self._strike(entry, _md(line))}\n" for line in card_lines(entry))
                           + "- every event:\n"
                           + "".join(f"  - {self._strike(entry, _md(line.text.strip()))} `#{line.seq}`\n"
                                     for line in entry.story) + "\n")
        else:
            for line in entry.lines:
                text = _md(line.text.strip())
                text = f"**{text}**" if line.kind == "header" else text
                self.out.write(f"- {self._strike(entry, text)} `#{line.seq}`\n")

    @staticmethod
    def _strike(entry: Entry, text: str) -> str:
        return f"~~{text}~~ (undone)" if entry.undone else text

    def end(self, summary: StateSummary, chart: Chart, report: Report) -> None:
        """The end state as a table, and the audit's verdict."""
        rows = [f"| {_md(c.name)} | {_md(c.side)} | {c.hp}/{c.hp_max} | {c.will}/{c.will_max} | "
                f"{_md(', '.join([*_held(c, summary.combatants), *([_out(c.left)] if c.left else [])])) or '-'} |"
                for c in summary.combatants]
        self.out.write("\n## The end\n\n" + f"{_md(_ending(summary))}.\n\n"
                       "| combatant | side | HP | Will | conditions |\n| --- | --- | --- | --- | --- |\n"
                       + "".join(r + "\n" for r in rows)
                       + "".join(f"\n- {_md(line)}" for line in _notices(report))
                       + f"\n\n*{_md(_verdict(report))}.*\n")


# -- HTML ---------------------------------------------------------------------------------------------------------


#: A strong right-to-left character (Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, and their presentation forms).
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def isolated(text: str, names: Iterable[str]) -> Any:
    """``text`` as HTML with each right-to-left name among ``names`` in it isolated (``<bdi>``), so that two such
    names side by side keep their order and the punctuation after one stays in place ("رشيد, שירה" read in
    reverse order: a tester of non-English names); any other text as it is (escaped by the template, as every
    value). Names are isolated where they are written, in text: never in an attribute (a note being edited)."""
    rtl = sorted({n for n in names if n and _RTL.search(n)}, key=len, reverse=True)
    if not isinstance(text, str) or isinstance(text, Markup) or not any(n in text for n in rtl):
        return text
    parts = re.split("(" + "|".join(re.escape(n) for n in rtl) + ")", text)
    return Markup("").join(Markup("<bdi>{}</bdi>").format(visible(part)) if i % 2 else visible(part)
                           for i, part in enumerate(parts))


def _finalize(value: Any) -> Any:
    """Every value a template writes: user text with its control characters shown as escapes (markup the
    templates made themselves is left as it is)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


def environment(loader: jinja2.BaseLoader | None = None) -> jinja2.Environment:
    """The Jinja2 environment of the session-log templates (``card.html.j2``'s macros, ``chart.html.j2``,
    ``log.css``, the page ``session_log.html.j2``): autoescaped, strict about undefined names, every value shown
    with its control characters escaped. A server may pass a loader that also finds its own templates
    (``jinja2.ChoiceLoader([its loader, jinja2.PackageLoader("omen_replay")])``). A template is read once, as
    the code that fills it is imported once: a file changed under a running server is not read until it restarts
    (it read the new template with the old code's values, and every table answered 500: a tester)."""
    env = jinja2.Environment(loader=loader or jinja2.PackageLoader("omen_replay", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, finalize=_finalize, trim_blocks=True,
                             lstrip_blocks=True, auto_reload=False)
    env.globals["held"] = _held
    env.filters["isolated"] = isolated
    return env


class Polyline(msgspec.Struct, frozen=True, kw_only=True):
    """One combatant's line in a chart: its points (x, y, value, column) and how it is drawn."""

    id: str
    name: str
    colour: str
    dash: str
    points: tuple[tuple[float, float, int, str], ...]

    def coords(self) -> str:
        """The SVG ``points`` attribute."""
        return " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in self.points)


class ChartView(msgspec.Struct, frozen=True, kw_only=True):
    """A chart laid out for SVG: one resource (HP or Will) by round, ticks on both axes, a line per combatant."""

    id: str
    resource: str
    width: int
    height: int
    left: int
    top: int
    bottom: int
    right: int
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, int], ...]
    lines: tuple[Polyline, ...]


#: The most columns a chart has: beyond, its rounds are grouped in equal runs (a fight of 12,405 rounds drew 100,000
#: points and a table as wide, and the page's chart alone took more memory than the rest of the log).
MAX_COLUMNS = 60


def bucketed(chart: Chart, most: int = MAX_COLUMNS) -> tuple[Chart, int]:
    """``chart`` with at most ``most`` columns: its round columns grouped in equal runs when there are more than
    fit, each run's column named for its rounds (``rounds 1-215``) and holding the values at the start of its first
    round; and how many rounds a column holds (1: none grouped)."""
    rounds = [i for i, name in enumerate(chart.columns) if name.startswith("round ")]
    others = len(chart.columns) - len(rounds)
    if len(chart.columns) <= most or most - others < 1:
        return chart, 1
    size = -(-len(rounds) // (most - others))
    runs = {rounds[k]: rounds[k:k + size] for k in range(0, len(rounds), size)}
    keep = [i for i in range(len(chart.columns)) if i not in rounds or i in runs]

    def named(i: int) -> str:
        run = runs.get(i)
        if run is None or len(run) == 1:
            return chart.columns[i]
        first, last = chart.columns[run[0]].removeprefix("round "), chart.columns[run[-1]].removeprefix("round ")
        return f"rounds {first}-{last}"

    series = tuple(msgspec.structs.replace(s, hp=tuple(s.hp[i] for i in keep), will=tuple(s.will[i] for i in keep))
                   for s in chart.series)
    return Chart(columns=tuple(named(i) for i in keep), series=series), size


_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
_DASHES = ("", "6 3", "2 3", "8 3 2 3")


def chart_view(chart: Chart, resource: str, width: int = 480, height: int = 260) -> ChartView:
    """The layout of ``chart``'s ``resource`` (``hp`` or ``will``): x by column (start, each round, end), y from
    0 to the largest maximum, a tick every step that keeps the labels apart."""
    left, right, top, bottom = 44, 16, 16, 40
    columns = chart.columns or ("end",)
    peak: int = max([s.hp_max if resource == "hp" else s.will_max for s in chart.series] + [1])
    inner_w, inner_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + inner_w * (i / max(len(columns) - 1, 1))

    def y(value: int) -> float:
        return top + inner_h * (1 - max(value, 0) / peak)

    step = max(1, -(-len(columns) // 12))
    last = len(columns) - 1
    x_ticks = tuple((x(i), _tick(name)) for i, name in enumerate(columns)
                    if i == last or (i % step == 0 and (last - i) * 2 >= step))  # no label crowding the last
    y_step = max(1, -(-peak // 5))
    y_ticks = tuple((y(v), v) for v in range(0, peak + 1, y_step))
    lines = tuple(Polyline(id=s.id, name=s.name, colour=_COLOURS[i % len(_COLOURS)],
                           dash=_DASHES[(i // len(_COLOURS) + i) % len(_DASHES)],
                           points=tuple((x(j), y(v), v, columns[j]) for j, v in enumerate(getattr(s, resource))
                                        if v is not None))
                  for i, s in enumerate(chart.series))
    return ChartView(id=f"chart-{resource}", resource="HP" if resource == "hp" else "Will", width=width,
                     height=height, left=left, top=top, bottom=height - bottom, right=width - right,
                     x_ticks=x_ticks, y_ticks=y_ticks, lines=lines)


def _tick(column: str) -> str:
    """A column's name on the chart's axis: ``R3`` for round 3, and for a run of rounds its first (``rounds
    241-246``: ``R241``)."""
    if column.startswith("rounds "):
        return "R" + column.removeprefix("rounds ").split("-")[0]
    return column.replace("round ", "R")


class HtmlWriter:
    """One self-contained HTML page from the templates: the verdict, the chart by round and the end state at the
    top, then the timeline by round: a summary at each round's start, a card per action (each expands to its
    full explanation), notes between."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.env = environment()
        self.cards = self.env.get_template("card.html.j2").module
        # the timeline so far, in memory up to 1 MiB, then on disk; closed in end()
        self.body = tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+", encoding="utf-8")  # noqa: SIM115
        self.title, self.dice = "", ""
        self.names: Sequence[str] = ()  # the combatants' names met so far (:func:`render` shares the tally's list)
        self.rounds: list[tuple[str, int, bool]] = []  # each round's anchor, number and undone: for the links
        self.section = False

    def begin(self, title: str, dice: str) -> None:
        """The title and the dice (written at the end, above the chart)."""
        self.title, self.dice = title, dice

    def entry(self, entry: Entry) -> None:
        """A round's summary opens its section; a card or a note goes into the one open."""
        if isinstance(entry, RoundSummary):
            if self.section:
                self.body.write("</section>\n")
            self.rounds.append((entry.anchor, entry.round, entry.undone))
            self.body.write(str(self.cards.round_summary(entry)) + "\n")  # type: ignore[attr-defined]
            self.section = True
            return
        if not self.section:
            self.body.write(str(self.cards.before_rounds()) + "\n")  # type: ignore[attr-defined]
            self.section = True
        macro = self.cards.card if isinstance(entry, Card) else self.cards.note  # type: ignore[attr-defined]
        self.body.write(str(macro(entry, self.names)) + "\n")  # a right-to-left name isolated where text says it

    def end(self, summary: StateSummary, chart: Chart, report: Report) -> None:
        """The page: head, verdict, chart, end state, then the timeline kept so far, and the closing tags."""
        if self.section:
            self.body.write("</section>\n")
        self.body.seek(0)
        shown, grouped = bucketed(chart)
        page = self.env.get_template("session_log.html.j2").generate(
            title=self.title, dice=self.dice, summary=summary, ending=_ending(summary), verdict=_verdict(report),
            clean=report.clean, notices=_notices(report), rounds=self.rounds, chart=shown, grouped=grouped,
            views=[chart_view(shown, "hp"), chart_view(shown, "will")], timeline=self._timeline())
        for piece in page:
            self.out.write(piece)
        self.body.close()

    def _timeline(self) -> Iterator[Markup]:
        while chunk := self.body.read(1 << 16):
            yield Markup(chunk)  # written by the templates above, already escaped


WRITERS: dict[str, type[TextWriter] | type[MarkdownWriter] | type[HtmlWriter]] = {
    "text": TextWriter, "md": MarkdownWriter, "html": HtmlWriter}
