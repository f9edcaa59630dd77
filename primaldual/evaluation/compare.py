"""Every online scheduler on one instance, beside the offline optimum: the library behind ``primaldual compare``.

:func:`compare` is :func:`primaldual.evaluation.pipeline.evaluate` (which runs, verifies, solves and bounds OPT/ALG the same
way for every command; :mod:`primaldual.evaluation.bounds` says how the OPT interval is made) plus the JSON summary that
``compare --json`` prints: ``instance``, ``rows`` (one per scheduler), ``opt`` (the offline solve),
``opt_interval`` (the same object as in a sweep record), ``certificate``, ``behind_best_baseline`` (where
oasis-lr earns less than the best baseline of the comparison, else null) and ``warnings``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from primaldual.offline.options import SolveOptions
from primaldual.evaluation.pipeline import Evaluation, evaluate
from primaldual.core.jsonable import jsonable
from primaldual.simulation.scheduler import BASELINES, CLAIMANT


def describe(instance) -> dict:
    """The instance's size, as reported by ``run`` and ``compare``."""
    return {
        "jobs": instance.n_jobs,
        "horizon": instance.horizon,
        "worker_servers": instance.cluster.n_worker_servers,
        "ps_servers": instance.cluster.n_ps_servers,
    }


@dataclass(frozen=True, eq=False)
class Comparison:
    """What :func:`compare` found: ``summary`` is the ``--json`` object (JSON-ready), ``results`` each scheduler's
    :class:`~primaldual.simulation.simulator.SimulationResult` (schedulers that broke a rule have none), ``offline`` the
    :class:`~primaldual.offline.solve.OfflineResult` (None without an OPT solve) and ``evaluation`` everything typed."""

    summary: dict
    results: dict
    offline: object | None
    evaluation: Evaluation


def _row(evaluation: Evaluation, name: str) -> dict:
    outcome = evaluation.outcomes[name]
    if not outcome.ran:
        error = outcome.error
        return {"scheduler": name, "error": str(error), "rule": error.rule, "slot": error.slot, "job": error.job,
                "verified": False}
    metrics, report = outcome.result.metrics, outcome.verification
    return {
        "scheduler": name,
        "utility": outcome.utility,
        "admitted": metrics.admitted,
        "completed": metrics.completed,
        "unfinished": metrics.unfinished,
        "mean_jct": metrics.mean_jct,
        "seconds": outcome.result.scheduler_seconds,
        "verified": report.feasible,
        "violations": [v.message for v in report.violations[:5]],
        "utilisation": metrics.utilisation,
        "parameters": outcome.result.parameters,
        "upper_bounds": dict(outcome.upper_bounds),
        "ratio": evaluation.ratios[name].to_dict(),
        "lookahead": None if outcome.result.lookahead is None else outcome.result.lookahead.to_dict(),
    }


def _opt_summary(evaluation: Evaluation) -> dict | None:
    out = None if evaluation.offline_entry is None else dict(evaluation.offline_entry)
    if out is not None and evaluation.offline is not None and out.get("model") != "restart":
        out.update(build_seconds=evaluation.offline.build_seconds, solve_seconds=evaluation.offline.solve_seconds,
                   message=evaluation.offline.message)
    elif out is not None:  # the exact restart solve, proven (primaldual.evaluation.restart_opt)
        solve = evaluation.restart_opt.solve
        out.update(build_seconds=solve.build_seconds, solve_seconds=solve.solve_seconds,
                   message=evaluation.restart_opt.message)
    return out


def _certificate(evaluation: Evaluation) -> dict | None:
    """The first certificate a scheduler offers, with the ratio interval it proves about its own run."""
    for name, outcome in evaluation.outcomes.items():
        if outcome.certificate is not None:
            certified = evaluation.certified[name]
            return {"scheduler": name, **outcome.certificate.terms,
                    "ratio_interval": [certified.lower, certified.upper]}
    return None


def summary(evaluation: Evaluation) -> dict:
    """The ``compare --json`` object of an evaluation, before :func:`~primaldual.core.jsonable.jsonable` (which
    :func:`compare` runs once, on the whole object)."""
    rows = [_row(evaluation, name) for name in evaluation.outcomes]
    return {
        "format": "primaldual.comparison",
        "version": 1,
        "instance": describe(evaluation.instance),
        "restart_cost": evaluation.restart_cost,
        "rows": rows,
        "opt": _opt_summary(evaluation),
        "opt_interval": evaluation.interval.to_dict(),
        # under restart costs the interval's upper end is of the start-cost relaxation (primaldual.evaluation.restart_bound)
        "relaxation": evaluation.relaxation,
        "certificate": _certificate(evaluation),
        "behind_best_baseline": behind_best_baseline(rows),
        "warnings": list(evaluation.warnings),
    }


#: Utilities this close (relative to the larger) are a tie: float noise, not a loss.
TIE_TOLERANCE = 1e-9


def behind_best_baseline(rows: list[dict], scheduler: str = CLAIMANT) -> dict | None:
    """Where ``scheduler`` (the variant this artifact puts forward) earns less than the best baseline in the same
    comparison (:data:`~primaldual.simulation.scheduler.BASELINES`, verified rows only): that baseline, both
    utilities and ``gap``, the shortfall relative to the baseline's utility. None when it leads, ties within
    :data:`TIE_TOLERANCE`, or either side is missing (not compared, broke a rule, failed verification): a
    reader of one table should not have to find the loss by eye."""
    usable = {row["scheduler"]: row["utility"] for row in rows if row.get("verified") and "utility" in row}
    baselines = [(utility, name) for name, utility in usable.items() if name in BASELINES]
    if scheduler not in usable or not baselines:
        return None
    best, baseline = max(baselines, key=lambda item: item[0])
    mine = usable[scheduler]
    if best <= mine or math.isclose(best, mine, rel_tol=TIE_TOLERANCE):
        return None
    return {"scheduler": scheduler, "baseline": baseline, "utility": mine, "baseline_utility": best,
            "gap": (best - mine) / abs(best)}


def compare(instance, names: list[str] | None = None, parameters: dict[str, dict] | None = None, *,
            opt: bool = False, solve: SolveOptions | None = None, restart_cost: float = 0.0, step=None,
            solver: str = "highs", time_limit: float | None = 60.0, mip_gap: float | None = None) -> Comparison:
    """Run the schedulers ``names`` (default: all registered) with ``parameters[name]`` on ``instance``, verify
    every schedule, with ``opt`` solve the offline optimum (``solve``, or the options ``solver``,
    ``time_limit``, ``mip_gap``) and bound OPT/ALG (:mod:`primaldual.evaluation.bounds`)."""
    from primaldual.simulation.scheduler import available_schedulers

    names = available_schedulers() if names is None else list(names)
    if opt and solve is None:
        solve = SolveOptions(solver=solver, time_limit=time_limit, mip_gap=mip_gap)
    evaluation = evaluate(instance, names, solve=solve if opt else None, restart_cost=restart_cost,
                          parameters=parameters, step=step)
    results = {name: o.result for name, o in evaluation.outcomes.items() if o.ran}
    return Comparison(summary=jsonable(summary(evaluation)), results=results, offline=evaluation.offline,
                      evaluation=evaluation)


__all__ = ["Comparison", "TIE_TOLERANCE", "behind_best_baseline", "compare", "describe", "summary"]
