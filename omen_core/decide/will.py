"""Deciding a defender's Will-conversion choice (C31): the damage lands where chosen, then the action goes on."""

from __future__ import annotations

from ..commands import ChooseWillConversion
from ..errors import RuleViolation
from ..events import WillConversionChosen
from ..state import AttackFrame, SaveFrame
from .attack import resume_branch
from .draft import Draft
from .effects import deal_damage, run_consequences
from .saves import save_branch_done, save_context

__all__ = ["choose_will_conversion"]


def choose_will_conversion(draft: Draft, cmd: ChooseWillConversion) -> None:
    """C31: the defender sends the offered damage to Will (what exceeds the Will left goes to HP) or to HP;
    the consequences after it follow in written order (C25), and the action settles."""
    draft.require("choose_will_conversion", rule="C31", why="no Will-conversion choice is open")
    frame = draft.state.pending
    assert frame is not None and frame.will_offer is not None
    offer = frame.will_offer
    if cmd.who != offer.who:
        raise RuleViolation("C31", f"the Will-conversion choice is {offer.who}'s, not {cmd.who}'s")
    draft.emit(WillConversionChosen(action=offer.action, who=cmd.who, convert=cmd.convert))
    deal_damage(draft, offer.action, offer.who, offer.terms, offer.damage_type, spell=offer.spell,
                source=offer.source, chosen=cmd.convert)
    frame = draft.state.pending
    if isinstance(frame, AttackFrame):
        resume_branch(draft, frame, offer.then)
    elif isinstance(frame, SaveFrame):
        called, resolution = frame.declaration, frame.resolution
        assert resolution is not None
        branch = called.effect.on_success if resolution.success else called.effect.on_failure
        if run_consequences(draft, save_context(called), branch, offer.then):
            save_branch_done(draft)
