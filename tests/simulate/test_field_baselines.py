"""The field's baselines (issue 52): tiresias, srtf, optimus and themis.

Every schedule verifies on generated instances at several restart costs; each rule on a hand-computed case;
Tiresias's schedule does not depend on the jobs' work until a job completes; bad parameters exit 2 naming them.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.baselines.optimus import marginal_gain
from primaldual.baselines.themis import auction_size, default_lease, finish_time_fairness
from primaldual.cli import main
from primaldual.core.generate import generate
from primaldual.core.instance import Cluster, Instance, job_with_work
from primaldual.core.utility import Constant
from primaldual.core.verify import verify
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate

FIELD = ("tiresias", "srtf", "optimus", "themis")
HOUR = 3600.0


def job(arrival: int, work: int, chunks: int = 2, bandwidth_ratio: float = 0.25):
    """A job of exactly ``work`` worker-slots on one-hour slots: one GPU and one CPU per worker, one CPU per PS,
    ``Z(D) = ceil(D * bandwidth_ratio)`` PSs."""
    return job_with_work(work, chunks, (1.0, 1.0), (0.0, 1.0), Constant(10.0), arrival=arrival, slot_seconds=HOUR,
                         worker_bandwidth_gbps=4.0 * bandwidth_ratio, ps_bandwidth_gbps=4.0)


def instance(jobs, gpus: float = 2.0, horizon: int = 12) -> Instance:
    return Instance(cluster=Cluster(("gpu", "cpu"), np.array([[gpus, 16.0]]), np.array([[0.0, 16.0]])),
                    jobs=tuple(jobs), horizon=horizon, slot_seconds=HOUR)


class Recording:
    """Wraps a scheduler and keeps each slot's allocation as {job: (workers, PSs)}."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.slots: dict[int, dict[int, tuple[int, int]]] = {}

    def __getattr__(self, attribute):
        return getattr(self.inner, attribute)

    def allocate(self, slot, state):
        out = self.inner.allocate(slot, state)
        self.slots[slot] = {i: (int(a.workers.sum()), int(a.parameter_servers.sum())) for i, a in out.items()}
        return out


def run(inst, name, restart_cost=0.0, **parameters):
    recording = Recording(make_scheduler(name, **parameters))
    result = simulate(inst, recording, restart_cost=restart_cost)
    report = verify(inst, result.schedule)
    assert report.feasible, [v.message for v in report.violations[:3]]
    assert result.utility == pytest.approx(report.utility, rel=1e-12, abs=1e-12)
    return result, recording.slots


def workers(slots, slot, i) -> int:
    return slots.get(slot, {}).get(i, (0, 0))[0]


# ------------------------------------------------------------------------------------------ every schedule


@pytest.mark.parametrize("name", FIELD)
@settings(derandomize=True, max_examples=15, deadline=None)
@given(seed=st.integers(0, 100_000), preset=st.sampled_from(["tiny", "small"]),
       restart_cost=st.sampled_from([0.0, 0.05, 0.1]))
def test_every_schedule_verifies(name, seed, preset, restart_cost):
    inst = generate(preset, seed) if preset == "tiny" else generate(preset, seed, jobs=10)
    result, _ = run(inst, name, restart_cost=restart_cost)
    for i, assignment in result.schedule.assignments.items():
        arrival = inst.jobs[i].arrival
        assert not assignment.workers[:arrival].any() and not assignment.parameter_servers[:arrival].any()


@pytest.mark.parametrize("name, parameters", [
    ("tiresias", {"threshold": 0.5, "starvation_limit": 1, "placement": "least_loaded"}),
    ("srtf", {"placement": "least_loaded", "skip_unfinishable": False}),
    ("optimus", {"placement": "least_loaded", "skip_unfinishable": False}),
    ("themis", {"fairness": 0.0, "lease": 3, "placement": "least_loaded"}),
])
def test_other_parameters_verify_and_are_recorded(name, parameters):
    result, _ = run(generate("small", 7, jobs=20), name, restart_cost=0.1, **parameters)
    for key, value in parameters.items():
        assert result.parameters[key] == value


# ------------------------------------------------------------------------------------------------ tiresias


def test_tiresias_demotes_a_job_at_its_threshold():
    # A (2 GPUs wide) runs slot 0 and attains 2 worker-hours; B arrives in slot 1. At threshold 2 A is demoted
    # after slot 0, so B (first queue) preempts it in slot 1; at threshold 4 A is still in the first queue, ahead.
    jobs = [job(0, 10), job(1, 2)]
    result, slots = run(instance(jobs), "tiresias", threshold=2.0)
    assert workers(slots, 0, 0) == 2 and workers(slots, 1, 1) == 2 and workers(slots, 1, 0) == 0
    assert result.report["demotions"] >= 1
    _, slots = run(instance(jobs), "tiresias", threshold=4.0)
    assert workers(slots, 1, 0) == 2 and workers(slots, 1, 1) == 0


def test_tiresias_promotes_a_starved_job():
    # A is demoted after slot 0; a new one-slot job arrives every slot and takes the cluster from the first queue.
    # With starvation_limit 2, A has waited slots 1 and 2, so it is promoted for slot 3 (entering the first queue
    # with the newcomer of slot 3, ahead of it by index); without a limit it waits for the newcomers to end.
    jobs = [job(0, 6)] + [job(t, 2) for t in range(1, 6)]
    result, slots = run(instance(jobs), "tiresias", threshold=2.0, starvation_limit=2)
    assert [workers(slots, t, 0) for t in range(4)] == [2, 0, 0, 2]
    assert result.report["promotions"] >= 1  # and again later: it is demoted after slot 3 and starves anew
    _, slots = run(instance(jobs), "tiresias", threshold=2.0)
    assert [workers(slots, t, 0) for t in range(6)] == [2, 0, 0, 0, 0, 0] and workers(slots, 6, 0) == 2


@settings(derandomize=True, max_examples=15, deadline=None)
@given(seed=st.integers(0, 100_000), factor=st.sampled_from([2, 3]), restart_cost=st.sampled_from([0.0, 0.1]))
def test_tiresias_does_not_read_the_work(seed, factor, restart_cost):
    # The same instance with every job's epochs multiplied: the allocations agree slot by slot up to and
    # including the first slot in which a job completes in either run.
    inst = generate("small", seed, jobs=10)
    longer = dataclasses.replace(inst, jobs=tuple(dataclasses.replace(j, epochs=j.epochs * factor)
                                                  for j in inst.jobs))
    first, slots = run(inst, "tiresias", restart_cost)
    second, other = run(longer, "tiresias", restart_cost)
    done = [s for r in (first, second) for s in r.metrics.completion_slots.values() if s >= 0]
    until = min(done, default=inst.horizon - 1)
    for t in range(until + 1):
        assert slots.get(t, {}) == other.get(t, {}), t


def test_srtf_reads_the_work_so_the_property_has_teeth():
    # Two jobs that differ only in work: SRTF serves the shorter (index 1) first, Tiresias the earlier (index 0).
    jobs = [job(0, 8), job(0, 4)]
    _, slots = run(instance(jobs), "srtf")
    assert workers(slots, 0, 1) == 2 and workers(slots, 0, 0) == 0
    _, slots = run(instance(jobs), "tiresias", threshold=100.0)
    assert workers(slots, 0, 0) == 2 and workers(slots, 0, 1) == 0


# ---------------------------------------------------------------------------------------------------- srtf


def test_srtf_finishes_the_shorter_of_two_jobs_first():
    result, _ = run(instance([job(0, 8), job(0, 4)]), "srtf")
    assert result.metrics.completion_slots == {0: 5, 1: 1}


def test_srtf_preempts_for_a_shorter_newcomer():
    # A (8 worker-slots, 2 wide) has run 2 slots when B (2 worker-slots) arrives: 2 slots left against 1.
    result, slots = run(instance([job(0, 8), job(2, 2)]), "srtf")
    assert workers(slots, 2, 1) == 2 and workers(slots, 2, 0) == 0
    assert result.metrics.completion_slots == {0: 4, 1: 2}


# ------------------------------------------------------------------------------------------------- optimus


def test_optimus_first_allocations_match_a_hand_computation():
    # Four GPUs; A has 12 worker-slots left, B 4, both 4 chunks wide, Z(D) = ceil(D / 4): one PS each throughout.
    # One worker + one PS each; then the gains per GPU share (1/4 each, no PS added):
    #   A: 12/1 - 12/2 = 6 > B: 4/1 - 4/2 = 2    -> A gets its 2nd worker;
    #   A: 12/2 - 12/3 = 2 = B: 2 (tie, lower index) -> A gets its 3rd; the GPUs are used up.
    assert marginal_gain(12, 1) == 6 and marginal_gain(12, 2) == 2 == marginal_gain(4, 1)
    jobs = [job(0, 12, chunks=4), job(0, 4, chunks=4)]
    _, slots = run(instance(jobs, gpus=4.0), "optimus")
    assert slots[0] == {0: (3, 1), 1: (1, 1)}


def test_optimus_adds_the_ps_a_worker_needs():
    # Z(D) = D (bandwidth ratio 1): every worker brings its PS, so PS CPU caps the allocation at 16 units in all.
    jobs = [job(0, 40, chunks=8, bandwidth_ratio=1.0)]
    _, slots = run(instance(jobs, gpus=8.0), "optimus")
    assert slots[0] == {0: (8, 8)}


# -------------------------------------------------------------------------------------------------- themis


def test_themis_metric_and_knob():
    # rho = (e + R e / received) / (e + R N / w): half its fair rate so far -> rho between 1 and 2.
    rho = finish_time_fairness([2, 2, 0], [8, 8, 8], [2, 0, 0], [2, 2, 2], 2)
    assert rho[0] == pytest.approx((2 + 8 * 2 / 2) / (2 + 8 * 2 / 2)) and np.isinf(rho[1]) and np.isinf(rho[2])
    assert auction_size(0.8, 10) == 2 and auction_size(0.8, 3) == 1 and auction_size(0.0, 7) == 7
    assert default_lease(600.0) == 1 and default_lease(60.0) == 10 and default_lease(3600.0) == 1


def test_themis_serves_the_worst_rho_job_first():
    # A and B arrive together; A (lower index) runs slot 0. In slot 1 A has a finite rho and B, which received
    # nothing, an infinite one: B is served first and takes both GPUs, although A comes first in arrival order.
    jobs = [job(0, 20), job(0, 20)]
    _, slots = run(instance(jobs), "themis", fairness=0.5, lease=1)
    assert slots[0] == {0: (2, 1)} and slots[1] == {1: (2, 1)}
    # With a two-slot lease A keeps its servers in slot 1, and B waits for the lease to end.
    _, slots = run(instance(jobs), "themis", fairness=0.5, lease=2)
    assert slots[1] == {0: (2, 1)} and slots[2] == {1: (2, 1)}


# ------------------------------------------------------------------------------------------ bad parameters


@pytest.mark.parametrize("name, text, key", [
    ("tiresias", "threshold=0", "threshold"),
    ("tiresias", "threshold=-1", "threshold"),
    ("tiresias", "threshold=abc", "threshold"),
    ("tiresias", "starvation_limit=0", "starvation_limit"),
    ("tiresias", "starvation_limit=0.5", "starvation_limit"),
    ("themis", "lease=0", "lease"),
    ("themis", "lease=x", "lease"),
    ("themis", "fairness=1", "fairness"),
    ("themis", "fairness=-0.1", "fairness"),
    ("optimus", "placement=best", "placement"),
    ("srtf", "skip_unfinishable=1", "skip_unfinishable"),
])
def test_bad_parameters_exit_2_naming_them(name, text, key, capsys):
    code = main(["run", "--preset", "tiny", "--seed", "1", "--scheduler", name, "--param", text])
    err = capsys.readouterr().err
    assert code == 2 and f"scheduler {name}: {key}: must be" in err, err
