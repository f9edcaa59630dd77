"""The capped ``Z(D)`` table shared by DRF and OASiS-LR (primaldual.simulation.placement.ps_needed_table): small
whatever ``N_i`` is, and read with ``ps_needed_at`` it gives the scalar ``Job.min_parameter_servers`` value for
every ``D``, on both sides of the cap."""

from __future__ import annotations

import pytest

from primaldual.core.instance import job_with_work
from primaldual.core.utility import Constant
from primaldual.simulation.placement import PS_TABLE_WORKERS, ps_needed_at, ps_needed_table


@pytest.mark.parametrize("chunks", [1, 3, PS_TABLE_WORKERS, PS_TABLE_WORKERS + 1, 10**9])
@pytest.mark.parametrize("bandwidth", [(1e-6, 1e6), (0.3, 0.7), (1.0, 3.0), (1.0, 1.0)])
def test_the_table_is_capped_and_reads_as_the_scalar_call(chunks, bandwidth):
    job = job_with_work(1, chunks, (1.0,), (1.0,), Constant(1.0), worker_bandwidth_gbps=bandwidth[0],
                        ps_bandwidth_gbps=bandwidth[1])
    table = ps_needed_table(job)
    assert len(table) == min(chunks, PS_TABLE_WORKERS) + 1  # 4,097 ints at most, not N_i + 1
    crossing = list(range(0, 40)) + list(range(PS_TABLE_WORKERS - 40, PS_TABLE_WORKERS + 40)) + [10**4, 10**9]
    for workers in crossing:
        assert ps_needed_at(table, job, workers) == int(job.min_parameter_servers(workers)), workers
