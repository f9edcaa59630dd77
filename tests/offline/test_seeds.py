"""The online schedules handed to an offline solve (primaldual.evaluation.seeds)."""

from types import SimpleNamespace

from primaldual.core.generate import generate
from primaldual.core.verify import verify
from primaldual.evaluation.seeds import SEED_SCHEDULERS, START_PREFERENCE, online_seeds
from primaldual.offline.options import best_seed
from primaldual.simulation.simulator import simulate


def _outcome(instance, name):
    schedule = simulate(instance, name).schedule
    return SimpleNamespace(result=SimpleNamespace(schedule=schedule), verification=verify(instance, schedule))


def test_every_seed_scheduler_runs_verified_and_oasis_lr_is_among_them():
    instance = generate("small", 7)
    seeds = online_seeds(instance)
    assert [seed.name for seed in seeds] == list(SEED_SCHEDULERS) and "oasis-lr" in SEED_SCHEDULERS
    for seed in seeds:
        assert verify(instance, seed.schedule).utility == seed.utility
        assert seed.start_rank == START_PREFERENCE.index(seed.name)


def test_the_pipelines_other_schedules_are_seeds_too_after_the_built_in_ones():
    # "The best of all online schedules, already computed by the pipeline, handed in" (issue 27): a scheduler
    # outside SEED_SCHEDULERS that the caller ran is a seed, ranked after every built-in one on ties.
    instance = generate("small", 7)
    ran = {name: _outcome(instance, name) for name in ("oasis-p", "dorm", "rrh")}
    seeds = online_seeds(instance, ran)
    names = [seed.name for seed in seeds]
    assert names == list(SEED_SCHEDULERS) + ["dorm", "oasis-p"]
    rrh = next(seed for seed in seeds if seed.name == "rrh")
    assert rrh.schedule is ran["rrh"].result.schedule  # not run again
    ranks = [seed.start_rank for seed in seeds]
    assert sorted(ranks) == list(range(len(seeds))) and ranks[-2:] == [len(START_PREFERENCE), len(START_PREFERENCE) + 1]
    best = best_seed(seeds, key=lambda seed: seed.start_rank)
    assert best.utility == max(seed.utility for seed in seeds)


def test_the_pipelines_oasis_run_is_the_oasis_seed_with_the_same_certified_bound(monkeypatch):
    # Issue 53 item 12: compare ran OASiS, then ran it again for the seed. The pipeline's outcome (schedule,
    # verification, certificate) is reused, and the seed it makes is the one the engine's own run makes.
    from primaldual.evaluation import seeds as seeds_module
    from primaldual.evaluation.pipeline import _run_scheduler

    instance = generate("small", 7)
    fresh = {seed.name: seed for seed in online_seeds(instance)}
    outcome = _run_scheduler(instance, "oasis", {}, 0.0)
    assert seeds_module.seeds_to_run({"oasis": outcome}) == tuple(n for n in SEED_SCHEDULERS if n != "oasis")
    real = seeds_module.compute_seed
    monkeypatch.setattr(seeds_module, "compute_seed",
                        lambda inst, name: (_ for _ in ()).throw(AssertionError("oasis ran again"))
                        if name == "oasis" else real(inst, name))
    reused = {seed.name: seed for seed in online_seeds(instance, {"oasis": outcome})}["oasis"]
    assert reused.schedule is outcome.result.schedule
    assert (reused.utility, reused.certified_bound, reused.start_rank) == (
        fresh["oasis"].utility, fresh["oasis"].certified_bound, fresh["oasis"].start_rank)
    assert reused.certified_bound is not None


def test_an_oasis_outcome_without_its_certificate_is_run_again():
    # A verified OASiS schedule without the certificate would lose the seed's certified bound: it is not reused.
    from primaldual.evaluation.seeds import seeds_to_run

    instance = generate("small", 7)
    assert "oasis" in seeds_to_run({"oasis": _outcome(instance, "oasis")})
    assert "rrh" not in seeds_to_run({"rrh": _outcome(instance, "rrh")})
