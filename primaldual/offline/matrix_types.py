"""The gpu type choice in the matrix path (:mod:`primaldual.offline.matrix`), as in the Pyomo model
(:mod:`primaldual.models.gpu_choice`, whose docstring has the formulation and its exactness).

On a heterogeneous cluster the worker pool's columns carry a weight ``W_i / W_i^{g(h)}`` in eq. (2) and in the
running sum ``work_done``, eq. (2)'s right-hand side is ``(1 - 1e-9) W_i`` (the fastest type's work), and the
columns ``uses_type`` (one binary per job, slot from its arrival and type it fits on) come last, with

* ``sum_g u_itg - unfinished_it <= 0`` (one type per slot), and
* ``sum_{h of type g} y_iht - M_ig u_itg <= 0``, ``M_ig = min(N_i, sum_{h of type g} fit_ih)``.

Pooled, the worker pool is one merged server per type (capacity summed over the type's servers, job i's
workers on it bounded by ``M_ig``). Cost: the type columns and two row families, O(jobs x slots x types).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.models.gpu_choice import TYPE_WORK_TOLERANCE

INF = float("inf")


@dataclass(frozen=True, eq=False)
class ServerTypes:
    """A heterogeneous worker pool as the matrix sees it: ``server_type[h]`` of each of its servers (pooled: the
    merged server of type h is type h), ``fit`` (jobs, servers) and ``capacity`` (servers, R) of those servers,
    ``weight[j, g] = W_j / W_j^g``, ``bound[j, g] = M_jg`` and ``work[j] = (1 - 1e-9) W_j``."""

    server_type: np.ndarray
    fit: np.ndarray
    capacity: np.ndarray
    weight: np.ndarray
    bound: np.ndarray
    work: np.ndarray

    def symmetry_key(self) -> np.ndarray:
        """Capacity and type per server: only servers of one type may be identical."""
        return np.column_stack([self.capacity, self.server_type.astype(float)])


def server_types(instance, jobs: np.ndarray, fit: np.ndarray, capacity: np.ndarray, pooled: bool) -> ServerTypes:
    """The worker pool of a heterogeneous ``instance`` for the job positions ``jobs``, from the per-server ``fit``
    and ``capacity`` (merged per type when ``pooled``)."""
    index = np.asarray(instance.cluster.worker_type_index)
    n_types = len(instance.cluster.gpu_types)
    chunks = np.array([instance.jobs[int(i)].chunks for i in jobs], dtype=np.int64)
    per_type = np.stack([fit[:, index == g].sum(axis=1) for g in range(n_types)], axis=1).reshape(jobs.size, n_types)
    bound = np.minimum(per_type, chunks[:, None])
    by_type = instance.work_by_type[jobs].reshape(jobs.size, n_types)
    weight = by_type.min(axis=1, keepdims=True) / by_type
    work = (1.0 - TYPE_WORK_TOLERANCE) * by_type.min(axis=1)
    if pooled:
        merged = np.stack([capacity[index == g].sum(axis=0) for g in range(n_types)])
        return ServerTypes(np.arange(n_types), bound, merged, weight, bound, work)
    return ServerTypes(index, fit, capacity, weight, bound, work)


def type_placements(types: ServerTypes, active: np.ndarray) -> tuple:
    """The (job position, slot, type) of each ``uses_type`` column: slots from the arrival, types it fits on."""
    return np.nonzero(active[:, :, None] & (types.bound[:, None, :] > 0))


def add_type_rows(model, x: dict, types: ServerTypes, projected: bool = False) -> None:
    """One type per (job, slot) and workers only on the chosen type (module docstring); ``projected``: the LP's
    rows without the type columns (:func:`add_projected_type_rows`)."""
    if projected:
        return add_projected_type_rows(model, x, types)
    o, (uj, ut, ug) = x["offsets"], x["type_placements"]
    u_cols = o["types"] + np.arange(uj.size)
    q = x["slot_index"][uj, ut]
    row = model.constraints(x["slot_job"].size, -INF, 0.0)  # sum_g u - unfinished <= 0
    model.terms(row + q, u_cols, 1.0)
    model.terms(row + np.arange(x["slot_job"].size), o["unfinished"] + np.arange(x["slot_job"].size), -1.0)
    n_types = types.bound.shape[1]
    horizon = x["horizon"]
    row_of = np.full((x["jobs"].size, horizon, n_types), -1, dtype=np.int64)
    first = model.constraints(uj.size, -INF, 0.0)  # sum_{h of g} y - M u <= 0
    row_of[uj, ut, ug] = first + np.arange(uj.size)
    model.terms(first + np.arange(uj.size), u_cols, -types.bound[uj, ug].astype(float))
    wj, wt, wh = x["placements"][0]
    w_rows = row_of[wj, wt, types.server_type[wh]]
    model.terms(w_rows, o["workers"] + np.arange(wj.size), 1.0)


def add_projected_type_rows(model, x: dict, types: ServerTypes) -> None:
    """The type choice of the LP relaxation with ``u`` projected out: ``sum_g (sum_{h of g} y_iht) / M_ig -
    unfinished_it <= 0`` per (job, slot).

    Correctness: for fractional ``u`` the two row families of :func:`add_type_rows` hold for some ``u`` iff this
    row holds (take ``u_itg = sum_{h of g} y_iht / M_ig``, at most 1 since ``y_iht <= fit_ih`` and eq. (3) give
    ``sum_{h of g} y_iht <= M_ig``), so the LP value is the same; it is a relaxation of the ILP, never exact for
    it. Cost: one row per (job, slot) and no type columns, against a column and a row per (job, slot, type)."""
    q = np.arange(x["slot_job"].size)
    row = model.constraints(q.size, -INF, 0.0)
    model.terms(row + q, x["offsets"]["unfinished"] + q, -1.0)
    wj, wt, wh = x["placements"][0]
    scale = types.bound[wj, types.server_type[wh]].astype(float)
    model.terms(row + x["slot_index"][wj, wt], x["offsets"]["workers"] + np.arange(wj.size), 1.0 / scale)


def type_start(types: ServerTypes, worker_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a start's worker counts (job position, slot, server): ``uses_type`` per (job, slot, type) and the
    weighted workers per (job, slot), the start's values of the type columns and of ``work_done``'s terms."""
    n_types = types.bound.shape[1]
    per_type = np.stack([worker_counts[:, :, types.server_type == g].sum(axis=2) for g in range(n_types)], axis=2)
    return (per_type > 0).astype(float), (per_type * types.weight[:, None, :]).sum(axis=2)


__all__ = ["ServerTypes", "add_projected_type_rows", "add_type_rows", "server_types", "type_placements", "type_start"]
