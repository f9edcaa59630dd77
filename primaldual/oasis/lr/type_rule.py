"""Gavel's one-type rule in OASiS-LR's slot plan (:func:`primaldual.oasis.lr.reference.grow_plan`), as plain loops
compiled with the rest of the slot (:mod:`primaldual.oasis.lr.reference` lists them among its functions).

On several GPU types a job's workers in one slot must all be of one type (:mod:`primaldual.core.gpu_types`).
OASiS-LR pins each job to one type the first time it runs or is promised a block
(:mod:`primaldual.oasis.lr.type_view`), so the growth of a pinned job may only use its type's worker servers, and
a job not yet pinned takes the type where it progresses most in the slot, the workers that fit there over its
work on that type (:func:`choose_type`; Gavel's heterogeneity-aware rule, where the type-unaware baselines take
the first server with room, :mod:`primaldual.baselines.rrh`: a job pinned where it is slow stays slow for the
rest of the run). The growth's loops are the one-type loops unchanged:
before a job grows, the free amounts of the other types' worker servers are **hidden** (set to :data:`HIDDEN`, 0:
not one unit of a positive demand fits there, while a placement with no unit there still fits), and restored
after it. A unit is only ever
taken from a server of the job's type, so restoring the other rows from the saved copy is exact.

**Cost** per growing job on several types: ``O(H R)`` to choose its type, save, hide and restore; nothing on one
type (the plan does not call these there).
"""

from __future__ import annotations

import numpy as np

from primaldual.dual.reference import units_that_fit

#: The free amount a hidden worker server shows. Not a negative number: ``fits`` checks every server, also those
#: where a placement holds no unit, and a kept placement of the job's own type must still fit.
HIDDEN = 0.0


def choose_type(free_worker: np.ndarray, server_type: np.ndarray, demand: np.ndarray, pinned: int,
                ranked: np.ndarray, work: np.ndarray, most: int) -> int:
    """The type a job's growth may use: ``pinned`` if its type is fixed (>= 0), else, of its ``ranked`` types
    (fastest first, -1 ends the list), the one where it progresses most in the slot: the workers that fit there
    (at most ``most``, PSs aside: their pool is shared by every type) over its work ``work[g]`` on that type
    (ties: the faster type); -1 if not one worker fits anywhere."""
    if pinned >= 0:
        return pinned
    best, best_rate = -1, 0.0
    for k in range(ranked.shape[0]):
        gpu_type = ranked[k]
        if gpu_type < 0:
            break
        room = 0
        for s in range(free_worker.shape[0]):
            if server_type[s] == gpu_type and room < most:
                room += units_that_fit(free_worker, s, demand, most)
        rate = min(room, most) / work[gpu_type]
        if rate > best_rate:
            best, best_rate = gpu_type, rate
    return best


def hide_other_types(free_worker: np.ndarray, server_type: np.ndarray, gpu_type: int, saved: np.ndarray) -> None:
    """Save ``free_worker`` into ``saved`` and hide the rows of every server not of ``gpu_type``."""
    saved[:] = free_worker
    for s in range(free_worker.shape[0]):
        if server_type[s] != gpu_type:
            for r in range(free_worker.shape[1]):
                free_worker[s, r] = HIDDEN


def show_other_types(free_worker: np.ndarray, server_type: np.ndarray, gpu_type: int, saved: np.ndarray) -> None:
    """Restore the rows :func:`hide_other_types` hid (nothing was taken from them)."""
    for s in range(free_worker.shape[0]):
        if server_type[s] != gpu_type:
            for r in range(free_worker.shape[1]):
                free_worker[s, r] = saved[s, r]


__all__ = ["HIDDEN", "choose_type", "hide_other_types", "show_other_types"]
