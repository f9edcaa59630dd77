"""OASiS-LR's admission rule against immediate blocks: a promise must leave the present slot to the density order.

**The rule.** With ``immediate_blocks = False`` (an option; the default is True) a job offered in slot ``t`` is promised
only if its reservation can start at ``t + 1`` or later: :meth:`primaldual.oasis.ledger.Ledger.find_block` (and the
re-pack's placement of the newcomer) search from :func:`first_block_slot`. A job whose only blocks start at
``t`` stays in the pending tier: it runs now in the order of present value per resource-time, like every
pending job, and is re-offered in a later slot, when its deadline is recomputed from that slot.

**Why** (``proofs/oasis-lr.md``, "Where the utility goes"). A block is placed as late as possible, so one that
must start in the slot of the offer has no slack at all: the promise is then a commitment to run the job at a
fixed width from now to its deadline, and for that whole time the execution serves it before every
unpromised job, however dense (:mod:`primaldual.oasis.lr.execution`). It buys the job nothing in the present
slot, where the density order would serve it anyway if it were dense enough, and it takes the slots a denser
job arriving during the block needs. On the design seeds (20-job ``small``, seeds 0-99) the instances where
OASiS-LR lost most against RRH were of this kind: a low-density job promised a block starting at its arrival,
and a job two to five times denser arriving one slot later and missing its utility (seeds 9 and 78: 0.76 and
0.71 of RRH's utility). A block that starts later leaves the present to the density order and only claims
slots that the ledger's later arrivals can still see as reserved when they are offered.

The rule only refuses admissions, so the promise invariant (``proofs/oasis-lr.md`` G1) is untouched.

**Default.** True for both variants. On fresh instances the rule (with the urgency order of
:mod:`primaldual.oasis.lr.order`) moved utility by less than the spread between seeds, and it made OASiS-LR's
runs slower (more jobs stay pending and are re-offered); ``proofs/oasis-lr.md``, "Why the rules are off by
default". ``oasis-p``'s bound (G3) is stated for the default.
"""

from __future__ import annotations

from primaldual.core.errors import InputError


def check_immediate_blocks(value) -> bool:
    """The ``immediate_blocks`` parameter: True by default (module docstring, "Default")."""
    if value is None:
        return True
    if not isinstance(value, bool):
        raise InputError(f"immediate_blocks: must be true or false, got {value!r}")
    return value


def first_block_slot(scheduler, slot: int) -> int:
    """The first slot a promise offered in ``slot`` may reserve: ``slot`` itself only if immediate blocks are
    allowed (module docstring)."""
    return slot if scheduler.immediate_blocks else slot + 1


__all__ = ["check_immediate_blocks", "first_block_slot"]
