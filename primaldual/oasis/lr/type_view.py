"""OASiS-LR on several GPU types (issue 64): each job is **pinned** to one type, and counts its work there.

**Method.** A job's work on type ``g`` is ``W_i^g`` worker-slots (:mod:`primaldual.core.gpu_types`), and its workers
in one slot are all of one type. OASiS-LR **pins** job ``i`` to one type ``g_i`` the first time it runs (the type
where its first placement progresses most, :mod:`primaldual.oasis.lr.type_rule`) or is promised a block (the
block's type), and counts its work there: the remaining work is ``f_i W_i^{g_i}`` (``f_i`` the simulator's
remaining fraction, :meth:`TypeView.ceiling`), and every placement of the job in a slot (its growth, its block)
is on ``g_i``'s worker servers only. A pending job is offered on every type with servers, at its work there
(:meth:`TypeView.work_on`, ``f_i W_i^g``; :func:`primaldual.oasis.lr.admission.typed_answer`); promised on
another type, it is pinned there (:func:`pin`), which the simulator charges as a restart like any change of
placement. A job not yet pinned has never run (``f_i = 1``): it is carried at its fastest type's work.

**Why pinned, not a type per slot.** Letting an unpromised job take its best type afresh every slot is what the
type-aware growth could do, but it earned less (``paper`` with ``v100:2,p100:2,k80:2``, seeds 100-102: 4,977
against 5,029 pinned; ``small`` seeds 100-109: 1,096 both; far less on the Philly weeks of
``docs/measurements.md``, "OASiS-LR on several types"). A likely reason, not isolated: a job kept on its type
keeps its place in the growth order, where one that moves is re-ranked each slot by work counted on another type.

**Correctness.** A block is one type's placement; its supply ``k D`` (less one restart) is counted in that type's
worker-slots against ``ceil(f_i W_i^g - 1e-9)`` (the simulator's :func:`primaldual.simulation.progress.needed_on`),
so a promise checked by :func:`primaldual.oasis.lr.execution.check_promises` is kept on types as on one type
(``proofs/oasis-lr.md``, "On several GPU types"). A pinned job never changes type, so no change of type is ever a
restart the run does not count.

**Not claimed.** A pinned job moves to a faster type that frees up later only if it is promised a block there;
the forecast's fluid model pools the types' capacity (:mod:`primaldual.oasis.lr.forecast`).

**Cost.** ``O(I G)`` once per run; per offer, for each type, a copy of the free worker amounts with the other
types' rows zeroed (``O(T H R)``) and the one-type offer on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.oasis.lr.blocks import WORK_EPSILON, Reserved
from primaldual.simulation.placement import type_widths


@dataclass(frozen=True, eq=False)
class TypeView:
    """The per-run facts of the types (module docstring); built only on an instance with GPU types."""

    #: Each worker server's type (H,).
    server_type: np.ndarray
    #: ``W_i^g`` (I, G).
    work: np.ndarray
    #: The most workers job ``i`` can run on type ``g``'s empty servers (:func:`type_widths`), (I, G).
    widths: np.ndarray
    #: Per job, the types with servers, fastest first (ties: the lower index).
    tried: tuple[tuple[int, ...], ...]
    #: ``tried`` as an (I, G) array, -1 after each job's last type (what the slot's growth reads).
    ranked: np.ndarray

    @classmethod
    def of(cls, instance) -> "TypeView | None":
        cluster = instance.cluster
        if cluster.worker_types is None:
            return None
        server_type = np.asarray(cluster.worker_type_index, dtype=np.int64)
        work = np.asarray(instance.work_by_type, dtype=float)
        present = set(server_type.tolist())
        tried = tuple(tuple(int(g) for g in np.argsort(row, kind="stable") if int(g) in present) for row in work)
        ranked = np.full(work.shape, -1, dtype=np.int64)
        for i, row in enumerate(tried):
            ranked[i, :len(row)] = row
        return cls(server_type, work, type_widths(instance), tried, ranked)

    def fastest(self) -> np.ndarray:
        """Per job, its fastest type with servers."""
        return np.array([row[0] for row in self.tried], dtype=np.int64)

    def ceiling(self, pinned: np.ndarray, fraction: np.ndarray) -> np.ndarray:
        """The remaining work the simulator reports, in each job's pinned type's worker-slots (its fastest type's
        while unpinned): ``f_i W_i^g``, not rounded (the run rounds as the simulator's ``needed_on``)."""
        types = np.where(pinned >= 0, pinned, self.fastest())
        return np.asarray(fraction, dtype=float) * self.work[np.arange(self.work.shape[0]), types]

    def work_on(self, state, i: int, gpu_type: int) -> float:
        """Job ``i``'s work left counted on ``gpu_type``: its own figure on its own type, else ``f_i W_i^g`` with
        ``f_i`` its figure over its type's ``W_i`` (1 while unpinned: it never ran)."""
        own = int(state.pinned[i])
        if own == gpu_type:
            return float(state.work_left[i])
        fraction = 1.0 if own < 0 else float(state.work_left[i]) / float(self.work[i, own])
        return fraction * float(self.work[i, gpu_type])

    def growth_work(self, state, jobs: np.ndarray) -> np.ndarray:
        """A growing job's work: its own once pinned, else its slowest type's (where it may land)."""
        return np.where(state.pinned[jobs] >= 0, state.work_left[jobs], self.work[jobs].max(axis=1))

    def free_on(self, worker_free: np.ndarray, gpu_type: int) -> np.ndarray:
        """``worker_free`` (T, H, R) with the rows of every other type's servers zeroed: no unit fits there."""
        out = worker_free.copy()
        out[:, self.server_type != gpu_type] = 0.0
        return out

    def reserved_on(self, reserved: Reserved, gpu_type: int) -> Reserved:
        """The ledger's arrays with the other types' worker capacity zeroed, so a block search finds none there."""
        capacity = reserved.worker_capacity.copy()
        capacity[self.server_type != gpu_type] = 0.0
        return reserved._replace(worker_capacity=capacity)


def pin(view: TypeView, state, i: int, gpu_type: int) -> None:
    """Count job ``i``'s work on ``gpu_type`` from now (:meth:`TypeView.work_on`; nothing changes on its own
    type)."""
    if int(state.pinned[i]) == gpu_type:
        return
    state.work_left[i] = view.work_on(state, i, gpu_type)
    state.pinned[i] = gpu_type
    state.remaining[i] = max(int(np.ceil(state.work_left[i] - WORK_EPSILON)), 0)


def pin_placed(view: TypeView, state, out: dict) -> None:
    """Count each job of the slot's allocations ``out`` on the type of its workers (before the slot's work is
    accounted). A job holding a block only ever runs on the block's type, so only jobs without one move."""
    for i, allocation in out.items():
        if allocation.workers.any():
            pin(view, state, i, int(view.server_type[int(np.argmax(allocation.workers > 0))]))


__all__ = ["TypeView", "pin", "pin_placed"]
