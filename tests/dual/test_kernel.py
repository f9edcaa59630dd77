"""The compiled kernel (primaldual.dual.kernel) is the reference (primaldual.dual.reference), bit for bit.

Random jobs and prices at the kernel's own interface: one-worker and wide jobs, PS steps (``Z(D)`` from
``b/B`` in {1/4, 1/3, 1/2, 1}), a few price levels (ties), servers full in some slots, a utility that may stop
the search early or leave ``mu = 0``, both objectives and a cost floor. The brute force over every schedule of
a tiny job is in tests/oasis/test_oasis_dual.py (it runs through ``best_schedule``, hence the kernel).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from primaldual.core.errors import InputError
from primaldual.dual import kernel, reference


@st.composite
def kernel_cases(draw):
    """The arguments of :func:`primaldual.dual.reference.search` for one job."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    horizon = draw(st.integers(1, 12))
    arrival = draw(st.integers(0, horizon - 1))
    n_worker, n_ps, n_resources = draw(st.integers(1, 5)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    max_workers = draw(st.sampled_from([1, 1, 2, 3, 5]))
    work = draw(st.integers(1, 3 * max_workers + 2))
    ratio = draw(st.sampled_from([0.25, 1 / 3, 0.5, 1.0]))
    counts = np.arange(max_workers + 1)
    ps_needed = np.maximum(np.ceil(counts * ratio - 1e-9), counts > 0).astype(np.int64)
    levels = np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.3, 2.9]), min_size=1, max_size=3)))
    worker_prices = rng.choice(levels, size=(horizon, n_worker, n_resources))
    ps_prices = rng.choice(levels, size=(horizon, n_ps, n_resources))
    if draw(st.booleans()):  # the same prices in every slot, as one row
        worker_prices, ps_prices = worker_prices[:1].copy(), ps_prices[:1].copy()
    per_slot = draw(st.booleans())
    shape = (horizon if per_slot else 1,)
    worker_free = rng.choice([0.0, 1.0, 2.0, 4.0], size=shape + (n_worker, n_resources))
    ps_free = rng.choice([0.0, 1.0, 3.0], size=shape + (n_ps, n_resources))
    worker_demand = rng.choice([0.0, 0.5, 1.0], size=n_resources)
    ps_demand = rng.choice([0.0, 1.0], size=n_resources)
    value = draw(st.floats(0.0, 30.0))
    utility = np.sort(rng.uniform(0.0, value, size=horizon - arrival))[::-1] if draw(st.booleans()) else \
        np.full(horizon - arrival, value)
    ps_max = int(min(ps_needed.max(), max_workers))
    return (worker_prices, ps_prices, worker_free, ps_free, worker_demand, ps_demand, ps_needed, ps_max,
            arrival, work, utility)


def arrival_plus_window(case) -> int:
    """The horizon: the arrival plus the window's slots (one per utility value)."""
    return case[8] + case[10].shape[0]


def _run(functions, case, payoff_objective, early_stop, floor):
    worker_prices, ps_prices, *_ = case
    best, counts, costs = functions.search(*case, payoff_objective, early_stop, floor)
    horizon = arrival_plus_window(case)
    workers = np.zeros((horizon, worker_prices.shape[1]), dtype=np.int64)
    parameter_servers = np.zeros((horizon, ps_prices.shape[1]), dtype=np.int64)
    if best >= 0:
        functions.place(*case[:9], counts, workers, parameter_servers)
    return int(best), counts.tobytes(), costs.tobytes(), workers.tobytes(), parameter_servers.tobytes()


@settings(max_examples=300)
@given(case=kernel_cases(), payoff_objective=st.booleans(), early_stop=st.booleans(),
       floor=st.sampled_from([0.0, 0.0, 0.5, 3.0]))
def test_the_kernel_is_the_reference_bit_for_bit(case, payoff_objective, early_stop, floor):
    """Best slot, workers per slot, every ``C(s)`` (``nan`` past the stop) and the placement: the same bytes."""
    compiled = _run(kernel.compiled(), case, payoff_objective, early_stop, floor)
    plain = _run(reference, case, payoff_objective, early_stop, floor)
    event("no schedule" if compiled[0] < 0 else "a schedule")
    event("one worker" if case[6].shape[0] == 2 else "wide")
    assert compiled == plain


def test_the_environment_picks_the_kernel(monkeypatch):
    monkeypatch.setenv("PRIMALDUAL_KERNEL", "reference")
    assert kernel.functions() is reference
    monkeypatch.setenv("PRIMALDUAL_KERNEL", "compiled")
    assert kernel.functions() is kernel.compiled() and kernel.functions(1) is kernel.compiled()
    monkeypatch.delenv("PRIMALDUAL_KERNEL")
    monkeypatch.setattr(kernel, "_compiled", {})  # a process that has not compiled yet
    assert kernel.mode() == "auto"
    assert kernel.functions(kernel.AUTO_LIMIT) is reference and kernel.functions(1) is reference
    assert kernel.functions(kernel.AUTO_LIMIT + 1) is kernel.compiled()
    assert kernel.functions(1) is kernel.compiled() and kernel.functions() is kernel.compiled()  # from then on
    monkeypatch.setenv("PRIMALDUAL_KERNEL", "fast")
    with pytest.raises(InputError, match="PRIMALDUAL_KERNEL"):
        kernel.functions()


def _runs_under(kernel_mode: str, runs: str) -> str:
    """The schedules of ``runs`` (a Python list expression over ``generate`` and ``simulate``) as JSON, in a fresh
    interpreter under ``PRIMALDUAL_KERNEL=kernel_mode``."""
    code = ("from primaldual import generate, simulate; from primaldual.core.files import schedule_to_dict; "
            f"import json; print(json.dumps([schedule_to_dict(r.schedule) for r in {runs}]))")
    environment = dict(os.environ, PRIMALDUAL_KERNEL=kernel_mode)
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                          check=True).stdout


def _same_under_both_kernels(runs: str) -> None:
    plain = _runs_under("reference", runs)
    assert plain == _runs_under("compiled", runs) and plain.startswith("[{")


def test_a_run_under_the_reference_is_the_compiled_run():
    """Whole OASiS, greedy and OASiS-LR runs (the dual subroutine's and the slot's loops,
    :mod:`primaldual.oasis.lr.reference`) in a fresh interpreter with ``PRIMALDUAL_KERNEL=reference``: the same
    schedules as in the compiled runs, with and without restart costs."""
    _same_under_both_kernels("[simulate(generate('small', seed=4, jobs=8), s, restart_cost=f) for s, f in "
                             "(('oasis', 0), ('greedy', 0), ('oasis-lr', 0), ('oasis-lr', 0.1), ('oasis-p', 0.1))]")


@pytest.mark.slow
def test_an_oasis_lr_run_on_paper_under_the_reference_is_the_compiled_run():
    """The same on a short ``paper`` instance (50 + 50 servers), at restart costs 0 and 0.1."""
    _same_under_both_kernels("[simulate(generate('paper', seed=4, jobs=12), s, restart_cost=f) for f in (0.0, 0.1) "
                             "for s in ('oasis-lr', 'oasis-p')]")


def test_small_runs_never_load_numba():
    """Under ``auto`` a run of a ``small`` instance searches as Python and never pays numba's import."""
    code = ("import sys; from primaldual import generate, simulate; i = generate('small', seed=4, jobs=12); "
            "[simulate(i, s) for s in ('oasis', 'greedy', 'oasis-lr')]; print('numba' in sys.modules)")
    environment = {k: v for k, v in os.environ.items() if k != "PRIMALDUAL_KERNEL"}
    out = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_compiled_copy_s_disk_cache_names_every_file_it_draws_code_from():
    """numba keys a cached function on its own file; OASiS-LR's compiled offer also links the dual subroutine's
    search and the block search from other files, so the cache's stamp names their contents too
    (an edit of any of them recompiles instead of loading stale machine code)."""
    from pathlib import Path

    from primaldual.dual import reference as dual_reference
    from primaldual.oasis.lr import blocks
    from primaldual.oasis.lr import reference as slot_reference

    files = {Path(f).name for f in kernel.kernel_sources(slot_reference)}
    assert {"reference.py", "blocks.py"} <= files
    assert {Path(m.__file__) for m in (dual_reference, blocks, slot_reference)} <= \
        {Path(f) for f in kernel.kernel_sources(slot_reference)}
    stamp = kernel.sources_stamp(slot_reference)
    offer = kernel.compiled(slot_reference).offer
    assert offer._cache._cache_file._source_stamp[1] == stamp  # numba 0.68's cache internals, extended
