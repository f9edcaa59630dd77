"""The strong per-server formulation of :mod:`primaldual.models.offline`, assembled as sparse arrays with numpy
and handed to HiGHS through ``highspy`` directly (issue 11, item 2).

Same variables, same rows, same bounds and the same floored objective as
:func:`primaldual.models.offline.build_offline_model` with ``formulation="strong"``, ``pooled=False`` (the
Pyomo model stays the declarative reference; ``tests/offline/test_offline_matrix.py`` checks equal LP and ILP
optima and equal row and column counts). Building costs numpy work per job instead of one Python object per
variable and term, which is what made the Pyomo build of the paper preset run for many minutes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

from primaldual.column_generation import quiet_highs
from primaldual.instance import Instance
from primaldual.models.offline import offline_sparsity
from primaldual.models.offline_parts import _floored_utilities
from primaldual.solvers import highspy_version as _highspy_version
from primaldual.solvers import SolveOutcome

INF = highspy.kHighsInf


@dataclass(frozen=True, eq=False)
class MatrixModel:
    """A linear program ``max cost x, row_lower <= A x <= row_upper, col_lower <= x <= col_upper`` with ``A``
    in compressed sparse column form, and the index arrays needed to read a schedule back."""

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    starts: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    admit: dict
    workers: dict
    parameter_servers: dict
    objective_slack: float

    @property
    def n_variables(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_constraints(self) -> int:
        return int(self.row_lower.shape[0])


class _Builder:
    def __init__(self):
        self.lower, self.upper, self.cost, self.integer = [], [], [], []
        self.row_lower, self.row_upper = [], []
        self.rows, self.cols, self.vals = [], [], []
        self.n_cols = 0
        self.n_rows = 0

    def variables(self, count, lower, upper, integer, cost=0.0) -> np.ndarray:
        index = np.arange(self.n_cols, self.n_cols + count)
        self.n_cols += count
        self.lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (count,)))
        self.upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (count,)))
        self.cost.append(np.broadcast_to(np.asarray(cost, dtype=float), (count,)))
        self.integer.append(np.full(count, bool(integer)))
        return index

    def constraints(self, count, lower, upper) -> np.ndarray:
        index = np.arange(self.n_rows, self.n_rows + count)
        self.n_rows += count
        self.row_lower.append(np.broadcast_to(np.asarray(lower, dtype=float), (count,)))
        self.row_upper.append(np.broadcast_to(np.asarray(upper, dtype=float), (count,)))
        return index

    def terms(self, rows, cols, values) -> None:
        rows, cols = np.broadcast_arrays(np.asarray(rows), np.asarray(cols))
        self.rows.append(rows.ravel())
        self.cols.append(cols.ravel())
        self.vals.append(np.broadcast_to(np.asarray(values, dtype=float), rows.shape).ravel())


def build_matrix_model(instance: Instance) -> MatrixModel:
    """The strong per-server model of ``instance`` as sparse arrays (see the module docstring)."""
    sparsity = offline_sparsity(instance)
    jobs, horizon, cluster = sparsity.jobs, instance.horizon, instance.cluster
    completion_slots = [(i, t) for i in jobs for t in range(sparsity.earliest_completion[i], horizon)]
    utility, slack = _floored_utilities(instance, completion_slots)
    b = _Builder()
    admit, workers, parameter_servers = {}, {}, {}
    capacity_terms = {"w": [], "s": []}  # per pool: (slot, server, job, column, fit) arrays
    for i in jobs:
        job = instance.jobs[i]
        a, first = int(job.arrival), sparsity.earliest_completion[i]
        n_slots, n_complete = horizon - a, horizon - first
        work, chunks = float(instance.work_units[i]), float(job.chunks)
        admit[i] = b.variables(1, 0, 1, True)[0]
        complete = b.variables(n_complete, 0, 1, True, [utility[i, t] for t in range(first, horizon)])
        unfinished = b.variables(n_slots, 0, 1, False)
        placements = {}
        for pool, fit in (("w", sparsity.worker_fit[i]), ("s", sparsity.ps_fit[i])):
            servers = np.flatnonzero(fit)
            cols = b.variables(n_slots * servers.size, 0, np.tile(fit[servers], n_slots), True).reshape(
                n_slots, servers.size)
            placements[pool] = (servers, cols)
            capacity_terms[pool].append((np.arange(a, horizon), servers, i, cols, fit[servers]))
        workers[i], parameter_servers[i] = placements["w"], placements["s"]
        work_done = b.variables(n_slots, 0, INF, False)
        w_cols, s_cols = placements["w"][1], placements["s"][1]
        slot_rows = np.arange(n_slots)[:, None]
        # unfinished[t] - unfinished[t+1] - complete[t] = 0
        rows = b.constraints(n_slots, 0, 0)
        b.terms(rows, unfinished, 1.0)
        b.terms(rows[:-1], unfinished[1:], -1.0)
        b.terms(rows[first - a:], complete, -1.0)
        rows = b.constraints(1, 0, 0)  # admission: unfinished[a] = admit
        b.terms(rows, [unfinished[0], admit[i]], [1.0, -1.0])
        rows = b.constraints(1, 0, INF)  # work (2): sum workers - V admit >= 0
        b.terms(rows[0], w_cols.ravel(), 1.0)
        b.terms(rows, admit[i], -work)
        rows = b.constraints(n_slots, -INF, 0)  # (3), (8): sum_h workers - N unfinished <= 0
        b.terms(rows[:, None] + 0 * w_cols, w_cols, 1.0)
        b.terms(rows, unfinished, -chunks)
        rows = b.constraints(n_slots, -INF, 0)  # (6): b sum workers - B sum ps <= 0
        b.terms(rows[:, None] + 0 * w_cols, w_cols, float(job.worker_bandwidth_gbps))
        b.terms(rows[:, None] + 0 * s_cols, s_cols, -float(job.ps_bandwidth_gbps))
        rows = b.constraints(n_slots, -INF, 0)  # (7): sum ps - sum workers <= 0
        b.terms(rows[:, None] + 0 * s_cols, s_cols, 1.0)
        b.terms(rows[:, None] + 0 * w_cols, w_cols, -1.0)
        _strong_rows(b, i, a, first, horizon, work, unfinished, work_done, w_cols, admit[i], slot_rows)
    for pool, capacity, demand_of in (("w", cluster.worker_capacity, "worker_demand"),
                                      ("s", cluster.ps_capacity, "ps_demand")):
        _capacity_rows(b, instance, capacity_terms[pool], np.asarray(capacity, dtype=float), demand_of)
    return _finish(b, admit, workers, parameter_servers, slack)


def _strong_rows(b, i, a, first, horizon, work, unfinished, work_done, w_cols, admit, slot_rows) -> None:
    """``work_done`` is the running sum of the workers; a job completing by t has done V_i by t."""
    n_slots = horizon - a
    rows = b.constraints(n_slots, 0, 0)  # work_done[t] - work_done[t-1] - sum_h workers[t] = 0
    b.terms(rows, work_done, 1.0)
    b.terms(rows[1:], work_done[:-1], -1.0)
    b.terms(rows[:, None] + 0 * w_cols, w_cols, -1.0)
    slots = np.arange(first, horizon - 1)  # at T-1 the cut is eq. (2) itself
    rows = b.constraints(slots.size, 0, INF)  # work_done[t] - V admit + V unfinished[t+1] >= 0
    b.terms(rows, work_done[slots - a], 1.0)
    b.terms(rows, admit, -work)
    b.terms(rows, unfinished[slots + 1 - a], work)


def _capacity_rows(b, instance, terms, capacity, demand_of) -> None:
    """Eqs. (4)-(5), one row per (slot, server, resource) whose variables' bounds could exceed it, in the
    Pyomo model's row test (``_binding``)."""
    if not terms:
        return
    slot, server, job, col, fit = [], [], [], [], []
    for slots, servers, i, cols, fits in terms:
        slot.append(np.repeat(slots, servers.size))
        server.append(np.tile(servers, slots.size))
        job.append(np.full(cols.size, i))
        col.append(cols.ravel())
        fit.append(np.tile(fits, slots.size))
    slot, server, job, col, fit = (np.concatenate(x) for x in (slot, server, job, col, fit))
    demand = np.array([getattr(j, demand_of) for j in instance.jobs], dtype=float).reshape(instance.n_jobs, -1)
    for r in range(capacity.shape[1]):
        used = demand[job, r] > 0
        d = demand[job[used], r]
        key = slot[used] * capacity.shape[0] + server[used]
        load = np.bincount(key, weights=d * fit[used], minlength=instance.horizon * capacity.shape[0])
        cap = np.tile(capacity[:, r], instance.horizon)
        binding = np.flatnonzero(load > cap + 1e-9)
        rows = b.constraints(binding.size, -INF, cap[binding])
        row_of = np.full(load.shape[0], -1)
        row_of[binding] = rows
        keep = row_of[key] >= 0
        b.terms(row_of[key][keep], col[used][keep], d[keep])


def _finish(b, admit, workers, parameter_servers, slack) -> MatrixModel:
    rows, cols, vals = (np.concatenate(x) if x else np.zeros(0) for x in (b.rows, b.cols, b.vals))
    order = np.lexsort((rows, cols))
    rows, cols, vals = rows[order].astype(np.int32), cols[order], vals[order]
    starts = np.searchsorted(cols, np.arange(b.n_cols + 1)).astype(np.int32)
    cat = lambda parts, dtype=float: np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)  # noqa
    return MatrixModel(cat(b.cost), cat(b.lower), cat(b.upper), cat(b.integer, bool), cat(b.row_lower),
                       cat(b.row_upper), starts, rows, vals, admit, workers, parameter_servers, float(slack))


def solve_matrix_model(model: MatrixModel, *, relax: bool, time_limit, mip_gap, threads) -> tuple:
    """Solve with highspy; return (:class:`~primaldual.solvers.SolveOutcome`, column values or None)."""
    highs = quiet_highs()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = model.n_variables, model.n_constraints
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = model.cost, model.col_lower, model.col_upper
    lp.row_lower_, lp.row_upper_ = model.row_lower, model.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = model.starts, model.indices, model.values
    lp.sense_ = highspy.ObjSense.kMaximize
    if not relax:
        lp.integrality_ = [highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous
                           for v in model.integer]
    highs.passModel(lp)
    if time_limit is not None:
        highs.setOptionValue("time_limit", float(time_limit))
    if mip_gap is not None:
        highs.setOptionValue("mip_rel_gap", float(mip_gap))
    if threads is not None:
        highs.setOptionValue("threads", int(threads))
    started = time.perf_counter()
    highs.run()
    seconds = time.perf_counter() - started
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
                           seconds=seconds, solver="highs", version=_highspy_version(), status=status,
                           solver_seconds=seconds)
    return outcome, values


def matrix_assignments(model: MatrixModel, values: np.ndarray, instance: Instance) -> dict:
    """Per admitted job, the (T, H) worker and (T, K) PS counts of a solution, rounded to integers."""
    out = {}
    cluster = instance.cluster
    for i, column in model.admit.items():
        if values[column] <= 0.5:
            continue
        arrays = []
        for (servers, cols), n_servers in ((model.workers[i], cluster.n_worker_servers),
                                           (model.parameter_servers[i], cluster.n_ps_servers)):
            array = np.zeros((instance.horizon, n_servers), dtype=np.int64)
            a = instance.horizon - cols.shape[0]
            array[a:, servers] = np.rint(values[cols]).astype(np.int64)
            arrays.append(array)
        out[i] = (arrays[0], arrays[1])
    return out


__all__ = ["MatrixModel", "build_matrix_model", "matrix_assignments", "solve_matrix_model"]
