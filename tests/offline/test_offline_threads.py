"""HiGHS sizes one thread scheduler per process: solves that ask for different thread counts must all work."""

import pyomo.environ as pyo

from primaldual.core.generate import generate
from primaldual.offline.solve import solve_offline
from primaldual.backends.solvers import solve_model
from primaldual.offline.options import EXACT


def _model():
    model = pyo.ConcreteModel()
    model.x = pyo.Var(within=pyo.NonNegativeIntegers, bounds=(0, 10))
    model.y = pyo.Var(within=pyo.NonNegativeIntegers, bounds=(0, 10))
    model.capacity = pyo.Constraint(expr=2 * model.x + 3 * model.y <= 12.5)
    model.value = pyo.Objective(expr=model.x + model.y, sense=pyo.maximize)
    return model


def test_changing_thread_counts_in_one_process():
    for threads in (None, 1, 2, 1, None):
        outcome = solve_model(_model(), "highs", threads=threads)
        assert outcome.status == "optimal", (threads, outcome)
        assert outcome.objective == 6.0


def test_offline_solve_with_one_thread_after_a_default_solve():
    """The sweep's case: a scheduler's MILP with HiGHS's default threads, then OPT with threads=1."""
    solve_model(_model(), "highs")
    result = solve_offline(generate("tiny", seed=2), EXACT.replace(threads=1))
    assert result.status == "optimal"
