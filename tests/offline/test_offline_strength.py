"""Symmetry breaking between identical servers and the shifted work cuts keep the optimum (brute force), and
every MIP start stays feasible."""

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offline_bruteforce import brute_force_optimum
from offline_helpers import make_instance, make_job

from primaldual.core.generate import generate
from primaldual.core.instance import Cluster
from primaldual.core.verify import verify
from primaldual.offline.matrix import build_matrix_model, solve_matrix_model, start_vector
from primaldual.offline.options import EXACT
from primaldual.offline.solve import solve_offline
from primaldual.offline.symmetry import canonical_counts, identical_server_classes, job_weights


def _identical(instance, workers: int, ps: int):
    """``instance`` on ``workers`` copies of its first worker server and ``ps`` of its first PS server."""
    cluster = instance.cluster
    return dataclasses.replace(instance, cluster=Cluster(
        cluster.resources, np.repeat(cluster.worker_capacity[:1], workers, axis=0),
        np.repeat(cluster.ps_capacity[:1], ps, axis=0)))


def test_identical_server_classes_by_hand():
    capacity = np.array([[2.0, 8.0], [1.0, 8.0], [2.0, 8.0], [1.0, 8.0], [3.0, 1.0]])
    classes = identical_server_classes(capacity)
    assert [c.tolist() for c in classes] == [[0, 2], [1, 3]]
    assert identical_server_classes(capacity[:1]) == ()


def test_canonical_counts_sorts_loads_and_keeps_totals():
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 3, size=(4, 5, 3))
    classes = (np.array([0, 2]),)
    out = canonical_counts(counts, classes)
    load = np.einsum("j,jts->ts", job_weights(4), out)
    assert np.all(load[:, 0] >= load[:, 2])
    assert np.array_equal(out.sum(axis=2), counts.sum(axis=2)) and np.array_equal(out[:, :, 1], counts[:, :, 1])
    # Per slot, the class's columns are a permutation of the original ones.
    for t in range(5):
        assert sorted(map(tuple, out[:, t, [0, 2]].T)) == sorted(map(tuple, counts[:, t, [0, 2]].T))


@settings(derandomize=True, max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6), workers=st.integers(2, 3), ps=st.integers(1, 3))
def test_symmetry_rows_keep_the_brute_force_optimum(seed, workers, ps):
    instance = _identical(generate("tiny", seed), workers, ps)
    expected, _ = brute_force_optimum(instance)
    broken = solve_offline(instance, EXACT.replace(builder="matrix", symmetry=True))
    assert broken.status == "optimal" and verify(instance, broken.schedule).feasible
    assert broken.objective == pytest.approx(expected, rel=1e-7, abs=1e-7)
    model = build_matrix_model(instance, symmetry=True)
    if model.n_variables:
        assert model.n_constraints > build_matrix_model(instance).n_constraints
        # The optimum of the plain model, written as a start, satisfies the symmetry rows (after sorting).
        plain = solve_offline(instance, EXACT.replace(builder="matrix", symmetry=False))
        x = start_vector(model, instance, plain.schedule)
        activity = np.zeros(model.n_constraints)
        for col in range(model.n_variables):
            rows = model.indices[model.starts[col]: model.starts[col + 1]]
            activity[rows] += model.values[model.starts[col]: model.starts[col + 1]] * x[col]
        assert np.all(activity >= model.row_lower - 1e-7) and np.all(activity <= model.row_upper + 1e-7)
        assert model.cost @ x == pytest.approx(plain.objective, rel=1e-9, abs=1e-9)


def test_symmetry_rows_are_written_only_between_identical_servers():
    instance = generate("small", 0)
    assert identical_server_classes(instance.cluster.worker_capacity) == ()
    assert build_matrix_model(instance, symmetry=True).n_constraints == build_matrix_model(instance).n_constraints
    paper_like = _identical(instance, 4, 3)
    rows = build_matrix_model(paper_like, symmetry=True).n_constraints - build_matrix_model(paper_like).n_constraints
    slots = np.unique(build_matrix_model(paper_like).placements[0][1]).size  # slots with a worker placement
    assert rows == slots * 3 + np.unique(build_matrix_model(paper_like).placements[1][1]).size * 2


@settings(derandomize=True, max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6))
def test_shifted_work_cuts_keep_the_brute_force_optimum_and_tighten_the_lp(seed):
    instance = generate("tiny", seed)
    expected, _ = brute_force_optimum(instance)
    result = solve_offline(instance, EXACT.replace(builder="matrix", work_cuts=True))
    assert result.status == "optimal" and verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(expected, rel=1e-7, abs=1e-7)
    cut, plain = (build_matrix_model(instance, work_cuts=flag) for flag in (True, False))
    if plain.n_variables:
        values = [solve_matrix_model(m, relax=True, time_limit=10, mip_gap=None, threads=1)[0].objective
                  for m in (cut, plain)]
        assert expected - 1e-7 <= values[0] <= values[1] + 1e-7  # still a bound, and no weaker


def test_shifted_work_cuts_by_hand():
    # One job of work 3, at most 2 workers per slot (N = 2), horizon 3: D = 2. Completing in slot 1 needs
    # work 3 - 2 * (1 - 0) = 1 done by slot 0; the row for t = 0 carries -1 x complete[slot 1].
    instance = make_instance([make_job(work=3, chunks=2)], horizon=3, worker_capacity=[[2.0]],
                             ps_capacity=[[2.0]])
    model = build_matrix_model(instance, work_cuts=True)
    complete_slot_1 = model.offsets["complete"] + model.complete_index[0, 1]
    column = model.values[model.starts[complete_slot_1]: model.starts[complete_slot_1 + 1]]
    assert -1.0 in column.tolist()
    assert solve_offline(instance, EXACT.replace(builder="matrix")).objective == pytest.approx(1.0)
