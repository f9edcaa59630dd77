"""The online loop (primaldual.oasis.engine): feasibility, admission, the scheduler interface, determinism."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oasis_helpers import make_instance, make_job, small_demand_instance
from primaldual.core.errors import InputError
from primaldual.core.generate import generate
from primaldual.oasis.engine import (
    GreedyScheduler,
    OasisScheduler,
    OnlineEngine,
    arrival_order,
    run_greedy,
    run_oasis,
)
from primaldual.oasis.prices import compute_constants
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.simulation.scheduler import SlotState, make_scheduler
from primaldual.core.utility import Constant, Sigmoid
from primaldual.core.verify import verify

INSTANCES = [("tiny", s) for s in range(25)] + [("small", s) for s in range(6)]


@pytest.mark.parametrize("preset,seed", INSTANCES)
def test_every_schedule_passes_verify(preset, seed):
    instance = generate(preset, seed)
    for result in (run_oasis(instance), run_greedy(instance)):
        report = verify(instance, result.schedule)
        assert report.feasible, [v.message for v in report.violations]
        assert report.utility == pytest.approx(result.total_utility, abs=1e-9)
        assert sorted(result.schedule.admitted) == result.admitted
        for decision in result.decisions:
            if decision.admitted:
                assert report.job_utilities[decision.job] == pytest.approx(decision.utility, abs=1e-12)
                assert report.completion_slots[decision.job] == decision.completion_slot


def test_paper_preset_schedule_passes_verify():
    instance = generate("paper", 3, jobs=100)
    result = run_oasis(instance)
    assert verify(instance, result.schedule).feasible
    assert 0 < len(result.admitted) <= 100


@st.composite
def crowded_instances(draw):
    """Demands of a large share of a server (up to all of it), many jobs, few servers."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_worker_servers, n_ps_servers = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    horizon = draw(st.integers(2, 6))
    worker_capacity = rng.choice([4.0, 6.0, 8.0], size=(n_worker_servers, 2))
    ps_capacity = np.column_stack([np.zeros(n_ps_servers), rng.choice([2.0, 5.0], size=n_ps_servers)])
    jobs = []
    for n in range(draw(st.integers(3, 14))):
        chunks = int(rng.integers(1, 6))
        jobs.append(make_job(
            int(rng.integers(0, horizon)), int(rng.integers(1, 3 * chunks + 1)), chunks,
            [float(rng.choice([1.0, 2.5, 4.0])), float(rng.choice([0.7, 3.0, 4.0]))],
            [0.0, float(rng.choice([0.3, 1.0, 2.0]))],
            Sigmoid(float(rng.uniform(1, 100)), float(rng.uniform(0, 2)), float(rng.uniform(0, 4))),
            bandwidth_ratio=float(rng.choice([0.2, 0.5, 1.0])), name=f"job{n}",
        ))
    instance = make_instance(jobs, worker_capacity, ps_capacity, horizon)
    return instance, draw(st.sampled_from([1.0, 1e-9, 1e3]))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(crowded_instances())
def test_capacities_never_exceeded_with_large_demands(case):
    """Lemma (feasibility): the residual caps keep every server within capacity even when one job needs most
    of a server and the prices are too low (price_scale 1e-9) or too high to protect anything."""
    instance, price_scale = case
    result = run_oasis(instance, price_scale=price_scale)
    report = verify(instance, result.schedule)
    assert report.feasible, [v.message for v in report.violations]
    load = np.zeros((instance.horizon,) + instance.cluster.worker_capacity.shape)
    for i, plan in result.schedule.assignments.items():
        load += plan.workers[:, :, None] * instance.jobs[i].worker_demand
    assert np.all(load <= instance.cluster.worker_capacity + 1e-9)
    assert verify(instance, run_greedy(instance).schedule).feasible


def test_rejected_jobs_allocate_nothing_and_change_nothing():
    instance = small_demand_instance(2, n_jobs=120, capacity=10.0)
    engine = OnlineEngine(instance, compute_constants(instance, rule="share"))  # oasis's default rule
    rejected = 0
    for i in arrival_order(instance):
        prices = engine.state.worker_prices.copy(), engine.state.ps_prices.copy()
        used = engine.state.worker_used.copy(), engine.state.ps_used.copy()
        decision = engine.decide(i)
        if not decision.admitted:
            rejected += 1
            assert decision.mu == 0.0 and decision.primal_increase == 0.0 and decision.dual_increase == 0.0
            assert i not in engine.plans
            for before, after in zip(prices + used, (engine.state.worker_prices, engine.state.ps_prices,
                                                     engine.state.worker_used, engine.state.ps_used)):
                assert np.array_equal(before, after)
    assert rejected > 0
    result = engine.result("oasis")
    for decision in result.decisions:
        assert (decision.job in result.schedule) == decision.admitted
    scheduler = OasisScheduler()
    schedule, _ = drive(scheduler, instance)
    assert set(schedule.admitted) == set(result.admitted)


def test_jobs_that_cannot_finish_are_rejected():
    jobs = [
        make_job(0, 2, 2, [1.0, 1.0], [0.0, 1.0], Constant(10.0)),  # fine
        make_job(3, 9, 2, [1.0, 1.0], [0.0, 1.0], Constant(10.0)),  # needs 5 slots, 2 left
        make_job(1, 2, 2, [1.0, 1.0], [0.0, 9.0], Constant(10.0)),  # its PS fits nowhere
        make_job(1, 2, 2, [1.0, 1.0], [0.0, 1.0], Constant(0.0)),  # worth nothing
    ]
    instance = make_instance(jobs, [[4.0, 4.0]], [[0.0, 4.0]], horizon=5)
    assert not instance.can_finish[1]
    for result in (run_oasis(instance), run_greedy(instance)):
        assert result.admitted == [0]
        assert not result.decisions[1].feasible and not result.decisions[2].feasible
        assert result.decisions[3].mu == 0.0


def test_greedy_takes_the_fastest_schedule_and_the_biggest_servers():
    """Without contention greedy finishes every job as early as its N_i allows (the highest utility) and,
    among equally fast schedules, holds the smallest server shares: here the 8-GPU server, not the 2-GPU one."""
    jobs = [make_job(a, 6, 3, [1.0, 1.0], [0.0, 1.0], Sigmoid(20.0, 1.0, 1.0), bandwidth_ratio=0.5)
            for a in (0, 0, 1)]
    instance = make_instance(jobs, [[2.0, 2.0], [8.0, 8.0]], [[0.0, 2.0], [0.0, 8.0]], horizon=6)
    result = run_greedy(instance)
    assert result.admitted == [0, 1, 2]
    for i, plan in result.schedule.assignments.items():
        assert plan.completion_slot() == instance.jobs[i].arrival + 1  # 6 units at 3 per slot
    first = result.schedule[0]
    assert first.workers[0].tolist() == [0, 3] and first.parameter_servers[0].tolist() == [0, 2]
    assert result.total_utility == pytest.approx(sum(instance.best_utility(i) for i in range(3)))


@pytest.mark.parametrize("seed", range(3))
def test_oasis_beats_greedy_under_contention(seed):
    """The ablation: on an overloaded cluster of small jobs, prices keep capacity for valuable jobs; greedy
    admits in arrival order and blocks them (a regression check on a fixed family, not a theorem)."""
    instance = small_demand_instance(seed, n_jobs=300, capacity=20.0)
    oasis, greedy = run_oasis(instance), run_greedy(instance)
    assert oasis.total_utility > 1.5 * greedy.total_utility


# ------------------------------------------------------------------------------ the scheduler interface


def drive(scheduler, instance):
    """A minimal simulator: start, then per slot on_arrival and allocate; assemble the schedule."""
    scheduler.start(instance)
    horizon = instance.horizon
    workers, parameter_servers = {}, {}
    arrivals = {}
    for i, job in enumerate(instance.jobs):
        arrivals.setdefault(job.arrival, []).append(i)
    remaining = instance.work_units.astype(float).copy()
    for t in range(horizon):
        if t in arrivals:
            scheduler.on_arrival(t, arrivals[t])
        arrived = instance.arrivals <= t
        completed = remaining <= 0
        state = SlotState(t, remaining.copy(), arrived, completed,
                          tuple(int(i) for i in np.flatnonzero(arrived & ~completed)), horizon - t)
        for i, allocation in scheduler.allocate(t, state).items():
            workers.setdefault(i, np.zeros((horizon, instance.cluster.n_worker_servers), dtype=np.int64))
            parameter_servers.setdefault(i, np.zeros((horizon, instance.cluster.n_ps_servers), dtype=np.int64))
            workers[i][t] = allocation.workers
            parameter_servers[i][t] = allocation.parameter_servers
            remaining[i] -= allocation.workers.sum()
    schedule = Schedule({i: JobSchedule(workers[i], parameter_servers[i]) for i in workers})
    return schedule, scheduler.report()


@pytest.mark.parametrize("make", [
    lambda: generate("small", 4),
    lambda: generate("tiny", 7),
    lambda: small_demand_instance(3, n_jobs=60, capacity=15.0),
    lambda: generate("paper", 2, jobs=50),
])
@pytest.mark.parametrize("name", ["oasis", "greedy"])
def test_scheduler_slot_by_slot_equals_run(make, name):
    instance = make()
    batch = run_oasis(instance) if name == "oasis" else run_greedy(instance)
    scheduler = make_scheduler(name)
    assert isinstance(scheduler, OasisScheduler if name == "oasis" else GreedyScheduler)
    schedule, report = drive(scheduler, instance)
    assert schedule.same_allocation(batch.schedule)
    assert report["decisions"] == [d.to_dict() for d in batch.decisions]
    if name == "oasis":
        assert report["certificate"] == batch.certificate.to_dict()
        assert scheduler.parameters()["constants"] == batch.constants.to_dict()
    json.dumps(report, allow_nan=False)
    json.dumps(scheduler.parameters(), allow_nan=False)


def test_scheduler_report_and_parameters():
    instance = generate("small", 1)
    scheduler = make_scheduler("oasis", price_scale=2.0, eta=1.5)
    assert scheduler.parameters() == {"price_scale": 2.0, "eta": 1.5, "rule": "share"}  # before start: no instance yet
    _, report = drive(scheduler, instance)
    certificate = report["certificate"]
    for key in ("dual_objective", "primal", "opt_interval", "ratio_upper_bound", "alpha", "two_alpha",
                "online_lower_bound", "constants", "standalone_bound", "best_upper_bound",
                "allocation_price_factor", "small_demand_holds", "theorem_ratio_bound"):
        assert key in certificate
    assert certificate["constants"]["price_scale"] == 2.0 and certificate["constants"]["eta"] == 1.5
    assert certificate["primal"] == pytest.approx(verify(instance, scheduler.result().schedule).utility)
    assert len(report["decisions"]) == instance.n_jobs
    with pytest.raises(InputError, match="price_scale"):
        make_scheduler("oasis", price_scale=-1.0)
    with pytest.raises(InputError):
        make_scheduler("oasis", temperature=3.0)
    with pytest.raises(InputError, match="start"):
        OasisScheduler().allocate(0, None)
    with pytest.raises(InputError, match="already decided"):
        scheduler.engine.decide(0)


def test_scheduler_is_reusable():
    scheduler = OasisScheduler()
    first = drive(scheduler, generate("small", 5))[0]
    drive(scheduler, generate("small", 6))
    again = drive(scheduler, generate("small", 5))[0]
    assert first.same_allocation(again)


# --------------------------------------------------------------------------------------------- determinism


def test_same_instance_same_schedule_bit_for_bit():
    instance = generate("paper", 4, jobs=80)
    first, second = run_oasis(instance), run_oasis(instance)
    assert first.schedule.same_allocation(second.schedule)
    assert json.dumps(first.to_dict()) == json.dumps(second.to_dict())
    assert np.array_equal(first.worker_prices, second.worker_prices)
    assert json.dumps(run_greedy(instance).to_dict()) == json.dumps(run_greedy(instance).to_dict())


def test_same_schedule_in_a_fresh_interpreter():
    """No dependence on hash seeds, import order or process state."""
    code = (
        "import json, hashlib\n"
        "from primaldual.core.generate import generate\n"
        "from primaldual.oasis.engine import run_oasis\n"
        "r = run_oasis(generate('small', 7))\n"
        "blob = json.dumps(r.to_dict()) + ''.join(p.workers.tobytes().hex() + p.parameter_servers.tobytes().hex()"
        " for p in r.schedule.assignments.values())\n"
        "print(hashlib.sha256(blob.encode()).hexdigest())\n"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": hash_seed, "PATH": ""})
        digests.add(out.stdout.strip())
    assert len(digests) == 1
    import hashlib

    r = run_oasis(generate("small", 7))
    blob = json.dumps(r.to_dict()) + "".join(p.workers.tobytes().hex() + p.parameter_servers.tobytes().hex()
                                             for p in r.schedule.assignments.values())
    assert digests == {hashlib.sha256(blob.encode()).hexdigest()}
