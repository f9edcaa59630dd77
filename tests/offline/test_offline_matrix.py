"""The direct matrix path (issue 11, item 2) against the Pyomo model, the declarative reference: the same row
and column counts, the same LP optimum and the same ILP optimum on many random tiny instances, and a schedule
that verifies."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.generate import generate
from primaldual.models.offline import build_offline_model, model_size
from primaldual.offline import solve_offline
from primaldual.offline_matrix import build_matrix_model
from primaldual.verify import verify


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=100_000), jobs=st.integers(min_value=1, max_value=6))
def test_matrix_and_pyomo_models_agree_on_tiny_instances(seed, jobs):
    instance = generate("tiny", seed, jobs=jobs)
    matrix = build_matrix_model(instance)
    assert (matrix.n_variables, matrix.n_constraints) == model_size(build_offline_model(instance))
    for method in ("lp", "ilp"):
        by_matrix = solve_offline(instance, method=method, builder="matrix")
        by_pyomo = solve_offline(instance, method=method, builder="pyomo")
        assert by_matrix.details.get("builder", "matrix") == "matrix" or by_matrix.n_variables == 0
        assert by_matrix.status == by_pyomo.status == "optimal"
        assert by_matrix.objective == pytest.approx(by_pyomo.objective, rel=1e-7, abs=1e-9)
        if method == "ilp":
            assert verify(instance, by_matrix.schedule).feasible


@pytest.mark.parametrize("seed", [0, 3])
def test_matrix_path_on_small_instances(seed):
    instance = generate("small", seed)
    matrix = build_matrix_model(instance)
    assert (matrix.n_variables, matrix.n_constraints) == model_size(build_offline_model(instance))
    by_matrix = solve_offline(instance, builder="matrix")
    by_pyomo = solve_offline(instance, builder="pyomo")
    assert by_matrix.details["builder"] == "matrix" and by_pyomo.details["builder"] == "pyomo"
    assert by_matrix.status == by_pyomo.status == "optimal"
    assert by_matrix.objective == pytest.approx(by_pyomo.objective, rel=1e-7)
    assert verify(instance, by_matrix.schedule).feasible


def test_matrix_builder_refuses_what_it_does_not_cover():
    from primaldual.errors import InputError

    with pytest.raises(InputError, match="--builder"):
        solve_offline(generate("tiny", 0), method="pooled", builder="matrix")
    with pytest.raises(InputError, match="--builder"):
        solve_offline(generate("tiny", 0), builder="numpy")
