"""``primaldual bench oasis --compare-lr``'s measurements: OASiS-LR's speed against OASiS's on the same instances.

Two figures, per ``paper`` instance (``--preset small`` for others):

* **Wall-time ratio.** One run is the simulator's whole run, ``simulate(instance, scheduler, restart_cost)``
  (what ``primaldual run --scheduler NAME`` does after loading the instance: every arrival, every slot's
  allocation, and the report with its certificate). ``oasis``, ``oasis-lr`` and ``oasis-lr`` without its
  lookahead run on the same instance in the same process, each repetition starting with another of them, after
  one untimed warm-up run of each (imports, caches). The figure is the median over the repetitions of
  ``time(oasis-lr) / time(oasis)``, both wall (``perf_counter``) and CPU (``process_time``, less sensitive to a
  busy machine); ``lookahead_ratio_median`` is ``time(oasis-lr) / time(oasis-lr without lookahead)``.
* **Per-job decision time of OASiS-LR.** For each job, the time from its arrival batch being offered to its
  admit-or-pend decision: the job's own first offer (``_admit``: the cost-floor test, the dual subroutine,
  the block search or re-pack, the admission) plus an equal share, among the jobs of its arrival batch, of
  everything else ``on_arrival`` does (learning the price floor, i.e. the pooled LP, ranking the pending jobs
  densest first, the loop). Re-offers of jobs that arrived in earlier slots are not decisions of this batch:
  they are counted separately (``reoffer_seconds``), as are the slot allocations (``allocate_seconds``, which
  include the per-slot re-offers) and the certificate (``report_seconds``). A job that can no longer finish
  gets only its share. OASiS's per-job decision (``OnlineEngine.decide``) is measured in the same way.

Timings come from wrapping the scheduler's own methods on the instance (no code path changes); they include
the wrappers' overhead.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from functools import wraps

import numpy as np

from primaldual.core.generate import generate
from primaldual.core.jsonable import fields_of, jsonable
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate

#: The targets on ``paper`` instances: the wall-time ratio OASiS-LR / OASiS, and milliseconds per decision.
TARGET_WALL_RATIO = 2.0
TARGET_DECISION_MS = 5.0


#: The timed runs: label -> (registered name, parameters). ``oasis-lr-fixed`` is OASiS-LR without its lookahead
#: (:mod:`primaldual.oasis.lr.rollout`), so that the lookahead's own cost is a ratio in the same run.
RUNS = {"oasis": ("oasis", {}), "oasis-lr": ("oasis-lr", {}), "oasis-lr-fixed": ("oasis-lr", {"lookahead": False})}


def _timed_run(instance, label: str, restart_cost: float) -> tuple[float, float, float, float]:
    """Wall and CPU seconds of one whole simulator run, the scheduler's own seconds (the simulator's clock:
    arrivals and allocations, not the report) and the utility (a determinism check)."""
    name, parameters = RUNS[label]
    scheduler = make_scheduler(name, **parameters)
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(instance, scheduler, restart_cost=restart_cost)
    return time.perf_counter() - wall, time.process_time() - cpu, result.scheduler_seconds, result.utility


class _Figures:
    """A table of figures whose JSON form is its fields, as they are (shared by the tables below)."""

    def to_dict(self) -> dict:
        return jsonable(fields_of(self))


@dataclass(frozen=True)
class WallRatio(_Figures):
    """OASiS-LR's whole-run time over OASiS's (and over itself without the lookahead), medians of repetitions."""

    repetitions: int
    wall_ratio_median: float
    wall_ratio_min: float
    wall_ratio_max: float
    cpu_ratio_median: float
    scheduler_ratio_median: float
    oasis_seconds_median: float
    oasis_lr_seconds_median: float
    oasis_utility: float
    oasis_lr_utility: float
    lookahead_ratio_median: float
    oasis_lr_fixed_seconds_median: float
    oasis_lr_fixed_utility: float


def wall_ratio(instance, repetitions: int = 5, restart_cost: float = 0.0) -> WallRatio:
    """The median ratio of OASiS-LR's whole-run time to OASiS's (module docstring); raises AssertionError if a
    scheduler's utility differs between repetitions."""
    labels = list(RUNS)
    for label in labels:
        _timed_run(instance, label, restart_cost)  # warm-up: imports and first-call costs
    runs: dict[str, list[tuple[float, float, float, float]]] = {label: [] for label in labels}
    for repetition in range(repetitions):
        # Each repetition starts with another scheduler, so none is always first on a warming machine.
        for label in labels[repetition % 3:] + labels[:repetition % 3]:
            runs[label].append(_timed_run(instance, label, restart_cost))
    for name, values in runs.items():
        if len({v[3] for v in values}) != 1:  # pragma: no cover - the schedulers are deterministic
            raise AssertionError(f"{name}: utility differs between repetitions")
    wall, cpu, own = ([lr[k] / base[k] for lr, base in zip(runs["oasis-lr"], runs["oasis"])] for k in range(3))
    return WallRatio(
        repetitions=repetitions,
        wall_ratio_median=statistics.median(wall),
        wall_ratio_min=min(wall),
        wall_ratio_max=max(wall),
        cpu_ratio_median=statistics.median(cpu),
        # Without the report (OASiS's certificate, OASiS-LR's G2/G3 terms): the online work alone.
        scheduler_ratio_median=statistics.median(own),
        oasis_seconds_median=statistics.median(v[0] for v in runs["oasis"]),
        oasis_lr_seconds_median=statistics.median(v[0] for v in runs["oasis-lr"]),
        oasis_utility=runs["oasis"][0][3],
        oasis_lr_utility=runs["oasis-lr"][0][3],
        # The lookahead's cost and gain: OASiS-LR against itself without it.
        lookahead_ratio_median=statistics.median(lr[0] / fixed[0] for lr, fixed in
                                                 zip(runs["oasis-lr"], runs["oasis-lr-fixed"])),
        oasis_lr_fixed_seconds_median=statistics.median(v[0] for v in runs["oasis-lr-fixed"]),
        oasis_lr_fixed_utility=runs["oasis-lr-fixed"][0][3],
    )


class _Clock:
    """Accumulates the time spent in wrapped calls."""

    def __init__(self):
        self.total = 0.0

    def wrap(self, function, record=None):
        @wraps(function)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                self.total += elapsed
                if record is not None:
                    record(args, elapsed)
        return timed


def _instrument_lr(scheduler, figures: dict) -> None:
    """Wrap ``scheduler``'s (an OASiS-LR) methods once ``start`` has built its state (module docstring)."""
    original_start = scheduler.start
    batch: dict = {"jobs": (), "offers": 0.0}  # the arriving jobs; time in offers during on_arrival

    def see_admit(args, elapsed):
        i = args[1]
        if i in batch["jobs"] and i not in figures["first_offer"]:
            figures["first_offer"][i] = elapsed
        else:
            figures["reoffer_seconds"] += elapsed
        batch["offers"] += elapsed

    def see_arrival(args, elapsed):
        jobs = list(args[1])
        share = (elapsed - batch["offers"]) / len(jobs)
        for i in jobs:
            figures["decision"][i] = figures["first_offer"].get(i, 0.0) + share
        batch["jobs"] = ()

    def start(instance):
        original_start(instance)
        admit_clock, arrival_clock = _Clock(), _Clock()
        scheduler._admit = admit_clock.wrap(scheduler._admit, see_admit)
        on_arrival = arrival_clock.wrap(scheduler.on_arrival, see_arrival)

        def arrival(slot, jobs):
            # Offers made inside allocate fall outside any batch: see_admit counts them as re-offers only.
            batch["jobs"], batch["offers"] = set(jobs), 0.0
            return on_arrival(slot, jobs)

        scheduler.on_arrival = arrival
        scheduler.allocate = figures["allocate"].wrap(scheduler.allocate)
        scheduler.report = figures["report"].wrap(scheduler.report)
        scheduler.learner.update = figures["floor"].wrap(scheduler.learner.update)

    scheduler.start = start


def _instrument_oasis(scheduler, figures: dict) -> None:
    original_start = scheduler.start

    def start(instance):
        original_start(instance)
        engine = scheduler.engine
        decide = engine.decide

        def timed(i):
            begin = time.perf_counter()
            out = decide(i)
            figures["decision"][i] = time.perf_counter() - begin
            return out
        engine.decide = timed

    scheduler.start = start


@dataclass(frozen=True)
class DecisionTimes(_Figures):
    """OASiS-LR's per-job decision milliseconds (and OASiS's median), with the seconds spent outside decisions."""

    jobs: int
    decision_ms_median: float
    decision_ms_p90: float
    decision_ms_max: float
    oasis_decision_ms_median: float
    floor_seconds: float
    reoffer_seconds: float
    allocate_seconds: float
    report_seconds: float


def decision_times(instance, restart_cost: float = 0.0) -> DecisionTimes:
    """Per-job decision times of OASiS-LR and OASiS on ``instance`` (module docstring), in milliseconds."""
    lr = {"first_offer": {}, "decision": {}, "reoffer_seconds": 0.0, "allocate": _Clock(), "report": _Clock(),
          "floor": _Clock()}
    scheduler = make_scheduler("oasis-lr")
    _instrument_lr(scheduler, lr)
    simulate(instance, scheduler, restart_cost=restart_cost)
    base = {"decision": {}}
    oasis = make_scheduler("oasis")
    _instrument_oasis(oasis, base)
    simulate(instance, oasis, restart_cost=restart_cost)
    lr_ms = 1e3 * np.array(list(lr["decision"].values()))
    base_ms = 1e3 * np.array(list(base["decision"].values()))
    return DecisionTimes(
        jobs=len(lr_ms),
        decision_ms_median=float(np.median(lr_ms)),
        decision_ms_p90=float(np.percentile(lr_ms, 90)),
        decision_ms_max=float(lr_ms.max()),
        oasis_decision_ms_median=float(np.median(base_ms)),
        floor_seconds=lr["floor"].total,
        reoffer_seconds=lr["reoffer_seconds"],
        allocate_seconds=lr["allocate"].total,
        report_seconds=lr["report"].total,
    )


@dataclass(frozen=True)
class LrTiming:
    """Both figures on one instance (``seed``: the instance's seed, when generated from one)."""

    wall: WallRatio
    decisions: DecisionTimes
    seed: int | None = None

    def to_dict(self) -> dict:
        head = {} if self.seed is None else {"seed": self.seed}
        return {**head, **self.wall.to_dict(), **self.decisions.to_dict()}


def time_lr(instance, repetitions: int = 5, restart_cost: float = 0.0, seed: int | None = None) -> LrTiming:
    """:func:`wall_ratio` and :func:`decision_times` on ``instance``."""
    return LrTiming(wall_ratio(instance, repetitions, restart_cost), decision_times(instance, restart_cost), seed)


@dataclass(frozen=True)
class LrComparison:
    """``bench oasis --compare-lr``: the figures per instance and their medians across instances."""

    preset: str
    restart_cost: float
    instances: tuple[LrTiming, ...]

    def median(self, name: str) -> float:
        """The median across instances of the per-instance figure ``name`` (a field of WallRatio or
        DecisionTimes)."""
        return statistics.median(getattr(t.wall if hasattr(t.wall, name) else t.decisions, name)
                                 for t in self.instances)

    def to_dict(self) -> dict:
        return {"preset": self.preset, "restart_cost": self.restart_cost,
                "instances": [t.to_dict() for t in self.instances],
                **{name: self.median(name) for name in ("wall_ratio_median", "scheduler_ratio_median",
                                                        "decision_ms_median", "lookahead_ratio_median")},
                "target_wall_ratio": TARGET_WALL_RATIO, "target_decision_ms": TARGET_DECISION_MS}


def compare_lr(seeds: list[int], repetitions: int = 5, restart_cost: float = 0.0, jobs: int | None = None,
               preset: str = "paper") -> LrComparison:
    """Both figures on the ``preset`` instances of ``seeds`` (``jobs`` jobs, default the preset's)."""
    return LrComparison(preset, restart_cost, tuple(time_lr(generate(preset, seed, jobs=jobs), repetitions,
                                                            restart_cost, seed) for seed in seeds))


def format_compare_lr(comparison: LrComparison) -> str:
    """The text of ``bench oasis --compare-lr``."""
    figures = comparison.to_dict()
    lines = [f"oasis-lr against oasis on {figures['preset']} instances, restart cost {figures['restart_cost']:g} "
             f"(whole simulator runs, same process, rotating order; wall times inflate on a busy machine)"]
    for r in figures["instances"]:
        lines.append(
            f"  seed {r['seed']}: wall ratio median {r['wall_ratio_median']:.2f} (range {r['wall_ratio_min']:.2f}-"
            f"{r['wall_ratio_max']:.2f}, CPU {r['cpu_ratio_median']:.2f}, without the reports "
            f"{r['scheduler_ratio_median']:.2f}; {r['oasis_lr_seconds_median']:.2f} s vs "
            f"{r['oasis_seconds_median']:.2f} s); decision median {r['decision_ms_median']:.2f} ms, p90 "
            f"{r['decision_ms_p90']:.2f} ms (oasis {r['oasis_decision_ms_median']:.2f} ms); floor LP "
            f"{r['floor_seconds']:.2f} s, re-offers {r['reoffer_seconds']:.2f} s, allocate "
            f"{r['allocate_seconds']:.2f} s, report {r['report_seconds']:.2f} s; lookahead: "
            f"{r['lookahead_ratio_median']:.2f}x the time without it, utility {r['oasis_lr_utility']:.1f} against "
            f"{r['oasis_lr_fixed_utility']:.1f}")
    lines.append(
        f"median over instances: wall ratio {figures['wall_ratio_median']:.2f} (target <= "
        f"{figures['target_wall_ratio']:g}; without the reports {figures['scheduler_ratio_median']:.2f}), "
        f"decision {figures['decision_ms_median']:.2f} ms (target <= "
        f"{figures['target_decision_ms']:g} ms; the targets are for paper), lookahead "
        f"{figures['lookahead_ratio_median']:.2f}x the time without it")
    return "\n".join(lines)


__all__ = ["DecisionTimes", "LrComparison", "LrTiming", "WallRatio", "compare_lr", "decision_times",
           "format_compare_lr", "time_lr", "wall_ratio"]
