"""Helpers for the offline-optimum tests: hand-built instances with exact, integral work."""

import numpy as np
import pytest

from primaldual.core.instance import Cluster, Instance, job_with_work
from primaldual.backends.solvers import solver_available
from primaldual.core.utility import Constant

SLOT_SECONDS = 3600.0


def make_job(arrival=0, work=1, chunks=1, worker_bandwidth=1.0, ps_bandwidth=1.0, worker_demand=(1.0,),
             ps_demand=(1.0,), utility=None, name=""):
    """A job whose work is exactly ``work`` worker-slots: E = M = 1, no communication, tau = slot x work / N."""
    return job_with_work(work, chunks, worker_demand, ps_demand, utility if utility is not None else Constant(1.0),
                         arrival=arrival, slot_seconds=SLOT_SECONDS, worker_bandwidth_gbps=worker_bandwidth,
                         ps_bandwidth_gbps=ps_bandwidth, name=name)


def make_instance(jobs, horizon, worker_capacity, ps_capacity, resources=("gpu",)):
    return Instance(
        cluster=Cluster(tuple(resources), np.array(worker_capacity, dtype=float), np.array(ps_capacity, dtype=float)),
        jobs=tuple(jobs),
        horizon=horizon,
        slot_seconds=SLOT_SECONDS,
    )


def run(capsys, *argv):
    """Run the CLI in this process; return (exit code, stdout, stderr)."""
    from primaldual.cli import main

    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def require_solver(name: str) -> None:
    """Skip (with the reason) when a backend is absent here; CI installs CBC and GLPK from Debian."""
    if not solver_available(name):
        pytest.skip(f"solver {name} is not installed here (CI installs coinor-cbc and glpk-utils)")
