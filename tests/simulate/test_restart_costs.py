"""Restart costs in the simulator (issue 10, item 5), abandoned jobs and promises, for every scheduler alike."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.simulation.scheduler import Allocation, OnlineScheduler
from primaldual.simulation.simulator import Promises, simulate
from primaldual.core.verify import verify
from simulate_helpers import Constant, ScriptedScheduler, Sigmoid, make_instance, make_job


def one_job(work=4, horizon=6, utility=None):
    # One worker server (4 gpu, 8 cpu) and one PS server; Z(D) = ceil(D / 4).
    return make_instance([make_job(work=work, chunks=2, utility=utility or Sigmoid(10.0, 1.0, 1.0))],
                         horizon=horizon, worker_capacity=((4.0, 8.0), (4.0, 8.0)))


def test_a_start_costs_f_of_the_first_slot_and_a_steady_placement_nothing_more():
    """Hand-computed: 4 worker-slots on 2 workers; F = 0.5 loses 1 worker-slot in slot 0, so the job needs
    a third slot (without restart costs it completes in slot 1)."""
    instance = one_job()
    script = {t: {0: ([2, 0], [1])} for t in range(3)}
    free = simulate(instance, ScriptedScheduler(script))
    assert free.metrics.completion_slots == {0: 1} and free.metrics.restarts == 1
    costly = simulate(instance, ScriptedScheduler(script), restart_cost=0.5)
    assert costly.metrics.completion_slots == {0: 2}
    assert costly.metrics.restarts == 1
    assert costly.metrics.restart_lost_worker_slots == pytest.approx(1.0)
    assert costly.utility == pytest.approx(float(instance.jobs[0].utility(2)))
    assert verify(instance, costly.schedule).feasible  # it received at least V_i worker-slots


def test_moving_growing_and_resuming_each_count_as_a_restart():
    instance = one_job(work=6, horizon=8)
    script = {
        0: {0: ([1, 0], [1])},   # start: restart, 0.9 done
        1: {0: ([0, 1], [1])},   # moved to server 1: restart, 0.9
        2: {0: ([0, 2], [1])},   # grown: restart, 1.8
        3: {0: ([0, 2], [1])},   # unchanged: 2 (total 5.6)
        5: {0: ([0, 2], [1])},   # resumed after a pause: restart, 1.8 -> done
    }
    scheduler = ScriptedScheduler(script)
    result = simulate(instance, scheduler, restart_cost=0.1)
    assert result.metrics.restarts == 4
    assert result.metrics.restart_lost_worker_slots == pytest.approx(0.1 * (1 + 1 + 2 + 2))
    assert result.metrics.completion_slots == {0: 5}
    # The scheduler sees the ceiling of the fractional remaining work: 6, 5.1 -> 6, 4.2 -> 5, 2.4 -> 3, 0.4 -> 1.
    remaining = [call[3][0] for call in scheduler.calls if call[0] == "allocate"]
    assert remaining == [6, 6, 5, 3, 1, 1]


def test_zero_restart_cost_is_the_paper_model_bit_for_bit():
    instance = generate("small", 2)
    for name in ("rrh", "oasis", "drf"):
        a, b = simulate(instance, name), simulate(instance, name, restart_cost=0.0)
        assert a.to_dict()["job_utilities"] == b.to_dict()["job_utilities"]
        assert a.restart_cost == 0.0 and a.to_dict()["restart_cost"] == 0.0


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2, float("nan"), float("inf"), True, "0.1"])
def test_restart_cost_outside_zero_one_is_refused_by_name(bad):
    with pytest.raises(InputError, match="restart_cost"):
        simulate(one_job(), "rrh", restart_cost=bad)


class Abandoner(OnlineScheduler):
    """Starts every job for one slot and never again: every started job is abandoned."""

    name = "abandoner"

    def allocate(self, slot, state):
        h = self.instance.cluster.n_worker_servers
        k = self.instance.cluster.n_ps_servers
        if slot == 0:
            return {0: Allocation(np.eye(h, dtype=np.int64)[0], np.eye(k, dtype=np.int64)[0])}
        return {}


def test_abandoned_counts_started_jobs_that_never_complete():
    result = simulate(one_job(), Abandoner())
    assert result.metrics.abandoned == 1 and result.metrics.completed == 0
    assert result.promises is None and result.to_dict()["promises"] is None
    assert result.to_dict()["abandoned"] == 1


class Promiser(ScriptedScheduler):
    """A scripted scheduler that promised job 0 a deadline."""

    def __init__(self, script, deadline):
        super().__init__(script)
        self.deadline = deadline
        self.told = None

    def set_restart_cost(self, cost):
        self.told = cost

    def promised_deadlines(self):
        return {0: self.deadline}


@pytest.mark.parametrize("deadline, kept", [(1, 0), (2, 1), (5, 1)])
def test_promises_are_counted_from_the_simulators_own_account(deadline, kept):
    script = {t: {0: ([2, 0], [1])} for t in range(3)}
    scheduler = Promiser(script, deadline)
    result = simulate(one_job(), scheduler, restart_cost=0.5)  # completes in slot 2
    assert scheduler.told == 0.5
    assert result.promises == Promises(made=1, kept=kept, broken=1 - kept)
    assert json.loads(json.dumps(result.to_dict()))["promises"] == result.promises.to_dict()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), cost=st.sampled_from([0.0, 0.05, 0.3]),
       name=st.sampled_from(["rrh", "fifo", "drf", "greedy"]))
def test_restart_costs_only_delay_completions_and_schedules_verify(seed, cost, name):
    """Any scheduler, any restart cost: what completes verifies (eq. (2) holds with the gross workers), the
    loss equals F times the workers of restart slots, and completed + abandoned = started."""
    instance = generate("tiny", seed)
    result = simulate(instance, name, restart_cost=cost)
    assert verify(instance, result.schedule).feasible
    metrics = result.metrics
    assert metrics.completed + metrics.abandoned == metrics.started
    if cost == 0:
        assert metrics.restart_lost_worker_slots == 0
    for i, assignment in result.schedule.assignments.items():
        assert assignment.workers.sum() >= instance.work_units[i]


def test_run_command_takes_restart_cost_and_reports_promises(tmp_path, capsys):
    from primaldual.cli import main

    code = main(["run", "--preset", "small", "--seed", "5", "--jobs", "12", "--scheduler", "oasis-lr",
                 "--restart-cost", "0.1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["restart_cost"] == 0.1
    assert out["promises"]["broken"] == 0 and out["promises"]["made"] == out["promises"]["kept"]
    assert "abandoned" in out and "guarantee" in out["report"]
    assert main(["run", "--preset", "tiny", "--scheduler", "rrh", "--restart-cost", "1"]) == 2
    assert "--restart-cost: must be a number in [0, 1)" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["run", "--preset", "tiny", "--scheduler", "rrh"],
                                     ["compare", "--preset", "tiny"],
                                     ["ratio", "--preset", "tiny", "--instances", "1", "--no-opt"],
                                     ["reproduce", "--quick"],
                                     ["bench", "oasis", "--compare-lr", "--seeds", "0", "--repetitions", "1"]])
@pytest.mark.parametrize("value", ["1", "-0.1", "nan"])
def test_every_command_refuses_a_restart_cost_outside_0_1_naming_the_flag(command, value, tmp_path, capsys):
    """One rule for the flag everywhere (the simulator's, [0, 1) of a slot's work): ratio and compare once
    accepted any F >= 0 at the flag and said it was a utility charged per restart. Nothing is written."""
    from primaldual.cli import main

    out = ["--out", str(tmp_path / "out")] if command[0] in ("ratio", "reproduce") else []
    assert main([*command, *out, "--restart-cost", value]) == 2
    err = capsys.readouterr().err.strip()
    assert "--restart-cost: must be a number in [0, 1)" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value, entry", [("0,2", 2), ("abc", 1), ("0.1,nan", 2), ("-0.1", 1)])
def test_bench_quality_names_the_bad_entry_of_restart_costs(value, entry, capsys):
    from primaldual.cli import main

    assert main(["bench", "oasis", "--quality", "--restart-costs", value]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--restart-costs entry {entry}: must be a number in [0, 1)" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["run", "compare", "ratio"])
def test_restart_cost_help_says_what_the_simulator_charges(command, capsys):
    from primaldual.cli import main

    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "fraction of a slot's work" in text and "utility charged" not in text


def test_planning_schedulers_finish_a_plan_cut_short_by_restart_costs():
    """OASiS plans V_i worker-slots for the restart-free model; with F > 0 the plan ends with work left and
    the job runs on in capacity no plan holds, so it still completes (later, for less)."""
    job = make_job(work=4, chunks=2, worker_demand=(1.0, 0.0), ps_demand=(0.0, 0.0), utility=Constant(10.0))
    instance = make_instance([job], horizon=6, worker_capacity=((4.0, 8.0), (4.0, 8.0)))
    for name in ("oasis", "greedy"):
        free = simulate(instance, name)
        costly = simulate(instance, name, restart_cost=0.3)
        assert free.metrics.completed == costly.metrics.completed == 1
        assert costly.metrics.completion_slots[0] > free.metrics.completion_slots[0]
        assert verify(instance, costly.schedule).feasible


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=4), st.lists(st.integers(0, 3), min_size=0, max_size=4),
       st.sampled_from(["int64", "int32", "float64"]), st.sampled_from(["int64", "int32", "float64"]))
def test_the_same_placement_is_array_equality(one, other, one_type, other_type):
    """The restart rule's comparison of placements (bytes for integer arrays of one dtype) is ``np.array_equal``
    of workers and PSs, whatever the shapes and dtypes; an allocation is the same as itself."""
    a = Allocation(np.array(one, dtype=one_type), np.array(one[:2], dtype=one_type))
    b = Allocation(np.array(other, dtype=other_type), np.array(other[:2], dtype=other_type))
    expected = np.array_equal(a.workers, b.workers) and np.array_equal(a.parameter_servers, b.parameter_servers)
    assert a.same_placement(b) == expected == b.same_placement(a)
    assert a.same_placement(a)
