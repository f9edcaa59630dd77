"""What DRF, SRTF and Optimus share: the placement policy, the rule that a job which cannot finish is not run, and
(DRF and Optimus) the placing of one worker with the PSs it adds.

:class:`FinishingBaseline` holds the two parameters (``placement``, ``skip_unfinishable``), their record and the
report of the jobs passed over, and :meth:`FinishingBaseline.finishable` applies the rule of
:mod:`primaldual.baselines` ("Jobs that cannot finish are not run"): a job that could not finish by the horizon
even at its width ``w_i`` in every remaining slot (:func:`primaldual.simulation.placement.can_finish`) is left
out of the slot and named in the report. One vector call per slot.

:func:`place_bundle` places one worker and its added PSs (DRF's bundle, Optimus's unit) and says which step
failed; each caller keeps its own way of giving a placed worker back, as their schedules depend on it.
"""

from __future__ import annotations

import numpy as np

from primaldual.simulation.placement import FreeCapacity, can_finish, check_placement, place_units
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


def place_bundle(free: FreeCapacity, job, added_ps: int, placement: str, servers=None):
    """Place one worker of ``job`` (on the worker servers of the mask ``servers``, if given: one GPU type) and
    ``added_ps`` of its PSs into ``free``: ``(worker, ps, before)``, the per-server counts and the worker pool as
    it was. ``worker`` None: no worker fits (``free`` untouched); ``ps`` None: the PSs do not fit and the worker
    stays taken, for the caller to give back its own way."""
    before = free.worker.copy()
    worker = place_units(free.worker, job.worker_demand, 1, placement, servers)
    if worker is None:
        return None, None, before
    return worker, place_units(free.ps, job.ps_demand, added_ps, placement), before


__all__ = ["FinishingBaseline", "place_bundle"]
