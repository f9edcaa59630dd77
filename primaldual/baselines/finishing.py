"""What DRF, SRTF and Optimus share: the placement policy and the rule that a job which cannot finish is not run.

:class:`FinishingBaseline` holds the two parameters (``placement``, ``skip_unfinishable``), their record and the
report of the jobs passed over, and :meth:`FinishingBaseline.finishable` applies the rule of
:mod:`primaldual.baselines` ("Jobs that cannot finish are not run"): a job that could not finish by the horizon
even at its width ``w_i`` in every remaining slot (:func:`primaldual.simulation.placement.can_finish`) is left
out of the slot and named in the report. One vector call per slot.
"""

from __future__ import annotations

import numpy as np

from primaldual.simulation.placement import can_finish, check_placement
from primaldual.simulation.scheduler import OnlineScheduler


class FinishingBaseline(OnlineScheduler):
    """A baseline with ``placement`` (``first_fit`` or ``least_loaded``) and ``skip_unfinishable`` (True)."""

    def __init__(self, placement: str = "first_fit", skip_unfinishable: bool = True):
        self.placement = check_placement(placement)
        self.skip_unfinishable = bool(skip_unfinishable)

    def start(self, instance) -> None:
        super().start(instance)
        self.skipped: set[int] = set()

    def parameters(self) -> dict:
        return {"placement": self.placement, "skip_unfinishable": self.skip_unfinishable}

    def report(self) -> dict:
        return {"skipped": sorted(self.skipped)}

    def finishable(self, slot: int, active: np.ndarray, remaining: np.ndarray, width: np.ndarray) -> np.ndarray:
        """Which of ``active`` (with their ``remaining`` work and ``width``) may run in ``slot``: every one
        without the rule; with it, those that can still finish, the others recorded as skipped."""
        if not self.skip_unfinishable:
            return np.ones(active.shape[0], dtype=bool)
        keep = can_finish(slot, remaining, width, self.instance.horizon)
        self.skipped.update(int(i) for i in active[~keep])
        return keep


__all__ = ["FinishingBaseline"]
