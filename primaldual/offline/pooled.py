"""Solve the pooled ILP, then place its per-slot counts on servers: a proof of optimality for the per-server ILP
when every slot packs (``docs/bounds.md``).

The pooled model (:func:`primaldual.models.offline.build_offline_model` with ``pooled=True``) merges each
pool's servers: every schedule of (1)-(13) aggregates to a pooled solution of the same value, so the pooled
optimum bounds the per-server optimum from above. The pooled model has no symmetry between servers, so HiGHS
proves it optimal far sooner than the per-server model. Its solution gives, per job and slot, how many
workers and PSs run; nothing links the servers of one slot to those of another in (1)-(13), so placing them
is one independent packing problem per slot and pool (:func:`pack_slot`): per server and resource, the
demand of the units placed there within the capacity, and per job and server at most the units that fit.
If every slot packs, the placed schedule has the pooled optimum's value: it is feasible for the per-server
ILP and its value meets an upper bound, so it is optimal. If some slot does not pack, the pooled optimum
proves nothing about the schedule, and :func:`primaldual.offline.solve.solve_offline` falls back to the per-server
ILP, keeping the pooled bound.

:func:`pack_slot` tries first fit (largest units first, each on the fitting server with the least room left)
and, if that fails, decides the slot exactly with a small integer program in HiGHS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.backends.highs import quiet_highs, size_highs_threads
from primaldual.core.instance import Instance
from primaldual.core.schedule import Schedule
from primaldual.models.sparsity import offline_sparsity
from primaldual.offline.outcome import Built, RawSolve

#: Seconds the exact packing program of one slot may take; past it the slot counts as not packed.
PACKING_SECONDS = 2.0

#: Absolute capacity slack, ten times tighter than the verifier's (the online placements use the same), so
#: that every placed slot passes :func:`primaldual.core.verify.verify`.
CAPACITY_TOLERANCE = 1e-10


def _first_fit(units: np.ndarray, demand: np.ndarray, fit: np.ndarray, capacity: np.ndarray):
    """Greedy placement: jobs by decreasing largest demand share, each unit on the fitting server whose
    largest remaining share after it is smallest (best fit). Returns the (jobs, servers) counts or None."""
    room = capacity.astype(float).copy()
    scale = np.where(capacity.max(axis=0) > 0, capacity.max(axis=0), 1.0)
    placed = np.zeros(fit.shape, dtype=np.int64)
    order = np.argsort(-(demand / scale).max(axis=1), kind="stable")
    for j in order:
        for _ in range(int(units[j])):
            fits = np.all(room >= demand[j] - CAPACITY_TOLERANCE, axis=1) & (placed[j] < fit[j])
            if not fits.any():
                return None
            left = ((room - demand[j]) / scale).max(axis=1)
            h = int(np.flatnonzero(fits)[np.argmin(left[fits])])
            placed[j, h] += 1
            room[h] -= demand[j]
    return placed


def _exact(units: np.ndarray, demand: np.ndarray, fit: np.ndarray, capacity: np.ndarray):
    """The slot's packing as a feasibility integer program: counts ``n_jh <= fit_jh`` with ``sum_h n_jh =
    units_j`` and ``sum_j d_jr n_jh <= c_hr``. Returns the counts, or None if infeasible or not decided."""
    import highspy

    jobs, servers = np.nonzero(fit > 0)
    n_rows_jobs, (n_servers, n_resources) = units.shape[0], capacity.shape
    rows, cols, vals = [jobs], [np.arange(jobs.size)], [np.ones(jobs.size)]
    for r in range(n_resources):
        used = demand[jobs, r] > 0
        rows.append(n_rows_jobs + servers[used] * n_resources + r)
        cols.append(np.flatnonzero(used))
        vals.append(demand[jobs[used], r])
    rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    order = np.argsort(cols, kind="stable")
    starts = np.zeros(jobs.size + 1, dtype=np.int32)
    np.cumsum(np.bincount(cols, minlength=jobs.size), out=starts[1:])
    highs = quiet_highs()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = jobs.size, n_rows_jobs + n_servers * n_resources
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = np.zeros(jobs.size), np.zeros(jobs.size), fit[jobs, servers] * 1.0
    lp.row_lower_ = np.concatenate([units * 1.0, np.full(n_servers * n_resources, -highspy.kHighsInf)])
    lp.row_upper_ = np.concatenate([units * 1.0, capacity.ravel() + CAPACITY_TOLERANCE])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = starts, rows[order].astype(np.int32), vals[order]
    lp.integrality_ = [highspy.HighsVarType.kInteger] * jobs.size
    highs.passModel(lp)
    highs.setOptionValue("time_limit", PACKING_SECONDS)
    size_highs_threads(None)  # HiGHS keeps one thread scheduler per process, sized by the first solve
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    placed = np.zeros(fit.shape, dtype=np.int64)
    placed[jobs, servers] = np.rint(np.asarray(highs.getSolution().col_value)).astype(np.int64)
    return placed


def pack_slot(units: np.ndarray, demand: np.ndarray, fit: np.ndarray, capacity: np.ndarray):
    """Place ``units[j]`` units of demand ``demand[j]`` (R,) on servers of ``capacity`` (H, R), at most
    ``fit[j, h]`` on server h: the (jobs, servers) counts, or None if they do not fit (module docstring)."""
    units = np.asarray(units, dtype=np.int64)
    if not units.any():
        return np.zeros(fit.shape, dtype=np.int64)
    if np.any(units > fit.sum(axis=1)):
        return None
    placed = _first_fit(units, demand, fit, capacity)
    if placed is None:
        placed = _exact(units, demand, fit, capacity)
    # The exact program's counts are rounded from HiGHS's solution, which honours capacity only to HiGHS's own
    # feasibility tolerance: a placement is accepted only if it holds at ours.
    if placed is None or np.any(placed.T @ demand > capacity + CAPACITY_TOLERANCE):
        return None
    return placed


def place_pooled(instance: Instance, counts: dict) -> tuple[dict | None, int | None]:
    """Place a pooled solution's per-slot counts (``counts[i] = (workers (T,), PSs (T,))``) on servers.

    Returns (per admitted job the (T, H) worker and (T, K) PS counts, None) or (None, the first slot that
    does not pack)."""
    sparsity = offline_sparsity(instance)
    jobs = sorted(counts)
    cluster = instance.cluster
    out = {i: [np.zeros((instance.horizon, n), dtype=np.int64)
               for n in (cluster.n_worker_servers, cluster.n_ps_servers)] for i in jobs}
    for pool, (fits, capacity, name) in enumerate((
            (sparsity.worker_fit, cluster.worker_capacity, "worker_demand"),
            (sparsity.ps_fit, cluster.ps_capacity, "ps_demand"))):
        fit = np.array([fits[i] for i in jobs], dtype=np.int64).reshape(len(jobs), -1)
        demand = np.array([getattr(instance.jobs[i], name) for i in jobs], dtype=float).reshape(
            len(jobs), cluster.n_resources)
        for t in range(instance.horizon):
            for part, servers in _server_groups(cluster, pool):  # each gpu type's servers apart (issue 64)
                units = np.array([counts[i][pool][t] if part is None else counts[i][pool][t, part] for i in jobs],
                                 dtype=np.int64)
                placed = pack_slot(units, demand, fit[:, servers], np.asarray(capacity, dtype=float)[servers])
                if placed is None:
                    return None, t
                for j, i in enumerate(jobs):
                    out[i][pool][t, servers] = placed[j]
    return {i: (arrays[0], arrays[1]) for i, arrays in out.items()}, None


def _server_groups(cluster, pool: int):
    """``(part, servers)`` to pack apart: every server of the pool at once (``part`` None), or on a heterogeneous
    cluster's worker pool each type ``part`` with its servers (a pooled count per type goes to that type's)."""
    if pool == 1 or cluster.worker_types is None:
        return [(None, slice(None))]
    index = np.asarray(cluster.worker_type_index)
    return [(g, np.flatnonzero(index == g)) for g in range(len(cluster.gpu_types))]


def _place_what_fits(instance: Instance, counts: dict) -> Schedule:
    """A pooled solution that does not pack as a whole, placed job by job, first fit, dropping each job that
    does not fit in some slot (:func:`primaldual.offline.first_fit.place_on_servers`): a feasible schedule,
    a candidate MIP start for the per-server ILP."""
    from primaldual.offline.first_fit import place_on_servers
    from primaldual.core.schedule import JobSchedule

    if instance.cluster.worker_types is not None:  # each slot's count on the first server of its type
        first = [int(np.flatnonzero(instance.cluster.worker_type_index == g)[0])
                 for g in range(len(instance.cluster.gpu_types))]
        per_slot = {}
        for i, (w, z) in counts.items():
            workers = np.zeros((w.shape[0], instance.cluster.n_worker_servers), dtype=np.int64)
            workers[:, first] = w
            per_slot[i] = JobSchedule(workers, z[:, None])
        return place_on_servers(instance, per_slot)
    per_slot = {i: JobSchedule(w[:, None], z[:, None]) for i, (w, z) in counts.items()}
    return place_on_servers(instance, per_slot)


def seed_pooled(model, instance: Instance, start: Schedule) -> None:
    """Set the pooled model's variables to ``start`` aggregated per slot (the MIP start), 0 elsewhere."""
    import pyomo.environ as pyo

    for var in model.component_data_objects(pyo.Var):
        var.set_value(0, skip_validation=True)
    for i, assignment in start.assignments.items():
        completion = assignment.completion_slot()
        if i not in model.jobs or completion is None or (i, completion) not in model.complete:
            continue  # unreachable for a verified start
        model.admit[i].set_value(1, skip_validation=True)
        model.complete[i, completion].set_value(1, skip_validation=True)
        running = np.cumsum(assignment.workers_per_slot)
        for t in range(instance.jobs[i].arrival, instance.horizon):
            model.unfinished[i, t].set_value(1 if t <= completion else 0, skip_validation=True)
            model.workers[i, t].set_value(int(assignment.workers_per_slot[t]), skip_validation=True)
            model.parameter_servers[i, t].set_value(int(assignment.parameter_servers_per_slot[t]),
                                                    skip_validation=True)
            if hasattr(model, "work_done"):
                model.work_done[i, t].set_value(float(running[t]), skip_validation=True)


@dataclass(frozen=True, eq=False)
class PooledSolve:
    """The pooled ILP's answer for the per-server ILP: its solve, the jobs of it that fit, and a note.

    ``solve`` is the pooled ILP's solve (``solve.assignments``: per-server counts, None unless every slot
    packed), ``partial`` (otherwise, if the pooled solve found a solution: the jobs of it that fit, placed first
    fit, a feasible schedule) and ``note`` (what happened, for the result's message)."""

    solve: RawSolve
    partial: Schedule | None
    note: str


def solve_pooled_and_place(instance: Instance, *, time_limit, mip_gap, threads, start=None,
                           trace: list | None = None, trace_origin: float = 0.0) -> PooledSolve:
    """Solve the pooled ILP (matrix path, ``start`` aggregated per slot as its MIP start) within ``time_limit``;
    if it is proven optimal, place its counts on servers (:func:`place_pooled`). ``trace`` receives the
    pooled bound as it improves (an upper bound on OPT at every moment; the pooled incumbents are not
    schedules, so they are left out)."""
    import time

    from primaldual.offline.matrix import build_matrix_model, solve_matrix_model, start_vector

    started = time.perf_counter()
    model = build_matrix_model(instance, pooled=True)
    build_seconds = time.perf_counter() - started
    seen: list | None = None if trace is None else []
    outcome, values = solve_matrix_model(
        model, relax=False, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
        start=None if start is None else start_vector(model, instance, start), trace=seen, trace_origin=trace_origin)
    if trace is not None:
        trace.extend((seconds, None, bound) for seconds, _, bound in seen if bound is not None)
    assignments, partial, counts = None, None, None
    if outcome.status == "optimal" and values is not None:
        counts = matrix_pooled_counts(model, values)
        assignments, slot = place_pooled(instance, counts)
        note = ("the pooled ILP's optimum was placed on servers slot by slot: it is feasible for the per-server "
                "ILP, hence optimal" if assignments is not None else
                f"the pooled ILP's optimum does not pack on the servers in slot {slot}: solving the per-server "
                f"ILP, with the pooled optimum as a bound")
    else:
        note = f"the pooled ILP was not proven optimal ({outcome.status}): solving the per-server ILP"
    if assignments is None and values is not None:
        partial = _place_what_fits(instance, counts if counts is not None else matrix_pooled_counts(model, values))
    built = Built(build_seconds, model.n_variables, model.n_constraints, model.objective_slack)
    return PooledSolve(RawSolve(built, outcome, assignments, builder="pooled"), partial, note)


def matrix_pooled_counts(model, values: np.ndarray) -> dict:
    """Per admitted job of a solved pooled matrix model, its workers and PSs per slot, (T,) integer arrays (the
    workers (T, G), per gpu type, on a heterogeneous cluster)."""
    o, horizon = model.offsets, model.slot_index.shape[1]
    admitted = np.flatnonzero(values[o["admit"]: o["admit"] + model.jobs.size] > 0.5)
    out = {}
    per_pool = []
    for pool, key in ((0, "workers"), (1, "ps")):
        pj, pt, pg = model.placements[pool]
        value = np.rint(values[o[key]: o[key] + pj.size]).astype(np.int64)
        if pool == 0 and model.types is not None:  # per slot and gpu type: (T, G) per job
            counts = np.zeros((model.jobs.size, horizon, model.types.fit.shape[1]), dtype=np.int64)
            counts[pj, pt, pg] = value
        else:
            counts = np.zeros((model.jobs.size, horizon), dtype=np.int64)
            counts[pj, pt] = value
        per_pool.append(counts)
    for j in admitted:
        out[int(model.jobs[j])] = (per_pool[0][j], per_pool[1][j])
    return out


def pooled_lp_prices(instance: Instance, time_limit: float | None, threads: int | None = None):
    """The LP relaxation of the pooled model (matrix path), an upper bound on OPT, and its capacity duals as
    prices over the cells of :class:`primaldual.offline.column_generation.Cells` (every server of a pool at its pool's
    price for that slot and resource), built and solved within ``time_limit`` seconds. Returns (bound including
    the utility floor's slack, worker prices (T, H, R), PS prices (T, K, R)), or None when the LP is not solved
    to optimality within ``time_limit``.

    Any prices >= 0 give a Lagrangian bound of (14)-(18); these give one at most the pooled LP value (pricing
    over whole integral schedules is more restricted than the LP's fractional ones), so they are a good
    starting point for column generation."""
    import time

    from primaldual.offline.matrix import build_matrix_model, solve_matrix_model

    started = time.perf_counter()
    # The type columns projected out: the same LP value, measured 2x faster on a heterogeneous trace week.
    model = build_matrix_model(instance, pooled=True, projected_types=True)
    if time_limit is not None:  # the limit covers building the model too
        time_limit = float(time_limit) - (time.perf_counter() - started)
        if time_limit <= 0:
            return None
    outcome, _, duals = solve_matrix_model(model, relax=True, time_limit=time_limit, mip_gap=None,
                                           threads=threads, with_duals=True)
    if duals is None or outcome.bound is None:
        return None
    duals = np.maximum(duals, 0.0)  # a maximisation's <= rows: prices are the nonnegative duals
    prices = []
    for pool, n_servers in ((0, instance.cluster.n_worker_servers), (1, instance.cluster.n_ps_servers)):
        if pool == 0 and model.types is not None:  # the worker pool is one merged server per gpu type
            rows = model.capacity_rows[0][:, instance.cluster.worker_type_index, :]  # (T, H, R)
            prices.append(np.where(rows >= 0, duals[np.maximum(rows, 0)], 0.0))
            continue
        rows = model.capacity_rows[pool][:, 0, :]  # (T, R): the one pooled server
        per_slot = np.where(rows >= 0, duals[np.maximum(rows, 0)], 0.0)
        prices.append(np.repeat(per_slot[:, None, :], n_servers, axis=1))
    return float(outcome.bound) + model.objective_slack, prices[0], prices[1]


__all__ = ["PooledSolve", "pack_slot", "place_pooled", "pooled_lp_prices",
           "seed_pooled", "solve_pooled_and_place"]
