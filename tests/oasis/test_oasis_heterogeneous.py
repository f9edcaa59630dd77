"""OASiS on heterogeneous clusters (issue 64): every plan verifies, and the certificate (weak duality with the
relaxed subroutine, proofs/oasis.md section 2b) and the standalone bound bound OPT on every run.

OPT comes from :func:`primaldual.offline.solve.solve_offline`, which tests/offline/test_offline_heterogeneous.py
checks against a brute force on tiny heterogeneous instances.
"""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.core.generate import generate
from primaldual.core.verify import verify
from primaldual.oasis.engine import run_oasis
from primaldual.offline.solve import solve_offline
from primaldual.simulation.simulator import simulate

#: Fresh seeds (none used by another test of this folder); three type mixes.
CASES = [(seed, mix) for seed in range(7100, 7110)
         for mix in ([("v100", 1), ("k80", 1)], [("p100", 1), ("v100", 1), ("k80", 1)], [("k80", 2), ("v100", 1)])]
TOLERANCE = 1e-6


@pytest.mark.fast_tier(10)  # the other 20 in the slow tier (CI runs both)
@pytest.mark.parametrize("seed, mix", CASES)
def test_oasis_plans_verify_and_its_certificate_bounds_opt(seed, mix):
    instance = generate("tiny", seed=seed, gpu_types=mix)
    offline = solve_offline(instance)
    assert offline.status == "optimal"
    result = run_oasis(instance)
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    certificate = result.certificate
    opt = offline.objective
    assert report.utility <= opt + TOLERANCE * max(1.0, opt)
    assert certificate.dual_objective >= opt - TOLERANCE * max(1.0, opt)
    assert certificate.standalone_bound >= opt - TOLERANCE * max(1.0, opt)
    # Dual feasibility on the schedules that matter: each job of OPT's schedule pays at most mu_i (final prices).
    for i, assignment in offline.schedule.assignments.items():
        job = instance.jobs[i]
        workers, parameter_servers = assignment.workers, assignment.parameter_servers
        cost = float(np.einsum("th,thr,r->", workers, result.worker_prices, job.worker_demand))
        cost += float(np.einsum("tk,tkr,r->", parameter_servers, result.ps_prices, job.ps_demand))
        completion = int(np.flatnonzero(workers.sum(axis=1))[-1])
        payoff = float(job.utility(completion - job.arrival)) - cost
        assert certificate.mu_final[i] >= payoff - TOLERANCE * max(1.0, abs(payoff))
    # The simulator plays the same plans back: the same utility, every slot on one type.
    simulated = simulate(instance, "oasis")
    assert simulated.utility == pytest.approx(report.utility)
    assert verify(instance, simulated.schedule).feasible


@pytest.mark.slow  # 8 small instances, simulated twice (about 10 s); tests/oasis/test_typed_dual.py cuts by hand
@pytest.mark.parametrize("seed", range(7300, 7308))
def test_plans_end_where_the_work_is_done(seed):
    """The inner search rounds progress down, so a plan can be done before the programme's last slot; the plan is
    cut there (subroutine ``_trim``), so the simulator never sees an allocation after a completion, and every
    plan's cost is its own (the payoff recomputed from its placement)."""
    instance = generate("small", seed=seed, gpu_types=[("v100", 1), ("p100", 1), ("k80", 2)])
    for name in ("oasis", "greedy"):
        result = simulate(instance, name)
        assert verify(instance, result.schedule).feasible
    oasis = run_oasis(instance)
    for decision in oasis.decisions:
        if decision.admitted:
            plan = oasis.schedule.assignments[decision.job]
            done = (plan.workers.sum(axis=0) @ np.eye(len(instance.cluster.gpu_types))[
                instance.cluster.worker_type_index] / instance.work_by_type[decision.job]).sum()
            assert done >= 1 - 1e-9
            last = np.flatnonzero(plan.workers.sum(axis=1))[-1]
            before = plan.workers[:last].sum(axis=0) @ np.eye(len(instance.cluster.gpu_types))[
                instance.cluster.worker_type_index] / instance.work_by_type[decision.job]
            assert before.sum() < 1 - 1e-9
