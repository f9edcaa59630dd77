"""The direct matrix path (issue 11, item 2) against the Pyomo model, the declarative reference: the same row
and column counts, the same LP optimum and the same ILP optimum on many random tiny instances, and a schedule
that verifies."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.models.offline import build_offline_model, model_size
from primaldual.offline.solve import solve_offline
from primaldual.offline.matrix import build_matrix_model
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=100_000), jobs=st.integers(min_value=1, max_value=6))
def test_matrix_and_pyomo_models_agree_on_tiny_instances(seed, jobs):
    instance = generate("tiny", seed, jobs=jobs)
    matrix = build_matrix_model(instance)
    assert (matrix.n_variables, matrix.n_constraints) == model_size(build_offline_model(instance))
    for method in ("lp", "ilp"):
        by_matrix = solve_offline(instance, EXACT.replace(method=method, builder="matrix"))
        by_pyomo = solve_offline(instance, EXACT.replace(method=method, builder="pyomo"))
        assert by_matrix.details.get("builder", "matrix") == "matrix" or by_matrix.n_variables == 0
        assert by_matrix.status == by_pyomo.status == "optimal"
        assert by_matrix.objective == pytest.approx(by_pyomo.objective, rel=1e-7, abs=1e-9)
        if method == "ilp":
            assert verify(instance, by_matrix.schedule).feasible


@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("seed", [0, 3])
def test_matrix_path_on_small_instances(seed):
    instance = generate("small", seed)
    matrix = build_matrix_model(instance)
    assert (matrix.n_variables, matrix.n_constraints) == model_size(build_offline_model(instance))
    by_matrix = solve_offline(instance, EXACT.replace(builder="matrix"))
    by_pyomo = solve_offline(instance, EXACT.replace(builder="pyomo"))
    assert by_matrix.details["builder"] == "matrix" and by_pyomo.details["builder"] == "pyomo"
    assert by_matrix.status == by_pyomo.status == "optimal"
    assert by_matrix.objective == pytest.approx(by_pyomo.objective, rel=1e-7)
    assert verify(instance, by_matrix.schedule).feasible


def test_matrix_builder_refuses_what_it_does_not_cover():
    from primaldual.core.errors import InputError

    with pytest.raises(InputError, match="--builder"):
        solve_offline(generate("tiny", 0), EXACT.replace(method="pooled", builder="matrix"))
    with pytest.raises(InputError, match="--builder"):
        solve_offline(generate("tiny", 0), EXACT.replace(builder="numpy"))


def _row_activity(model, x):
    """``A x`` from the compressed-column arrays."""
    import numpy as np

    column_of_entry = np.repeat(np.arange(model.n_variables), np.diff(model.starts))
    return np.bincount(model.indices, weights=model.values * x[column_of_entry], minlength=model.n_constraints)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=100_000), jobs=st.integers(min_value=1, max_value=8),
       scheduler=st.sampled_from(["fifo", "greedy", "drf"]))
def test_a_schedule_written_as_a_start_vector_is_a_feasible_point_of_the_same_value(seed, jobs, scheduler):
    import numpy as np

    from primaldual.offline.matrix import start_vector
    from primaldual.simulation.simulator import simulate

    instance = generate("tiny", seed, jobs=jobs)
    schedule = simulate(instance, scheduler).schedule
    model = build_matrix_model(instance)
    x = start_vector(model, instance, schedule)
    activity = _row_activity(model, x)
    assert np.all(activity >= model.row_lower - 1e-9) and np.all(activity <= model.row_upper + 1e-9)
    assert np.all(x >= model.col_lower) and np.all(x <= model.col_upper)
    assert np.all(x[model.integer] == np.rint(x[model.integer]))
    assert model.cost @ x == pytest.approx(verify(instance, schedule).utility, abs=model.objective_slack + 1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=100_000), jobs=st.integers(min_value=2, max_value=6))
def test_matrix_and_pyomo_paths_agree_with_a_mip_start(seed, jobs):
    from primaldual.simulation.simulator import simulate

    instance = generate("tiny", seed, jobs=jobs)
    start = simulate(instance, "fifo").schedule
    by_matrix = solve_offline(instance, EXACT.replace(builder="matrix"), start=start)
    by_pyomo = solve_offline(instance, EXACT.replace(builder="pyomo"), start=start)
    assert by_matrix.details.get("builder", "matrix") == "matrix" or by_matrix.n_variables == 0
    assert by_matrix.status == by_pyomo.status == "optimal"
    assert by_matrix.objective == pytest.approx(by_pyomo.objective, rel=1e-7, abs=1e-9)
    assert by_matrix.objective >= by_matrix.start_objective - 1e-9
    assert verify(instance, by_matrix.schedule).feasible


def test_highs_takes_the_mip_start_of_the_matrix_path():
    """Stopped at once, HiGHS has no solution of its own but returns the start it was given."""
    from primaldual.offline.matrix import solve_matrix_model, start_vector
    from primaldual.simulation.simulator import simulate

    instance = generate("small", 2, jobs=30, horizon=40)
    start = simulate(instance, "greedy").schedule
    model = build_matrix_model(instance)
    outcome, values = solve_matrix_model(model, relax=False, time_limit=1e-3, mip_gap=None, threads=1,
                                         start=start_vector(model, instance, start))
    assert outcome.status == "time_limit" and outcome.has_solution
    assert outcome.objective == pytest.approx(verify(instance, start).utility, abs=model.objective_slack + 1e-9)
