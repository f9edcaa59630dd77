"""OASiS-LR on several GPU types (issue 64): each job is **pinned** to one type, and counts its work there.

**Method.** A job's work on type ``g`` is ``W_i^g`` worker-slots (:mod:`primaldual.core.gpu_types`), and its workers
in one slot are all of one type. OASiS-LR pins job ``i`` to one type ``g_i`` the first time it is promised a block
(the type of that block) or runs (the type its first placement found room on,
:mod:`primaldual.oasis.lr.type_rule`), and keeps it there for the rest of the run. From then on the run's one-type
arithmetic holds as it is, in ``g_i``'s worker-slots: the remaining work is ``f_i W_i^{g_i}`` (``f_i`` the
simulator's remaining fraction, :func:`ceiling`), every placement of the job (offers, blocks, re-packs, growth) is
on ``g_i``'s worker servers only, and a worker-slot there does ``1 / W_i^{g_i}`` of the job, as the simulator and
the verifier count it. A job not yet pinned has never run (``f_i = 1``): it is carried at its fastest type's work,
an offer tries each type with servers (:func:`primaldual.oasis.lr.admission.typed_answer`) and a pin sets its
work to ``W_i^g`` exactly (:func:`pin`).

**Correctness.** A block is one type's placement; its supply ``k D`` (less one restart) is counted in that type's
worker-slots against ``ceil(f_i W_i^g - 1e-9)`` (the simulator's :func:`primaldual.simulation.progress.needed_on`),
so a promise checked by :func:`primaldual.oasis.lr.execution.check_promises` is kept on types as on one type
(``proofs/oasis-lr.md``, "On several GPU types"). A pinned job never changes type, so no change of type is ever a
restart the run does not count.

**Not claimed.** A pinned job may not move to a faster type that frees up later; the forecast's fluid model pools
the types' capacity (:mod:`primaldual.oasis.lr.forecast`).

**Cost.** ``O(I G)`` once per run; per offer on a pinned job a copy of the free worker amounts with the other
types' rows zeroed (``O(T H R)``), on an unpinned one that for each type.
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

    def growth_work(self, pinned: np.ndarray, work_left: np.ndarray, jobs: np.ndarray) -> np.ndarray:
        """A growing job's work: its own, or unpinned its slowest type's (where it may land)."""
        return np.where(pinned[jobs] >= 0, work_left[jobs], self.work[jobs].max(axis=1))

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
    """Pin unpinned job ``i`` (never run: all its work is left) to ``gpu_type``: its work is ``W_i^g`` from now."""
    state.pinned[i] = gpu_type
    state.work_left[i] = view.work[i, gpu_type]
    state.remaining[i] = max(int(np.ceil(state.work_left[i] - WORK_EPSILON)), 0)


def pin_placed(view: TypeView, state, out: dict) -> None:
    """Pin every unpinned job of the slot's allocations ``out`` to the type of its workers (before the slot's
    work is accounted)."""
    for i, allocation in out.items():
        if state.pinned[i] < 0 and allocation.workers.any():
            pin(view, state, i, int(view.server_type[int(np.argmax(allocation.workers > 0))]))


__all__ = ["TypeView", "pin", "pin_placed"]
