"""The offline optimum on heterogeneous clusters (issue 64, item 2) agrees with an independent brute force.

Tiny instances (2-3 jobs, 3-5 slots, two worker servers of two gpu types), fresh seeds drawn by hypothesis:
``solve_offline``'s OPT (the Pyomo model, the matrix path with and without work cuts and symmetry rows, the
pooled-first plan) equals :func:`het_brute_force_optimum`, every solved schedule passes the verifier, and the
relaxations (LP, pooled per type) bound it from above; column generation's schedule verifies and its bound holds;
the restart model equals a brute force of the simulator's rule. Hand cases pin each rule; ``solve`` and
``compare --opt`` run on a heterogeneous file.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from het_bruteforce import het_brute_force_optimum

from primaldual.core.generate import generate
from primaldual.core.schedule import JobSchedule, Schedule
from primaldual.core.verify import verify
from primaldual.offline.options import EXACT
from primaldual.offline.solve import solve_offline

PAIRS = ([("v100", 1), ("p100", 1)], [("p100", 1), ("k80", 1)], [("k80", 1), ("v100", 1)])


def tiny_heterogeneous(seed: int, jobs: int, horizon: int, pair: int):
    return generate("tiny", seed, jobs=jobs, horizon=horizon, gpu_types=PAIRS[pair])


def check_against_brute_force(instance) -> float:
    expected, choice = het_brute_force_optimum(instance)
    witness = verify(instance, Schedule({i: JobSchedule(y, z) for i, (y, z) in choice.items()}))
    assert witness.feasible and witness.utility == pytest.approx(expected, abs=1e-9)
    for options in ({"builder": "pyomo"}, {"builder": "matrix"}, {"builder": "matrix", "work_cuts": True},
                    {"builder": "matrix", "symmetry": True}, {"pooled_first": True}):
        result = solve_offline(instance, EXACT.replace(**options))
        assert result.status == "optimal", (options, result.message)
        assert verify(instance, result.schedule).feasible, options
        assert result.objective == pytest.approx(expected, rel=1e-7, abs=1e-7), options
        assert result.bound >= result.objective - 1e-9
    for kwargs in ({"method": "lp"}, {"method": "lp", "formulation": "weak"}, {"method": "pooled"}):
        relaxation = solve_offline(instance, EXACT.replace(**kwargs))
        assert relaxation.status == "optimal"
        assert relaxation.bound >= expected - 1e-7 * max(1.0, expected), kwargs
    return expected


@settings(derandomize=True, max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6), jobs=st.integers(2, 3), horizon=st.integers(3, 5),
       pair=st.integers(0, len(PAIRS) - 1))
def test_heterogeneous_opt_matches_brute_force(seed, jobs, horizon, pair):
    check_against_brute_force(tiny_heterogeneous(seed, jobs, horizon, pair))


# ------------------------------------------------------------------------------------------ hand cases

import dataclasses  # noqa: E402

import numpy as np  # noqa: E402
from offline_helpers import SLOT_SECONDS, make_job  # noqa: E402

from primaldual.core.instance import Cluster, Instance  # noqa: E402
from primaldual.core.utility import LinearDecay  # noqa: E402
from primaldual.models.gpu_choice import TYPE_WORK_TOLERANCE  # noqa: E402
from primaldual.models.offline import build_offline_model  # noqa: E402
from primaldual.offline.matrix import build_matrix_model  # noqa: E402
from primaldual.offline.symmetry import identical_server_classes  # noqa: E402


def typed_job(work_by_type: dict, chunks=1, utility=None, **kwargs):
    """A hand job of exactly ``work_by_type[g]`` worker-slots on type g (``make_job`` at its fastest type)."""
    fastest = min(work_by_type.values())
    job = make_job(work=fastest, chunks=chunks, utility=utility, **kwargs)
    return dataclasses.replace(job, compute_seconds_by_type={g: SLOT_SECONDS * w / chunks
                                                             for g, w in work_by_type.items()})


def typed_instance(jobs, horizon, worker_capacity, worker_types, ps_capacity=((8.0,),)):
    cluster = Cluster(("gpu",), np.array(worker_capacity, dtype=float), np.array(ps_capacity, dtype=float),
                      worker_types=tuple(worker_types))
    return Instance(cluster=cluster, jobs=tuple(jobs), horizon=horizon, slot_seconds=SLOT_SECONDS)


def _opt(instance, **kwargs):
    result = solve_offline(instance, EXACT.replace(**kwargs))
    assert result.status == "optimal" and verify(instance, result.schedule).feasible
    return result


@pytest.mark.parametrize("builder", ["pyomo", "matrix"])
def test_one_type_per_slot_binds(builder):
    # Two 1-GPU servers, a v100 and a p100; a job of 2 chunks needing 2 worker-slots on either. Both GPUs in
    # one slot would finish it in slot 0, but that mixes types: it must take two slots.
    job = typed_job({"v100": 2.0, "p100": 2.0}, chunks=2, utility=LinearDecay(10.0, 10.0))
    instance = typed_instance([job], 3, [[1.0], [1.0]], ["v100", "p100"])
    result = _opt(instance, builder=builder)
    assert result.objective == pytest.approx(9.0) == het_brute_force_optimum(instance)[0]
    fast = typed_job({"v100": 2.0}, chunks=2, utility=LinearDecay(10.0, 10.0))
    same = typed_instance([fast], 3, [[1.0], [1.0]], ["v100", "v100"])  # one type: both at once
    assert _opt(same, builder=builder).objective == pytest.approx(10.0)


@pytest.mark.parametrize("builder", ["pyomo", "matrix"])
def test_work_is_counted_at_each_type_speed(builder):
    # W = 2 on the v100, 4 on the k80, one worker at a time: v100 twice (done in slot 1) beats k80 in any mix;
    # with the v100 taken by a more valuable job in slots 0-1, the job does 1/4 + 1/4 on the k80, then 1/2 on
    # the v100 in slot 2: it mixes types across slots and finishes in slot 2.
    slow = typed_job({"v100": 2.0, "k80": 4.0}, utility=LinearDecay(10.0, 10.0))
    urgent = typed_job({"v100": 2.0, "k80": 8.0}, utility=LinearDecay(100.0, 2.0))
    alone = typed_instance([slow], 4, [[1.0], [1.0]], ["v100", "k80"])
    assert _opt(alone, builder=builder).objective == pytest.approx(9.0)
    both = typed_instance([slow, urgent], 3, [[1.0], [1.0]], ["v100", "k80"])
    result = _opt(both, builder=builder)
    assert result.objective == pytest.approx(50.0 + 8.0) == het_brute_force_optimum(both)[0]
    workers = result.schedule.assignments[0].workers
    assert workers[:, 1].sum() == 2 and workers[2, 0] == 1  # two k80 slots, then the v100


def test_the_model_accepts_what_the_verifier_accepts():
    # y / W just under 1 by less than the verifier's tolerance: feasible in both; by more: in neither.
    assert TYPE_WORK_TOLERANCE == 1e-9
    for shortfall, feasible in ((0.4e-9, True), (5e-9, False)):
        job = typed_job({"v100": 1.0 / (1.0 - shortfall), "p100": 2.0}, utility=LinearDecay(5.0, 5.0))
        instance = typed_instance([job], 1, [[1.0], [1.0]], ["v100", "p100"])
        witness = Schedule({0: JobSchedule(np.array([[1, 0]]), np.array([[1]]))})
        assert verify(instance, witness).feasible is feasible
        assert _opt(instance, builder="matrix").objective == pytest.approx(5.0 if feasible else 0.0)
        assert _opt(instance, builder="pyomo").objective == pytest.approx(5.0 if feasible else 0.0)


def test_symmetry_only_between_servers_of_one_type():
    jobs = [typed_job({"v100": 2.0, "p100": 3.0}, chunks=2, utility=LinearDecay(9.0, 9.0)),
            typed_job({"v100": 3.0, "p100": 3.5}, chunks=2, utility=LinearDecay(7.0, 3.0))]
    instance = typed_instance(jobs, 4, [[1.0]] * 4, ["v100", "p100", "v100", "p100"])
    model = build_matrix_model(instance, symmetry=True)
    assert [c.tolist() for c in identical_server_classes(model.types.symmetry_key())] == [[0, 2], [1, 3]]
    plain, broken = _opt(instance, builder="matrix"), _opt(instance, builder="matrix", symmetry=True)
    assert broken.objective == pytest.approx(plain.objective) == pytest.approx(het_brute_force_optimum(instance)[0])


@pytest.mark.parametrize("builder", ["pyomo", "matrix"])
def test_a_verified_start_seeds_the_heterogeneous_ilp(builder):
    instance = tiny_heterogeneous(7, 3, 4, 0)
    expected, choice = het_brute_force_optimum(instance)
    start = Schedule({i: JobSchedule(y, z) for i, (y, z) in choice.items()})
    result = solve_offline(instance, EXACT.replace(builder=builder), start=start)
    assert result.status == "optimal" and result.objective == pytest.approx(expected, rel=1e-7, abs=1e-7)


def test_homogeneous_models_have_no_type_choice():
    instance = generate("tiny", 3)
    assert not hasattr(build_offline_model(instance), "uses_type")
    model = build_matrix_model(instance)
    assert model.types is None and "types" not in model.offsets


def test_the_pooled_optimum_is_placed_per_type():
    # Two jobs that each fill one type: the pooled optimum (per type) packs on the servers of each type.
    from primaldual.offline.pooled import solve_pooled_and_place

    jobs = [typed_job({"v100": 2.0, "k80": 8.0}, chunks=2, utility=LinearDecay(9.0, 9.0)),
            typed_job({"v100": 4.0, "k80": 2.0}, chunks=2, utility=LinearDecay(7.0, 7.0))]
    instance = typed_instance(jobs, 3, [[1.0], [1.0], [1.0], [1.0]], ["v100", "k80", "v100", "k80"])
    pooled = solve_pooled_and_place(instance, time_limit=None, mip_gap=0.0, threads=1)
    placed = Schedule({i: JobSchedule(*pair) for i, pair in pooled.solve.assignments.items()})
    report = verify(instance, placed)
    assert report.feasible and report.utility == pytest.approx(het_brute_force_optimum(instance)[0]) == 16.0


def test_an_online_start_seeds_the_heterogeneous_ilp():
    from primaldual.evaluation.seeds import online_seeds

    instance = tiny_heterogeneous(17, 3, 5, 2)
    seeds = online_seeds(instance)
    assert seeds and all(verify(instance, seed.schedule).feasible for seed in seeds)
    result = solve_offline(instance, EXACT.replace(online_start=True), seeds=seeds)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(het_brute_force_optimum(instance)[0], rel=1e-7, abs=1e-7)


# ------------------------------------------------------------------------------------------ column generation


@settings(derandomize=True, max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6), jobs=st.integers(2, 3), horizon=st.integers(3, 5),
       pair=st.integers(0, len(PAIRS) - 1))
def test_column_generation_on_heterogeneous_instances(seed, jobs, horizon, pair):
    # Column generation and price-and-branch: a verified schedule at most OPT, a bound at least OPT.
    from primaldual.evaluation.seeds import online_seeds

    instance = tiny_heterogeneous(seed, jobs, horizon, pair)
    expected = het_brute_force_optimum(instance)[0]
    result = solve_offline(instance, EXACT.replace(method="cg"), seeds=online_seeds(instance))
    assert verify(instance, result.schedule).feasible
    assert result.objective <= expected + 1e-7 <= result.bound + 2e-7
    assert result.status != "optimal" or result.objective == pytest.approx(expected, rel=1e-6, abs=1e-6)


@settings(derandomize=True, max_examples=20, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10**6), scale=st.floats(0.0, 20.0))
def test_typed_pricing_columns_verify_and_its_mu_bounds_the_columns_payoff(seed, scale):
    import numpy as np

    from primaldual.offline.column_generation import Cells, price_all
    from primaldual.offline.first_fit import place_on_servers

    instance = tiny_heterogeneous(seed, 3, 5, seed % len(PAIRS))
    cells = Cells(instance)
    prices = np.random.default_rng(seed).uniform(0.0, scale, cells.capacity.shape[0])
    priced = price_all(cells, range(instance.n_jobs), prices)
    for column in priced.columns:  # each column is a feasible schedule of its job alone
        assert verify(instance, Schedule({column.job: column.schedule})).feasible
        assert column.utility - float(column.values @ prices[column.cells]) <= priced.bound - prices @ cells.capacity + 1e-9
    placed = place_on_servers(instance, {c.job: c.schedule for c in priced.columns[:1]})
    assert all(verify(instance, Schedule({i: s})).feasible for i, s in placed.assignments.items())


# ------------------------------------------------------------------------------------------ solve and compare


def test_solve_and_compare_opt_on_a_heterogeneous_instance(tmp_path, capsys):
    import json

    from offline_helpers import run

    from primaldual.core.files import save_instance

    instance = generate("tiny", 11, gpu_types=[("v100", 1), ("p100", 1), ("k80", 1)])
    expected = het_brute_force_optimum(instance)[0]
    path = tmp_path / "h.json"
    save_instance(instance, path)
    code, out, err = run(capsys, "solve", path, "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["status"] == "optimal" and answer["objective"] == pytest.approx(expected, rel=1e-7, abs=1e-7)
    code, out, err = run(capsys, "compare", path, "--opt", "--schedulers", "fifo,oasis,rrh", "--json")
    assert code == 0, err
    compared = json.loads(out)
    assert compared["opt_interval"]["low"] == pytest.approx(expected, rel=1e-7, abs=1e-7)
    assert compared["opt_interval"]["high"] >= expected - 1e-7
    assert all(row["verified"] for row in compared["rows"]), compared["rows"]
    code, out, err = run(capsys, "solve", path, "--restart-cost", "0.1", "--json")
    assert code == 0, err


def test_evaluate_gives_the_opt_interval_on_a_heterogeneous_instance():
    from primaldual.evaluation.pipeline import evaluate

    instance = tiny_heterogeneous(21, 3, 5, 1)
    expected = het_brute_force_optimum(instance)[0]
    evaluation = evaluate(instance, ["fifo", "rrh", "oasis", "oasis-lr", "oasis-p"], solve=EXACT)
    low, high = evaluation.interval.low, evaluation.interval.high
    assert low == pytest.approx(expected, rel=1e-7, abs=1e-7) and high >= expected - 1e-7
    assert verify(instance, evaluation.offline.schedule).feasible
    assert all(bound >= expected - 1e-7 for bound in evaluation.interval.upper_candidates.values())
    for name, outcome in evaluation.outcomes.items():  # every online schedule verifies and is below OPT
        assert outcome.feasible and outcome.utility <= expected + 1e-7, name
    # OASiS-LR and OASiS-P take types (proofs/oasis-lr.md, "On several GPU types"): both evaluated, no warning
    assert {"oasis-lr", "oasis-p"} <= set(evaluation.outcomes)
    assert not any("oasis-p" in w for w in evaluation.warnings)


# ------------------------------------------------------------------------------------------ restart costs


@settings(derandomize=True, max_examples=40, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10**6), jobs=st.integers(2, 3), horizon=st.integers(3, 4),
       pair=st.integers(0, len(PAIRS) - 1), restart_cost=st.sampled_from([0.1, 0.5]))
def test_the_restart_optimum_on_heterogeneous_instances_equals_a_brute_force_and_its_replay(
        seed, jobs, horizon, pair, restart_cost):
    from het_bruteforce import het_restart_brute_force

    from primaldual.evaluation.restart_opt import replay_utility
    from primaldual.offline.restart import solve_restart_offline

    instance = tiny_heterogeneous(seed, jobs, horizon, pair)
    expected = het_restart_brute_force(instance, restart_cost)[0]
    solved = solve_restart_offline(instance, restart_cost)
    assert solved.status == "optimal" and solved.objective == pytest.approx(expected, rel=1e-7, abs=1e-9)
    utility, replayed = replay_utility(instance, solved.schedule, restart_cost)  # the simulator earns it
    assert utility == pytest.approx(solved.objective, rel=1e-9, abs=1e-12) and verify(instance, replayed).feasible


def test_a_change_of_type_is_a_move():
    # W = 2 on either type, one worker a slot, F = 0.6. On the p100 throughout: 0.2 (the start) + 0.5 + 0.5, done
    # in slot 2. From the v100 in slot 0 to the p100: 0.2 + 0.2 (the move, charged) + 0.5 < 1, done in slot 3.
    import pyomo.environ as pyo

    from primaldual.evaluation.restart_opt import replay_utility
    from primaldual.models.restart import build_restart_model
    from primaldual.offline.restart import seed_restart_model, solve_restart_offline

    job = typed_job({"v100": 2.0, "p100": 2.0}, utility=LinearDecay(10.0, 10.0))
    instance = typed_instance([job], 4, [[1.0], [1.0]], ["v100", "p100"])
    ps = np.array([[1], [1], [1], [1]])
    stay = Schedule({0: JobSchedule(np.array([[0, 1], [0, 1], [0, 1], [0, 1]]), ps)})
    move = Schedule({0: JobSchedule(np.array([[1, 0], [0, 1], [0, 1], [0, 1]]), ps)})
    assert replay_utility(instance, stay, 0.6)[0] == pytest.approx(8.0)
    assert replay_utility(instance, move, 0.6)[0] == pytest.approx(7.0)
    assert solve_restart_offline(instance, 0.6).objective == pytest.approx(8.0)
    model = build_restart_model(instance, 0.6)  # the move's values with no restart in slot 1 break a row
    seed_restart_model(model, instance, move)
    assert model.restart[0, 1].value == 1
    model.restart[0, 1].set_value(0)
    assert any(pyo.value(row.body) > pyo.value(row.upper) + 1e-7 for row in model.worker_change_up.values())


@pytest.mark.parametrize("scheduler", ["fifo", "drf", "oasis", "rrh"])
def test_every_online_schedule_is_a_point_of_the_heterogeneous_restart_model(scheduler):
    import pyomo.environ as pyo

    from primaldual.models.restart import build_restart_model
    from primaldual.offline.restart import seed_restart_model
    from primaldual.simulation.simulator import simulate

    instance = generate("small", 3, jobs=6, gpu_types=[("v100", 2), ("p100", 1), ("k80", 1)])
    result = simulate(instance, scheduler, restart_cost=0.1)
    model = build_restart_model(instance, 0.1)
    seed_restart_model(model, instance, result.schedule)
    broken = [row.name for row in model.component_data_objects(pyo.Constraint, active=True)
              if (row.has_lb() and pyo.value(row.body) < pyo.value(row.lower) - 1e-7)
              or (row.has_ub() and pyo.value(row.body) > pyo.value(row.upper) + 1e-7)]
    assert broken == [] and pyo.value(model.total_utility) == pytest.approx(result.utility, rel=1e-9)


@settings(derandomize=True, max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6), jobs=st.integers(2, 3), horizon=st.integers(3, 5),
       pair=st.integers(0, len(PAIRS) - 1))
def test_the_projected_type_rows_keep_the_lp_value_and_bound_opt(seed, jobs, horizon, pair):
    """The pooled (and per-server) LP with the type columns projected out has the LP value of the model with them,
    at least the brute-force OPT; :func:`pooled_lp_prices` (which uses it) returns that value."""
    from primaldual.offline.matrix import solve_matrix_model
    from primaldual.offline.pooled import pooled_lp_prices

    instance = tiny_heterogeneous(seed, jobs, horizon, pair)
    expected, _ = het_brute_force_optimum(instance)
    for pooled in (True, False):
        values = []
        for projected in (False, True):
            model = build_matrix_model(instance, pooled=pooled, projected_types=projected)
            outcome, _ = solve_matrix_model(model, relax=True, time_limit=None, mip_gap=None, threads=1)
            values.append(outcome.bound + model.objective_slack)
        assert values[1] == pytest.approx(values[0], rel=1e-7, abs=1e-7)
        assert values[1] >= expected - 1e-7 * max(1.0, expected)
    assert pooled_lp_prices(instance, None, 1)[0] == pytest.approx(_pooled_lp(instance), rel=1e-7, abs=1e-7)


def _pooled_lp(instance) -> float:
    from primaldual.offline.matrix import solve_matrix_model

    model = build_matrix_model(instance, pooled=True)
    return solve_matrix_model(model, relax=True, time_limit=None, mip_gap=None, threads=1)[0].bound \
        + model.objective_slack


@settings(derandomize=True, max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10**6), jobs=st.integers(2, 3), horizon=st.integers(3, 5),
       pair=st.integers(0, len(PAIRS) - 1))
def test_every_column_generation_incumbent_verifies_and_is_at_most_opt(seed, jobs, horizon, pair):
    """Column generation without seeds on a heterogeneous instance (the pooled LP's start, with its projected type
    rows, and its greedy): every incumbent it announces verifies and is worth at most OPT, its bound at least OPT."""
    from primaldual.offline.outcome import Incumbent
    from primaldual.offline.price_and_branch import column_generation_solve

    instance = tiny_heterogeneous(seed, jobs, horizon, pair)
    expected = het_brute_force_optimum(instance)[0]
    seen = []
    run = column_generation_solve(instance, range(instance.n_jobs), notify=seen.append, threads=1)
    for event in [e for e in seen if isinstance(e, Incumbent)] + [Incumbent(run.assignments, run.objective, None)]:
        schedule = Schedule({i: JobSchedule(y, z) for i, (y, z) in event.assignments.items()})
        witness = verify(instance, schedule)
        assert witness.feasible and witness.utility <= expected + 1e-7
    assert run.bound >= expected - 1e-7 * max(1.0, expected)
