"""The exact model of the simulator's restart rule (``primaldual.models.restart``): equal to a brute force on
tiny instances, equal to what the simulator charges (a seeded online schedule satisfies every row; the optimal
schedule replayed through ``simulate`` earns exactly the model's objective), and what ``compare --opt
--restart-cost`` and ``solve --restart-cost`` report: a proven point."""

import json

import pyomo.environ as pyo
import pytest
from offline_helpers import run
from restart_bruteforce import restart_brute_force

from primaldual.core.files import save_instance
from primaldual.core.generate import generate
from primaldual.core.verify import verify
from primaldual.evaluation.compare import compare
from primaldual.evaluation.restart_opt import exact_restart_opt, replay_utility
from primaldual.models.restart import WORK_TOLERANCE, build_restart_model
from primaldual.offline.restart import seed_restart_model, solve_restart_offline
from primaldual.simulation.simulator import WORK_TOLERANCE as SIMULATOR_TOLERANCE
from primaldual.simulation.simulator import simulate

#: Tiny seeds whose brute force takes well under a second each.
TINY_SEEDS = (0, 1, 2, 3, 4, 6, 7, 9, 10, 11)


def test_the_model_reads_the_simulators_completion_tolerance():
    assert WORK_TOLERANCE == SIMULATOR_TOLERANCE


@pytest.mark.parametrize("restart_cost", [0.1, 0.5])
@pytest.mark.parametrize("seed", TINY_SEEDS)
def test_the_restart_optimum_equals_a_brute_force_and_its_replay(seed, restart_cost):
    instance = generate("tiny", seed)
    expected, _ = restart_brute_force(instance, restart_cost)
    solved = solve_restart_offline(instance, restart_cost)
    assert solved.status == "optimal"
    assert solved.objective == pytest.approx(expected, rel=1e-7, abs=1e-9)
    # The simulator itself earns the model's objective with the model's schedule.
    utility, replayed = replay_utility(instance, solved.schedule, restart_cost)
    assert utility == pytest.approx(solved.objective, rel=1e-9, abs=1e-12)
    assert verify(instance, replayed).feasible


def test_restart_costs_change_the_optimum_somewhere_in_the_tiny_seeds():
    # Otherwise the brute-force test above could not tell the restart model from the plain one.
    changed = [seed for seed in TINY_SEEDS
               if restart_brute_force(generate("tiny", seed), 0.5)[0] < restart_brute_force(generate("tiny", seed), 0.0)[0] - 1e-9]
    assert changed


def _violations(model):
    """Rows of the model the current values break (beyond 1e-7), by name."""
    bad = []
    for row in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(row.body)
        if (row.has_lb() and body < pyo.value(row.lower) - 1e-7) or (row.has_ub() and body > pyo.value(row.upper) + 1e-7):
            bad.append(row.name)
    return bad


@pytest.mark.parametrize("scheduler", ["fifo", "drf", "oasis", "rrh"])
def test_every_online_schedule_is_a_point_of_the_model_worth_its_simulated_utility(scheduler):
    # The rule tied to the simulator: its charges, written into the model's variables by the simulator's own
    # definition, satisfy every row, and the objective is the simulator's utility.
    instance = generate("small", 3, jobs=6)
    result = simulate(instance, scheduler, restart_cost=0.1)
    model = build_restart_model(instance, 0.1)
    seed_restart_model(model, instance, result.schedule)
    assert _violations(model) == []
    assert pyo.value(model.total_utility) == pytest.approx(result.utility, rel=1e-9)


def test_exact_opt_on_a_small_instance_is_proven_and_replays_exactly():
    instance = generate("small", 5, jobs=6)
    best = max((simulate(instance, name, restart_cost=0.1) for name in ("fifo", "drf", "oasis")), key=lambda r: r.utility)
    opt = exact_restart_opt(instance, 0.1, start=best.schedule, start_utility=best.utility, start_source="best")
    assert opt.proven and opt.low == opt.high and opt.low >= best.utility - 1e-9
    assert replay_utility(instance, opt.schedule, 0.1)[0] == pytest.approx(opt.low, rel=1e-12)


def test_compare_at_a_restart_cost_reports_a_proven_point():
    comparison = compare(generate("tiny", 9), opt=True, restart_cost=0.1, time_limit=30)
    interval = comparison.summary["opt_interval"]
    assert interval["proven"] and interval["low"] == interval["high"]
    assert comparison.summary["opt"]["model"] == "restart" and comparison.summary["opt"]["status"] == "optimal"
    for row in comparison.summary["rows"]:
        ratio = row["ratio"]
        assert ratio["proven"] and ratio["lower"] == ratio["upper"] == ratio["point"]


def test_solve_with_a_restart_cost_on_the_command_line(capsys, tmp_path):
    path = tmp_path / "tiny.json"
    save_instance(generate("tiny", 1), path)
    code, out, err = run(capsys, "solve", path, "--restart-cost", "0.1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["proven"] and data["status"] == "optimal" and data["utility"] == data["bound"]
    assert data["utility"] == pytest.approx(restart_brute_force(generate("tiny", 1), 0.1)[0], rel=1e-7)
    code, _, err = run(capsys, "solve", path, "--restart-cost", "1.5")
    assert code == 2 and "--restart-cost" in err and "Traceback" not in err


def test_a_relaxation_bound_that_meets_the_replayed_utility_proves_opt_and_a_looser_one_does_not():
    from primaldual.evaluation.bounds import OptInterval
    from primaldual.evaluation.restart_opt import RestartOpt, restart_interval
    from primaldual.offline.restart import RestartSolve

    solve = RestartSolve(0.1, None, 10.0, 12.0, "time_limit", "highs", "x", 1, 1, 0.0, 0.0)
    opt = RestartOpt(low=10.0, high=12.0, low_source="solver", proven=False, solve=solve, schedule=None)
    for relaxation_high, proven in ((10.0 + 1e-9, True), (10.5, False)):
        interval = OptInterval(9.0, relaxation_high, "online:fifo", "solver", False, {"online:fifo": 9.0},
                               {"standalone": 20.0, "solver": relaxation_high})
        merged = restart_interval(interval, opt)
        assert merged.low == 10.0 and merged.low_method == "restart_solver" and merged.proven is proven
        assert (merged.high == merged.low) if proven else merged.high == relaxation_high
