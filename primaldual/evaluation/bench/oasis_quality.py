"""``primaldual bench oasis --quality``'s measurements: utility of OASiS, OASiS-LR, OASiS-P against the baselines.

Sets: ``tiny``, ``small``, ``small20`` (``small`` with 20 jobs: heavy contention) and ``paper``, on seeds
``first..first + count - 1``. Pick a first seed disjoint from the seeds the schedulers were designed and
tuned on (OASiS-LR/P: ``small`` seeds 0-99 with 10 and 20 jobs, ``tiny`` seeds 0-39; RRH's defaults: ``small``
seeds 0-19), and from the sets already reported (docs/measurements.md); pass ``--first-seed 0`` only
to reproduce the design figures. Every scheduler runs in the one simulator at each
restart cost (default 0 and 0.1 slot). RRH runs in its three documented readings: ``rrh`` (present value,
preemptive), ``rrh-full`` (the source's full reward, ``risk_weight = 0.8``) and ``rrh-np`` (non-preemptive);
``oasis-lr-urgency`` is OASiS-LR with its two optional rules on (``order=urgency, immediate_blocks=false``,
``proofs/oasis-lr.md``) and without the lookahead, the ablation of both rules as fixed choices.

OPT at each restart cost ``F`` is bounded from above on its own: at ``F = 0`` by the offline optimum
(``solve_offline``, HiGHS, a time limit per instance), at ``F > 0`` by the optimum of the start-cost relaxation
(every job needs one more worker-slot, :mod:`primaldual.evaluation.restart_bound`, proofs/oasis-lr.md Lemma R), which
bounds every run at that cost. Where the solver does not prove optimality (or for ``paper``, where it is not
attempted), the bound is the best one available: the ILP bound, the relaxed instance's standalone bound, or the
smallest certificate an OASiS variant reports, so ``OPT/ALG`` is then an upper estimate. Reported per set and
restart cost: mean utility per scheduler, its total against RRH's and the per-instance spread of that ratio,
mean ``OPT/ALG``, promises broken (must be 0) and jobs abandoned, the scheduler's own runtime, OASiS-LR's total
utility over the scheduler's (``lr_over``) with the per-instance spread of that ratio, and the **headroom over
RRH**: the bound's total over RRH's total utility, the most any scheduler, online or offline, can earn over RRH
on the set (a lead over RRH beyond it is impossible).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from primaldual.core.generate import generate
from primaldual.core.jsonable import fields_of, jsonable
from primaldual.evaluation.bench.oasis_lr_speed import LrTiming, time_lr
from primaldual.evaluation.bounds import standalone_bound
from primaldual.oasis.prices import json_number
from primaldual.evaluation.restart_bound import applies, relaxation_or_instance
from primaldual.simulation.scheduler import make_scheduler
from primaldual.simulation.simulator import simulate
from primaldual.core.verify import verify

#: (label, registered name, parameters): the rows of the comparison.
SCHEDULERS = (
    ("oasis", "oasis", {}),
    ("oasis-lr", "oasis-lr", {}),
    ("oasis-lr-replan", "oasis-lr", {"replan": True}),  # with the re-plan policy (an option, off by default)
    ("oasis-lr-urgency", "oasis-lr", {"order": "urgency", "immediate_blocks": False, "lookahead": False}),
    ("oasis-p", "oasis-p", {}),
    ("rrh", "rrh", {}),
    ("rrh-full", "rrh", {"risk_weight": 0.8}),
    ("rrh-np", "rrh", {"preemptive": False}),
    ("greedy", "greedy", {}),
    ("drf", "drf", {}),
    ("fifo", "fifo", {}),
    ("dorm", "dorm", {}),
)

#: (label, preset, jobs): the sets the quality targets are stated for.
SETS = {"tiny": ("tiny", None), "small": ("small", None), "small20": ("small", 20), "paper": ("paper", None)}


def _upper_bound(instance, results: dict, time_limit: float | None, restart_cost: float = 0.0,
                 solved: dict | None = None) -> tuple[float, bool]:
    """An upper bound on OPT at ``restart_cost`` (module docstring) and whether it is a proven optimum (of the
    start-cost relaxation when ``restart_cost > 0``). The certificates bound OPT without restart costs, hence
    at every cost. ``solved`` keeps the offline solves of one instance: every cost above the threshold has the
    same relaxation, so it is solved once."""
    relaxed = relaxation_or_instance(instance, restart_cost)[0]  # the instance itself, a looser bound, at range edges
    bounds = [r.report["certificate"]["best_upper_bound"] for r in results.values()
              if isinstance(r.report.get("certificate"), dict) and r.report["certificate"].get("best_upper_bound")]
    bounds.append(standalone_bound(relaxed))
    if time_limit:
        from primaldual.offline.options import EXACT
        from primaldual.offline.solve import solve_offline

        solved = {} if solved is None else solved
        if applies(restart_cost) not in solved:
            best = max(results.values(), key=lambda r: r.utility)  # a schedule of the relaxation too (Lemma R)
            solved[applies(restart_cost)] = solve_offline(relaxed, EXACT.replace(time_limit=time_limit), start=best.schedule)
        offline = solved[applies(restart_cost)]
        if offline.status == "optimal" and offline.objective is not None:
            return float(offline.objective), True
        if offline.bound is not None:
            bounds.append(float(offline.bound))
    return float(min(bounds)), False


@dataclass(frozen=True)
class RunFigures:
    """One scheduler's run on one instance at one restart cost (``promises``: None for a scheduler without)."""

    utility: float
    abandoned: int
    promises: Any
    seconds: float


@dataclass(frozen=True)
class InstanceQuality:
    """Every scheduler at every restart cost on one instance (``runs[cost][label]``, cost as ``str(float)``),
    and per cost an upper bound on OPT with whether it is a proven optimum; ``opt`` is the one at cost 0."""

    runs: dict[str, dict[str, RunFigures]]
    opt_by_restart_cost: dict[str, tuple[float, bool]]

    @property
    def opt(self) -> tuple[float, bool] | None:
        return next((bound for cost, bound in self.opt_by_restart_cost.items() if float(cost) == 0), None)

    def to_dict(self) -> dict:
        out = jsonable({"runs": self.runs, "opt_by_restart_cost": self.opt_by_restart_cost})
        if self.opt is not None:
            out["opt"], out["opt_proven"] = self.opt
        return out


def measure_instance(instance, restart_costs, time_limit, names=SCHEDULERS) -> InstanceQuality:
    """Every scheduler at every restart cost on one instance, and at each cost an upper bound on OPT; raises
    AssertionError if a schedule does not verify."""
    runs_by_cost, bounds = {}, {}
    solved: dict = {}
    for cost in restart_costs:
        results = {}
        runs = {}
        for label, name, parameters in names:
            result = simulate(instance, make_scheduler(name, **parameters), restart_cost=cost)
            if not verify(instance, result.schedule).feasible:
                raise AssertionError(f"{label}: schedule does not verify")
            runs[label] = RunFigures(result.utility, result.metrics.abandoned, result.promises,
                                     result.scheduler_seconds)
            results[label] = result
        runs_by_cost[str(cost)] = runs
        bounds[str(cost)] = _upper_bound(instance, results, time_limit, cost, solved)
    return InstanceQuality(runs_by_cost, bounds)


@dataclass(frozen=True)
class SchedulerSummary:
    """One scheduler on one set at one restart cost (module docstring); ``headroom`` is RRH's row only;
    ``headroom_share`` is the share of the headroom the scheduler captures, ``(sum ALG - sum RRH) / (sum bound -
    sum RRH)`` (negative when it trails RRH; None without headroom)."""

    mean_utility: float
    vs_rrh_total: float | None
    vs_rrh_min: float | None
    vs_rrh_max: float | None
    mean_opt_over_alg: float | None
    abandoned: int
    promises_broken: int | None
    promises_made: int | None
    seconds_median: float
    lr_over: float | None
    lr_over_min: float | None
    lr_over_max: float | None
    headroom_share: float | None = None
    headroom: tuple | None = None

    def to_dict(self) -> dict:
        out = fields_of(self)
        if self.headroom is None:
            del out["headroom"]
        return jsonable(out)


def _summarise(per_instance: list[InstanceQuality], cost: str, labels: list[str]) -> dict[str, SchedulerSummary]:
    runs = {label: [m.runs[cost][label] for m in per_instance] for label in labels}
    utilities = {label: np.array([r.utility for r in runs[label]]) for label in labels}
    rrh, lr = utilities["rrh"], utilities.get("oasis-lr")
    opt = np.array([m.opt_by_restart_cost[cost][0] for m in per_instance])
    rows = {}
    for label in labels:
        u = utilities[label]
        ratio = np.divide(u, rrh, out=np.full(u.shape, np.nan), where=rrh > 0)
        opt_ratio = np.divide(opt, u, out=np.full(u.shape, np.inf), where=u > 0)
        promises = [r.promises for r in runs[label]]
        over = _ratio_spread(lr, u) if lr is not None else (None, None, None)
        rows[label] = SchedulerSummary(
            mean_utility=float(u.mean()),
            vs_rrh_total=float(u.sum() / rrh.sum()) if rrh.sum() > 0 else None,
            vs_rrh_min=json_number(np.nanmin(ratio)),
            vs_rrh_max=json_number(np.nanmax(ratio)),
            mean_opt_over_alg=json_number(np.mean(opt_ratio)),  # None (JSON null) when some ALG = 0
            abandoned=int(sum(r.abandoned for r in runs[label])),
            promises_broken=None if promises[0] is None else int(sum(p.broken for p in promises)),
            promises_made=None if promises[0] is None else int(sum(p.made for p in promises)),
            seconds_median=statistics.median(r.seconds for r in runs[label]),
            lr_over=over[0], lr_over_min=over[1], lr_over_max=over[2],
            headroom_share=headroom_share(u, rrh, opt),
            # OPT's bound over RRH: no scheduler can lead by more.
            headroom=_ratio_spread(opt, rrh) if label == "rrh" else None,
        )
    return rows


def headroom_share(utilities: np.ndarray, rrh: np.ndarray, bound: np.ndarray) -> float | None:
    """The share of the headroom over RRH a scheduler captures on a set, in total utility:
    ``(sum u - sum rrh) / (sum bound - sum rrh)``; None where the bound leaves no headroom."""
    room = float(bound.sum() - rrh.sum())
    return None if room <= 0 else float(utilities.sum() - rrh.sum()) / room


def _ratio_spread(numerator: np.ndarray, denominator: np.ndarray) -> tuple:
    """Total of ``numerator`` over total of ``denominator``, and the least and largest per-instance ratio
    (instances where the denominator earned nothing left out of the spread)."""
    if denominator.sum() <= 0:
        return None, None, None
    ok = denominator > 0
    per = numerator[ok] / denominator[ok]
    return float(numerator.sum() / denominator.sum()), json_number(per.min()), json_number(per.max())


@dataclass(frozen=True)
class SetQuality:
    """One set: its seeds, how many bounds are proven optimal, the summaries per restart cost and scheduler."""

    seeds: list[int]
    opt_proven: int
    bound_proven_by_restart_cost: dict[str, int]
    by_restart_cost: dict[str, dict[str, SchedulerSummary]]
    instances: list[InstanceQuality]

    def to_dict(self) -> dict:
        return jsonable(fields_of(self))


@dataclass(frozen=True)
class QualityResult:
    """``bench oasis --quality``: the sets by label, and the runtime figures when ``paper`` was among them."""

    first_seed: int
    designed_on: dict[str, str]
    restart_costs: list[float]
    sets: dict[str, SetQuality]
    paper_timing: LrTiming | None = None

    def to_dict(self) -> dict:
        out = jsonable({f.name: getattr(self, f.name) for f in fields(self) if f.name != "paper_timing"})
        if self.paper_timing is not None:
            out["paper_timing"] = self.paper_timing.to_dict()
        return out


DESIGNED_ON = {"oasis-lr/oasis-p": "small seeds 0-99 (10 and 20 jobs), tiny 0-39",
               "rrh": "small seeds 0-19 (10 and 20 jobs)"}


def _set_quality(seeds, per_instance: list[InstanceQuality], restart_costs, labels) -> SetQuality:
    return SetQuality(
        seeds=seeds,
        opt_proven=int(sum(bool(m.opt and m.opt[1]) for m in per_instance)),
        bound_proven_by_restart_cost={str(c): int(sum(bool(m.opt_by_restart_cost[str(c)][1]) for m in per_instance))
                                      for c in restart_costs},
        by_restart_cost={str(c): _summarise(per_instance, str(c), labels) for c in restart_costs},
        instances=per_instance)


def run_quality(sets, first_seed: int, count: int, restart_costs=(0.0, 0.1), time_limit: float | None = 30.0,
                paper_count: int | None = None, names=SCHEDULERS) -> QualityResult:
    """The figures of the module docstring on the sets named in ``sets`` (keys of :data:`SETS`)."""
    labels = [label for label, _, _ in names]
    results, timing = {}, None
    for label in sets:
        preset, jobs = SETS[label]
        n = paper_count if (preset == "paper" and paper_count is not None) else count
        seeds = list(range(first_seed, first_seed + n))
        limit = None if preset == "paper" else time_limit
        per_instance = [measure_instance(generate(preset, seed, jobs=jobs), restart_costs, limit, names)
                        for seed in seeds]
        if preset == "paper":  # the runtime targets, defined once in oasis_lr_speed (bench oasis --compare-lr)
            timing = time_lr(generate(preset, seeds[0]), repetitions=3)
        results[label] = _set_quality(seeds, per_instance, restart_costs, labels)
    return QualityResult(first_seed, DESIGNED_ON, list(restart_costs), results, timing)


def format_quality(result: QualityResult) -> str:
    """The text of ``bench oasis --quality``."""
    figures = result.to_dict()
    lines = []
    timing = figures.get("paper_timing")
    if timing:
        lines.append(f"paper seed {figures['first_seed']}: whole-run time oasis-lr / oasis "
                     f"x{timing['wall_ratio_median']:.2f} (median of {timing['repetitions']}); oasis-lr decision "
                     f"per job median {timing['decision_ms_median']:.2f} ms, p90 {timing['decision_ms_p90']:.2f} ms")
    for label, data in figures["sets"].items():
        seeds = data["seeds"]
        lines.append(f"{label}: seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); OPT/ALG against OPT where proven, "
                     f"else the best upper bound; at a restart cost against the start-cost relaxation (Lemma R)")
        for cost, rows in data["by_restart_cost"].items():
            lines += _format_cost(cost, rows, data["bound_proven_by_restart_cost"][cost], len(seeds))
    return "\n".join(lines)


def _format_cost(cost: str, rows: dict, proven: int, count: int) -> list[str]:
    headroom = rows["rrh"]["headroom"]
    room = "-" if headroom[0] is None else f"{headroom[0]:.3f} [{headroom[1]:.2f}, {headroom[2]:.2f}]"
    lines = [f"  restart cost {cost}: bound proven optimal on {proven} of {count}; headroom over RRH "
             f"(bound / RRH, the most any scheduler can earn over it) {room}; share: of that headroom, captured",
             f"    {'scheduler':16s} {'mean util':>10s} {'vs rrh':>7s} {'spread':>13s} {'OPT/ALG':>8s} "
             f"{'share':>6s} {'abandoned':>9s} {'broken':>7s} {'median s':>9s} {'lr over':>7s} {'spread':>13s}"]
    for name, row in rows.items():
        broken = "-" if row["promises_broken"] is None else str(row["promises_broken"])
        ratio = "inf" if row["mean_opt_over_alg"] is None else f"{row['mean_opt_over_alg']:.3f}"
        over = "-" if row["lr_over"] is None else f"{row['lr_over']:7.3f} [{row['lr_over_min']:.2f}, {row['lr_over_max']:.2f}]"
        share = "-" if row["headroom_share"] is None else f"{100 * row['headroom_share']:5.1f}%"
        lines.append(f"    {name:16s} {row['mean_utility']:10.2f} {row['vs_rrh_total']:7.3f} "
                     f"[{row['vs_rrh_min']:.2f}, {row['vs_rrh_max']:.2f}] {ratio:>8s} {share:>6s} "
                     f"{row['abandoned']:9d} {broken:>7s} {row['seconds_median']:9.3f} {over}")
    return lines


__all__ = ["SCHEDULERS", "SETS", "InstanceQuality", "QualityResult", "RunFigures", "SchedulerSummary", "SetQuality",
           "format_quality", "headroom_share", "measure_instance", "run_quality"]
