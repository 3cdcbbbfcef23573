"""Deciding skill and attribute checks: static and contested (C1, C2, C16, C29)."""

from __future__ import annotations

from ..commands import CheckSpec, Contest, StaticCheck
from ..derive import check_total
from ..errors import RuleViolation, otherwise_said
from ..events import (
    ContestResolved,
    PoolTag,
    RollPurpose,
    RollTotal,
    StaticCheckResolved,
)
from ..rules.checks import contest_winner, static_outcome
from .draft import Draft
from .windows import Resume, nothing_rolled, open_moment, settle_pending

__all__ = ["static_check", "contest", "roll_side", "RESUMES"]


def static_check(draft: Draft, cmd: StaticCheck) -> None:
    """One roll against a difficulty; a tie is recorded as a tie (C16). One at 0 HP makes none (C36: it makes no
    action); Incapacitated and Paralysed combatants are not refused it."""
    draft.require("roll_check")
    draft.able(cmd.check.who, "make a check")
    side = roll_side(draft, cmd.check, "check", "check")
    outcome = static_outcome(side.total, cmd.difficulty)
    draft.emit(StaticCheckResolved(check=side, difficulty=cmd.difficulty, outcome=outcome))
    open_moment(draft, "check.resolved", side.roller, outcome="success" if outcome == "success" else "failure")


def contest(draft: Draft, cmd: Contest) -> None:
    """The initiator rolls first, then the other side (C29); ties go to the defender (C16). One at 0 HP starts
    none (C36: it makes no action) but may still be contested, as it may still be attacked."""
    draft.require("roll_check")
    if cmd.initiator.who == cmd.defender.who:
        raise RuleViolation("C16", f"{cmd.initiator.who!r} cannot contest against itself")
    draft.able(cmd.initiator.who, "start a contest")
    draft.present(cmd.defender.who, "be contested")
    ini = roll_side(draft, cmd.initiator, "check", "check")
    dfd = roll_side(draft, cmd.defender, "check", "check")
    winner = ini.roller if contest_winner(ini.total, dfd.total) == "initiator" else dfd.roller
    draft.emit(ContestResolved(initiator=ini, defender=dfd, winner=winner, tie=ini.total == dfd.total))
    open_moment(draft, "check.resolved", ini.roller, other=dfd.roller,
                outcome="success" if winner == ini.roller else "failure")


#: The hook point of a check: nothing rolled matters to what answers it, and the moment settles once its decision
#: points have closed (C38).
RESUMES: dict[str, Resume] = {"check.resolved": (nothing_rolled, settle_pending)}


def roll_side(draft: Draft, spec: CheckSpec, purpose: RollPurpose, tag: PoolTag, about: str = "") -> RollTotal:
    """Roll one die for one side of a check or save and total it by the roll primitive (C1, C2); ``about`` as
    :meth:`Draft.roll` says."""
    sheet = draft.sheet(spec.who)
    attribute, level = _attribute_and_level(draft, spec)
    rolled = draft.roll(purpose, spec.who, [(tag, sheet.attributes[attribute].sides)], about=about)
    return check_total(draft.state, spec.who, attribute, spec.skill, level, rolled, spec.modifiers)


def _attribute_and_level(draft: Draft, spec: CheckSpec) -> tuple[str, int]:
    """A skill roll uses the skill's attribute and level (C2); one the sheet lacks rolls at level 0
    with the ruleset's default attribute (C2 defaults); an attribute check has no level (C1)."""
    if (spec.skill is None) == (spec.attribute is None):
        raise RuleViolation("C1", "name either a skill or an attribute to roll, not both or neither")
    if spec.attribute is not None:
        return spec.attribute, 0
    assert spec.skill is not None
    sheet = draft.sheet(spec.who)
    skill = sheet.skills.get(spec.skill)
    if skill is not None:
        return skill.attribute, skill.level
    default = draft.ruleset.skill_attributes.get(spec.skill)
    if default is not None:
        return default, 0
    names = sorted({*sheet.skills, *draft.ruleset.skill_attributes})
    raise RuleViolation("C2", f"{sheet.id!r} has no skill {spec.skill!r} and the ruleset gives it "
                              f"no default attribute (skills: {', '.join(names) or 'none'}"
                              f"{otherwise_said(spec.skill, names)})")
