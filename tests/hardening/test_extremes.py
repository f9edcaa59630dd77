"""Instances at the edges of the numeric domains (docs/input-ranges.md) get right answers: every online
scheduler's schedule passes the independent verifier, with a finite utility equal to the verifier's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.core.instance import Cluster, Instance, Job
from primaldual.simulation.simulator import simulate
from primaldual.core.utility import Constant, LinearDecay, Sigmoid, Step
from primaldual.core.verify import verify

EDGES = [0.0, 1e-3, 1.0, 1e9]  # demands and capacities: 0, the smallest positive demand, 1, the largest
BANDWIDTHS = [1e-6, 1.0, 1e6]
UTILITIES = [Sigmoid(1e12, 1e6, -1e9), Sigmoid(0.0, 0.0, 1e9), Sigmoid(1e12, 0.0, 0.0), LinearDecay(1e12, 1e-300),
             Step(1e12, 0.0), Constant(0.0), Constant(1e12), LinearDecay(1e-300, 1e9)]


@st.composite
def edge_instances(draw) -> Instance:
    def vector():
        return np.array(draw(st.lists(st.sampled_from(EDGES), min_size=2, max_size=2)))

    # One roomy server per pool, so that most drawn demands fit somewhere and the instance is valid.
    worker = np.array([[1e9, 1e9], vector()])
    ps = np.array([[1e9, 1e9], vector()])
    jobs = []
    for _ in range(draw(st.integers(1, 4))):
        b = draw(st.sampled_from(BANDWIDTHS))
        jobs.append(Job(
            arrival=draw(st.integers(0, 4)), epochs=1, chunks=draw(st.sampled_from([1, 3, 10**9])),
            minibatches_per_chunk=1, compute_seconds=draw(st.sampled_from([1e-9, 1.0, 50.0])),
            gradient_mb=draw(st.sampled_from([0.0, 1e-3])), worker_bandwidth_gbps=b,
            ps_bandwidth_gbps=max(b, draw(st.sampled_from(BANDWIDTHS))), worker_demand=vector(), ps_demand=vector(),
            utility=draw(st.sampled_from(UTILITIES))))
    try:
        return Instance(Cluster(("a", "b"), worker, ps), jobs, horizon=6,
                        slot_seconds=draw(st.sampled_from([1e-6, 1.0, 10.0]))).validate()
    except InputError:
        assume(False)


@settings(max_examples=300)
@given(edge_instances(), st.sampled_from(["oasis", "greedy", "fifo", "drf", "rrh", "dorm", "oasis-lr", "oasis-p"]))
def test_every_scheduler_is_right_at_the_edges_of_the_domains(instance, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no inf or NaN on the way either
        result = simulate(instance, name)
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations[:3]
    assert np.isfinite(result.utility)
    assert result.utility == pytest.approx(report.utility, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("ratio", [1e-12, 1e-9, 0.5, 1.0])
def test_a_positive_worker_count_always_needs_a_parameter_server(ratio):
    """Eq. (6) with b_i / B_i as small as the domain allows (1e-12): D > 0 workers need at least one PS."""
    job = Job(arrival=0, epochs=1, chunks=4, minibatches_per_chunk=1, compute_seconds=1.0, gradient_mb=0.0,
              worker_bandwidth_gbps=1e6 * ratio, ps_bandwidth_gbps=1e6, worker_demand=np.zeros(1),
              ps_demand=np.zeros(1), utility=Constant(1.0))
    assert job.min_parameter_servers(0) == 0
    counts = job.min_parameter_servers(np.arange(1, 5))
    assert (counts >= 1).all()
    assert (np.arange(1, 5) * job.worker_bandwidth_gbps <= counts * job.ps_bandwidth_gbps).all()
