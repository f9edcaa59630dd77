"""The offline utility-maximisation problem (1)-(13) of OASiS as a Pyomo model (docs/papers.md, OASiS).

:func:`build_offline_model` is pure: it reads an :class:`~primaldual.core.instance.Instance` and returns a
``pyomo.environ.ConcreteModel``; it never solves and does no I/O (see :mod:`primaldual.offline.solve` for that).
Slots are zero-based (the paper counts from one).

Linearising the completion slot (8)
-----------------------------------
Eq. (8) defines ``t_hat_i`` as the last slot with a worker, an argmax that is not linear. It is replaced by
completion indicators ``complete[i, t]`` (``omega_it`` in docs/papers.md, OASiS), one per job and slot
``t >= a_i``:

* ``sum_t complete[i, t] = admit[i]``: an admitted job picks exactly one completion slot;
* ``sum_h workers[i, t, h] <= N_i * sum_{t' >= t} complete[i, t']``: workers may run in slot t only if the
  chosen completion slot is t or later (this also carries the cap (3), and forces no workers for a rejected
  job);
* the objective is ``sum_{i, t} f_i(t - a_i) complete[i, t]``.

The tail sums ``sum_{t' >= t} complete[i, t']`` are carried by continuous variables ``unfinished[i, t]``
defined by ``unfinished[i, t] = unfinished[i, t + 1] + complete[i, t]`` (an exact substitution: same integer
solutions, same LP relaxation), so that no row holds O(T) indicators; then ``unfinished[i, a_i] = admit[i]``
says the indicators sum to ``x_i``.

Why this is exact for non-increasing utilities: a feasible schedule of (1)-(13) maps to a solution of the
model with ``complete[i, t_hat_i] = 1`` and the same objective. Conversely, in any solution of the model a job
whose indicator sits at slot t* has no worker after t*, so its true completion slot ``t_hat <= t*`` and its
true utility ``f_i(t_hat - a_i) >= f_i(t* - a_i)``, the value the model counts. So the two problems have the
same optimum, and the schedule of an optimal model solution is optimal for (1)-(13) (its indicator sits at
``t_hat`` or at a slot of equal value). The verifier recomputes ``t_hat`` from the schedule, as eq. (8) says.

Formulations
------------
``formulation="weak"`` is the paper's constraints with the linearisation above. ``formulation="strong"``
(the default) adds two families of valid inequalities that cut off fractional points of the LP relaxation
but no integer schedule:

* *earliest completion*: no job completes before ``a_i + ceil(V_i / N_i) - 1`` (it cannot do ``V_i``
  worker-slots with at most ``N_i`` workers per slot any sooner), so its indicators start there;
* *cumulative work*: if job i completes by slot t, its work done by slot t covers ``V_i``:
  ``work_done[i, t] >= V_i * sum_{t' <= t} complete[i, t']`` (written ``V_i (admit[i] - unfinished[i, t+1])``),
  with ``work_done`` the running sum of workers.
  It holds for integer schedules because a job does all its work by its completion slot; in the weak LP a
  job can instead claim an early completion with a large fractional weight while doing its work late.

Sparsity
--------
Only jobs that can finish by the horizon (``instance.can_finish``) and that fit on at least one worker server
and one PS server get variables (the others have no feasible schedule and are rejected, eq. (11) with
``x_i = 0``). Workers (PSs) of job i get a variable only for slots ``t >= a_i`` (eqs. (9)-(10)) and servers
where one worker (PS) of job i fits; each count is bounded by how many fit on the server and by ``N_i``
(by (3), and by (7) for PSs). A capacity row (4)-(5) is only written where these bounds could exceed it.

Heterogeneous clusters
----------------------
Where the cluster declares GPU types, :func:`primaldual.models.gpu_choice.declare_type_choice` adds the choice of
one type per job and slot and eq. (2) is written at each type's speed (that module's docstring: the rows and
their exactness); ``work_units`` is then ``(1 - 1e-9) W_i`` and ``work_done`` sums the weighted workers. On a
homogeneous cluster none of it is built.

Pooled relaxation
-----------------
``pooled=True`` merges each pool's servers into one server per resource and slot: a job's workers (PSs) per
slot become one variable, bounded by ``N_i`` and by how many fit across the servers of the pool, and
capacities are summed over servers. Every schedule of (1)-(13) aggregates to a feasible pooled solution of the
same value, so the pooled optimum is an upper bound on OPT, free of the symmetry between identical servers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.models.sparsity import FIT_TOLERANCE, OfflineSparsity, offline_sparsity, schedulable_jobs  # noqa: F401
from primaldual.models.gpu_choice import (
    declare_pooled_type_variables,
    declare_type_choice,
    declare_type_data,
    type_bounds,
    type_work_units,
    weighted_workers,
)
from primaldual.models.offline_parts import (
    UTILITY_FLOOR,
    add_cumulative_work_rows,
    floored_utilities,
    add_pooled_capacity_rows,
    add_pooled_type_capacity_rows,
    add_server_capacity_rows,
)

FORMULATIONS = ("strong", "weak")

#: Each equation of the paper (docs/papers.md, OASiS) and the function of this module that declares it.
EQUATION_FUNCTIONS = (
    ("(1) objective, (8) linearised", "declare_objective"),
    ("(2) work", "declare_work"),
    ("(3) at most N_i workers, (8) none after completion", "declare_run_until_completion"),
    ("(4)-(5) capacities (per server or pooled)", "declare_capacity"),
    ("(6) PS bandwidth covers the workers'", "declare_ps_bandwidth_cover"),
    ("(7) no more PSs than workers", "declare_ps_at_most_workers"),
    ("(8) completion slot: indicators and their tail sums", "declare_completion"),
    ("(9)-(10) nothing before arrival: index sets from a_i", "declare_index_sets"),
    ("(11)-(13) domains (binary, integer; continuous when relaxed)", "declare_variables"),
    ("strong cuts: earliest completion, cumulative work", "declare_index_sets, declare_cumulative_work"),
    ("(2) heterogeneous: one gpu type per slot, work at its speed", "gpu_choice.declare_type_choice"),
)


@dataclass(frozen=True)
class _Options:
    """What the ``declare_*`` functions share: the instance, its sparsity and the build options."""

    instance: Instance
    sparsity: OfflineSparsity
    relax: bool
    strong: bool
    pooled: bool

    @property
    def heterogeneous(self) -> bool:
        return self.instance.cluster.worker_types is not None

    @property
    def arrival(self) -> dict[int, int]:
        return {i: int(self.instance.jobs[i].arrival) for i in self.sparsity.jobs}


def build_offline_model(
    instance: Instance, relax: bool = False, formulation: str = "strong", pooled: bool = False
) -> pyo.ConcreteModel:
    """Build (do not solve) problem (1)-(13) for ``instance`` with (8) linearised (module docstring).

    ``relax=True`` makes every variable continuous within its bounds (the LP relaxation, an upper bound on
    OPT). ``formulation`` is ``"strong"`` (default; adds the earliest-completion and cumulative-work
    inequalities) or ``"weak"``. ``pooled=True`` merges each pool's servers into one (a relaxation).

    The model is composed of one small ``declare_*`` function per group of equations, in the style of Egret
    (:data:`EQUATION_FUNCTIONS` maps each equation of the paper to its function).

    Components: sets ``jobs``, ``job_slots`` (i, t), ``completion_slots`` (i, t), ``worker_placements``
    (i, t, h) and ``ps_placements`` (i, t, k) (or (i, t) when pooled); variables ``admit`` (x_i),
    ``complete`` (omega_it), ``unfinished`` (tail sums of omega), ``workers`` (y), ``parameter_servers`` (z),
    ``work_done`` (strong only); objective ``total_utility``. Each constraint's ``doc`` names the equation it
    encodes. The plain attribute ``objective_slack`` is the most the objective can under-count OPT because
    utilities below :data:`UTILITY_FLOOR` x the largest are counted as 0 (add it to any bound).
    """
    if formulation not in FORMULATIONS:
        raise InputError(f"formulation: must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    options = _Options(instance, offline_sparsity(instance), bool(relax), formulation == "strong", bool(pooled))
    model = pyo.ConcreteModel(
        name=f"offline_{formulation}{'_pooled' if pooled else ''}{'_lp' if relax else ''}",
        doc="OASiS offline problem (1)-(13), completion slot (8) linearised with indicators",
    )
    model.formulation = formulation
    model.relaxed = bool(relax)
    model.pooled = bool(pooled)
    declare_index_sets(model, options)
    declare_parameters(model, options)
    declare_variables(model, options)
    declare_objective(model, options)
    declare_completion(model, options)
    declare_work(model, options)
    declare_run_until_completion(model, options)
    declare_ps_bandwidth_cover(model, options)
    declare_ps_at_most_workers(model, options)
    declare_capacity(model, options)
    if options.strong:
        declare_cumulative_work(model, options)
    if options.heterogeneous:
        declare_type_choice(model, options)
    return model


def declare_index_sets(model, options: _Options) -> None:
    """Jobs, (i, t) from the arrival on (eqs. (9)-(10)) and the completion slots (from the earliest possible
    completion in the strong formulation)."""
    sparsity, horizon, arrival = options.sparsity, options.instance.horizon, options.arrival
    first = {i: (sparsity.earliest_completion[i] if options.strong else arrival[i]) for i in sparsity.jobs}
    model.jobs = pyo.Set(initialize=sparsity.jobs, doc="jobs that can finish by the horizon and fit on some server")
    model.resources = pyo.Set(initialize=range(options.instance.cluster.n_resources), doc="resource types r")
    model.job_slots = pyo.Set(dimen=2, initialize=[(i, t) for i in sparsity.jobs for t in range(arrival[i], horizon)],
                              doc="(i, t) with t >= a_i, eqs. (9)-(10)")
    model.completion_slots = pyo.Set(
        dimen=2, initialize=[(i, t) for i in sparsity.jobs for t in range(first[i], horizon)],
        doc="(i, t) where job i may complete")


def declare_parameters(model, options: _Options) -> None:
    """V_i, N_i, b_i, B_i and the floored utilities f_i(t - a_i)."""
    instance, jobs = options.instance, options.sparsity.jobs
    job_data = {i: instance.jobs[i] for i in jobs}
    if options.heterogeneous:
        declare_type_data(model, options)
        model.work_units = pyo.Param(model.jobs, initialize=type_work_units(instance, jobs),
                                     doc="(1 - 1e-9) W_i, the RHS of eq. (2) in worker-slots of the fastest type")
    else:
        model.work_units = pyo.Param(model.jobs, initialize={i: int(instance.work_units[i]) for i in jobs},
                                     doc="V_i = ceil(W_i), the RHS of eq. (2) in worker-slots")
    model.chunks = pyo.Param(model.jobs, initialize={i: job_data[i].chunks for i in jobs}, doc="N_i, eq. (3)")
    model.worker_bandwidth = pyo.Param(model.jobs, initialize={i: job_data[i].worker_bandwidth_gbps for i in jobs},
                                       doc="b_i (Gbps), eq. (6)")
    model.ps_bandwidth = pyo.Param(model.jobs, initialize={i: job_data[i].ps_bandwidth_gbps for i in jobs},
                                   doc="B_i (Gbps), eq. (6)")
    utility, model.objective_slack = floored_utilities(instance, list(model.completion_slots))
    model.utility = pyo.Param(
        model.completion_slots, initialize=utility,
        doc="f_i(t - a_i), the utility of completing in slot t, eq. (1) (0 below UTILITY_FLOOR x the largest)",
    )


def declare_variables(model, options: _Options) -> None:
    """x, omega, the tail sums of omega, y and z (eqs. (11)-(13)); per server, or per pool when pooled."""
    sparsity, jobs = options.sparsity, options.sparsity.jobs
    integer = pyo.NonNegativeReals if options.relax else pyo.NonNegativeIntegers
    binary = pyo.UnitInterval if options.relax else pyo.Binary
    model.admit = pyo.Var(model.jobs, domain=binary, doc="x_i, eq. (11)")
    model.complete = pyo.Var(model.completion_slots, domain=binary, doc="omega_it: job i completes in slot t")
    # The running sum of the indicators from slot t on; integral whenever the indicators are, so continuous.
    # It keeps every row short: "sum_{t' >= t} omega" would put O(T) indicators in each of O(T) rows per job.
    model.unfinished = pyo.Var(model.job_slots, domain=pyo.NonNegativeReals, bounds=(0, 1),
                               doc="sum_{t' >= t} omega_it': job i is admitted and completes in slot t or later")
    chunks = {i: options.instance.jobs[i].chunks for i in jobs}
    if options.pooled:
        worker_total = {i: int(min(chunks[i], sparsity.worker_fit[i].sum())) for i in jobs}
        ps_total = {i: int(min(chunks[i], sparsity.ps_fit[i].sum())) for i in jobs}
        if options.heterogeneous:  # one pool per gpu type
            declare_pooled_type_variables(model, options, integer)
        else:
            model.worker_placements = pyo.Set(dimen=2, initialize=list(model.job_slots), doc="(i, t): workers, pooled")
            model.workers = pyo.Var(model.worker_placements, domain=integer,
                                    bounds=lambda m, i, t: (0, worker_total[i]), doc="sum_h y_ih(t), eq. (12), pooled")
        model.ps_placements = pyo.Set(dimen=2, initialize=list(model.job_slots), doc="(i, t): PSs of job i, pooled")
        model.parameter_servers = pyo.Var(model.ps_placements, domain=integer,
                                          bounds=lambda m, i, t: (0, ps_total[i]), doc="sum_k z_ik(t), eq. (13), pooled")
        model.pool_totals = (worker_total, ps_total)
        return
    worker_servers = {i: np.flatnonzero(sparsity.worker_fit[i]).tolist() for i in jobs}
    ps_servers = {i: np.flatnonzero(sparsity.ps_fit[i]).tolist() for i in jobs}
    model.worker_placements = pyo.Set(
        dimen=3, initialize=[(i, t, h) for i, t in model.job_slots for h in worker_servers[i]],
        doc="(i, t, h): a worker of job i fits on worker server h, t >= a_i")
    model.ps_placements = pyo.Set(
        dimen=3, initialize=[(i, t, k) for i, t in model.job_slots for k in ps_servers[i]],
        doc="(i, t, k): a PS of job i fits on PS server k, t >= a_i")
    model.workers = pyo.Var(model.worker_placements, domain=integer,
                            bounds=lambda m, i, t, h: (0, int(sparsity.worker_fit[i][h])), doc="y_ih(t), eq. (12)")
    model.parameter_servers = pyo.Var(model.ps_placements, domain=integer,
                                      bounds=lambda m, i, t, k: (0, int(sparsity.ps_fit[i][k])), doc="z_ik(t), eq. (13)")
    model.servers_of = (worker_servers, ps_servers)


def _workers_in_slot(m, i, t):
    if m.pooled and hasattr(m, "types_of"):
        return sum(m.workers[i, t, g] for g in m.types_of[i])
    if m.pooled:
        return m.workers[i, t]
    return sum(m.workers[i, t, h] for h in m.servers_of[0][i])


def _ps_in_slot(m, i, t):
    if m.pooled:
        return m.parameter_servers[i, t]
    return sum(m.parameter_servers[i, t, k] for k in m.servers_of[1][i])


def declare_objective(model, options: _Options) -> None:
    """Eq. (1) with (8) linearised: the utility of the completion indicator that is set."""
    model.total_utility = pyo.Objective(
        expr=sum(model.utility[i, t] * model.complete[i, t] for i, t in model.completion_slots),
        sense=pyo.maximize,
        doc="eq. (1): sum_i x_i f_i(t_hat_i - a_i), with (8) linearised by the completion indicators",
    )


def declare_completion(model, options: _Options) -> None:
    """Eq. (8) linearised: ``unfinished`` is the tail sum of the indicators, and it starts at ``admit``."""
    horizon, arrival = options.instance.horizon, options.arrival
    completes_in = set(model.completion_slots)

    def completing(m, i, t):
        return m.complete[i, t] if (i, t) in completes_in else 0

    model.unfinished_definition = pyo.Constraint(
        model.job_slots,
        rule=lambda m, i, t: m.unfinished[i, t]
        == (m.unfinished[i, t + 1] if t + 1 < horizon else 0) + completing(m, i, t),
        doc="eq. (8) linearised: unfinished[i, t] = sum_{t' >= t} complete[i, t']",
    )
    model.admission = pyo.Constraint(
        model.jobs, rule=lambda m, i: m.unfinished[i, arrival[i]] == m.admit[i],
        doc="eqs. (8), (11): an admitted job completes in exactly one slot, a rejected job in none",
    )


def _work_in_slot(m, i, t):
    """Slot t's contribution to eq. (2): its workers, or on a heterogeneous cluster its weighted workers."""
    return weighted_workers(m, i, t) if hasattr(m, "type_weight") else _workers_in_slot(m, i, t)


def declare_work(model, options: _Options) -> None:
    horizon, arrival = options.instance.horizon, options.arrival
    model.work = pyo.Constraint(
        model.jobs,
        rule=lambda m, i: sum(_work_in_slot(m, i, t) for t in range(arrival[i], horizon))
        >= m.work_units[i] * m.admit[i],
        doc="eq. (2): worker-slots cover the work V_i of an admitted job",
    )


def declare_run_until_completion(model, options: _Options) -> None:
    model.run_until_completion = pyo.Constraint(
        model.job_slots, rule=lambda m, i, t: _workers_in_slot(m, i, t) <= m.chunks[i] * m.unfinished[i, t],
        doc="eqs. (3), (8): at most N_i workers in slot t, and none after the completion slot",
    )


def declare_ps_bandwidth_cover(model, options: _Options) -> None:
    model.ps_bandwidth_cover = pyo.Constraint(
        model.job_slots,
        rule=lambda m, i, t: m.worker_bandwidth[i] * _workers_in_slot(m, i, t)
        <= m.ps_bandwidth[i] * _ps_in_slot(m, i, t),
        doc="eq. (6): the PSs' bandwidth covers the workers' bandwidth",
    )


def declare_ps_at_most_workers(model, options: _Options) -> None:
    model.ps_at_most_workers = pyo.Constraint(
        model.job_slots, rule=lambda m, i, t: _ps_in_slot(m, i, t) <= _workers_in_slot(m, i, t),
        doc="eq. (7): no more PSs than workers",
    )


def declare_capacity(model, options: _Options) -> None:
    """Eqs. (4)-(5): per (slot, server, resource), or per (slot, resource) when pooled."""
    instance, jobs, arrival = options.instance, options.sparsity.jobs, options.arrival
    demand_w = {i: instance.jobs[i].worker_demand for i in jobs}
    demand_s = {i: instance.jobs[i].ps_demand for i in jobs}
    if options.pooled and options.heterogeneous:
        add_pooled_capacity_rows(model, instance, jobs, arrival, demand_w, demand_s, *model.pool_totals, workers=False)
        add_pooled_type_capacity_rows(model, instance, jobs, arrival, demand_w,
                                      type_bounds(instance, options.sparsity.worker_fit, jobs))
    elif options.pooled:
        add_pooled_capacity_rows(model, instance, jobs, arrival, demand_w, demand_s, *model.pool_totals)
    else:
        add_server_capacity_rows(model, instance, jobs, arrival, demand_w, demand_s, options.sparsity)


def declare_cumulative_work(model, options: _Options) -> None:
    add_cumulative_work_rows(model, options.arrival, options.instance.horizon, list(model.completion_slots),
                             _work_in_slot)


def model_size(model: pyo.ConcreteModel) -> tuple[int, int]:
    """``(variables, constraints)`` of a built model (active components only)."""
    n_variables = sum(1 for _ in model.component_data_objects(pyo.Var, active=True))
    n_constraints = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    return n_variables, n_constraints


__all__ = [
    "EQUATION_FUNCTIONS", "FORMULATIONS", "OfflineSparsity", "build_offline_model", "declare_capacity",
    "declare_completion", "declare_cumulative_work", "declare_index_sets", "declare_objective",
    "declare_parameters", "declare_ps_at_most_workers", "declare_ps_bandwidth_cover",
    "declare_run_until_completion", "declare_variables", "declare_work", "model_size", "offline_sparsity",
    "schedulable_jobs",
]
