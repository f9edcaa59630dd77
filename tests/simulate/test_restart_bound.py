"""The start-cost relaxation (primaldual/evaluation/restart_bound.py, proofs/oasis-lr.md Lemma R): an upper bound on the
optimum *with* restart costs, and its use wherever OPT/ALG is printed under a restart cost."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primaldual.cli import main
from primaldual.core.generate import generate
from primaldual.offline.solve import solve_offline
from primaldual.offline.options import SolveOptions
from primaldual.evaluation.pipeline import evaluate
from primaldual.sweep.records import dumps_record, read_records
from primaldual.evaluation.restart_bound import EXTRA_WORK_UNITS, RELAXATION_THRESHOLD, start_cost_relaxation
from primaldual.simulation.scheduler import available_schedulers
from primaldual.simulation.simulator import simulate
from primaldual.sweep import Spec, sweep
from primaldual.core.verify import verify
from simulate_helpers import ScriptedScheduler, Sigmoid, make_instance, make_job


@pytest.mark.parametrize("preset, seed", [("tiny", 3), ("small", 4), ("paper", 0)])
def test_the_relaxation_adds_one_worker_slot_of_work_and_changes_nothing_else(preset, seed):
    instance = generate(preset, seed=seed)
    relaxed = start_cost_relaxation(instance, 0.1)
    assert np.array_equal(relaxed.work_units, instance.work_units + EXTRA_WORK_UNITS)
    assert relaxed.cluster is instance.cluster and relaxed.horizon == instance.horizon
    for old, new in zip(instance.jobs, relaxed.jobs):
        assert (new.arrival, new.chunks, new.utility, new.worker_bandwidth_gbps, new.ps_bandwidth_gbps) == (
            old.arrival, old.chunks, old.utility, old.worker_bandwidth_gbps, old.ps_bandwidth_gbps)
        assert np.array_equal(new.worker_demand, old.worker_demand) and np.array_equal(new.ps_demand, old.ps_demand)
    assert relaxed.meta["relaxation"] == {"name": "start-cost", "restart_cost": 0.1, "extra_work_units": 1}


@pytest.mark.parametrize("cost", [0.0, RELAXATION_THRESHOLD / 2, RELAXATION_THRESHOLD])
def test_without_a_restart_cost_that_loses_work_the_relaxation_is_the_instance(cost):
    instance = generate("tiny", seed=1)
    assert start_cost_relaxation(instance, cost) is instance


def test_hand_computed_one_job_the_bound_is_attained():
    """4 worker-slots on 2 workers: at F = 0 two slots (completion duration 1); under F = 0.1 the start supplies
    1.8, so a third slot is needed, and the relaxation (5 worker-slots on 2 workers) needs three slots too:
    its optimum f(2) is exactly what a steady placement earns under the cost."""
    utility = Sigmoid(10.0, 1.0, 1.0)
    instance = make_instance([make_job(work=4, chunks=2, utility=utility)], horizon=6,
                             worker_capacity=((4.0, 8.0),))
    relaxed = start_cost_relaxation(instance, 0.1)
    assert int(relaxed.work_units[0]) == 5
    steady = simulate(instance, ScriptedScheduler({t: {0: ([2], [1])} for t in range(3)}), restart_cost=0.1)
    assert steady.metrics.completion_slots == {0: 2}
    assert solve_offline(instance).objective == pytest.approx(utility(1))
    assert solve_offline(relaxed).objective == pytest.approx(utility(2)) == pytest.approx(steady.utility)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), preset=st.sampled_from(["tiny", "small"]),
       cost=st.floats(1e-6, 0.9), name=st.sampled_from(sorted(available_schedulers())))
def test_lemma_r_every_job_completed_under_a_restart_cost_received_one_more_worker_slot(seed, preset, cost, name):
    instance = generate(preset, seed=seed)
    result = simulate(instance, name, restart_cost=cost)
    relaxed = start_cost_relaxation(instance, cost)
    for i, assignment in result.schedule.assignments.items():
        assert int(assignment.workers.sum()) >= int(instance.work_units[i]) + 1, (i, cost)
    # ... so the schedule is one of the relaxation's, with the same utility: the relaxation's optimum bounds it.
    check = verify(relaxed, result.schedule)
    assert check.feasible, check.violations[:3]
    assert check.utility == pytest.approx(result.utility, rel=1e-12, abs=1e-12)


@pytest.fixture()
def exact_out_of_reach(monkeypatch):
    """The evaluation as on a model too large for the exact restart ILP: the relaxation's interval."""
    import primaldual.evaluation.restart_opt as restart_opt

    monkeypatch.setattr(restart_opt, "EXACT_RESTART_PLACEMENTS", -1)


@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("seed", [2, 7, 13])
def test_where_the_exact_model_is_in_reach_opt_is_a_proven_point_below_the_relaxation(seed):
    instance = generate("tiny", seed=seed)
    names = ["oasis", "oasis-lr", "rrh", "fifo", "greedy"]
    costly = evaluate(instance, names, solve=SolveOptions(time_limit=60), restart_cost=0.1)
    assert costly.interval.proven and costly.interval.low == costly.interval.high
    assert costly.offline_entry["model"] == "restart" and costly.offline_entry["status"] == "optimal"
    relaxed_opt = solve_offline(start_cost_relaxation(instance, 0.1)).objective
    assert costly.interval.high <= relaxed_opt * (1 + 1e-9) + 1e-9
    for name, outcome in costly.outcomes.items():
        assert outcome.utility <= costly.interval.high * (1 + 1e-9) + 1e-9
        assert costly.ratios[name].proven and costly.ratios[name].lower == costly.ratios[name].upper


@pytest.mark.fast_tier(1)
@pytest.mark.parametrize("seed", [2, 7, 13])
def test_the_interval_under_a_restart_cost_is_of_the_relaxation_and_holds_every_schedule(seed, exact_out_of_reach):
    instance = generate("tiny", seed=seed)
    names = ["oasis", "oasis-lr", "rrh", "fifo", "greedy"]
    solve = SolveOptions(time_limit=60)
    free = evaluate(instance, names, solve=solve)
    costly = evaluate(instance, names, solve=solve, restart_cost=0.1)
    assert free.relaxation is None and free.offline_entry["relaxation"] is None
    assert costly.relaxation == {"name": "start-cost", "restart_cost": 0.1, "extra_work_units": 1}
    assert costly.offline_entry["relaxation"] == costly.relaxation
    relaxed_opt = solve_offline(start_cost_relaxation(instance, 0.1)).objective
    assert costly.interval.high == pytest.approx(relaxed_opt, rel=1e-6, abs=1e-9)
    assert costly.interval.high <= free.interval.high * (1 + 1e-9) + 1e-9  # never looser than OPT_0
    assert not costly.warnings
    for name, outcome in costly.outcomes.items():
        assert outcome.utility <= costly.interval.high * (1 + 1e-9) + 1e-9
        assert not costly.ratios[name].proven  # the relaxation's optimum is a bound, not OPT
    # The lower end is a schedule verified at the restart cost: the best online one, or the relaxation's
    # schedule replayed through the simulator (issue 63), whichever earns more; never less than any scheduler.
    low = costly.interval
    assert low.low_method.startswith("online:") or low.low_method == "relaxation-replayed"
    assert low.low >= max(outcome.utility for outcome in costly.outcomes.values()) - 1e-9


@pytest.mark.slow  # compare with the relaxation solved (4 s); the interval tests above stay fast
def test_compare_prints_and_writes_the_relaxation(tmp_path, capsys, exact_out_of_reach):
    path = tmp_path / "i.json"
    assert main(["generate", "--preset", "tiny", "--seed", "7", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["compare", str(path), "--schedulers", "oasis-lr,rrh", "--opt", "--restart-cost", "0.1"]) == 0
    text = capsys.readouterr().out
    assert "OPT bound" in text and "start-cost relaxation" in text and "Lemma R" in text
    assert main(["compare", str(path), "--schedulers", "oasis-lr,rrh", "--opt", "--restart-cost", "0.1",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["relaxation"]["name"] == "start-cost" and out["opt"]["relaxation"] == out["relaxation"]
    assert main(["compare", str(path), "--schedulers", "oasis-lr,rrh", "--opt", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["relaxation"] is None and out["opt"]["relaxation"] is None


def test_a_version_2_record_with_a_restart_cost_is_recomputed_and_one_without_is_reused(tmp_path):
    # Version-2 records bounded OPT under restart costs by the model without them; their keys are today's.
    with ThreadPoolExecutor(1) as executor:
        for cost, recomputed in ((0.1, 1), (0.0, 0)):
            out = tmp_path / f"r{cost}.jsonl"
            spec = Spec(preset="tiny", seed=5, schedulers=("rrh",), opt=False, restart_cost=cost)
            record = sweep([spec], out, executor=executor, progress=False).records[0]
            assert record["version"] == 3
            out.write_text(dumps_record({**record, "version": 2}) + "\n")
            assert sweep([spec], out, executor=executor, progress=False).computed == recomputed
            assert read_records(out)[record["key"]]["version"] == (3 if recomputed else 2)


def test_at_the_edge_of_the_ranges_the_bound_falls_back_to_the_instance_with_a_warning():
    """A job whose work already fills the format's limit (slots x W = 1e8) cannot get one more worker-slot:
    the evaluation bounds OPT by the optimum without restart costs, still valid, and says so."""
    from primaldual.core.domains import MAX_WORK_CELLS
    from primaldual.evaluation.restart_bound import relaxation_or_instance

    work = MAX_WORK_CELLS // 2  # two slots from arrival to the horizon: 2 x W = 1e8 exactly
    instance = make_instance([make_job(work=work, chunks=1)], horizon=2, worker_capacity=((4.0, 8.0),))
    with pytest.raises(Exception, match="too large"):
        start_cost_relaxation(instance, 0.1)
    same, warning = relaxation_or_instance(instance, 0.1)
    assert same is instance and "start-cost relaxation was not built" in warning and "too large" in warning
    evaluation = evaluate(instance, ["fifo"], restart_cost=0.1)
    assert evaluation.relaxation is None and any("not built" in w for w in evaluation.warnings)


def test_compare_prints_the_proven_restart_optimum(tmp_path, capsys):
    path = tmp_path / "i.json"
    assert main(["generate", "--preset", "tiny", "--seed", "7", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["compare", str(path), "--schedulers", "oasis-lr,rrh", "--opt", "--restart-cost", "0.1"]) == 0
    text = capsys.readouterr().out
    assert "proven by the exact restart model" in text and "OPT bound" not in text
