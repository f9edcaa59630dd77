"""The offline optimum on heterogeneous clusters (issue 64, item 2) agrees with an independent brute force.

Tiny instances (2-3 jobs, 3-5 slots, two worker servers of two gpu types), fresh seeds drawn by hypothesis:
``solve_offline``'s OPT (the Pyomo model and the matrix path) equals :func:`het_brute_force_optimum`, every
solved schedule passes the verifier, and the relaxations (LP, pooled per type) bound it from above.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from het_bruteforce import het_brute_force_optimum

from primaldual.core.generate import generate
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT
from primaldual.offline.solve import solve_offline

PAIRS = ([("v100", 1), ("p100", 1)], [("p100", 1), ("k80", 1)], [("k80", 1), ("v100", 1)])


def tiny_heterogeneous(seed: int, jobs: int, horizon: int, pair: int):
    return generate("tiny", seed, jobs=jobs, horizon=horizon, gpu_types=PAIRS[pair])


def check_against_brute_force(instance) -> float:
    expected, choice = het_brute_force_optimum(instance)
    witness = verify(instance, Schedule({i: JobSchedule(y, z) for i, (y, z) in choice.items()}))
    assert witness.feasible and witness.utility == pytest.approx(expected, abs=1e-9)
    for builder in ("pyomo",):
        result = solve_offline(instance, EXACT.replace(builder=builder))
        assert result.status == "optimal", (builder, result.message)
        assert verify(instance, result.schedule).feasible, builder
        assert result.objective == pytest.approx(expected, rel=1e-7, abs=1e-7), builder
        assert result.bound >= result.objective - 1e-9
    for kwargs in ({"method": "lp"}, {"method": "lp", "formulation": "weak"}, {"method": "pooled"}):
        relaxation = solve_offline(instance, EXACT.replace(**kwargs))
        assert relaxation.status == "optimal"
        assert relaxation.bound >= expected - 1e-7 * max(1.0, expected), kwargs
    return expected


@settings(derandomize=True, max_examples=36, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6), jobs=st.integers(2, 3), horizon=st.integers(3, 5),
       pair=st.integers(0, len(PAIRS) - 1))
def test_heterogeneous_opt_matches_brute_force(seed, jobs, horizon, pair):
    check_against_brute_force(tiny_heterogeneous(seed, jobs, horizon, pair))
