"""The offline problem (1)-(13) *with restart costs*: a Pyomo model of the simulator's restart rule, exactly.

:func:`build_restart_model` is pure: it takes an :class:`~primaldual.core.instance.Instance` and the restart
cost ``F`` in ``[0, 1)`` and returns a ``pyomo.environ.ConcreteModel`` whose optimum is the largest utility any
schedule earns when it is run through :func:`primaldual.simulation.simulator.simulate` with
``restart_cost=F``. It starts from the strong per-server model of :mod:`primaldual.models.offline` (whose
rows stay valid: a schedule that completes under ``F`` received at least ``V_i`` worker-slots) and adds one
``declare_*`` per group of the rule below.

The simulator's rule, and the equation that encodes each part
-------------------------------------------------------------
``primaldual/simulation/simulator.py``, class ``_Restarts``, method ``work``: in each slot ``t`` where job ``i``
runs (``simulate`` drops rows without workers and PSs, and eq. (7) gives no PSs without workers, so "runs"
means ``D_it = sum_h y_ih(t) >= 1``) the job is charged unless ``same = last_slot[i] == t - 1 and
placements[i].same_placement(placement)``, i.e. unless it ran in ``t - 1`` on exactly the same per-server
counts (``Allocation.same_placement`` in ``primaldual/simulation/scheduler.py``: ``array_equal`` of the worker
and of the PS counts). A charged slot supplies ``supplied *= 1 - F``: ``(1 - F) D_it`` worker-slots instead of
``D_it``; ``remaining -= supplied``, and the job completes in the first slot where ``remaining <=
WORK_TOLERANCE`` (after which ``SlotRules.check`` refuses any allocation to it).

* ``restart[i, t]`` (binary, :func:`declare_restart_variables`) may be 0 only where job i's placement in ``t``
  equals its placement in ``t - 1``: :func:`declare_placement_change` writes ``|y_ih(t) - y_ih(t-1)| <=
  fit_ih restart[i, t]`` and the same for ``z_ik``, with ``y(a_i - 1) = z(a_i - 1) = 0`` (nothing runs before
  the arrival, eqs. (9)-(10)), so a start, a resumption after a pause, a resize and a move all force it to 1:
  ``restart[i, t] = 0`` implies ``same`` when the job runs in ``t`` (then it ran in ``t - 1`` with
  ``D_i,t-1 = D_it >= 1`` workers). Where the job does not run, ``restart`` costs nothing (below).
* ``kept[i, t]`` (:func:`declare_kept_work`) is the part of ``D_it`` that escapes the charge: ``kept <=
  D_it``, ``kept <= D_i,t-1`` (0 in the arrival slot) and ``kept <= N_i (1 - restart[i, t])``; so ``kept = D_it``
  exactly when the simulator does not charge, else 0 (at the optimum; less only wastes work).
* :func:`declare_effective_work` is ``remaining <= WORK_TOLERANCE`` at completion: ``sum_t ((1 - F) D_it + F
  kept_it) >= (V_i - WORK_TOLERANCE) x_i``, the simulator's ``supplied`` summed over the slots. A job that never
  completes earns nothing in both (``x_i = 0``; the simulator leaves it out of the schedule).
* The completion slot, eq. (8), and utilities are the base model's: the utility is counted at the indicator
  slot, after which the job has no workers (``run_until_completion``).

Exactness. (a) Any schedule that completes under ``F`` in the simulator gives a solution of the model of
the same utility: ``restart = 1 - same``, ``kept = D same``, the indicator at the simulator's completion slot
(the rows hold by the rule above). (b) Any solution gives a schedule (its counts) whose replay in the
simulator, giving each job its counts until the simulator says it completed, charges a slot only where
``restart = 1``, so the simulator's supplied work is at least the model's in every prefix and each job
completes no later than its indicator slot: its utility is at least the model's (utilities are non-increasing).
So the optima are equal, and an optimal solution replayed earns the optimum.
``tests/offline/test_restart_model.py`` checks both against a brute force over all schedules on tiny instances
and by replaying the optimal schedule through ``simulate``.

Valid cuts (``cuts=True``): the effective work also holds by every completion slot (``effective_done[i, t]
>= (V_i - WORK_TOLERANCE)(x_i - unfinished[i, t + 1])``, the base model's cumulative cut with ``supplied``), and
where ``F > WORK_TOLERANCE`` the start-cost relaxation's integer rounding (the first running slot always
restarts, so ``sum_t D_it >= V_i - tol + F D_first > V_i`` and, being an integer, ``>= V_i + 1``;
:mod:`primaldual.evaluation.restart_bound`): ``sum_t D_it >= (V_i + 1) x_i`` and ``work_done[i, t] >= (V_i +
1)(x_i - unfinished[i, t + 1])``; and no completion before ``a_i + d_i - 1`` with ``d_i`` the fewest slots with
``N_i (d - F) >= V_i - tol`` (the first running slot is charged). None cuts off a schedule of (a).

Heterogeneous clusters (:mod:`primaldual.models.gpu_choice`): ``D_it`` above is the slot's work in worker-slots of
the job's fastest type, ``sum_h (W_i / W_i^{g(h)}) y_iht`` (the simulator's ``Progress`` supplies ``(1 - F) D`` or
``D`` worker-slots on the slot's one type and counts ``sum_g S_g / W^g >= 1 - FRACTION_TOLERANCE``, i.e. that sum
times ``W_i``, the model's ``work_units``, with no further tolerance); a slot that repeats the placement repeats its
type, so ``kept <= D_i,t-1`` still holds. **A change of type is a move**: the job's servers change, so a per-server
count changes and ``restart`` is forced. The start-cost rounding cut is left out (the work is not integral).

Cost: on top of the base model, one binary and one continuous variable per job and slot (two more for the
running sums of the cuts), and two rows per placement variable (its change in each direction).
"""

from __future__ import annotations

import pyomo.environ as pyo

from primaldual.core.errors import InputError
from primaldual.core.instance import Instance
from primaldual.models.gpu_choice import weighted_workers
from primaldual.models.offline import build_offline_model

#: ``primaldual.simulation.simulator.WORK_TOLERANCE``: remaining work at or below it counts as done (a test
#: checks the two are equal; this layer may not import the simulator).
WORK_TOLERANCE = 1e-9

#: Each part of the simulator's restart rule and the function of this module that declares it.
RULE_FUNCTIONS = (
    ("_Restarts.work: same = ran in t-1 and same_placement", "declare_restart_variables, declare_placement_change"),
    ("_Restarts.work: supplied = D, or (1 - F) D when not same", "declare_kept_work"),
    ("simulate: complete when remaining <= WORK_TOLERANCE", "declare_effective_work"),
    ("valid cuts: cumulative effective work, start-cost rounding", "declare_restart_cuts"),
    ("valid cuts: earliest completion with the first slot charged", "declare_earliest_completion"),
)


def check_restart_cost(restart_cost) -> float:
    """``F`` must be a number in ``[0, 1)``; :class:`InputError` otherwise."""
    if isinstance(restart_cost, bool) or not isinstance(restart_cost, (int, float)) \
            or not 0.0 <= float(restart_cost) < 1.0:
        raise InputError(f"restart_cost: must be a number in [0, 1) (a fraction of a slot's work), got "
                         f"{restart_cost!r}")
    return float(restart_cost) + 0.0


def build_restart_model(instance: Instance, restart_cost: float, *, cuts: bool = True,
                        relax: bool = False) -> pyo.ConcreteModel:
    """Build (do not solve) the offline problem with restart cost ``restart_cost`` (module docstring).

    Components beyond :func:`primaldual.models.offline.build_offline_model`'s: ``restart`` (binary per
    ``job_slots``), ``kept`` (continuous per ``job_slots``), the rows ``worker_change_up/down``,
    ``ps_change_up/down``, ``kept_*``, ``effective_work`` and, with ``cuts``, ``effective_done``, ``kept_done``,
    ``cumulative_effective_work``, ``start_cost_work``, ``start_cost_cumulative``. ``model.restart_cost`` is F.
    """
    restart_cost = check_restart_cost(restart_cost)
    model = build_offline_model(instance, relax=relax, formulation="strong")
    model.name = f"offline_restart{'_lp' if relax else ''}"
    model.restart_cost = restart_cost
    arrival = {i: int(instance.jobs[i].arrival) for i in model.jobs}
    declare_restart_variables(model, relax)
    declare_placement_change(model, arrival)
    declare_kept_work(model, arrival)
    declare_effective_work(model, arrival, instance.horizon, restart_cost)
    if cuts:
        declare_restart_cuts(model, arrival, instance.horizon, restart_cost, typed=hasattr(model, "type_weight"))
        declare_earliest_completion(model, arrival, restart_cost)
    return model


def declare_earliest_completion(model, arrival: dict, restart_cost: float) -> None:
    """No job completes before ``a_i + d_i - 1``, ``d_i`` the fewest slots with ``N_i (d - F) >= V_i - tol``: the
    most work ``d`` slots supply is ``N_i`` workers throughout on one placement, the first slot charged."""
    for i in model.jobs:
        chunks, work = model.chunks[i], model.work_units[i]
        slots = 1
        while chunks * (slots - restart_cost) < work - WORK_TOLERANCE:
            slots += 1
        for t in range(arrival[i], arrival[i] + slots - 1):
            if (i, t) in model.complete:
                model.complete[i, t].fix(0)


def _workers(m, i, t):
    """``D_it``, or on a heterogeneous cluster the slot's work in worker-slots of the fastest type."""
    if hasattr(m, "type_weight"):
        return weighted_workers(m, i, t)
    return sum(m.workers[i, t, h] for h in m.servers_of[0][i])


def _required(m, i):
    """The supplied work's target: ``V_i - tol``, or heterogeneous ``(1 - 1e-9) W_i`` (module docstring)."""
    return m.work_units[i] if hasattr(m, "type_weight") else m.work_units[i] - WORK_TOLERANCE


def declare_restart_variables(model, relax: bool) -> None:
    model.restart = pyo.Var(model.job_slots, domain=pyo.UnitInterval if relax else pyo.Binary,
                            doc="1 where job i's placement in slot t may differ from slot t-1 (a charged slot)")
    model.kept = pyo.Var(model.job_slots, domain=pyo.NonNegativeReals,
                         bounds=lambda m, i, t: (0, m.chunks[i]),
                         doc="worker-slots of slot t that are not charged: D_it without a restart, else 0")


def declare_placement_change(model, arrival: dict) -> None:
    """``same_placement``: a per-server count that changes from slot t-1 to t forces ``restart[i, t]``."""
    for pool, (name, var) in enumerate((("worker", model.workers), ("ps", model.parameter_servers))):
        index = list(var.keys())
        keys = set(index)

        def before(m, i, t, s, var=var, keys=keys):
            return var[i, t - 1, s] if t > arrival[i] and (i, t - 1, s) in keys else 0

        def up(m, i, t, s, var=var, before=before):
            return var[i, t, s] - before(m, i, t, s) <= var[i, t, s].ub * m.restart[i, t]

        def down(m, i, t, s, var=var, before=before):
            if t == arrival[i]:
                return pyo.Constraint.Skip  # nothing ran before the arrival
            return before(m, i, t, s) - var[i, t, s] <= var[i, t, s].ub * m.restart[i, t]

        setattr(model, f"{name}_change_up", pyo.Constraint(
            var.index_set(), rule=up, doc=f"same_placement: a {name} count that grows (or starts) is a restart"))
        setattr(model, f"{name}_change_down", pyo.Constraint(
            var.index_set(), rule=down, doc=f"same_placement: a {name} count that shrinks is a restart"))


def declare_kept_work(model, arrival: dict) -> None:
    """``supplied``: the uncharged part ``kept`` is at most the slot's workers, the previous slot's workers
    (a slot that is not charged repeats the previous placement) and 0 on a restart."""
    model.kept_at_most_workers = pyo.Constraint(
        model.job_slots, rule=lambda m, i, t: m.kept[i, t] <= _workers(m, i, t),
        doc="kept <= D_it")
    model.kept_at_most_before = pyo.Constraint(
        model.job_slots, rule=lambda m, i, t: m.kept[i, t] <= (_workers(m, i, t - 1) if t > arrival[i] else 0),
        doc="kept <= D_i,t-1: not charged only if it ran in t-1 (same placement, so the same D)")
    model.kept_without_restart = pyo.Constraint(
        model.job_slots, rule=lambda m, i, t: m.kept[i, t] <= m.chunks[i] * (1 - m.restart[i, t]),
        doc="kept = 0 in a charged slot")


def _supplied(m, i, t, restart_cost: float):
    return (1.0 - restart_cost) * _workers(m, i, t) + restart_cost * m.kept[i, t]


def declare_effective_work(model, arrival: dict, horizon: int, restart_cost: float) -> None:
    """``remaining <= WORK_TOLERANCE``: the work supplied over the job's slots covers ``V_i``."""
    model.effective_work = pyo.Constraint(
        model.jobs, rule=lambda m, i: sum(_supplied(m, i, t, restart_cost) for t in range(arrival[i], horizon))
        >= _required(m, i) * m.admit[i],
        doc="simulate(): the supplied work (1 - F) D + F kept reaches V_i (within WORK_TOLERANCE)")


def declare_restart_cuts(model, arrival: dict, horizon: int, restart_cost: float, typed: bool = False) -> None:
    """The valid cuts of the module docstring (``typed``: without the rounding, whose work is not integral)."""
    model.kept_done = pyo.Var(model.job_slots, domain=pyo.NonNegativeReals, doc="running sum of kept")
    model.kept_done_definition = pyo.Constraint(
        model.job_slots, rule=lambda m, i, t: m.kept_done[i, t]
        == (m.kept_done[i, t - 1] if t > arrival[i] else 0) + m.kept[i, t], doc="running sum of kept")

    def cumulative(m, i, t):
        done = (1.0 - restart_cost) * m.work_done[i, t] + restart_cost * m.kept_done[i, t]
        return done >= _required(m, i) * (m.admit[i] - m.unfinished[i, t + 1])

    model.cumulative_effective_work = pyo.Constraint(
        model.cumulative_work_slots, rule=cumulative,
        doc="a job that completes by slot t has been supplied its work by slot t")
    if restart_cost <= WORK_TOLERANCE or typed:
        return  # the rounding below needs a start that loses more than the tolerance, and integral work
    model.start_cost_work = pyo.Constraint(
        model.jobs, rule=lambda m, i: sum(_workers(m, i, t) for t in range(arrival[i], horizon))
        >= (m.work_units[i] + 1) * m.admit[i],
        doc="start-cost rounding: a completed job received at least V_i + 1 worker-slots")
    model.start_cost_cumulative = pyo.Constraint(
        model.cumulative_work_slots,
        rule=lambda m, i, t: m.work_done[i, t] >= (m.work_units[i] + 1) * (m.admit[i] - m.unfinished[i, t + 1]),
        doc="start-cost rounding by each completion slot")


__all__ = ["RULE_FUNCTIONS", "WORK_TOLERANCE", "build_restart_model", "check_restart_cost",
           "declare_earliest_completion", "declare_effective_work", "declare_kept_work", "declare_placement_change", "declare_restart_cuts",
           "declare_restart_variables"]
