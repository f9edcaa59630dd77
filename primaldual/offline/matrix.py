"""The strong per-server formulation of :mod:`primaldual.models.offline`, assembled as sparse arrays with numpy
and handed to HiGHS through ``highspy`` directly.

Same variables, same rows, same bounds and the same floored objective as
:func:`primaldual.models.offline.build_offline_model` with ``formulation="strong"``, ``pooled=False`` (the
Pyomo model stays the declarative reference; ``tests/offline/test_offline_matrix.py`` checks equal LP and ILP
optima and equal row and column counts).

The assembly has no loop over jobs, slots or servers: every variable family is a range of columns indexed by
``np.nonzero`` of a (job, slot[, server]) mask, every row family a range of rows indexed the same way, and
each term family is one pair of index arrays. The coordinate triplets are sorted by column once
(:func:`_compress`) into the compressed-column arrays HiGHS takes in ``passModel``.

Column layout, in this order: ``admit`` (one per job), ``complete`` (per job and completion slot),
``unfinished`` and ``work_done`` (per job and slot from its arrival), worker then PS placements (per job,
slot and server the job fits on). :func:`start_vector` writes a schedule in this layout (the MIP start).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

from primaldual.core.instance import Instance
from primaldual.models.sparsity import offline_sparsity
from primaldual.models.sparsity import UTILITY_FLOOR
from primaldual.core.schedule import Schedule
from primaldual.backends.highs import highspy_version, size_highs_threads
from primaldual.backends.outcome import SolveOutcome
from primaldual.offline.cuts import add_shifted_work_rows
from primaldual.offline.triplets import Triplets as _Triplets, cat as _cat, compress as _compress
from primaldual.offline.trace import record_progress
from primaldual.offline.symmetry import add_symmetry_rows, canonical_counts, identical_server_classes
from primaldual.offline.matrix_types import add_type_rows, server_types, type_placements, type_start

INF = highspy.kHighsInf

#: Capacity rows are written where the variables' upper bounds could exceed the capacity by more than this,
#: the Pyomo model's test (``models/offline_parts.py``, ``can_bind``).
BINDING_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class MatrixModel:
    """A linear program ``max cost x, row_lower <= A x <= row_upper, col_lower <= x <= col_upper`` with ``A``
    in compressed sparse column form, and the index arrays that map columns back to the schedule.

    ``jobs`` are the instance's job indices that have variables (position ``j``); ``slot_index[j, t]`` is the
    position of (job j, slot t) among the ``unfinished``/``work_done`` columns (-1 before the arrival);
    ``complete_index[j, t]`` that of ``complete`` (-1 before the earliest completion); ``placements[pool]``
    the (job position, slot, server) of each worker (pool 0) or PS (pool 1) column, in column order;
    ``capacity_rows[pool][t, h, r]`` the row of capacity cell (t, h, r) of eqs. (4)-(5), -1 if it has none."""

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    starts: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    jobs: np.ndarray
    offsets: dict
    slot_index: np.ndarray
    complete_index: np.ndarray
    placements: tuple
    objective_slack: float
    capacity_rows: tuple = ()
    symmetry_classes: tuple = ((), ())
    pooled: bool = False
    types: object = None  # :class:`~primaldual.offline.matrix_types.ServerTypes` on a heterogeneous cluster

    @property
    def n_variables(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_constraints(self) -> int:
        return int(self.row_lower.shape[0])


def _floored_costs(instance: Instance, jobs: np.ndarray, slot: np.ndarray, job_of: np.ndarray) -> tuple:
    """``f_i(t - a_i)`` per completion column, with the Pyomo model's floor (``models/offline_parts.py``,
    ``floored_utilities``): values below :data:`UTILITY_FLOOR` x the largest count as 0, and the slack is the
    sum over jobs of the largest floored value."""
    arrival = instance.arrivals[jobs]
    utility = np.zeros(slot.shape[0])
    bounds = np.searchsorted(job_of, np.arange(jobs.shape[0] + 1))
    for j, i in enumerate(jobs):  # one vectorised utility call per job: each job has its own function
        part = slice(bounds[j], bounds[j + 1])
        utility[part] = instance.jobs[int(i)].utility(slot[part] - arrival[j])
    floor = UTILITY_FLOOR * (np.abs(utility).max() if utility.size else 0.0)
    floored = (np.abs(utility) > 0) & (np.abs(utility) < floor)
    largest = np.zeros(jobs.shape[0])
    np.maximum.at(largest, job_of[floored], np.abs(utility[floored]))
    utility[floored] = 0.0
    return utility, float(largest.sum())


def build_matrix_model(instance: Instance, pooled: bool = False, symmetry: bool = False,
                       work_cuts: bool = False, projected_types: bool = False) -> MatrixModel:
    """The strong per-server model of ``instance`` as sparse arrays (see the module docstring).

    ``symmetry=True`` adds the load-ordering rows between identical servers of
    :mod:`primaldual.offline.symmetry` (same optimum, fewer equivalent copies of each schedule).

    ``pooled=True``: the pooled model of :mod:`primaldual.models.offline` instead, which is this model on a
    cluster of one server per pool whose capacity is the pool's total, where job i may run
    ``min(N_i, sum_h fit_ih)`` workers (and PSs) per slot. ``projected_types``: for an LP (``add_type_rows``)."""
    sparsity = offline_sparsity(instance)
    jobs = np.asarray(sparsity.jobs, dtype=np.int64)
    n_jobs, horizon = jobs.shape[0], instance.horizon
    arrival = np.asarray(instance.arrivals, dtype=np.int64)[jobs]
    first = np.array([sparsity.earliest_completion[int(i)] for i in jobs], dtype=np.int64).reshape(-1)
    work = np.asarray(instance.work_units, dtype=float)[jobs]
    specs = [instance.jobs[int(i)] for i in jobs]
    chunks = np.array([s.chunks for s in specs], dtype=float)
    b_worker = np.array([s.worker_bandwidth_gbps for s in specs], dtype=float)
    b_ps = np.array([s.ps_bandwidth_gbps for s in specs], dtype=float)
    slots = np.arange(horizon)
    active = slots[None, :] >= arrival[:, None]  # (job, slot) pairs with unfinished/work_done columns
    slot_job, slot_t = np.nonzero(active)
    slot_index = np.full((n_jobs, horizon), -1, dtype=np.int64)
    slot_index[slot_job, slot_t] = np.arange(slot_job.size)
    completes = slots[None, :] >= first[:, None]
    complete_job, complete_t = np.nonzero(completes)
    complete_index = np.full((n_jobs, horizon), -1, dtype=np.int64)
    complete_index[complete_job, complete_t] = np.arange(complete_job.size)
    cluster = instance.cluster
    fits = [np.array([sparsity.worker_fit[int(i)] for i in jobs]).reshape(n_jobs, cluster.n_worker_servers),
            np.array([sparsity.ps_fit[int(i)] for i in jobs]).reshape(n_jobs, cluster.n_ps_servers)]
    capacities = [np.asarray(cluster.worker_capacity, dtype=float), np.asarray(cluster.ps_capacity, dtype=float)]
    types = None if cluster.worker_types is None else server_types(instance, jobs, fits[0], capacities[0], pooled)
    if pooled:
        fits = [np.minimum(chunks.astype(np.int64), fit.sum(axis=1))[:, None] for fit in fits]
        capacities = [capacity.sum(axis=0, keepdims=True) for capacity in capacities]
    if types is not None:  # the worker pool per server with its types, or pooled per type
        fits[0], capacities[0], work = types.fit, types.capacity, types.work
    placements = tuple(np.nonzero(active[:, :, None] & (fit[:, None, :] > 0)) for fit in fits)

    sizes = {"admit": n_jobs, "complete": complete_job.size, "unfinished": slot_job.size,
             "work_done": slot_job.size, "workers": placements[0][0].size, "ps": placements[1][0].size}
    if types is not None:
        sizes["types"] = (typed := type_placements(types, active & (not projected_types)))[0].size
    offsets = dict(zip(sizes, np.cumsum([0] + list(sizes.values()))[:-1].tolist()))
    n_cols = int(sum(sizes.values()))
    cost = np.zeros(n_cols)
    utility, slack = _floored_costs(instance, jobs, complete_t, complete_job)
    cost[offsets["complete"]: offsets["complete"] + complete_job.size] = utility
    upper = np.ones(n_cols)
    upper[offsets["work_done"]: offsets["workers"]] = INF
    for pool, (pj, pt, ph) in enumerate(placements):
        start = offsets["workers" if pool == 0 else "ps"]
        upper[start: start + pj.size] = fits[pool][pj, ph]
    integer = np.ones(n_cols, dtype=bool)
    integer[offsets["unfinished"]: offsets["workers"]] = False

    model = _Triplets()
    index = dict(jobs=jobs, arrival=arrival, first=first, work=work, chunks=chunks, b_worker=b_worker,
                 b_ps=b_ps, slot_job=slot_job, slot_t=slot_t, slot_index=slot_index, complete_job=complete_job,
                 complete_t=complete_t, placements=placements, offsets=offsets, horizon=horizon,
                 complete_index=complete_index, w_weight=1.0)
    if types is not None:  # eq. (2) at each type's speed, and the type choice
        index.update(w_weight=types.weight[placements[0][0], types.server_type[placements[0][2]]],
                     type_placements=typed)
    if work_cuts and not pooled:
        index["per_slot"] = np.minimum(chunks, fits[0].sum(axis=1))
    _job_rows(model, index)
    if types is not None:
        add_type_rows(model, index, types, projected_types)
    capacity_rows = tuple(_capacity_rows(model, instance, index, fits[pool], capacities[pool], pool)
                          for pool in (0, 1))
    classes = ((), ())
    if symmetry and not pooled:
        classes = tuple(identical_server_classes(capacity) for capacity in
                        (capacities[0] if types is None else types.symmetry_key(), capacities[1]))
        for pool, key in ((0, "workers"), (1, "ps")):
            add_symmetry_rows(model, placements[pool], offsets[key], classes[pool], n_jobs, horizon,
                              capacities[pool].shape[0])
    starts, indices, values = _compress(model, n_cols)
    return MatrixModel(cost, np.zeros(n_cols), upper, integer, _cat(model.row_lower), _cat(model.row_upper),
                       starts, indices, values, jobs, offsets, slot_index, complete_index, placements, slack,
                       capacity_rows, classes, bool(pooled), types)


def _job_rows(model: _Triplets, x: dict) -> None:
    """Eqs. (2), (3), (6)-(8), completion and admission, and the strong cut, for every job at once."""
    o, sj, st, q = x["offsets"], x["slot_job"], x["slot_t"], np.arange(x["slot_job"].size)
    unfinished, work_done, admit = o["unfinished"] + q, o["work_done"] + q, o["admit"] + sj
    has_next = st < x["horizon"] - 1  # (j, t+1) is q + 1: the slots of a job are consecutive
    at_arrival = st == x["arrival"][sj]
    (wj, wt, _), (pj, pt, _) = x["placements"]
    w_cols = o["workers"] + np.arange(wj.size)
    p_cols = o["ps"] + np.arange(pj.size)
    w_q, p_q = x["slot_index"][wj, wt], x["slot_index"][pj, pt]
    # unfinished[t] - unfinished[t+1] - complete[t] = 0
    row = model.constraints(q.size, 0, 0)
    model.terms(row + q, unfinished, 1.0)
    model.terms(row + q[has_next], unfinished[has_next] + 1, -1.0)
    model.terms(row + x["slot_index"][x["complete_job"], x["complete_t"]],
                o["complete"] + np.arange(x["complete_job"].size), -1.0)
    row = model.constraints(x["jobs"].size, 0, 0)  # admission: unfinished[a] = admit
    model.terms(row + sj[at_arrival], unfinished[at_arrival], 1.0)
    model.terms(row + np.arange(x["jobs"].size), o["admit"] + np.arange(x["jobs"].size), -1.0)
    row = model.constraints(x["jobs"].size, 0, INF)  # work (2): sum workers - V admit >= 0
    model.terms(row + wj, w_cols, x["w_weight"])
    model.terms(row + np.arange(x["jobs"].size), o["admit"] + np.arange(x["jobs"].size), -x["work"])
    row = model.constraints(q.size, -INF, 0)  # (3), (8): sum_h workers - N unfinished <= 0
    model.terms(row + w_q, w_cols, 1.0)
    model.terms(row + q, unfinished, -x["chunks"][sj])
    row = model.constraints(q.size, -INF, 0)  # (6): b sum workers - B sum ps <= 0
    model.terms(row + w_q, w_cols, x["b_worker"][wj])
    model.terms(row + p_q, p_cols, -x["b_ps"][pj])
    row = model.constraints(q.size, -INF, 0)  # (7): sum ps - sum workers <= 0
    model.terms(row + p_q, p_cols, 1.0)
    model.terms(row + w_q, w_cols, -1.0)
    # strong formulation: work_done[t] - work_done[t-1] - sum_h workers[t] = 0
    row = model.constraints(q.size, 0, 0)
    model.terms(row + q, work_done, 1.0)
    model.terms(row + q[has_next] + 1, work_done[has_next], -1.0)
    model.terms(row + w_q, w_cols, -x["w_weight"])
    if "per_slot" in x:  # the shifted cuts contain the strong cut below
        add_shifted_work_rows(model, x, x["per_slot"])
        return
    # and the cut work_done[t] - V admit + V unfinished[t+1] >= 0 for t in [first, T-1) (at T-1 it is (2))
    cut = has_next & (st >= x["first"][sj])
    row = model.constraints(np.count_nonzero(cut), 0, INF)
    cut_rows = row + np.arange(np.count_nonzero(cut))
    model.terms(cut_rows, work_done[cut], 1.0)
    model.terms(cut_rows, admit[cut], -x["work"][sj[cut]])
    model.terms(cut_rows, unfinished[cut] + 1, x["work"][sj[cut]])


def _capacity_rows(model: _Triplets, instance: Instance, x: dict, fit: np.ndarray, capacity: np.ndarray,
                   pool: int) -> np.ndarray:
    """Eqs. (4)-(5): one row per (slot, server, resource) where ``sum demand x upper bound`` over the jobs
    present can exceed the capacity (the Pyomo model's row test). Returns the (T, H, R) row of each cell,
    -1 where there is none."""
    cluster = instance.cluster
    name = "worker_demand" if pool == 0 else "ps_demand"
    demand = np.array([getattr(instance.jobs[int(i)], name) for i in x["jobs"]], dtype=float).reshape(
        x["jobs"].size, cluster.n_resources)
    present = (np.arange(x["horizon"])[None, :] >= x["arrival"][:, None]).astype(float)  # (job, slot)
    # load[t, h, r] = sum_j present[j, t] fit[j, h] demand[j, r]
    per_job = (fit[:, :, None] * demand[:, None, :]).reshape(x["jobs"].size, capacity.size)
    load = (present.T @ per_job).reshape(x["horizon"], *capacity.shape)
    binding = load > capacity[None] + BINDING_TOLERANCE
    count = np.count_nonzero(binding)
    row_of = np.full(binding.shape, -1, dtype=np.int64)
    first = model.constraints(count, -INF, np.broadcast_to(capacity, binding.shape)[binding])
    row_of[binding] = first + np.arange(count)
    pj, pt, ph = x["placements"][pool]
    cols = x["offsets"]["workers" if pool == 0 else "ps"] + np.arange(pj.size)
    for r in range(capacity.shape[1]):
        rows = row_of[pt, ph, r]
        keep = (rows >= 0) & (demand[pj, r] > 0)
        model.terms(rows[keep], cols[keep], demand[pj[keep], r])
    return row_of


def solve_matrix_model(model: MatrixModel, *, relax: bool, time_limit, mip_gap, threads, start=None,
                       on_incumbent=None, with_duals: bool = False, trace: list | None = None,
                       trace_origin: float = 0.0, highs_options: dict | None = None) -> tuple:
    """Solve with highspy; return (:class:`~primaldual.backends.solvers.SolveOutcome`, column values or None), and
    with ``with_duals`` the row duals of a relaxation solved to optimality (None otherwise) third.

    ``start`` (column values, :func:`start_vector`) is handed to HiGHS as a MIP start with ``setSolution``.
    ``on_incumbent(values, objective, bound)``, if given, is called with each improving MIP solution.
    ``trace``, if given, receives ``(time.time() - trace_origin, incumbent, bound)`` each time HiGHS's incumbent
    or bound changes (:func:`primaldual.offline.trace.record_progress`); ``highs_options`` are further HiGHS
    options by name (for measurements)."""
    from primaldual.backends.highs import quiet_highs

    highs = quiet_highs()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = model.n_variables, model.n_constraints
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = model.cost, model.col_lower, model.col_upper
    lp.row_lower_, lp.row_upper_ = model.row_lower, model.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = model.starts, model.indices, model.values
    lp.sense_ = highspy.ObjSense.kMaximize
    if not relax:
        lp.integrality_ = np.where(model.integer, highspy.HighsVarType.kInteger,
                                   highspy.HighsVarType.kContinuous).tolist()
    highs.passModel(lp)
    for option, value in (("time_limit", time_limit), ("mip_rel_gap", mip_gap), ("threads", threads)):
        if value is not None:
            highs.setOptionValue(option, int(value) if option == "threads" else float(value))
    for option, value in (highs_options or {}).items():
        highs.setOptionValue(option, value)
    if start is not None and not relax:
        solution = highspy.HighsSolution()
        solution.col_value = np.asarray(start, dtype=float).tolist()
        solution.value_valid = True
        highs.setSolution(solution)
    if on_incumbent is not None and not relax and hasattr(highs, "cbMipImprovingSolution"):
        def improving(event) -> None:
            values = np.asarray(event.data_out.mip_solution, dtype=float)
            bound = float(event.data_out.mip_dual_bound)
            try:
                on_incumbent(values, float(model.cost @ values), bound if np.isfinite(bound) else None)
            except Exception:  # a failing observer must not abort the solve
                pass

        highs.cbMipImprovingSolution += improving
    if trace is not None and not relax:
        record_progress(highs, trace, trace_origin)
    size_highs_threads(threads)  # HiGHS keeps one thread scheduler per process, sized by the first solve
    started = time.perf_counter()
    highs.run()
    seconds = time.perf_counter() - started
    outcome, values = _outcome(highs, model, relax, seconds)
    if trace is not None and not relax:
        # HiGHS's callbacks stop before its last bound update (the one that proves optimality): the final
        # values join the trace at the moment they were known, or a phase's bound would reach it only later.
        trace.append((time.time() - trace_origin, outcome.objective, outcome.bound))
    if with_duals:
        solved = relax and outcome.status == "optimal"
        return outcome, values, np.asarray(highs.getSolution().row_dual, dtype=float) if solved else None
    return outcome, values


def _outcome(highs, model: MatrixModel, relax: bool, seconds: float) -> tuple:
    status_name = highs.modelStatusToString(highs.getModelStatus())
    status = {highspy.HighsModelStatus.kOptimal: "optimal", highspy.HighsModelStatus.kInfeasible: "infeasible",
              highspy.HighsModelStatus.kTimeLimit: "time_limit"}.get(highs.getModelStatus(), "other_limit")
    info = highs.getInfo()
    has_solution = info.primal_solution_status == 2
    values = np.asarray(highs.getSolution().col_value) if has_solution else None
    objective = float(model.cost @ values) if has_solution else None
    if relax:
        bound = objective if status == "optimal" else None  # an LP stopped early bounds nothing
    else:
        bound = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else None
        if status == "optimal" and bound is None:
            bound = objective
    outcome = SolveOutcome(termination=status_name, has_solution=has_solution, objective=objective, bound=bound,
                           seconds=seconds, solver="highs", version=highspy_version(), status=status,
                           solver_seconds=seconds)
    return outcome, values


def start_vector(model: MatrixModel, instance: Instance, start: Schedule) -> np.ndarray:
    """The column values of a feasible schedule (the MIP start): 1 for its admitted jobs' ``admit``,
    completion slot and ``unfinished`` slots up to it, its placements, and their running sums."""
    x = np.zeros(model.n_variables)
    o = model.offsets
    position = {int(i): j for j, i in enumerate(model.jobs)}
    shapes = (1, 1) if model.pooled else (instance.cluster.n_worker_servers, instance.cluster.n_ps_servers)
    if model.types is not None:
        shapes = (model.types.fit.shape[1], shapes[1])
    counts = [np.zeros((model.jobs.size, instance.horizon, n)) for n in shapes]
    for i, assignment in start.assignments.items():
        completion = assignment.completion_slot()
        j = position.get(int(i))
        if j is None or completion is None or model.complete_index[j, completion] < 0:
            continue  # not admitted in the model's terms; a verified start has no such job
        x[o["admit"] + j] = 1.0
        x[o["complete"] + model.complete_index[j, completion]] = 1.0
        live = model.slot_index[j, : completion + 1]
        x[o["unfinished"] + live[live >= 0]] = 1.0
        counts[0][j], counts[1][j] = (assignment.workers, assignment.parameter_servers) if not model.pooled else (
            assignment.workers_per_slot[:, None], assignment.parameter_servers_per_slot[:, None])
        if model.pooled and model.types is not None:  # the merged server of each type
            index = np.asarray(instance.cluster.worker_type_index)
            counts[0][j] = np.stack([assignment.workers[:, index == g].sum(axis=1) for g in range(shapes[0])], 1)
        running = np.cumsum(assignment.workers_per_slot if model.types is None
                            else type_start(model.types, counts[0][j: j + 1])[1][0])
        mine = model.slot_index[j] >= 0
        x[o["work_done"] + model.slot_index[j][mine]] = running[mine]
    for pool, key in ((0, "workers"), (1, "ps")):
        pj, pt, ph = model.placements[pool]
        # With symmetry rows, the start's servers are sorted as the rows require (the same schedule up to a
        # permutation of identical servers within each slot).
        x[o[key]: o[key] + pj.size] = canonical_counts(counts[pool], model.symmetry_classes[pool])[pj, pt, ph]
    if model.types is not None:
        uj, ut, ug = type_placements(model.types, model.slot_index >= 0)
        x[o["types"]: o["types"] + uj.size] = type_start(model.types, counts[0])[0][uj, ut, ug]
    return x


def matrix_assignments(model: MatrixModel, values: np.ndarray, instance: Instance) -> dict:
    """Per admitted job, the (T, H) worker and (T, K) PS counts of a solution, rounded to integers."""
    o = model.offsets
    admitted = values[o["admit"]: o["admit"] + model.jobs.size] > 0.5
    arrays = []
    for pool, (key, n) in enumerate((("workers", instance.cluster.n_worker_servers),
                                     ("ps", instance.cluster.n_ps_servers))):
        pj, pt, ph = model.placements[pool]
        counts = np.zeros((model.jobs.size, instance.horizon, n), dtype=np.int64)
        counts[pj, pt, ph] = np.rint(values[o[key]: o[key] + pj.size]).astype(np.int64)
        arrays.append(counts)
    return {int(model.jobs[j]): (arrays[0][j], arrays[1][j]) for j in np.flatnonzero(admitted)}


__all__ = ["MatrixModel", "build_matrix_model", "matrix_assignments", "solve_matrix_model", "start_vector"]
