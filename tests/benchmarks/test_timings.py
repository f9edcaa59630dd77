"""pytest-benchmark timings, outside the default run: ``pytest -m benchmark``.

Each group times a piece of the package next to its reference in the same session (compare with
``--benchmark-group-by=group``); nothing here asserts a wall-clock time, only that both sides agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from primaldual.dual import kernel
from primaldual.dual.subroutine import best_schedule
from primaldual.core.generate import generate
from primaldual.lbbsp.bench import run_benchmark
from primaldual.models.offline import build_offline_model
from primaldual.oasis.engine import run_oasis
from primaldual.simulation.simulator import simulate

pytestmark = pytest.mark.benchmark


@pytest.fixture(scope="module")
def paper_job():
    """One job of the paper preset on an empty cluster at price L, with full residual capacity."""
    instance = generate("paper", seed=0, jobs=40)
    cluster = instance.cluster
    shape_w = (instance.horizon, cluster.n_worker_servers, cluster.n_resources)
    shape_p = (instance.horizon, cluster.n_ps_servers, cluster.n_resources)
    prices = (np.full(shape_w, 1e-3), np.full(shape_p, 1e-3))
    free = (np.broadcast_to(cluster.worker_capacity, shape_w).copy(),
            np.broadcast_to(cluster.ps_capacity, shape_p).copy())
    job = int(np.argmax(instance.work_units))
    return instance, job, prices, free


@pytest.mark.benchmark(group="dual subroutine")
def test_compiled_subroutine(benchmark, paper_job):
    instance, job, (wp, pp), (wf, pf) = paper_job
    result = benchmark(best_schedule, instance, job, wp, pp, wf, pf)
    with kernel.using("reference"):
        reference = best_schedule(instance, job, wp, pp, wf, pf)
    assert result.mu == reference.mu and result.completion_slot == reference.completion_slot


@pytest.mark.benchmark(group="dual subroutine")
def test_reference_subroutine(benchmark, paper_job):
    instance, job, (wp, pp), (wf, pf) = paper_job
    with kernel.using("reference"):
        benchmark.pedantic(best_schedule, args=(instance, job, wp, pp, wf, pf), rounds=3, iterations=1)


@pytest.mark.benchmark(group="online schedulers, paper preset 100 jobs")
@pytest.mark.parametrize("name", ["oasis", "greedy", "fifo", "drf", "rrh"])
def test_scheduler_run(benchmark, name):
    instance = generate("paper", seed=1, jobs=100)
    result = benchmark.pedantic(simulate, args=(instance, name), rounds=1, iterations=1)
    assert result.completed > 0


@pytest.mark.benchmark(group="offline model build")
@pytest.mark.parametrize("formulation", ["strong", "weak"])
def test_offline_build(benchmark, formulation):
    instance = generate("small", seed=2)
    model = benchmark(build_offline_model, instance, formulation=formulation)
    assert model.nvariables() > 0


@pytest.mark.benchmark(group="whole runs")
def test_oasis_paper_preset(benchmark):
    instance = generate("paper", seed=0)
    result = benchmark.pedantic(run_oasis, args=(instance,), rounds=1, iterations=1)
    assert result.total_utility > 0


@pytest.mark.benchmark(group="whole runs")
def test_lbbsp_benchmark(benchmark):
    result = benchmark.pedantic(run_benchmark, kwargs={"seed": 0, "quick": True}, rounds=1, iterations=1)
    assert result.scenarios["gpu"].lbbsp_speedup > 1.0
