"""What ``primaldual reproduce`` runs: the settings (quick or full) and the sweep specs of each experiment."""

from __future__ import annotations

from dataclasses import dataclass

from primaldual.sweep import DEFAULT_SCHEDULERS, Spec, ratio_specs

BASELINES = tuple(name for name in DEFAULT_SCHEDULERS if name not in ("oasis", "greedy"))


@dataclass(frozen=True)
class Settings:
    """How much to run. ``QUICK`` fits in ten minutes on two cores; ``FULL`` is the complete artifact."""

    name: str
    tiny_instances: int
    small_instances: int
    small_time_limit: float
    paper_jobs: tuple[int, ...]
    paper_seeds: tuple[int, ...]
    #: Larger job counts run without Dorm, whose MILP per event takes minutes at this size.
    paper_jobs_without_dorm: tuple[int, ...]
    capacity_jobs: int
    capacity_scales: tuple[float, ...]
    capacity_seeds: tuple[int, ...]
    lbbsp_seeds: tuple[int, ...]
    lbbsp_quick: bool


QUICK = Settings(
    name="quick",
    tiny_instances=40,
    small_instances=16,
    small_time_limit=30.0,
    paper_jobs=(50, 100, 150, 200),
    paper_seeds=(0,),
    paper_jobs_without_dorm=(300,),
    capacity_jobs=100,
    capacity_scales=(),
    capacity_seeds=(),
    lbbsp_seeds=(0, 1, 2),
    lbbsp_quick=False,
)
FULL = Settings(
    name="full",
    tiny_instances=200,
    small_instances=50,
    small_time_limit=120.0,
    paper_jobs=(50, 100, 150, 200, 250, 300, 400),
    paper_seeds=(0, 1, 2),
    paper_jobs_without_dorm=(),
    capacity_jobs=300,
    capacity_scales=(0.5, 0.75, 1.0, 1.5, 2.0),
    capacity_seeds=(0, 1, 2),
    lbbsp_seeds=(0, 1, 2, 3, 4),
    lbbsp_quick=False,
)

#: Seeds of the ratio sweeps start here, so that they do not share instances with the unit tests' seeds.
TINY_SEED = 1000
SMALL_SEED = 2000


def experiment_specs(settings: Settings, restart_cost: float = 0.0) -> list[Spec]:
    """Every sweep spec of the reproduction, labelled by experiment (``restart_cost`` charged in every run)."""
    specs = _experiment_specs(settings)
    return [spec.replace(restart_cost=restart_cost) for spec in specs] if restart_cost else specs


def _experiment_specs(settings: Settings) -> list[Spec]:
    # tiny instances solve in milliseconds: no time limit, so no watchdog process per solve.
    specs = ratio_specs("tiny", settings.tiny_instances, TINY_SEED, label="ratio-tiny", time_limit=None)
    specs += ratio_specs(
        "small", settings.small_instances, SMALL_SEED, label="ratio-small", time_limit=settings.small_time_limit
    )
    specs += [
        Spec(preset="paper", jobs=jobs, seed=seed, opt=False, label="utility-vs-jobs")
        for jobs in settings.paper_jobs
        for seed in settings.paper_seeds
    ]
    without_dorm = tuple(name for name in DEFAULT_SCHEDULERS if name != "dorm")
    specs += [
        Spec(preset="paper", jobs=jobs, seed=seed, opt=False, label="utility-vs-jobs", schedulers=without_dorm)
        for jobs in settings.paper_jobs_without_dorm
        for seed in settings.paper_seeds
    ]
    specs += [
        Spec(preset="paper", jobs=settings.capacity_jobs, capacity_scale=scale, seed=seed, opt=False,
             label="utility-vs-capacity")
        for scale in settings.capacity_scales
        for seed in settings.capacity_seeds
    ]
    return specs
