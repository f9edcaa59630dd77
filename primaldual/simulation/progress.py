"""How far each job's work has got in the simulator, on one GPU type or several (:mod:`primaldual.core.gpu_types`).

**Homogeneous** (``cluster.worker_types`` None): the remaining work is ``V_i`` minus the worker-slots supplied so
far (less ``F`` of them in a slot that restarts), a float; the job completes when it is at most
:data:`WORK_TOLERANCE`; schedulers read ``ceil(remaining - tol)``. This is the simulator's original arithmetic,
operation for operation, so homogeneous runs give the same floats as before.

**Heterogeneous**: a job's workers in one slot are all of one type ``g`` (the slot rules refuse a mix), and a
worker-slot on ``g`` does the fraction ``1 / W_i^g`` of the job (eq. (2), heterogeneous). The simulator keeps,
per job and type, the worker-slots supplied there (``S_i^g``, less ``F`` of a slot's workers on a restart; a
change of type is a change of placement, so it is a restart) and the done fraction
``d_i = sum_g S_i^g / W_i^g``, computed in the verifier's own order of operations (per type, then summed over
types); the job completes when ``d_i >= 1 - 1e-9``, the verifier's relative tolerance. Without restart costs
``S_i^g`` is exactly the verifier's per-type sum, so every completed job passes the verifier's eq. (2); with
them ``S_i^g`` is smaller and rounding is monotone, so it passes all the more.

What schedulers read (:class:`~primaldual.simulation.scheduler.SlotState`): ``remaining_fraction[i] = 1 - d_i``
(at least 0), and ``remaining_work[i] = ceil((1 - d_i) W_i^fastest - tol)``, at least 1 for a job not yet
complete: the worker-slots still needed **on the job's fastest type**, so a type-unaware scheduler reads the
same kind of number as on one type (a lower bound on what any mix of types needs). On type ``g`` a job needs
:func:`needed_on` worker-slots. Cost: O(n G) per slot for ``n`` jobs run, O(I G) to report the state.
"""

from __future__ import annotations

import numpy as np

#: Remaining work at or below this counts as done (fractional work under restart costs; homogeneous runs).
WORK_TOLERANCE = 1e-9
#: The verifier's relative tolerance on the done fraction of a heterogeneous job (``primaldual.core.verify``).
FRACTION_TOLERANCE = 1e-9


class Progress:
    """Each job's remaining work; :meth:`apply` records a slot's supplied worker-slots and says who completed."""

    def __init__(self, instance):
        self.heterogeneous = instance.cluster.worker_types is not None
        if not self.heterogeneous:
            self.remaining = np.array(instance.work_units, dtype=float)
            return
        self.work = np.asarray(instance.work_by_type, dtype=float)  # (I, G)
        self.fastest = self.work.min(axis=1)
        self.type_of_server = np.asarray(instance.cluster.worker_type_index)
        self.supplied = np.zeros_like(self.work)  # S_i^g
        self.done = np.zeros(self.work.shape[0])  # d_i, recomputed for the jobs of each slot

    def _update_done(self, jobs: np.ndarray) -> None:
        """``d_i`` of the given jobs, each a 1-D sum over its types exactly as the verifier computes it."""
        for i in jobs.tolist():
            self.done[i] = float((self.supplied[i] / self.work[i]).sum())

    def remaining_work(self) -> np.ndarray:
        """What ``SlotState.remaining_work`` holds (module docstring), integers."""
        if not self.heterogeneous:
            return np.maximum(np.ceil(self.remaining - WORK_TOLERANCE), 0).astype(np.int64)
        fraction = self.remaining_fraction()
        needed = np.maximum(np.ceil(fraction * self.fastest - WORK_TOLERANCE), 0).astype(np.int64)
        return np.where(fraction > 0, np.maximum(needed, 1), 0)

    def remaining_fraction(self) -> np.ndarray | None:
        """``1 - d_i``, 0 for a completed job; None on a homogeneous instance."""
        if not self.heterogeneous:
            return None
        done = self.done
        return np.where(done >= 1.0 - FRACTION_TOLERANCE, 0.0, np.maximum(1.0 - done, 0.0))

    def apply(self, jobs: np.ndarray, workers: np.ndarray, supplied: np.ndarray) -> np.ndarray:
        """Record ``supplied[m]`` worker-slots for job ``jobs[m]`` (its ``workers[m]`` per server, all of one type
        on a heterogeneous cluster); returns, per row, whether the job's work is now done."""
        if not self.heterogeneous:
            self.remaining[jobs] -= supplied
            return self.remaining[jobs] <= WORK_TOLERANCE
        rows = np.flatnonzero(workers.any(axis=1))
        types = self.type_of_server[workers[rows].argmax(axis=1)]  # the row's one type
        np.add.at(self.supplied, (jobs[rows], types), supplied[rows])
        self._update_done(jobs)
        return self.done[jobs] >= 1.0 - FRACTION_TOLERANCE


def needed_on(state, instance, i: int, g: int) -> int:
    """Worker-slots job ``i`` still needs if it runs on type ``g`` only: ``ceil(remaining_fraction W_i^g - tol)``,
    at least 1 while it is not complete; ``state.remaining_work[i]`` on a homogeneous instance."""
    if state.remaining_fraction is None:
        return int(state.remaining_work[i])
    fraction = float(state.remaining_fraction[i])
    if fraction <= 0:
        return 0
    return max(int(np.ceil(fraction * float(instance.work_by_type[i, g]) - WORK_TOLERANCE)), 1)


__all__ = ["FRACTION_TOLERANCE", "Progress", "WORK_TOLERANCE", "needed_on"]
