"""``replan=true`` where it cannot act on this instance (issue 53, item 6): said before the run.

The re-plan is one of the policies OASiS-LR's lookahead compares at each arrival batch
(:mod:`primaldual.oasis.lr.replan`), so without the lookahead (``lookahead=false``, the default of ``oasis-p``)
it never runs: that is refused with every parameter that cannot act, by the range table
(:data:`primaldual.simulation.parameter_ranges.NEEDS`). On an instance over ``REPLAN_CELLS``
job-slot-servers it is switched off by the scheduler itself; whether that happens depends on the instance, so
``run`` and ``compare`` say it on stderr before they run (``ratio``'s instances are generated in its workers:
each record's lookahead report counts the batches without a plan).
"""

from __future__ import annotations


def _settings(scheduler):
    """The scheduler's OASiS-LR settings if it has the re-plan switched on, else None."""
    settings = getattr(scheduler, "settings", None)
    return settings if getattr(settings, "replan", False) else None


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


__all__ = ["replan_note"]
