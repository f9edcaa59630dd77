"""OASiS-P on several GPU types (issue 64; proofs/oasis-lr.md, "On several GPU types"): its offers are OASiS-LR's per
type and P2 and P4 read the relaxed typed ``mu`` (:func:`primaldual.oasis.lr.admission.typed_bound`). Against the
brute-force heterogeneous optimum (tests/offline/het_bruteforce.py) on tiny fresh instances: the certificate and
the bound of Theorem G3 are at least OPT (on these seeds also where (C1) fails), P2 holds per admission and
``D <= D_online`` (P4), every schedule verifies with one type per job and slot, and no promise is broken."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from primaldual.core.generate import generate
from primaldual.core.verify import verify
from primaldual.oasis.lr.scheduler import OasisP
from primaldual.simulation.simulator import simulate
from test_oasis_lr_heterogeneous import one_type_per_slot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "offline"))
from het_bruteforce import het_brute_force_optimum  # noqa: E402

PAIRS = ([("v100", 1), ("p100", 1)], [("p100", 1), ("k80", 1)], [("k80", 1), ("v100", 1)])


def run_against_opt(instance, restart_cost: float = 0.0) -> dict:
    """Run OASiS-P on ``instance`` and check it against the brute-force OPT (module docstring)."""
    optimum = het_brute_force_optimum(instance)[0]
    scheduler = OasisP()
    result = simulate(instance, scheduler, restart_cost=restart_cost)  # PromiseBroken would raise here
    report = verify(instance, result.schedule)
    assert report.feasible, [v.message for v in report.violations]
    assert one_type_per_slot(instance, result.schedule)
    assert result.promises.broken == 0 and result.promises.kept == result.promises.made
    assert result.utility <= optimum + 1e-9
    certificate, guarantee = result.report["certificate"], result.report["guarantee"]
    assert certificate["dual_objective"] >= optimum - 1e-6
    assert guarantee["applies"] and guarantee["per_admission_holds"] and guarantee["online_dual_within_bound"]
    assert optimum <= guarantee["bound"] + 1e-6  # on these seeds without (C1) too
    assert guarantee["certificate_within_online_dual"]  # P4: D <= D_online
    return guarantee


@pytest.mark.parametrize("seed", range(5000, 5006))
def test_oasis_p_on_types_bounds_the_brute_force_optimum(seed):
    run_against_opt(generate("tiny", seed, jobs=3, horizon=4, gpu_types=PAIRS[seed % 3]))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5100, 5112))
def test_oasis_p_on_types_bounds_the_brute_force_optimum_slow(seed):
    guarantee = run_against_opt(generate("tiny", seed, jobs=4, horizon=5, gpu_types=PAIRS[seed % 3]),
                                restart_cost=0.1 * (seed % 2))
    assert guarantee["bound"] is not None
