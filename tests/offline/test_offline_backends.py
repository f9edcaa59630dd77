"""HiGHS has open wrong-answer bugs on small ILPs: it must agree with other real backends here.

CBC and GLPK come from Debian (``coinor-cbc``, ``glpk-utils``); CI installs them. SCIP comes with the dev extra
(``pyscipopt``, whose wheels bundle SCIP), so the cross-solver checks run on a machine that has only PyPI; it is
checked through the matrix path (pyscipopt's own API, the default builder for SCIP) and through Pyomo's
``scip_direct``. Where one is absent the test skips and says so.
"""

import highspy
import pytest
from offline_helpers import require_solver

from primaldual.core.generate import generate
from primaldual.offline.export import write_model
from primaldual.offline.solve import solve_offline
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT

INSTANCES = [("tiny", 4), ("tiny", 7), ("tiny", 11), ("small", 0), ("small", 1), ("small", 4)]
#: Six jobs of the contended ``small`` preset: hard enough to need branching, solved by GLPK in about a second
#: (the preset's ten jobs can keep GLPK busy for minutes).
SMALL_JOBS = 6


def instance_of(preset, seed):
    return generate(preset, seed, jobs=SMALL_JOBS) if preset == "small" else generate(preset, seed)


@pytest.fixture(scope="module")
def highs_optima():
    out = {}
    for preset, seed in INSTANCES:
        result = solve_offline(instance_of(preset, seed), EXACT.replace(solver="highs"))
        assert result.status == "optimal", result.message
        out[preset, seed] = result
    return out


@pytest.mark.parametrize("other", ["cbc", "glpk", "scip"])
@pytest.mark.parametrize(("preset", "seed"), INSTANCES)
def test_backends_agree_on_the_optimum(highs_optima, other, preset, seed):
    require_solver(other)
    instance = instance_of(preset, seed)
    reference = highs_optima[preset, seed]
    result = solve_offline(instance, EXACT.replace(solver=other))
    assert result.status == "optimal", result.message
    assert result.solver == other and result.solver_version not in ("", "unknown")
    assert verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    # Each backend's bound is an upper bound on the other's verified schedule.
    assert result.bound >= reference.objective - 1e-6 * reference.objective
    assert reference.bound >= result.objective - 1e-6 * result.objective


@pytest.mark.parametrize(("preset", "seed"), [("tiny", 4), ("small", 4)])
def test_scip_through_pyomo_agrees_with_the_matrix_path(highs_optima, preset, seed):
    require_solver("scip")
    instance = instance_of(preset, seed)
    result = solve_offline(instance, EXACT.replace(solver="scip", builder="pyomo"))
    assert result.status == "optimal" and result.details["builder"] == "pyomo"
    assert verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(highs_optima[preset, seed].objective, rel=1e-6)


def test_scip_takes_a_mip_start_and_keeps_it_as_a_floor():
    require_solver("scip")
    instance = instance_of("small", 4)
    start = solve_offline(instance, EXACT.replace(solver="highs", time_limit=None, mip_gap=0.5)).schedule
    result = solve_offline(instance, EXACT.replace(solver="scip", time_limit=None), start=start)
    assert result.status == "optimal" and result.objective >= verify(instance, start).utility - 1e-9


@pytest.mark.parametrize("other", ["cbc", "glpk", "scip"])
def test_backends_agree_on_the_lp_relaxation(other):
    require_solver(other)
    instance = instance_of("small", 1)
    values = [solve_offline(instance, EXACT.replace(solver=s, method="lp", formulation="weak")).objective for s in ("highs", other)]
    assert values[0] == pytest.approx(values[1], rel=1e-6)


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_exported_model_resolves_to_the_same_optimum(tmp_path, highs_optima, suffix):
    instance = instance_of("small", 0)
    path = tmp_path / f"offline{suffix}"
    written = write_model(instance, path)
    assert path.exists() and written["format"] == suffix[1:]
    assert written["n_variables"] == highs_optima["small", 0].n_variables
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    assert highs.readModel(str(path)) == highspy.HighsStatus.kOk
    highs.run()
    assert highs.getModelStatus() == highspy.HighsModelStatus.kOptimal
    objective = highs.getInfo().objective_function_value
    assert objective == pytest.approx(highs_optima["small", 0].objective, rel=1e-6)


@pytest.mark.parametrize("builder", ["matrix", "pyomo"])
def test_scip_returns_integral_optima_where_dual_sparsification_did_not(builder):
    # SCIP's dual sparsification presolver returned fractional completion indicators on this instance (a
    # schedule worth less than the objective it claimed); primaldual.backends.scip turns it off.
    require_solver("scip")
    instance = generate("small", 1000, jobs=5)
    reference = solve_offline(instance, EXACT.replace(solver="highs"))
    result = solve_offline(instance, EXACT.replace(solver="scip", builder=builder))
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(reference.objective, rel=1e-7)
