"""``replan=true`` where it cannot act (issue 53, item 6): refused, or said, before the run.

The re-plan is one of the policies OASiS-LR's lookahead compares at each arrival batch
(:mod:`primaldual.oasis.lr.replan`), so without the lookahead (``lookahead=false``, the default of ``oasis-p``)
it never runs: a parameter that can do nothing is refused, naming it. On an instance over ``REPLAN_CELLS``
job-slot-servers it is switched off by the scheduler itself; whether that happens depends on the instance, so
``run`` and ``compare`` say it on stderr before they run (``ratio``'s instances are generated in its workers:
each record's lookahead report counts the batches without a plan).
"""

from __future__ import annotations

from primaldual.core.errors import InputError


def _settings(scheduler):
    """The scheduler's OASiS-LR settings if it has the re-plan switched on, else None."""
    settings = getattr(scheduler, "settings", None)
    return settings if getattr(settings, "replan", False) else None


def check_replan(name: str, scheduler, prefix: str = "") -> None:
    """Refuse ``replan=true`` on a scheduler whose lookahead is off (it would be echoed as set and do nothing);
    ``prefix`` is how the command names the scheduler's keys (``compare``: ``NAME.``, ``run``: none)."""
    settings = _settings(scheduler)
    if settings is not None and not settings.lookahead:
        raise InputError(f"--param {prefix}replan: true does nothing without the lookahead, which is off for {name} "
                         f"(the re-plan is one of the policies it compares); add --param {prefix}lookahead=true "
                         "or drop replan")


def replan_note(name: str, scheduler, instance) -> str | None:
    """The line saying the re-plan will not run on ``instance`` (over ``REPLAN_CELLS``), or None."""
    settings = _settings(scheduler)
    if settings is None:
        return None
    from primaldual.oasis.lr.replan import REPLAN_CELLS, replan_cells

    cells = replan_cells(instance, settings.replan_horizon)
    if cells <= REPLAN_CELLS:
        return None
    return (f"note: {name}: replan=true does nothing on this instance: {cells:,} job-slot-servers over the "
            f"re-plan's limit of {REPLAN_CELLS:,} (it runs without it)")


__all__ = ["check_replan", "replan_note"]
