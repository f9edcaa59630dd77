"""OASiS-LR on several GPU types (issue 64, :mod:`primaldual.oasis.lr.type_view`): every schedule verifies with one
type per job and slot, no promise is ever broken, a block is of one type, and the compiled slot equals the
reference on types. OASiS-P refuses types in one line (tests/foundation/test_gpu_types.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primaldual.core.generate import generate
from primaldual.core.instance import Cluster, Instance, job_with_work
from primaldual.core.utility import Constant
from primaldual.core.verify import verify
from primaldual.dual import kernel
from primaldual.oasis.lr import admission
from primaldual.oasis.lr.scheduler import OasisLr
from primaldual.simulation.simulator import simulate


def one_type_per_slot(instance, schedule) -> bool:
    """Whether every job's workers are of one type in every slot (an independent count)."""
    index = np.asarray(instance.cluster.worker_type_index)
    for assignment in schedule.assignments.values():
        y = np.asarray(assignment.workers)
        used = np.stack([y[:, index == g].sum(axis=1) > 0 for g in range(len(instance.cluster.gpu_types))])
        if used.sum(axis=0).max(initial=0) > 1:
            return False
    return True


def check_run(instance, restart_cost: float = 0.0, **parameters):
    """Run OASiS-LR; the schedule verifies, one type per slot, every promise kept by its deadline."""
    scheduler = OasisLr(**parameters)
    result = simulate(instance, scheduler, restart_cost=restart_cost)  # PromiseBroken would raise here
    report = verify(instance, result.schedule)
    assert report.feasible, [v.message for v in report.violations]
    assert one_type_per_slot(instance, result.schedule)
    assert result.promises.broken == 0 and result.promises.kept == result.promises.made
    for i, deadline in scheduler.promised_deadlines().items():
        assert report.completion_slots[i] <= deadline
    return result


clusters = st.lists(st.sampled_from(["v100", "p100", "k80"]), min_size=1, max_size=3, unique=True).flatmap(
    lambda names: st.tuples(*[st.tuples(st.just(n), st.integers(1, 2)) for n in names]))


@settings(derandomize=True, max_examples=6, deadline=None)
@given(seed=st.integers(0, 100_000), types=clusters, lookahead=st.booleans(),
       restart_cost=st.sampled_from([0.0, 0.25]))
def test_every_schedule_verifies_and_keeps_its_promises(seed, types, lookahead, restart_cost):
    check_run(generate("tiny", seed, gpu_types=list(types)), restart_cost, lookahead=lookahead)


@pytest.mark.slow
@settings(derandomize=True, max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), types=clusters, lookahead=st.booleans(),
       restart_cost=st.sampled_from([0.0, 0.1, 0.5]), preset=st.sampled_from(["tiny", "small"]))
def test_every_schedule_verifies_and_keeps_its_promises_slow(seed, types, lookahead, restart_cost, preset):
    check_run(generate(preset, seed, gpu_types=list(types)), restart_cost, lookahead=lookahead)


def typed_instance(jobs, types=("slow", "fast"), horizon=8) -> Instance:
    """One worker server per entry of ``types`` (4 GPUs, 8 CPUs each), one PS server."""
    cluster = Cluster(("gpu", "cpu"), np.array([[4.0, 8.0]] * len(types)), np.array([[0.0, 8.0]]),
                      worker_types=tuple(types), gpu_types=("fast", "slow"))
    return Instance(cluster=cluster, jobs=tuple(jobs), horizon=horizon, slot_seconds=1.0).validate()


def typed_job(work: int, chunks: int, slower: float, value: float, arrival: int = 0):
    """``work`` worker-slots on ``fast`` servers, ``slower x work`` on ``slow`` ones; utility ``value`` at any time."""
    job = job_with_work(work, chunks, (1.0, 1.0), (0.0, 1.0), Constant(value), arrival=arrival,
                        worker_bandwidth_gbps=1.0, ps_bandwidth_gbps=4.0)
    tau = job.compute_seconds
    return replace(job, compute_seconds_by_type=(("fast", tau), ("slow", slower * tau)))


def test_a_hand_made_block_is_on_the_fast_type():
    """Job 0 has W = 4 on the fast server (index 1) and 12 on the slow one (index 0), at most 2 workers, utility
    1,000 at any time; job 1 (utility 1, arriving at slot 6) sets the lowest price low, 10 per worker-slot. Job 0
    is offered on each type: ``mu`` = 1,000 - 4 x 10 = 960 on the fast one, 1,000 - 12 x 10 = 880 on the slow one,
    so its block is on the fast type: 2 workers for ``ceil(4 / 2) = 2`` slots, as late as the deadline allows
    (constant utility: the horizon's last slot, 7), so slots 6..7. It runs at once in the free capacity on its
    pinned type, slots 0 and 1 (4 fast worker-slots), and keeps its promise."""
    instance = typed_instance([typed_job(4, 2, 3.0, 1000.0), typed_job(2, 1, 3.0, 1.0, arrival=6)])
    scheduler = OasisLr(lookahead=False)
    offers, blocks = [], []
    answer, admit = admission.offer_answer, scheduler._admit

    def watch(slot, i):
        promised = admit(slot, i)
        if promised:
            blocks.append(scheduler.state.ledger.reservations[i])
        return promised

    def offer(*arguments):
        out = answer(*arguments)
        offers.append((arguments[4], arguments[6], out[1]))  # job, type, mu
        return out

    scheduler.start(instance)
    scheduler._admit = watch
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(admission, "offer_answer", offer)
        result = simulate(instance, scheduler)
    assert offers[:2] == [(0, 0, pytest.approx(960.0)), (0, 1, pytest.approx(880.0))]
    assert [(b.job, b.workers.tolist(), b.first, b.last) for b in blocks] == [(0, [0, 2], 6, 7)]
    assert result.promises.made == 1 and result.promises.kept == 1
    y = np.asarray(result.schedule.assignments[0].workers)
    assert y[:, 0].sum() == 0 and y[:, 1].tolist()[:2] == [2, 2] and result.metrics.completion_slots[0] == 1
    assert verify(instance, result.schedule).feasible


@pytest.mark.parametrize("restart_cost", [0.0, 0.25])
def test_the_compiled_slot_equals_the_reference_on_types(restart_cost):
    """The growth with the other types hidden (:mod:`primaldual.oasis.lr.type_rule`), as Python and compiled: the
    same schedule to the bit."""
    instance = generate("small", 11, gpu_types=[("v100", 1), ("p100", 1), ("k80", 2)])
    runs = []
    for mode in ("reference", "compiled"):
        with kernel.using(mode):
            runs.append(simulate(instance, OasisLr(lookahead=False), restart_cost=restart_cost))
    one, other = runs
    assert one.utility == other.utility
    assert one.schedule.assignments.keys() == other.schedule.assignments.keys()
    for i, assignment in one.schedule.assignments.items():
        assert np.array_equal(assignment.workers, other.schedule.assignments[i].workers)
        assert np.array_equal(assignment.parameter_servers, other.schedule.assignments[i].parameter_servers)


@pytest.mark.parametrize("compiled", [False, True], ids=["reference", "compiled"])
def test_an_unpinned_job_takes_the_type_where_it_progresses_most(compiled):
    """Server 0 (type 0, fast: W = 4) has room for 1 worker, server 1 (type 1, slow: W = 12) for 4: 1/4 of the job
    on the fast type against 4/12 on the slow one, so the slow type; with room for 2 fast workers, 2/4 wins. A
    fixed type is kept whatever the room."""
    from primaldual.oasis.lr import reference
    from primaldual.oasis.lr.type_rule import choose_type

    code = kernel.compiled(reference) if compiled else reference
    demand, server_type = np.array([1.0, 1.0]), np.array([0, 1], dtype=np.int64)
    ranked, work = np.array([0, 1], dtype=np.int64), np.array([4.0, 12.0])
    free = np.array([[1.0, 8.0], [4.0, 8.0]])
    assert code.choose_type(free, server_type, demand, -1, ranked, work, 4) == 1
    free[0, 0] = 2.0
    assert code.choose_type(free, server_type, demand, -1, ranked, work, 4) == 0
    assert code.choose_type(free, server_type, demand, 1, ranked, work, 4) == 1
    assert code.choose_type(np.zeros((2, 2)), server_type, demand, -1, ranked, work, 4) == -1
    assert choose_type is reference.choose_type
