"""What the commands print: a fight's state as a table, an audit's report, where a fight stands and the options
it offers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .console import escape, out, plain, say, stdout

if TYPE_CHECKING:
    from omen_core.options import Choice, DiceRoll, Offer, Options
    from omen_core.state import FightState
    from omen_replay.replay import StateSummary
    from omen_replay.verify import Report

__all__ = ["print_state", "report_text", "print_where", "print_options"]

def _report_undos(report: Report) -> None:

    from omen_replay.verify import PROVENANCE, REROLL

    for u in report.undone:
        state = f"redone at seq {u.redone_at}" if u.redone_at else "still undone"
        why = f" ({escape(u.reason)})" if u.reason else ""
        out.print(f"  undo at seq {u.seq}: seq {u.from_seq} to {u.to_seq}{why}, {state}")
    for note in report.notes:
        out.print(f"  [yellow]note:[/] {escape(note)}")
    for f in report.rerolls:
        out.print(f"  [yellow]{REROLL}:[/] {escape(f.what)}")
    for f in report.provenance:
        out.print(f"  [yellow]{PROVENANCE}:[/] seq {f.seq}: {escape(f.what)}")


def report_text(report: Report) -> None:

    from omen_replay.verify import PROVENANCE, REROLL, finding_words

    _report_undos(report)
    head = f"; head {report.head.seq}:{report.head.hash}" if report.head else ""
    if report.clean:
        decided = (f"{report.redecided} commands decided again" if report.redecided else "no recorded commands") \
            if not report.event_by_event else f"audited {report.audit}"  # schema version 1: docs/verify.md
        notices = [f"{len(found)} {kind} finding(s) listed above (--strict fails on them)"
                   for kind, found in ((PROVENANCE, report.provenance), (REROLL, report.rerolls)) if found]
        say(f"[green]verified[/] fight {report.fight_id!r}: {report.events} events, hash chain "
            f"intact, {decided}, every total recomputed; {report.seeded_words()}"
            + "".join(f"; {n}" for n in notices) + head)  # folded between words: the head whole, to witness
        return
    say(f"[red]{len(report.problems)} finding(s)[/] in fight {report.fight_id!r}{head}:")
    for f in report.problems:
        out.print(f"  {escape(finding_words(f))}")


def _describe_roll(roll: DiceRoll) -> str:
    dice = " + ".join(f"{d.pool} d{d.sides}" for d in roll.dice)
    return f"{roll.roller}'s {roll.purpose.replace('_', ' ')} ({dice})"


def print_where(found: Options, state: FightState | None = None) -> None:
    """Where the fight stands and what it waits for, in two or three lines; with the fight's ``state``, a deferred
    cost an action still in progress recorded says it is owed only if that action goes through (C24, C41)."""
    from .status import answer_costs, owed

    where = f"{found.phase}" + (f", round {found.round}" if found.round else "") + \
        (f", {found.turn}'s turn" if found.turn else "")
    say(f"[bold]{escape(found.fight_id)}[/] at seq {found.seq}: {escape(where)}; {found.dice} dice")
    if found.waiting is not None:
        w = found.waiting
        who = f"waiting for {', '.join(w.who)}" if w.who else "waiting"
        say(f"[yellow]{escape(who)}: {escape(w.title)} ({escape(w.rule)}), answer with "
                  f"{escape(' or '.join(w.answers))}; {escape(answer_costs(w, state))}[/]")
    gone = [f"{b.who} ({b.left})" for b in found.combatants if b.left is not None]
    if gone:
        say(f"out of the fight (C33): {escape(', '.join(gone))}")
    uses = [f"{b.who}'s {ability} {left}" for b in found.combatants for ability, left in b.uses.items()]
    if uses:
        say(f"uses left (C41): {escape(', '.join(uses))}")
    costs = ([f"{b.who}'s {cost}" for b in found.combatants for cost in owed(state, b.who)] if state is not None else
             [f"{b.who}'s {ability} (at the {moment.replace('_', ' ')})" for b in found.combatants
              for ability, _, moment in (pending.partition(": ") for pending in b.deferred)])
    if costs:
        say(f"deferred costs to pay (C41): {escape(', '.join(costs))}")


def print_options(found: Options, as_json: bool, state: FightState | None = None) -> None:
    """What the fight waits for and who may do what, as ``omen status`` prints it (``state``: the fight's, for the
    dice line of a Parry naming no weapon to name the weapon it uses)."""
    import msgspec

    from .status import odds_summary

    if as_json:
        stdout.write(msgspec.json.encode(found).decode() + "\n")
        return
    print_where(found, state)
    by_actor: dict[str | None, list[Offer]] = {}
    for offer in found.offers:
        by_actor.setdefault(offer.actor, []).append(offer)
    for actor, offers in by_actor.items():
        say(f"  [bold]{escape(actor or 'the GM')}[/]:", "    ")
        for offer in offers:
            shown = _choice_summary(offer)
            say(f"    {escape(offer.command)} [dim]({escape(offer.cost)}; {escape(offer.rule)})[/]"
                + (f" {escape(shown)}" if shown else ""), "      ")
            for line in [*_free_summary(offer), *_dice_summary(offer, state), *odds_summary(offer)]:
                say(f"      [dim]{escape(line)}[/]", "        ")
    say(f"head {found.head}")


def _free_summary(offer: Offer) -> list[str]:
    """The arguments an offer leaves to the caller (``give`` one it is refused without, its ``required``, else
    ``may give``), and the offer's note (what its choices show)."""
    return [*(f"{'give' if a.required else 'may give'} {a.name}: {a.takes}" for a in offer.free),
            *([f"note: {offer.note}"] if offer.note else [])]


#: The most dice lines an offer prints, a line per choice (``omen status --json`` lists each).
DICE_LINES = 8


def _dice_summary(offer: Offer, state: FightState | None = None) -> list[str]:
    """The dice an offer's choices roll: one line if they all roll the same, else a line per choice (up to
    :data:`DICE_LINES`), named by the arguments that tell the choices apart. Two choices whose dice read alike
    still get a line each: a die's size does not say whose attribute it is (a Parry with a mace rolls STR, a Block
    RES), and no choice is left for the reader to find under another's name: a Parry naming no weapon has its own
    line too, the dice of the weapon it uses, named (:func:`_parry_named`)."""
    rolled = [(c.args, _rolls(c), _parry_named(c, state)) for c in offer.choices]
    if len({text for _, text, _ in rolled}) <= 1:
        return [f"dice: {rolled[0][1]}"] if rolled and rolled[0][1] else []
    varying = _varying(offer)
    lines = [f"dice ({_short_args(args, varying)}): {text or 'none'}{named}"
             for args, text, named in rolled[:DICE_LINES]]
    more = len(rolled) - DICE_LINES
    return lines + ([f"dice: {more} more choice(s) (omen status --json lists each)"] if more > 0 else [])


def _rolls(choice: Choice) -> str:
    """The dice a choice rolls, then those it may roll, in words."""
    from .status import maybe_said

    return "; ".join([*(_describe_roll(r) for r in choice.dice),
                      *(["maybe " + maybe_said(choice.may_roll, lambda rolls: "; ".join(_describe_roll(r)
                                                                                          for r in rolls))]
                        if choice.may_roll else [])])


def _parry_named(choice: Choice, state: FightState | None) -> str:
    """For a Parry naming no weapon, the weapon it uses, in words: the first weapon in hand that may parry the
    attack (C9, C35; docs/rulings.md, "A Parry may use any weapon in hand"), as the engine picks it and ``options()``
    rolls its dice; empty for any other choice, or without the fight's state."""
    if state is None or choice.args.get("defense") != "parry" or choice.args.get("weapon"):
        return ""
    from omen_core.derive import parry_weapon
    from omen_core.state import AttackFrame

    defender = str(choice.args.get("defender", ""))
    fighter = state.combatants.get(defender)
    if fighter is None:
        return ""
    frame = state.pending
    kind = frame.declaration.kind if isinstance(frame, AttackFrame) and frame.declaration.target == defender else None
    weapon = parry_weapon(fighter.sheet, None, fighter.wielding, kind)
    return f", with {weapon.id}: the first weapon in hand that may parry (C9, C35)" if weapon is not None else ""


def _flat(args: dict[str, Any]) -> dict[str, Any]:
    """A choice's arguments with those of an object argument one level down (``effect.action_cost``)."""
    return {f"{k}.{inner}" if isinstance(v, dict) and k == "effect" else k: w
            for k, v in args.items() for inner, w in (v.items() if isinstance(v, dict) and k == "effect"
                                                      else [("", v)])}


def _varying(offer: Offer) -> set[str]:
    """The arguments (``effect``'s one level down) whose values differ between the offer's choices."""
    import json

    flat = [_flat(c.args) for c in offer.choices]
    keys = {k for f in flat for k in f}
    return {k for k in keys if len({json.dumps(f.get(k), sort_keys=True) for f in flat}) > 1}


def _short_args(args: dict[str, Any], varying: set[str]) -> str:
    """A choice's arguments that tell it apart from the offer's other choices, in a few words (``defense=dodge``,
    ``effect.action_cost=0``, JSON for anything but text)."""
    import json

    flat = _flat(args)
    keys = [k for k in flat if k in varying] + sorted(varying - set(flat))  # one left out: its default
    shown = [f"{k}={v if isinstance(v, str) else json.dumps(v, separators=(',', ':'))}"
             for k, v in ((k, flat.get(k, "(default)")) for k in keys)]
    return ", ".join(shown) or "as shown"


def _choice_summary(offer: Offer) -> str:
    """The arguments an offer's choices vary, each with its values: ``target: bo | kael; weapon: axe``."""
    import json

    values: dict[str, list[str]] = {}
    keys = {key for choice in offer.choices for key in choice.args}
    for choice in offer.choices:
        for key in sorted(keys - set(choice.args)):  # left out: the field's default
            if key != "effect" and "(default)" not in values.setdefault(key, []):
                values[key].append("(default)")
        for key, value in choice.args.items():
            if key == "effect" or (key in ("attacker", "who", "defender", "caller") and value == offer.actor):
                continue
            shown = (value.get("skill") or value.get("attribute") or json.dumps(value)) if isinstance(value, dict) \
                else value
            text = json.dumps(shown) if not isinstance(shown, str) else shown
            values.setdefault(key, [])
            if text not in values[key]:
                values[key].append(text)
    # every value the offer lists (at most MAX_LISTED combatants, 12): a list cut at 10 with "..." hid two listed
    # ones beside the note counting those not listed ("9 more"; a GM tester's 22 combatants)
    return "; ".join(f"{k}: {' | '.join(v[:MAX_SHOWN])}"
                     + (f" | ... ({len(v) - MAX_SHOWN} more)" if len(v) > MAX_SHOWN else "") for k, v in values.items())


#: The most values of one argument an ``omen status --all`` line shows (a combatant's list holds at most 12).
MAX_SHOWN = 16


#: Store URLs that keep nothing once the command ends.
KEPT_NOWHERE = frozenset({"memory:", "sqlite::memory:"})


def witness_hint(log: str | None, fight: str | None = None) -> str:
    """How to witness a head, as a shell line naming the log (and ``--fight`` where one was named), or, for a log
    kept nowhere (``memory:``), that there is none to witness (``omen run`` without ``--log``: a docs tester was
    told to verify a log that was not written)."""
    import shlex

    if log in KEPT_NOWHERE:
        return "nothing to witness: the log is kept nowhere"
    named = shlex.quote(log) if log is not None else "LOG"
    return f"witness it: omen verify {named}" + (f" --fight {shlex.quote(fight)}" if fight else "") + " --head "


def print_state(summary: StateSummary, as_json: bool, log: str | None = None, fight: str | None = None) -> None:
    """The state summary as a table and the head (``as_json``: the summary as JSON); the head's line says how to
    witness it in ``log`` (:func:`witness_hint`)."""

    import msgspec

    if as_json:
        stdout.write(msgspec.json.encode(summary).decode() + "\n")
        return
    from rich.table import Table

    where = f"round {summary.round}, {summary.turn}'s turn" if summary.turn else f"round {summary.round}"
    step = f", the action in progress: {summary.action_step}" if summary.action_step != "idle" else ""  # (the
    # JSON and --steps said it; the table did not: a maintainer tester stepping to a seq in a window)
    status = (f"ended: {summary.end_reason}" + (f" ({summary.end_side})" if summary.end_side else "")
              if summary.ended else f"{summary.phase}, {where}{step}")
    table = Table(title=plain(f"{summary.title or summary.fight_id} at seq {summary.seq}: {status}"))
    for column in ("combatant", "side", "HP", "Will", "Bonus Actions", "conditions"):
        table.add_column(column)
    from omen_replay.replay import conditions_words

    names = {c.id: c.name for c in summary.combatants}
    for c in summary.combatants:
        conditions = ", ".join(conditions_words(c.conditions, c.remaining, c.until, names)) or "-"
        if c.left is not None:
            conditions = f"out of the fight: {c.left} (C33)" + (f"; {conditions}" if conditions != "-" else "")
        table.add_row(plain(c.name), plain(c.side), f"{c.hp}/{c.hp_max}", f"{c.will}/{c.will_max}",
                      str(c.bonus_actions), plain(conditions))
    out.print(table)
    if summary.initiative_order:
        out.print(f"initiative order: {escape(', '.join(summary.initiative_order))}")
    head = f"{summary.seq}:{summary.hash}"
    if summary.seq:
        hint = witness_hint(log, fight)
        said = f"{hint}{head}" if hint.endswith("--head ") else hint
        say(f"head {head}  [dim]({escape(said)})[/]")  # SEQ:HASH never parted
    else:
        out.print("head 0: before the first event (nothing to witness)")
