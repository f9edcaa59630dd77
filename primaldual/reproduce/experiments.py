"""What ``primaldual reproduce`` runs: the settings (quick or full) and the sweep specs of each experiment.

Every experiment runs at restart cost 0 (the paper's model) and at :attr:`Settings.restart_cost` (default 0.1,
the fraction of a slot's work a job loses when its placement changes, :mod:`primaldual.simulation.simulator`); its label
then ends in ``-restart-F``. OPT is solved with ``method="auto"`` (the ILP where it is expected to finish,
column generation above, :func:`primaldual.offline.solve.resolve_method`); at a restart cost it is solved on the
start-cost relaxation (:mod:`primaldual.evaluation.restart_bound`), an upper bound on the optimum with restart costs.
"""

from __future__ import annotations

from dataclasses import dataclass

from primaldual.reproduce.readings import READINGS, run_task  # noqa: F401  (run_task: the sweep task)
from primaldual.simulation.scheduler import BASELINES, CLAIMANT, GAVEL_POLICIES, OASIS_FAMILY  # noqa: F401  (re-exported)
from primaldual.sweep import Spec, ratio_specs

#: OASiS and its variants (whose claims summary.md checks), the baselines (RRH in its three readings) and the
#: scheduler the papers' "best" claim is checked for, the variant this artifact puts forward: named once, in
#: the scheduler registry, so that ``compare`` (below this layer) reads the same families.
SCHEDULERS = OASIS_FAMILY + BASELINES


#: The VCs the full run cuts week windows from: the five with the most mean busy GPUs in seed 0 (trace list),
#: in the order they run (the 1,763-job week of 6214e9 last).
BUSIEST_VCS = ("b436b2", "7f04ca", "ee9e8c", "6c71a0", "6214e9")
#: The VCs small enough to simulate whole with every scheduler today (dense schedules).
SMALL_WHOLE_VCS = ("795a4c", "925e2b", "23dbec", "51b7ef")


@dataclass(frozen=True)
class TraceCase:
    """A packaged VC, whole (``window`` None) or the window ``(start_hour, hours)``; ``hours`` alone (with
    ``busiest``) asks for the busiest window of that length."""

    source: str
    window: tuple[float, float] | None = None
    busiest: float | None = None
    #: A heterogeneous cluster of that many 8-GPU worker servers per type (``trace import --gpu-types``).
    gpu_types: tuple[tuple[str, int], ...] | None = None

    @property
    def name(self) -> str:
        if self.busiest is not None:
            name = f"{self.source} busiest {self.busiest:g} h"
        else:
            name = self.source + ("" if self.window is None else f" {self.window[0]:g}:{self.window[1]:g}")
        return name + ("" if self.gpu_types is None else " on " + ",".join(f"{g}:{n}" for g, n in self.gpu_types))


@dataclass(frozen=True)
class TraceSettings:
    """What the trace section runs: the windows (OPT by column generation), the whole VCs (bound only)."""

    windows: tuple[TraceCase, ...]
    whole: tuple[TraceCase, ...]
    schedulers: tuple[str, ...] = SCHEDULERS
    cg_time_limit: float = 120.0
    pooled_lp_time_limit: float = 60.0
    threads: int = 1
    #: Run the schedulers first and solve only if their best utility does not already meet the standalone bound
    #: (then OPT is proven without a solver); an open interval runs the schedulers again, with the solve.
    skip_tight_solve: bool = False


QUICK_TRACES = TraceSettings(
    windows=(TraceCase("philly:0/b436b2", busiest=12.0),),
    whole=(TraceCase("philly:0/925e2b"), TraceCase("philly:0/23dbec")),
    cg_time_limit=10.0, pooled_lp_time_limit=10.0, skip_tight_solve=True)
#: Dorm re-solves a MILP at every event (tens of seconds on an 88-job week, hours on the 1,763-job one), so the
#: full run's week windows go without it; the whole small VCs and the quick run include it.
FULL_TRACES = TraceSettings(
    windows=tuple(TraceCase(f"philly:0/{vc}", busiest=168.0) for vc in BUSIEST_VCS),
    whole=tuple(TraceCase(f"philly:0/{vc}") for vc in SMALL_WHOLE_VCS),
    schedulers=tuple(name for name in SCHEDULERS if name != "dorm"))


#: The heterogeneous section's cluster: about Gavel's simulated 36:36:36 GPUs (5 8-GPU servers of each type).
GAVEL_MIX = (("v100", 5), ("p100", 5), ("k80", 5))
#: The schedulers, which all handle GPU types (OASiS-P too: proofs/oasis-lr.md, "On several GPU types"), and
#: Gavel's policies.
HETERO_SCHEDULERS = tuple(SCHEDULERS) + GAVEL_POLICIES
QUICK_HETERO = TraceSettings(
    windows=(TraceCase("philly:0/b436b2", busiest=24.0, gpu_types=GAVEL_MIX),), whole=(),
    schedulers=HETERO_SCHEDULERS, cg_time_limit=10.0, skip_tight_solve=True)
FULL_HETERO = TraceSettings(
    windows=tuple(TraceCase(f"philly:0/{vc}", busiest=168.0, gpu_types=GAVEL_MIX) for vc in BUSIEST_VCS), whole=(),
    schedulers=tuple(name for name in HETERO_SCHEDULERS if name != "dorm"))


@dataclass(frozen=True)
class Settings:
    """How much to run. ``QUICK`` takes a few minutes on two cores; ``FULL`` is the complete artifact."""

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
    #: 20-job ``small`` instances: twice the contention of ``small``, OPT harder to prove.
    small20_instances: int = 0
    small20_time_limit: float = 60.0
    #: Certified OPT intervals on the paper preset by column generation (utility-vs-jobs, restart cost 0).
    paper_opt: bool = False
    paper_time_limit: float = 600.0
    #: The LB-BSP expectations of :func:`primaldual.lbbsp.expectations`, and whether they include real training.
    lbbsp_expectations: bool = True
    lbbsp_training: bool = False
    #: Dorm on the paper preset: its MILP per event takes most of the time of a paper instance, so ``QUICK`` runs
    #: it on the ratio sets only.
    paper_dorm: bool = True
    #: The cluster's capacity (x the preset's) of the utility-vs-jobs curve: ``QUICK`` halves it, so that its
    #: smaller job counts reach the contention that 300 jobs reach at full capacity (an uncontended point, where
    #: every scheduler earns the same, says nothing about who schedules better).
    paper_capacity_scale: float = 1.0
    #: The trace section (:mod:`primaldual.reproduce.traces`); None: no trace section.
    traces: TraceSettings | None = None
    #: The heterogeneous section: trace weeks on :data:`GAVEL_MIX` (the same cases' code); None: none.
    hetero: TraceSettings | None = None


#: The two settings side by side, one row per :class:`Settings` field: (quick, full).
_SIZES: dict[str, tuple] = {
    "tiny_instances": (30, 200),
    "small_instances": (8, 50),
    "small_time_limit": (30.0, 120.0),
    "small20_instances": (2, 20),
    "small20_time_limit": (20.0, 300.0),
    # The paper preset at full capacity is uncontended up to ~200 jobs (every scheduler within 0.4%): 300 jobs
    # is where the schedulers differ. Quick: 3 values x 3 seeds per curve on a half-capacity cluster (150 jobs
    # there are as contended as 300 at full capacity), at about the cost of the former 2 x 2 at 300 jobs; full:
    # at least 5 values x 10 seeds, every curve reaching contention.
    "paper_jobs": ((50, 100, 150), (50, 100, 150, 200, 250, 300, 400)),
    "paper_seeds": ((0, 1, 2), tuple(range(10))),
    "paper_jobs_without_dorm": ((), ()),
    "paper_capacity_scale": (0.5, 1.0),
    "capacity_jobs": (150, 300),
    "capacity_scales": ((0.25, 0.5, 1.0), (0.5, 0.75, 1.0, 1.5, 2.0)),
    "capacity_seeds": ((0, 1, 2), tuple(range(10))),
    "lbbsp_seeds": ((0, 1, 2), (0, 1, 2, 3, 4)),
    "lbbsp_quick": (False, False),
    "paper_opt": (False, True),
    "paper_time_limit": (600.0, 600.0),
    "lbbsp_training": (False, True),
    "paper_dorm": (False, True),
    "traces": (QUICK_TRACES, FULL_TRACES),
    "hetero": (QUICK_HETERO, FULL_HETERO),
}
QUICK, FULL = (Settings(name=name, **{key: row[column] for key, row in _SIZES.items()})
               for column, name in enumerate(("quick", "full")))

#: Seeds of the ratio sweeps start here, so that they do not share instances with the unit tests' seeds.
TINY_SEED = 1000
SMALL_SEED = 2000
SMALL20_SEED = 3000

#: The restart cost compared with 0 unless the caller gives another.
RESTART_COST = 0.1

#: The sections of a reproduction, in the order they run, each with what it is (``reproduce --sections``): a run
#: may regenerate a subset (the trace section alone takes about an hour of the full run's many).
SECTIONS = {
    "ratios": "competitive ratios OPT/ALG on the tiny, small and 20-job small sets",
    "paper": "total utility vs number of jobs and vs capacity on the paper preset",
    "lbbsp": "LB-BSP's benchmark and expectations",
    "traces": "real arrivals: every scheduler on packaged Philly VCs",
    "hetero": "heterogeneous GPUs (V100, P100, K80): every scheduler and Gavel's policies on Philly weeks",
}

#: The ratio sets of summary.md's table: label -> what the set is.
RATIO_SETS = {"ratio-tiny": "tiny", "ratio-small": "small (10 jobs)", "ratio-small-20": "small, 20 jobs"}


def restart_label(label: str, restart_cost: float) -> str:
    """The label of an experiment run at ``restart_cost`` (unchanged at 0, so old results stay reusable)."""
    return f"{label}-restart-{restart_cost:g}" if restart_cost else label


def base_label(label: str) -> tuple[str, float]:
    """``restart_label``'s inverse: (label at cost 0, restart cost)."""
    head, sep, cost = label.rpartition("-restart-")
    return (head, float(cost)) if sep else (label, 0.0)


def experiment_specs(settings: Settings, restart_cost: float = RESTART_COST,
                     sections: tuple[str, ...] = ("ratios", "paper")) -> list[Spec]:
    """Every sweep spec of the reproduction, labelled by experiment, at restart cost 0 and ``restart_cost``;
    only those of ``sections`` (the sweep runs the ``ratios`` and ``paper`` sections)."""
    specs = _experiment_specs(settings, 0.0)
    if restart_cost:
        specs += _experiment_specs(settings, restart_cost)
    return [spec for spec in specs if spec_section(spec.label) in sections]


def spec_section(label: str) -> str:
    """The section a sweep label belongs to: ``ratios`` for the ratio sets, ``paper`` for the utility curves."""
    return "ratios" if base_label(label)[0] in RATIO_SETS else "paper"


def _experiment_specs(settings: Settings, cost: float) -> list[Spec]:
    common = dict(schedulers=SCHEDULERS, method="auto", restart_cost=cost)
    # tiny instances solve in milliseconds: no time limit, so no watchdog process per solve.
    specs = ratio_specs("tiny", settings.tiny_instances, TINY_SEED, label=restart_label("ratio-tiny", cost),
                        time_limit=None, **common)
    specs += ratio_specs("small", settings.small_instances, SMALL_SEED, label=restart_label("ratio-small", cost),
                         time_limit=settings.small_time_limit, **common)
    if settings.small20_instances:
        specs += ratio_specs("small", settings.small20_instances, SMALL20_SEED, jobs=20,
                             label=restart_label("ratio-small-20", cost), time_limit=settings.small20_time_limit,
                             **common)
    jobs_label = restart_label("utility-vs-jobs", cost)
    # The paper band (column generation, minutes per instance) is drawn at restart cost 0 only.
    paper_opt = dict(opt=True, method="cg", time_limit=settings.paper_time_limit) \
        if settings.paper_opt and not cost else dict(opt=False)
    without_dorm = tuple(name for name in SCHEDULERS if name != "dorm")
    paper = {**common, **({} if settings.paper_dorm else {"schedulers": without_dorm})}
    # Capacity 1 stays unset, so that the records of earlier runs keep their keys and are reused.
    scale = {"capacity_scale": settings.paper_capacity_scale} if settings.paper_capacity_scale != 1.0 else {}
    specs += [
        Spec(preset="paper", jobs=jobs, seed=seed, label=jobs_label, **{**paper, **paper_opt, **scale})
        for jobs in settings.paper_jobs for seed in settings.paper_seeds
    ]
    specs += [
        Spec(preset="paper", jobs=jobs, seed=seed, label=jobs_label, **{**common, **paper_opt, **scale,
                                                                        "schedulers": without_dorm})
        for jobs in settings.paper_jobs_without_dorm for seed in settings.paper_seeds
    ]
    specs += [
        Spec(preset="paper", jobs=settings.capacity_jobs, capacity_scale=scale, seed=seed, opt=False,
             label=restart_label("utility-vs-capacity", cost), **paper)
        for scale in settings.capacity_scales for seed in settings.capacity_seeds
    ]
    return specs
